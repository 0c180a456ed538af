import { describe, expect, it } from 'vitest';
import { FakeClock } from './fake-clock.js';
import { FORWARD_CONFIRM, STEP_BACK_MIN_SPAN_MS, STEP_CONFIRM, VenueClock, type ClockStep } from './venue-clock.js';

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

  it('at 100 responses a second the estimate stays within a few ms instead of wandering', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1) + 123);
    const c = new VenueClock(local);
    const seen: number[] = [];
    for (let i = 0; i < 6_000; i++) {
      const send = local.nowMs();
      c.observeDateHeader(new Date(Math.floor((send + 3) / 1000) * 1000).toUTCString(), send, send + 6);
      local.jump(10 + (i % 7)); // ~80 to 100 responses a second
      if (i > 2_000) seen.push(c.current().offsetMs);
    }
    expect(Math.max(...seen.map(Math.abs))).toBeLessThanOrEqual(25);
  });

  it('uses a millisecond as_of precisely', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const send = local.nowMs();
    c.observeTimestamp(new Date(send + 10 - 60_000).toISOString(), send, send + 20);
    expect(c.current().offsetMs).toBe(-60_000);
    expect(c.current().uncertaintyMs).toBe(10);
  });

  it('one stale Date header among agreeing samples does not move the estimate', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const sample = (staleSecond = false) => {
      const send = local.nowMs();
      const atServer = send + 2; // true offset 0, 2 ms each way
      const second = Math.floor(atServer / 1000) * 1000 - (staleSecond ? 1000 : 0);
      c.observeDateHeader(new Date(second).toUTCString(), send, send + 4);
      local.jump(293);
    };
    for (let i = 0; i < 40; i++) sample();
    const settled = c.current().offsetMs;
    expect(Math.abs(settled)).toBeLessThanOrEqual(20);
    local.jump(1_000 - (local.nowMs() % 1000) + 30); // 30 ms past a second boundary
    sample(true); // the server was busy: its cached Date string is still the previous second
    expect(c.current().offsetMs).toBe(settled);
    for (let i = 0; i < 10; i++) sample();
    expect(Math.abs(c.current().offsetMs)).toBeLessThanOrEqual(20);
  });

  it('a step forward is taken once FORWARD_CONFIRM samples show it, and reported', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const steps: ClockStep[] = [];
    c.onStep((e) => steps.push(e));
    let t = local.nowMs();
    for (let i = 0; i < 20; i++, t += 1000) c.observeTimestamp(new Date(t).toISOString(), t, t + 2);
    expect(Math.abs(c.current().offsetMs)).toBeLessThanOrEqual(2);
    for (let i = 1; i < FORWARD_CONFIRM; i++, t += 1000) c.observeTimestamp(new Date(t + 90_000).toISOString(), t, t + 2);
    expect(Math.abs(c.current().offsetMs)).toBeLessThanOrEqual(2); // one witness: could be a foreign clock
    c.observeTimestamp(new Date(t + 90_000).toISOString(), t, t + 2);
    expect(c.current().offsetMs).toBeGreaterThan(89_990);
    expect(c.current().samples).toBe(FORWARD_CONFIRM);
    expect(steps).toHaveLength(1);
    expect(steps[0]!.deltaMs).toBeGreaterThan(89_990);
    expect(c.stats().forwardSteps).toBe(1);
  });

  it('a foreign first sample, then a burst of the venue\'s own answers within 250 ms: corrected at once', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const t = local.monoMs();
    c.observeDateHeader(new Date(t).toUTCString(), t, t + 4); // a proxy's page with the host's clock
    for (let i = 1; i <= FORWARD_CONFIRM; i++) c.observeDateHeader(new Date(t + 30_000 + 10 * i).toUTCString(), t + 10 * i, t + 10 * i + 4);
    expect(c.current().offsetMs).toBeGreaterThan(29_000);
  });

  it('one answer 30 s behind (a proxy stamping host time) never moves venue time back', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const steps: ClockStep[] = [];
    c.onStep((e) => steps.push(e));
    for (let i = 0; i < 20; i++) {
      const t = local.monoMs();
      c.observeDateHeader(new Date(Math.floor((t + 30_002) / 1000) * 1000).toUTCString(), t, t + 4);
      local.jump(1_000);
    }
    const settled = c.current().offsetMs;
    expect(Math.abs(settled - 30_000)).toBeLessThanOrEqual(500);
    const before = c.nowMs();
    for (let i = 0; i < STEP_CONFIRM - 1; i++) {
      const t = local.monoMs();
      c.observeDateHeader(new Date(t).toUTCString(), t, t + 4);
      expect(c.nowMs()).toBeGreaterThanOrEqual(before);
      expect(c.current().offsetMs).toBe(settled);
      local.jump(1_000);
    }
    expect(steps).toEqual([]);
    expect(c.stats().samplesOutvoted).toBe(STEP_CONFIRM - 1);
  });

  it('a burst of stale answers within STEP_BACK_MIN_SPAN_MS is one witness, not a step', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    let t = local.nowMs();
    for (let i = 0; i < 20; i++, t += 1000) c.observeTimestamp(new Date(t).toISOString(), t, t + 2);
    const gap = Math.floor(STEP_BACK_MIN_SPAN_MS / (2 * STEP_CONFIRM));
    for (let i = 0; i < STEP_CONFIRM; i++, t += gap) c.observeTimestamp(new Date(t - 30_000).toISOString(), t, t + 2);
    expect(Math.abs(c.current().offsetMs)).toBeLessThanOrEqual(2);
    expect(c.stats().backwardSteps).toBe(0);
  });

  it('a corroborated step back of 30 s is taken, reported and counted', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    const steps: ClockStep[] = [];
    c.onStep((e) => steps.push(e));
    let t = local.nowMs();
    for (let i = 0; i < 20; i++, t += 1000) c.observeTimestamp(new Date(t).toISOString(), t, t + 2);
    for (let i = 0; i < STEP_CONFIRM; i++, t += 1000) c.observeTimestamp(new Date(t - 30_000).toISOString(), t, t + 2);
    expect(c.current().offsetMs).toBeLessThan(-29_990);
    expect(steps.map((e) => Math.round(e.deltaMs / 1000))).toEqual([-30]);
    expect(c.stats().backwardSteps).toBe(1);
  });

  it('a step of the host wall clock changes neither the estimate nor venue time', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    let t = local.monoMs();
    for (let i = 0; i < 20; i++, t += 1000) c.observeTimestamp(new Date(t + 5_000).toISOString(), t, t + 2);
    const venueBefore = c.nowMs();
    const skewBefore = c.skewSeconds();
    local.stepWall(-45_000);
    expect(c.nowMs()).toBe(venueBefore);
    expect(c.skewSeconds()).toBeCloseTo(skewBefore - 45, 3);
  });

  it('a small correction back holds venue time still instead of reversing it', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local, { maxSamples: 2 });
    let t = local.monoMs();
    c.observeTimestamp(new Date(t + 400).toISOString(), t, t + 2); // the only sample, 400 ms ahead
    const read = c.nowMs();
    t += 1000;
    c.observeTimestamp(new Date(t).toISOString(), t, t + 2);
    t += 1000;
    c.observeTimestamp(new Date(t).toISOString(), t, t + 2); // the 400 ms sample is gone: offset ~0
    expect(c.current().offsetMs).toBeLessThan(100);
    expect(c.nowMs()).toBeGreaterThanOrEqual(read);
  });

  it('a small step back (under a second) needs STEP_CONFIRM samples that agree with each other', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const c = new VenueClock(local);
    let t = local.nowMs();
    for (let i = 0; i < 20; i++, t += 1000) c.observeTimestamp(new Date(t).toISOString(), t, t + 2);
    for (let i = 0; i < STEP_CONFIRM - 1; i++, t += 1000) c.observeTimestamp(new Date(t - 700).toISOString(), t, t + 2);
    expect(Math.abs(c.current().offsetMs)).toBeLessThanOrEqual(2); // not yet: could be a stale answer
    c.observeTimestamp(new Date(t - 700).toISOString(), t, t + 2);
    expect(c.current().offsetMs).toBeLessThan(-690);
    expect(c.current().samples).toBe(STEP_CONFIRM);
  });

  it('ignores garbage', () => {
    const c = new VenueClock(new FakeClock(0));
    c.observeDateHeader('not a date', 0, 1);
    c.observeTimestamp('', 0, 1);
    c.observe({ sendLocalMs: 10, recvLocalMs: 5, venueLowMs: 0, venueHighMs: 0 });
    expect(c.hasEstimate()).toBe(false);
  });
});
