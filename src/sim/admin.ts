/**
 * The simulator's admin API under `/_sim/`: how child-process tests (and a curious operator) drive
 * a simulator they cannot reach in-process. Loopback peers only; it is not part of the venue's
 * interface, so it is never rate limited or faulted.
 *
 *   GET    /_sim/state[?account=0x..]  clock, faults; with an account: schedule, triggers today,
 *                                      open order count, agents
 *   POST   /_sim/faults                one FaultSpec or an array of them -> {ids}
 *   DELETE /_sim/faults[?id=f1]        one fault, or every fault (FaultControl.reset)
 *   POST   /_sim/accounts              a SimAccountSeed
 *   POST   /_sim/orders                {address, order: SeedOrder} -> the OpenOrder
 *   POST   /_sim/volume                {address, usd}: the account's traded volume (volume gate)
 *   GET    /_sim/actions               the signed-action log
 *   POST   /_sim/clock                 {offsetMs}: the venue clock offset
 *   POST   /_sim/rate-limits           new quotas, all at once (what is left out takes its default):
 *                                      {budget?: NAME, global?: {limit, windowSeconds},
 *                                       globalCounts?: 'all'|'signed'|'weight', scheduleCancel?: {..}|null,
 *                                       endpoints?: {NAME: {..}}, defaultEndpoint?: {..}} -> the quotas
 *                                      in force; `budget` (rate-limit.ts parseBudget, e.g.
 *                                      `signed_window_100_per_5s`) is the base the others override
 *   DELETE /_sim/rate-limits           forgets admitted traffic (RateLimiter.reset)
 *   POST   /_sim/venue-orders          {address, order: SeedVenueOrder} -> the order as /info shows
 *                                      it: an order outside the service's listing (perps, spot)
 *   POST   /_sim/user-rate-limit       {address, cumVlm?, nRequestsUsed?, nRequestsCap?} -> what
 *                                      `userRateLimit` now answers for it
 *   GET    /_sim/services              {venueOnly, restStatus}
 *   POST   /_sim/services              {venueOnly: bool, restStatus?: 404|503}: serve only the venue
 *                                      host (`/exchange`, `/info`, `/ws`) or both -> the settings
 * The Polymarket CLOB mounted under `/clob` has its own admin routes under `/_sim/clob/` (same
 * loopback gate; polymarket/clob.ts `ClobVenue.admin`): accounts, orders, fires, state, restart,
 * settings, rate-limits.
 * The REST service down for a while: `POST /_sim/faults` with
 * `{"kind": "status", "status": 503, "path": "rest", "forMs": 300000}` (/info and /exchange go on).
 */
import { ADDRESS_RE } from '../venue/address.js';
import { z } from 'zod';
import type { Clock } from '../time/clock.js';
import type { FaultControl, FaultSpec } from './faults.js';
import { badRequest, normalizeAddress, notFound, ok, restError, Router, type Route, type SimRequest, type SimResponse } from './http-util.js';
import { parseBudget, type RateLimiter } from './rate-limit.js';
import type { ServiceSwitch } from './services.js';
import type { SimAccountSeed, SeedOrder, SeedUserRateLimit, SeedVenueOrder, VenueInfoState, VenueStateApi } from './types.js';

export const ADMIN_PREFIX = '/_sim/';

/**
 * True for a loopback peer: 127.0.0.0/8, ::1, and their IPv4-mapped IPv6 forms. The simulator only
 * listens on loopback, but this check does not rely on that.
 */
export function isLoopbackAddress(remote: string | undefined): boolean {
  if (!remote) return false;
  let a = remote.toLowerCase();
  if (a.startsWith('::ffff:')) a = a.slice('::ffff:'.length);
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(a);
  return m !== null && m.slice(1).every((p) => Number(p) <= 255);
}

export interface AdminDeps {
  state: VenueStateApi;
  faults: FaultControl;
  rateLimiter: RateLimiter;
  /** The venue clock (with offset). */
  clock: Clock;
  /** The venue's own view (info routes); without it the venue-order and rate-limit routes answer 404. */
  info?: VenueInfoState;
  /** Without it `/_sim/services` answers 404. */
  services?: ServiceSwitch;
}

// ---- request bodies (the admin route validates its input like any other) ----

