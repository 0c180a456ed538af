/**
 * A keeper short of CPU, in virtual time (issue 36 item 1's degrade). test/support/busy-cpu.ts
 * models its one thread: each request it sends takes the thread `ms` and its timers (re-arms, the
 * scheduler's, its 1 s loop) wait for it, so it carries at most 1000 / ms requests a second
 * whatever its plan says. The venue is not slowed. 140 accounts, 40 of them priority 0 and 100
 * priority 1, planned at 9.3 arms/s (deadline 60 s, re-armed every 15 s, min horizon 20 s); at
 * t = 60 s the thread slows.
 *
 * What holds it (each found here, in this order):
 * - a re-arm whose timer fired late presses its route's scope, so the pace is measured;
 * - the plan is re-made the moment a pace achieved is in force (the 1 s loop was 30 s late);
 * - under it the plan keeps its margins (no reserve or short_horizon tier: before, 133 of 140 went
 *   short and every account sank together) and takes 0.9 of the pace;
 * - reads get half of what is left, spaced (a lapse's reads, 98 at once, sank the kept accounts);
 * - an achieved limit is probed back by 1.5 at a time, not 2 (doubling 2.3/s on a thread carrying
 *   2.5 sank them again).
 * Measured (the console line): at 4 requests a second the pace is in force 31 s in, 4 priority-0
 * accounts are given up and the kept ones stay >= 21.1 s; at 2.5, 55 are given up (all 40
 * priority 0 first), only they lapse, and the kept ones stay >= 20.0 s over 330 s.
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

/** Once the plan is made for the pace, this long for the re-arms queued before it to drain. */
const SETTLE_MS = 30_000;

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
  // The lowest venue-side horizon of the accounts the plan keeps, from SETTLE_MS after it was made for the pace.
  let keptWorstMs = Number.POSITIVE_INFINITY;
  let engagedMs: number | null = null;
  for (let t = 0; t < starvedForMs; t += STEP_MS) {
    await hh.advance(STEP_MS);
    if (engagedMs === null && inForce('schedule_cancel')) engagedMs = t + STEP_MS;
    if (engagedMs === null || t + STEP_MS < engagedMs + SETTLE_MS) continue;
    const verdicts = hh.keeper.status().accounts.map((a) => a.plan?.verdict);
    addresses.forEach((a, i) => {
      if (verdicts[i] !== 'over_budget') keptWorstMs = Math.min(keptWorstMs, hh.venueHorizonMs(a) ?? Number.NEGATIVE_INFINITY);
    });
  }
  const sc = inForce('schedule_cancel');
  const status = hh.keeper.status();
  const figures = {
    engagedMs,
    perSecond: sc ? (sc.inForce.limit * 1000) / sc.inForce.windowMs : null,
    globalInForce: inForce('global') !== undefined,
    cadence: status.cadence,
    overBudget: status.accounts.flatMap((a, i) => (a.plan?.verdict === 'over_budget' ? [i] : [])),
    fired: addresses.flatMap((a, i) => (hh.sim.state.schedule(a).triggersToday > 0 ? [i] : [])),
    keptWorstMs,
  };
  console.log(`starved at ${msPerRequest} ms a request: ${JSON.stringify({ ...figures, overBudget: figures.overBudget.length, fired: figures.fired.length })}`);
  return figures;
}

describe('a keeper short of CPU (virtual time)', () => {
  it('carrying 4 requests a second against a plan of 9.3: the pace it achieves is in force within 40 s; the cadence stretches, a few of the lowest priority are given up, every other horizon stays >= its minimum', async () => {
    const f = await starved(250, 150_000);
    expect(f.engagedMs).not.toBeNull();
    expect(f.engagedMs!).toBeLessThanOrEqual(40_000);
    expect(f.perSecond!).toBeGreaterThan(3.5);
    expect(f.perSecond!).toBeLessThanOrEqual(4.5);
    expect(f.cadence).toMatchObject({ short_horizon: 0 });
    expect(f.cadence!.stretch).toBeGreaterThan(2);
    expect(f.overBudget.length).toBeLessThanOrEqual(10);
    expect(f.overBudget.every((i) => i < LOW)).toBe(true);
    expect(f.fired.every((i) => f.overBudget.includes(i))).toBe(true);
    expect(f.keptWorstMs).toBeGreaterThanOrEqual(SWITCH.minHorizonMs);
  }, 120_000);

  it('carrying 2.5 a second, under what every minimum needs: the plan keeps its margins and gives up the lowest priorities, never every account on a short horizon; only those lapse, every kept horizon stays near its minimum', async () => {
    const f = await starved(400, 330_000);
    expect(f.perSecond!).toBeGreaterThan(2);
    expect(f.perSecond!).toBeLessThanOrEqual(2.8);
    expect(f.cadence).toMatchObject({ tier: 'over_budget', short_horizon: 0 });
    // Every priority-0 account is given up before any priority-1 one, and fewer than half in all.
    const low = Array.from({ length: LOW }, (_, i) => i);
    expect(f.overBudget.slice(0, LOW)).toEqual(low);
    expect(f.overBudget.length).toBeLessThan(N / 2);
    // Only the given-up accounts lapse.
    expect(f.fired.every((i) => f.overBudget.includes(i))).toBe(true);
    // Measured 20.0 s at worst against the 20 s minimum (19.8 s in a variant that pressed the global
    // scope too): a starved thread's timers slip as far as the lag allowance.
    expect(f.keptWorstMs).toBeGreaterThanOrEqual(SWITCH.minHorizonMs - 500);
  }, 120_000);
});
