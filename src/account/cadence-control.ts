import type { Logger } from 'pino';
import type { ArmRoute } from '../venue/routes.js';
import type { KeeperMetrics } from '../obs/metrics.js';
import { coldStartPlanned, planBudget, planReads, type BudgetPlan, type PlanAccount, type Provisioning } from '../plan/budget-plan.js';
import { armCapacityPerSecond, type PathPolicy, type RouteBudgets } from '../plan/cadence.js';
import { longestSafePeriodMs } from '../plan/horizon.js';
import { ratePerSecond } from '../budget/limits.js';
import type { RequestScheduler } from '../budget/scheduler.js';
import { budgetMoved } from '../budget/shared-share.js';
import { MAX_READ_STRETCH, readWeightsOf } from '../plan/read-plan.js';
import { DEFAULT_INFO_WEIGHTS } from '../venue/info.js';
import type { VenuePort } from '../venue/port.js';
import type { VenueSwitchFacts } from '../venue/switch-facts.js';
import type { ClobVenuePort } from '../venue/polymarket/port.js';
import type { ColdStartWindow } from './cold-start-gate.js';
import type { KeeperAccountSpec, KeeperOptions, KeeperStatus, AccountState } from './keeper-types.js';
import type { SwitchSettings } from '../switch/switch-machine.js';

/**
 * The accounts the default venue's budget plan is made for: a CLOB account (config `venues:`)
 * spends its own venue's budget, whose limit (9,000 requests per 10 s) is hundreds of times what
 * its heartbeats take, so it beats at its configured period and is planned by check-config apart.
 */
export function planned(accounts: readonly KeeperAccountSpec[]): KeeperAccountSpec[] {
  return accounts.some((a) => a.clob) ? accounts.filter((a) => !a.clob) : (accounts as KeeperAccountSpec[]);
}

/** What the shared budget (Redis) tells the planner: this instance's share of the demand. */
export interface SharedDemand {
  publishDemand(d: { armsPerSecond: number; backlog: number }): void;
  share(): number;
}

/**
 * Runners handed their settings per turn of the event loop (handOut). About 22 us each on the
 * bench's machine with two busy loops beside it (1.1 s for 50,000): 2,000 is under 50 ms a turn.
 */
export const HAND_OUT_SLICE = 2_000;

/** The scopes an arm spends (its route's and the global window). */
const ARM_SCOPES = ['global', 'schedule_cancel', 'exchange'] as const;

/**
 * The keeper's shell around the budget plan (plan/budget-plan.ts): feeds it the scheduler's limits
 * in force and the provisioning left, hands each runner the settings it plans (the next slot uses
 * the new period), keeps the slot calendar at the planned rate, and shows and logs the plan.
 */
export class CadenceControl {
  /** The plan in force (plan/budget-plan.ts), and the accounts it was made for (its inputs' order). */
  private plan?: BudgetPlan;
  private plannedSpecs: readonly KeeperAccountSpec[] = [];
  /** Re-arm slots at the planned arm rate (rebuilt when the plan's rate changes). */
  private calendar?: SlotCalendar;

  /** Each account's index in the plan in force. */
  private indexOf = new Map<string, number>();
  /** The cold start's provisioning left, as last told (null: none under way). */
  private provisioning: Provisioning | null = null;
  private share = 1;
  /** The stretch the watchers' read periods run at (applyReads). */
  private appliedReadStretch = 1;
  /** The planned accounts' paths, for the accounts list they were read from (pathsOf). */
  private paths?: { of: readonly KeeperAccountSpec[]; paths: readonly PathPolicy[] };
  /** Counts the hand-outs begun (handOut): a slice of an older one finds it moved on, and stops. */
  private handOuts = 0;

  constructor(
    private readonly deps: {
      scheduler: Pick<RequestScheduler, 'specOf' | 'queuedOn' | 'achievedOn'>;
      /** The venue port: each account's venue's switch facts (VenuePort.switchFacts). */
      venue: Pick<VenuePort, 'switchFacts'>;
      /** The CLOB venues' ports by name: their accounts' switch facts. */
      clobVenues?: ReadonlyMap<string, Pick<ClobVenuePort, 'switchFacts'>>;
      metrics: KeeperMetrics;
      logger: Logger;
      sharedDemand?: SharedDemand;
    },
  ) {}

