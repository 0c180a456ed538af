import { describe, expect, it } from 'vitest';
import { slackDelayMs, systemClock, type Clock, type TimerOptions } from './clock.js';

describe('slackDelayMs: timers due within one slack interval fire together, never early', () => {
  it('rounds the due time up to the next multiple of the slack', () => {
    expect(slackDelayMs(1_000, 1, 100)).toBe(100);
    expect(slackDelayMs(1_000, 100, 100)).toBe(100);
    expect(slackDelayMs(1_030, 40, 100)).toBe(70);
    expect(slackDelayMs(1_030, 71, 100)).toBe(170);
  });

  it('gives every timer due in one interval the same fire time', () => {
    const fireAt = new Set<number>();
    for (let now = 5_000; now < 5_090; now += 7.3) fireAt.add(now + slackDelayMs(now, 5_200.5 - now, 100));
    expect(new Set([...fireAt].map(Math.floor))).toEqual(new Set([5_300])); // within the ms it rounds up
  });

  it('never fires early and is late by less than the slack (plus the ms it rounds up)', () => {
    for (let i = 0; i < 2_000; i++) {
      const now = Math.random() * 1e9;
      const delay = Math.random() * 10_000;
      const d = slackDelayMs(now, delay, 100);
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(delay);
      expect(d - delay).toBeLessThan(101);
    }
  });

  it('leaves "as soon as possible" alone, and everything when the slack is 0', () => {
    expect(slackDelayMs(1_037, 0, 100)).toBe(0);
    expect(slackDelayMs(1_037, -5, 100)).toBe(0);
    expect(slackDelayMs(1_037, 13, 0)).toBe(13);
  });
});

/**
 * Sets a timer on `clock` for each of `offsetsMs` past the next multiple of `slackMs` (so where they
 * fall within a slack interval is known), and resolves with that boundary and when each fired
 * (performance.now()).
 */
async function timersPastBoundary(clock: Clock, slackMs: number, offsetsMs: number[], opts?: TimerOptions): Promise<{ boundary: number; fired: number[] }> {
  const t0 = performance.now();
  const boundary = Math.ceil(t0 / slackMs) * slackMs;
  const fired: number[] = [];
  await new Promise<void>((resolve) => {
    for (const off of offsetsMs) clock.setTimeout(() => (fired.push(performance.now()), fired.length === offsetsMs.length && resolve()), boundary + off - t0, opts);
    // A pending unref'd timer alone would not hold the test open; this one does.
    setTimeout(() => undefined, 2 * slackMs + 100);
  });
  return { boundary, fired };
}

/**
 * How early by performance.now() Node may fire a timer: it counts a timer from the event loop's
 * cached time (whole ms, read when the loop's turn began), so one set late in a long turn fires
 * that much before its delay has passed. Under a loaded test run a precise timer due 20 ms past a
 * boundary fired 1.28 ms before it (2026-12-07).
 */
const NODE_EARLY_MS = 10;

describe('systemClock with a timer slack', () => {
  it('fires timers due within one slack interval in one go, no earlier than asked', async () => {
    // Due 5, 20 and 35 ms after the next boundary: all three in the interval that ends 50 ms after it.
    const { boundary, fired } = await timersPastBoundary(systemClock({ timerSlackMs: 50 }), 50, [5, 20, 35]);
    expect(Math.min(...fired)).toBeGreaterThanOrEqual(boundary + 35 - NODE_EARLY_MS);
    expect(Math.max(...fired) - Math.min(...fired)).toBeLessThan(5);
  });
});

describe('a precise timer', () => {
  it('is exempt from the slack: it fires when due, not on the boundary', async () => {
    const { boundary, fired } = await timersPastBoundary(systemClock({ timerSlackMs: 400 }), 400, [20], { precise: true });
    expect(fired[0]).toBeGreaterThanOrEqual(boundary + 20 - NODE_EARLY_MS);
    // With the slack it would fire at the next boundary, 380 ms after it was due.
    expect(fired[0]! - (boundary + 20)).toBeLessThan(300);
  });
});
