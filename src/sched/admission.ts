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

/** Earliest time (>= now) at which one more request may go out on this scope. */
export function earliestAdmitMs(scope: ScopeState, nowMs: number, spacingFactor = 1): number {
  let t = Math.max(nowMs, scope.blockedUntilMs, scope.lastAdmitMs + spacingMs(scope.spec) * spacingFactor);
  const inWindow = scope.log.filter((x) => x > t - scope.spec.windowMs);
  if (inWindow.length >= scope.spec.limit) {
    // the (len - limit + 1)-th oldest must leave the window first
    const oldest = inWindow[inWindow.length - scope.spec.limit];
    if (oldest !== undefined) t = Math.max(t, oldest + scope.spec.windowMs);
  }
  return t;
}

export function recordAdmit(scope: ScopeState, atMs: number): void {
  scope.lastAdmitMs = atMs;
  scope.log.push(atMs);
  const cutoff = atMs - scope.spec.windowMs;
  let drop = 0;
  while (drop < scope.log.length && (scope.log[drop] as number) <= cutoff) drop++;
  if (drop > 0) scope.log.splice(0, drop);
}

/** Requests admitted in the window ending at `nowMs`. */
export function usedInWindow(scope: ScopeState, nowMs: number): number {
  let n = 0;
  for (const x of scope.log) if (x > nowMs - scope.spec.windowMs) n++;
  return n;
}
