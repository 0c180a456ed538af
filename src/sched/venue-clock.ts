import type { Clock } from './clock.js';

/**
 * Estimates venue time from our clock plus an offset learned from responses.
 *
 * Each sample bounds the offset (venue minus local): the venue stamped its time somewhere between
 * our send and our receive, so `offset ∈ [venueLow - recvLocal, venueHigh - sendLocal]`. An HTTP
 * `Date` header has whole-second resolution (`venueHigh = venueLow + 999`); `/v1/health` `as_of`
 * is precise to the millisecond. Intersecting recent intervals (Marzullo's idea, simplified) gives
 * an estimate that tightens with every response; an empty intersection means a clock stepped, and
 * we restart from the newest sample.
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

interface Interval {
  low: number;
  high: number;
  atLocalMs: number;
}

export function sampleInterval(s: ClockSample): Interval | undefined {
  if (!(s.recvLocalMs >= s.sendLocalMs) || !(s.venueHighMs >= s.venueLowMs)) return undefined;
  return { low: s.venueLowMs - s.recvLocalMs, high: s.venueHighMs - s.sendLocalMs, atLocalMs: s.recvLocalMs };
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
    let low = Number.NEGATIVE_INFINITY;
    let high = Number.POSITIVE_INFINITY;
    for (const x of this.intervals) {
      low = Math.max(low, x.low);
      high = Math.min(high, x.high);
    }
    if (low > high) {
      // A clock stepped (ours or the venue's): older samples no longer describe it.
      this.intervals = [iv];
      low = iv.low;
      high = iv.high;
    }
    this.estimate = { offsetMs: Math.round((low + high) / 2), uncertaintyMs: (high - low) / 2, samples: this.intervals.length };
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
