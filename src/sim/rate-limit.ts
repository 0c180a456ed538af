/**
 * The simulator's rolling-window rate limits (spec part 8, VENUE.md "Rate limits"): two scopes,
 * a quota per endpoint (where one is configured; schedule-cancel has one by default) and one global
 * quota, both counted per client IP. What the global quota counts is the venue's choice, so both
 * are modelled (`globalCounts`):
 *  - `all` (default): every REST and exchange request, reads included (an IP budget);
 *  - `signed`: every signed action on both endpoints (REST schedule-cancel, and every
 *    `POST /exchange` action: scheduleCancel, approveAgent, approveBuilderFee, ...), so arms and
 *    approvals share one window; unsigned reads (accounts, orders, positions, health, catalog) are
 *    not counted in it and are limited only by their endpoint quotas, if any are configured. There
 *    is deliberately no separate read window: its refusals would have to name scope `global`, and a
 *    client that holds its global scope on such a 429 would stop arming because of a read.
 *  - `weight`: the venue host's IP weight: every `POST /info` and `POST /exchange` request spends
 *    its weight (weights.ts: an action 1, `clearinghouseState` 2, `userRole` 60, most info 20) in
 *    one window; the service's REST routes (`/v1`, another host) are not counted in it.
 * Named budgets (`SIM_BUDGETS`, `parseBudget`) select a whole configuration by name, e.g.
 * `signed_window_100_per_5s`: one window of 100 per 5 s over every signed action and nothing else,
 * or `ip_weight_1200_per_60s`: the venue's weight budget over `/info` and `/exchange`.
 *
 * The windows are exact sliding logs (one timestamp per admitted request) rather than counters:
 * the keeper's invariant 3 says "after a 429 no request of that scope is sent before
 * retry_after_seconds", so the simulator has to make the converse hold exactly too: a client that
 * waits `retry_after_seconds` and sends again is admitted, one that sends a millisecond earlier is
 * not (when the slot frees on a whole second). An approximate counter could not promise that.
 *
 * Time comes from the injected clock, so whole scenarios run in virtual time.
 */
import type { Clock } from '../time/clock.js';
import type { RateLimitDetail } from '../venue/errors.js';

export interface WindowSpec {
  /** Maximum admitted requests in any rolling window. */
  limit: number;
  windowSeconds: number;
}

/**
 * What the global window counts: every request (`all`), only signed actions (`signed`), or the
 * venue host's requests by weight (`weight`).
 */
export type GlobalCounts = 'all' | 'signed' | 'weight';

/** A request as the limiter sees it: a signed action (a POST carrying a signature) or a read. */
export type RequestClass = 'signed' | 'read';

export interface RateLimitConfig {
  /** One window per IP over what `globalCounts` says. Default 1200 per 60 s (the venue's IP budget). */
  global?: WindowSpec;
  /**
   * `all` (default): every REST, info and exchange request; `signed`: signed actions only; `weight`:
   * `/info` and `/exchange` requests by weight, REST not counted (see above).
   */
  globalCounts?: GlobalCounts;
  /** Per endpoint name (the route's `endpoint`), overriding the defaults below. */
  endpoints?: Record<string, WindowSpec>;
  /**
   * Shorthand for `endpoints[SCHEDULE_CANCEL_ENDPOINT]`. Default 600 per 60 s; `null`: no quota of
   * its own (the REST arms then spend the global window only, as on a venue with one window).
   */
  scheduleCancel?: WindowSpec | null;
  /**
   * Every other endpoint. Default: none, so those endpoints are limited by the global quota only (an
   * endpoint quota equal to the global one could never bind first, and would muddle the scope named
   * in a 429).
   */
  defaultEndpoint?: WindowSpec;
}

/** Endpoint name of the REST schedule-cancel route (see account-routes.ts). */
export const SCHEDULE_CANCEL_ENDPOINT = 'POST /v1/trading/orders/schedule-cancel';

export const DEFAULT_GLOBAL_LIMIT: WindowSpec = { limit: 1200, windowSeconds: 60 };
export const DEFAULT_SCHEDULE_CANCEL_LIMIT: WindowSpec = { limit: 600, windowSeconds: 60 };

export type RateDecision = { ok: true } | { ok: false; detail: RateLimitDetail };

/**
 * Named budgets: the simulator's rate limits as a whole, by name (`startSimulator({ budget })`,
 * `POST /_sim/rate-limits {"budget": ...}`, `dms-keeper simulate --budget NAME`). Separate from the
 * venue profiles (profiles.ts), which vary answer bodies, not what is counted.
 */
export const SIM_BUDGETS = [
  'ip_window',
  'signed_window_100_per_5s',
  'signed_window_LIMIT_per_SECONDSs',
  'ip_weight_1200_per_60s',
  'ip_weight_LIMIT_per_SECONDSs',
] as const;

export class UnknownBudgetError extends Error {
  readonly code = 'SIM_UNKNOWN_BUDGET' as const;
}

