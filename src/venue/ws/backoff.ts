/**
 * Reconnect delays: exponential with "full jitter" (delay drawn uniformly from [0, cap)), so many
 * keepers cut off by the same venue outage do not reconnect in lockstep.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor: number;
}

export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({
  initialMs: 500,
  maxMs: 30_000,
  factor: 2,
});

/** The ceiling of the jitter window for retry number `attempt` (0-based). */
export function backoffCeilingMs(attempt: number, opts: BackoffOptions): number {
  const n = Math.max(0, Math.floor(attempt));
  // factor^n overflows to Infinity long before it matters; min() keeps the result finite.
  return Math.min(opts.maxMs, opts.initialMs * Math.pow(opts.factor, n));
}

/**
 * `random() * min(maxMs, initialMs * factor^attempt)`. `random` is clamped to [0, 1] so a faulty
 * injected source cannot produce a negative or runaway delay.
 */
export function backoffDelayMs(attempt: number, random: () => number, opts: BackoffOptions): number {
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(1, Math.max(0, r)) : 0;
  return Math.floor(unit * backoffCeilingMs(attempt, opts));
}

/** Throws a RangeError naming the bad field; used at construction. */
export function validateBackoff(opts: BackoffOptions): void {
  if (!(Number.isFinite(opts.initialMs) && opts.initialMs > 0)) {
    throw new RangeError(`ws backoff.initialMs must be a positive number of ms, got ${opts.initialMs}`);
  }
  if (!(Number.isFinite(opts.maxMs) && opts.maxMs >= opts.initialMs)) {
    throw new RangeError(`ws backoff.maxMs must be >= backoff.initialMs (${opts.initialMs}), got ${opts.maxMs}`);
  }
  if (!(Number.isFinite(opts.factor) && opts.factor >= 1)) {
    throw new RangeError(`ws backoff.factor must be >= 1, got ${opts.factor}`);
  }
}
