/**
 * The budget as the venue counts it: one rolling window of 100 requests per 5 s over every signed
 * action (REST arms, exchange arms, approvals), reads not counted; the keeper told exactly that
 * (`global` and `schedule_cancel` both 100 per 5 s). Deadline 20 s, min horizon 8 s, re-arm every
 * 5 s, every account needing an approveAgent, reads every 300 s. B = 20/s; the ideal cold start
 * sends every approval and every first arm once: 2N / 20 s.
 *
 * Timelines, virtual time:
 * - 180 accounts: all armed within 1.1 x 18 s, zero 429s, every horizon >= 8 s after;
 * - 228 accounts: all armed within 1.1 x 22.8 s, every horizon >= 8 s after;
 * - 270 accounts: all armed, no venue deadline passes, readiness names the short horizons;
 * - told 200 per 5 s: at most one burst of 429s, the plan re-made within 1 s of the first, no
 *   deadline passes, every horizon >= 8 s from 30 s after the first 429, all armed within 2 x 18 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import { Keeper } from '../src/keeper/keeper.js';
import type { RateLimitConfig } from '../src/sim/rate-limit.js';
import { account, startHarness, type Harness } from './support/harness.js';

const SWITCH = { deadlineMs: 20_000, rearmEveryMs: 5_000, minHorizonMs: 8_000 };
const B_PER_SECOND = 20;
/** The venue: one window of 100 per 5 s over every signed action. */
const ONE_WINDOW: RateLimitConfig = { globalCounts: 'signed', global: { limit: 100, windowSeconds: 5 }, scheduleCancel: null };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** 429s the venue answered, every endpoint together (read from the counter, not the whole exposition). */
async function venue429s(harness: Harness): Promise<number> {
  const { values } = await harness.metrics.venueRequests.get();
  return values.filter((v) => v.labels.code === '429').reduce((sum, v) => sum + v.value, 0);
}

interface Run {
  allArmedMs: number;
  /** Lowest venue-side horizon of any account from `judgeFromMs` on (ms). */
  worstAfterMs: number;
  /** Lowest venue-side horizon of any account once armed, over the whole run (ms). */
  worstEverMs: number;
  firstLimitedMs: number | null;
  replannedMs: number | null;
  /** Start times of the bursts of 429s (a burst: 429s no more than 2 s apart). */
  bursts: number[];
  limited: number;
}

async function run(n: number, told: number, opts: { judgeAfterFirst429Ms?: number; observeMs?: number } = {}): Promise<Run> {
  const addresses = benchAddresses(n);
  h = await startHarness({
    sim: { accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })), rateLimits: ONE_WINDOW },
    accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, SWITCH)),
    rateLimits: { global: told, scheduleCancel: told, windowMs: 5_000 },
    watch: { ordersEveryMs: 300_000, positionsEveryMs: 300_000 },
  });
  const t0 = h.clock.monoMs();
  // Not the harness's start (it drives the clock until every account is provisioned): this loop
  // drives it, so the cold start is sampled as it happens.
  const starting = Keeper.prototype.start.call(h.keeper);
  let allArmedMs = Number.POSITIVE_INFINITY;
  let worstEverMs = Number.POSITIVE_INFINITY;
  let firstLimitedMs: number | null = null;
  let lastLimitedMs = Number.NEGATIVE_INFINITY;
  let limitedSeen = 0;
  const bursts: number[] = [];
  const worstFrom = new Map<number, number>(); // sample time -> lowest horizon then
  // The plan re-made for the venue's limit: the cadence in force plans on at most B per second.
  let replannedMs: number | null = null;
  const replanned = (): boolean => told > 100 && (h!.keeper.status().cadence?.budget_per_second ?? Number.POSITIVE_INFINITY) <= B_PER_SECOND + 1e-6;
  const stepMs = 250;
  const observeMs = opts.observeMs ?? 40_000;
  for (let t = 0; t < 90_000 + observeMs; t += stepMs) {
    await h.advance(stepMs);
    const now = h.clock.monoMs() - t0;
    const horizons = addresses.map((a) => h!.venueHorizonMs(a));
    if (!Number.isFinite(allArmedMs) && horizons.every((x) => x !== null && x > 0)) allArmedMs = now;
    const armedNow = horizons.filter((x): x is number => x !== null);
    const low = armedNow.length ? Math.min(...armedNow) : Number.POSITIVE_INFINITY;
    worstEverMs = Math.min(worstEverMs, low);
    worstFrom.set(now, low);
    const limited = await venue429s(h);
    if (replannedMs === null && replanned()) replannedMs = now;
    if (limited > limitedSeen) {
      if (firstLimitedMs === null) firstLimitedMs = now;
      if (now - lastLimitedMs > 2_000) bursts.push(now);
      lastLimitedMs = now;
      limitedSeen = limited;
    }
    if (Number.isFinite(allArmedMs) && now >= allArmedMs + observeMs) break;
  }
  await starting;
  const judgeFromMs = opts.judgeAfterFirst429Ms !== undefined && firstLimitedMs !== null ? firstLimitedMs + opts.judgeAfterFirst429Ms : allArmedMs;
  const worstAfterMs = Math.min(...[...worstFrom].filter(([t]) => t >= judgeFromMs).map(([, w]) => w));
  const r = { allArmedMs, worstAfterMs, worstEverMs, firstLimitedMs, replannedMs, bursts, limited: limitedSeen };
  h.logs.push({ summary: { n, told, ...r } });
  if (process.env.BUDGET_FIGURES) console.log(JSON.stringify({ n, told, ...r }));
  return r;
}

