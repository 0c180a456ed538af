import { describe, expect, it } from 'vitest';
import type { AccountState } from '../account/keeper-types.js';
import type { KeeperMetrics } from '../obs/metrics.js';
import { publishAccountGauges, readinessOf, type ViewInput } from './views.js';

/** An account as readiness reads it: a runner with a horizon (null: not armed), or none (not provisioned). */
function acct(name: string, horizonMs: number | null | 'unprovisioned'): AccountState {
  const runner = horizonMs === 'unprovisioned' ? undefined : { horizonMs: () => horizonMs, shouldBeArmed: () => true };
  return { spec: { name, switch: { minHorizonMs: 20_000 } }, runner, provisionError: undefined } as unknown as AccountState;
}

function view(accounts: AccountState[], overBudget: string[] = []): ViewInput {
  return {
    state: 'running',
    accounts,
    cadence: { isOverBudget: (n: string) => overBudget.includes(n) },
  } as unknown as ViewInput;
}

describe('readinessOf', () => {
  const accounts = [acct('a', 45_000), acct('b', 10_000), acct('c', null), acct('d', 'unprovisioned'), acct('e', 30_000)];

  it('lists every fault, in account order', () => {
    const r = readinessOf(view(accounts, ['e']));
    expect(r.ready).toBe(false);
    expect(r.faults.map((f) => [f.account, f.problem.split(':')[0]])).toEqual([
      ['b', 'horizon 10.0 s below 20 s'],
      ['c', 'not armed'],
      ['d', 'not provisioned'],
      ['e', 'over_budget'],
    ]);
  });

  it('stops at maxFaults with the same verdict (what /status asks for)', () => {
    for (const over of [[], ['e'], ['a']]) {
      const all = readinessOf(view(accounts, over));
      const first = readinessOf(view(accounts, over), 1);
      expect(first.ready).toBe(all.ready);
      expect(first.faults).toEqual(all.faults.slice(0, 1));
    }
    const healthy = [acct('a', 45_000), acct('e', 30_000)];
    expect(readinessOf(view(healthy), 1)).toEqual({ ready: true, faults: [] });
  });
});

describe('publishAccountGauges', () => {
  it('sets each account in steps of perStep accounts, reading the venue clock afresh at each step', () => {
    const set: Array<[string, string, number]> = [];
    const family = (metric: string) => ({ set: (l: { account: string }, v: number) => set.push([metric, l.account, v]) });
    const metrics = Object.fromEntries(['armed', 'horizon', 'deadline', 'shouldBeArmed', 'minHorizonConfigured', 'deadlineConfigured'].map((k) => [k, family(k)])) as unknown as KeeperMetrics;
    const accounts = [1, 2, 3, 4, 5].map(
      (i) => ({ spec: { name: `a${i}`, switch: { minHorizonMs: 20_000, deadlineMs: 60_000, armWhen: 'always' } }, runner: { snapshot: () => ({ deadlineMs: 100_000 }), shouldBeArmed: () => true }, provisioned: {} }) as unknown as AccountState,
    );
    let now = 40_000;
    const steps = publishAccountGauges(metrics, accounts, () => now, 2);
    const horizons = (): number[] => set.filter(([m]) => m === 'horizon').map(([, , v]) => v);
    steps.next();
    expect(horizons()).toEqual([60, 60]);
    now = 50_000; // an account re-armed or time passed between two steps: the next step reads it afresh
    steps.next();
    expect(horizons()).toEqual([60, 60, 50, 50]);
    expect(steps.next().done).toBe(true);
    expect(horizons()).toEqual([60, 60, 50, 50, 50]);
  });
});
