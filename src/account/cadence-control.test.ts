import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../obs/metrics.js';
import { CadenceControl, HAND_OUT_SLICE } from './cadence-control.js';
import type { AccountState, KeeperAccountSpec, KeeperOptions } from './keeper-types.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';

const SWITCH = { deadlineMs: 60_000, rearmEveryMs: 15_000, minHorizonMs: 20_000, armWhen: 'always', onShutdown: 'keep', path: 'rest' } as const;

/** Account `i` of a test: the SWITCH timing on `path`. */
function accountSpec(i: number, path: KeeperAccountSpec['switch']['path'] = 'rest'): KeeperAccountSpec {
  return { name: `a${i}`, address: `0x${String(i).padStart(40, '0')}`, agentName: 'k', validDays: 30, switch: { ...SWITCH, path }, identity: `a${i}` } as KeeperAccountSpec;
}

/** Keeper options holding `accounts`, reads every 30 s and 60 s. */
function optionsFor(accounts: KeeperAccountSpec[]): KeeperOptions {
  return { network: 'testnet', accounts, watch: { ordersEveryMs: 30_000, positionsEveryMs: 60_000, notifications: false }, maxClockSkewMs: 2_000, triggerWarnAt: 8 } as KeeperOptions;
}

type ControlDeps = ConstructorParameters<typeof CadenceControl>[0];

/** A cadence control on fixed scopes (requests per window), no pace achieved; nothing queued unless `queuedOn` says. */
function controlOn(specOf: ControlDeps['scheduler']['specOf'], more: { queuedOn?: ControlDeps['scheduler']['queuedOn']; sharedDemand?: ControlDeps['sharedDemand'] } = {}) {
  return new CadenceControl({
    venue: { switchFacts: HYPERLIQUID_SWITCH_FACTS },
    scheduler: { specOf, queuedOn: more.queuedOn ?? (() => 0), achievedOn: () => false },
    metrics: createMetrics({ version: 't', defaultMetrics: false }),
    logger: pino({ level: 'silent' }),
    ...(more.sharedDemand ? { sharedDemand: more.sharedDemand } : {}),
  });
}

function control(queued: () => number) {
  const c = controlOn(() => ({ limit: 6_000, windowMs: 60_000 }), { queuedOn: (scope) => (scope === 'schedule_cancel' ? queued() : 0) });
  const options = optionsFor(Array.from({ length: 100 }, (_, i) => accountSpec(i)));
  c.apply(options, []);
  return c;
}

describe('CadenceControl.claimSlot', () => {
  it('never hands a re-arm a slot the queued arms will still be using', () => {
    let queued = 0;
    const c = control(() => queued);
    const now = 1_000_000;
    // nothing queued: the latest free slot at or before the wish
    expect(c.claimSlot(now + 15_000, now)).toBeLessThanOrEqual(now + 15_000);
    expect(c.claimSlot(now + 15_000, now)).toBeGreaterThan(now + 14_000);
    // 500 arms queued at 100/s drain in 5 s: every slot claimed lies after that
    queued = 500;
    for (let i = 0; i < 200; i++) expect(c.claimSlot(now + 6_000, now)).toBeGreaterThanOrEqual(now + 5_000);
    // when no slot is left between the drain and the wish, the wish itself (unclaimed)
    queued = 2_000;
    expect(c.claimSlot(now + 6_000, now)).toBe(now + 6_000);
  });
});

describe('CadenceControl.claimSlot after a cold start faster than the calendar', () => {
  it('never pulls a re-arm more than a tenth of its period before its wish', () => {
    // First arms at the whole budget (100/s), the calendar spaced at 97/s: each round of wishes
    // outruns the slots, and "latest free slot" walked below the whole packed run, handing freshly
    // armed accounts slots seconds after their first arm.
    const c = control(() => 0);
    const now = 1_000_000;
    let earliest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5_000; i++) {
      const wish = now + 15_000 + i * 10;
      earliest = Math.min(earliest, c.claimSlot(wish, now, 'a0') - wish);
    }
    expect(earliest).toBeGreaterThanOrEqual(-1_500);
  });
});