/**
 * The configuration of a named budget:
 *  - `ip_window`: the defaults (one window of 1200 per 60 s over every request of an IP, and
 *    schedule-cancel's own 600 per 60 s);
 *  - `signed_window_<limit>_per_<seconds>s`, e.g. `signed_window_100_per_5s`: one window of
 *    `limit` per `seconds` over every signed action on both endpoints (REST arms, exchange arms,
 *    approvals), no endpoint quota, reads not counted;
 *  - `ip_weight_<limit>_per_<seconds>s`, e.g. `ip_weight_1200_per_60s` (the venue's published
 *    figure): one window of `limit` weight per `seconds` over every `POST /info` and
 *    `POST /exchange` request of an IP, each spending its weight (weights.ts); no endpoint quota;
 *    the service's REST routes not counted.
 */
export function parseBudget(name: string): RateLimitConfig {
  if (name === 'ip_window') return {};
  const m = /^signed_window_(\d+)_per_(\d+)s$/.exec(name);
  if (m) {
    const spec = validSpec({ limit: Number(m[1]), windowSeconds: Number(m[2]) }, name);
    return { globalCounts: 'signed', global: spec, scheduleCancel: null };
  }
  const w = /^ip_weight_(\d+)_per_(\d+)s$/.exec(name);
  if (w) {
    const spec = validSpec({ limit: Number(w[1]), windowSeconds: Number(w[2]) }, name);
    return { globalCounts: 'weight', global: spec, scheduleCancel: null };
  }
  throw new UnknownBudgetError(
    `unknown simulator budget '${name}'; choose one of: ip_window, signed_window_100_per_5s (or signed_window_LIMIT_per_SECONDSs), ip_weight_1200_per_60s (or ip_weight_LIMIT_per_SECONDSs)`,
  );
}

interface ScopeCheck {
  scope: 'endpoint' | 'global';
  key: string;
  spec: WindowSpec;
  /** Slots this request takes in the window: 1, or its weight (one log entry per unit). */
  cost: number;
}

function validSpec(spec: WindowSpec, what: string): WindowSpec {
  if (!Number.isSafeInteger(spec.limit) || spec.limit < 1) throw new RangeError(`${what}.limit must be a positive integer`);
  if (!Number.isSafeInteger(spec.windowSeconds) || spec.windowSeconds < 1) {
    throw new RangeError(`${what}.windowSeconds must be a positive integer`);
  }
  return { limit: spec.limit, windowSeconds: spec.windowSeconds };
}

/** Sweep the whole table of logs every this many checks, so idle IPs do not accumulate. */
const SWEEP_EVERY_CHECKS = 1000;

export class RateLimiter {
  private global: WindowSpec = DEFAULT_GLOBAL_LIMIT;
  private globalCounts: GlobalCounts = 'all';
  private endpoints = new Map<string, WindowSpec>();
  private defaultEndpoint: WindowSpec | undefined;
  /** Admission timestamps (ms, ascending) per `scope:endpoint:ip` key. */
  private readonly logs = new Map<string, number[]>();
  private checksSinceSweep = 0;

  constructor(
    private readonly clock: Clock,
    config: RateLimitConfig = {},
  ) {
    this.configure(config);
  }

  /**
   * Replaces the quotas. Logs are kept, so a lowered limit takes effect at once against the traffic
   * already admitted (as a venue changing its numbers would).
   */
  configure(config: RateLimitConfig): void {
    this.global = validSpec(config.global ?? DEFAULT_GLOBAL_LIMIT, 'global');
    const counts = config.globalCounts ?? 'all';
    if (counts !== 'all' && counts !== 'signed' && counts !== 'weight') throw new RangeError(`globalCounts must be 'all', 'signed' or 'weight'`);
    this.globalCounts = counts;
    const endpoints = new Map<string, WindowSpec>();
    if (config.scheduleCancel !== null) {
      endpoints.set(SCHEDULE_CANCEL_ENDPOINT, validSpec(config.scheduleCancel ?? DEFAULT_SCHEDULE_CANCEL_LIMIT, 'scheduleCancel'));
    }
    for (const [name, spec] of Object.entries(config.endpoints ?? {})) endpoints.set(name, validSpec(spec, `endpoints.${name}`));
    this.endpoints = endpoints;
    this.defaultEndpoint = config.defaultEndpoint ? validSpec(config.defaultEndpoint, 'defaultEndpoint') : undefined;
  }

  /** The endpoint quota of `endpoint`; undefined when only the global quota applies. */
  endpointSpec(endpoint: string): WindowSpec | undefined {
    return this.endpoints.get(endpoint) ?? this.defaultEndpoint;
  }

  globalSpec(): WindowSpec {
    return this.global;
  }

  /** What the global window counts. */
  globalCounting(): GlobalCounts {
    return this.globalCounts;
  }

