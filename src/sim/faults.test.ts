/** Fault bookkeeping: targeting, counts, time spans, precedence, settings and change notification. */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { FaultControl } from './faults.js';

describe('FaultControl', () => {
  it('targets an endpoint and a path family', () => {
    const f = new FaultControl(new FakeClock());
    f.forceStatus(503, { endpoint: 'GET /x' });
    f.forceStatus(500, { path: 'exchange' });
    expect(f.plan('GET /x', 'rest').action).toMatchObject({ status: 503 });
    expect(f.plan('GET /y', 'rest').action).toBeUndefined();
    expect(f.plan('POST /exchange', 'exchange').action).toMatchObject({ status: 500 });
  });

  it('runs down counts and expires time spans on the base clock', async () => {
    const clock = new FakeClock();
    const f = new FaultControl(clock);
    f.forceStatus(500, { count: 2 });
    expect(f.plan('e', 'rest').action).toBeDefined();
    expect(f.plan('e', 'rest').action).toBeDefined();
    expect(f.plan('e', 'rest').action).toBeUndefined();
    f.latency(100, { forMs: 1_000 });
    expect(f.plan('e', 'rest').latencyMs).toBe(100);
    await clock.advance(1_000);
    expect(f.plan('e', 'rest').latencyMs).toBe(0);
    expect(f.snapshot().requestFaults).toEqual([]);
  });

  it('adds latencies; the oldest breaking fault wins and only it is consumed', () => {
    const f = new FaultControl(new FakeClock());
    f.latency(10);
    f.latency(5, { count: 1 });
    f.forceStatus(503, { count: 1 });
    f.resetConnection({ count: 1 });
    const p1 = f.plan('e', 'rest');
    expect(p1.latencyMs).toBe(15);
    expect(p1.action).toMatchObject({ kind: 'status', status: 503 });
    const p2 = f.plan('e', 'rest');
    expect(p2.latencyMs).toBe(10);
    expect(p2.action).toMatchObject({ kind: 'reset' });
    expect(f.plan('e', 'rest').action).toBeUndefined();
  });

  it('removes one fault by id; reset clears all and restores the configured clock offset', () => {
    const f = new FaultControl(new FakeClock(), 3_000);
    const id = f.forceStatus(500);
    f.badBody('html');
    expect(f.remove(id)).toBe(true);
    expect(f.remove(id)).toBe(false);
    expect(f.plan('e', 'rest').action).toMatchObject({ kind: 'body', mode: 'html' });
    f.setClockOffset(-60_000);
    f.setWsSilent(true);
    f.setWsDropEveryMs(5_000);
    f.reset();
    expect(f.snapshot()).toEqual({ clockOffsetMs: 3_000, wsSilent: false, wsDropEveryMs: null, requestFaults: [] });
  });

  it('applies settings through add() and notifies subscribers of setting changes only', () => {
    const f = new FaultControl(new FakeClock());
    let calls = 0;
    const off = f.subscribe(() => calls++);
    expect(f.add({ kind: 'clockOffset', ms: 60_000 })).toBeUndefined();
    expect(f.add({ kind: 'wsDrop', everyMs: 1_000 })).toBeUndefined();
    expect(f.add({ kind: 'wsSilent', on: true })).toBeUndefined();
    expect(f.clockOffsetMs()).toBe(60_000);
    expect(f.wsDropEveryMs()).toBe(1_000);
    expect(f.wsSilent()).toBe(true);
    expect(calls).toBe(3);
    f.forceStatus(500, { count: 5 });
    const before = calls;
    f.plan('e', 'rest');
    expect(calls).toBe(before); // consuming a count is not a settings change
    off();
    f.setWsSilent(false);
    expect(calls).toBe(before);
  });

  it('refuses invalid faults', () => {
    const f = new FaultControl(new FakeClock());
    expect(() => f.forceStatus(200)).toThrow(RangeError);
    expect(() => f.latency(-1)).toThrow(RangeError);
    expect(() => f.forceStatus(500, { count: 0 })).toThrow(RangeError);
    expect(() => f.setWsDropEveryMs(0)).toThrow(RangeError);
  });
});
