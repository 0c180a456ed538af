import { describe, expect, it } from 'vitest';
import { bucketWindow, shareOf, sharedMaxInSpan, sharedReservoir, windowAtRate } from './shared-reservoir.js';

const rate = (w: { limit: number; windowMs: number }): number => (w.limit * 1000) / w.windowMs;

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
});
