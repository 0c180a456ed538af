/**
 * A cold start short of CPU, in virtual time (issue 36 item 1). Found at 50,000 accounts with two
 * busy loops on a slower machine (2026-12-02): the first arms went at about 175 of 200 a second,
 * the cold start ran 35 s past the first re-arms, and the pace achieved was measured only once
 * those were late (docs/benchmarks.md, "A slower machine"). test/support/busy-cpu.ts models the
 * keeper's one thread: each request takes it 100 ms, so it carries 10 a second, approvals, first
 * arms and re-arms together, against a `schedule_cancel` limit of 10 a second. 600 accounts, more
 * than the provisioning pipeline holds (256).
 *
 * Wanted: the pace achieved is in force inside the cold start, and no account the plan keeps is
 * ever below its minimum horizon once armed.
 *
 * KNOWN FAILURE, marked `it.fails`: the keeper does not do this yet. Measured at c3fa90e: no pace
 * achieved in force in 240 s, the cold start over at 122.5 s, 571 of the 600 accounts below their
 * minimum (572 at 4f7e969; 327 once a pump held on another of an arm's scopes stopped breaking
 * the pace meter's stretch, 2026-12-04), the first at 102 s. Tried and not kept (each left it failing): a first arm pressing its
 * scope while accounts wait behind the pipeline, with the arm queue empty or no window waited on
 * (the queue is never empty, and the grid's spacing is a window wait at almost every pump); a pump
 * timer firing late pressing the scopes it admits (the cold start's pumps come from enqueues and
 * answers, not timers: two timer pumps in 125 s); a measure over the pressed time alone, however
 * often pressure came and went (2026-12-02, afternoon: in a scheduler model of 20 accounts each
 * queueing its next arm on its last one's answer, on a thread carrying 8 answers a second, the scope
 * was pressed at 1,064 of 1,953 pumps in 884 separate runs and it measured no shortfall: each
 * pressed time ends with the one admission it waited for, so it measures the wait, not the scope).
 * In this model the thread's shortfall shows on `exchange` (approvals pressed at almost every pump,
 * lulls of 300 ms at most), not on `schedule_cancel` (first pressed at 85 s): the cure is likely a
 * keeper-wide one (the thread is shared by every scope), and admission that keeps the thread's own
 * queue short: approvals answered at 5.0 to 5.7 of their window's 10 a second (30 s stretches)
 * mean each request waited 7.5 to 10 s for the thread (a 10 s window counting each until it is
 * answered), and a re-arm waits behind them. When a change makes the wanted behaviour hold,
 * vitest reports this test as failing: turn `it.fails` into `it`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import { account, startHarness, type Harness } from './support/harness.js';

const N = 600;
const SWITCH = { deadlineMs: 120_000, rearmEveryMs: 30_000, minHorizonMs: 20_000 };
const STEP_MS = 500;
const RUN_MS = 240_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a cold start short of CPU (virtual time)', () => {
  it.fails('600 accounts on a thread carrying 10 requests a second: the pace achieved is in force inside the cold start, and every kept account stays >= its minimum', async () => {
    const addresses = benchAddresses(N);
    const hh = await startHarness({
      sim: {
        accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
        rateLimits: { scheduleCancel: { limit: 6_000, windowSeconds: 60 }, global: { limit: 12_000, windowSeconds: 60 } },
      },
      accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, SWITCH)),
      rateLimits: { global: 400, scheduleCancel: 100, exchange: 100, windowMs: 10_000 },
      watch: { ordersEveryMs: 300_000, positionsEveryMs: 300_000 },
      keeperCpuMsPerRequest: 100,
    });
    h = hh;
    // Not awaited: it resolves once every account had its first provisioning, the cold start itself.
    const started = hh.keeper.start();
    const inForce = () => hh.scheduler.limits().find((l) => l.scope === 'schedule_cancel' && l.source === 'achieved');
    let engagedMs: number | null = null;
    let coldStartEndMs: number | null = null;
    let keptWorstMs = Number.POSITIVE_INFINITY;
    const armedOnce = new Set<number>();
    const lapsed = new Set<number>();
    let firstLapseMs: number | null = null;
    for (let t = STEP_MS; t <= RUN_MS; t += STEP_MS) {
      await hh.advance(STEP_MS);
      if (engagedMs === null && inForce()) engagedMs = t;
      const accounts = hh.keeper.status().accounts;
      const kept = accounts.flatMap((a, i) => (a.plan?.verdict === 'over_budget' ? [] : [i]));
      for (const i of kept) {
        const horizon = hh.venueHorizonMs(addresses[i]!);
        if (horizon !== null && horizon > 0) armedOnce.add(i);
        // Once armed, a kept account is judged: below its minimum (or fired) is a lapse.
        if (!armedOnce.has(i)) continue;
        keptWorstMs = Math.min(keptWorstMs, horizon ?? Number.NEGATIVE_INFINITY);
        if ((horizon ?? 0) < SWITCH.minHorizonMs) {
          lapsed.add(i);
          firstLapseMs ??= t;
        }
      }
      if (coldStartEndMs === null && kept.every((i) => armedOnce.has(i))) coldStartEndMs = t;
    }
    await started;
    const overBudget = hh.keeper.status().accounts.filter((a) => a.plan?.verdict === 'over_budget').length;
    console.log(`cold start starved: ${JSON.stringify({ engagedMs, coldStartEndMs, overBudget, lapsed: lapsed.size, firstLapseMs, keptWorstS: keptWorstMs / 1000, cadence: hh.keeper.status().cadence })}`);
    expect(engagedMs).not.toBeNull();
    expect(coldStartEndMs).not.toBeNull();
    expect(engagedMs!).toBeLessThan(coldStartEndMs!);
    expect(keptWorstMs).toBeGreaterThanOrEqual(SWITCH.minHorizonMs);
  }, 300_000);
});