  /** Requests per second in force on each arm scope (configured, or tighter as a 429 announced). */
  routeBudgets(options: KeeperOptions): RouteBudgets {
    const rate = (scope: string): number | undefined => {
      const s = this.deps.scheduler.specOf(scope);
      return s && ratePerSecond(s);
    };
    const rest = rate('schedule_cancel');
    const configured = options.armBudgetPerSecond;
    return {
      global: rate('global'),
      rest: configured === undefined ? rest : rest === undefined ? configured : Math.min(configured, rest),
      exchange: rate('exchange'),
    };
  }

  /** This instance's share of a shared budget; shown only, the scheduler's specs are already cut to it. */
  private budgetShare(): number {
    const s = this.deps.sharedDemand?.share() ?? 1;
    return s > 0 && s <= 1 ? s : 1;
  }

  /** The arm budget in force over the routes the accounts may use (this instance's part of a shared one). */
  armBudget(options: KeeperOptions): number | undefined {
    return armCapacityPerSecond(this.pathsOf(options.accounts), this.routeBudgets(options));
  }

  /**
   * The paths the planned accounts take, each once: all the arm budget depends on, and the accounts
   * change only at a reload. Kept for the list they come from: the 1 s loop asks twice a second, and
   * mapping 10,000 accounts for it was a quarter of that loop's CPU (a profile of the bench's
   * steady phase: 78 of 146 ms in 39 s).
   */
  private pathsOf(accounts: readonly KeeperAccountSpec[]): readonly PathPolicy[] {
    if (this.paths?.of !== accounts) this.paths = { of: accounts, paths: [...new Set(planned(accounts).map((a) => a.switch.path))] };
    return this.paths.paths;
  }

  /** The budget moved (a 429 announced another, a limit was restored, the share changed). */
  budgetChanged(options: KeeperOptions): boolean {
    const budget = this.armBudget(options);
    return budget !== undefined && budgetMoved(this.plan?.budgetPerSecond ?? 0, budget);
  }

  /** The provisioning left (null: none). Re-plans only when a cold start begins, ends or flips its rule: a plan at 50,000 accounts is not free. */
  setProvisioning(p: Provisioning | null, options: KeeperOptions, accounts: Iterable<AccountState>): void {
    const before = this.provisioning;
    this.provisioning = p;
    const plan = this.plan;
    const flips = plan !== undefined && coldStartPlanned(p, plan.steadyArmsPerSecond, plan.usablePerSecond) !== plan.coldStart.longestPeriods;
    if ((before === null) !== (p === null) || flips) this.apply(options, accounts);
  }

  /** The cold start's order and shared window, for the gate (account/cold-start-gate.ts). */
  coldStartWindow(): ColdStartWindow {
    const c = this.plan?.coldStart;
    return c ? { order: c.order, perSecond: c.windowPerSecond } : { order: 'interleaved', perSecond: 0 };
  }

  /** Tells the other instances the least this one needs: arms at the longest safe periods, and provisioning left. */
  publishDemand(options: KeeperOptions, backlog: number): void {
    const d = this.deps.sharedDemand;
    if (!d) return;
    const armsPerSecond = planned(options.accounts).reduce((sum, a) => sum + 1000 / longestSafePeriodMs(a.switch), 0);
    d.publishDemand({ armsPerSecond, backlog });
  }

  /** The account's venue's switch facts, as its venue's port hands them out. */
  venueOf(spec: KeeperAccountSpec): VenueSwitchFacts {
    return (spec.clob && this.deps.clobVenues?.get(spec.clob.venue)?.switchFacts) || this.deps.venue.switchFacts;
  }

  effectiveSettings(spec: KeeperAccountSpec): SwitchSettings {
    const configured: SwitchSettings = { ...spec.switch, venue: this.venueOf(spec) };
    const planned = this.planned(spec.name);
    if (!planned) return configured;
    if (planned.periodMs === null) return { ...configured, overBudget: true };
    // The plan's route matters only where the account may take either (rest_then_exchange).
    return { ...configured, rearmEveryMs: planned.periodMs, ...(spec.switch.path === 'rest_then_exchange' ? { preferredRoute: planned.route } : {}) };
  }

  /** The plan's route and verdict for an account (null before the first plan, or for one it does not know). */
  accountPlan(name: string): { route: ArmRoute; verdict: string } | null {
    const planned = this.planned(name);
    return planned ? { route: planned.route, verdict: planned.verdict } : null;
  }

