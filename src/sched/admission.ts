/**
 * Pure admission for one rate scope: a sliding-window log (never more than `limit` requests in
 * any `windowMs`) plus smooth spacing (at least `windowMs / limit` between two admissions), so a
 * full queue drains at the budgeted rate instead of bursting the whole window at once.
 */
export interface WindowSpec {
  limit: number;
  windowMs: number;
}

export interface ScopeState {
  spec: WindowSpec;
  /** Admission times inside the current window, oldest first. */
  log: number[];
  lastAdmitMs: number;
  /** No request of this scope before this time (a 429's retry_after). */
  blockedUntilMs: number;
}

export function newScope(spec: WindowSpec): ScopeState {
  return { spec, log: [], lastAdmitMs: Number.NEGATIVE_INFINITY, blockedUntilMs: 0 };
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
export function earliestAdmitMs(scope: ScopeState, nowMs: number, spacingFactor = 1): number {
  let t = Math.max(nowMs, scope.blockedUntilMs, scope.lastAdmitMs + spacingMs(scope.spec) * spacingFactor);
  const from = firstAbove(scope.log, t - scope.spec.windowMs);
  const inWindow = scope.log.length - from;
  if (inWindow >= scope.spec.limit) {
    // the (inWindow - limit + 1)-th oldest inside the window must leave it first
    const oldest = scope.log[scope.log.length - scope.spec.limit];
    if (oldest !== undefined) t = Math.max(t, oldest + scope.spec.windowMs);
  }
  return t;
}

export function recordAdmit(scope: ScopeState, atMs: number): void {
  scope.lastAdmitMs = atMs;
  scope.log.push(atMs);
  // Kept ascending for the binary search, even if the wall clock steps back.
  const n = scope.log.length;
  if (n > 1 && (scope.log[n - 2] as number) > atMs) scope.log.sort((a, b) => a - b);
  const cutoff = atMs - scope.spec.windowMs;
  let drop = 0;
  while (drop < scope.log.length && (scope.log[drop] as number) <= cutoff) drop++;
  if (drop > 0) scope.log.splice(0, drop);
}

/** Requests admitted in the window ending at `nowMs`. */
export function usedInWindow(scope: ScopeState, nowMs: number): number {
  return scope.log.length - firstAbove(scope.log, nowMs - scope.spec.windowMs);
}
