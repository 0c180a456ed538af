import { describe, expect, it } from 'vitest';
import { mapLimited } from './pool.js';

describe('mapLimited', () => {
  it('runs every item, in order of start, never more than the limit at once', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    await mapLimited(Array.from({ length: 50 }, (_, i) => i), 4, async (x) => {
      started.push(x);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, x % 3));
      inFlight--;
    });
    expect(started).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(most).toBe(4);
  });

  it('handles no items and a limit above the count', async () => {
    await mapLimited([], 8, async () => undefined);
    const seen: string[] = [];
    await mapLimited(['a', 'b'], 100, async (x) => void seen.push(x));
    expect(seen).toEqual(['a', 'b']);
    // results in the items' order, whatever order the calls end in
    expect(await mapLimited([30, 0, 10], 3, async (ms, i) => new Promise<string>((r) => setTimeout(() => r(`${i}:${ms}`), ms)))).toEqual(['0:30', '1:0', '2:10']);
  });

  it('starts with `initial` in flight and lets one more start per settled call, up to the limit', async () => {
    let inFlight = 0;
    const inFlightAtStart: number[] = [];
    const settledAtStart: number[] = [];
    let settled = 0;
    await mapLimited(Array.from({ length: 40 }, (_, i) => i), 8, async () => {
      inFlightAtStart.push(++inFlight);
      settledAtStart.push(settled);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      settled++;
    }, { initial: 2 });
    expect(inFlightAtStart.slice(0, 2)).toEqual([1, 2]);
    // never more in flight than 2 + what had settled, nor than the limit
    inFlightAtStart.forEach((n, i) => expect(n, `call ${i}`).toBeLessThanOrEqual(Math.min(8, 2 + settledAtStart[i]!)));
    expect(Math.max(...inFlightAtStart)).toBe(8);
    expect(settled).toBe(40);
  });
});
