/**
 * Pure admission for one rate scope: a sliding-window log (never more than `limit` in any
 * `windowMs`) plus spacing on a grid of slots `windowMs / limit` apart, so a full queue drains at
 * the budgeted rate instead of bursting. A grid, not "last admission + spacing": timers fire 1 to
 * 3 ms late on a busy loop, and at 10 ms slots that drained queues 10% slow; a late admission keeps
 * its slot, and the log (real times) still bounds every window. A request of weight w needs w free
 * units, is logged w times and takes w slots.
 */
export interface WindowSpec {
  limit: number;
  windowMs: number;
}

export interface ScopeState {
  spec: WindowSpec;
  /** Admission times inside the current window, oldest first. */
  log: number[];
  /** The grid slot of the last admission (its time, or the slot it was late for). */
  lastSlotMs: number;
  /** No request of this scope before this time (a 429's retry_after). */
  blockedUntilMs: number;
}

export function newScope(spec: WindowSpec): ScopeState {
  return { spec, log: [], lastSlotMs: Number.NEGATIVE_INFINITY, blockedUntilMs: 0 };
}

/**
 * A window is counted this much longer (at most 0.5% of it): the venue counts at arrival, and
 * requests admitted back to back can arrive tens of ms apart (without it: 2 429s in a 10,000-account run).
 */
export const WINDOW_MARGIN_MS = 250;

/** The span over which `limit` is enforced: the window plus the arrival margin. */
export function spanMs(spec: WindowSpec): number {
  return spec.windowMs + Math.min(WINDOW_MARGIN_MS, spec.windowMs / 200);
}

export function spacingMs(spec: WindowSpec): number {
  return spec.windowMs / spec.limit;
}

