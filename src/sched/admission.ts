/**
 * Pure admission for one rate scope: a sliding-window log (never more than `limit` requests in
 * any `windowMs`) plus smooth spacing on a grid of slots `windowMs / limit` apart, so a full queue
 * drains at the budgeted rate instead of bursting the whole window at once.
 *
 * Why a grid and not "last admission + spacing": timers fire late on a busy event loop (1 to 3 ms
 * is common), and with spacing counted from the actual admission every late wake-up is lost for
 * good: at 10 ms slots, 1 ms of lateness per slot drains a queue 10% slower than the budget. A
 * request admitted late keeps its slot, so the next one is not pushed; the window log, which uses
 * the real times, still bounds every window.
 *
 * Weights (the venue's IP budget counts each request by its weight, VENUE.md "The info endpoint"):
 * a request of weight w needs w free units in the window, is logged as w entries at its time, and
 * takes w slots of the grid, so a queue of heavy requests drains at the budgeted weight per second.
 * Weight 1 is exactly the unit case.
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
 * The venue counts a window on its clock, at arrival; requests we admit back to back (a catch-up
 * after a stall) can arrive tens of ms apart from each other. So a window is counted this much
 * longer than it is (at most 0.5% of it): what left our window has surely left the venue's.
 * (Without it: 2 429s in a 10,000-account run.)
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
 * Earliest time (>= now) at which one more request may go out on this scope. The log is kept in
 * ascending order, so counting what is inside the window is a binary search (this runs for every
 * admission decision: with tens of thousands of entries a scan was the keeper's hottest loop).
 */
export function earliestAdmitMs(scope: ScopeState, nowMs: number, spacingFactor = 1, weight = 1): number {
  const w = unitsOf(scope, weight);
  let t = Math.max(nowMs, scope.blockedUntilMs, scope.lastSlotMs + spacingMs(scope.spec) * spacingFactor);
  const from = firstAbove(scope.log, t - spanMs(scope.spec));
  const inWindow = scope.log.length - from;
  if (inWindow + w > scope.spec.limit) {
    // the (inWindow - limit + w)-th oldest inside the window must leave it first (w = 1: the
    // (inWindow - limit + 1)-th)
    const oldest = scope.log[scope.log.length - scope.spec.limit + w - 1];
    if (oldest !== undefined) t = Math.max(t, oldest + spanMs(scope.spec));
  }
  return t;
}

/**
 * The units a request of `weight` takes of a window of `limit`: its weight, capped at the limit (a
 * request heavier than the whole window waits for an empty window instead of forever). The shared
 * budget caps its tokens the same way (shared-budget.ts take).
 */
export function weightUnits(weight: number, limit: number): number {
  return Math.max(1, Math.min(weight, limit));
}

/** The units a request of `weight` takes of this scope, at the limit in force. */
export function unitsOf(scope: ScopeState, weight: number): number {
  return weightUnits(weight, scope.spec.limit);
}

/**
 * Would admitting one more request at `nowMs` make a request that plans to go at `reservedMs`
 * (>= nowMs) wait longer? Lower-priority work may use a scope's spare room, never its next slot.
 */
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
 * How late an admission may be and still claim its grid slot: after an event-loop stall of up to
 * this long (or CATCH_UP_SLOTS slots, when that is longer) the queue catches up (the next requests
 * go at once, each on its own slot) instead of losing them. A full collection of a large heap holds
 * the loop 100 to 500 ms; at 10 slots (50 ms at 200 arms/s) every such stall cost the budget its
 * length, at 50,000 accounts more than the plan's 3% reserve. The window log still bounds every
 * window, so a catch-up never sends more than the venue's window allows.
 */
export const CATCH_UP_MS = 1_000;
export const CATCH_UP_SLOTS = 10;

/**
 * The slot an admission at `atMs` takes: the next grid slot when it is late by less than the
 * catch-up span. Later than that the queue was idle (or held by a 429): the grid starts again at
 * `atMs`, so a long idle time is never credited as a burst.
 */
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
 * A request admitted at `admittedMs` got its answer at `doneMs`: from now on it counts in the window
 * from `doneMs`. The venue saw it somewhere in between, and on a busy event loop that can be long
 * after we admitted it (signing and writing wait their turn), so counting from admission alone
 * could let a request out that the venue still counts the old one against: measured, 2 to 3 429s
 * per 10,000-account cold start with catch-up bursts.
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

/** Requests admitted in the window ending at `nowMs`. */
export function usedInWindow(scope: ScopeState, nowMs: number): number {
  return scope.log.length - firstAbove(scope.log, nowMs - scope.spec.windowMs);
}
