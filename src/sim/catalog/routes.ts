/**
 * The catalog and market-data routes (spec 4.4 to 4.12). Handlers are pure functions of the
 * request, the catalog and the injected deps: venue time and the resting orders come from the
 * exchange through `deps`, so the same catalog serves any number of simulator instances. The
 * server owns 405, rate limits, faults and JSON encoding; handlers only answer 200, 400 or 404.
 */
import type { AccountRef, Health, OutcomeBook, OutcomeSideStats, OutcomeStats } from '../../venue/types.js';
import { badRequest, isSimResponse, notFound, ok, paginate, type Route, type SimResponse } from '../http-util.js';
import type { RestingOrder } from '../types.js';
import { aggregateBook, bookAddresses, bookRevision } from './book.js';
import type { SimCatalog, TaxonomyFilter } from './catalog.js';
import { decSum } from '../../venue/decimal.js';

export interface CatalogRouteDeps {
  /** Venue time (ms): `as_of` and the health block follow it, including a simulated clock offset. */
  nowMs(): number;
  restingOrders(outcomeId: string): RestingOrder[];
  /** The exchange's own counters; the fixture numbers are served when absent. */
  tradeStats?(outcomeId: string): { volume_usdc: string; trade_count: number } | undefined;
  accountRef?(address: string): AccountRef | undefined;
}

/** Spec 8: price levels per side when `depth` is omitted. */
export const BOOK_DEPTH_DEFAULT = 10;

/** Health `block` at the instant the catalog was built, and the pace it advances at (assumed). */
export const BLOCK_AT_BUILD = 700_000_000n;
export const BLOCK_INTERVAL_MS = 100;

/** Block number at venue time `nowMs`; never below the build-time block, even if the clock steps back. */
export function blockAt(builtAtMs: number, nowMs: number): string {
  const elapsed = Math.max(0, Math.floor((nowMs - builtAtMs) / BLOCK_INTERVAL_MS));
  return (BLOCK_AT_BUILD + BigInt(elapsed)).toString();
}

/**
 * Ids and slugs the venue could have issued. Anything else (spaces, slashes after decoding,
 * control characters, absurd length) is a malformed request, 400, rather than a lookup miss, 404.
 */
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

function checkId(field: string, value: string): SimResponse | undefined {
  return ID_RE.test(value) ? undefined : badRequest(field, 'malformed');
}

/** Spec 4.4: omitted means 10, 0 means the full book; anything but a non-negative integer is 400. */
export function parseDepth(query: URLSearchParams): number | SimResponse {
  const raw = query.get('depth');
  if (raw === null) return BOOK_DEPTH_DEFAULT;
  if (/^-\d+$/.test(raw)) return badRequest('depth', 'out_of_range', 'depth must be 0 or more');
  if (!/^\d+$/.test(raw)) return badRequest('depth', 'not_an_integer');
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) return badRequest('depth', 'out_of_range', 'depth is too large');
  return n;
}

/** Spec 4.4: repeatable and comma-separated; empty tokens mean nothing; only `accounts` exists. */
export function parseBookInclude(query: URLSearchParams): { accounts: boolean } | SimResponse {
  const tokens = query
    .getAll('include')
    .flatMap((v) => v.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '');
  for (const t of tokens) {
    if (t !== 'accounts') {
      const shown = t.length > 40 ? `${t.slice(0, 40)}…` : t;
      return badRequest('include', 'unsupported_value', `unsupported include "${shown}"; supported: accounts`);
    }
  }
  return { accounts: tokens.length > 0 };
}

/** The taxonomy filters of 4.7 and 4.10. An empty value counts as omitted; an unknown one matches nothing. */
function parseTaxonomyFilter(query: URLSearchParams): TaxonomyFilter | SimResponse {
  const filter: TaxonomyFilter = {};
  for (const key of ['topic_id', 'category_id', 'series_id'] as const) {
    const v = query.get(key);
    if (v === null || v === '') continue;
    const bad = checkId(key, v);
    if (bad) return bad;
    filter[key] = v;
  }
  return filter;
}

function accountRefOf(deps: CatalogRouteDeps, address: string): AccountRef {
  // account_type is "always set" on an AccountRef; an address the venue state does not know is
  // shown as a main account rather than dropped, so every order in the book stays attributable.
  return deps.accountRef?.(address) ?? { address, account_type: 'main' };
}

