import type { ArmRoute } from '../venue/routes.js';
import { armCapacityPerSecond, assignRoutes, BUDGET_UTILISATION, maxOf, planProtection, type AccountVerdict, type PathPolicy, type ProtectionInput, type ProtectionTier, type RouteBudgets } from './cadence.js';
import { longestSafePeriodMs } from './horizon.js';
import { ACHIEVED_PLAN_SHARE } from '../budget/achieved-pace.js';
import { chooseColdStartOrder, COLD_START_SLACK, provisioningContention, simulateColdStart, type ColdStartOrder } from './cold-start.js';
import { keeperReadDemand, readStretch, type PlanReadWeights, type ReadMix, type ReadSourceMode } from './read-plan.js';

/**
 * The budget plan: one pure function from (the accounts and their settings, the limits in force,
 * the provisioning left) to every figure the keeper acts on and `check-config` prints. The keeper
 * (account/cadence-control.ts) feeds it the scheduler's limits (learned from 429s, cut to this
 * instance's share); check-config (src/cli/check-config-plan.ts) the configured ones, cut the same way. Steps:
 * 1. the arm budget: what the accounts' routes carry together (armCapacityPerSecond);
 * 2. the periods, fitted to it without ever refusing (planProtection);
 * 3. during a cold start the steady re-arms would crowd, every account at its longest safe period;
 * 4. the routes: `rest_then_exchange` accounts fill what REST leaves, the rest go by exchange;
 * 5. the cold start's order (cold-start.ts). The reads are planned after, on what the arms leave.
 */

/**
 * Step 3 applies only when the configured re-arms would take more than this share of the window:
 * below it provisioning keeps a quarter or more, and early accounts keep their configured cadence.
 * At 0.1 a shard of 8 accounts on 0.4 arms/s kept the cold start's 39 s periods past it, and its
 * horizon fell to 19.3 s against a 20 s minimum.
 */
export const COLD_START_PLAN_SHARE = 0.75;

export interface PlanAccount extends ProtectionInput {
  path: PathPolicy;
}

/** Provisioning still to do: approvals likely left (0 when stored agents serve) and first arms left. */
export interface Provisioning {
  approvalsLeft: number;
  firstArmsLeft: number;
  /**
   * The order this cold start already follows (absent: choose one). Chosen once: a shared budget's
   * share moving mid-way flipped two shards to interleaved, whose early arms then came due inside
   * the cold start (all armed at 32 s against 23.8).
   */
  order?: ColdStartOrder;
}

export interface BudgetInput {
  accounts: readonly PlanAccount[];
  /** Requests per second in force on each scope: this instance's part. */
  limits: RouteBudgets;
  /** Null: no cold start under way. */
  provisioning: Provisioning | null;
  /**
   * The arm budget in force is the pace the keeper achieved, not a limit the venue set (a keeper
   * short of CPU): never spend the lag and retry margins (cadence.ts planProtection). Absent: false.
   */
  keepMargins?: boolean;
}

export interface ColdStartPlan {
  /** Every account at its longest safe period, the rest of the window to provisioning. */
  longestPeriods: boolean;
  order: ColdStartOrder;
  /** The order belongs to a cold start under way (kept until it ends); false when none is. */
  chosen: boolean;
  /** The usable rate of the window approvals and first arms share; 0 when they do not contend. */
  windowPerSecond: number;
  /** When the last account is armed, seconds from now, on the plan's model. */
  estimateSeconds: number;
}

export interface BudgetPlan {
  /** Arms per second the accounts' routes carry together (armCapacityPerSecond). */
  budgetPerSecond: number;
  /** What the plan may use of it (BUDGET_UTILISATION). */
  usablePerSecond: number;
  tier: ProtectionTier;
  stretch: number;
  capacityAccounts: number;
  /** Per account, input order: null when left over_budget. */
  periodsMs: Array<number | null>;
  verdicts: AccountVerdict[];
  routes: ArmRoute[];
  armsPerSecond: number;
  /** What everyone armed will need: the plan without the cold start's longest periods. */
  steadyArmsPerSecond: number;
  /** Arms per second on each scope: every arm in `global`, each in its route's. */
  armsByScope: { global: number; rest: number; exchange: number };
  coldStart: ColdStartPlan;
}

