/**
 * The horizon's formulas held to one another (src/plan/horizon.ts). Over random switch timings and
 * request timeouts, in and around the ranges the config rules accept, and arm budgets from roomy to
 * far too small:
 * - the config rules accept exactly the timings the module's re-arm rule accepts;
 * - for every accepted config, the keeper's path (toAppConfig -> CadenceControl -> the switch's
 *   settings) and check-config's path (buildPlan) give the same period and verdict per account,
 *   and check-config's retry count is the module's;
 * - the plan's period lets the switch re-arm before its latest re-arm time, the horizon at that
 *   latest time still passes readiness, and readiness is passable by the planned cadence (with the
 *   plan's lag allowance when the budget kept it); no period plans past the venue's minimum lead.
 */
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import { toAppConfig } from '../src/app/from-config.js';
import { ConfigError } from '../src/config/errors.js';
import { buildPlan } from '../src/cli/check-config-plan.js';
import { parse } from '../src/config/test-support.js';
import { CadenceControl } from '../src/account/cadence-control.js';
import { latestRearmAfterMs } from '../src/switch/switch-machine.js';
import { createMetrics } from '../src/obs/metrics.js';
import {
  cancelSoonBaseLeadMs,
  keepsMinHorizon,
  LAG_ALLOWANCE_MS,
  leaveByAtMs,
  minDeadlineSeconds,
  rearmLeavesRetries,
  rearmReserveMs,
  RETRIES_BEFORE_MIN_HORIZON,
  retriesThatFit,
  shortHorizonFloorMs,
} from '../src/plan/horizon.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../src/venue/facts.js';

/** The one venue we speak: the facts the port hands the switch and the plan. */
const LEAD_MS = HYPERLIQUID_SWITCH_FACTS.minLeadMs;
const MIN_DEADLINE_SECONDS = minDeadlineSeconds(LEAD_MS);

/** One account's switch, drawn so that many land on each side of the rules. */
const switchArb = fc
  .record({
    deadline: fc.integer({ min: MIN_DEADLINE_SECONDS - 2, max: 300 }),
    // A min_horizon near the deadline with the shortest rearm leaves little margin: short_horizon plans.
    minShare: fc.oneof(fc.double({ min: 0, max: 1.05, noNaN: true }), fc.double({ min: 0.7, max: 1, noNaN: true })),
    rearmShare: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(0)),
  })
  .map(({ deadline, minShare, rearmShare }) => {
    const minHorizon = Math.max(1, Math.floor(minShare * deadline));
    const rearm = Math.max(1, Math.floor(1 + rearmShare * Math.max(0, deadline - minHorizon - 1)));
    return { deadline, minHorizon, rearm };
  });
type Drawn = { accounts: Array<{ deadline: number; minHorizon: number; rearm: number }>; timeoutMs: number; scheduleCancelPerMinute: number };

const configArb: fc.Arbitrary<Drawn> = fc.record({
  accounts: fc.array(switchArb, { minLength: 1, maxLength: 3 }),
  timeoutMs: fc.integer({ min: 100, max: 15_000 }),
  // From roomy to far too small: configured, stretched, reserve, short_horizon and over_budget plans.
  scheduleCancelPerMinute: fc.constantFrom(600, 12, 6, 3, 2, 1),
});

function yamlOf(c: Drawn): { text: string; env: Record<string, string> } {
  const addresses = benchAddresses(c.accounts.length);
  const env: Record<string, string> = {};
  const lines = [
    'venue:',
    '  base_url: https://svc.example.com',
    `  request_timeout_ms: ${c.timeoutMs}`,
    'rate_limits:',
    '  global: { requests: 1200, per_seconds: 60 }',
    `  schedule_cancel: { requests: ${c.scheduleCancelPerMinute}, per_seconds: 60 }`,
    '  exchange: { requests: 1200, per_seconds: 60 }',
    // The top level is checked too: the first account's timing, not the defaults (which a long timeout refuses).
    `switch: { deadline_seconds: ${c.accounts[0]!.deadline}, min_horizon_seconds: ${c.accounts[0]!.minHorizon}, rearm_every_seconds: ${c.accounts[0]!.rearm} }`,
    'accounts:',
  ];
  c.accounts.forEach((a, i) => {
    env[`K${i}`] = benchKey(i);
    lines.push(
      `  - name: h${i}`,
      `    address: "${addresses[i]}"`,
      `    master_key: { env: K${i} }`,
      `    switch: { deadline_seconds: ${a.deadline}, min_horizon_seconds: ${a.minHorizon}, rearm_every_seconds: ${a.rearm} }`,
    );
  });
  return { text: lines.join('\n'), env };
}

/** What the module's rules say of a drawn switch (the config rules must say the same). */
function moduleAccepts(a: Drawn['accounts'][number], timeoutMs: number): boolean {
  if (a.deadline < MIN_DEADLINE_SECONDS || a.minHorizon >= a.deadline) return false;
  return rearmLeavesRetries({ deadlineSeconds: a.deadline, rearmEverySeconds: a.rearm, minHorizonSeconds: a.minHorizon }, timeoutMs);
}

