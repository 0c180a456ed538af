import { describe, expect, it } from 'vitest';
import { forEachLimited } from './pool.js';

describe('forEachLimited', () => {
  it('runs every item, in order of start, never more than the limit at once', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    await forEachLimited(Array.from({ length: 50 }, (_, i) => i), 4, async (x) => {
      started.push(x);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, x % 3));
      inFlight--;
    });
    expect(started).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(most).toBe(4);
  });

  it('handles no items and a limit above the count', async () => {
    await forEachLimited([], 8, async () => undefined);
    const seen: string[] = [];
    await forEachLimited(['a', 'b'], 100, async (x) => void seen.push(x));
    expect(seen).toEqual(['a', 'b']);
  });
});