/** Null when no route the accounts use has a known limit (nothing to plan against). */
export function planBudget(input: BudgetInput): BudgetPlan | null {
  const { accounts, limits, provisioning } = input;
  const keepMargins = input.keepMargins ?? false;
  const budget = armCapacityPerSecond(accounts.map((a) => a.path), limits);
  if (budget === undefined) return null;
  // A pace achieved: the arms are planned on only its share (budget/achieved-pace.ts ACHIEVED_PLAN_SHARE).
  const planned = keepMargins ? budget * ACHIEVED_PLAN_SHARE : budget;
  const steady = protectOnRoutes(accounts, limits, planned, (b) => planProtection(accounts, b, keepMargins));
  const longestPeriods = coldStartPlanned(provisioning, steady.armsPerSecond, steady.usablePerSecond);
  const plan = longestPeriods ? protectOnRoutes(accounts, limits, planned, (b) => longestPeriodsPlan(accounts, b, keepMargins)) : steady;
  // REST's limit in force is this instance's already (a shared budget cuts the scheduler's specs).
  const routes = assignRoutes(
    accounts.map((a, i) => ({ path: a.path, armsPerSecond: plan.periodsMs[i] ? 1000 / plan.periodsMs[i]! : 0 })),
    limits.rest === undefined ? undefined : limits.rest * BUDGET_UTILISATION,
  );
  const armsByScope = { global: 0, rest: 0, exchange: 0 };
  plan.periodsMs.forEach((p, i) => {
    if (!p) return;
    armsByScope.global += 1000 / p;
    armsByScope[routes[i]!] += 1000 / p;
  });
  return {
    budgetPerSecond: budget,
    usablePerSecond: plan.usablePerSecond,
    tier: plan.tier,
    stretch: plan.stretch,
    capacityAccounts: plan.capacityAccounts,
    periodsMs: plan.periodsMs,
    verdicts: plan.verdicts,
    routes,
    armsPerSecond: plan.armsPerSecond,
    steadyArmsPerSecond: steady.armsPerSecond,
    armsByScope,
    coldStart: coldStartPlan(accounts, limits, routes, provisioning, longestPeriods, plan.usablePerSecond),
  };
}

type Protection = ReturnType<typeof planProtection>;

/**
 * The arm budget pools both routes, but a `path: rest` account can spend only REST's and a
 * `path: exchange` one only the exchange endpoint's (found by the plan-agreement property: two REST
 * accounts planned on both routes' capacity, one lapsed). When a route's fixed accounts outgrow it,
 * the pool is narrowed by bisection (a smaller pool only lengthens periods and drops the lowest
 * priorities) until every route fits.
 */
function protectOnRoutes(accounts: readonly PlanAccount[], limits: RouteBudgets, budget: number, plan: (budgetPerSecond: number) => Protection): Protection {
  const fits = (p: Protection): boolean => {
    const used = { rest: 0, exchange: 0 };
    p.periodsMs.forEach((ms, i) => {
      const path = accounts[i]!.path;
      if (ms && path !== 'rest_then_exchange') used[path] += 1000 / ms;
    });
    const room = (limit: number | undefined): number => (limit ?? Number.POSITIVE_INFINITY) * BUDGET_UTILISATION * (1 + 1e-9);
    return used.rest <= room(limits.rest) && used.exchange <= room(limits.exchange);
  };
  const whole = plan(budget);
  if (fits(whole)) return whole;
  let lo = 0;
  let hi = budget;
  let best = plan(0);
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    const p = plan(mid);
    if (fits(p)) {
      lo = mid;
      best = p;
    } else hi = mid;
  }
  // Shown against the whole pool: what the routes together carry.
  return { ...best, usablePerSecond: whole.usablePerSecond };
}

