import { describe, expect, it } from 'vitest';
import { ActivityReporter, startCompleteRecord, startProgress, summaryRecord, type AccountActivity } from './activity.js';

const acct = (name: string, over: Partial<AccountActivity> = {}): AccountActivity => ({
  name,
  shouldBeArmed: true,
  armed: true,
  horizonSeconds: 50,
  everArmed: true,
  provisionFailed: false,
  ...over,
});

describe('summaryRecord', () => {
  it('counts the accounts that should be armed, names the lowest horizon, and reports the traffic', () => {
    const r = summaryRecord(
      [acct('a', { horizonSeconds: 41.24 }), acct('b', { horizonSeconds: 55 }), acct('idle', { shouldBeArmed: false, armed: false, horizonSeconds: null })],
      { arms: 24, failures: 1, ineligible: 0, rateLimited: 1, readsShed: 0 },
      60,
    );
    expect(r.level).toBe('info');
    expect(r.msg).toBe('armed 2 of 2 accounts that should be; lowest horizon 41.2 s (a); 24 arms, 1 failed, 1 refused with 429 in the last 60 s');
    expect(r.fields).toMatchObject({ event: 'summary', armed: 2, should_be_armed: 2, min_horizon_seconds: 41.2, min_horizon_account: 'a', arms: 24, arm_failures: 1, rate_limited: 1 });
  });

  it('is a warning while an account that should be armed is not', () => {
    const r = summaryRecord([acct('a'), acct('b', { armed: false, horizonSeconds: null })], { arms: 0, failures: 3, ineligible: 0, rateLimited: 0, readsShed: 0 }, 60);
    expect(r.level).toBe('warn');
    expect(r.msg).toMatch(/^armed 1 of 2 /);
  });
});

describe('startProgress', () => {
  it('counts accounts not yet added as waiting, and estimates the rest from the rate so far', () => {
    const p = startProgress([acct('a'), acct('b'), acct('c'), acct('d', { everArmed: false, armed: false })], 10, 4_000);
    expect(p).toMatchObject({ accounts: 10, armed: 3, waiting: 7, complete: false, eta_seconds: 10 });
  });

  it('uses the arm budget before there is a rate, and is complete when nobody waits', () => {
    expect(startProgress([acct('a', { everArmed: false, armed: false })], 100, 1_000, 10).eta_seconds).toBe(10);
    const done = startProgress([acct('a'), acct('x', { everArmed: false, provisionFailed: true }), acct('i', { everArmed: false, shouldBeArmed: false })], 3, 2_000);
    expect(done).toMatchObject({ complete: true, armed: 1, failed: 1, not_to_be_armed: 1, waiting: 0, eta_seconds: 0 });
  });

  it('names an ineligible account as such in the completion line, apart from the idle ones', () => {
    const idle = { everArmed: false, armed: false, shouldBeArmed: false, horizonSeconds: null };
    const p = startProgress([acct('a'), acct('b'), acct('small', { ...idle, ineligible: true }), acct('quiet', idle)], 4, 1_000);
    expect(p).toMatchObject({ complete: true, armed: 2, not_to_be_armed: 2, ineligible: 1 });
    const r = startCompleteRecord(p);
    expect(r.level).toBe('info');
    expect(r.msg).toBe("start-up done in 1 s: armed 2 of 4 accounts; 1 ineligible (below the venue's volume gate, cannot be protected), 1 with nothing to arm");
  });
});

describe('ActivityReporter', () => {
  it('logs progress every 5 s during a long start, its completion once, then a summary a minute', () => {
    const r = new ActivityReporter();
    let armed = 0;
    const views = () => Array.from({ length: 100 }, (_, i) => acct(`a${i}`, { everArmed: i < armed, armed: i < armed }));
    const events: string[] = [];
    for (let t = 0; t <= 61_000; t += 1_000) {
      armed = Math.min(100, Math.floor(t / 100)); // 10 per second: done at 10 s
      for (const rec of r.tick(t, 100, views)) events.push(`${t / 1000}:${String(rec.fields.event)}`);
    }
    expect(events).toEqual(['5:start_progress', '10:start_complete', '60:summary']);
    expect(r.startProgress()).toMatchObject({ complete: true, armed: 100 });
  });

  it('does not repeat a progress line when nothing moved (a venue down at start)', () => {
    const r = new ActivityReporter();
    const views = () => [acct('a', { everArmed: false, armed: false })];
    const out = [];
    for (let t = 0; t <= 30_000; t += 1_000) out.push(...r.tick(t, 1, views));
    expect(out.filter((x) => x.fields.event === 'start_progress')).toHaveLength(0);
  });

  it('counts arms by result for the summary', () => {
    const r = new ActivityReporter({ summaryEveryMs: 10_000, progressEveryMs: 5_000 });
    r.recordArm('ok');
    r.recordArm('rate_limited');
    r.recordArm('error');
    r.tick(0, 1, () => [acct('a')]);
    const s = r.tick(10_000, 1, () => [acct('a')]).find((x) => x.fields.event === 'summary');
    expect(s?.fields).toMatchObject({ arms: 3, arm_failures: 2, rate_limited: 1 });
  });
});
