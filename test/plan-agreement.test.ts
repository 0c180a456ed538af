/**
 * One plan: what `check-config` prints for a config is what the keeper runs on it. Over random
 * configs (shared budget or not, every path, every `watch.source`, budgets from roomy to far too
 * small), buildPlan's figures equal the ones the keeper shows in `/status` once every account is
 * armed: each account's period, route and verdict, the tier, the stretch, the arms per second, the
 * read stretch and the budget share. Before the planner was shared, check-config planned a shard on
 * the whole shared budget and counted only `path: exchange` arms on the exchange endpoint.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import { toAppConfig } from '../src/app/from-config.js';
import { buildPlan } from '../src/cli/check-config-plan.js';
import { parse } from '../src/config/test-support.js';
import { BUDGET_CHANGE_TOLERANCE } from '../src/budget/shared-share.js';
import { MAX_READ_STRETCH } from '../src/plan/read-plan.js';
import { startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const account = fc.record({
  deadline: fc.constantFrom(40, 60, 90, 120),
  minHorizon: fc.constantFrom(10, 20),
  rearmShare: fc.double({ min: 0, max: 1, noNaN: true }),
  path: fc.constantFrom('rest', 'exchange', 'rest_then_exchange'),
  priority: fc.integer({ min: 0, max: 3 }),
});

const configArb = fc.record({
  accounts: fc.array(account, { minLength: 1, maxLength: 8 }),
  // Per minute: from roomy to far too small for the accounts (stretched, reserve, short, over_budget).
  // The exchange budget carries the approvals: at least 12 a minute, so a cold start of 8 accounts
  // on half of a shared one still ends within the harness's start (200 s of virtual time).
  scheduleCancel: fc.constantFrom(3, 6, 12, 30, 600),
  exchange: fc.constantFrom(12, 30, 1200),
  global: fc.constantFrom(30, 60, 1200),
  source: fc.constantFrom('service', 'venue', 'service_then_venue'),
  ordersEvery: fc.constantFrom(30, 120),
  shared: fc.option(fc.constantFrom(0.5, 0.75), { nil: undefined }),
});
type Drawn = typeof configArb extends fc.Arbitrary<infer T> ? T : never;

/** request_timeout_ms 5000: a retry slot of 6 s, two of them between rearm and min_horizon. */
function yamlOf(c: Drawn): { text: string; env: Record<string, string> } {
  const addresses = benchAddresses(c.accounts.length);
  const env: Record<string, string> = {};
  const lines = [
    'venue:',
    '  base_url: https://svc.example.com',
    '  request_timeout_ms: 5000',
    'watch:',
    `  source: ${c.source}`,
    `  orders_every_seconds: ${c.ordersEvery}`,
    '  positions_every_seconds: 300',
    '  notifications: false',
    'rate_limits:',
    `  global: { requests: ${c.global}, per_seconds: 60 }`,
    `  schedule_cancel: { requests: ${c.scheduleCancel}, per_seconds: 60 }`,
    `  exchange: { requests: ${c.exchange}, per_seconds: 60 }`,
    ...(c.shared === undefined ? [] : [`  shared: { name: agree, redis_url: "redis://127.0.0.1:1", fallback_share: ${c.shared} }`]),
    'accounts:',
  ];
  c.accounts.forEach((a, i) => {
    const longest = a.deadline - a.minHorizon - 12;
    const rearm = Math.max(1, Math.floor(1 + a.rearmShare * (longest - 1)));
    env[`K${i}`] = benchKey(i);
    lines.push(
      `  - name: p${i}`,
      `    address: "${addresses[i]}"`,
      `    master_key: { env: K${i} }`,
      `    priority: ${a.priority}`,
      `    switch: { deadline_seconds: ${a.deadline}, min_horizon_seconds: ${a.minHorizon}, rearm_every_seconds: ${rearm}, path: ${a.path} }`,
    );
  });
  return { text: lines.join('\n'), env };
}

