import type { Clock } from './clock.js';

/**
 * Estimates venue time from our clock plus an offset learned from responses.
 *
 * Each sample bounds the offset (venue minus local): the venue stamped its time somewhere between
 * our send and our receive, so `offset ∈ [venueLow - recvLocal, venueHigh - sendLocal]`. An HTTP
 * `Date` header has whole-second resolution (`venueHigh = venueLow + 999`); `/v1/health` `as_of`
 * is precise to the millisecond. The estimate is the middle of the offsets that the most recent
 * samples agree on (Marzullo's algorithm), so it tightens with every response.
 *
 * One sample that disagrees with the rest does not move it: a loaded server stamps a `Date` that is
 * a second stale now and then (Node caches the header string per second), and restarting from such
 * a sample made the estimate jump by up to half a second while the true offset was 0 (measured at
 * 1,000 accounts: -254 ms to +159 ms within 20 s), moving every planned arm with it. A clock that
 * really stepped shows as one sample off by more than STEP_IMMEDIATE_MS (no stale header is), or
 * as STEP_CONFIRM newest samples agreeing with each other and not with the rest; then only they are
 * kept.
 */
export interface ClockSample {
  sendLocalMs: number;
  recvLocalMs: number;
  venueLowMs: number;
  venueHighMs: number;
}

export interface OffsetEstimate {
  /** venue - local, ms. */
  offsetMs: number;
  /** Half-width of the interval the offset is known to lie in. */
  uncertaintyMs: number;
  samples: number;
}

export interface Interval {
  low: number;
  high: number;
  atLocalMs: number;
}

export function sampleInterval(s: ClockSample): Interval | undefined {
  if (!(s.recvLocalMs >= s.sendLocalMs) || !(s.venueHighMs >= s.venueLowMs)) return undefined;
  return { low: s.venueLowMs - s.recvLocalMs, high: s.venueHighMs - s.sendLocalMs, atLocalMs: s.recvLocalMs };
}

/** Newest samples that must agree, against the others, before we believe a clock stepped. */
export const STEP_CONFIRM = 5;
/** A sample this far from the agreed offsets is a step at once: stale headers are off by < 1 s. */
export const STEP_IMMEDIATE_MS = 2_000;

function distance(x: Interval, region: { low: number; high: number }): number {
  return x.high < region.low ? region.low - x.high : x.low > region.high ? x.low - region.high : 0;
}

/**
 * The offsets most intervals agree on: [low, high] and how many agree. Ties go to the region the
 * newest interval is in.
 */
export function bestAgreement(intervals: readonly Interval[]): { low: number; high: number; count: number } | undefined {
  const newest = intervals[intervals.length - 1];
  let best: { low: number; high: number; count: number; hasNewest: boolean } | undefined;
  // The best region starts at some interval's low end: try each (n <= maxSamples, so n^2 is small).
  for (const a of intervals) {
    let count = 0;
    let high = Number.POSITIVE_INFINITY;
    let hasNewest = false;
    for (const b of intervals) {
      if (b.low <= a.low && a.low <= b.high) {
        count++;
        high = Math.min(high, b.high);
        if (b === newest) hasNewest = true;
      }
    }
    if (!best || count > best.count || (count === best.count && hasNewest && !best.hasNewest)) best = { low: a.low, high, count, hasNewest };
  }
  return best && { low: best.low, high: best.high, count: best.count };
}

export class VenueClock implements Clock {
  private intervals: Interval[] = [];
  private estimate: OffsetEstimate = { offsetMs: 0, uncertaintyMs: Number.POSITIVE_INFINITY, samples: 0 };

  constructor(
    private readonly local: Clock,
    private readonly opts: { maxSamples?: number; maxAgeMs?: number } = {},
  ) {}

  nowMs(): number {
    return this.local.nowMs() + this.estimate.offsetMs;
  }

  setTimeout(fn: () => void, delayMs: number) {
    return this.local.setTimeout(fn, delayMs);
  }

  clearTimeout(handle: Parameters<Clock['clearTimeout']>[0]): void {
    this.local.clearTimeout(handle);
  }

  /** Local time at which the venue clock will read `venueMs`. */
  localAt(venueMs: number): number {
    return venueMs - this.estimate.offsetMs;
  }

  current(): OffsetEstimate {
    return this.estimate;
  }

  /** local - venue, in seconds: the `dms_keeper_clock_skew_seconds` convention. */
  skewSeconds(): number {
    return -this.estimate.offsetMs / 1000;
  }

  hasEstimate(): boolean {
    return this.estimate.samples > 0;
  }

  observe(sample: ClockSample): void {
    const iv = sampleInterval(sample);
    if (!iv) return;
    const maxAge = this.opts.maxAgeMs ?? 10 * 60_000;
    const maxSamples = this.opts.maxSamples ?? 64;
    this.intervals = this.intervals.filter((x) => iv.atLocalMs - x.atLocalMs <= maxAge);
    this.intervals.push(iv);
    if (this.intervals.length > maxSamples) this.intervals.shift();
    let best = bestAgreement(this.intervals)!;
    const recent = this.intervals.slice(-STEP_CONFIRM);
    if (distance(iv, best) > STEP_IMMEDIATE_MS) {
      this.intervals = [iv];
      best = { low: iv.low, high: iv.high, count: 1 };
    } else if (recent.length === STEP_CONFIRM && this.intervals.length > STEP_CONFIRM && recent.every((x) => distance(x, best) > 0)) {
      const agreed = bestAgreement(recent)!;
      if (agreed.count === STEP_CONFIRM) {
        // A clock stepped (ours or the venue's): older samples no longer describe it.
        this.intervals = recent;
        best = agreed;
      }
    }
    this.estimate = { offsetMs: Math.round((best.low + best.high) / 2), uncertaintyMs: (best.high - best.low) / 2, samples: best.count };
  }

  /** A sample from an HTTP `Date` header (RFC 7231, whole seconds). */
  observeDateHeader(dateHeader: string, sendLocalMs: number, recvLocalMs: number): void {
    const venueLowMs = Date.parse(dateHeader);
    if (!Number.isFinite(venueLowMs)) return;
    this.observe({ sendLocalMs, recvLocalMs, venueLowMs, venueHighMs: venueLowMs + 999 });
  }

  /** A sample from a millisecond timestamp the venue wrote (`/v1/health` `as_of`). */
  observeTimestamp(iso: string, sendLocalMs: number, recvLocalMs: number): void {
    const venueMs = Date.parse(iso);
    if (!Number.isFinite(venueMs)) return;
    this.observe({ sendLocalMs, recvLocalMs, venueLowMs: venueMs, venueHighMs: venueMs });
  }
}
