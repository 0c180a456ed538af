/**
 * A keeper short of CPU, in virtual time (issue 36 item 1's degrade). test/support/busy-cpu.ts
 * models its one thread: each request it sends takes the thread `ms` and its timers (re-arms, the
 * scheduler's, its 1 s loop) wait for it, so it carries at most 1000 / ms requests a second
 * whatever its plan says. The venue is not slowed. 140 accounts, 40 of them priority 0 and 100
 * priority 1, planned at 9.3 arms/s (deadline 60 s, re-armed every 15 s, min horizon 20 s); at
 * t = 60 s the thread slows.
 *
 * Measured when written (node's figures, `console.log` below):
 * - 250 ms a request (4 a second, under the plan, over the minimum): the pace achieved (4.0/s) is
 *   in force 35 s in, the plan stretches x2.41, every horizon stays >= 23.5 s.
 * - 400 ms (2.5 a second, under what every account's minimum needs): in force at 2.5/s, and the plan
 *   leaves the 40 priority-0 accounts and 6 more over_budget. Before, the plan kept all 140 on short
 *   horizons (133 short_horizon, 7 over_budget) and every account sank together.
 *   NOT yet held: the kept accounts still fall below their minimum later, for two reasons the
 *   model shows. The re-plan comes about 30 s after the limit, because the keeper's 1 s loop waits
 *   for the starved thread too. And the 46 over_budget accounts' lapses set off order and position
 *   reads that the achieved limit does not hold back: it moves the plan, not admission. Those reads
 *   queue for the thread ahead of the kept accounts' re-arms. Issue 36 stays open on this.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import { account, startHarness, type Harness } from './support/harness.js';

const N = 140;
const LOW = 40;
const SWITCH = { deadlineMs: 60_000, rearmEveryMs: 15_000, minHorizonMs: 20_000 };
const STEP_MS = 250;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function starved(msPerRequest: number, starvedForMs: number) {
  const addresses = benchAddresses(N);
  const hh = await startHarness({
    sim: {
      accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
      rateLimits: { scheduleCancel: { limit: 6_000, windowSeconds: 60 }, global: { limit: 12_000, windowSeconds: 60 } },
    },
    accounts: () => addresses.map((a, i) => ({ ...account(`acct-${i}`, a, benchKey(i), {}, SWITCH), priority: i < LOW ? 0 : 1 })),
    rateLimits: { global: 200, scheduleCancel: 100, windowMs: 10_000 },
    watch: { ordersEveryMs: 300_000, positionsEveryMs: 300_000 },
    keeperCpuMsPerRequest: 0,
  });
  h = hh;
  await hh.keeper.start();
  await hh.advance(60_000);
  hh.cpu!.setMsPerRequest(msPerRequest);
  const inForce = (scope: string) => hh.scheduler.limits().find((l) => l.scope === scope && l.source === 'achieved');
  let worstMs = Number.POSITIVE_INFINITY;
  let engagedMs: number | null = null;
  let plannedOverMs: number | null = null;
  for (let t = 0; t < starvedForMs; t += STEP_MS) {
    await hh.advance(STEP_MS);
    for (const a of addresses) worstMs = Math.min(worstMs, hh.venueHorizonMs(a) ?? Number.NEGATIVE_INFINITY);
    if (engagedMs === null && inForce('schedule_cancel')) engagedMs = t + STEP_MS;
    if (plannedOverMs === null && hh.keeper.status().cadence!.over_budget > 0) plannedOverMs = t + STEP_MS;
  }
  const sc = inForce('schedule_cancel');
  const status = hh.keeper.status();
  const figures = {
    engagedMs,
    plannedOverMs,
    perSecond: sc ? (sc.inForce.limit * 1000) / sc.inForce.windowMs : null,
    globalInForce: inForce('global') !== undefined,
    cadence: status.cadence,
    overBudget: status.accounts.flatMap((a, i) => (a.plan?.verdict === 'over_budget' ? [i] : [])),
    worstMs,
  };
  console.log(`starved at ${msPerRequest} ms a request: ${JSON.stringify({ ...figures, overBudget: figures.overBudget.length })}`);
  return figures;
}

describe('a keeper short of CPU (virtual time)', () => {
  it('carrying 4 requests a second against a plan of 9.3: the pace it achieves is in force within 40 s and both its scopes hold it; the cadence stretches and every horizon stays >= its minimum', async () => {
    const f = await starved(250, 120_000);
    expect(f.engagedMs).not.toBeNull();
    expect(f.engagedMs!).toBeLessThanOrEqual(40_000);
    expect(f.perSecond!).toBeGreaterThan(3.5);
    expect(f.perSecond!).toBeLessThanOrEqual(4.5);
    expect(f.globalInForce).toBe(true);
    expect(f.cadence).toMatchObject({ tier: 'stretched', over_budget: 0, short_horizon: 0 });
    expect(f.worstMs).toBeGreaterThanOrEqual(SWITCH.minHorizonMs);
  }, 120_000);

  it('carrying 2.5 a second, under what every minimum needs: the plan keeps its margins and leaves the lowest priorities over_budget, never every account on a short horizon', async () => {
    const f = await starved(400, 90_000);
    expect(f.perSecond!).toBeGreaterThan(2);
    expect(f.perSecond!).toBeLessThanOrEqual(2.8);
    expect(f.cadence).toMatchObject({ tier: 'over_budget', short_horizon: 0 });
    // Every priority-0 account is given up before any priority-1 one, and the rest are kept.
    const low = Array.from({ length: LOW }, (_, i) => i);
    expect(f.overBudget.slice(0, LOW)).toEqual(low);
    expect(f.overBudget.length).toBeLessThan(N / 2);
  }, 120_000);
});
