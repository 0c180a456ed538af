import { describe, expect, it } from 'vitest';
import { sleep, type Clock } from '../time/clock.js';
import { FakeClock } from '../time/fake-clock.js';
import type { WindowSpec } from './admission.js';
import { ACHIEVED_PLAN_SHARE, ACHIEVED_WINDOW_MS, holdMeter, meterStep, newPaceMeter, paceWindowMs } from './achieved-pace.js';
import { ACHIEVED_PROBE_FACTOR, LIMIT_QUIET_MS, initialLimit, inForceOf, onAchievedQuiet, onAnnounced, onShortfall, probeDueMs, scopeLimitOf, type LimitChange, type LimitState } from './limits.js';
import { RequestScheduler } from './scheduler.js';

describe('the pace meter', () => {
  it('measures a stretch of unbroken pressure, then starts the next one there', () => {
    let m = newPaceMeter();
    m = meterStep(m, true, 1_000, 50, 30_000).meter; // pressed from 1 s, 50 units admitted before
    expect(m).toMatchObject({ fromMs: 1_000, unitsAtFrom: 50 });
    const mid = meterStep(m, true, 30_999, 300, 30_000);
    expect(mid.perSecond).toBeUndefined();
    const done = meterStep(mid.meter, true, 31_000, 290 + 50, 30_000);
    expect(done.perSecond).toBeCloseTo(290 / 30, 9);
    expect(done.meter).toMatchObject({ fromMs: 31_000, unitsAtFrom: 340 });
  });

  it('a pump that finds the scope not pressed breaks the stretch: a shortfall without demand is no limit', () => {
    let m = meterStep(newPaceMeter(), true, 0, 0, 30_000).meter;
    m = meterStep(m, true, 20_000, 100, 30_000).meter;
    m = meterStep(m, false, 20_001, 100, 30_000).meter;
    expect(m.fromMs).toBeNull();
    const again = meterStep(m, true, 25_000, 100, 30_000);
    expect(again.meter.fromMs).toBe(25_000);
    expect(meterStep(again.meter, true, 40_000, 110, 30_000).perSecond).toBeUndefined();
  });

  it('a pump held on another of the arm’s scopes neither presses nor breaks; a stretch held mostly elsewhere is not judged', () => {
    // Held elsewhere at a few pumps: the stretch goes on and is measured.
    let m = meterStep(newPaceMeter(), true, 0, 0, 30_000).meter;
    m = meterStep(m, false, 10_000, 50, 30_000, true).meter;
    expect(m.fromMs).toBe(0);
    m = meterStep(m, true, 20_000, 100, 30_000).meter;
    const done = meterStep(m, true, 30_000, 150, 30_000);
    expect(done.perSecond).toBeCloseTo(5, 9);
    // Nothing starts on a pump held elsewhere.
    expect(meterStep(newPaceMeter(), false, 0, 0, 30_000, true).meter.fromMs).toBeNull();
    // Pressed at its two ends, held elsewhere in between: the other scope held the arms; nothing is measured.
    let e = meterStep(newPaceMeter(), true, 0, 0, 30_000).meter;
    for (let t = 1_000; t < 30_000; t += 1_000) e = meterStep(e, false, t, t / 100, 30_000, true).meter;
    const other = meterStep(e, true, 30_000, 300, 30_000);
    expect(other.perSecond).toBeUndefined();
    expect(other.meter).toMatchObject({ fromMs: 30_000, unitsAtFrom: 300 }); // the next stretch starts there
  });

  it('held: no stretch begins before the hold ends', () => {
    let m = holdMeter(meterStep(newPaceMeter(), true, 0, 0, 30_000).meter, 10_250);
    expect(m.fromMs).toBeNull();
    m = meterStep(m, true, 10_000, 5, 30_000).meter;
    expect(m.fromMs).toBeNull();
    m = meterStep(m, true, 10_250, 5, 30_000).meter;
    expect(m.fromMs).toBe(10_250);
  });

  it('measures 30 s, or 100 of the limit slots on a slow scope', () => {
    expect(paceWindowMs({ limit: 600, windowMs: 60_000 })).toBe(ACHIEVED_WINDOW_MS);
    expect(paceWindowMs({ limit: 60, windowMs: 60_000 })).toBe(100_000);
  });
});

const VENUE: WindowSpec = { limit: 600, windowMs: 60_000 }; // 10/s

