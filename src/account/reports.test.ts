/**
 * How the keeper reports a watcher's failed read: a read the budget shed (to keep room for arms) is
 * routine under pressure, so it is counted (metric, minute summary) and logged at debug only; any
 * other failed read stays a warning.
 */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics, type KeeperMetrics } from '../obs/metrics.js';
import { FakeClock } from '../time/fake-clock.js';
import { ShedError } from '../budget/scheduler.js';
import { VenueClock } from '../time/venue-clock.js';
import type { TriggerCounter } from '../state/triggers.js';
import { ActivityReporter, type AccountActivity } from './activity.js';
import type { AccountState } from './keeper-types.js';
import { bareAccount } from './test-support.js';
import { AccountReports } from './reports.js';
import type { WatchReport } from './watcher.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';

function setup(): { reports: AccountReports; metrics: KeeperMetrics; activity: ActivityReporter; lines: Array<Record<string, unknown>>; managed: (name: string) => AccountState } {
  const clock = new FakeClock(1_700_000_000_000);
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const logger: Logger = pino({ level: 'debug' }, stream);
  const metrics = createMetrics({ version: 'test', defaultMetrics: false });
  const activity = new ActivityReporter();
  const reports = new AccountReports({
    venue: { switchFacts: HYPERLIQUID_SWITCH_FACTS },
    clock,
    venueClock: new VenueClock(clock),
    metrics,
    logger,
    triggers: {} as TriggerCounter,
    activity,
    triggerWarnAt: () => 8,
    accounts: () => [],
  });
  const managed = (name: string): AccountState => bareAccount({ name }, logger.child({ account: name }));
  return { reports, metrics, activity, lines, managed };
}

/** The watcher's report of a read the scheduler shed (watcher.ts reportFailure, verbatim shape). */
function shedReport(what: 'orders' | 'positions'): WatchReport {
  const e = new ShedError('read shed after waiting 10000 ms for budget');
  return { type: 'read_failed', what, reason: e.reason, message: e.message };
}

const counterValue = async (metrics: KeeperMetrics, name: string): Promise<number> => {
  const m = await metrics.registry.getSingleMetric(name)?.get();
  return m?.values.reduce((s, v) => s + v.value, 0) ?? Number.NaN;
};

const view = (name: string): AccountActivity => ({ name, shouldBeArmed: true, armed: true, horizonSeconds: 50, everArmed: true, provisionFailed: false });

describe('AccountReports.watch: a read shed for budget', () => {
  it('is counted in dms_keeper_reads_shed_total and the minute summary, and logged at debug, never warn', async () => {
    const { reports, metrics, activity, lines, managed } = setup();
    const accounts = Array.from({ length: 50 }, (_, i) => managed(`a${i}`));
    for (const m of accounts) {
      reports.watch(m, shedReport('orders'));
      reports.watch(m, shedReport('positions'));
    }
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
    expect(lines.filter((l) => l.event === 'read_shed')).toHaveLength(100);
    expect(lines.every((l) => l.level === 20)).toBe(true);
    expect(await counterValue(metrics, 'dms_keeper_reads_shed_total')).toBe(100);
    // An orders count we could not read is unknown, shed or not (`orders_open` arms on it).
    expect(accounts[0]?.orders).toBeUndefined();

    activity.tick(0, 1, () => [view('a0')]);
    const [summary] = activity.tick(60_000, 1, () => [view('a0')]);
    expect(summary?.fields).toMatchObject({ event: 'summary', reads_shed: 100 });
    expect(summary?.msg).toMatch(/100 reads shed/);
    // Counted per minute: the next summary starts from zero.
    const [next] = activity.tick(120_000, 1, () => [view('a0')]);
    expect(next?.fields).toMatchObject({ reads_shed: 0 });
  });

  it('leaves every other failed read a warning, not counted as shed', async () => {
    const { reports, metrics, activity, lines, managed } = setup();
    reports.watch(managed('a'), { type: 'read_failed', what: 'orders', reason: 'timeout', message: 'request timed out' });
    expect(lines.filter((l) => l.level === 40 && l.event === 'read_failed')).toHaveLength(1);
    expect(await counterValue(metrics, 'dms_keeper_reads_shed_total')).toBe(0);
    activity.tick(0, 1, () => [view('a')]);
    expect(activity.tick(60_000, 1, () => [view('a')])[0]?.fields).toMatchObject({ reads_shed: 0 });
  });
});

