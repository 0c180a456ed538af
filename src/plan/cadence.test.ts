import { describe, expect, it } from 'vitest';
import { armCapacityPerSecond, assignRoutes, planCadence, planProtection } from './cadence.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';
import { LAG_ALLOWANCE_MS, longestSafePeriodMs, shortHorizonFloorMs } from './horizon.js';
import { TIMER_SLACK_MS } from '../time/clock.js';

const acct = (rearmEveryMs = 15_000, deadlineMs = 60_000, minHorizonMs = 20_000) => ({ rearmEveryMs, deadlineMs, minHorizonMs });
const many = (n: number, a = acct()) => Array.from({ length: n }, () => a);

describe('the lag allowance', () => {
  it('holds the real clock\'s timer slack ten times over', () => {
    expect(TIMER_SLACK_MS * 10).toBeLessThanOrEqual(LAG_ALLOWANCE_MS);
  });
});

describe('planCadence', () => {
  it('keeps the configured cadence while it fits the budget', () => {
    const p = planCadence(many(100), 10); // 100 / 15 s = 6.7 arms/s <= 9.7
    expect(p.stretch).toBe(1);
    expect(p.periodsMs.every((x) => x === 15_000)).toBe(true);
    expect(p.holds).toBe(true);
  });

  it('stretches every period by one factor when the count approaches the budget', () => {
    const p = planCadence(many(300), 10); // 300 / 15 s = 20 arms/s > 9.7
    expect(p.stretch).toBeGreaterThan(1);
    expect(p.armsPerSecond).toBeLessThanOrEqual(p.usablePerSecond + 1e-9);
    expect(p.armsPerSecond).toBeGreaterThan(p.usablePerSecond * 0.99); // no needless slack
    const period = p.periodsMs[0]!;
    expect(period).toBeGreaterThan(15_000);
    expect(period).toBeLessThanOrEqual(longestSafePeriodMs(acct()));
    expect(new Set(p.periodsMs).size).toBe(1);
  });

  it('never stretches past the margin: horizon at the next arm stays >= min_horizon + lag allowance', () => {
    const p = planCadence(many(1000), 10);
    expect(p.holds).toBe(false);
    for (const period of p.periodsMs) expect(60_000 - period).toBeGreaterThanOrEqual(20_000 + LAG_ALLOWANCE_MS);
  });

  it('reports the effective capacity: budget x longest period', () => {
    const p = planCadence(many(10), 10);
    // 9.7 usable arms/s x 39 s
    expect(p.capacityAccounts).toBe(Math.floor(9.7 * 39));
    // 0.95 of the theoretical B x (deadline - min_horizon) = 10 x 40 = 400
    expect(p.capacityAccounts / 400).toBeGreaterThanOrEqual(0.94);
  });

  it('stretches mixed accounts proportionally, each capped at its own margin', () => {
    const fast = acct(5_000, 30_000, 10_000); // max period 19 s
    const slow = acct(15_000, 60_000, 20_000); // max period 39 s
    const p = planCadence([...many(100, fast), ...many(100, slow)], 10);
    expect(p.holds).toBe(true);
    const [f, s] = [p.periodsMs[0]!, p.periodsMs[150]!];
    expect(f).toBeLessThanOrEqual(19_000);
    expect(s).toBeLessThanOrEqual(39_000);
    expect(p.armsPerSecond).toBeLessThanOrEqual(p.usablePerSecond + 1e-9);
  });

  it('an empty account list is trivially held', () => {
    expect(planCadence([], 10)).toMatchObject({ stretch: 1, holds: true, periodsMs: [] });
  });
});

