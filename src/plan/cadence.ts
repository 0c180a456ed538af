import { DAY_MS } from '../sched/clock.js';

/**
 * Adaptive cadence: when the accounts' planned re-arms approach the arm budget, stretch every
 * account's period by one common factor instead of running out of budget, but never beyond what
 * its margin allows. Pure: a function of the accounts and the budget.
 *
 * An arm sets the horizon to `deadline`; it then falls to `deadline - period` when the next arm is
 * due. To keep it >= `min_horizon` with room for the send lag, the period may grow to
 * `deadline - min_horizon - lagAllowance` and no further.
 */
import type { ArmRoute } from '../venue/routes.js';

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

export function maxPeriodMs(a: CadenceInput, lagMs = LAG_ALLOWANCE_MS): number {
  return Math.max(a.rearmEveryMs, a.deadlineMs - a.minHorizonMs - lagMs);
}

/**
 * The send lag a plan at `usablePerSecond` must leave room for: LAG_ALLOWANCE_MS, or two slots of
 * the arm budget when they are longer (a re-arm may wait a slot for its turn, and one more behind a
 * first arm). On a shard pacing 0.26 arms/s a slot is 3.8 s: with 1 s allowed, re-arms at the longest
 * period left a horizon of 19.9 s against a 20 s minimum.
 */
export function lagAllowanceMs(usablePerSecond: number): number {
  return usablePerSecond > 0 ? Math.max(LAG_ALLOWANCE_MS, 2000 / usablePerSecond) : LAG_ALLOWANCE_MS;
}

/** Arms per second of these periods (null: an account not armed). */
function armsRate(periodsMs: ReadonlyArray<number | null>): number {
  return periodsMs.reduce<number>((s, p) => s + (p === null ? 0 : 1000 / p), 0);
}

export function planCadence(accounts: readonly CadenceInput[], budgetPerSecond: number): CadencePlan {
  const usable = budgetPerSecond * BUDGET_UTILISATION;
  const lag = lagAllowanceMs(usable);
  const maxes = accounts.map((a) => maxPeriodMs(a, lag));
  const sorted = [...maxes].sort((x, y) => x - y);
  const medianMax = sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
  const capacityAccounts = Math.floor((usable * medianMax) / 1000);

  const maxStretch = Math.max(1, ...accounts.map((a, i) => maxes[i]! / a.rearmEveryMs));
  const fit = fitStretch(accounts, maxes, usable);
  if (!fit) return { stretch: maxStretch, periodsMs: maxes, armsPerSecond: armsRate(maxes), usablePerSecond: usable, holds: false, capacityAccounts };
  return { stretch: fit.stretch, periodsMs: fit.periodsMs, armsPerSecond: armsRate(fit.periodsMs), usablePerSecond: usable, holds: true, capacityAccounts };
}

// ---- never refuse to protect ----

/**
 * How close to the deadline the keeper may let an account's next arm slip once the budget cannot
 * keep every min_horizon: the previous deadline must still be ahead when the next arm lands, with
 * room for the send lag and a quick retry. 5 s, the venue's own minimum lead for a new deadline.
 */
export const SHORT_HORIZON_FLOOR_MS = 5_000;

export interface ProtectionInput extends CadenceInput {
  /** Higher is protected first when not every account fits (config `priority`, default 0). */
  priority: number;
  /** Known to have no open orders (arm_when: orders_open, last read 0): protected last. */
  noOpenOrders?: boolean;
}