export function catalogRoutes(catalog: SimCatalog, deps: CatalogRouteDeps): Route[] {
  const asOf = (): string => new Date(deps.nowMs()).toISOString();

  return [
    {
      method: 'GET',
      pattern: '/v1/outcomes/{id}/book',
      endpoint: 'GET /v1/outcomes/{id}/book',
      handler: (req, params) => {
        const id = params.id ?? '';
        const bad = checkId('id', id);
        if (bad) return bad;
        const depth = parseDepth(req.query);
        if (typeof depth !== 'number') return depth;
        const include = parseBookInclude(req.query);
        if (isSimResponse(include)) return include;
        const outcome = catalog.outcome(id);
        if (!outcome) return notFound('outcome');
        const orders = deps.restingOrders(id);
        const sides = aggregateBook(orders, depth);
        const book: OutcomeBook = {
          outcome_id: id,
          state: outcome.status ?? 'active',
          as_of: asOf(),
          revision: bookRevision(id, orders),
          depth,
          sides,
        };
        if (include.accounts) book.accounts = { data: bookAddresses(sides).map((a) => accountRefOf(deps, a)) };
        return ok(book);
      },
    },
    {
      method: 'GET',
      pattern: '/v1/outcomes/{id}/stats',
      endpoint: 'GET /v1/outcomes/{id}/stats',
      handler: (_req, params) => {
        const id = params.id ?? '';
        const bad = checkId('id', id);
        if (bad) return bad;
        if (!catalog.outcome(id)) return notFound('outcome');
        const fixture = catalog.fixtureStats(id);
        const traded = deps.tradeStats?.(id) ?? { volume_usdc: fixture?.volume_usdc ?? '0', trade_count: fixture?.trade_count ?? 0 };
        const orders = deps.restingOrders(id);
        const sides = ([0, 1] as const).map(
          (side): OutcomeSideStats => ({
            side,
            // Quantity resting in open orders posted on this side, summed exactly.
            open_quantity: decSum(orders.filter((o) => o.side === side).map((o) => o.size)),
            holder_count: fixture?.holder_count[side] ?? 0,
          }),
        );
        const stats: OutcomeStats = {
          outcome_id: id,
          volume_usdc: traded.volume_usdc,
          trade_count: traded.trade_count,
          as_of: asOf(),
          sides,
        };
        return ok(stats);
      },
    },
    {
      method: 'GET',
      pattern: '/v1/events/{id}',
      endpoint: 'GET /v1/events/{id}',
      handler: (_req, params) => {
        const id = params.id ?? '';
        const bad = checkId('id', id);
        if (bad) return bad;
        const event = catalog.event(id);
        return event ? ok(event) : notFound('event');
      },
    },
    {
      method: 'GET',
      pattern: '/v1/participants',
      endpoint: 'GET /v1/participants',
      handler: (req) => {
        const filter = parseTaxonomyFilter(req.query);
        if (isSimResponse(filter)) return filter;
        const page = paginate(catalog.participants(filter), req.query);
        return isSimResponse(page) ? page : ok(page);
      },
    },
    {
      // Not numbered in part 4, but part 2 says a participant is addressed this way.
      method: 'GET',
      pattern: '/v1/participants/{id}',
      endpoint: 'GET /v1/participants/{id}',
      handler: (_req, params) => {
        const id = params.id ?? '';
        const bad = checkId('id', id);
        if (bad) return bad;
        const p = catalog.participant(id);
        return p ? ok(p) : notFound('participant');
      },
    },
    {
      method: 'GET',
      pattern: '/v1/topics/{topic_id}',
      endpoint: 'GET /v1/topics/{topic_id}',
      handler: (_req, params) => {
        const id = params.topic_id ?? '';
        const bad = checkId('topic_id', id);
        if (bad) return bad;
        const topic = catalog.topic(id);
        return topic ? ok(topic) : notFound('topic');
      },
    },
    {
      method: 'GET',
      pattern: '/v1/series/{series_id}',
      endpoint: 'GET /v1/series/{series_id}',
      handler: (_req, params) => {
        const id = params.series_id ?? '';
        const bad = checkId('series_id', id);
        if (bad) return bad;
        const series = catalog.series(id);
        return series ? ok(series) : notFound('series');
      },
    },
    {
      method: 'GET',
      pattern: '/v1/providers',
      endpoint: 'GET /v1/providers',
      handler: (req) => {
        const filter = parseTaxonomyFilter(req.query);
        if (isSimResponse(filter)) return filter;
        return ok({ data: catalog.providers(filter) });
      },
    },
    {
      method: 'GET',
      pattern: '/v1/templates',
      endpoint: 'GET /v1/templates',
      handler: () => ok({ data: catalog.templates() }),
    },
    {
      method: 'GET',
      pattern: '/v1/health',
      endpoint: 'GET /v1/health',
      handler: () => {
        const now = deps.nowMs();
        // Always healthy here: an unhealthy venue is a server-level fault (503), not a catalog fact.
        const health: Health = { ok: true, as_of: new Date(now).toISOString(), block: blockAt(catalog.builtAtMs, now) };
        return ok(health);
      },
    },
  ];
}
