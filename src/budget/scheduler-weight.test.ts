import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { RequestScheduler } from './scheduler.js';
import { WINDOW_MARGIN_MS } from './admission.js';
import { recorder } from './test-support.js';
import { sleep } from '../time/clock.js';

// Weighted admission (issue 20): a request of weight w needs w free units in each scope it spends.

describe('RequestScheduler: weights', () => {
  it('a request of weight w needs w free units in the window and takes w slots of the grid', async () => {
    // 10 units per second: a slot every 100 ms
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { exchange: { limit: 10, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    void s.run({ kind: 'read', scopes: ['exchange'], weight: 6, maxWaitMs: 60_000 }, job('w6'));
    void s.run({ kind: 'read', scopes: ['exchange'], weight: 4, maxWaitMs: 60_000 }, job('w4'));
    void s.run({ kind: 'read', scopes: ['exchange'], maxWaitMs: 60_000 }, job('w1'));
    await clock.advance(1_005);
    // w6 spends slots 0..500; w4 then fills the window (600..900); w1 waits for w6 to leave it
    expect(sent.map((x) => [x.tag, x.atMs])).toEqual([
      ['w6', 0],
      ['w4', 600],
      ['w1', 1_000 + Math.min(WINDOW_MARGIN_MS, 1_000 / 200)],
    ]);
    // in the window ending now: w4's 4 units and w1's 1
    expect(s.stats().scopes.exchange!.used).toBe(5);
  });

  it('counts the weight in every scope the request spends, and nothing in the others', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 100, windowMs: 60_000 }, exchange: { limit: 1_200, windowMs: 60_000 } });
    void s.run({ kind: 'read', scopes: ['exchange'], weight: 20 }, async () => 'openOrders');
    void s.run({ kind: 'arm', scopes: ['global', 'exchange'], weight: 1 }, async () => 'arm');
    await clock.advance(2_000);
    expect(s.stats().scopes.exchange!.used).toBe(21);
    expect(s.stats().scopes.global!.used).toBe(1);
  });

  it('never exceeds the window in weight, whatever the mix', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { exchange: { limit: 100, windowMs: 1_000 } });
    const sent: Array<{ atMs: number; w: number }> = [];
    const weights = [20, 2, 2, 60, 1, 20, 1, 1, 2, 20];
    for (let i = 0; i < 60; i++) {
      const w = weights[i % weights.length]!;
      void s.run({ ...(i % 3 === 0 ? { kind: 'arm' as const } : { kind: 'read' as const }), scopes: ['exchange'], weight: w, maxWaitMs: 600_000 }, async () => {
        sent.push({ atMs: clock.nowMs(), w });
      });
    }
    await clock.advance(60_000);
    expect(sent.length).toBe(60);
    for (const a of sent) {
      const inWindow = sent.filter((b) => b.atMs > a.atMs - 1_000 && b.atMs <= a.atMs).reduce((n, b) => n + b.w, 0);
      expect(inWindow).toBeLessThanOrEqual(100);
    }
  });

  it('a weighted request counts in the window from its answer, all of its units', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { exchange: { limit: 10, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    void s.run({ kind: 'read', scopes: ['exchange'], weight: 10, maxWaitMs: 60_000 }, () => sleep(clock, 500).then(job('slow')));
    void s.run({ kind: 'read', scopes: ['exchange'], weight: 1, maxWaitMs: 60_000 }, job('next'));
    await clock.advance(5_000);
    expect(sent.map((x) => [x.tag, x.atMs])).toEqual([
      ['slow', 500],
      ['next', 1_505],
    ]);
  });

  it('a weighted read never takes the slot a waiting arm is due in', async () => {
    // 20 units per second (a slot every 50 ms); an arm due every 200 ms on the same scope
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { exchange: { limit: 20, windowMs: 1_000 }, schedule: { limit: 5, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 5; i++) void s.run({ kind: 'arm', scopes: ['exchange', 'schedule'] }, job(`a${i}`));
    // a weight-4 read spends 200 ms of the grid: it fits between two arms only with none due inside it
    for (let i = 0; i < 3; i++) void s.run({ kind: 'read', scopes: ['exchange'], weight: 4, maxWaitMs: 60_000 }, job(`r${i}`));
    await clock.advance(3_000);
    const arms = sent.filter((x) => x.tag.startsWith('a')).map((x) => x.atMs);
    expect(arms).toEqual([0, 200, 400, 600, 800]);
    expect(sent.filter((x) => x.tag.startsWith('r')).length).toBe(3);
  });

  it('a weight above the limit is capped at the limit: it waits for an empty window, never forever', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { exchange: { limit: 10, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    void s.run({ kind: 'read', scopes: ['exchange'], weight: 1, maxWaitMs: 60_000 }, job('one'));
    void s.run({ kind: 'read', scopes: ['exchange'], weight: 60, maxWaitMs: 60_000 }, job('big'));
    await clock.advance(5_000);
    expect(sent.map((x) => x.tag)).toEqual(['one', 'big']);
    expect(sent[1]!.atMs).toBe(1_005);
  });

  it('refuses a weight that is not a positive integer', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { exchange: { limit: 10, windowMs: 1_000 } });
    for (const weight of [0, -1, 1.5, Number.NaN]) {
      await expect(s.run({ kind: 'read', scopes: ['exchange'], weight }, async () => 'x')).rejects.toThrow(RangeError);
    }
  });
});