/** Index of the first entry of the ascending `log` greater than `x` (binary search). */
function firstAbove(log: readonly number[], x: number): number {
  let lo = 0;
  let hi = log.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((log[mid] as number) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The share of each window the plan spends on arms (plan/cadence.ts plans at it); the rest absorbs
 * retries, bursts of 429s and catch-up after a stall.
 */
export const BUDGET_UTILISATION = 0.97;

/**
 * How many of a window's `limit` a first arm may fill under a pace achieved (scheduler.ts
 * achievedFill): the share the plan spends, rounded. At 50,000 accounts on a starved machine the
 * pace was in force at t = 80 s of the cold start and 14,083 accounts given up, but the first arms
 * went on at the venue's 200 a second; at t = 279 s the kept accounts came due at that pace, the
 * keeper sent 145 to 236 a second, and 8,125 of them sank below their minimum.
 */
export function fillLimit(limit: number): number {
  return Math.max(1, Math.round(limit * BUDGET_UTILISATION));
}

/**
 * Earliest time (>= now) one more request may go on this scope (a binary search: a scan was the
 * hottest loop at scale); `fill`: the most of the window it may fill (fillLimit), else the limit.
 */
export function earliestAdmitMs(scope: ScopeState, nowMs: number, spacingFactor = 1, weight = 1, fill = scope.spec.limit): number {
  const w = unitsOf(scope, weight);
  const cap = Math.min(fill, scope.spec.limit);
  let t = Math.max(nowMs, scope.blockedUntilMs, scope.lastSlotMs + spacingMs(scope.spec) * spacingFactor);
  const from = firstAbove(scope.log, t - spanMs(scope.spec));
  const inWindow = scope.log.length - from;
  if (inWindow + w > cap) {
    // the (inWindow - cap + w)-th oldest inside the window must leave it first
    const oldest = scope.log[scope.log.length - cap + w - 1];
    if (oldest !== undefined) t = Math.max(t, oldest + spanMs(scope.spec));
  }
  return t;
}

/** Units a request of `weight` takes: capped at the limit, so a heavier one waits for an empty window, not forever (the shared budget too). */
export function weightUnits(weight: number, limit: number): number {
  return Math.max(1, Math.min(weight, limit));
}

function unitsOf(scope: ScopeState, weight: number): number {
  return weightUnits(weight, scope.spec.limit);
}

/** Would admitting one more now delay a request reserved for `reservedMs`? Lower orders use spare room, never the next slot. */
export function admitWouldDelay(scope: ScopeState, nowMs: number, reservedMs: number, weight = 1): boolean {
  const w = unitsOf(scope, weight);
  // A request of weight w takes w slots of the grid: the next one is free w spacings later.
  if (slotOf(scope, nowMs) + spacingMs(scope.spec) * w > reservedMs) return true;
  // The window ending at reservedMs would hold what it holds now, plus this one's units (the
  // waiting request is counted as one unit).
  const inWindow = scope.log.length - firstAbove(scope.log, reservedMs - spanMs(scope.spec)) + (nowMs > reservedMs - spanMs(scope.spec) ? w : 0);
  return inWindow >= scope.spec.limit;
}

/**
 * How late an admission may be and still claim its grid slot (the longer of the two): after a stall
 * the queue catches up instead of losing the slots. A large heap's full collection holds the loop
 * 100 to 500 ms; at 10 slots alone each stall cost, at 50,000 accounts, more than the 3% reserve.
 */
const CATCH_UP_MS = 1_000;
const CATCH_UP_SLOTS = 10;

/** The slot an admission at `atMs` takes: the next one within the catch-up span, else the grid restarts (idle time is no burst credit). */
function slotOf(scope: ScopeState, atMs: number): number {
  const spacing = spacingMs(scope.spec);
  const next = scope.lastSlotMs + spacing;
  return atMs >= next && atMs < next + Math.max(CATCH_UP_SLOTS * spacing, CATCH_UP_MS) ? next : atMs;
}

export function recordAdmit(scope: ScopeState, atMs: number, weight = 1): void {
  const w = unitsOf(scope, weight);
  // w slots of the grid: its last is the one the next request follows.
  scope.lastSlotMs = slotOf(scope, atMs) + spacingMs(scope.spec) * (w - 1);
  for (let i = 0; i < w; i++) scope.log.push(atMs);
  // Kept ascending for the binary search, even if the wall clock steps back.
  const n = scope.log.length;
  if (n > 1 && (scope.log[n - 2] as number) > atMs) scope.log.sort((a, b) => a - b);
  const cutoff = atMs - spanMs(scope.spec);
  let drop = 0;
  while (drop < scope.log.length && (scope.log[drop] as number) <= cutoff) drop++;
  if (drop > 0) scope.log.splice(0, drop);
}

/**
 * A request answered at `doneMs` counts in the window from then: the venue saw it somewhere between,
 * on a busy loop long after admission (from admission alone: 2 to 3 429s per 10,000-account cold start).
 */
export function recordDone(scope: ScopeState, admittedMs: number, doneMs: number, weight = 1): void {
  if (!(doneMs > admittedMs)) return;
  const log = scope.log;
  for (let k = unitsOf(scope, weight); k > 0; k--) {
    const i = firstAbove(log, admittedMs) - 1;
    if (i >= 0 && log[i] === admittedMs) log.splice(i, 1);
    log.splice(firstAbove(log, doneMs), 0, doneMs);
  }
}

/** The granularity of a window carried over a restart (recentCounts). */
export const RECENT_BUCKET_MS = 1_000;

/**
 * Admissions still in the window ending at `nowMs`, counted per RECENT_BUCKET_MS, each bucket at
 * its end (at most `nowMs`), ascending: later than they were, so a window carried over a restart
 * holds at least as long as the venue's (state/budget-log.ts says why counts).
 */
export function recentCounts(scope: ScopeState, nowMs: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const log = scope.log;
  for (let i = firstAbove(log, nowMs - scope.spec.windowMs); i < log.length; i++) {
    const atMs = Math.min(Math.ceil(log[i]! / RECENT_BUCKET_MS) * RECENT_BUCKET_MS, nowMs);
    const last = out[out.length - 1];
    if (last && last[0] === atMs) last[1] += 1;
    else out.push([atMs, 1]);
  }
  return out;
}

/** Requests admitted in the window ending at `nowMs`. */
export function usedInWindow(scope: ScopeState, nowMs: number): number {
  return scope.log.length - firstAbove(scope.log, nowMs - scope.spec.windowMs);
}