describe('CadenceControl routes with a shared budget', () => {
  it("plans rest_then_exchange accounts on this instance's REST limits as they are: the shared budget already cut them to its share", () => {
    // This instance's scopes after the shared budget cut them to its half: schedule_cancel 10/s
    // (600 of the whole 1,200 per minute), exchange and global ample.
    const specs: Record<string, { limit: number; windowMs: number }> = {
      schedule_cancel: { limit: 600, windowMs: 60_000 },
      exchange: { limit: 6_000, windowMs: 60_000 },
      global: { limit: 12_000, windowMs: 60_000 },
    };
    const c = controlOn((scope) => specs[scope], { sharedDemand: { publishDemand: () => undefined, share: () => 0.5 } });
    // 100 accounts at 15 s: 6.7 arms a second, inside the 10/s REST limit this instance has.
    const options = optionsFor(Array.from({ length: 100 }, (_, i) => accountSpec(i, 'rest_then_exchange')));
    c.apply(options, []);
    expect(c.view()!.budget_share).toBe(0.5);
    expect(c.view()!.routes).toEqual({ rest: 100, exchange: 0 });
  });
});

describe('CadenceControl hands a new plan to the runners in slices', () => {
  /** `n` accounts on a 24,000-per-minute budget, each with a runner that records the periods it is handed. */
  function fleet(n: number) {
    let perMinute = 24_000;
    const c = controlOn(() => ({ limit: perMinute, windowMs: 60_000 }));
    const specs = Array.from({ length: n }, (_, i) => accountSpec(i));
    const options = optionsFor(specs);
    const handed: number[][] = specs.map(() => []);
    const accounts = specs.map((spec, i) => {
      let settings = { ...spec.switch, rearmEveryMs: 1 };
      const runner = {
        snapshot: () => ({ openOrders: null }),
        currentSettings: () => settings,
        updateSettings: (s: typeof settings) => {
          settings = s;
          handed[i]!.push(s.rearmEveryMs);
        },
      };
      return { spec, runner, removed: false } as unknown as AccountState;
    });
    return { c, options, accounts, handed, setBudget: (x: number) => (perMinute = x) };
  }
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it(`the first ${HAND_OUT_SLICE} at once, the next ${HAND_OUT_SLICE} a turn later; at most one slice for a small keeper`, async () => {
    const f = fleet(2.5 * HAND_OUT_SLICE);
    f.c.apply(f.options, f.accounts);
    const given = () => f.handed.filter((h) => h.length > 0).length;
    expect(given()).toBe(HAND_OUT_SLICE);
    await turn();
    expect(given()).toBe(2 * HAND_OUT_SLICE);
    await turn();
    expect(given()).toBe(2.5 * HAND_OUT_SLICE);
    // one plan, one period for all
    expect(new Set(f.handed.map((h) => h.at(-1)))).toEqual(new Set([f.handed[0]!.at(-1)]));
    const small = fleet(HAND_OUT_SLICE);
    small.c.apply(small.options, small.accounts);
    expect(small.handed.every((h) => h.length === 1)).toBe(true);
  });

  it('a plan made mid-way supersedes what is left of the one before: no runner is handed the older period after the newer one', async () => {
    const f = fleet(3 * HAND_OUT_SLICE);
    f.c.apply(f.options, f.accounts);
    const first = f.handed[0]![0]!;
    f.setBudget(18_000); // 6,000 accounts on 300/s: stretched from 15.5 s to 20.6 s
    f.c.apply(f.options, f.accounts);
    for (let i = 0; i < 4; i++) await turn();
    const second = f.handed[0]!.at(-1)!;
    expect(second).toBeGreaterThan(first);
    // every runner ends on the newer period; the ones the first plan had not reached never saw it
    expect(f.handed.every((h) => h.at(-1) === second)).toBe(true);
    expect(f.handed.slice(HAND_OUT_SLICE).every((h) => h.length === 1)).toBe(true);
  });
});

describe('CadenceControl.armBudget', () => {
  it('follows the accounts list it is given: a reload that adds an exchange account adds the exchange route', () => {
    const specs: Record<string, { limit: number; windowMs: number }> = {
      schedule_cancel: { limit: 600, windowMs: 60_000 },
      exchange: { limit: 300, windowMs: 60_000 },
      global: { limit: 12_000, windowMs: 60_000 },
    };
    const c = controlOn((scope) => specs[scope]);
    const rest = optionsFor([accountSpec(0), accountSpec(1)]);
    expect(c.armBudget(rest)).toBe(10);
    expect(c.armBudget(rest)).toBe(10);
    expect(c.armBudget(optionsFor([accountSpec(0), accountSpec(1, 'exchange')]))).toBe(15);
    expect(c.armBudget(rest)).toBe(10);
  });
});
