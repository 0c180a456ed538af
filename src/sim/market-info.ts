/**
 * `POST /info` market metadata, what a bot written with the venue's SDK reads before it trades
 * (`@nktkas/hyperliquid`: `meta`, `spotMeta`, `outcomeMeta`; its `SymbolConverter` needs a
 * non-empty perp universe and a non-empty spot universe with tokens). Shapes as the SDK types them
 * (`api/info/_methods/{meta,spotMeta,outcomeMeta}.ts` of 0.32.1; the SDK validates requests, not
 * answers, so test/sdk-bot.test.ts holds these to its types field by field).
 *
 * What they hold:
 *  - meta: a small fixed perp universe (BTC, ETH) and its margin tables **(assumed)**: the
 *    simulator trades no perps (an order on them is refused as an unknown asset); they are there so
 *    that a client that maps names to ids can be built. A `dex` other than the first answers an
 *    empty universe (assumed: the simulator lists no builder-deployed perps);
 *  - spotMeta: USDC (token 0) and PURR (token 1) with their pair PURR/USDC (the venue's first
 *    pair), then one token per tradable outcome side, named `+<encoding>` with the token index
 *    catalog/asset-id.ts assumes; outcome sides trade by asset id (`100_000_000 + encoding`), not as spot
 *    pairs, so they add no pair;
 *  - outcomeMeta: the catalog's tradable outcomes by venue index, each side with its name and token;
 *    no questions (the simulator's catalog serves those over the service's REST API).
 */
import type { OutcomeMarket } from './venue/assets.js';
import { outcomeToken, outcomeTokenIndex } from './catalog/asset-id.js';

export const MARKET_INFO_TYPES = ['meta', 'spotMeta', 'outcomeMeta'] as const;
export type MarketInfoType = (typeof MARKET_INFO_TYPES)[number];

export function isMarketInfoType(type: string): type is MarketInfoType {
  return (MARKET_INFO_TYPES as readonly string[]).includes(type);
}

const PERPS = [
  { szDecimals: 5, name: 'BTC', maxLeverage: 40, marginTableId: 56 },
  { szDecimals: 4, name: 'ETH', maxLeverage: 25, marginTableId: 55 },
];
const MARGIN_TABLES: Array<[number, { description: string; marginTiers: Array<{ lowerBound: string; maxLeverage: number }> }]> = [
  [55, { description: '', marginTiers: [{ lowerBound: '0.0', maxLeverage: 25 }] }],
  [56, { description: '', marginTiers: [{ lowerBound: '0.0', maxLeverage: 40 }] }],
];

/** `meta`: the perp universe of `dex` ('' the first perp dex). */
export function metaAnswer(dex: string): Record<string, unknown> {
  if (dex !== '') return { universe: [], marginTables: [], collateralToken: 0 };
  return { universe: PERPS.map((p) => ({ ...p })), marginTables: MARGIN_TABLES.map(([id, t]) => [id, structuredClone(t)]), collateralToken: 0 };
}

const SPOT_TOKENS = [
  { name: 'USDC', szDecimals: 8, weiDecimals: 8, index: 0, tokenId: '0x6d1e7cde53ba9467b783cb7c530ce054', isCanonical: true, evmContract: null, fullName: null, deployerTradingFeeShare: '0.0' },
  { name: 'PURR', szDecimals: 0, weiDecimals: 5, index: 1, tokenId: '0xc1fb593aeffbeb02f85e0308e9956a90', isCanonical: true, evmContract: null, fullName: null, deployerTradingFeeShare: '0.0' },
];

/** A token id (0x + 32 hex digits) for an outcome token **(assumed)**: its index, zero-padded. */
function outcomeTokenId(index: number): string {
  return `0x${index.toString(16).padStart(32, '0')}`;
}

/** `spotMeta`: the spot universe and tokens, outcome tokens included. */
export function spotMetaAnswer(markets: readonly OutcomeMarket[]): Record<string, unknown> {
  const outcomeTokens = markets.flatMap((m) =>
    ([0, 1] as const).map((side) => {
      const index = outcomeTokenIndex(m.outcome, side);
      return {
        name: outcomeToken(m.outcome, side),
        szDecimals: m.szDecimals,
        weiDecimals: m.szDecimals,
        index,
        tokenId: outcomeTokenId(index),
        isCanonical: false,
        evmContract: null,
        fullName: `${m.name}: ${m.sideNames[side]}`,
        deployerTradingFeeShare: '0.0',
      };
    }),
  );
  return {
    universe: [{ tokens: [1, 0], name: 'PURR/USDC', index: 0, isCanonical: true }],
    tokens: [...SPOT_TOKENS.map((t) => ({ ...t })), ...outcomeTokens],
  };
}

/** `outcomeMeta`: every tradable outcome with its two sides' names and tokens. */
export function outcomeMetaAnswer(markets: readonly OutcomeMarket[]): Record<string, unknown> {
  return {
    outcomes: markets.map((m) => ({
      outcome: m.outcome,
      name: m.name,
      description: m.description,
      sideSpecs: ([0, 1] as const).map((side) => ({ name: m.sideNames[side], token: outcomeTokenIndex(m.outcome, side) })),
    })),
    questions: [],
  };
}