const target = {
  endpoint: z.string().min(1).optional(),
  path: z.enum(['rest', 'exchange', 'info']).optional(),
  count: z.number().int().positive().optional(),
  forMs: z.number().positive().optional(),
};

export const faultSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('latency'), ms: z.number().nonnegative(), ...target }),
  z.strictObject({
    kind: z.literal('status'),
    status: z.number().int().min(400).max(599),
    message: z.string().optional(),
    reason: z.string().optional(),
    scope: z.enum(['endpoint', 'global']).optional(),
    retryAfterSeconds: z.number().int().nonnegative().optional(),
    limit: z.number().int().nonnegative().optional(),
    windowSeconds: z.number().int().nonnegative().optional(),
    ...target,
  }),
  z.strictObject({
    kind: z.literal('reset'),
    phase: z.enum(['mid_response', 'before_handler']).optional(),
    afterBytes: z.number().int().nonnegative().optional(),
    ...target,
  }),
  z.strictObject({ kind: z.literal('body'), mode: z.enum(['truncated', 'html']), status: z.number().int().min(100).max(599).optional(), dateShiftMs: z.number().int().optional(), ...target }),
  z.strictObject({ kind: z.literal('clockOffset'), ms: z.number().finite() }),
  z.strictObject({ kind: z.literal('wsSilent'), on: z.boolean() }),
  z.strictObject({ kind: z.literal('wsDrop'), everyMs: z.number().positive().nullable() }),
]);

const decimal = z.string().regex(/^-?\d+(\.\d+)?$/);
const address = z.string().regex(ADDRESS_RE);

const seedOrderSchema = z.strictObject({
  outcome_id: z.string().min(1),
  side: z.union([z.literal(0), z.literal(1)]),
  direction: z.enum(['buy', 'sell']),
  price: decimal,
  quantity: decimal,
  filled: decimal.optional(),
  order_type: z.enum(['limit', 'market', 'stop_limit', 'stop_market']).optional(),
  time_in_force: z.enum(['gtc', 'ioc', 'alo']).optional(),
  client_order_id: z.string().optional(),
  submitted_by: address.optional(),
});

/** A builder-deployed perp dex (the seed checks its form: accounts.ts); '' is the first perp dex. */
const dex = z.string().max(16);

const venueOrderSchema = z.strictObject({
  coin: z.string().min(1),
  dex: dex.optional(),
  side: z.enum(['B', 'A']),
  limitPx: decimal,
  sz: decimal,
  origSz: decimal.optional(),
  orderType: z.string().min(1).optional(),
  tif: z.enum(['Gtc', 'Ioc', 'Alo', 'FrontendMarket']).nullable().optional(),
  reduceOnly: z.boolean().optional(),
  triggerPx: decimal.optional(),
  triggerCondition: z.string().optional(),
  isPositionTpsl: z.boolean().optional(),
  cloid: z.string().optional(),
});

const perpPositionSchema = z.strictObject({
  coin: z.string().min(1),
  dex: dex.optional(),
  szi: decimal,
  entryPx: decimal,
  markPx: decimal.optional(),
  leverage: z.number().int().positive().optional(),
  leverageType: z.enum(['cross', 'isolated']).optional(),
  liquidationPx: decimal.nullable().optional(),
});

const spotBalanceSchema = z.strictObject({
  coin: z.string().min(1),
  token: z.number().int().nonnegative(),
  total: decimal,
  hold: decimal.optional(),
  entryNtl: decimal.optional(),
});

const userRateLimitFields = {
  cumVlm: decimal.optional(),
  nRequestsUsed: z.number().int().nonnegative().optional(),
  nRequestsCap: z.number().int().nonnegative().optional(),
};

const seedPositionSchema = z.strictObject({
  outcome_id: z.string().min(1),
  side: z.union([z.literal(0), z.literal(1)]),
  quantity: decimal,
  average_entry_price: decimal,
  mark_price: decimal,
});

const seedSchema = z.strictObject({
  address,
  parent: address.optional(),
  username: z.string().optional(),
  venue_name: z.string().optional(),
  image_url: z.string().optional(),
  tradedVolumeUsd: z.number().nonnegative(),
  orders: z.array(seedOrderSchema).optional(),
  positions: z.array(seedPositionSchema).optional(),
  venueOrders: z.array(venueOrderSchema).optional(),
  perpPositions: z.array(perpPositionSchema).optional(),
  perpUsd: decimal.optional(),
  spotBalances: z.array(spotBalanceSchema).optional(),
  rateLimit: z.strictObject(userRateLimitFields).optional(),
});

