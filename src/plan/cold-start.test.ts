import { describe, expect, it } from 'vitest';
import { chooseColdStartOrder, coldStartRemainingMs, firstArmGateMs, provisioningContention, simulateColdStart } from './cold-start.js';

// The venue: one window of 100 per 5 s (B = 20/s, 0.97 of it usable), deadline 20 s,
// min horizon 8 s: the longest safe period is 20 - 8 - 1 = 11 s.
const B = 20 * 0.97;
const PERIOD_MS = 11_000;

describe('firstArmGateMs', () => {
  it('holds first arms until the cold start ends one period later, so none comes due inside it', () => {
    // 180 approvals + 180 first arms at 19.4/s = 18.56 s; the gate opens at 18.56 - 11 = 7.56 s.
    const gate = firstArmGateMs(0, { approvalsLeft: 180, firstArmsLeft: 180, usablePerSecond: B, armedPerSecond: 0, periodMs: PERIOD_MS });
    expect(gate).toBeCloseTo((360 / B) * 1000 - PERIOD_MS, 6);
  });

  it('opens at once when the cold start is shorter than a period, or no approval is left', () => {
    expect(firstArmGateMs(5, { approvalsLeft: 10, firstArmsLeft: 10, usablePerSecond: B, armedPerSecond: 0, periodMs: PERIOD_MS })).toBeLessThanOrEqual(5);
    expect(firstArmGateMs(5, { approvalsLeft: 0, firstArmsLeft: 500, usablePerSecond: B, armedPerSecond: 0, periodMs: PERIOD_MS })).toBe(5);
  });

  it('counts what the armed accounts take: less room, a later end', () => {
    const idle = coldStartRemainingMs({ approvalsLeft: 100, firstArmsLeft: 100, usablePerSecond: B, armedPerSecond: 0, periodMs: PERIOD_MS });
    const busy = coldStartRemainingMs({ approvalsLeft: 100, firstArmsLeft: 100, usablePerSecond: B, armedPerSecond: 10, periodMs: PERIOD_MS });
    expect(busy).toBeCloseTo((200 / (B - 10)) * 1000, 6);
    expect(busy).toBeGreaterThan(idle);
  });

  it('a window the re-arms fill leaves nothing to project: the gate opens (first arms compete by urgency)', () => {
    expect(coldStartRemainingMs({ approvalsLeft: 5, firstArmsLeft: 5, usablePerSecond: B, armedPerSecond: B, periodMs: PERIOD_MS })).toBe(Number.POSITIVE_INFINITY);
    expect(firstArmGateMs(0, { approvalsLeft: 5, firstArmsLeft: 5, usablePerSecond: B, armedPerSecond: B, periodMs: PERIOD_MS })).toBe(0);
  });
});

describe('simulateColdStart: why just in time', () => {
  for (const [n, period] of [
    [180, 11_000],
    [228, 12_000],
    [270, 15_000],
  ] as const) {
    it(`${n} accounts: just in time arms the last account at the ideal, with fewer account-seconds than approvals-first; interleaving arms it far later`, () => {
      const ideal = (2 * n) / B;
      const first = simulateColdStart('approvals_first', n, B, period);
      const inter = simulateColdStart('interleaved', n, B, period);
      const jit = simulateColdStart('just_in_time', n, B, period);
      expect(jit.lastArmedSeconds).toBeCloseTo(ideal, 1);
      expect(first.lastArmedSeconds).toBeCloseTo(ideal, 1);
      expect(jit.unprotectedAccountSeconds).toBeLessThan(first.unprotectedAccountSeconds);
      // Interleaving leaves fewer account-seconds, but its early arms come due inside the cold
      // start and the last account waits far longer: at 180, 29.9 s against 18.6 s.
      expect(inter.unprotectedAccountSeconds).toBeLessThan(jit.unprotectedAccountSeconds);
      expect(inter.lastArmedSeconds).toBeGreaterThan(1.5 * ideal);
    });
  }

  it('a window the re-arms outgrow never arms everyone, in any order', () => {
    expect(simulateColdStart('just_in_time', 1_000, B, PERIOD_MS).lastArmedSeconds).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('provisioningContention: do first arms take approvals\' slots?', () => {
  it('no: REST arms with a quota of their own, and a global window wide enough for both paces (the bench)', () => {
    expect(provisioningContention({ global: 400, rest: 100, exchange: 100 }, false)).toEqual({ contends: false, windowPerSecond: 0, approvalsPerSecond: 100 });
  });
  it('yes: one window over every signed action, or a global window narrower than both paces', () => {
    expect(provisioningContention({ global: 20, rest: 20 }, false)).toEqual({ contends: true, windowPerSecond: 20 * 0.97, approvalsPerSecond: 20 });
    expect(provisioningContention({ global: 150, rest: 100, exchange: 100 }, false).contends).toBe(true);
  });
  it('yes: arms by the exchange endpoint share the approvals\' quota', () => {
    expect(provisioningContention({ global: 400, rest: 100, exchange: 100 }, true)).toEqual({ contends: true, windowPerSecond: 100 * 0.97, approvalsPerSecond: 100 });
  });
  it('no: nothing limits the approvals', () => {
    expect(provisioningContention({ rest: 100 }, false).contends).toBe(false);
  });
});

describe('chooseColdStartOrder: the fewest unprotected account-seconds within the slack', () => {
  it('not contended: interleaved, whatever the size', () => {
    expect(chooseColdStartOrder({ contends: false, accounts: 10_000, perSecond: 97, periodMs: 104_000 })).toBe('interleaved');
  });
  it('contended at the issue-19 venue: interleaving would arm the last account past 1.5 x the ideal, so just in time', () => {
    expect(chooseColdStartOrder({ contends: true, accounts: 180, perSecond: B, periodMs: PERIOD_MS })).toBe('just_in_time');
  });
  it('contended with periods far longer than the cold start: interleaved (early arms never come due inside it)', () => {
    // 180 accounts at 19.4/s take 18.6 s; an account armed at once comes due only after 290 s, so
    // just in time's gate is open from the start: the same order, the same account-seconds.
    const inter = simulateColdStart('interleaved', 180, B, 290_000);
    expect(inter.unprotectedAccountSeconds).toBe(simulateColdStart('just_in_time', 180, B, 290_000).unprotectedAccountSeconds);
    expect(chooseColdStartOrder({ contends: true, accounts: 180, perSecond: B, periodMs: 290_000 })).toBe('interleaved');
  });
});
