/**
 * Adaptive cadence: when the accounts' planned re-arms approach the arm budget, stretch every
 * account's period by one common factor instead of running out of budget, but never beyond what
 * its margin allows. Pure: a function of the accounts and the budget.
 *
 * An arm sets the horizon to `deadline`; it then falls to `deadline - period` when the next arm is
 * due. To keep it >= `min_horizon` with room for the send lag, the period may grow to
 * `deadline - min_horizon - lagAllowance` and no further.
 */
export interface CadenceInput {
  rearmEveryMs: number;
  deadlineMs: number;
  minHorizonMs: number;
}

export interface CadencePlan {
  /** Common factor applied to every configured period (1 = as configured). */
  stretch: number;
  /** Effective period per account, in input order. */
  periodsMs: number[];
  /** Arms per second the effective plan needs. */
  armsPerSecond: number;
  /** Arms per second the budget allows, times the utilisation target. */
  usablePerSecond: number;
  /** The plan fits the budget even at every account's longest period. */
  holds: boolean;
  /**
   * Accounts of the median shape this budget could hold at their longest periods: the effective
   * capacity, to compare with the number configured.
   */
  capacityAccounts: number;
}

/** Send lag the longest period still leaves room for (p99 lag is far below this). */
export const LAG_ALLOWANCE_MS = 1_000;
/** Fraction of the arm budget the plan may use; the rest absorbs retries and bursts of 429s. */
export const BUDGET_UTILISATION = 0.97;

export function maxPeriodMs(a: CadenceInput): number {
  return Math.max(a.rearmEveryMs, a.deadlineMs - a.minHorizonMs - LAG_ALLOWANCE_MS);
}

export function planCadence(accounts: readonly CadenceInput[], budgetPerSecond: number, utilisation = BUDGET_UTILISATION): CadencePlan {
  const usable = budgetPerSecond * utilisation;
  const rate = (periods: number[]) => periods.reduce((s, p) => s + 1000 / p, 0);
  const at = (k: number) => accounts.map((a) => Math.min(a.rearmEveryMs * k, maxPeriodMs(a)));
  const maxes = accounts.map(maxPeriodMs);
  const sorted = [...maxes].sort((x, y) => x - y);
  const medianMax = sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
  const capacityAccounts = Math.floor((usable * medianMax) / 1000);

  const configured = accounts.map((a) => a.rearmEveryMs);
  if (accounts.length === 0 || rate(configured) <= usable) {
    return { stretch: 1, periodsMs: configured, armsPerSecond: rate(configured), usablePerSecond: usable, holds: true, capacityAccounts };
  }
  const holds = rate(maxes) <= usable;
  if (!holds) {
    return { stretch: Math.max(...accounts.map((a, i) => maxes[i]! / a.rearmEveryMs)), periodsMs: maxes, armsPerSecond: rate(maxes), usablePerSecond: usable, holds: false, capacityAccounts };
  }
  // rate(at(k)) decreases as k grows: bisect for the smallest stretch that fits.
  let lo = 1;
  let hi = Math.max(...accounts.map((a, i) => maxes[i]! / a.rearmEveryMs));
  for (let i = 0; i < 50; i++) {
    const mid = (lo + hi) / 2;
    if (rate(at(mid)) <= usable) hi = mid;
    else lo = mid;
  }
  // Rounded up (never more arms than planned), and never past an account's longest period.
  const periodsMs = at(hi).map((p, i) => Math.min(Math.ceil(p), maxes[i]!));
  return { stretch: hi, periodsMs, armsPerSecond: rate(periodsMs), usablePerSecond: usable, holds: true, capacityAccounts };
}
