import { describe, expect, it } from 'vitest';
import { SlotCalendar } from './cadence-control.js';

describe('SlotCalendar', () => {
  it('gives the wished slot when free, else the latest free one before it', () => {
    const c = new SlotCalendar(10);
    expect(c.claim(1_005, 0)).toBe(1_000);
    expect(c.claim(1_009, 0)).toBe(990);
    expect(c.claim(1_012, 0)).toBe(1_010);
    expect(c.claim(1_000, 0)).toBe(980);
  });

  it('never goes below notBefore: returns the wish unclaimed when the range is full', () => {
    const c = new SlotCalendar(10);
    expect(c.claim(100, 80)).toBe(100);
    expect(c.claim(100, 80)).toBe(90);
    expect(c.claim(100, 80)).toBe(80);
    expect(c.claim(100, 80)).toBe(100); // 80..100 all taken
    expect(c.size()).toBe(3);
  });

  it('spreads a cold start packed at the full budget over the period at the planned rate', () => {
    // 10,000 accounts armed 10 ms apart (B = 100/s) from t = 0, each wanting to re-arm one period
    // (104 s) after its arm; the plan may use 97 arms/s.
    const n = 10_000;
    const periodMs = 104_000;
    const c = new SlotCalendar(1000 / 97);
    const slots: number[] = [];
    for (let i = 0; i < n; i++) {
      const sentAt = i * 10;
      const at = c.claim(sentAt + periodMs, sentAt);
      expect(at).toBeLessThanOrEqual(sentAt + periodMs); // no horizon shorter than planned
      expect(at).toBeGreaterThan(sentAt);
      slots.push(at);
    }
    const sorted = [...slots].sort((a, b) => a - b);
    for (let i = 1; i < n; i++) expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(1000 / 97 - 1e-6);
    // the round starts after the cold start ended (n / B = 100 s) and ends on the last wish, with
    // no gap: 10,000 slots at 97/s
    expect(sorted[0]!).toBeGreaterThan(100_000);
    expect(sorted.at(-1)! - sorted[0]!).toBeLessThan((n * 1000) / 97);
  });

  it('a steady round keeps its slots: each re-arm claims one period after its own slot', () => {
    const c = new SlotCalendar(1000 / 97);
    const n = 2_000;
    const periodMs = 30_000;
    let round = Array.from({ length: n }, (_, i) => i * 10);
    for (let r = 0; r < 5; r++) {
      round = round.map((t) => c.claim(t + periodMs, t));
      const sorted = [...round].sort((a, b) => a - b);
      for (let i = 1; i < n; i++) expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(1000 / 97 - 1e-6);
      c.prune(sorted[0]!);
    }
    expect(c.size()).toBeLessThanOrEqual(2 * n);
  });

  it('refuses a spacing that is not a positive number', () => {
    expect(() => new SlotCalendar(0)).toThrow(RangeError);
    expect(() => new SlotCalendar(Number.NaN)).toThrow(RangeError);
  });
});
