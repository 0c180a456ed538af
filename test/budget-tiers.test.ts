/**
 * Never refuse to protect, against the simulator with a 20 arms/s window (deadline 20 s, min
 * horizon 8 s, configured every 10 s): B x (deadline - min_horizon) = 240 accounts.
 * - 228 (0.95 of that): every horizon stays at or above min_horizon;
 * - 270 (within B x (deadline - 5 s) = 300): every account stays armed, no deadline passes, and
 *   readiness names the short horizons;
 * - 400: the highest-priority accounts are held with zero lapses, the rest reported over_budget.
 * Each on both ways a venue may count (PROFILES): an endpoint quota of its own for the arms, and one
 * window over every signed action, approvals included.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import type { RateLimitConfig } from '../src/sim/rate-limit.js';
import { account, advanceUntilAllArmed, coldStartFigures, startHarness, type Harness } from './support/harness.js';

const SWITCH = { deadlineMs: 20_000, rearmEveryMs: 10_000, minHorizonMs: 8_000 };
/** 300 accounts at 10 requests/s in all: 2.5 arms/s, leaving room for resolves and approvals. */
const LONG = { deadlineMs: 300_000, rearmEveryMs: 120_000, minHorizonMs: 60_000 };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** 429s the keeper counted, every scope together. */
function rateLimitedTotal(metricsText: string): number {
  return [...metricsText.matchAll(/dms_keeper_rate_limited_total\{scope="[^"]+"\} (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/**
 * The two ways a venue may count (src/sim/rate-limit.ts): `endpoint_quota`, the schedule-cancel
 * endpoint's own 20/s beside a wide per-IP window; `one_window`, one window of 20/s over every
 * signed action (arms and approvals together, as the venue of issue 19), which the keeper is told.
 */
const PROFILES = {
  endpoint_quota: {
    sim: { scheduleCancel: { limit: 1_200, windowSeconds: 60 }, global: { limit: 6_000, windowSeconds: 60 } } satisfies RateLimitConfig,
    keeper: { global: 6_000, scheduleCancel: 1_200 },
  },
  one_window: {
    sim: { globalCounts: 'signed', global: { limit: 1_200, windowSeconds: 60 }, scheduleCancel: null } satisfies RateLimitConfig,
    keeper: { global: 1_200, scheduleCancel: 1_200 },
  },
} as const;
type Profile = keyof typeof PROFILES;

async function run(profile: Profile, n: number, priorityOf: (i: number) => number = () => 0) {
  const addresses = benchAddresses(n);
  h = await startHarness({
    sim: {
      accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
      rateLimits: PROFILES[profile].sim,
    },
    accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, benchKey(i), { priority: priorityOf(i) }, SWITCH)),
    rateLimits: PROFILES[profile].keeper,
    watch: { ordersEveryMs: 120_000, positionsEveryMs: 300_000 },
  });
  await h.keeper.start();
  await h.advance(40_000); // the cold start: every approval and first arm through the budget
  const worst = new Map<string, number>();
  for (let t = 0; t < 60_000; t += 1_000) {
    await h.advance(1_000);
    addresses.forEach((a, i) => worst.set(`acct-${i}`, Math.min(worst.get(`acct-${i}`) ?? Number.POSITIVE_INFINITY, h!.venueHorizonMs(a) ?? Number.NEGATIVE_INFINITY)));
  }
  const text = await h.metricsText();
  const limited = rateLimitedTotal(text);
  return { worst, status: h.keeper.status(), readiness: h.keeper.readiness(), limited };
}

describe.each(Object.keys(PROFILES) as Profile[])('cold start with approvals inside the budget, %s', (profile) => {
  it('180 accounts needing agent approvals :: all armed within 1.1 x (approvals + arms) / B, zero 429s', async () => {
    const n = 180;
    const addresses = benchAddresses(n);
    h = await startHarness({
      sim: {
        accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
        // endpoint_quota: the exchange endpoint's own 20/s as well, so approvals and arms never compete
        // (the plan never has to choose); one_window: they share the 20/s, as on the venue of issue 19.
        rateLimits: profile === 'endpoint_quota' ? { ...PROFILES.endpoint_quota.sim, endpoints: { 'POST /exchange': { limit: 1_200, windowSeconds: 60 } } } : PROFILES.one_window.sim,
      },
      accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, SWITCH)),
      rateLimits: PROFILES[profile].keeper,
      watch: { ordersEveryMs: 120_000, positionsEveryMs: 300_000 },
      // Over loopback, one_window once armed at 20.19 s and 20.15 s against the 19.8 s bound (virtual
      // time ran on while start() read the state directory). In process (the harness's default) it
      // is 18.2 s on every run, loaded machine or not.
    });
    const t0 = h.clock.monoMs();
    const t0VenueMs = h.sim.clock.nowMs();
    await h.keeper.start();
    const allArmedMs = await advanceUntilAllArmed(h, addresses, t0, 40_000);
    const { firstArmedMs, unprotectedAccountSeconds } = coldStartFigures(h, addresses, t0VenueMs);
    const boundMs = (1.1 * (n + n) * 1000) / 20;
    console.log(`${profile}: first armed ${firstArmedMs} ms, all armed ${allArmedMs} ms, unprotected ${unprotectedAccountSeconds} account-seconds`);
    expect(allArmedMs).toBeLessThanOrEqual(boundMs);
    if (profile === 'endpoint_quota') {
      // Approvals and arms on windows of their own: each account armed right after its approval.
      // Holding first arms for the approvals (the one-window order, applied here too before the
      // plan knew the windows apart) armed the first at 7.3 s and the last at 16.5 s, leaving 2,121
      // account-seconds unprotected; now 20 ms, 9.2 s and 809.
      expect(firstArmedMs).toBeLessThanOrEqual(1_000);
      expect(allArmedMs).toBeLessThanOrEqual(((n + 2) * 1000) / 20 / 0.97);
      expect(unprotectedAccountSeconds).toBeLessThan(1_000);
    }
    const approvals = h.sim.state.actionLog().filter((x) => x.type === 'approveAgent' && x.result === 'ok').length;
    expect(approvals).toBe(n);
    expect(rateLimitedTotal(await h.metricsText())).toBe(0);
    h.logs.push({ summary: { firstArmedMs, allArmedMs, unprotectedAccountSeconds, boundMs } });
  }, 120_000);
});