describe('the achieved limit (limits.ts)', () => {
  it('a pace short of the margin is in force at once, as `achieved`; one within it changes nothing', () => {
    const l = initialLimit(VENUE, true);
    expect(onShortfall(l, VENUE, 9.7, 0)).toEqual({ state: l });
    const step = onShortfall(l, VENUE, 7.66, 1_000);
    expect(step.change).toEqual({ kind: 'achieved', to: { limit: 459, windowMs: 60_000 } });
    expect(step.state.achieved).toEqual({ measured: { limit: 459, windowMs: 60_000 }, inForce: { limit: 459, windowMs: 60_000 }, nextProbeMs: 1_000 + LIMIT_QUIET_MS });
    expect(scopeLimitOf('schedule_cancel', step.state, VENUE)).toEqual({ scope: 'schedule_cancel', configured: VENUE, inForce: { limit: 459, windowMs: 60_000 }, source: 'achieved' });
    expect(probeDueMs(step.state)).toBe(1_000 + LIMIT_QUIET_MS);
    // Measured against the limit in force: under the achieved 7.65/s, 7.5/s is within the margin.
    expect(onShortfall(step.state, VENUE, 7.5, 2_000).change).toBeUndefined();
    expect(onShortfall(step.state, VENUE, 7, 2_000).change).toEqual({ kind: 'achieved', to: { limit: 420, windowMs: 60_000 } });
  });

  it('a learned limit lower than the achieved one wins; the achieved one is back when the learned one is probed above it', () => {
    let l: LimitState = onShortfall(initialLimit(VENUE, true), VENUE, 5, 0).state; // achieved 300/60 s
    const learned = { limit: 120, windowMs: 60_000 };
    l = onAnnounced(l, VENUE, learned, 0).state;
    expect(scopeLimitOf('s', l, learned)).toMatchObject({ inForce: learned, source: 'learned' });
    expect(inForceOf(l, { limit: 480, windowMs: 60_000 })).toEqual({ limit: 300, windowMs: 60_000 });
    expect(scopeLimitOf('s', l, { limit: 480, windowMs: 60_000 })).toMatchObject({ source: 'achieved' });
  });

  it('probes back up by ACHIEVED_PROBE_FACTOR (gentler than a learned limit) after quiet spells, and gives way to the venue limit', () => {
    expect(ACHIEVED_PROBE_FACTOR).toBe(1.5);
    let l = onShortfall(initialLimit(VENUE, true), VENUE, 2, 0).state; // 120/60 s
    expect(onAchievedQuiet(l, VENUE, LIMIT_QUIET_MS - 1).change).toBeUndefined();
    let step = onAchievedQuiet(l, VENUE, LIMIT_QUIET_MS);
    expect(step.change).toEqual({ kind: 'probed', to: { limit: 180, windowMs: 60_000 } });
    l = step.state;
    expect(l.achieved?.nextProbeMs).toBe(2 * LIMIT_QUIET_MS);
    l = onAchievedQuiet(l, VENUE, 2 * LIMIT_QUIET_MS).state; // 270
    l = onAchievedQuiet(l, VENUE, 3 * LIMIT_QUIET_MS).state; // 405
    step = onAchievedQuiet(l, VENUE, 4 * LIMIT_QUIET_MS); // 607.5 >= 600
    expect(step.change).toEqual({ kind: 'restored', to: VENUE });
    expect(step.state).toMatchObject({ achieved: null, achievedRestoredAtMs: 4 * LIMIT_QUIET_MS });
    expect(probeDueMs(step.state)).toBe(Number.POSITIVE_INFINITY);
    expect(scopeLimitOf('s', step.state, VENUE)).toMatchObject({ inForce: VENUE, source: 'configured' });
  });

  it('a shortfall under a probed limit, or soon after one was given up, doubles the next quiet spell', () => {
    let l = onShortfall(initialLimit(VENUE, true), VENUE, 4, 0).state; // 240
    l = onAchievedQuiet(l, VENUE, LIMIT_QUIET_MS).state; // probed 360
    l = onShortfall(l, VENUE, 4, LIMIT_QUIET_MS + 30_000).state;
    expect(l.achievedQuietMs).toBe(2 * LIMIT_QUIET_MS);
    expect(l.achieved?.nextProbeMs).toBe(LIMIT_QUIET_MS + 30_000 + 2 * LIMIT_QUIET_MS);
    // A lower one measured under the measured one (the cause worse, no probe): the spell restarts, not doubled.
    l = onShortfall(l, VENUE, 3, 2 * LIMIT_QUIET_MS).state;
    expect(l.achievedQuietMs).toBe(2 * LIMIT_QUIET_MS);
    // Given up, then short again within a spell: doubled; long after: a new episode.
    let r = onShortfall(initialLimit(VENUE, true), VENUE, 7, 0).state; // 420: one probe reaches the venue's 600
    r = onAchievedQuiet(r, VENUE, LIMIT_QUIET_MS).state;
    expect(r.achieved).toBeNull();
    expect(onShortfall(r, VENUE, 6, LIMIT_QUIET_MS + 60_000).state.achievedQuietMs).toBe(2 * LIMIT_QUIET_MS);
    expect(onShortfall(r, VENUE, 6, 3 * LIMIT_QUIET_MS).state.achievedQuietMs).toBe(LIMIT_QUIET_MS);
  });
});

