import type { Clock, TimerOptions } from './clock.js';

/**
 * Estimates venue time from our monotonic clock plus an offset learned from the venue's answers.
 *
 * Each sample bounds the offset (venue minus local monotonic): the venue stamped its time somewhere
 * between our send and our receive, so `offset ∈ [venueLow - recvLocal, venueHigh - sendLocal]`.
 * An HTTP `Date` header has whole-second resolution (`venueHigh = venueLow + 999`); `/v1/health`
 * `as_of` is precise to the millisecond. The estimate is the middle of the offsets the recent
 * samples agree on (their intersection, see agreedRegion), so it tightens with every response.
 * Samples are taken on the monotonic clock: a step of the host's wall clock changes nothing here.
 *
 * What it will not do is move venue time backwards on the word of one answer. A cached or stale
 * answer (a busy server's Date a second old, a proxy's own Date, a cached `/v1/health`) is always
 * behind, and moving venue time back postpones every re-arm planned in it: measured from outside,
 * one host-dated proxy page moved it back 30 s and the keeper let deadlines pass while alive. So:
 * - a sample that puts the venue behind the agreed region only drops its own high bound;
 * - a step back needs STEP_CONFIRM newest samples that agree with each other, span at least
 *   STEP_BACK_MIN_SPAN_MS and all put the venue behind the rest; then only they are kept;
 * - a step forward beyond FORWARD_SUSPECT_MS needs FORWARD_CONFIRM samples that show it (a proxy
 *   whose clock runs ahead would otherwise pull every deadline near at once);
 * - readings never run backwards: a sub-second correction back is absorbed by holding the
 *   reading until the clock catches up; only a corroborated step moves it back, and listeners
 *   (`onStep`) hear of every change of the estimate over STEP_REPORT_MS.
 */
export interface ClockSample {
  /** Local monotonic clock when the request left. */
  sendLocalMs: number;
  /** Local monotonic clock when its answer arrived. */
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

/** Newest samples that must agree, against the others, before we believe the venue stepped back. */
export const STEP_CONFIRM = 5;
/** ...and the time they must span: a burst of answers from one cache is one witness, not five. */
export const STEP_BACK_MIN_SPAN_MS = 2_000;
/** A sample that puts the venue this far ahead of the agreed region waits for a second witness. */
export const FORWARD_SUSPECT_MS = 1_000;
/** Samples that must show a forward step before it is taken. */
export const FORWARD_CONFIRM = 2;
/** A change of the estimate larger than this is reported to `onStep` listeners (and re-plans). */
export const STEP_REPORT_MS = 1_000;
/** Unconfirmed forward samples are forgotten after this long. */
const FORWARD_PENDING_MAX_AGE_MS = 60_000;

/**
 * Whole-second samples closer together than this are skipped. At 100 responses a second, 64
 * samples span well under a second, often no second boundary at all: the region they agree on was
 * then hundreds of ms wide and wandered as the window slid. Spaced out, the same 64 samples span
 * 16 s and cross 16 boundaries, which pins the offset to a few ms. Clocks do not drift that fast.
 */
export const MIN_COARSE_SAMPLE_GAP_MS = 250;
/** A sample at least this wide is a whole-second one (a `Date` header spans 999 ms plus the RTT). */
const COARSE_SAMPLE_WIDTH_MS = 500;

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

export interface ClockStep {
  /** New estimate minus old, ms (positive: the venue is later than we thought). */
  deltaMs: number;
  offsetMs: number;
  /** How many samples agree on the new estimate. */
  samples: number;
}

export interface VenueClockStats {
  /** Steps back taken after corroboration. */
  backwardSteps: number;
  /** Steps forward taken after corroboration. */
  forwardSteps: number;
  /** Samples that put the venue behind the agreed region and were outvoted. */
  samplesOutvoted: number;
}

export class VenueClock implements Clock {
  private intervals: Interval[] = [];
  /** Samples showing the venue far ahead, waiting for a second witness. */
  private forwardPending: Interval[] = [];
  private estimate: OffsetEstimate = { offsetMs: 0, uncertaintyMs: Number.POSITIVE_INFINITY, samples: 0 };
  /** The last reading handed out, so a small correction back holds venue time instead of reversing it. */
  private lastReadMs = Number.NEGATIVE_INFINITY;
  private readonly listeners = new Set<(step: ClockStep) => void>();
  private readonly counts: VenueClockStats = { backwardSteps: 0, forwardSteps: 0, samplesOutvoted: 0 };

  constructor(
    private readonly local: Clock,
    private readonly opts: { maxSamples?: number; maxAgeMs?: number } = {},
  ) {}

  /** Venue time now: never less than a reading already handed out, unless a step was confirmed. */
  nowMs(): number {
    const t = this.local.monoMs() + this.estimate.offsetMs;
    if (t < this.lastReadMs) return this.lastReadMs;
    this.lastReadMs = t;
    return t;
  }