/**
 * What the budget allows, from best to worst:
 * - `configured`: the configured periods fit;
 * - `stretched`: periods stretched by one factor within each margin (deadline - min_horizon - lag);
 * - `reserve`: the lag and retry reserve given up (periods up to deadline - min_horizon);
 * - `short_horizon`: every account armed, but horizons below min_horizon (periods up to
 *   deadline - SHORT_HORIZON_FLOOR_MS): readiness and the horizon alert say so;
 * - `over_budget`: even then the budget cannot arm everyone; the highest-priority accounts are
 *   protected, the rest are reported `over_budget` and not armed.
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
  const at = (k: number) => accounts.map((a, i) => Math.min(a.rearmEveryMs * k, caps[i]!));
  if (accounts.length === 0 || armsRate(at(1)) <= usable) return { stretch: 1, periodsMs: at(1) };
  if (armsRate(caps) > usable) return null;
  let lo = 1;
  let hi = Math.max(...accounts.map((a, i) => caps[i]! / a.rearmEveryMs));
  for (let i = 0; i < 50; i++) {
    const mid = (lo + hi) / 2;
    if (armsRate(at(mid)) <= usable) hi = mid;
    else lo = mid;
  }
  return { stretch: hi, periodsMs: at(hi).map((p, i) => Math.min(Math.ceil(p), caps[i]!)) };
}

/** Pure: the periods and verdicts the keeper runs with, and `check-config` prints. Never refuses. */
export function planProtection(accounts: readonly ProtectionInput[], budgetPerSecond: number): ProtectionPlan {
  const base = planCadence(accounts, budgetPerSecond);
  const usable = base.usablePerSecond;
  const result = (tier: ProtectionTier, periodsMs: Array<number | null>, verdicts: AccountVerdict[]): ProtectionPlan => {
    const armed = periodsMs.map((p, i) => (p === null ? null : p / accounts[i]!.rearmEveryMs)).filter((x): x is number => x !== null);
    return { tier, periodsMs, verdicts, armsPerSecond: armsRate(periodsMs), usablePerSecond: usable, stretch: armed.length ? Math.max(1, ...armed) : 1, capacityAccounts: base.capacityAccounts };
  };
  const keeps = (periods: number[]): AccountVerdict[] => periods.map((p, i) => (accounts[i]!.deadlineMs - p >= accounts[i]!.minHorizonMs ? 'keeps_min_horizon' : 'short_horizon'));
  if (base.holds) return result(base.stretch > 1 ? 'stretched' : 'configured', base.periodsMs, keeps(base.periodsMs));

  const reserveCaps = accounts.map((a) => Math.max(a.rearmEveryMs, a.deadlineMs - a.minHorizonMs));
  const reserve = fitStretch(accounts, reserveCaps, usable)?.periodsMs;
  if (reserve) return result('reserve', reserve, keeps(reserve));

  const shortCaps = accounts.map((a) => Math.max(a.rearmEveryMs, a.deadlineMs - SHORT_HORIZON_FLOOR_MS));
  const short = fitStretch(accounts, shortCaps, usable)?.periodsMs;
  if (short) return result('short_horizon', short, keeps(short));

  // Not everyone can be armed: the highest priority first, then config order; accounts known to
  // have no open orders last. Each taken at its longest safe period until the budget is spent.
  const order = accounts
    .map((a, i) => ({ a, i }))
    .sort((x, y) => Number(x.a.noOpenOrders ?? false) - Number(y.a.noOpenOrders ?? false) || y.a.priority - x.a.priority || x.i - y.i);
  const chosen = new Set<number>();
  let used = 0;
  for (const { i } of order) {
    const cost = 1000 / shortCaps[i]!;
    // One that does not fit is passed over, not the end: arming others beats arming nobody.
    if (used + cost > usable) continue;
    chosen.add(i);
    used += cost;
  }
  const kept = [...chosen].sort((x, y) => x - y);
  const inner = planProtection(kept.map((i) => accounts[i]!), budgetPerSecond);
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
 * Requests per second in force on each scope an arm may spend (configured, learned from a 429, or
 * this instance's share of a shared budget). Absent: no limit known on that scope.
 */
export interface RouteBudgets {
  /** The combined window every request spends (`global`). */
  global?: number;
  /** The REST schedule-cancel route (`schedule_cancel`). */
  rest?: number;
  /** The exchange endpoint (`exchange`). */
  exchange?: number;
}

/**
 * Arms per second the accounts' routes can carry together: each route the accounts may use adds
 * its budget, and the combined window caps the sum (both routes spend it). A `rest_then_exchange`
 * account may use both, so arms one route cannot carry are planned on the other rather than left
 * to fail first. Undefined when no route the accounts use has a known budget.
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
 * The route each account's arms are planned on: `rest` and `exchange` accounts have theirs; the
 * `rest_then_exchange` accounts fill what the REST route's usable budget leaves after the `rest`
 * accounts (in input order), and the rest go by the exchange endpoint. `armsPerSecond`: each
 * account's planned rate (0 for one not armed).
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

/**
 * Re-arms a day at `periodMs` by each of `replicas` instances (`shard.replication`): what every
 * re-arm spends of the address's action budget. The keeper's address-budget warning and
 * check-config's actions per address both count with it.
 */
export function rearmsPerDay(periodMs: number, replicas = 1): number {
  return Math.ceil(DAY_MS / periodMs) * replicas;
}