function zodError(field: string, err: z.ZodError): SimResponse {
  const first = err.issues[0];
  const path = first && first.path.length > 0 ? `${field}.${first.path.join('.')}` : field;
  return badRequest(path, 'invalid', `${path}: ${first?.message ?? 'invalid'}`);
}

/** Runs a state mutation, turning its refusal (a thrown Error) into a 400. */
function attempt(fn: () => SimResponse): SimResponse {
  try {
    return fn();
  } catch (err) {
    return restError(400, err instanceof Error ? err.message : String(err));
  }
}

export function adminRoutes({ state, faults, rateLimiter, clock, info, services }: AdminDeps): Route[] {
  // `Route.method` names only the venue's verbs (GET, POST); the admin API also uses DELETE. The
  // Router compares method strings, so the casts below are safe; they stay local to this file.
  return [
    {
      method: 'GET',
      pattern: '/_sim/state',
      endpoint: 'admin.state',
      handler: (req) => {
        const base = { nowMs: clock.nowMs(), faults: faults.snapshot() };
        const raw = req.query.get('account');
        if (raw === null) return ok(base);
        const account = normalizeAddress(raw);
        if (!account) return badRequest('account', 'invalid_address');
        if (!state.hasAccount(account)) return notFound('account');
        const schedule = state.schedule(account);
        return ok({
          ...base,
          account: {
            address: account,
            schedule: { timeMs: schedule.timeMs ?? null, triggersToday: schedule.triggersToday },
            openOrders: state.openOrders(account).length,
            agents: state.agents(account),
          },
        });
      },
    },
    {
      method: 'POST',
      pattern: '/_sim/faults',
      endpoint: 'admin.faults',
      handler: (req) => {
        // Parsed by shape rather than as a union, so an error names the offending field.
        const parsed = Array.isArray(req.body) ? z.array(faultSchema).safeParse(req.body) : faultSchema.safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        const specs = (Array.isArray(parsed.data) ? parsed.data : [parsed.data]) as FaultSpec[];
        return attempt(() => {
          const ids = specs.map((s) => faults.add(s)).filter((id): id is string => id !== undefined);
          return ok({ ids, faults: faults.snapshot() });
        });
      },
    },
    {
      method: 'DELETE' as Route['method'],
      pattern: '/_sim/faults',
      endpoint: 'admin.faults',
      handler: (req) => {
        const id = req.query.get('id');
        if (id === null) {
          faults.reset();
          return ok({ faults: faults.snapshot() });
        }
        return faults.remove(id) ? ok({ faults: faults.snapshot() }) : notFound('fault');
      },
    },
    {
      method: 'POST',
      pattern: '/_sim/accounts',
      endpoint: 'admin.accounts',
      handler: (req) => {
        const parsed = seedSchema.safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        const seed = parsed.data as SimAccountSeed;
        return attempt(() => {
          state.addAccount(seed);
          return ok({ account: state.getAccount(seed.address.toLowerCase()) ?? null });
        });
      },
    },
    {
      method: 'POST',
      pattern: '/_sim/orders',
      endpoint: 'admin.orders',
      handler: (req) => {
        const parsed = z.strictObject({ address, order: seedOrderSchema }).safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        const account = parsed.data.address.toLowerCase();
        if (!state.hasAccount(account)) return notFound('account');
        return attempt(() => ok({ order: state.placeOrder(account, parsed.data.order as SeedOrder) }));
      },
    },
    {
      method: 'POST',
      pattern: '/_sim/volume',
      endpoint: 'admin.volume',
      handler: (req) => {
        const parsed = z.strictObject({ address, usd: z.number().nonnegative() }).safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        const account = parsed.data.address.toLowerCase();
        if (!state.hasAccount(account)) return notFound('account');
        return attempt(() => {
          state.setTradedVolume(account, parsed.data.usd);
          return ok({ address: account, tradedVolumeUsd: parsed.data.usd });
        });
      },
    },
    {
      method: 'GET',
      pattern: '/_sim/actions',
      endpoint: 'admin.actions',
      handler: () => ok({ actions: state.actionLog() }),
    },
    {
      method: 'POST',
      pattern: '/_sim/clock',
      endpoint: 'admin.clock',
      handler: (req) => {
        const parsed = z.strictObject({ offsetMs: z.number().finite() }).safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        faults.setClockOffset(parsed.data.offsetMs);
        return ok({ offsetMs: faults.clockOffsetMs(), nowMs: clock.nowMs() });
      },
    },
    {
      method: 'POST',
      pattern: '/_sim/rate-limits',
      endpoint: 'admin.rate-limits.set',
      handler: (req) => {
        const spec = z.strictObject({ limit: z.number().int().positive(), windowSeconds: z.number().int().positive() });
        const parsed = z
          .strictObject({
            budget: z.string().min(1).optional(),
            global: spec.optional(),
            globalCounts: z.enum(['all', 'signed', 'weight']).optional(),
            scheduleCancel: spec.nullable().optional(),
            endpoints: z.record(z.string().min(1), spec).optional(),
            defaultEndpoint: spec.optional(),
          })
          .safeParse(req.body);
        if (!parsed.success) return badRequest('body', 'invalid_rate_limits', parsed.error.issues[0]?.message);
        const { budget, ...quotas } = parsed.data;
        return attempt(() => {
          rateLimiter.configure({ ...(budget === undefined ? {} : parseBudget(budget)), ...quotas });
          return ok(rateLimiter.describe());
        });
      },
    },
    {
      method: 'POST',
      pattern: '/_sim/venue-orders',
      endpoint: 'admin.venue-orders',
      handler: (req) => {
        if (!info) return notFound('admin route');
        const parsed = z.strictObject({ address, order: venueOrderSchema }).safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        const account = parsed.data.address.toLowerCase();
        if (!state.hasAccount(account)) return notFound('account');
        return attempt(() => ok({ order: info.placeVenueOrder(account, parsed.data.order as SeedVenueOrder) }));
      },
    },
    {
      method: 'POST',
      pattern: '/_sim/user-rate-limit',
      endpoint: 'admin.user-rate-limit',
      handler: (req) => {
        if (!info) return notFound('admin route');
        const parsed = z.strictObject({ address, ...userRateLimitFields }).safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        const { address: raw, ...fields } = parsed.data;
        const account = raw.toLowerCase();
        if (!state.hasAccount(account)) return notFound('account');
        return attempt(() => {
          info.setUserRateLimit(account, fields as SeedUserRateLimit);
          return ok({ address: account, ...info.userRateLimit(account) });
        });
      },
    },
    {
      method: 'GET',
      pattern: '/_sim/services',
      endpoint: 'admin.services',
      handler: () => (services ? ok(services.get()) : notFound('admin route')),
    },
    {
      method: 'POST',
      pattern: '/_sim/services',
      endpoint: 'admin.services',
      handler: (req) => {
        if (!services) return notFound('admin route');
        const parsed = z.strictObject({ venueOnly: z.boolean(), restStatus: z.union([z.literal(404), z.literal(503)]).optional() }).safeParse(req.body);
        if (!parsed.success) return zodError('body', parsed.error);
        return ok(services.set(parsed.data.venueOnly, parsed.data.restStatus));
      },
    },
    {
      method: 'DELETE' as Route['method'],
      pattern: '/_sim/rate-limits',
      endpoint: 'admin.rate-limits',
      handler: () => {
        rateLimiter.reset();
        return ok({});
      },
    },
  ];
}

/**
 * The admin request handler: 403 for a non-loopback peer, then routing with the same 404/405
 * envelopes as the venue routes.
 */
export function adminHandler(deps: AdminDeps): (req: SimRequest) => Promise<SimResponse> {
  const router = new Router().add(...adminRoutes(deps));
  return async (req) => {
    if (!isLoopbackAddress(req.remoteAddress)) return restError(403, 'the admin route answers loopback peers only');
    let m: ReturnType<Router['match']>;
    try {
      m = router.match(req.method, req.path);
    } catch {
      return badRequest('path', 'invalid_path');
    }
    if (m === undefined) return notFound('admin route');
    if (m === 'method_not_allowed') return restError(405, `method ${req.method} not allowed on ${req.path}`);
    return m.route.handler(req, m.params);
  };
}