  monoMs(): number {
    return this.local.monoMs();
  }

  setTimeout(fn: () => void, delayMs: number, opts?: TimerOptions) {
    return this.local.setTimeout(fn, delayMs, opts);
  }

  clearTimeout(handle: Parameters<Clock['clearTimeout']>[0]): void {
    this.local.clearTimeout(handle);
  }

  /** Local monotonic time at which the venue clock will read `venueMs`. */
  localAt(venueMs: number): number {
    return venueMs - this.estimate.offsetMs;
  }

  current(): OffsetEstimate {
    return this.estimate;
  }

  stats(): Readonly<VenueClockStats> {
    return this.counts;
  }

  /** local wall clock - venue, in seconds: the `dms_keeper_clock_skew_seconds` convention. */
  skewSeconds(): number {
    return (this.local.nowMs() - this.local.monoMs() - this.estimate.offsetMs) / 1000;
  }

  hasEstimate(): boolean {
    return this.estimate.samples > 0;
  }

  /** Hears of every change of the estimate over STEP_REPORT_MS; returns the unsubscribe. */
  onStep(fn: (step: ClockStep) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  observe(sample: ClockSample): void {
    const iv = sampleInterval(sample);
    if (!iv) return;
    const maxAge = this.opts.maxAgeMs ?? 10 * 60_000;
    const maxSamples = this.opts.maxSamples ?? 64;
    const fresh = (x: Interval): boolean => iv.atLocalMs - x.atLocalMs <= maxAge;
    this.intervals = this.intervals.filter(fresh);

    if (this.intervals.length > 0) {
      const before = agreedRegion(this.intervals);
      if (iv.low > before.high + FORWARD_SUSPECT_MS) {
        // The venue far ahead of what every other sample says: a step, or a foreign clock.
        this.forwardPending = [...this.forwardPending.filter((x) => iv.atLocalMs - x.atLocalMs <= FORWARD_PENDING_MAX_AGE_MS), iv];
        const agreed = agreedRegion(this.forwardPending);
        if (this.forwardPending.length < FORWARD_CONFIRM || agreed.count < FORWARD_CONFIRM) return;
        this.intervals = this.forwardPending;
        this.forwardPending = [];
        this.counts.forwardSteps++;
        this.adopt(agreedRegion(this.intervals), true);
        return;
      }
    }
    // Spacing applies to samples that agree, not to witnesses of a step: at start-up a burst of
    // answers inside 250 ms once kept a wrong first estimate for 15 s.
    const last = this.intervals[this.intervals.length - 1];
    if (last && iv.high - iv.low >= COARSE_SAMPLE_WIDTH_MS && iv.atLocalMs - last.atLocalMs < MIN_COARSE_SAMPLE_GAP_MS && iv.atLocalMs >= last.atLocalMs) return;
    // Pending forward witnesses stay (until they age out): a stale or foreign answer between two
    // of the venue's own must not keep a real step from being confirmed.
    this.intervals.push(iv);
    if (this.intervals.length > maxSamples) this.intervals.shift();
    let best = agreedRegion(this.intervals);
    let stepped = false;
    if (iv.high < best.low) this.counts.samplesOutvoted++;
    const recent = this.intervals.slice(-STEP_CONFIRM);
    if (
      recent.length === STEP_CONFIRM &&
      this.intervals.length > STEP_CONFIRM &&
      recent.every((x) => x.high < best.low) &&
      recent[recent.length - 1]!.atLocalMs - recent[0]!.atLocalMs >= STEP_BACK_MIN_SPAN_MS
    ) {
      // A step back: the newest samples, over time, all put the venue behind what the others said.
      const agreed = agreedRegion(recent);
      if (agreed.count === STEP_CONFIRM) {
        this.intervals = recent;
        best = agreed;
        stepped = true;
        this.counts.backwardSteps++;
      }
    }
    this.adopt(best, stepped);
  }

  private adopt(region: { low: number; high: number; count: number }, stepped: boolean): void {
    const before = this.estimate;
    this.estimate = { offsetMs: Math.round((region.low + region.high) / 2), uncertaintyMs: (region.high - region.low) / 2, samples: region.count };
    // A confirmed step moves readings back at once; anything smaller is absorbed (see nowMs).
    if (stepped) this.lastReadMs = Number.NEGATIVE_INFINITY;
    const deltaMs = this.estimate.offsetMs - before.offsetMs;
    if (before.samples > 0 && Math.abs(deltaMs) > STEP_REPORT_MS) {
      const step: ClockStep = { deltaMs, offsetMs: this.estimate.offsetMs, samples: this.estimate.samples };
      for (const fn of this.listeners) fn(step);
    }
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