/** 10 per second over 10 s windows, global looser: a queue of arms that keeps the scope pressed. */
function pressedScheduler(opts: { answerMs: number | (() => number); arms?: number; global?: WindowSpec; scheduleCancel?: WindowSpec }) {
  const clock = new FakeClock(0);
  const scheduleCancel = opts.scheduleCancel ?? { limit: 100, windowMs: 10_000 };
  const s = new RequestScheduler(clock, { global: opts.global ?? { limit: 1_000, windowMs: 10_000 }, schedule_cancel: scheduleCancel });
  const changes: LimitChange[] = [];
  const at: number[] = [];
  s.onLimitChange((c) => {
    changes.push(c);
    at.push(clock.nowMs());
  });
  let sent = 0;
  const answerMs = typeof opts.answerMs === 'number' ? () => opts.answerMs as number : opts.answerMs;
  for (let i = 0; i < (opts.arms ?? 3_000); i++) {
    void s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['global', 'schedule_cancel'] }, async () => {
      sent++;
      const ms = answerMs();
      if (ms > 0) await sleep(clock, ms);
    }).catch(() => undefined); // what stop() sheds
  }
  return { clock, s, changes, at, sent: () => sent };
}

describe('the scheduler measures each scope’s pace while arms wait for it', () => {
  it('a venue answering in 3 s carries 100 / 13.05 s of a 100-per-10-s window: that pace is in force at the first measure, for the plan, and does not spiral down', async () => {
    const { clock, s, changes, at } = pressedScheduler({ answerMs: 3_000 });
    await clock.advance(ACHIEVED_WINDOW_MS - 1);
    expect(changes).toEqual([]);
    await clock.advance(1_000);
    expect(changes).toHaveLength(1);
    const c = changes[0]!;
    expect(c).toMatchObject({ scope: 'schedule_cancel', kind: 'achieved', source: 'achieved', from: { limit: 100, windowMs: 10_000 } });
    // 100 per 13.05 s: 7.66/s. Counted as answered, so the measure's first 3 s count nothing and
    // its first 10 s the window filling at the full pace: 7.0/s in all.
    expect(c.to.limit).toBeGreaterThanOrEqual(69);
    expect(c.to.limit).toBeLessThan(82);
    expect(s.specOf('schedule_cancel')).toEqual(c.to);
    expect(s.limits()[1]).toEqual({ scope: 'schedule_cancel', configured: { limit: 100, windowMs: 10_000 }, inForce: c.to, source: 'achieved' });
    // Admission still goes by the venue's limit (the keeper sends what it can), so the limit does not
    // spiral down: a later measure may find less (the sends come in bursts of 10 s and gaps of 3 s,
    // so a 30 s measure holds two gaps or three: 7.0 to 8.0/s), never less than that.
    await clock.advance(270_000);
    expect(changes.length, JSON.stringify(changes)).toBeLessThanOrEqual(2);
    for (const x of changes) expect(x.to.limit).toBeGreaterThanOrEqual(69);
    expect(at.at(-1)!).toBeLessThan(120_000);
    s.stop();
  });

  it('relaxed by probes once quiet: the queue gone, the venue limit is back a quiet spell after the last shortfall', async () => {
    const { clock, s, changes, at, sent } = pressedScheduler({ answerMs: 3_000, arms: 500 });
    await clock.advance(100_000); // 500 sent by about 70 s
    expect(sent()).toBe(500);
    expect(changes.map((c) => c.kind)).toEqual(changes.map(() => 'achieved'));
    const lastShortMs = at.at(-1)!;
    await clock.advance(lastShortMs + LIMIT_QUIET_MS - clock.nowMs() - 1);
    expect(changes.every((c) => c.kind === 'achieved')).toBe(true);
    await clock.advance(1);
    expect(changes.at(-1)).toMatchObject({ kind: 'restored', source: 'configured', to: { limit: 100, windowMs: 10_000 } });
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 100, windowMs: 10_000 });
    expect(s.limits()[1]!.source).toBe('configured');
    s.stop();
  });

  it('a capable keeper measures its limit: answers in 0 or 100 ms engage nothing', async () => {
    for (const answerMs of [0, 100]) {
      const { clock, s, changes, sent } = pressedScheduler({ answerMs });
      await clock.advance(200_000);
      expect(sent()).toBeGreaterThan(1_900);
      expect(changes).toEqual([]);
      s.stop();
    }
  });

  it('arms held by another scope do not press this one, and the other one achieves its own limit', async () => {
    const { clock, s, changes } = pressedScheduler({ answerMs: 0, global: { limit: 50, windowMs: 10_000 } });
    await clock.advance(200_000);
    expect(changes).toEqual([]);
    expect(s.limits().map((l) => l.source)).toEqual(['configured', 'configured']);
    s.stop();
  });

  it('a 429 block is the venue’s, not a pace: no achieved limit while the scope is held by one', async () => {
    const { clock, s, changes } = pressedScheduler({ answerMs: 0 });
    for (let t = 0; t < 120_000; t += 10_000) {
      s.blockScope('schedule_cancel', clock.nowMs() + 5_000);
      await clock.advance(10_000);
    }
    expect(changes).toEqual([]);
    s.stop();
  });

  it('a lower limit learned from a 429: the window it inherits is no shortfall', async () => {
    const { clock, s, changes } = pressedScheduler({ answerMs: 0 });
    await clock.advance(20_000);
    s.adoptLimit('schedule_cancel', { limit: 40, windowMs: 10_000 }); // the window holds 100: nothing for 10 s
    await clock.advance(120_000);
    expect(changes.map((c) => [c.kind, c.source])).toEqual([['learned', 'learned']]);
    s.stop();
  });

  it('a stalled event loop (every timer late): 100 ms late measures 98%, nothing engages; 500 ms, the sends sag as the window counts them late; 1.2 s, past the grid’s catch-up, the slots are lost', async () => {
    for (const [lateMs, limitPer10s] of [
      [100, null],
      [500, [85, 96]],
      [1_200, [1, 20]],
    ] as const) {
      const clock = new FakeClock(0);
      // The scheduler's clock with every timer firing lateMs late, as on a loop busy that long.
      const late: Clock = { nowMs: () => clock.nowMs(), monoMs: () => clock.monoMs(), setTimeout: (fn, ms) => clock.setTimeout(fn, ms + lateMs), clearTimeout: (h) => clock.clearTimeout(h) };
      const s = new RequestScheduler(late, { schedule_cancel: { limit: 100, windowMs: 10_000 } });
      const changes: LimitChange[] = [];
      s.onLimitChange((c) => changes.push(c));
      for (let i = 0; i < 3_000; i++) void s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['schedule_cancel'] }, async () => undefined).catch(() => undefined);
      await clock.advance(2 * ACHIEVED_WINDOW_MS);
      const figures = `${lateMs} ms late: ${JSON.stringify(changes)}`;
      if (limitPer10s === null) expect(changes, figures).toEqual([]);
      else {
        expect(changes[0], figures).toMatchObject({ kind: 'achieved', source: 'achieved' });
        expect(changes[0]!.to.limit, figures).toBeGreaterThanOrEqual(limitPer10s[0]);
        expect(changes[0]!.to.limit, figures).toBeLessThanOrEqual(limitPer10s[1]);
      }
      s.stop();
    }
  });
});

