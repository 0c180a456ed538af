/**
 * The simulator's catalog: fixtures (events, outcomes, taxonomy, participants, templates) and the
 * catalog and market-data routes (spec 4.4 to 4.12).
 */
export { buildCatalog, type SimCatalog, type TaxonomyFilter } from './catalog.js';
export {
  catalogRoutes,
  blockAt,
  parseDepth,
  parseBookInclude,
  BOOK_DEPTH_DEFAULT,
  BLOCK_AT_BUILD,
  BLOCK_INTERVAL_MS,
  type CatalogRouteDeps,
} from './routes.js';
export { aggregateBook, bookAddresses, bookRevision } from './book.js';
export {
  type OutcomeFixtureStats,
  IMAGE_BASE,
  QUOTE_TOKEN,
  MIN_NOTIONAL_USDC,
  DEFAULT_SZ_DECIMALS,
  slugify,
  fillTemplate,
} from './fixtures.js';
export { decAdd, decSub, decCmp, decSum, decCanonical, isDecimal, pow10Neg } from '../../venue/decimal.js';
