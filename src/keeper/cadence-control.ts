import type { Logger } from 'pino';
import type { KeeperMetrics } from '../obs/metrics.js';
import { planProtection, type ProtectionPlan } from '../sched/cadence.js';
import type { RequestScheduler } from '../sched/scheduler.js';
import { SlotCalendar } from '../sched/slot-calendar.js';
import type { KeeperAccountSpec, KeeperOptions, KeeperStatus, Managed } from './keeper-types.js';
import type { SwitchSettings } from './switch-machine.js';

/**
 * The keeper's cadence control: fits the accounts to the arm budget, never refusing
 * (planProtection: stretch periods, give up the retry reserve, shorten horizons, and only then
 * leave the lowest-priority accounts over_budget), hands each runner its effective settings, and
 * keeps the slot calendar at the planned arm rate. Runners keep their timers; the next slot uses
 * the new period.
 */
export class CadenceControl {
  private plan?: ProtectionPlan;
  /** Effective re-arm period per account name; null: over_budget. */
  private periods = new Map<string, number | null>();
  private budgetPerSecond = 0;
  /** Re-arm slots at the planned arm rate (rebuilt when the plan's rate changes). */
  private calendar?: SlotCalendar;

  constructor(private readonly deps: { scheduler: Pick<RequestScheduler, 'specOf' | 'queuedOn'>; metrics: KeeperMetrics; logger: Logger }) {}

  /** The arm budget in force: the configured one, or the venue's announced one when tighter. */
  armBudget(options: KeeperOptions): number | undefined {
    const configured = options.armBudgetPerSecond;
    const live = this.deps.scheduler.specOf('schedule_cancel');
    const announced = live ? (live.limit * 1000) / live.windowMs : undefined;
    if (configured === undefined) return announced;
    return announced === undefined ? configured : Math.min(configured, announced);
  }

  /** A 429 announced a budget other than the one the plan was made for. */
  budgetChanged(options: KeeperOptions): boolean {
    const budget = this.armBudget(options);
    return budget !== undefined && Math.abs(budget - this.budgetPerSecond) > 1e-9;
  }

  effectiveSettings(spec: KeeperAccountSpec): SwitchSettings {
    const period = this.periods.get(spec.name);
    if (period === undefined) return spec.switch;
    return period === null ? { ...spec.switch, overBudget: true } : { ...spec.switch, rearmEveryMs: period };
  }

  isOverBudget(name: string): boolean {
    return this.periods.get(name) === null;
  }

  /**
   * The calendar slot for a re-arm wished at `wishMs` (at or before it; see SlotCalendar), never
   * one the arms already queued will still be using: a slot before they drain would only queue
   * behind them. Measured at 10,000 accounts: re-arms pulled into the tail of the cold start
   * waited there up to 5.5 s.
   */
  claimSlot(wishMs: number, nowMs: number): number {
    if (!this.calendar) return wishMs;
    const drainMs = this.budgetPerSecond > 0 ? (this.deps.scheduler.queuedOn('schedule_cancel') * 1000) / this.budgetPerSecond : 0;
    return this.calendar.claim(wishMs, nowMs + drainMs);
  }

  apply(options: KeeperOptions, accounts: Iterable<Managed>): void {
    const budget = this.armBudget(options);
    if (budget === undefined) return;
    this.budgetPerSecond = budget;
    const managed = new Map([...accounts].map((m) => [m.spec.name, m]));
    const specs = options.accounts;
    const plan = planProtection(
      specs.map((a) => {
        const s = managed.get(a.name)?.runner?.snapshot();
        return { ...a.switch, priority: a.priority ?? 0, noOpenOrders: a.switch.armWhen === 'orders_open' && s?.openOrders === 0 };
      }),
      budget,
    );
    const before = this.plan;
    if (plan.usablePerSecond > 0 && this.calendar?.spacingMs !== 1000 / plan.usablePerSecond) this.calendar = new SlotCalendar(1000 / plan.usablePerSecond);
    this.plan = plan;
    this.periods = new Map(specs.map((a, i) => [a.name, plan.periodsMs[i] ?? null]));
    const m = this.deps.metrics;
    m.cadenceStretch.set(plan.stretch);
    m.capacityAccounts.set(plan.capacityAccounts);
    m.armBudgetUtilisation.set(budget > 0 ? plan.armsPerSecond / budget : 0);
    specs.forEach((a, i) => m.overBudget.set({ account: a.name }, plan.verdicts[i] === 'over_budget' ? 1 : 0));
    if (before === undefined || before.tier !== plan.tier || Math.abs(before.stretch - plan.stretch) > 1e-6) this.logPlan(plan, before, budget, specs.length);
    for (const acct of managed.values()) {
      const want = this.effectiveSettings(acct.spec);
      const now = acct.runner?.currentSettings();
      if (acct.runner && now && (now.rearmEveryMs !== want.rearmEveryMs || Boolean(now.overBudget) !== Boolean(want.overBudget))) acct.runner.updateSettings(want);
    }
  }

  view(): KeeperStatus['cadence'] {
    const c = this.plan;
    if (!c) return null;
    return {
      stretch: Number(c.stretch.toFixed(3)),
      arms_per_second: Number(c.armsPerSecond.toFixed(3)),
      budget_per_second: this.budgetPerSecond,
      capacity_accounts: c.capacityAccounts,
      holds: c.verdicts.every((v) => v === 'keeps_min_horizon'),
      tier: c.tier,
      over_budget: c.verdicts.filter((v) => v === 'over_budget').length,
      short_horizon: c.verdicts.filter((v) => v === 'short_horizon').length,
    };
  }

  private logPlan(plan: ProtectionPlan, before: ProtectionPlan | undefined, budget: number, accounts: number): void {
    const over = plan.verdicts.filter((v) => v === 'over_budget').length;
    const short = plan.verdicts.filter((v) => v === 'short_horizon').length;
    const fields = { event: 'cadence', tier: plan.tier, stretch: Number(plan.stretch.toFixed(3)), arms_per_second: Number(plan.armsPerSecond.toFixed(2)), budget_per_second: budget, accounts, capacity_accounts: plan.capacityAccounts, short_horizon: short, over_budget: over };
    const log = this.deps.logger;
    if (over > 0) log.error(fields, `the arm budget cannot arm every account: ${over} left over_budget (lowest priority)`);
    else if (short > 0) log.error(fields, `the arm budget keeps every account armed, but ${short} with a horizon below its minimum`);
    else if (plan.stretch > 1) log.warn(fields, 're-arm periods stretched to fit the arm budget');
    else if (before !== undefined) log.info(fields, 're-arm periods back to the configured cadence');
  }
}
