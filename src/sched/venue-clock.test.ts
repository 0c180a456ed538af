import { describe, expect, it } from 'vitest';
import { FakeClock } from './fake-clock.js';
import { VenueClock } from './venue-clock.js';

describe('VenueClock', () => {
  it('starts at offset 0 with no estimate', () => {
    const c = new VenueClock(new FakeClock(1_000_000));
    expect(c.hasEstimate()).toBe(false);
    expect(c.nowMs()).toBe(1_000_000);
  });

  it('converges on the true offset from whole-second Date headers', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const trueOffset = 3_417; // venue ahead of us by 3.417 s
    for (let i = 0; i < 40; i++) {
      const send = local.nowMs();
      const venueAtServer = send + 20 + trueOffset; // 20 ms to the server, 20 ms back
      const date = new Date(Math.floor(venueAtServer / 1000) * 1000).toUTCString();
      c.observeDateHeader(date, send, send + 40);
      local.jump(1_137); // requests at a cadence that does not divide a second
    }
    expect(Math.abs(c.current().offsetMs - trueOffset)).toBeLessThanOrEqual(60);
    expect(c.current().uncertaintyMs).toBeLessThanOrEqual(60);
    expect(c.skewSeconds()).toBeCloseTo(-3.417, 1);
  });

  it('uses a millisecond as_of precisely', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const send = local.nowMs();
    c.observeTimestamp(new Date(send + 10 - 60_000).toISOString(), send, send + 20);
    expect(c.current().offsetMs).toBe(-60_000);
    expect(c.current().uncertaintyMs).toBe(10);
  });

  it('restarts from the newest sample when a clock steps', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    let t = local.nowMs();
    c.observeTimestamp(new Date(t).toISOString(), t, t + 2);
    t += 1000;
    c.observeTimestamp(new Date(t + 90_000).toISOString(), t, t + 2);
    expect(c.current().offsetMs).toBeGreaterThan(89_990);
    expect(c.current().samples).toBe(1);
  });

  it('ignores garbage', () => {
    const c = new VenueClock(new FakeClock(0));
    c.observeDateHeader('not a date', 0, 1);
    c.observeTimestamp('', 0, 1);
    c.observe({ sendLocalMs: 10, recvLocalMs: 5, venueLowMs: 0, venueHighMs: 0 });
    expect(c.hasEstimate()).toBe(false);
  });
});
