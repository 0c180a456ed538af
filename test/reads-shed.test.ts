/**
 * Reads shed for budget, end to end (issue 19 item 5): a keeper whose budget cannot carry its reads
 * sheds them (arms first, DESIGN.md invariant 3) and says so in numbers, not one warning each.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('reads shed for budget', () => {
  it('are counted in dms_keeper_reads_shed_total and the minute summary, logged at debug only', async () => {
    const accounts = [
      { name: 'alice', key: 'alice', agentName: 'dms-keeper' },
      { name: 'alice-sub', key: 'alice', agentName: 'dms-keeper-sub' },
      { name: 'bob', key: 'bob', agentName: 'dms-keeper' },
    ] as const;
    h = await startHarness({
      accounts: () => accounts.map((a) => account(a.name, demoAddress(a.name), demoMasterKey(a.key), { agentName: a.agentName })),
      // 40 requests a minute: the arms take 12, and reads every 250 ms (1,440 a minute) need 72
      // times the 20 the arms leave of 80 %: stretched at most x20 (read-plan.ts), the rest shed.
      rateLimits: { global: 40, scheduleCancel: 30 },
      watch: { ordersEveryMs: 250, positionsEveryMs: 250 },
    });
    await h.keeper.start();
    await h.advance(125_000);

    const shedLines = h.logs.filter((l) => l.event === 'read_shed');
    const metric = /^dms_keeper_reads_shed_total (\d+)$/m.exec(await h.metricsText());
    const summaries = h.logs.filter((l) => l.event === 'summary');
    expect(shedLines.length).toBeGreaterThan(10);
    expect(shedLines.every((l) => l.level === 20)).toBe(true);
    expect(Number(metric?.[1])).toBe(shedLines.length);
    expect(h.logs.filter((l) => (l.level as number) >= 40 && (l.event === 'read_failed' || l.event === 'venue_health_failed'))).toEqual([]);
    // Every shed read falls in exactly one minute's summary (none after the last one is logged yet).
    const lastSummaryTime = summaries.at(-1)?.time as number;
    const shedBySummaries = summaries.reduce((s, l) => s + (l.reads_shed as number), 0);
    expect(shedBySummaries).toBe(shedLines.filter((l) => (l.time as number) <= lastSummaryTime).length);
    expect(shedBySummaries).toBeGreaterThan(0);
    // Arms kept their priority: every account stayed armed.
    for (const a of accounts) expect(h.venueHorizonMs(demoAddress(a.name))).toBeGreaterThan(0);
  });

  it('include the venue clock read (/v1/health) when arms leave it no room for its 30 s wait', async () => {
    h = await startHarness({
      accounts: () => [
        account('alice', demoAddress('alice'), demoMasterKey('alice')),
        account('alice-sub', demoAddress('alice-sub'), demoMasterKey('alice'), { agentName: 'dms-keeper-sub' }),
        account('bob', demoAddress('bob'), demoMasterKey('bob')),
      ],
      // 6 requests a minute for three accounts re-armed every 15 s: the arms take every slot.
      rateLimits: { global: 6, scheduleCancel: 6 },
      watch: { ordersEveryMs: 600_000, positionsEveryMs: 600_000 },
    });
    await h.keeper.start();
    await h.advance(185_000);
    const health = h.logs.filter((l) => l.event === 'read_shed' && l.what === 'health');
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((l) => l.level === 20)).toBe(true);
    expect(h.logs.filter((l) => l.event === 'venue_health_failed')).toEqual([]);
    const metric = /^dms_keeper_reads_shed_total (\d+)$/m.exec(await h.metricsText());
    expect(Number(metric?.[1])).toBe(h.logs.filter((l) => l.event === 'read_shed').length);
  });
});
