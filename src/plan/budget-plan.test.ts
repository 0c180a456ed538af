import { describe, expect, it } from 'vitest';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';
import { planBudget, type PlanAccount } from './budget-plan.js';

const SW = { rearmEveryMs: 10_000, deadlineMs: 60_000, minHorizonMs: 20_000, priority: 0, venue: HYPERLIQUID_SWITCH_FACTS };
const acct = (path: PlanAccount['path'], over: Partial<PlanAccount> = {}): PlanAccount => ({ ...SW, path, ...over });

describe('planBudget', () => {
  it('fixed-route accounts fit their own route, not only the pool of both', () => {
    // REST 0.05/s, exchange 1/s: the pool carries 1.05/s, but the two REST accounts can only use
    // REST's. Planned on the pool they kept 10 s periods (0.2/s on REST) and lapsed.
    const plan = planBudget({ accounts: [acct('rest'), acct('rest'), acct('exchange')], limits: { rest: 0.05, exchange: 1 }, provisioning: null })!;
    const restRate = plan.periodsMs.slice(0, 2).reduce<number>((s, p) => s + (p ? 1000 / p : 0), 0);
    expect(restRate).toBeLessThanOrEqual(0.05 * 0.97 + 1e-9);
    expect(plan.armsByScope.rest).toBeCloseTo(restRate, 9);
    // One common stretch for all: the exchange account is stretched with them (armed, not dropped).
    expect(plan.verdicts[2]).not.toBe('over_budget');
  });

  it('rest_then_exchange accounts fill what REST leaves; the rest are counted on the exchange scope', () => {
    const plan = planBudget({ accounts: [acct('rest_then_exchange'), acct('rest_then_exchange'), acct('rest_then_exchange')], limits: { rest: 0.25, exchange: 1 }, provisioning: null })!;
    expect(plan.routes).toEqual(['rest', 'rest', 'exchange']);
    expect(plan.armsByScope).toEqual({ global: 0.30000000000000004, rest: 0.2, exchange: 0.1 });
  });

  it('150,000 accounts, stretched and over budget, cold start and steady :: planned (Math.max over every account ran out of stack past ~120,000)', () => {
    const many = Array.from({ length: 150_000 }, (_, i) => acct('rest', { rearmEveryMs: 15_000, deadlineMs: 279_000, priority: i % 2 }));
    for (const provisioning of [null, { approvalsLeft: 150_000, firstArmsLeft: 150_000 }]) {
      const fits = planBudget({ accounts: many, limits: { global: 2_400, rest: 600, exchange: 600 }, provisioning })!;
      expect(fits.tier).toBe(provisioning ? 'configured' : 'stretched');
      expect(fits.armsPerSecond).toBeLessThanOrEqual(600 * 0.97 + 1e-9);
      const short = planBudget({ accounts: many, limits: { global: 800, rest: 200, exchange: 200 }, provisioning })!;
      expect(short.verdicts.filter((v) => v === 'over_budget').length).toBeGreaterThan(0);
      expect(short.stretch).toBeGreaterThan(1);
    }
  });

  it('the cold start: interleaved on windows of their own, just in time on one shared window at scale', () => {
    const many = Array.from({ length: 10_000 }, () => acct('rest', { rearmEveryMs: 15_000, deadlineMs: 125_000 }));
    const own = planBudget({ accounts: many, limits: { global: 400, rest: 100, exchange: 100 }, provisioning: { approvalsLeft: 10_000, firstArmsLeft: 10_000 } })!;
    expect(own.coldStart).toMatchObject({ order: 'interleaved', windowPerSecond: 0, longestPeriods: true });
    // First arms right behind the approvals, at the arms' usable pace: 10,000 / 97.
    expect(own.coldStart.estimateSeconds).toBeCloseTo(10_000 / 97, 6);
    const one = planBudget({ accounts: many, limits: { global: 100, rest: 100, exchange: 100 }, provisioning: { approvalsLeft: 10_000, firstArmsLeft: 10_000 } })!;
    expect(one.coldStart).toMatchObject({ order: 'just_in_time', windowPerSecond: 97 });
    expect(one.coldStart.estimateSeconds).toBeCloseTo(20_000 / 97, 6);
  });

  it('a cold start keeps the order it began with, whatever the accounts left would choose', () => {
    const few = Array.from({ length: 180 }, () => acct('rest', { rearmEveryMs: 5_000, deadlineMs: 20_000, minHorizonMs: 8_000 }));
    const limits = { global: 20, rest: 20 };
    const begun = planBudget({ accounts: few, limits, provisioning: { approvalsLeft: 180, firstArmsLeft: 180 } })!;
    expect(begun.coldStart).toMatchObject({ order: 'just_in_time', chosen: true });
    // Late in it, with 10 accounts left, a fresh choice would be interleaved; the kept one holds.
    expect(planBudget({ accounts: few, limits, provisioning: { approvalsLeft: 10, firstArmsLeft: 10 } })!.coldStart.order).toBe('interleaved');
    expect(planBudget({ accounts: few, limits, provisioning: { approvalsLeft: 10, firstArmsLeft: 10, order: begun.coldStart.order } })!.coldStart.order).toBe('just_in_time');
  });

  it('no limit known on any route the accounts use: no plan', () => {
    expect(planBudget({ accounts: [acct('rest')], limits: { exchange: 1 }, provisioning: null })).toBeNull();
  });
});
