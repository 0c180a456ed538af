/**
 * The shared budget's decisions, pure: which budget is in force (shared through Redis, or this
 * instance's share of it while Redis does not answer), this instance's share by demand, and the
 * Redis bucket that keeps the venue's rolling window. SharedBudget (shared-budget.ts) carries them out.
 */
import type { WindowSpec } from './admission.js';

export const BUDGET_MODES = ['local', 'shared', 'local_fallback'] as const;
export type BudgetMode = (typeof BUDGET_MODES)[number];

/** After a fallback with the connection still up, the shared budget is tried again this much later. */
export const RESUME_RETRY_MS = 2_000;

export interface ModeState {
  mode: BudgetMode;
  /** stop() was called: nothing changes any more. */
  stopped: boolean;
}

export type ModeEvent =
  /** The client (re)connected. */
  | { kind: 'ready' }
  /** The connection was lost or a command failed. */
  | { kind: 'failed'; reason: string }
  | { kind: 'resume_due'; connectionReady: boolean };

export interface ModeStep {
  /** The budget to put in force, with the reason told to onModeChange; absent: no change. */
  to?: { mode: BudgetMode; reason: string };
  /** Try the shared budget again RESUME_RETRY_MS later (unless a retry is already due). */
  retryResume?: boolean;
}

/**
 * A failure puts this instance on its share and schedules a resume: an error while the connection
 * stays up (a limiter's command sent while Redis was away, failing just after it came back) brings
 * no new `ready` to resume on (measured: both shards stayed on the fallback after Redis was back).
 * A Redis still in trouble fails the resumed budget again and the fallback stands.
 */
export function modeStep(s: ModeState, e: ModeEvent): ModeStep {
  if (s.stopped) return {};
  switch (e.kind) {
    case 'ready':
      return s.mode === 'shared' ? {} : { to: { mode: 'shared', reason: 'redis answers' } };
    case 'failed':
      return s.mode === 'local_fallback' ? {} : { to: { mode: 'local_fallback', reason: e.reason }, retryResume: true };
    case 'resume_due':
      return e.connectionReady ? modeStep(s, { kind: 'ready' }) : { retryResume: true };
  }
}

/** The others' demands as last read: Redis's time of the read, and our monotonic time when it came. */
export interface DemandView {
  redisNowMs: number;
  others: DemandEntry[];
  readAtMonoMs: number;
}

/** A view older than the TTL says nothing about who is alive: the instance plans on its fallback share. */
export function viewFresh(view: DemandView, monoMs: number): boolean {
  return monoMs - view.readAtMonoMs <= DEMAND_TTL_MS;
}

export interface ShareState extends ModeState {
  fallbackShare: number;
  /** This instance's demand as last published; absent: none yet. */
  own: Demand | undefined;
  view: DemandView | undefined;
  /** Redis time of the first read since this instance (re)joined (see demandShare's `settled`). */
  firstReadRedisMs: number | undefined;
}

/** demandShare of the last read, or `fallbackShare` while the shared budget is not in force or that read is stale. */
export function budgetShare(s: ShareState, monoMs: number): number {
  const v = s.view;
  if (s.mode !== 'shared' || s.stopped || !v || !viewFresh(v, monoMs)) return s.fallbackShare;
  const settled = s.firstReadRedisMs !== undefined && v.redisNowMs - s.firstReadRedisMs >= DEMAND_PUBLISH_PERIOD_MS;
  return demandShare({ own: s.own, others: v.others, nowMs: v.redisNowMs, fallbackShare: s.fallbackShare, settled });
}

/**
 * Shards planned by demand: each instance publishes what it will spend beside the shared bucket,
 * reads what the others publish, and plans against the shared budget times its demand over the live
 * instances' total D. When D fits the budget B every share covers its demand d (d * B / D >= d
 * exactly when D <= B); when it does not, every instance is cut by the same factor, so no shard
 * plans the whole budget for itself (measured: 36 arms/s on a 20/s window, two shards that each did).
 */
export interface Demand {
  /** Arms per second at its accounts' longest safe periods. */
  armsPerSecond: number;
  /** Provisioning requests still to send: approvals, first arms, resolves. */
  backlog: number;
}

/** One instance's published demand as read back, stamped with Redis's clock when it was written. */
export interface DemandEntry extends Demand {
  id: string;
  atMs: number;
}

/**
 * The backlog counts as backlog / PLAN_HORIZON_S requests per second: the rate that clears it within
 * 20 s. 20 s because that is the order of a deadline (the shortest the config allows is 10 s, the
 * examples and the cold start use 20 s) and of the cold start the plan aims at (180
 * approvals and 180 first arms in 18 s on a 20/s window): shorter, and a shard's cold start would
 * claim most of the budget and force a steady shard's re-arms below their minimum horizon (a
 * backlog of 360 over 5 s is 72/s against the other's 9/s); longer, and a backlog would leave
 * accounts unprotected for longer than one deadline while steady shards keep slack they do not need.
 */
