import { describe, expect, it } from 'vitest';
import { bucketWindow, shareOf, sharedChunk, sharedChunks, sharedReservoir, windowAtRate, type SharedReservoir } from './shared-reservoir.js';
import { sharedMaxInSpan } from './test-support.js';

const rate = (w: { limit: number; windowMs: number }): number => (w.limit * 1000) / w.windowMs;

/**
 * The clustered bucket saturated by jobs of `chunk` tokens, as Bottleneck's Redis script keeps it:
 * each interval the increase up to the maximum, then every job that fits. The share of the
 * increases let out.
 */
function letOut(r: SharedReservoir, chunk: number, intervals = 20_000): number {
  let reservoir = r.reservoir;
  let taken = 0;
  for (let i = 0; i < intervals; i++) {
    reservoir = Math.min(reservoir + r.reservoirIncreaseAmount, r.reservoirIncreaseMaximum);
    while (reservoir >= chunk) {
      reservoir -= chunk;
      taken += chunk;
    }
  }
  return (taken - r.reservoir) / (intervals * r.reservoirIncreaseAmount);
}

describe('shared reservoir windows', () => {
  it('a share keeps the rate exact where rounding the limit alone lost a request per window', () => {
    // 10 per 10 s shared by two: 0.5/s each, not 4 per 10 s (0.4/s).
    const half = shareOf({ limit: 10, windowMs: 10_000 }, 0.5);
    expect(rate(half)).toBeCloseTo(0.5, 9);
    expect(half.windowMs).toBeLessThanOrEqual(10_000);
    // 3.5 per 10 s: 3 per 8.57 s, never more than 3 in any span shorter than that.
    expect(shareOf({ limit: 7, windowMs: 10_000 }, 0.5)).toEqual({ limit: 3, windowMs: (3 * 1000) / 0.35 });
    expect(windowAtRate(0.01, 5_000)).toEqual({ limit: 1, windowMs: 5_000 });
  });

  it('the bucket as a window: at most what the bucket lets out, never the whole venue window', () => {
    const spec = { limit: 100, windowMs: 5_000 };
    const w = bucketWindow(spec, 150);
    expect(rate(w)).toBeLessThan(20);
    expect(rate(w)).toBeGreaterThan(18);
    expect(sharedMaxInSpan(sharedReservoir(spec, 150), 5_000)).toBeLessThanOrEqual(100);
  });

  it('heavy requests go in jobs no larger than leaves room for a whole increase: nothing of the rate is lost', () => {
    const venue = sharedReservoir({ limit: 1_200, windowMs: 60_000 }, 150);
    expect(venue.reservoirIncreaseMaximum).toBe(4);
    expect(venue.reservoirIncreaseAmount).toBeCloseTo(2.98, 2);
    expect(sharedChunk(venue)).toBe(1); // 4 - 2.98
    expect(letOut(venue, 1)).toBeGreaterThan(0.999);
    expect(letOut(venue, 2)).toBeLessThan(0.9); // the cap clips what a waiting pair leaves
    expect(letOut(venue, 4)).toBeLessThan(0.7); // a job of the whole bucket
    // An increase just under a whole number leaves room for jobs of 2, not 3.
    const odd = sharedReservoir({ limit: 2_010, windowMs: 60_000 }, 150);
    expect(sharedChunk(odd)).toBe(2); // 7 - 4.995
    expect(letOut(odd, 2)).toBeGreaterThan(0.999);
    expect(letOut(odd, 3)).toBeLessThan(0.95);
    for (const spec of [
      { limit: 40, windowMs: 2_000 },
      { limit: 120, windowMs: 6_000 },
      { limit: 100, windowMs: 5_000 },
      { limit: 50, windowMs: 10_000 },
    ]) {
      const r = sharedReservoir(spec, 150);
      expect(sharedChunk(r)).toBeGreaterThanOrEqual(1);
      expect(sharedChunk(r) + r.reservoirIncreaseAmount).toBeLessThanOrEqual(r.reservoirIncreaseMaximum);
      expect(letOut(r, sharedChunk(r))).toBeGreaterThan(0.999);
    }
    expect(sharedChunks(60, 1)).toHaveLength(60);
    expect(sharedChunks(5, 2)).toEqual([2, 2, 1]);
    expect(sharedChunks(1, 4)).toEqual([1]);
  });
});