describe('planProtection: never refuse to protect', () => {
  // The figures: B = 20 arms/s, deadline 20 s, min horizon 8 s, configured every 10 s.
  const a = (priority = 0, noOpenOrders = false) => ({ rearmEveryMs: 10_000, deadlineMs: 20_000, minHorizonMs: 8_000, priority, noOpenOrders, venue: HYPERLIQUID_SWITCH_FACTS });
  const n = (count: number) => Array.from({ length: count }, () => a());
  const rate = (p: { periodsMs: Array<number | null> }) => p.periodsMs.reduce<number>((s, x) => s + (x === null ? 0 : 1000 / x), 0);

  it('228 accounts (0.95 of B x (deadline - min_horizon)): every one keeps its min horizon', () => {
    const p = planProtection(n(228), 20);
    expect(['stretched', 'reserve']).toContain(p.tier);
    expect(p.verdicts.every((v) => v === 'keeps_min_horizon')).toBe(true);
    expect(rate(p)).toBeLessThanOrEqual(p.usablePerSecond + 1e-9);
    for (const period of p.periodsMs) expect(20_000 - period!).toBeGreaterThanOrEqual(8_000);
  });

  it('270 accounts (past that, within B x (deadline - 5 s)): every one armed, horizons short, no deadline can pass', () => {
    const p = planProtection(n(270), 20);
    expect(p.tier).toBe('short_horizon');
    expect(p.verdicts.every((v) => v === 'short_horizon')).toBe(true);
    for (const period of p.periodsMs) expect(20_000 - period!).toBeGreaterThanOrEqual(shortHorizonFloorMs(HYPERLIQUID_SWITCH_FACTS.minLeadMs));
    expect(rate(p)).toBeLessThanOrEqual(p.usablePerSecond + 1e-9);
  });

  it('400 accounts: the highest priority are held, the rest over_budget; no open orders goes last', () => {
    const accounts = [...n(398), a(5), a(9, true)];
    const p = planProtection(accounts, 20);
    expect(p.tier).toBe('over_budget');
    const held = p.verdicts.filter((v) => v !== 'over_budget').length;
    expect(held).toBeGreaterThan(200);
    expect(held).toBeLessThan(400);
    expect(p.verdicts[398]).not.toBe('over_budget'); // priority 5
    expect(p.verdicts[399]).toBe('over_budget'); // priority 9, but known to have no open orders
    expect(p.verdicts[0]).not.toBe('over_budget'); // config order among equals
    expect(p.verdicts[397]).toBe('over_budget');
    expect(rate(p)).toBeLessThanOrEqual(p.usablePerSecond + 1e-9);
    p.periodsMs.forEach((x, i) => expect(x === null).toBe(p.verdicts[i] === 'over_budget'));
  });

  it("keepMargins (a pace the keeper achieved, not the venue's limit): no reserve or short horizons; whoever does not fit at the longest safe period is over_budget, lowest priority first", () => {
    // 270 accounts: without it, everyone armed on short horizons (the test above).
    const accounts = [...Array.from({ length: 100 }, () => a(0)), ...Array.from({ length: 170 }, () => a(1))];
    const p = planProtection(accounts, 20, true);
    expect(p.tier).toBe('over_budget');
    expect(p.verdicts.filter((v) => v === 'short_horizon')).toEqual([]);
    const held = p.verdicts.flatMap((v, i) => (v === 'over_budget' ? [] : [i]));
    // B x (deadline - min horizon - margins): fewer than 228 held, every priority-1 account among them.
    expect(held.length).toBeGreaterThan(170);
    expect(held.length).toBeLessThan(228);
    expect(held.filter((i) => i >= 100)).toHaveLength(170);
    for (const i of held) expect(20_000 - p.periodsMs[i]!).toBeGreaterThanOrEqual(8_000);
    expect(rate(p)).toBeLessThanOrEqual(p.usablePerSecond + 1e-9);
    // Within the margins it changes nothing.
    expect(planProtection(n(170), 20, true).verdicts.every((v) => v === 'keeps_min_horizon')).toBe(true);
    expect(planProtection(n(100), 20, true)).toMatchObject({ tier: 'configured', stretch: 1 });
  });

  it('within the budget nothing changes', () => {
    const p = planProtection(n(100), 20);
    expect(p).toMatchObject({ tier: 'configured', stretch: 1 });
    expect(p.periodsMs.every((x) => x === 10_000)).toBe(true);
  });
});

describe('armCapacityPerSecond: the budget over the routes the accounts may use', () => {
  const b = { global: 20, rest: 1, exchange: 20 };
  it('REST-only accounts get the REST route, capped by the combined window', () => {
    expect(armCapacityPerSecond(['rest'], b)).toBe(1);
    expect(armCapacityPerSecond(['rest'], { global: 10, rest: 20 })).toBe(10);
  });
  it('rest_then_exchange adds the exchange route: what REST cannot carry is planned on the other', () => {
    expect(armCapacityPerSecond(['rest_then_exchange'], b)).toBe(20);
    expect(armCapacityPerSecond(['rest_then_exchange'], { global: 100, rest: 1, exchange: 20 })).toBe(21);
    expect(armCapacityPerSecond(['exchange', 'rest'], { rest: 3, exchange: 4 })).toBe(7);
  });
  it('no known budget on the routes used: the combined window, or nothing', () => {
    expect(armCapacityPerSecond(['exchange'], { global: 5, rest: 2 })).toBe(5);
    expect(armCapacityPerSecond(['rest'], {})).toBeUndefined();
  });
});

describe('assignRoutes', () => {
  it('fills the REST route with rest_then_exchange accounts up to what it can carry, the rest by exchange', () => {
    const a = (path: 'rest' | 'exchange' | 'rest_then_exchange', armsPerSecond = 0.3) => ({ path, armsPerSecond });
    // REST carries 1/s; the rest account takes 0.3, so two of the four flexible ones fit.
    expect(assignRoutes([a('rest'), a('rest_then_exchange'), a('rest_then_exchange'), a('rest_then_exchange'), a('exchange')], 1)).toEqual(['rest', 'rest', 'rest', 'exchange', 'exchange']);
    expect(assignRoutes([a('rest_then_exchange')], undefined)).toEqual(['rest']);
  });
});