describe('AccountReports.watch: which source counted the orders', () => {
  it('keeps the source per account and sets dms_keeper_orders_source to 1 for it, 0 for the other', async () => {
    const { reports, metrics, managed } = setup();
    const m = managed('a0');
    const series = async () => {
      const text = await metrics.registry.metrics();
      const out: Record<string, number> = {};
      for (const m of text.matchAll(/^dms_keeper_orders_source\{account="a0",source="(\w+)"\} (\S+)$/gm)) out[m[1]!] = Number(m[2]);
      return out;
    };
    reports.watch(m, { type: 'orders', count: 3, orders: [], atMs: 1, source: 'venue' });
    expect(m.orders).toMatchObject({ count: 3, source: 'venue' });
    expect(await series()).toEqual({ service: 0, venue: 1 });
    reports.watch(m, { type: 'orders', count: 1, orders: [], atMs: 2, source: 'service' });
    expect(m.orders).toMatchObject({ count: 1, source: 'service' });
    expect(await series()).toEqual({ service: 1, venue: 0 });
  });
});

describe('AccountReports.runner: an account below the venue\'s volume gate', () => {
  const refusal = {
    type: 'arm',
    result: 'rejected',
    route: 'rest',
    latencyMs: 3,
    reason: 'ineligible',
    message: 'POST /v1/trading/orders/schedule-cancel: venue refused the action (ineligible): Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $250000.',
  } as const;

  it('is one warning that says what it means, then debug; the summary counts the refusals as ineligible, not failed; the metric still says rejected', async () => {
    const { reports, metrics, activity, lines, managed } = setup();
    const m = managed('small-desk');
    let phase = 'unarmed';
    m.runner = { snapshot: () => ({ phase }) } as unknown as AccountState['runner'];
    // The runner reports the refusal, then the phase it leads to (account-runner.ts).
    reports.runner(m, refusal);
    reports.runner(m, { type: 'phase', from: 'unarmed', to: 'ineligible' });
    phase = 'ineligible';
    reports.runner(m, refusal); // 5 minutes later, still refused
    const warnings = lines.filter((l) => (l.level as number) >= 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ event: 'arm', result: 'rejected', account: 'small-desk', reason: 'ineligible', required_usd: 1_000_000, retry_in_seconds: 300 });
    expect(warnings[0]?.msg).toBe(
      "ineligible: below the venue's $1000000 volume gate (traded $250000), so the venue refuses its scheduled cancel and this account cannot be protected; asking again every 5 minutes",
    );
    expect(lines.filter((l) => l.msg === 'arm failed')).toEqual([]);
    expect(await metrics.registry.metrics()).toMatch(/^dms_keeper_arm_requests_total\{account="small-desk",result="rejected"\} 2$/m);
    expect(await metrics.registry.metrics()).toMatch(/^dms_keeper_account_ineligible\{account="small-desk"\} 1$/m);

    const views = (): AccountActivity[] => [view('mm-main'), { ...view('small-desk'), shouldBeArmed: false, armed: false, horizonSeconds: null, everArmed: false, ineligible: true }];
    activity.tick(0, 2, views);
    const summary = activity.tick(60_000, 2, views).find((r) => r.fields.event === 'summary');
    expect(summary?.level).toBe('info');
    expect(summary?.fields).toMatchObject({ arms: 2, arm_failures: 0, arms_refused_ineligible: 2, ineligible: 1, armed: 1, should_be_armed: 1 });
    expect(summary?.msg).toMatch(/^armed 1 of 1 accounts that should be; 1 ineligible \(below the venue's volume gate, cannot be protected\); .*2 arms, 0 failed, 2 refused as ineligible, 0 refused with 429/);
  });

  it('leaves any other refusal an "arm failed" warning, counted as failed', () => {
    const { reports, activity, lines, managed } = setup();
    reports.runner(managed('a'), { ...refusal, reason: 'unknown_signer', message: 'User or API Wallet 0x1 does not exist.' });
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['arm failed']);
    activity.tick(0, 1, () => [view('a')]);
    expect(activity.tick(60_000, 1, () => [view('a')])[0]?.fields).toMatchObject({ arm_failures: 1, arms_refused_ineligible: 0 });
  });
});

describe('AccountReports: the phase line', () => {
  it("an account's first arm is start-up (debug); a later fall and re-arm is news (info), and a re-added account starts afresh", () => {
    const { reports, lines, managed } = setup();
    const phases = (name: string) => lines.filter((l) => l.event === 'phase' && l.account === name).map((l) => `${l.to}@${l.level}`);
    const m = managed('a');
    reports.runner(m, { type: 'phase', from: 'unarmed', to: 'armed' });
    reports.runner(m, { type: 'phase', from: 'armed', to: 'unarmed' });
    reports.runner(m, { type: 'phase', from: 'unarmed', to: 'armed' });
    expect(phases('a')).toEqual(['armed@20', 'unarmed@30', 'armed@30']);
    // The first-arm flag is the account's: another account, and the same name added anew, start afresh.
    reports.runner(managed('a'), { type: 'phase', from: 'unarmed', to: 'armed' });
    expect(phases('a').at(-1)).toBe('armed@20');
  });
});
