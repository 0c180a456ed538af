import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { LIMIT_QUIET_MS, type LimitChange } from './limits.js';
import { RequestScheduler, ShedError, type AdmissionWait } from './scheduler.js';
import { WINDOW_MARGIN_MS } from './admission.js';
import { recorder } from './test-support.js';
import { sleep } from '../time/clock.js';


describe('RequestScheduler', () => {
  it('spreads a queue evenly at the budgeted rate: no burst', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 60, windowMs: 60_000 }, schedule_cancel: { limit: 30, windowMs: 60_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 10; i++) void s.run({ kind: 'arm', scopes: ['global', 'schedule_cancel'] }, job(`a${i}`));
    await clock.advance(60_000);
    expect(sent.map((x) => x.atMs)).toEqual([0, 2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000, 18000]);
  });

  it('tells each request where its wait went: the scope that held it, the 429, and who went ahead', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 600, windowMs: 60_000 }, schedule_cancel: { limit: 60, windowMs: 60_000 } });
    const waits = new Map<string, AdmissionWait>();
    const run = (tag: string, deadlineVenueMs: number) =>
      void s.run({ kind: 'arm', deadlineVenueMs, scopes: ['global', 'schedule_cancel'], onAdmitted: (w) => waits.set(tag, w) }, async () => tag);
    run('first', 5); // goes at once
    run('late', 9); // queued at t=0, behind the two more urgent ones below
    run('urgent1', 1);
    run('urgent2', 2);
    await clock.advance(10_000);
    expect(waits.get('first')).toEqual({ waitedMs: 0, heldBy: null, wentAhead: 0 });
    expect(waits.get('urgent1')).toEqual({ waitedMs: 1_000, heldBy: 'schedule_cancel', wentAhead: 0 });
    expect(waits.get('late')).toEqual({ waitedMs: 3_000, heldBy: 'schedule_cancel', wentAhead: 2 });
    // a venue block names itself
    s.blockScope('schedule_cancel', clock.nowMs() + 5_000);
    run('blocked', 1);
    await clock.advance(10_000);
    expect(waits.get('blocked')?.heldBy).toBe('schedule_cancel:429');
    expect(waits.get('blocked')?.waitedMs).toBeGreaterThanOrEqual(5_000);
  });

  it('never exceeds the window, whatever the arrival pattern', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 5, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 50; i++) void s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 60_000 }, job(`r${i}`));
    await clock.advance(20_000);
    expect(sent.length).toBe(50);
    for (const a of sent) {
      const inWindow = sent.filter((b) => b.atMs > a.atMs - 1_000 && b.atMs <= a.atMs).length;
      expect(inWindow).toBeLessThanOrEqual(5);
    }
  });

  it('counts requests held back by our own budget, once each, and not those held by a 429 block', async () => {
    const clock = new FakeClock(0);
    let throttled = 0;
    const s = new RequestScheduler(clock, { global: { limit: 1, windowMs: 1_000 }, other: { limit: 100, windowMs: 1_000 } }, { onThrottled: () => throttled++ });
    const { job } = recorder(clock);
    for (let i = 0; i < 3; i++) void s.run({ kind: 'arm', scopes: ['global'] }, job(`a${i}`));
    s.blockScope('other', 5_000);
    void s.run({ kind: 'arm', scopes: ['other'] }, job('blocked'));
    await clock.advance(10_000);
    expect(throttled).toBe(2);
  });

  it('arms go before reads, most urgent arm first', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 1, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    void s.run({ kind: 'read', scopes: ['global'] }, job('read-first'));
    void s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 60_000 }, job('read'));
    void s.run({ kind: 'arm', deadlineVenueMs: 500, scopes: ['global'] }, job('arm-late-deadline'));
    void s.run({ kind: 'arm', deadlineVenueMs: 100, scopes: ['global'] }, job('arm-urgent'));
    await clock.advance(10_000);
    expect(sent.map((x) => x.tag)).toEqual(['read-first', 'arm-urgent', 'arm-late-deadline', 'read']);
  });

  it('a cancel-soon arm goes by the venue time it was queued: ahead of re-arms due later, behind arms with none to protect', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 1, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    void s.run({ kind: 'read', scopes: ['global'] }, job('read-first'));
    void s.run({ kind: 'arm', deadlineVenueMs: 1_000_500, scopes: ['global'] }, job('rearm-due-later'));
    void s.run({ kind: 'arm', deadlineVenueMs: 999_000, scopes: ['global'] }, job('rearm-due-earlier'));
    void s.run({ kind: 'arm', urgency: 'cancel_soon', queuedVenueMs: 1_000_000, scopes: ['global'] }, job('cancel-soon'));
    void s.run({ kind: 'arm', scopes: ['global'] }, job('first-arm'));
    await clock.advance(10_000);
    expect(sent.map((x) => x.tag)).toEqual(['read-first', 'first-arm', 'rearm-due-earlier', 'cancel-soon', 'rearm-due-later']);
  });

  it('obeys a 429 block on a scope to the millisecond, and only on that scope', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, {
      global: { limit: 1000, windowMs: 1_000 },
      schedule_cancel: { limit: 1000, windowMs: 1_000 },
      exchange: { limit: 1000, windowMs: 1_000 },
    });
    const { sent, job } = recorder(clock);
    s.blockScope('schedule_cancel', 7_000);
    void s.run({ kind: 'arm', scopes: ['global', 'schedule_cancel'] }, job('rest-arm'));
    void s.run({ kind: 'arm', scopes: ['exchange'] }, job('exchange-arm'));
    void s.run({ kind: 'read', scopes: ['global'] }, job('read'));
    await clock.advance(6_999);
    expect(sent.map((x) => x.tag)).toEqual(['exchange-arm', 'read']);
    await clock.advance(1);
    expect(sent.map((x) => x.tag)).toEqual(['exchange-arm', 'read', 'rest-arm']);
    expect(sent[2]!.atMs).toBe(7_000);
  });

  it('adopts a tighter announced limit', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 100, windowMs: 1_000 } });
    s.adoptLimit('global', { limit: 2, windowMs: 1_000 });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 4; i++) void s.run({ kind: 'arm', scopes: ['global'] }, job(`a${i}`));
    await clock.advance(5_000);
    expect(sent.map((x) => x.atMs)).toEqual([0, 500, 1005, 1505]); // the window counts 5 ms longer (spanMs)
    s.adoptLimit('global', { limit: 500, windowMs: 1_000 }); // looser: ignored
    expect(s.specOf('global')!.limit).toBe(2);
  });

  it('learned limits: held while the venue keeps refusing, probed back after quiet spells, re-learned by a new 429', async () => {
    const clock = new FakeClock(0);
    const changes: LimitChange[] = [];
    const s = new RequestScheduler(clock, { global: { limit: 2_400, windowMs: 60_000 }, schedule_cancel: { limit: 1_200, windowMs: 60_000 } });
    s.onLimitChange((c) => changes.push(c));
    const configured = { limit: 1_200, windowMs: 60_000 };
    expect(s.limits()).toEqual([
      { scope: 'global', configured: { limit: 2_400, windowMs: 60_000 }, inForce: { limit: 2_400, windowMs: 60_000 }, source: 'configured' },
      { scope: 'schedule_cancel', configured, inForce: configured, source: 'configured' },
    ]);
    // A storm: 429s announcing 10 per 10 s, for 3 s.
    for (let t = 0; t < 3; t++) {
      s.blockScope('schedule_cancel', clock.nowMs() + 2_000);
      s.adoptLimit('schedule_cancel', { limit: 10, windowMs: 10_000 });
      await clock.advance(1_000);
    }
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 10, windowMs: 10_000 });
    expect(s.limits()[1]).toEqual({ scope: 'schedule_cancel', configured, inForce: { limit: 10, windowMs: 10_000 }, source: 'learned' });
    expect(changes).toEqual([{ scope: 'schedule_cancel', kind: 'learned', from: configured, to: { limit: 10, windowMs: 10_000 }, configured, source: 'learned' }]);
    // Refused again 50 s later (a 429 without numbers): the quiet spell starts again.
    await clock.advance(50_000);
    s.blockScope('schedule_cancel', clock.nowMs() + 1_000);
    await clock.advance(LIMIT_QUIET_MS - 1);
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 10, windowMs: 10_000 });
    await clock.advance(1);
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 20, windowMs: 10_000 });
    expect(changes.at(-1)).toMatchObject({ kind: 'probed', source: 'learned' });
    // Each step after another quiet spell: 2/s -> 4/s -> 8/s -> 16/s -> the configured 20/s.
    for (const limit of [40, 80, 160]) {
      await clock.advance(LIMIT_QUIET_MS);
      expect(s.specOf('schedule_cancel')).toEqual({ limit, windowMs: 10_000 });
    }
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('schedule_cancel')).toEqual(configured);
    expect(changes.at(-1)).toEqual({ scope: 'schedule_cancel', kind: 'restored', from: { limit: 160, windowMs: 10_000 }, to: configured, configured, source: 'configured' });
    expect(s.limits()[1]!.source).toBe('configured');
    // A new 429 re-learns at once.
    s.adoptLimit('schedule_cancel', { limit: 5, windowMs: 10_000 });
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 5, windowMs: 10_000 });
    s.stop();
  });

  it('a 429 refusing a probed limit sends it back to the announced one', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { schedule_cancel: { limit: 1_200, windowMs: 60_000 } });
    s.adoptLimit('schedule_cancel', { limit: 10, windowMs: 10_000 });
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 20, windowMs: 10_000 });
    s.blockScope('schedule_cancel', clock.nowMs() + 1_000); // no numbers in the 429
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 10, windowMs: 10_000 });
    // The refused probe doubles the next quiet spell.
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 10, windowMs: 10_000 });
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('schedule_cancel')).toEqual({ limit: 20, windowMs: 10_000 });
    s.stop();
  });

  it('a refusal soon after a probe restored the configured limit doubles the next quiet spell; a late one starts afresh', async () => {
    const clock = new FakeClock(0);
    const configured = { limit: 40, windowMs: 10_000 };
    const s = new RequestScheduler(clock, { global: configured });
    s.adoptLimit('global', { limit: 20, windowMs: 10_000 });
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('global')).toEqual(configured); // 2 x 20 = 40: restored
    await clock.advance(1_000);
    s.adoptLimit('global', { limit: 20, windowMs: 10_000 }); // the venue still means 20
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('global')).toEqual({ limit: 20, windowMs: 10_000 });
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('global')).toEqual(configured);
    // Long after: a new episode, the first spell again.
    await clock.advance(3 * LIMIT_QUIET_MS);
    s.adoptLimit('global', { limit: 20, windowMs: 10_000 });
    await clock.advance(LIMIT_QUIET_MS);
    expect(s.specOf('global')).toEqual(configured);
    s.stop();
  });

  it('estimates when a request queued now would be admitted: the scope held, and the arms ahead of it', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 600, windowMs: 60_000 }, schedule_cancel: { limit: 60, windowMs: 60_000 } });
    const rest = { kind: 'arm' as const, scopes: ['global', 'schedule_cancel'] };
    expect(s.estimateAdmitMs({ ...rest, deadlineVenueMs: 50 })).toBe(0);
    const { job } = recorder(clock);
    // Still queued when the test stops the scheduler: that rejection is expected, not unhandled.
    for (let i = 0; i < 4; i++) s.run({ ...rest, deadlineVenueMs: 100 }, job(`a${i}`)).catch(() => undefined);
    // one admitted at 0, three queued a second apart
    expect(s.estimateAdmitMs({ ...rest, deadlineVenueMs: 50 })).toBe(1_000);
    expect(s.estimateAdmitMs({ ...rest, deadlineVenueMs: 200 })).toBe(4_000);
    s.blockScope('schedule_cancel', 10_000);
    expect(s.estimateAdmitMs({ ...rest, deadlineVenueMs: 50 })).toBe(10_000);
    // the exchange route shares only the global scope (100 ms slots) with them
    expect(s.estimateAdmitMs({ kind: 'arm', deadlineVenueMs: 50, scopes: ['global', 'exchange'] })).toBe(100);
    s.stop();
  });

  it('sheds reads that waited too long', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 1, windowMs: 10_000 } });
    const { job } = recorder(clock);
    const first = s.run({ kind: 'read', scopes: ['global'] }, job('ok'));
    const second = s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 3_000 }, job('late'));
    const secondResult = second.then(() => 'sent', (e: unknown) => e);
    await clock.advance(5_000);
    await expect(first).resolves.toBe('ok');
    expect(await secondResult).toBeInstanceOf(ShedError);
    expect(s.stats().shed).toBe(1);
  });

  it('start-up pacing: admissions of a previous instance still in the window hold back a new one', async () => {
    const clock = new FakeClock(100_000);
    const first = new RequestScheduler(clock, { schedule_cancel: { limit: 3, windowMs: 60_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 3; i++) void first.run({ kind: 'arm', scopes: ['schedule_cancel'] }, job(`a${i}`));
    await clock.advance(45_000);
    const saved = first.exportRecent();
    first.stop();
    // Counted per second, at the second's end: the three went 20 s apart (3 a minute), from 100 s.
    expect(saved.schedule_cancel).toEqual([[100_000, 1], [120_000, 1], [140_000, 1]]);
    await clock.advance(1_000); // restart
    const second = new RequestScheduler(clock, { schedule_cancel: { limit: 3, windowMs: 60_000 } });
    second.importRecent(saved);
    void second.run({ kind: 'arm', scopes: ['schedule_cancel'] }, job('after-restart'));
    await clock.advance(60_000);
    const after = sent.find((x) => x.tag === 'after-restart')!;
    // the oldest of the three left the window 60 s after it was sent (at 100 s), plus the margin
    // for arrival jitter (WINDOW_MARGIN_MS)
    expect(after.atMs).toBe(160_000 + WINDOW_MARGIN_MS);
  });

  it('a window carried over is counted per second at its end: a restart never sends sooner than the window allows, and a count past the limit is the limit', async () => {
    const clock = new FakeClock(100_300);
    const first = new RequestScheduler(clock, { schedule_cancel: { limit: 2, windowMs: 10_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 2; i++) void first.run({ kind: 'arm', scopes: ['schedule_cancel'] }, job(`a${i}`));
    await clock.advance(6_200);
    const saved = first.exportRecent();
    first.stop();
    // at 100.3 s and 105.3 s, counted at 101 s and 106 s
    expect(saved.schedule_cancel).toEqual([[101_000, 1], [106_000, 1]]);
    await clock.advance(1_000);
    const second = new RequestScheduler(clock, { schedule_cancel: { limit: 2, windowMs: 10_000 } });
    second.importRecent(saved);
    void second.run({ kind: 'arm', scopes: ['schedule_cancel'] }, job('after-restart'));
    await clock.advance(20_000);
    // the venue's window frees at 110.3 s (plus the margin); the count's, at 111 s (plus the margin): the later
    expect(sent.find((x) => x.tag === 'after-restart')!.atMs).toBe(111_000 + 50);
    const third = new RequestScheduler(clock, { schedule_cancel: { limit: 2, windowMs: 10_000 } });
    third.importRecent({ schedule_cancel: [[clock.nowMs(), 1e9]] });
    expect(third.stats().scopes.schedule_cancel!.used).toBe(2);
  });

  it('reads use the spare room of a shared scope but never push a waiting arm later', async () => {
    // global allows a request every 5 ms, schedule_cancel an arm every 10 ms
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 200, windowMs: 1_000 }, schedule_cancel: { limit: 100, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 20; i++) void s.run({ kind: 'arm', scopes: ['global', 'schedule_cancel'] }, job(`a${i}`));
    for (let i = 0; i < 100; i++) void s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 60_000 }, job(`r${i}`));
    // timers fire late, as they do on a busy event loop: 1 to 3 ms
    for (let t = 0; t < 2_000; t += 1 + (t % 3)) await clock.advance(1 + (t % 3));
    const arms = sent.filter((x) => x.tag.startsWith('a')).map((x) => x.atMs);
    expect(arms.length).toBe(20);
    // every arm within one timer delay of its slot (10 ms apart): no drift from the reads
    arms.forEach((at, i) => expect(at - i * 10, `arm ${i}`).toBeLessThanOrEqual(3));
    // and the reads did get the room between the arms
    expect(sent.filter((x) => x.tag.startsWith('r') && x.atMs < 200).length).toBeGreaterThanOrEqual(15);
  });

  it('a read that fits between two arms on one scope but not before the next arm waits for it', async () => {
    // global: a request every 8 ms; arms every 10 ms. A read at 8 ms would push the arm due at
    // 10 ms to 16 ms, and every later one with it.
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 125, windowMs: 1_000 }, schedule_cancel: { limit: 100, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 20; i++) void s.run({ kind: 'arm', scopes: ['global', 'schedule_cancel'] }, job(`a${i}`));
    for (let i = 0; i < 10; i++) void s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 60_000 }, job(`r${i}`));
    await clock.advance(1_000);
    expect(sent.filter((x) => x.tag.startsWith('a')).map((x) => x.atMs)).toEqual(Array.from({ length: 20 }, (_, i) => i * 10));
    expect(sent.filter((x) => x.tag.startsWith('r')).length).toBe(10);
  });

  it('reads wait while re-arms are overdue (a keeper short of CPU), and go when they no longer are', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 100, windowMs: 1_000 }, schedule_cancel: { limit: 100, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    s.pressOverdue('schedule_cancel', 2_000);
    void s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 60_000 }, job('r'));
    void s.run({ kind: 'arm', scopes: ['global', 'schedule_cancel'] }, job('a'));
    await clock.advance(1_999);
    expect(sent.map((x) => x.tag)).toEqual(['a']);
    await clock.advance(1);
    expect(sent.map((x) => x.tag)).toEqual(['a', 'r']);
    // A read that waits past its max wait while they stay overdue is shed, as always.
    s.pressOverdue('schedule_cancel', 10_000);
    const shed = s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 1_000 }, job('r2')).then(
      () => 'sent',
      (e: unknown) => e,
    );
    await clock.advance(1_500);
    expect(await shed).toBeInstanceOf(ShedError);
  });

  it('after an event-loop stall the queue catches up its slots instead of losing them', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { schedule_cancel: { limit: 100, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 30; i++) void s.run({ kind: 'arm', scopes: ['schedule_cancel'] }, job(`a${i}`));
    await clock.advance(95);
    expect(sent.length).toBe(10); // 0, 10, ..., 90
    clock.jump(60); // the loop was blocked: no timer ran from 95 to 155
    await clock.advance(0);
    // slots 100 to 150 are taken late, at once; then the grid goes on at 160, 170, ...
    expect(sent.length).toBe(16);
    await clock.advance(200);
    expect(sent.length).toBe(30);
    expect(sent.at(-1)!.atMs).toBe(290); // as if there had been no stall
    for (const a of sent) expect(sent.filter((b) => b.atMs > a.atMs - 1_000 && b.atMs <= a.atMs).length).toBeLessThanOrEqual(100);
  });

  it('catches up a stall of a full collection (500 ms), not only one of 10 slots', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { schedule_cancel: { limit: 12_000, windowMs: 60_000 } }); // 200/s, 5 ms slots
    const { sent, job } = recorder(clock);
    for (let i = 0; i < 400; i++) void s.run({ kind: 'arm', scopes: ['schedule_cancel'] }, job(`a${i}`));
    await clock.advance(98);
    expect(sent.length).toBe(20); // 0, 5, ..., 95
    clock.jump(500); // the loop was blocked from 98 to 598
    await clock.advance(1_400);
    // every slot kept: the 400th goes at 1,995 ms, as if there had been no stall
    expect(sent.length).toBe(400);
    expect(sent.at(-1)!.atMs).toBe(1_995);
  });

  it('a request counts in the window from its answer, not only from its admission', async () => {
    // The venue may see a request long after we admitted it (a busy loop signs and writes late).
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { schedule_cancel: { limit: 1, windowMs: 1_000 } });
    const { sent, job } = recorder(clock);
    void s.run({ kind: 'arm', scopes: ['schedule_cancel'] }, () => sleep(clock, 500).then(job('slow')));
    void s.run({ kind: 'arm', scopes: ['schedule_cancel'] }, job('next'));
    await clock.advance(5_000);
    // slow: admitted at 0, answered at 500; next waits a window (plus its margin) after 500
    expect(sent.map((x) => [x.tag, x.atMs])).toEqual([['slow', 500], ['next', 1_505]]);
  });

  // Found at 50,000 accounts with two busy loops (2026-12-04, 8dc2727; issue 36, item 1): a
  // backlog of re-arms from t = 285 to 355 s (13,136 over 1 s late, up to 31 s), held by
  // schedule_cancel 12,661 times and by global 475 times, spread over the whole backlog, sent at
  // 189/s of the 194 planned, and no pace was ever measured: each pump that found the head arm
  // waiting on global broke schedule_cancel's stretch. Such a pump is now neutral for the arm's
  // other scopes (achieved-pace.ts meterStep). Pressing every scope of a waiting arm also made this
  // hold, and gave a roomy global a false shortfall in four tests of achieved-pace.test.ts.
  // Here the answers take 4 s (each request counts in its window until answered), so 100 per
  // 10 s carries 7.1 arms/s, and every 10 s a burst of reads fills global for a moment.
  it('arms held now by their own scope, now by the shared global one: the pace they achieve is measured across both, and is a limit in force', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 120, windowMs: 10_000 }, schedule_cancel: { limit: 100, windowMs: 10_000 } });
    const heldBy = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      void s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['global', 'schedule_cancel'], onAdmitted: (w) => w.heldBy && heldBy.add(w.heldBy) }, () => sleep(clock, 4_000)).catch(() => undefined);
    }
    const achieved = () => s.limits().find((l) => l.scope === 'schedule_cancel' && l.source === 'achieved');
    let engagedMs: number | null = null;
    for (let t = 0; t < 120_000 && engagedMs === null; t += 500) {
      if (t % 10_000 === 0) for (let r = 0; r < 40; r++) void s.run({ kind: 'read', scopes: ['global'], maxWaitMs: 60_000 }, async () => 'read').catch(() => undefined);
      await clock.advance(500);
      if (achieved()) engagedMs = clock.nowMs();
    }
    expect([...heldBy].sort()).toEqual(['global', 'schedule_cancel']); // both held the arms
    // One stretch of 30 s, begun once the first window filled: engaged within the second minute.
    expect(engagedMs).not.toBeNull();
    expect(engagedMs!).toBeLessThanOrEqual(60_000);
    // At the pace that went out, not at the venue's limit.
    expect(achieved()!.inForce.limit / (achieved()!.inForce.windowMs / 1000)).toBeLessThan(0.97 * 10);
    s.stop();
  });

  it('under a pace achieved, first arms fill a window only to the usable share of that pace, not of the venue limit; a clear is not held', async () => {
    // Re-arms answered 4 s after they go: the window counts each until then, so about 7 a second go
    // of 10, and that pace comes into force. First arms queued after it keep to 97% of it, held by it.
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { schedule_cancel: { limit: 100, windowMs: 10_000 } });
    for (let i = 0; i < 800; i++) void s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['schedule_cancel'] }, () => sleep(clock, 4_000)).catch(() => undefined);
    const achieved = () => s.limits().find((l) => l.scope === 'schedule_cancel' && l.source === 'achieved');
    for (let t = 0; t < 100_000 && !achieved(); t += 500) await clock.advance(500);
    const inForce = achieved()?.inForce;
    expect(inForce).toBeDefined();
    expect(inForce!.windowMs).toBe(10_000);
    expect(inForce!.limit).toBeLessThan(97);
    // the re-arms drain, and their last answers leave the window
    let answered = 0;
    while (answered < 800) {
      await clock.advance(1_000);
      answered = 800 - s.queuedOn('schedule_cancel');
    }
    await clock.advance(15_000);
    const firsts: number[] = [];
    const waits: AdmissionWait[] = [];
    for (let i = 0; i < 300; i++) void s.run({ kind: 'arm', urgency: 'first', scopes: ['schedule_cancel'], onAdmitted: (w) => waits.push(w) }, async () => firsts.push(clock.nowMs())).catch(() => undefined);
    // a clear (no class of its own) is not held to the pace: shutdown must not wait for it
    let clearedAtMs: number | null = null;
    void s.run({ kind: 'arm', scopes: ['schedule_cancel'] }, async () => (clearedAtMs = clock.nowMs())).catch(() => undefined);
    const from = clock.nowMs();
    await clock.advance(20_000);
    expect(achieved()).toBeDefined(); // still in force
    const inFirstWindow = firsts.filter((t) => t < from + 10_000).length;
    expect(inFirstWindow).toBeLessThanOrEqual(Math.round(0.97 * inForce!.limit));
    expect(inFirstWindow).toBeGreaterThan(Math.round(0.97 * inForce!.limit) - 10);
    expect(waits.some((w) => w.heldBy === 'schedule_cancel:achieved')).toBe(true);
    expect(clearedAtMs).not.toBeNull();
    expect(clearedAtMs!).toBeLessThan(from + 10_000);
    s.stop();
  });

  it('moving an entry to its answer never counts a request twice, even when time passes between admissions', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { schedule_cancel: { limit: 100, windowMs: 1_000 } });
    // Each request's own work takes 3 ms of the loop before it yields, so later admissions of the
    // same pump (a catch-up after a stall) see a clock that moved on.
    const jobs = Array.from({ length: 6 }, () =>
      s.run({ kind: 'arm', scopes: ['schedule_cancel'] }, async () => {
        clock.jump(3);
        await sleep(clock, 10);
      }),
    );
    clock.jump(50); // a stall: one pump then admits the 5 waiting ones at once
    await clock.advance(0);
    await clock.advance(100);
    await Promise.all(jobs);
    expect(s.stats().scopes.schedule_cancel!.used).toBe(6);
  });

  it('start-up: resolving accounts fills the gaps between first arms, which go at the arm budget', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 400, windowMs: 1_000 }, schedule_cancel: { limit: 100, windowMs: 1_000 } });
    const armedAt: number[] = [];
    const n = 200;
    for (let i = 0; i < n; i++) {
      void s.run({ kind: 'prepare', scopes: ['global', 'endpoint:GET /v1/accounts/{address}'] }, async () => 'resolved').then(() =>
        s.run({ kind: 'arm', scopes: ['global', 'schedule_cancel'] }, async () => armedAt.push(clock.nowMs())),
      );
    }
    await clock.advance(5_000);
    expect(armedAt.length).toBe(n);
    // N / B = 2 s; the first arm cannot go before the first resolve
    expect(armedAt.at(-1)!).toBeLessThanOrEqual(2_000);
  });

  it('stop rejects what is queued', async () => {
    const clock = new FakeClock(0);
    const s = new RequestScheduler(clock, { global: { limit: 1, windowMs: 10_000 } });
    const { job } = recorder(clock);
    void s.run({ kind: 'arm', scopes: ['global'] }, job('a'));
    const queued = s.run({ kind: 'arm', scopes: ['global'] }, job('b')).catch((e: unknown) => e);
    s.stop();
    expect(await queued).toBeInstanceOf(ShedError);
    expect(clock.pendingTimers()).toBe(0);
  });
});