  isOverBudget(name: string): boolean {
    return this.planned(name)?.periodMs === null;
  }

  /** An account's line of the plan in force: its period (null: over_budget), route and verdict. */
  private planned(name: string): { periodMs: number | null; route: ArmRoute; verdict: string } | undefined {
    const i = this.indexOf.get(name);
    const plan = this.plan;
    if (!plan || i === undefined) return undefined;
    return { periodMs: plan.periodsMs[i] ?? null, route: plan.routes[i]!, verdict: plan.verdicts[i]! };
  }

  /**
   * The calendar slot for a re-arm wished at `wishMs`, never one before the queued arms drain (at
   * 10,000 accounts re-arms pulled into the cold start's tail waited up to 5.5 s).
   */
  claimSlot(wishMs: number, nowMs: number, account?: string): number {
    if (!this.calendar) return wishMs;
    const budget = this.plan?.budgetPerSecond ?? 0;
    const drainMs = budget > 0 ? (this.deps.scheduler.queuedOn('schedule_cancel') * 1000) / budget : 0;
    const periodMs = account === undefined ? null : (this.planned(account)?.periodMs ?? null);
    const pullLimitMs = periodMs === null ? Number.NEGATIVE_INFINITY : wishMs - MAX_PULL_SHARE * periodMs;
    return this.calendar.claim(wishMs, Math.max(nowMs + drainMs, pullLimitMs));
  }

  apply(options: KeeperOptions, accounts: Iterable<AccountState>): void {
    const managed = new Map([...accounts].map((m) => [m.spec.name, m]));
    const specs = planned(options.accounts);
    const inputs: PlanAccount[] = specs.map((a) => {
      const s = managed.get(a.name)?.runner?.snapshot();
      return { ...a.switch, venue: this.venueOf(a), priority: a.priority ?? 0, noOpenOrders: a.switch.armWhen === 'orders_open' && s?.openOrders === 0 };
    });
    // The cold start keeps the order its first plan chose (Provisioning.order).
    const provisioning = this.provisioning && { ...this.provisioning, ...(this.plan?.coldStart.chosen ? { order: this.plan.coldStart.order } : {}) };
    // A pace the keeper achieved on any scope its arms spend: it is late already, so the plan keeps its margins.
    const keepMargins = ARM_SCOPES.some((scope) => this.deps.scheduler.achievedOn(scope));
    const plan = planBudget({ accounts: inputs, limits: this.routeBudgets(options), provisioning, keepMargins });
    if (!plan) return;
    this.share = this.budgetShare();
    const before = this.plan;
    if (plan.usablePerSecond > 0 && this.calendar?.spacingMs !== 1000 / plan.usablePerSecond) this.calendar = new SlotCalendar(1000 / plan.usablePerSecond);
    this.plan = plan;
    this.plannedSpecs = specs;
    this.indexOf = new Map(specs.map((a, i) => [a.name, i]));
    const m = this.deps.metrics;
    m.cadenceStretch.set(plan.stretch);
    m.capacityAccounts.set(plan.capacityAccounts);
    m.armBudgetUtilisation.set(plan.budgetPerSecond > 0 ? plan.armsPerSecond / plan.budgetPerSecond : 0);
    specs.forEach((a, i) => m.overBudget.set({ account: a.name }, plan.verdicts[i] === 'over_budget' ? 1 : 0));
    if (before === undefined || before.tier !== plan.tier || Math.abs(before.stretch - plan.stretch) > 1e-6 || before.coldStart.order !== plan.coldStart.order) this.logPlan(plan, before, specs.length);
    this.handOut([...managed.values()]);
  }

  /**
   * Hands each runner the settings of the plan in force, HAND_OUT_SLICE accounts per turn of the
   * event loop (the first slice at once): a later plan supersedes what is left of an earlier one.
   * Why in slices: at the cold start's end every period moves a little (the cold start's longest
   * periods give way to the steady plan's), and handing 50,000 runners their period in one go was
   * 1.1 s of CPU in one block (bench, two busy loops beside: a 4 to 5 s stall of the event loop,
   * and the re-arms due in it left up to 3.4 s late). A runner not yet handed the new period keeps
   * the old one for the turns it waits: both are periods the plan judged safe.
   */
  private handOut(accounts: readonly AccountState[]): void {
    const handOut = ++this.handOuts;
    const slice = (from: number): void => {
      if (handOut !== this.handOuts) return;
      const end = Math.min(accounts.length, from + HAND_OUT_SLICE);
      for (let i = from; i < end; i++) {
        const acct = accounts[i]!;
        if (acct.removed || !acct.runner) continue;
        const want = this.effectiveSettings(acct.spec);
        const now = acct.runner.currentSettings();
        if (now.rearmEveryMs !== want.rearmEveryMs || Boolean(now.overBudget) !== Boolean(want.overBudget) || now.preferredRoute !== want.preferredRoute) acct.runner.updateSettings(want);
      }
      if (end < accounts.length) setImmediate(() => slice(end));
    };
    slice(0);
  }