/** Step 3's rule, alone so the keeper can test it on every provisioning event without re-planning. */
export function coldStartPlanned(provisioning: Provisioning | null, steadyArmsPerSecond: number, usablePerSecond: number): boolean {
  return provisioning !== null && steadyArmsPerSecond > COLD_START_PLAN_SHARE * usablePerSecond;
}

/** Every account at its longest safe period (or what the budget allows below it); stretch against the configured periods. */
function longestPeriodsPlan(accounts: readonly PlanAccount[], budget: number, keepMargins: boolean): Protection {
  const plan = planProtection(accounts.map((a) => ({ ...a, rearmEveryMs: Math.max(a.rearmEveryMs, longestSafePeriodMs(a)) })), budget, keepMargins);
  const stretches = plan.periodsMs.flatMap((p, i) => (p === null ? [] : [p / accounts[i]!.rearmEveryMs]));
  return { ...plan, stretch: maxOf(stretches, 1) };
}

function coldStartPlan(
  accounts: readonly PlanAccount[],
  limits: RouteBudgets,
  routes: readonly ArmRoute[],
  provisioning: Provisioning | null,
  longestPeriods: boolean,
  armsUsablePerSecond: number,
): ColdStartPlan {
  const { contends, windowPerSecond, approvalsPerSecond } = provisioningContention(limits, routes.includes('exchange'));
  if (!provisioning || provisioning.firstArmsLeft <= 0) return { longestPeriods, order: 'interleaved', chosen: false, windowPerSecond, estimateSeconds: 0 };
  const { approvalsLeft, firstArmsLeft } = provisioning;
  const periodMs = accounts.reduce((m, a) => Math.min(m, longestSafePeriodMs(a)), Number.POSITIVE_INFINITY);
  const order = provisioning.order ?? chooseColdStartOrder({ contends: contends && approvalsLeft > 0, accounts: firstArmsLeft, perSecond: windowPerSecond, periodMs });
  if (!contends) {
    // Each on its own window: approvals at theirs, first arms right behind them at the arms' pace.
    const estimateSeconds = Math.max(approvalsLeft / approvalsPerSecond, armsUsablePerSecond > 0 ? firstArmsLeft / armsUsablePerSecond : 0);
    return { longestPeriods, order, chosen: true, windowPerSecond, estimateSeconds };
  }
  const ideal = (approvalsLeft + firstArmsLeft) / windowPerSecond;
  const modelled = order === 'just_in_time' ? ideal : simulateColdStart(order, firstArmsLeft, windowPerSecond, periodMs).lastArmedSeconds;
  return { longestPeriods, order, chosen: true, windowPerSecond, estimateSeconds: Math.min(modelled, COLD_START_SLACK * ideal) };
}

export interface ReadInput {
  source: ReadSourceMode;
  weights: PlanReadWeights;
  /** Accounts by where their reads go now (the keeper's live mix; check-config: the configured one). */
  mix: ReadMix;
  periods: { ordersEveryMs: number; positionsEveryMs: number };
  /** Builder-deployed perp dexes each venue read covers too. */
  perpDexes: number;
}

/** The read stretch on what the plan's arms leave (read-plan.ts); uncapped, the caller caps it at MAX_READ_STRETCH. */
export function planReads(plan: Pick<BudgetPlan, 'armsByScope'>, limits: RouteBudgets, reads: ReadInput): number {
  const demand = keeperReadDemand(reads.source, reads.weights, reads.mix, reads.periods, reads.perpDexes);
  return readStretch(demand, { global: limits.global, exchange: limits.exchange }, { global: plan.armsByScope.global, exchange: plan.armsByScope.exchange });
}
