import type { Clock } from './clock.js';

/**
 * Estimates venue time from our clock plus an offset learned from responses.
 *
 * Each sample bounds the offset (venue minus local): the venue stamped its time somewhere between
 * our send and our receive, so `offset ∈ [venueLow - recvLocal, venueHigh - sendLocal]`. An HTTP
 * `Date` header has whole-second resolution (`venueHigh = venueLow + 999`); `/v1/health` `as_of`
 * is precise to the millisecond. The estimate is the middle of the offsets the recent samples agree
 * on (their intersection, see agreedRegion), so it tightens with every response.
 *
 * One sample that disagrees with the rest does not move it: a loaded server stamps a `Date` that is
 * a second stale now and then (Node caches the header string per second), and restarting from such
 * a sample made the estimate jump by up to half a second while the true offset was 0 (measured at
 * 1,000 accounts: -254 ms to +159 ms within 20 s), moving every planned arm with it. A clock that
 * really stepped shows as one sample off by more than STEP_IMMEDIATE_MS (no stale header is), as
 * a low bound above the others (a step forward: a `Date` is never ahead), or as STEP_CONFIRM newest
 * samples agreeing with each other on a venue behind the rest; then only they are kept.
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

/**
 * Whole-second samples closer together than this are skipped. At 100 responses a second, 64
 * samples span well under a second, often no second boundary at all: the region they agree on was
 * then hundreds of ms wide and wandered as the window slid. Spaced out, the same 64 samples span
 * 16 s and cross 16 boundaries, which pins the offset to a few ms. Clocks do not drift that fast.
 */
export const MIN_COARSE_SAMPLE_GAP_MS = 250;
/** A sample at least this wide is a whole-second one (a `Date` header spans 999 ms plus the RTT). */
const COARSE_SAMPLE_WIDTH_MS = 500;

function distance(x: Interval, region: { low: number; high: number }): number {
  return x.high < region.low ? region.low - x.high : x.low > region.high ? x.low - region.high : 0;
}

/**
 * Where the samples put the offset: the highest low bound, and the lowest high bound that does not
 * contradict it. Only a high bound can lie (a stale `Date` is behind, never ahead), so a high bound
 * below the low bound is dropped rather than believed; `count` is how many samples agree.
 */
export function agreedRegion(intervals: readonly Interval[]): { low: number; high: number; count: number } {
  let low = Number.NEGATIVE_INFINITY;
  for (const x of intervals) low = Math.max(low, x.low);
  let high = Number.POSITIVE_INFINITY;
  let count = 0;
  for (const x of intervals) {
    if (x.high < low) continue;
    high = Math.min(high, x.high);
    count++;
  }
  return { low, high: count === 0 ? low : high, count };
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
    const last = this.intervals[this.intervals.length - 1];
    if (last && iv.high - iv.low >= COARSE_SAMPLE_WIDTH_MS && iv.atLocalMs - last.atLocalMs < MIN_COARSE_SAMPLE_GAP_MS && iv.atLocalMs >= last.atLocalMs) return;
    const maxAge = this.opts.maxAgeMs ?? 10 * 60_000;
    const maxSamples = this.opts.maxSamples ?? 64;
    this.intervals = this.intervals.filter((x) => iv.atLocalMs - x.atLocalMs <= maxAge);
    this.intervals.push(iv);
    if (this.intervals.length > maxSamples) this.intervals.shift();
    let best = agreedRegion(this.intervals);
    const recent = this.intervals.slice(-STEP_CONFIRM);
    if (distance(iv, best) > STEP_IMMEDIATE_MS) {
      // A clock stepped (ours or the venue's): older samples no longer describe it.
      this.intervals = [iv];
      best = agreedRegion(this.intervals);
    } else if (recent.length === STEP_CONFIRM && this.intervals.length > STEP_CONFIRM && recent.every((x) => x.high < best.low)) {
      // A small step back: the newest samples all put the venue behind what the others said.
      const agreed = agreedRegion(recent);
      if (agreed.count === STEP_CONFIRM) {
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