describe('approvals and REST in one per-IP window', () => {
  // Found by the benchmark: the simulator (like a venue may) counts POST /exchange in the same
  // global per-IP window as REST, while the keeper charged approvals to the exchange scope only.
  // Resolves and reads used the whole global budget, approvals came on top: 290 429s at 10,000.
  it('300 accounts approving agents at the arms\' rate under a tight global window :: zero 429s', async () => {
    const n = 300;
    const addresses = benchAddresses(n);
    h = await startHarness({
      sim: {
        accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
        rateLimits: { scheduleCancel: { limit: 600, windowSeconds: 60 }, global: { limit: 600, windowSeconds: 60 } },
      },
      accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, LONG)),
      rateLimits: { global: 600, scheduleCancel: 600, exchange: 600 },
      watch: { ordersEveryMs: 300_000, positionsEveryMs: 300_000 },
    });
    await h.keeper.start();
    await h.advance(150_000);
    const text = await h.metricsText();
    const refused = [...text.matchAll(/dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="429"\} (\d+)/g)].filter((m) => m[2] !== '0').map((m) => `${m[1]}: ${m[2]}`);
    expect(refused).toEqual([]);
    expect(h.sim.state.actionLog().filter((x) => x.type === 'approveAgent' && x.result === 'ok').length).toBe(n);
    expect(addresses.every((a) => (h!.venueHorizonMs(a) ?? 0) >= LONG.minHorizonMs)).toBe(true);
  }, 120_000);
});

describe.each(Object.keys(PROFILES) as Profile[])('never refuse to protect (20 arms/s, deadline 20 s, min horizon 8 s), %s', (profile) => {
  it('228 accounts :: the keeper runs and every horizon stays >= min_horizon', async () => {
    const r = await run(profile, 228);
    expect(Math.min(...r.worst.values())).toBeGreaterThanOrEqual(SWITCH.minHorizonMs);
    expect(r.status.cadence?.tier).toMatch(/^(stretched|reserve)$/);
    expect(r.readiness.ready).toBe(true);
    expect(r.limited).toBe(0);
  }, 120_000);

  it('270 accounts :: every account armed, no venue deadline passes, readiness names the short horizons', async () => {
    const r = await run(profile, 270);
    expect(Math.min(...r.worst.values())).toBeGreaterThan(0);
    expect(r.status.cadence).toMatchObject({ tier: 'short_horizon', over_budget: 0 });
    expect(r.readiness.ready).toBe(false);
    expect(r.readiness.faults.some((f) => /horizon .* below 8 s/.test(f.problem))).toBe(true);
    expect(r.limited).toBe(0);
  }, 120_000);

  it('400 accounts :: the priority subset is held with zero lapses; the rest reported over_budget', async () => {
    const r = await run(profile, 400, (i) => (i >= 300 ? 10 : 0)); // the last 100 matter most
    const over = r.status.accounts.filter((a) => a.phase === 'over_budget').map((a) => a.name);
    expect(over.length).toBeGreaterThan(0);
    expect(r.status.cadence?.over_budget).toBe(over.length);
    for (let i = 300; i < 400; i++) expect(over).not.toContain(`acct-${i}`);
    const held = [...r.worst.entries()].filter(([name]) => !over.includes(name));
    expect(held.length).toBeGreaterThan(200);
    expect(Math.min(...held.map(([, w]) => w))).toBeGreaterThan(0);
    expect(r.readiness.faults.filter((f) => f.problem.startsWith('over_budget')).length).toBe(over.length);
    expect(await h!.metricsText()).toContain(`dms_keeper_over_budget{account="${over[0]}"} 1`);
    expect(r.limited).toBe(0);
  }, 120_000);
});