describe('check-config and /status agree', () => {
  it('on random configs: every account\'s period, route and verdict, the tier, stretch, arms, read stretch and share', async () => {
    let fallbacks = 0;
    await fc.assert(
      fc.asyncProperty(configArb, async (drawn) => {
        const { text, env } = yamlOf(drawn);
        const config = await parse(text, env);
        const plan = buildPlan(config);
        const app = toAppConfig(config, env);
        const addresses = benchAddresses(drawn.accounts.length);
        h = await startHarness({
          sim: {
            accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
            // The venue never refuses: a 429 would teach the keeper a tighter limit than the config's.
            rateLimits: { global: { limit: 1_000_000, windowSeconds: 60 }, scheduleCancel: { limit: 1_000_000, windowSeconds: 60 } },
          },
          accounts: () => app.keeper.accounts,
          rateLimits: { global: drawn.global, scheduleCancel: drawn.scheduleCancel, exchange: drawn.exchange },
          watch: app.keeper.watch,
          ...(drawn.shared === undefined ? {} : { sharedFallbackShare: drawn.shared }),
        });
        await h.keeper.start();
        // Past the cold start (its longest periods end with it): approvals and first arms at the
        // smallest budget drawn take a few minutes of virtual time.
        const settled = (): boolean => {
          const st = h!.keeper.status();
          return st.cadence?.cold_start === false && st.accounts.every((a) => a.armed || a.plan?.verdict === 'over_budget');
        };
        for (let t = 0; t < 900 && !settled(); t++) await h.advance(1_000);
        // Every account armed, or left over_budget by the plan: none lapsed on a plan that promised it.
        expect(settled(), JSON.stringify(h.keeper.status().accounts.map((a) => [a.name, a.armed, a.plan, a.horizon_seconds]))).toBe(true);
        await h.advance(5_000);
        const status = h.keeper.status();
        const c = status.cadence!;
        expect(c.cold_start).toBe(false);
        expect(c.tier).toBe(plan.tier);
        expect(c.stretch).toBeCloseTo(plan.cadence.stretch, 3);
        expect(c.arms_per_second).toBeCloseTo(plan.armsPerMinute / 60, 3);
        // The read stretch is planned on where the reads go now. check-config plans the service
        // answering; under service_then_venue an account whose last orders came from the venue (a
        // service read shed on a tiny budget, then read on the venue) adds venue weight, never less.
        const fallenBack = drawn.source === 'service_then_venue' && status.accounts.some((a) => a.orders_source === 'venue');
        // The keeper hands out a new read stretch only when it moved by more than the tolerance (so
        // the watchers are not re-timed every second): equal within it.
        const wantReads = Math.min(MAX_READ_STRETCH, plan.readStretch);
        if (fallenBack) expect(c.read_stretch).toBeGreaterThanOrEqual(wantReads * (1 - BUDGET_CHANGE_TOLERANCE) - 1e-3);
        else expect(Math.abs(c.read_stretch - wantReads)).toBeLessThanOrEqual(wantReads * BUDGET_CHANGE_TOLERANCE + 1e-3);
        fallbacks += fallenBack ? 1 : 0;
        expect(c.budget_share).toBeCloseTo(plan.budgetShare, 3);
        for (const want of plan.accounts) {
          const got = status.accounts.find((a) => a.name === want.name)!;
          expect({ name: want.name, route: got.plan?.route, verdict: got.plan?.verdict }).toEqual({ name: want.name, route: want.route, verdict: want.verdict });
          if (want.effectivePeriodSeconds !== null) expect(got.rearm_every_seconds).toBeCloseTo(want.effectivePeriodSeconds, 3);
        }
        await h.close();
        h = undefined;
      }),
      { numRuns: 60, seed: Number(process.env.PLAN_SEED ?? 20261126) },
    );
    // Most runs compare the read stretch exactly.
    expect(fallbacks).toBeLessThan(30);
  }, 300_000);
});