export const PLAN_HORIZON_S = 20;

/** How often an instance publishes its demand and reads the others' (one Redis round trip). */
export const DEMAND_PUBLISH_PERIOD_MS = 1_000;

/** A demand not refreshed for this long is an instance gone (3 publish periods: one lost round trip is not a death). */
export const DEMAND_TTL_MS = 3 * DEMAND_PUBLISH_PERIOD_MS;

/**
 * The least share an instance that publishes reports: it keeps a share in (0, 1] even with no
 * demand of its own while others have some, so the budget it plans against is never zero (a first
 * arm added between two publishes still has room until its demand is known, a second later).
 */
export const MIN_SHARE = 0.01;

/**
 * A budget (or a share of one) that moved by less than this fraction is the same budget: a demand
 * share moves a little every second, and re-cutting the local budget or re-planning the cadence on
 * each wobble would churn both for nothing.
 */
export const BUDGET_CHANGE_TOLERANCE = 0.02;

/** Whether `next` moved from `applied` by more than BUDGET_CHANGE_TOLERANCE (nothing applied yet: it did). */
export function budgetMoved(applied: number | undefined, next: number): boolean {
  return applied === undefined || Math.abs(next - applied) > applied * BUDGET_CHANGE_TOLERANCE;
}

/** The hash (one per shared budget name) that holds every instance's demand, beside its limiters' keys. */
export function demandKey(name: string): string {
  return `dms-keeper:${name}:demand`;
}

/** A count that must be a finite number >= 0 (anything else, a planner's bug, counts as 0). */
function nonNegative(x: number): number {
  return Number.isFinite(x) && x > 0 ? x : 0;
}

/** Requests per second a demand asks for. */
export function demandRate(d: Demand): number {
  return nonNegative(d.armsPerSecond) + nonNegative(d.backlog) / PLAN_HORIZON_S;
}

/** The field value written to Redis (Redis stamps the time; see SharedBudget's script). */
export function formatDemand(d: Demand): string {
  return `${nonNegative(d.armsPerSecond)} ${nonNegative(d.backlog)}`;
}

/**
 * Parses what the exchange script returns: Redis's time in ms, then field/value pairs of the demand
 * hash (value: `<atMs> <armsPerSecond> <backlog>`). Malformed entries are left out.
 */
export function parseDemandTable(reply: unknown): { nowMs: number; entries: DemandEntry[] } | undefined {
  if (!Array.isArray(reply) || reply.length < 1) return undefined;
  const nowMs = Number(reply[0]);
  if (!Number.isFinite(nowMs)) return undefined;
  const entries: DemandEntry[] = [];
  for (let i = 1; i + 1 < reply.length; i += 2) {
    const id = String(reply[i]);
    const parts = String(reply[i + 1]).split(' ').map(Number);
    if (parts.length !== 3 || !parts.every(Number.isFinite)) continue;
    entries.push({ id, atMs: parts[0]!, armsPerSecond: parts[1]!, backlog: parts[2]! });
  }
  return { nowMs, entries };
}

export interface ShareInput {
  /** undefined: none known yet. */
  own: Demand | undefined;
  /** As last read, this instance's own entry left out. */
  others: readonly DemandEntry[];
  /** Redis time of that read. */
  nowMs: number;
  fallbackShare: number;
  /**
   * False while this instance has read the table only once since it (re)joined: an instance that
   * started at the same moment may not have published yet, so the share is at most fallbackShare.
   */
  settled: boolean;
}

/** Its demand over the live instances' total, at least MIN_SHARE; `fallbackShare` with no demand of its own or none at all. */
export function demandShare(input: ShareInput): number {
  const { own, fallbackShare } = input;
  if (own === undefined) return fallbackShare;
  const mine = demandRate(own);
  let total = mine;
  for (const e of input.others) if (input.nowMs - e.atMs <= DEMAND_TTL_MS) total += demandRate(e);
  if (!(total > 0)) return fallbackShare;
  const share = Math.min(1, Math.max(MIN_SHARE, mine / total));
  return input.settled ? share : Math.min(share, fallbackShare);
}

/**
 * The clustered bottleneck settings that keep a rolling window: the venue counts `limit` requests
 * in any `windowMs`, bottleneck's Redis store keeps a token bucket (a reservoir of at most
 * `maximum`, raised by `amount` every `intervalMs`, evaluated on each client's heartbeat).
 *
 * In any span of length W a bucket lets out at most what it held at the start (<= maximum) plus
 * every increase inside the span, and a span of W holds at most W / interval + 1 increases. So
 *   maximum + amount * (W / interval + 1) <= limit
 * i.e. amount = (limit - maximum) * interval / (W + interval). The bucket holds one increase's
 * worth (rounded up) plus one token: enough that no increase is wasted while requests wait, small
 * enough to leave nearly the whole budget to the steady rate. For 1,200 per minute with a 150 ms
 * heartbeat that is 19.9 per second (99.4% of the budget); for short windows the bound costs more
 * (100 per 5 s: 95%), the price of a budget several processes share without a common clock.
 */
