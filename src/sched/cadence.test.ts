import { describe, expect, it } from 'vitest';
import { LAG_ALLOWANCE_MS, maxPeriodMs, planCadence } from './cadence.js';

const acct = (rearmEveryMs = 15_000, deadlineMs = 60_000, minHorizonMs = 20_000) => ({ rearmEveryMs, deadlineMs, minHorizonMs });
const many = (n: number, a = acct()) => Array.from({ length: n }, () => a);

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
    expect(period).toBeLessThanOrEqual(maxPeriodMs(acct()));
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