  /** The read stretch (read-plan.ts) on the watchers' live mix of sources; at most MAX_READ_STRETCH, 1 before the first plan. */
  readStretch(options: KeeperOptions, accounts: Iterable<AccountState>): number {
    if (!this.plan) return 1;
    const mode = options.watch.source ?? 'service';
    // Counted, not listed: this runs every second over every account.
    const mix = { accounts: 0, ordersOnVenue: 0, fallenBack: 0 };
    for (const m of accounts) {
      if (m.removed || m.spec.clob) continue;
      mix.accounts++;
      if (mode !== 'service_then_venue') continue;
      if (m.spec.switch.armWhen === 'orders_open') mix.ordersOnVenue++;
      else if (m.orders?.source === 'venue') mix.fallenBack++;
    }
    const reads = { source: mode, weights: readWeightsOf(options.infoWeights ?? DEFAULT_INFO_WEIGHTS), mix, periods: options.watch, perpDexes: options.watch.perpDexes?.length ?? 0 };
    return Math.min(MAX_READ_STRETCH, planReads(this.plan, this.routeBudgets(options), reads));
  }

  /** The read periods a watcher runs at: the configured ones times the stretch in force. */
  readIntervals(options: KeeperOptions): { ordersEveryMs: number; positionsEveryMs: number } {
    const k = this.appliedReadStretch;
    return { ordersEveryMs: Math.round(options.watch.ordersEveryMs * k), positionsEveryMs: Math.round(options.watch.positionsEveryMs * k) };
  }

  /** Re-plans the reads (once a second) and hands the watchers new periods when the stretch moved; `force`: anyway. */
  applyReads(options: KeeperOptions, accounts: Iterable<AccountState>, force = false): void {
    const list = [...accounts];
    const k = this.readStretch(options, list);
    const moved = budgetMoved(this.appliedReadStretch, k);
    if (!force && !moved) return;
    this.appliedReadStretch = k;
    this.deps.metrics.readStretch.set(k);
    const intervals = this.readIntervals(options);
    for (const m of list) m.watcher?.setIntervals(intervals);
    if (moved) {
      const fields = { event: 'read_plan', stretch: Number(k.toFixed(3)), orders_every_seconds: intervals.ordersEveryMs / 1000, positions_every_seconds: intervals.positionsEveryMs / 1000 };
      if (k > 1) this.deps.logger.info(fields, 'read periods stretched so the reads fit what the arms leave of the budget');
      else this.deps.logger.info(fields, 'read periods back to the configured ones');
    }
  }

  view(): KeeperStatus['cadence'] {
    const c = this.plan;
    if (!c) return null;
    return {
      stretch: Number(c.stretch.toFixed(3)),
      arms_per_second: Number(c.armsPerSecond.toFixed(3)),
      budget_per_second: c.budgetPerSecond,
      capacity_accounts: c.capacityAccounts,
      holds: c.verdicts.every((v) => v === 'keeps_min_horizon'),
      tier: c.tier,
      over_budget: c.verdicts.filter((v) => v === 'over_budget').length,
      short_horizon: c.verdicts.filter((v) => v === 'short_horizon').length,
      cold_start: c.coldStart.longestPeriods,
      cold_start_order: c.coldStart.order,
      budget_share: Number(this.share.toFixed(3)),
      routes: this.flexibleRoutes(c),
      read_stretch: Number(this.appliedReadStretch.toFixed(3)),
    };
  }

  /** How many `rest_then_exchange` accounts the plan puts on each route. */
  private flexibleRoutes(plan: BudgetPlan): { rest: number; exchange: number } {
    const counts = { rest: 0, exchange: 0 };
    this.plannedSpecs.forEach((a, i) => {
      if (a.switch.path === 'rest_then_exchange') counts[plan.routes[i]!]++;
    });
    return counts;
  }

