/**
 * The simulator's account and trading routes: spec 4.1 (account), 4.2 (open orders), 4.3
 * (positions), 4.13 (REST schedule-cancel) and `POST /exchange` (4.14, 4.15 and the scheduleCancel
 * fallback path). The rules live in `VenueStateApi`; these handlers only validate the request, shape
 * the listing (filters, pagination, `include`) and map an `ActionOutcome` onto HTTP.
 *
 * `included`: present only when `include` asked for something, and then holding exactly the keys
 * asked for (`outcomes` for `outcome`, `events` for `event`). Without `include` the key is absent:
 * the spec calls that "the smallest response".
 */
import type { Outcome, Event } from '../venue/types.js';
import {
  badRequest,
  isSimResponse,
  normalizeAddress,
  notFound,
  ok,
  paginate,
  type Route,
  type SimRequest,
  type SimResponse,
} from './http-util.js';
import { SCHEDULE_CANCEL_ENDPOINT } from './rate-limit.js';
import type { ActionOutcome, Catalog, VenueStateApi } from './types.js';
import { ACTION_WEIGHT } from './weights.js';

/**
 * Endpoint names of these routes, for rate limits and fault targeting. Stable; the same
 * `METHOD pattern` form as the catalog routes' names.
 */
export const ACCOUNT_ENDPOINTS = {
  account: 'GET /v1/accounts/{address}',
  orders: 'GET /v1/accounts/{address}/orders',
  positions: 'GET /v1/accounts/{address}/positions',
  scheduleCancel: SCHEDULE_CANCEL_ENDPOINT,
  exchange: 'POST /exchange',
} as const;

export interface AccountRouteDeps {
  state: VenueStateApi;
  catalog: Catalog;
}

type IncludeKind = 'outcome' | 'event';
const INCLUDE_KINDS: ReadonlySet<string> = new Set<IncludeKind>(['outcome', 'event']);

/**
 * `include` as the spec types it is one enum value; we also accept it repeated or comma-separated
 * (the book endpoint's convention), as long as every token is a known kind. Empty means none.
 */
export function parseInclude(query: URLSearchParams): Set<IncludeKind> | SimResponse {
  const kinds = new Set<IncludeKind>();
  for (const raw of query.getAll('include')) {
    for (const token of raw.split(',')) {
      const t = token.trim();
      if (t === '') continue;
      if (!INCLUDE_KINDS.has(t)) return badRequest('include', 'unsupported_value', `include must be one of: outcome, event`);
      kinds.add(t as IncludeKind);
    }
  }
  return kinds;
}

/** Side resources for the outcomes referenced by one page, deduplicated by id in first-seen order. */
export function buildIncluded(
  catalog: Catalog,
  outcomeIds: Iterable<string | undefined>,
  kinds: ReadonlySet<IncludeKind>,
): { outcomes?: Outcome[]; events?: Event[] } | undefined {
  if (kinds.size === 0) return undefined;
  const outcomes: Outcome[] = [];
  const events: Event[] = [];
  const seenOutcomes = new Set<string>();
  const seenEvents = new Set<string>();
  for (const id of outcomeIds) {
    if (id === undefined || seenOutcomes.has(id)) continue;
    seenOutcomes.add(id);
    const outcome = catalog.outcome(id);
    if (!outcome) continue;
    outcomes.push(outcome);
    const eventId = outcome.event_id;
    if (eventId === undefined || seenEvents.has(eventId)) continue;
    seenEvents.add(eventId);
    const event = catalog.event(eventId);
    if (event) events.push(event);
  }
  const included: { outcomes?: Outcome[]; events?: Event[] } = {};
  if (kinds.has('outcome')) included.outcomes = outcomes;
  if (kinds.has('event')) included.events = events;
  return included;
}

