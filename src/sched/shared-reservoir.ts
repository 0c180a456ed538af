import type { WindowSpec } from './admission.js';

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
 * a 150 ms heartbeat), so a request heavier than that (an info read of weight 20 or 60) takes its
 * weight as several jobs of at most this many tokens (`sharedChunks`).
 *
 * Why `maximum - amount`, rounded down: while a job of c tokens waits, the bucket keeps up to just
 * under c between increases (what was left when the last job of c went). The next increase must fit
 * on top of that under `maximum`, or the cap clips it and the bucket lets out less than its rate;
 * the same reason `maximum` leaves room for a whole increase above a whole token. So c + amount <=
 * maximum. `maximum` is at least one token above `amount` by construction (while `amount` > 0), so
 * the chunk is at least 1; it is 1 at 1,200 per minute (4 - 2.98), 2 where the increase sits just
 * under a whole number (2,010 per minute: 7 - 4.995). Larger chunks cost rate, simulated under
 * saturation at 1,200 per minute: 2 tokens lose 11% of it, a full bucket's 4 a third (a job of
 * `maximum` waits for a full bucket, clipping every other increase). Small chunks also compete on
 * equal terms with the other instances' one-token jobs, where a big one would wait for the bucket to
 * fill while their jobs keep emptying it.
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
export function sharedRatePerSecond(r: SharedReservoir): number {
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