  /** The quotas in force, as a configuration (the admin route answers with it). */
  describe(): Required<Pick<RateLimitConfig, 'global' | 'globalCounts' | 'endpoints'>> & Pick<RateLimitConfig, 'defaultEndpoint'> {
    return {
      global: { ...this.global },
      globalCounts: this.globalCounts,
      endpoints: Object.fromEntries([...this.endpoints].map(([k, v]) => [k, { ...v }])),
      ...(this.defaultEndpoint ? { defaultEndpoint: { ...this.defaultEndpoint } } : {}),
    };
  }

  /**
   * Admits (and records) one request of `ip` to `endpoint`, or refuses it without recording it: a
   * refused request does not extend the client's penalty, so waiting `retry_after_seconds` is enough.
   * `cls` says whether it is a signed action or a read (the server knows from the route); it matters
   * only when the global window counts signed actions alone. `weight` is the request's IP weight on
   * the venue host (`/info`, `/exchange`; weights.ts), undefined for the service's REST routes; it
   * matters only when the global window counts weight, and then a request is admitted when the
   * weight already in the window plus its own stays within the limit.
   */
  check(ip: string, endpoint: string, cls: RequestClass = 'signed', weight?: number): RateDecision {
    const now = this.clock.nowMs();
    if (++this.checksSinceSweep >= SWEEP_EVERY_CHECKS) this.sweep(now);
    const scopes: ScopeCheck[] = [];
    const endpointSpec = this.endpointSpec(endpoint);
    if (endpointSpec) scopes.push({ scope: 'endpoint', key: `e\u0000${endpoint}\u0000${ip}`, spec: endpointSpec, cost: 1 });
    const counted =
      this.globalCounts === 'all' ||
      (this.globalCounts === 'signed' && cls === 'signed') ||
      (this.globalCounts === 'weight' && weight !== undefined && weight > 0);
    if (counted) {
      const cost = this.globalCounts === 'weight' ? (weight as number) : 1;
      if (!Number.isSafeInteger(cost) || cost < 1) throw new RangeError('weight must be a positive integer');
      scopes.push({ scope: 'global', key: `g\u0000${ip}`, spec: this.global, cost });
    }
    // When both scopes are exhausted, report the one that frees last: waiting its retry_after is
    // then enough for both, which is what makes the answer "correct" for the client.
    let worst: { check: ScopeCheck; retryMs: number } | undefined;
    const logs: number[][] = [];
    for (const c of scopes) {
      const log = this.pruned(c.key, now, c.spec.windowSeconds * 1000);
      logs.push(log);
      if (log.length + c.cost > c.spec.limit) {
        // The request fits once the log holds limit-cost entries: when entry [len + cost - limit - 1]
        // expires (for cost 1: entry [len - limit]). A cost above the limit never fits: a window.
        const index = log.length + c.cost - c.spec.limit - 1;
        const freesAt = index < log.length ? (log[index] as number) + c.spec.windowSeconds * 1000 : now + c.spec.windowSeconds * 1000;
        const retryMs = freesAt - now;
        if (!worst || retryMs > worst.retryMs) worst = { check: c, retryMs };
      }
    }
    if (worst) {
      const { scope, spec } = worst.check;
      return {
        ok: false,
        detail: {
          type: 'rate_limit',
          limit: spec.limit,
          reason: scope === 'endpoint' ? 'endpoint_quota' : 'global_quota',
          retry_after_seconds: Math.max(1, Math.ceil(worst.retryMs / 1000)),
          scope,
          window_seconds: spec.windowSeconds,
        },
      };
    }
    scopes.forEach((c, i) => {
      const log = logs[i] as number[];
      for (let n = 0; n < c.cost; n++) log.push(now);
      this.logs.set(c.key, log);
    });
    return { ok: true };
  }

  /** What the global window of `ip` holds now: requests, or weight when it counts weight. */
  globalUsed(ip: string): number {
    return this.pruned(`g\u0000${ip}`, this.clock.nowMs(), this.global.windowSeconds * 1000).length;
  }

  /** Forgets all admitted traffic (tests, the admin route). */
  reset(): void {
    this.logs.clear();
  }

  /** Entries of `key` still inside the window ending at `now`. An entry at t counts while now < t + window. */
  private pruned(key: string, now: number, windowMs: number): number[] {
    const log = this.logs.get(key);
    if (!log) return [];
    let drop = 0;
    while (drop < log.length && (log[drop] as number) + windowMs <= now) drop++;
    if (drop > 0) log.splice(0, drop);
    if (log.length === 0) this.logs.delete(key);
    return log;
  }

  private sweep(now: number): void {
    this.checksSinceSweep = 0;
    // The longest window in force bounds how long any entry can matter.
    let maxWindowMs = this.global.windowSeconds * 1000;
    for (const s of this.endpoints.values()) maxWindowMs = Math.max(maxWindowMs, s.windowSeconds * 1000);
    if (this.defaultEndpoint) maxWindowMs = Math.max(maxWindowMs, this.defaultEndpoint.windowSeconds * 1000);
    for (const key of [...this.logs.keys()]) this.pruned(key, now, maxWindowMs);
  }
}