/** Maps the venue state's answer to HTTP: an action answer is always a 200; a refusal to read the body is its own status. */
export function actionResponse(outcome: ActionOutcome): SimResponse {
  if (outcome.kind === 'answer') return ok(outcome.body);
  return outcome.raw !== undefined ? { status: outcome.status, body: null, raw: outcome.raw } : { status: outcome.status, body: outcome.body };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Resolves the `{address}` path parameter to a known account, or the 400/404 answer. */
function knownAccount(state: VenueStateApi, raw: string | undefined): string | SimResponse {
  const address = normalizeAddress(raw ?? '');
  if (!address) return badRequest('address', 'invalid_address', 'address must be 0x followed by 40 hex digits');
  if (!state.hasAccount(address)) return notFound('account');
  return address;
}

/** `outcome_id` filter: absent or empty means no filter. */
function outcomeFilter(query: URLSearchParams): string | undefined {
  const v = query.get('outcome_id');
  return v === null || v === '' ? undefined : v;
}

export function accountRoutes({ state, catalog }: AccountRouteDeps): Route[] {
  const getAccount: Route = {
    method: 'GET',
    pattern: '/v1/accounts/{address}',
    endpoint: ACCOUNT_ENDPOINTS.account,
    handler: (_req, params) => {
      const address = knownAccount(state, params.address);
      if (typeof address !== 'string') return address;
      const account = state.getAccount(address);
      return account ? ok(account) : notFound('account');
    },
  };

  const listOrders: Route = {
    method: 'GET',
    pattern: '/v1/accounts/{address}/orders',
    endpoint: ACCOUNT_ENDPOINTS.orders,
    handler: (req: SimRequest, params) => {
      const address = knownAccount(state, params.address);
      if (typeof address !== 'string') return address;
      const include = parseInclude(req.query);
      if (isSimResponse(include)) return include;
      let submittedBy: string | undefined;
      const sbText = req.query.get('submitted_by');
      if (sbText !== null && sbText !== '') {
        submittedBy = normalizeAddress(sbText);
        if (!submittedBy) return badRequest('submitted_by', 'invalid_address', 'submitted_by must be 0x followed by 40 hex digits');
      }
      const outcomeId = outcomeFilter(req.query);
      const rows = state
        .openOrders(address)
        .filter((o) => outcomeId === undefined || o.outcome_id === outcomeId)
        .filter((o) => submittedBy === undefined || o.submitted_by?.address?.toLowerCase() === submittedBy);
      const page = paginate(rows, req.query);
      if (isSimResponse(page)) return page;
      const included = buildIncluded(
        catalog,
        page.data.map((o) => o.outcome_id),
        include,
      );
      return ok({ ...page, ...(included ? { included } : {}) });
    },
  };

  const listPositions: Route = {
    method: 'GET',
    pattern: '/v1/accounts/{address}/positions',
    endpoint: ACCOUNT_ENDPOINTS.positions,
    handler: (req: SimRequest, params) => {
      const address = knownAccount(state, params.address);
      if (typeof address !== 'string') return address;
      const include = parseInclude(req.query);
      if (isSimResponse(include)) return include;
      const outcomeId = outcomeFilter(req.query);
      const rows = state.positions(address).filter((p) => outcomeId === undefined || p.outcome_id === outcomeId);
      const page = paginate(rows, req.query);
      if (isSimResponse(page)) return page;
      const included = buildIncluded(
        catalog,
        page.data.map((p) => p.outcome_id),
        include,
      );
      return ok({ ...page, as_of: new Date(req.nowMs).toISOString(), ...(included ? { included } : {}) });
    },
  };

  const scheduleCancel: Route = {
    method: 'POST',
    pattern: '/v1/trading/orders/schedule-cancel',
    endpoint: ACCOUNT_ENDPOINTS.scheduleCancel,
    handler: async (req) => {
      // The spec fixes only this much of the body (4.13); the rest is the exchange body (ASSUMED).
      if (!isRecord(req.body)) return badRequest('body', 'not_an_object', 'body must be a JSON object');
      const action = req.body.action;
      if (!isRecord(action)) return badRequest('action', 'required', 'action must be an object');
      if (action.type !== 'scheduleCancel') return badRequest('action.type', 'must_be_scheduleCancel', 'action.type must be scheduleCancel');
      return actionResponse(await state.handleAction(req.body, 'rest'));
    },
  };

  const exchange: Route = {
    method: 'POST',
    pattern: '/exchange',
    endpoint: ACCOUNT_ENDPOINTS.exchange,
    handler: async (req) => actionResponse(await state.handleAction(req.body, 'exchange')),
    // No batched action is served: every one weighs 1 (weights.ts).
    weight: () => ACTION_WEIGHT,
  };

  return [getAccount, listOrders, listPositions, scheduleCancel, exchange];
}
