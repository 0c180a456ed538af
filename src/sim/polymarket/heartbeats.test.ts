import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../time/fake-clock.js';
import { HeartbeatBook, type HeartbeatBookOptions } from './heartbeats.js';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);

function book(clock: FakeClock, extra: Partial<HeartbeatBookOptions> = {}): { hb: HeartbeatBook; cancelled: string[] } {
  const cancelled: string[] = [];
  let n = 0;
  const hb = new HeartbeatBook({
    clock,
    cancelAll: (address) => {
      cancelled.push(address);
      return [`order-of-${address}`];
    },
    newId: () => `id-${++n}`,
    ...extra,
  });
  return { hb, cancelled };
}

describe('HeartbeatBook', () => {
  it('lapses exactly timeout ms after the last accepted beat, once, and only for that user', async () => {
    const clock = new FakeClock();
    const { hb, cancelled } = book(clock);
    const t0 = clock.nowMs();
    expect(hb.beat(A, null)).toEqual({ ok: true, heartbeatId: 'id-1' });
    expect(hb.beat(B, '')).toEqual({ ok: true, heartbeatId: 'id-2' });
    await clock.advance(6_000);
    expect(hb.beat(A, 'id-1')).toEqual({ ok: true, heartbeatId: 'id-3' });
    await clock.advance(3_999);
    expect(cancelled).toEqual([]);
    await clock.advance(1); // B: 10 s after its only beat
    expect(cancelled).toEqual([B]);
    expect(hb.fires()).toEqual([{ address: B, atMs: t0 + 10_000, deadlineMs: t0 + 10_000, lastBeatMs: t0, heartbeatId: 'id-2', cancelledOrderIds: [`order-of-${B}`] }]);
    await clock.advance(5_999);
    expect(cancelled).toEqual([B]);
    await clock.advance(1); // A: 10 s after its beat at 6 s
    expect(hb.fires(A)).toEqual([expect.objectContaining({ atMs: t0 + 16_000, heartbeatId: 'id-3' })]);
    await clock.advance(60_000);
    expect(hb.fires()).toHaveLength(2);
  });

  it('refuses any id but the current one, naming it; after a lapse it names no chain', async () => {
    const clock = new FakeClock();
    const { hb } = book(clock);
    hb.beat(A, null);
    hb.beat(A, 'id-1');
    expect(hb.beat(A, 'id-1')).toEqual({ ok: false, current: 'id-2' });
    expect(hb.beat(A, 'nonsense')).toEqual({ ok: false, current: 'id-2' });
    expect(hb.beat(A, null)).toEqual({ ok: false, current: 'id-2' }); // reject while live (default)
    expect(hb.beat(A, '')).toEqual({ ok: false, current: 'id-2' });
    // A refused beat does not extend the chain.
    await clock.advance(10_000);
    expect(hb.fires(A)).toHaveLength(1);
    expect(hb.beat(A, 'id-2')).toEqual({ ok: false, current: '' });
    expect(hb.beat(B, 'id-2')).toEqual({ ok: false, current: '' }); // never started
  });

  it("'restart' mode: null while live restarts the chain with a new id", () => {
    const clock = new FakeClock();
    const { hb } = book(clock, { nullWhileLive: 'restart' });
    hb.beat(A, null);
    expect(hb.beat(A, null)).toEqual({ ok: true, heartbeatId: 'id-2' });
    expect(hb.beat(A, 'id-1')).toEqual({ ok: false, current: 'id-2' });
  });

  it('a beat arriving at or after the deadline finds the chain lapsed, even when the timer has not run', () => {
    const clock = new FakeClock();
    const { hb, cancelled } = book(clock);
    const t0 = clock.nowMs();
    hb.beat(A, null);
    clock.jump(10_000); // time moves, the timer has not run (a blocked event loop)
    expect(hb.beat(A, 'id-1')).toEqual({ ok: false, current: '' });
    expect(cancelled).toEqual([A]);
    expect(hb.fires(A)).toEqual([expect.objectContaining({ lastBeatMs: t0, deadlineMs: t0 + 10_000, atMs: t0 + 10_000 })]);
  });

  it('a deadline moved later (a held restart) is honoured: the timer waits again instead of firing early', async () => {
    const clock = new FakeClock();
    let extraMs = 0;
    const { hb } = book(clock, { deadline: (last, timeout) => last + timeout + extraMs });
    const t0 = clock.nowMs();
    hb.beat(A, null);
    await clock.advance(5_000);
    extraMs = 30_000;
    await clock.advance(5_000);
    expect(hb.fires()).toEqual([]);
    await clock.advance(29_999);
    expect(hb.fires()).toEqual([]);
    await clock.advance(1);
    expect(hb.fires(A)).toEqual([expect.objectContaining({ lastBeatMs: t0, deadlineMs: t0 + 40_000, atMs: t0 + 40_000 })]);
  });

  it('stop() clears the timers: nothing lapses afterwards', async () => {
    const clock = new FakeClock();
    const { hb } = book(clock);
    hb.beat(A, null);
    hb.stop();
    await clock.advance(20_000);
    expect(clock.pendingTimers()).toBe(0);
    expect(hb.fires()).toEqual([]);
  });

  it('stats: accepted and refused beats, the longest gap within a chain (not across a lapse), live or not', async () => {
    const clock = new FakeClock();
    const { hb } = book(clock);
    expect(hb.stats()).toEqual([]);
    const t0 = clock.nowMs();
    hb.beat(A, null); // id-1
    await clock.advance(4_000);
    hb.beat(A, 'id-1'); // id-2, gap 4 s
    hb.beat(A, 'id-1'); // stale
    await clock.advance(7_000);
    hb.beat(A, 'id-2'); // id-3, gap 7 s
    expect(hb.stats(A)).toEqual([{ address: A, accepted: 3, refused: 1, maxGapMs: 7_000, lastBeatMs: t0 + 11_000, live: true }]);
    await clock.advance(10_000); // lapses
    await clock.advance(30_000);
    hb.beat(A, null); // a new chain: its first beat is no gap
    expect(hb.stats()).toEqual([{ address: A, accepted: 4, refused: 1, maxGapMs: 7_000, lastBeatMs: t0 + 51_000, live: true }]);
    await clock.advance(10_000);
    expect(hb.stats(A.toUpperCase().replace('0X', '0x'))[0]?.live).toBe(false);
    expect(hb.stats(B)).toEqual([]);
  });
});