export interface SharedReservoir {
  reservoir: number;
  reservoirIncreaseInterval: number;
  reservoirIncreaseAmount: number;
  reservoirIncreaseMaximum: number;
}

export function sharedReservoir(spec: WindowSpec, intervalMs: number): SharedReservoir {
  if (!(spec.limit >= 1) || !(spec.windowMs > 0) || !(intervalMs > 0)) {
    throw new RangeError(`a shared budget needs limit >= 1, a window and an interval > 0 (got ${spec.limit} per ${spec.windowMs} ms, every ${intervalMs} ms)`);
  }
  const perInterval = (spec.limit * intervalMs) / spec.windowMs;
  // Requests take whole tokens, so up to one token's fraction stays in the bucket between
  // increases: it must still have room for a whole increase, or the cap eats part of every other
  // one (measured: 15/s instead of 19/s with room for exactly one increase).
  const maximum = Math.min(spec.limit, Math.ceil(perInterval) + 1);
  const amount = Math.max(0, ((spec.limit - maximum) * intervalMs) / (spec.windowMs + intervalMs));
  return { reservoir: maximum, reservoirIncreaseInterval: intervalMs, reservoirIncreaseAmount: amount, reservoirIncreaseMaximum: maximum };
}

/**
 * The most tokens one Bottleneck job may take of a clustered bucket. A job runs only once the bucket
 * holds its whole weight, and the bucket never holds more than `maximum` (4 at 1,200 per minute with
 * a 150 ms heartbeat), so a heavier request (an info read of weight 20 or 60) goes as several jobs.
 *
 * Why `maximum - amount`, rounded down: while a job of c tokens waits, the bucket keeps up to just
 * under c between increases, and the next increase must fit on top of that under `maximum`, or the
 * cap clips it and the bucket lets out less than its rate. `maximum` is at least one token above
 * `amount` by construction, so the chunk is at least 1; it is 1 at 1,200 per minute (4 - 2.98), 2
 * where the increase sits just under a whole number (2,010 per minute: 7 - 4.995). Larger chunks
 * cost rate, simulated under saturation at 1,200 per minute: 2 tokens lose 11% of it, a full
 * bucket's 4 a third. Small chunks also compete on equal terms with the other instances' one-token
 * jobs, where a big one would wait for the bucket to fill while their jobs keep emptying it.
 */
export function sharedChunk(r: SharedReservoir): number {
  return Math.max(1, Math.floor(r.reservoirIncreaseMaximum - r.reservoirIncreaseAmount));
}

/** `units` tokens as jobs of at most `chunk` tokens each: whole chunks, then the rest. */
export function sharedChunks(units: number, chunk: number): number[] {
  const size = Math.max(1, Math.floor(chunk));
  const out: number[] = [];
  for (let left = Math.ceil(units); left > 0; left -= size) out.push(Math.min(size, left));
  return out;
}

/** Requests per second the bucket lets out in the long run. */
function sharedRatePerSecond(r: SharedReservoir): number {
  return (r.reservoirIncreaseAmount * 1000) / r.reservoirIncreaseInterval;
}

/**
 * A window at `ratePerSecond`, as close to `windowMs` as whole requests allow: the limit rounded
 * down (never below one) and the window shortened to keep the rate exact. Rounding the limit alone
 * lost up to a whole request per window: at 10 per 10 s shared by two, 3 instead of 3.5 each.
 */
export function windowAtRate(ratePerSecond: number, windowMs: number): WindowSpec {
  const limit = Math.max(1, Math.floor((ratePerSecond * windowMs) / 1000));
  return { limit, windowMs: Math.min(windowMs, (limit * 1000) / ratePerSecond) };
}

/** What a shared bucket lets out, as a window of the venue's length (what the local budget paces on). */
export function bucketWindow(spec: WindowSpec, heartbeatMs: number): WindowSpec {
  return windowAtRate(sharedRatePerSecond(sharedReservoir(spec, heartbeatMs)), spec.windowMs);
}

/** A window spec scaled to one instance's share: the same rate times `share`, never below one request. */
export function shareOf(spec: WindowSpec, share: number): WindowSpec {
  return windowAtRate((spec.limit * 1000 * share) / spec.windowMs, spec.windowMs);
}

/** Bottleneck's heartbeat, which also refills a shared bucket: 100 to 200 ms (SharedBudget's default). */
export const SHARED_HEARTBEAT_MS = 150;

/**
 * The budget one instance keeps to for a shared scope: what the shared bucket lets out (its refill
 * rate, bucketWindow), times its share. The keeper's scheduler runs on it (SharedBudget) and
 * check-config plans on it, so a small budget's rounding is the same in both.
 */
export function instanceSpecOf(spec: WindowSpec, share: number, heartbeatMs = SHARED_HEARTBEAT_MS): WindowSpec {
  return shareOf(bucketWindow(spec, heartbeatMs), share);
}