describe('the horizon: rules, plan, switch, readiness and check-config agree', () => {
  it('on random timings and budgets', async () => {
    let accepted = 0;
    let tight = 0;
    const tiers = new Map<string, number>();
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(configArb, async (drawn) => {
        runs++;
        const { text, env } = yamlOf(drawn);
        let config;
        try {
          config = await parse(text, env);
        } catch (e) {
          if (!(e instanceof ConfigError)) throw e;
          // Refused: by a timing rule, and the module's rules refuse one of its accounts too.
          expect(e.problems.map((p) => p.path).filter((p) => !/^(accounts\[\d+\]\.)?switch\.(deadline|min_horizon|rearm_every)_seconds$/.test(p))).toEqual([]);
          expect(drawn.accounts.some((a) => !moduleAccepts(a, drawn.timeoutMs))).toBe(true);
          return;
        }
        accepted++;
        for (const a of drawn.accounts) expect(moduleAccepts(a, drawn.timeoutMs)).toBe(true);

        // check-config's path
        const plan = buildPlan(config);
        tiers.set(plan.tier, (tiers.get(plan.tier) ?? 0) + 1);
        // the keeper's path: its cadence control on the configured limits, and the switch's settings
        const app = toAppConfig(config, env);
        const scopes: Record<string, { limit: number; windowMs: number }> = {
          global: { limit: 1200, windowMs: 60_000 },
          schedule_cancel: { limit: drawn.scheduleCancelPerMinute, windowMs: 60_000 },
          exchange: { limit: 1200, windowMs: 60_000 },
        };
        const cadence = new CadenceControl({
          venue: { switchFacts: HYPERLIQUID_SWITCH_FACTS },
          scheduler: { specOf: (scope) => scopes[scope], queuedOn: () => 0, achievedOn: () => false },
          metrics: createMetrics({ version: 't', defaultMetrics: false }),
          logger: pino({ level: 'silent' }),
        });
        cadence.apply(app.keeper, []);

        app.keeper.accounts.forEach((spec, i) => {
          const line = plan.accounts[i]!;
          const settings = cadence.effectiveSettings(spec);
          expect(line.name).toBe(spec.name);
          // the same figures on both paths
          expect(cadence.accountPlan(spec.name)?.verdict).toBe(line.verdict);
          expect(settings.overBudget ? null : settings.rearmEveryMs / 1000).toBe(line.effectivePeriodSeconds);
          expect(line.retriesThatFit).toBe(retriesThatFit(config.accounts[i]!.switch, config.venue.requestTimeoutMs));
          // the rule accepted it: its retries fit before min_horizon
          expect(line.retriesThatFit).toBeGreaterThanOrEqual(RETRIES_BEFORE_MIN_HORIZON);
          if (settings.overBudget) return;

          const D = settings.deadlineMs;
          const M = settings.minHorizonMs;
          const P = settings.rearmEveryMs;
          // never planned below min_horizon and the short-horizon floor both (the rules accept a
          // min_horizon under the floor; tier `reserve` then plans down to it); a cancel-soon arm is
          // nearer than any deadline
          expect(D - P).toBeGreaterThanOrEqual(Math.min(M, shortHorizonFloorMs(LEAD_MS)));
          expect(cancelSoonBaseLeadMs(LEAD_MS)).toBeLessThan(D);
          if (line.verdict !== 'keeps_min_horizon') {
            tight++;
            return;
          }
          // readiness is passable by the planned cadence: just before each planned re-arm
          expect(keepsMinHorizon(D - P, M)).toBe(true);
          if (plan.tier === 'configured' || plan.tier === 'stretched') expect(keepsMinHorizon(D - P - LAG_ALLOWANCE_MS, M)).toBe(true);
          // the switch re-arms on plan before its latest re-arm time, not held there by the period
          expect(D - M - rearmReserveMs(settings)).toBeGreaterThanOrEqual(P);
          expect(latestRearmAfterMs(settings)).toBeGreaterThanOrEqual(P);
          // and its latest re-arm still leaves readiness passing (the leave-by time is the same instant)
          expect(keepsMinHorizon(D - latestRearmAfterMs(settings), M)).toBe(true);
          expect(leaveByAtMs(1_000_000 + D, settings)).toBe(1_000_000 + latestRearmAfterMs(settings));
        });
      }),
      { numRuns: 300 },
    );
    // not vacuous: both sides of the rules, and plans that could not keep every horizon
    expect(accepted).toBeGreaterThan(runs / 5);
    expect(accepted).toBeLessThan(runs);
    expect(tight).toBeGreaterThan(0);
    expect([...tiers.keys()]).toEqual(expect.arrayContaining(['configured', 'stretched', 'reserve']));
  }, 120_000);
});