// No retry: with the harness waiting for the keeper's state-file reads (test/harness.test.ts) these
// figures are the same on every run, loaded machine or not. The one stretched CI run seen before
// (told-200 armed at 43.5 s against 21.5 s) fits virtual time running on during those reads.
describe('one window over every signed action (100 per 5 s)', () => {
  it('180 accounts :: all armed within 1.1 x (approvals + arms) / B, zero 429s, every horizon >= 8 s after', async () => {
    const r = await run(180, 100);
    expect(r.allArmedMs, JSON.stringify(r)).toBeLessThanOrEqual((1.1 * 360 * 1000) / B_PER_SECOND);
    expect(r.limited, JSON.stringify(r)).toBe(0);
    expect(r.worstAfterMs, JSON.stringify(r)).toBeGreaterThanOrEqual(SWITCH.minHorizonMs);
    expect(h!.sim.state.actionLog().filter((x) => x.type === 'approveAgent' && x.result === 'ok').length).toBe(180);
  }, 120_000);

  it('228 accounts :: all armed within 1.1 x the ideal, every horizon >= 8 s after', async () => {
    const r = await run(228, 100);
    expect(r.allArmedMs, JSON.stringify(r)).toBeLessThanOrEqual((1.1 * 456 * 1000) / B_PER_SECOND);
    expect(r.limited, JSON.stringify(r)).toBe(0);
    expect(r.worstAfterMs, JSON.stringify(r)).toBeGreaterThanOrEqual(SWITCH.minHorizonMs);
    expect(h!.keeper.readiness().ready).toBe(true);
  }, 120_000);

  it('270 accounts :: all armed, no venue deadline passes, readiness names the short horizons', async () => {
    const r = await run(270, 100);
    expect(Number.isFinite(r.allArmedMs)).toBe(true);
    expect(r.worstEverMs, JSON.stringify(r)).toBeGreaterThan(0);
    expect(r.limited, JSON.stringify(r)).toBe(0);
    const readiness = h!.keeper.readiness();
    expect(readiness.ready).toBe(false);
    expect(readiness.faults.some((f) => /horizon .* below 8 s/.test(f.problem))).toBe(true);
    expect(h!.keeper.status().cadence).toMatchObject({ tier: 'short_horizon', over_budget: 0 });
  }, 120_000);

  it('told 200 per 5 s :: one burst of 429s at most, re-planned within 1 s, no deadline passes, horizons >= 8 s from 30 s after the first 429', async () => {
    const r = await run(180, 200, { judgeAfterFirst429Ms: 30_000, observeMs: 60_000 });
    expect(r.firstLimitedMs, JSON.stringify(r)).not.toBeNull();
    expect(r.bursts.length).toBeLessThanOrEqual(1);
    expect(r.replannedMs, JSON.stringify(r)).not.toBeNull();
    expect(r.replannedMs! - r.firstLimitedMs!, JSON.stringify(r)).toBeLessThanOrEqual(1_000 + 250);
    expect(r.worstEverMs, JSON.stringify(r)).toBeGreaterThan(0);
    expect(r.worstAfterMs, JSON.stringify(r)).toBeGreaterThanOrEqual(SWITCH.minHorizonMs);
    expect(r.allArmedMs, JSON.stringify(r)).toBeLessThanOrEqual((2 * 360 * 1000) / B_PER_SECOND);
  }, 120_000);
});