  private logPlan(plan: BudgetPlan, before: BudgetPlan | undefined, accounts: number): void {
    const budget = plan.budgetPerSecond;
    const coldStart = plan.coldStart.longestPeriods;
    const over = plan.verdicts.filter((v) => v === 'over_budget').length;
    const short = plan.verdicts.filter((v) => v === 'short_horizon').length;
    const fields = { event: 'cadence', tier: plan.tier, cold_start: coldStart, cold_start_order: plan.coldStart.order, stretch: Number(plan.stretch.toFixed(3)), arms_per_second: Number(plan.armsPerSecond.toFixed(2)), budget_per_second: Number(budget.toFixed(3)), budget_share: Number(this.share.toFixed(3)), accounts, capacity_accounts: plan.capacityAccounts, short_horizon: short, over_budget: over };
    const log = this.deps.logger;
    if (coldStart && over === 0 && short === 0) log.info(fields, 'cold start: armed accounts at their longest safe periods, the rest of the window to provisioning');
    else if (over > 0) log.error(fields, `the arm budget cannot arm every account: ${over} left over_budget (lowest priority)`);
    else if (short > 0) log.error(fields, `the arm budget keeps every account armed, but ${short} with a horizon below its minimum`);
    else if (plan.stretch > 1) log.warn(fields, 're-arm periods stretched to fit the arm budget');
    else if (before !== undefined) log.info(fields, 're-arm periods back to the configured cadence');
  }
}

// ---- the slot calendar (used by CadenceControl.claimSlot) ----

/**
 * A calendar of re-arm slots `spacingMs` apart (1 / the plan's usable arms per second). Each re-arm
 * claims the latest free slot at or before its period's end: never later, so no horizon is shorter
 * than planned. Why: a cold start arms everyone back to back at the full budget, and re-arming each
 * exactly a period later keeps them packed forever, the plan's slack all in one idle gap, so no
 * hiccup is ever caught up (1 to 2.5 s of lag and lapses at 10,000 accounts). "Latest free slot" is
 * a union-find over slot indices with path compression; slots behind `now` are pruned now and then.
 */

/**
 * How far before its wish a re-arm may be pulled, as a share of its period: past it "latest free
 * slot" walks below a cold start's whole packed run (first arms go at the whole budget, slots at
 * 0.97 of it). At 50,000 accounts 454 re-arms were handed slots seconds after their first arm and
 * then waited, least urgent, up to 48.8 s.
 */
export const MAX_PULL_SHARE = 0.1;

export class SlotCalendar {
  /** Taken slot index -> a candidate index below it (union-find parent). */
  private readonly next = new Map<number, number>();
  private claimsSincePrune = 0;

  constructor(readonly spacingMs: number) {
    if (!(spacingMs > 0) || !Number.isFinite(spacingMs)) throw new RangeError(`slot spacing must be a positive number of ms, got ${spacingMs}`);
  }

  /** Claims the latest free slot in [notBeforeMs, wishMs]; none free (over budget): `wishMs`, unclaimed. */
  claim(wishMs: number, notBeforeMs: number): number {
    if (++this.claimsSincePrune >= 4096) this.prune(notBeforeMs);
    const k = this.find(Math.floor(wishMs / this.spacingMs));
    const at = Math.min(k * this.spacingMs, wishMs); // k * spacing may round a hair past the wish
    if (at < notBeforeMs) return wishMs;
    this.next.set(k, k - 1);
    return at;
  }

  /** Slots held (including pruned-later past ones); for tests and stats. */
  size(): number {
    return this.next.size;
  }

  /** Forgets slots before `nowMs`: nobody claims the past. */
  prune(nowMs: number): void {
    this.claimsSincePrune = 0;
    const before = Math.floor(nowMs / this.spacingMs);
    for (const k of this.next.keys()) if (k < before) this.next.delete(k);
  }

  private find(k: number): number {
    let root = k;
    for (let p = this.next.get(root); p !== undefined; p = this.next.get(root)) root = p;
    // Path compression: every taken slot on the way now points at the free one.
    for (let i = k, p = this.next.get(i); p !== undefined && i !== root; i = p, p = this.next.get(i)) this.next.set(i, root);
    return root;
  }
}