describe('overdue re-arms press their scope (a keeper short of CPU: its re-arms late in their timers, none queued)', () => {
  /** A keeper sending `perSecond` arms (all it can), each one reported overdue while `overdue()` says so. */
  async function starved(perSecond: number, seconds: number, overdue: (t: number) => boolean) {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 1_000, windowMs: 10_000 }, schedule_cancel: { limit: 1_000, windowMs: 10_000 } });
    const changes: LimitChange[] = [];
    s.onLimitChange((c) => changes.push(c));
    for (let i = 0; i < perSecond * seconds; i++) {
      await clock.advance(1_000 / perSecond);
      if (overdue(clock.nowMs())) s.pressOverdue('schedule_cancel', 2_000);
      await s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['global', 'schedule_cancel'] }, async () => undefined);
    }
    s.stop();
    return changes;
  }

  it('overdue throughout: the pace it sends at (30/s against a 100/s limit) is in force after one window, as `achieved`', async () => {
    const changes = await starved(30, 40, () => true);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ scope: 'schedule_cancel', kind: 'achieved', source: 'achieved' });
    expect(changes[0]!.to.limit).toBeGreaterThanOrEqual(290);
    expect(changes[0]!.to.limit).toBeLessThanOrEqual(310);
  });

  it('overdue now and then (a GC pause: 2 s in every 10): never a window of unbroken pressure, no limit', async () => {
    expect(await starved(30, 120, (t) => t % 10_000 < 2_000)).toEqual([]);
  });

  it('not overdue: a keeper sending less than its limit because it has less to send is no shortfall', async () => {
    expect(await starved(30, 120, () => false)).toEqual([]);
  });
});

