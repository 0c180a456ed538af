/**
 * The protection arithmetic, pure: when the planned re-arms approach the arm budget, every period
 * is stretched by one common factor, never past its margin. An arm sets the horizon to `deadline`,
 * which falls to `deadline - period` by the next arm, so a period may grow to
 * `deadline - min_horizon - lag` and no further (the horizon's arithmetic: horizon.ts).
 */
import { DAY_MS } from '../time/clock.js';
import type { ArmRoute } from '../venue/routes.js';
import type { VenueSwitchFacts } from '../venue/switch-facts.js';
import { BUDGET_UTILISATION } from '../budget/admission.js';
import {
  keepsMinHorizon,
  lagAllowanceMs,
  longestPeriodWithoutReserveMs,
  longestSafePeriodMs,
  longestShortHorizonPeriodMs,
  type HorizonInputMs,
} from './horizon.js';

export type CadenceInput = HorizonInputMs;

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
  /** Accounts of the median shape this budget could hold at their longest periods. */
  capacityAccounts: number;
}

/** Fraction of the arm budget the plan may use; the rest absorbs retries, bursts of 429s and stalls (budget/admission.ts, where arms with no deadline keep out of it). */
export { BUDGET_UTILISATION };

/** The largest of `values` and `floor`: a loop, not Math.max(...values), which runs out of stack past some 100,000 arguments. */
export function maxOf(values: Iterable<number>, floor: number): number {
  let m = floor;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** Arms per second of these periods (null: an account not armed). */
function armsRate(periodsMs: ReadonlyArray<number | null>): number {
  return periodsMs.reduce<number>((s, p) => s + (p === null ? 0 : 1000 / p), 0);
}

export function planCadence(accounts: readonly CadenceInput[], budgetPerSecond: number): CadencePlan {
  const usable = budgetPerSecond * BUDGET_UTILISATION;
  const lag = lagAllowanceMs(usable);
  const maxes = accounts.map((a) => longestSafePeriodMs(a, lag));
  const sorted = [...maxes].sort((x, y) => x - y);
  const medianMax = sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
  const capacityAccounts = Math.floor((usable * medianMax) / 1000);

  const maxStretch = maxOf(accounts.map((a, i) => maxes[i]! / a.rearmEveryMs), 1);
  const fit = fitStretch(accounts, maxes, usable);
  if (!fit) return { stretch: maxStretch, periodsMs: maxes, armsPerSecond: armsRate(maxes), usablePerSecond: usable, holds: false, capacityAccounts };
  return { stretch: fit.stretch, periodsMs: fit.periodsMs, armsPerSecond: armsRate(fit.periodsMs), usablePerSecond: usable, holds: true, capacityAccounts };
}

// ---- never refuse to protect ----

export interface ProtectionInput extends CadenceInput {
  /** Higher is protected first when not every account fits (config `priority`, default 0). */
  priority: number;
  /** Known to have no open orders (arm_when: orders_open, last read 0): protected last. */
  noOpenOrders?: boolean;
  /** The account's venue's switch (its minimum lead bounds tier `short_horizon`), from the port. */
  venue: VenueSwitchFacts;
}

/**
 * What the budget allows, best first: `configured`; `stretched` (one factor, within each margin);
 * `reserve` (the lag and retry reserve given up: periods up to deadline - min_horizon);
 * `short_horizon` (everyone armed, horizons below min_horizon, down to the venue's minimum lead);
 * `over_budget` (the highest priorities armed, the rest reported and not armed).
 */
export type ProtectionTier = 'configured' | 'stretched' | 'reserve' | 'short_horizon' | 'over_budget';
export type AccountVerdict = 'keeps_min_horizon' | 'short_horizon' | 'over_budget';

export interface ProtectionPlan {
  tier: ProtectionTier;
  /** Effective period per account, input order; null for an account left over_budget. */
  periodsMs: Array<number | null>;
  verdicts: AccountVerdict[];
  armsPerSecond: number;
  usablePerSecond: number;
  /** Common stretch factor over the configured periods (1 = as configured). */
  stretch: number;
  capacityAccounts: number;
}

/**
 * The smallest common stretch (each period at most its cap) whose arm rate fits `usable`, with the
 * periods it gives (rounded up: never more arms than planned); null when even the caps do not fit.
 */
function fitStretch(accounts: readonly CadenceInput[], caps: readonly number[], usable: number): { stretch: number; periodsMs: number[] } | null {
  const n = accounts.length;
  const rearm = new Float64Array(n);
  for (let i = 0; i < n; i++) rearm[i] = accounts[i]!.rearmEveryMs;
  // The arm rate at stretch k, summed in input order as armsRate sums a plan's periods, with no
  // array made per step: the bisection's 50 plans of every account were 80% of planBudget's CPU,
  // and at 50,000 accounts one plan held the loop for 1.5 to 4.5 s on a starved machine (bench).
  const rateAt = (k: number): number => {
    let s = 0;
    for (let i = 0; i < n; i++) s += 1000 / Math.min(rearm[i]! * k, caps[i]!);
    return s;
  };
  const at = (k: number): number[] => accounts.map((a, i) => Math.min(a.rearmEveryMs * k, caps[i]!));
  if (n === 0 || rateAt(1) <= usable) return { stretch: 1, periodsMs: at(1) };
  if (armsRate(caps) > usable) return null;
  let lo = 1;
  let hi = maxOf(rearm.map((r, i) => caps[i]! / r), 1);
  for (let i = 0; i < 50; i++) {
    const mid = (lo + hi) / 2;
    if (rateAt(mid) <= usable) hi = mid;
    else lo = mid;
  }
  return { stretch: hi, periodsMs: at(hi).map((p, i) => Math.min(Math.ceil(p), caps[i]!)) };
}

/**
 * Pure: the periods and verdicts the keeper runs with, and `check-config` prints. Never refuses.
 * `keepMargins`: the budget is the pace the keeper itself achieved (short of CPU: its timers fire
 * late, its arms leave late), not a limit the venue set. Then the tiers that spend the lag and retry
 * margins (`reserve`, `short_horizon`) are not offered: a keeper that is late already needs them,
 * and spending them sank every account together (test/budget-starved-cpu.test.ts). Whoever does not
 * fit at the longest safe period is left over_budget, lowest priority first.
 */
export function planProtection(accounts: readonly ProtectionInput[], budgetPerSecond: number, keepMargins = false): ProtectionPlan {
  const base = planCadence(accounts, budgetPerSecond);
  const usable = base.usablePerSecond;
  const result = (tier: ProtectionTier, periodsMs: Array<number | null>, verdicts: AccountVerdict[]): ProtectionPlan => {
    const armed = periodsMs.map((p, i) => (p === null ? null : p / accounts[i]!.rearmEveryMs)).filter((x): x is number => x !== null);
    return { tier, periodsMs, verdicts, armsPerSecond: armsRate(periodsMs), usablePerSecond: usable, stretch: maxOf(armed, 1), capacityAccounts: base.capacityAccounts };
  };
  const keeps = (periods: number[]): AccountVerdict[] => periods.map((p, i) => (keepsMinHorizon(accounts[i]!.deadlineMs - p, accounts[i]!.minHorizonMs) ? 'keeps_min_horizon' : 'short_horizon'));
  if (base.holds) return result(base.stretch > 1 ? 'stretched' : 'configured', base.periodsMs, keeps(base.periodsMs));

  // Not holding, base.periodsMs are each account's longest safe period.
  const safeCaps = base.periodsMs;
  const shortCaps = accounts.map((a) => longestShortHorizonPeriodMs(a, a.venue.minLeadMs));
  if (!keepMargins) {
    const reserveCaps = accounts.map(longestPeriodWithoutReserveMs);
    const reserve = fitStretch(accounts, reserveCaps, usable)?.periodsMs;
    if (reserve) return result('reserve', reserve, keeps(reserve));
    const short = fitStretch(accounts, shortCaps, usable)?.periodsMs;
    if (short) return result('short_horizon', short, keeps(short));
  }
  const caps = keepMargins ? safeCaps : shortCaps;

  // Not everyone can be armed: the highest priority first, then config order; accounts known to
  // have no open orders last. Each taken at its longest safe period until the budget is spent.
  const order = accounts
    .map((a, i) => ({ a, i }))
    .sort((x, y) => Number(x.a.noOpenOrders ?? false) - Number(y.a.noOpenOrders ?? false) || y.a.priority - x.a.priority || x.i - y.i);
  const chosen = new Set<number>();
  let used = 0;
  for (const { i } of order) {
    const cost = 1000 / caps[i]!;
    // One that does not fit is passed over, not the end: arming others beats arming nobody.
    if (used + cost > usable) continue;
    chosen.add(i);
    used += cost;
  }
  const kept = [...chosen].sort((x, y) => x - y);
  const inner = planProtection(kept.map((i) => accounts[i]!), budgetPerSecond, keepMargins);
  const periodsMs: Array<number | null> = accounts.map(() => null);
  const verdicts: AccountVerdict[] = accounts.map(() => 'over_budget');
  kept.forEach((i, k) => {
    periodsMs[i] = inner.periodsMs[k]!;
    verdicts[i] = inner.verdicts[k]!;
  });
  return result('over_budget', periodsMs, verdicts);
}

// ---- the budget the arms can use, over both routes ----

export type PathPolicy = 'rest' | 'exchange' | 'rest_then_exchange';

/**
 * Requests per second in force on the scopes an arm may spend, `global`, `schedule_cancel` (rest)
 * and `exchange` (this instance's part). Absent: no limit known there.
 */
export interface RouteBudgets {
  global?: number;
  rest?: number;
  exchange?: number;
}

/**
 * Arms per second the accounts' routes carry together: each route in use adds its budget, capped by
 * the combined window. Undefined when no route in use has a known budget.
 */
export function armCapacityPerSecond(paths: Iterable<PathPolicy>, b: RouteBudgets): number | undefined {
  let rest = false;
  let exchange = false;
  for (const p of paths) {
    if (p !== 'exchange') rest = true;
    if (p !== 'rest') exchange = true;
  }
  // A route the accounts use with no known budget of its own is limited by the combined window only.
  const part = (used: boolean, budget: number | undefined): number => (!used ? 0 : budget ?? Number.POSITIVE_INFINITY);
  const capacity = Math.min(part(rest, b.rest) + part(exchange, b.exchange), b.global ?? Number.POSITIVE_INFINITY);
  return Number.isFinite(capacity) ? capacity : undefined;
}

/**
 * The route each account's arms are planned on: `rest_then_exchange` accounts fill, in input order,
 * what REST's usable budget leaves after the `rest` accounts; the others go by exchange.
 */
export function assignRoutes(accounts: ReadonlyArray<{ path: PathPolicy; armsPerSecond: number }>, restUsablePerSecond: number | undefined): ArmRoute[] {
  let restLeft = restUsablePerSecond ?? Number.POSITIVE_INFINITY;
  for (const a of accounts) if (a.path === 'rest') restLeft -= a.armsPerSecond;
  return accounts.map((a) => {
    if (a.path !== 'rest_then_exchange') return a.path;
    if (a.armsPerSecond <= restLeft + 1e-9) {
      restLeft -= a.armsPerSecond;
      return 'rest';
    }
    return 'exchange';
  });
}

/** Re-arms a day at `periodMs` by each of `replicas` instances: the address budget's count (keeper and check-config). */
export function rearmsPerDay(periodMs: number, replicas = 1): number {
  return Math.ceil(DAY_MS / periodMs) * replicas;
}