describe('the pace counts what was answered, not what was admitted', () => {
  it('a keeper that times out half of what it sends (its own timeout: reason timeout) achieves half its admissions', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 1_000, windowMs: 10_000 }, schedule_cancel: { limit: 1_000, windowMs: 10_000 } });
    const changes: LimitChange[] = [];
    s.onLimitChange((c) => changes.push(c));
    const timedOut = Object.assign(new Error('no complete answer within 2000 ms'), { reason: 'timeout' });
    const refused = Object.assign(new Error('503'), { reason: 'unavailable' });
    for (let i = 0; i < 30 * 40; i++) {
      await clock.advance(1_000 / 30);
      s.pressOverdue('schedule_cancel', 2_000);
      // every other one times out; a venue refusal is an answer and counts
      const fail = i % 2 === 0 ? timedOut : i % 10 === 1 ? refused : null;
      await s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['global', 'schedule_cancel'] }, async () => {
        if (fail) throw fail;
      }).catch(() => undefined);
    }
    s.stop();
    expect(changes[0]).toMatchObject({ scope: 'schedule_cancel', source: 'achieved' });
    // 15 answered a second of the 30 admitted
    expect(changes[0]!.to.limit).toBeGreaterThanOrEqual(140);
    expect(changes[0]!.to.limit).toBeLessThanOrEqual(160);
  });
});

describe('reads under a pace achieved (a keeper short of CPU): spaced to part of what the plan leaves, not the venue window', () => {
  /** Ten reads queued at once after `overdueS` seconds of arms at 30/s, overdue on global: when each is admitted (ms after queueing). */
  async function readsAfter(overdueS: number): Promise<number[]> {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 1_000, windowMs: 10_000 }, schedule_cancel: { limit: 1_000, windowMs: 10_000 } });
    for (let i = 0; i < 30 * overdueS; i++) {
      await clock.advance(1_000 / 30);
      s.pressOverdue('global', 2_000);
      await s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['global', 'schedule_cancel'] }, async () => undefined);
    }
    const t0 = clock.nowMs();
    const at: number[] = [];
    const reads = Array.from({ length: 10 }, () => s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 60_000 }, async () => void at.push(clock.nowMs() - t0)));
    for (let i = 0; i < 200 && at.length < 10; i++) await clock.advance(100);
    await Promise.all(reads);
    s.stop();
    return at;
  }

  it('30 arms/s achieved against 100/s: reads go one per 1 / (30 x (1 - ACHIEVED_PLAN_SHARE) x 0.5) s; with no pace in force, all at once', async () => {
    const gapMs = 1_000 / (30 * (1 - ACHIEVED_PLAN_SHARE) * 0.5);
    const starved = await readsAfter(40);
    expect(starved).toHaveLength(10);
    for (let i = 1; i < starved.length; i++) expect(starved[i]! - starved[i - 1]!).toBeGreaterThanOrEqual(gapMs - 1);
    const capable = await readsAfter(0);
    expect(capable[capable.length - 1]!).toBeLessThan(500);
  });
});
