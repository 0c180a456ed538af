import type { AccountActivity, ActivityReporter, LastCancelFired } from '../account/activity.js';
import { venueNameOf } from '../account/clob.js';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { CadenceControl } from '../account/cadence-control.js';
import { ratePerSecond, type LimitSource, type ScopeLimit } from '../budget/limits.js';
import { shouldBeArmed } from '../account/account.js';
import type { AccountStatus, AgentVenueStatus, KeeperDeps, KeeperStatus, AccountState } from '../account/keeper-types.js';
import type { AddressActionsView, AgentCheckView } from '../account/keeper-types.js';
import type { BotView } from '../liveness/bot-liveness.js';
import { triggersLeft } from '../liveness/liveness.js';
import type { SwitchState } from '../switch/switch-machine.js';
import { VENUE_FACTS } from '../venue/facts.js';
import type { VenueSwitchFacts } from '../venue/switch-facts.js';
import { keepsMinHorizon } from '../plan/horizon.js';

/**
 * What the keeper shows: readiness (`/readyz`) and status (`/status`, the status page), as pure
 * functions of a snapshot of its state.
 */
export interface ViewInput {
  state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped';
  accounts: readonly AccountState[];
  venueNowMs: number;
  skewSeconds: number;
  wsConnected: boolean;
  budgetMode: string;
  cadence: Pick<CadenceControl, 'isOverBudget' | 'effectiveSettings' | 'view' | 'accountPlan'>;
  triggersToday: (name: string) => number;
  /** The request budget's limits (scheduler.limits()); absent: not shown. */
  budgetLimits?: () => ScopeLimit[];
  /** Persisted with the trigger counts: it survives a restart (state/triggers.ts). */
  lastCancelFired: (name: string) => LastCancelFired | null;
  activity: Pick<ActivityReporter, 'startProgress'>;
  /** The account's bot (bot-liveness.ts); absent or null: no liveness. */
  bot?: (name: string) => BotView | null;
}

export interface Readiness {
  ready: boolean;
  faults: Array<{ account: string; problem: string; horizon_seconds: number | null }>;
}

/**
 * `maxFaults`: stop at that many (`/status` needs only whether there is one; listing every short
 * account's problem was most of a `/status` when many were short).
 */
export function readinessOf(v: ViewInput, maxFaults = Number.POSITIVE_INFINITY): Readiness {
  const faults: Array<{ account: string; problem: string; horizon_seconds: number | null }> = [];
  if (v.state !== 'running') faults.push({ account: '*', problem: `keeper ${v.state}`, horizon_seconds: null });
  for (const m of v.accounts) {
    if (faults.length >= maxFaults) break;
    if (v.cadence.isOverBudget(m.spec.name)) {
      faults.push({ account: m.spec.name, problem: 'over_budget: the request budget cannot arm it (higher-priority accounts come first)', horizon_seconds: m.runner?.horizonMs() ?? null });
      continue;
    }
    if (!shouldBeArmed(m)) continue;
    const h = m.runner?.horizonMs() ?? null;
    const horizon = h === null ? null : h / 1000;
    if (!m.runner) faults.push({ account: m.spec.name, problem: `not provisioned: ${m.provisionError ?? 'pending'}`, horizon_seconds: null });
    else if (horizon === null || !keepsMinHorizon(horizon * 1000, m.spec.switch.minHorizonMs)) {
      faults.push({ account: m.spec.name, problem: horizon === null ? 'not armed' : `horizon ${horizon.toFixed(1)} s below ${m.spec.switch.minHorizonMs / 1000} s`, horizon_seconds: horizon });
    }
  }
  return { ready: faults.length === 0, faults };
}

/** `/status` `budget_limits`: each rate scope's limit in force, and where it comes from. */
export interface BudgetLimitView {
  scope: string;
  /** `achieved`: the pace the keeper achieved while arms waited, below the venue's limit (the plan is made for it). */
  source: LimitSource;
  limit: number;
  window_seconds: number;
  per_second: number;
  configured: { limit: number; window_seconds: number } | null;
}

export function budgetLimitsView(limits: readonly ScopeLimit[]): BudgetLimitView[] {
  return limits.map((l) => ({
    scope: l.scope,
    source: l.source,
    limit: l.inForce.limit,
    window_seconds: l.inForce.windowMs / 1000,
    per_second: Number(ratePerSecond(l.inForce).toFixed(3)),
    configured: l.configured ? { limit: l.configured.limit, window_seconds: l.configured.windowMs / 1000 } : null,
  }));
}

export function statusOf(v: ViewInput, ready: boolean): KeeperStatus & { budget_limits: BudgetLimitView[] } {
  return { ...statusHeadOf(v, ready), accounts: [...accountStatusesOf(v)] };
}

/** `/status` without its `accounts`, which come last (statusOf; the keeper writes them in pieces: accountStatusesOf). */
export function statusHeadOf(v: ViewInput, ready: boolean): Omit<KeeperStatus, 'accounts'> & { budget_limits: BudgetLimitView[] } {
  return {
    venue_time: new Date(v.venueNowMs).toISOString(),
    cadence: v.cadence.view(),
    clock_skew_seconds: v.skewSeconds,
    budget_mode: v.budgetMode,
    budget_limits: budgetLimitsView(v.budgetLimits?.() ?? []),
    ws_connected: v.wsConnected,
    ready,
    start_progress: v.activity.startProgress(),
  };
}

/**
 * `/status`'s accounts one at a time, each made from the account's state when it is read (against
 * the snapshot's venue time), for a body written in pieces with turns of the event loop between:
 * at 50,000 accounts the whole was about 2 s of one turn on a starved machine.
 */
export function* accountStatusesOf(v: ViewInput): Generator<AccountStatus> {
  for (const m of v.accounts) yield accountStatusOf(v, m);
}

function accountStatusOf(v: ViewInput, m: AccountState): AccountStatus {
  const venueNow = v.venueNowMs;
  const s = m.runner?.snapshot();
  const d = s?.deadlineMs ?? null;
  const p = m.provisioned;
  const settings = v.cadence.effectiveSettings(m.spec);
  return {
    name: m.spec.name,
    address: m.spec.address,
    venue: venueNameOf(m.spec),
    account_type: p?.accountType,
    phase: s?.phase ?? (m.provisionError ? 'provisioning_failed' : 'provisioning'),
    should_be_armed: shouldBeArmed(m),
    armed: d !== null && d > venueNow,
    deadline: d === null ? null : new Date(d).toISOString(),
    horizon_seconds: d === null ? null : Math.round((d - venueNow) / 100) / 10,
    min_horizon_seconds: m.spec.switch.minHorizonMs / 1000,
    last_arm: s?.lastResult
      ? { op: s.lastResult.op, result: s.lastResult.result, reason: s.lastResult.reason, message: s.lastResult.message, path: s.lastResult.route, at: new Date(s.lastResult.atMs).toISOString() }
      : null,
    last_success_at: s?.lastSuccessMs ? new Date(s.lastSuccessMs).toISOString() : null,
    open_orders: m.orders?.count ?? null,
    orders_source: m.orders?.source ?? null,
    positions: m.positions ? { count: m.positions.count, value_usdc: m.positions.valueUsdc, unrealized_pnl_usdc: m.positions.unrealizedPnlUsdc, source: m.positions.source } : null,
    triggers_today: v.triggersToday(m.spec.name),
    agent: p ? { address: p.agent.address, source: p.source, valid_until: p.agentValidUntilMs ? new Date(p.agentValidUntilMs).toISOString() : null, venue: agentCheckStatus(m.agentCheck?.view) } : null,
    provision_error: m.provisionError ?? null,
    path: m.spec.switch.path,
    arm_when: m.spec.switch.armWhen,
    on_shutdown: m.spec.switch.onShutdown,
    notifications: m.subscribed,
    rearm_every_seconds: settings.rearmEveryMs / 1000,
    plan: v.cadence.accountPlan(m.spec.name),
    coverage: m.spec.coveredBy ? { instances: [...m.spec.coveredBy], replica: m.spec.replica ?? 0 } : null,
    last_cancel_fired: v.lastCancelFired(m.spec.name),
    ...addressActionsStatus(m.addressActions.view),
    bot: botStatus(v.bot?.(m.spec.name) ?? null, s, v.triggersToday(m.spec.name), settings.venue),
  };
}

function botStatus(view: BotView | null, s: Readonly<SwitchState> | undefined, triggersToday: number, venue: VenueSwitchFacts): AccountStatus['bot'] {
  if (!view) return null;
  const cancelAt = s?.silence?.cancelAtMs ?? null;
  return {
    ...view,
    cancel_soon_deadline: cancelAt === null ? null : new Date(cancelAt).toISOString(),
    triggers_left: triggersLeft(triggersToday, venue),
  };
}

function agentCheckStatus(c: AgentCheckView | undefined): AgentVenueStatus | null {
  if (!c) return null;
  return { listed: c.listed, valid_until: c.validUntilMs === undefined ? null : new Date(c.validUntilMs).toISOString(), checked_at: new Date(c.checkedAtMs).toISOString() };
}

/** `/status` `address_budget` and `problem` of an account from its last `userRateLimit` read. */
function addressActionsStatus(b: AddressActionsView | undefined): Pick<AccountStatus, 'address_budget' | 'problem'> {
  if (!b) return { address_budget: null, problem: null };
  return {
    address_budget: { cum_vlm: b.cumVlm, actions_used: b.used, actions_cap: b.cap, actions_left: b.left, low: b.low },
    problem: b.belowVolumeGate ? `below_volume_gate: the venue reports $${b.cumVlm} traded, below its $${VENUE_FACTS.scheduleCancelVolumeGateUsd} gate (it refuses the scheduled cancel)` : null,
  };
}

/**
 * How many accounts' gauges one step of a scrape's refresh sets (publishGauges). At 50,000 accounts
 * the whole refresh is one loop over every account, tenths of a second on a starved machine, and
 * a scrape that ran it in one turn held every re-arm due meanwhile.
 */
export const GAUGE_ACCOUNTS_PER_STEP = 1_000;

/**
 * The keeper's gauges derived from state (up, skew, WebSocket, then each account's), at every
 * scrape, in steps of GAUGE_ACCOUNTS_PER_STEP accounts: the scrape gives the event loop a turn
 * between two (metrics.ts onCollect). Each step reads the venue clock afresh, so an account
 * re-armed between two steps shows its own horizon, not one from before.
 */
export function* publishGauges(deps: Pick<KeeperDeps, 'metrics' | 'venueClock'>, state: ViewInput['state'], feed: { connected(): boolean } | undefined, accounts: Iterable<AccountState>): Generator<void> {
  const m = deps.metrics;
  m.up.set(state === 'stopped' || state === 'new' ? 0 : 1);
  m.clockSkew.set(deps.venueClock.skewSeconds());
  m.wsConnected.set(feed?.connected() ? 1 : 0);
  yield* publishAccountGauges(m, accounts, () => deps.venueClock.nowMs());
}

/** Each account's gauges (armed, horizon, deadline, should-be-armed, configured figures), in steps of `perStep` accounts. */
export function* publishAccountGauges(metrics: KeeperMetrics, accounts: Iterable<AccountState>, venueNowMs: () => number, perStep = GAUGE_ACCOUNTS_PER_STEP): Generator<void> {
  let venueNow = venueNowMs();
  let inStep = 0;
  for (const acct of accounts) {
    if (inStep === perStep) {
      yield;
      venueNow = venueNowMs();
      inStep = 0;
    }
    inStep += 1;
    const name = acct.spec.name;
    const s = acct.runner?.snapshot();
    const deadline = s?.deadlineMs ?? null;
    const armed = deadline !== null && deadline > venueNow;
    metrics.armed.set({ account: name }, armed ? 1 : 0);
    metrics.horizon.set({ account: name }, armed ? (deadline - venueNow) / 1000 : 0);
    if (deadline !== null) metrics.deadline.set({ account: name }, deadline / 1000);
    metrics.shouldBeArmed.set({ account: name }, shouldBeArmed(acct) ? 1 : 0);
    metrics.minHorizonConfigured.set({ account: name }, acct.spec.switch.minHorizonMs / 1000);
    metrics.deadlineConfigured.set({ account: name }, acct.spec.switch.deadlineMs / 1000);
  }
}

/** What the minute summary and the start-up progress read of each account (activity.ts). */
export function activityOf(accounts: Iterable<AccountState>, venueNowMs: number): AccountActivity[] {
  return [...accounts].map((m) => {
    const s = m.runner?.snapshot();
    const d = s?.deadlineMs ?? null;
    const armed = d !== null && d > venueNowMs;
    return { name: m.spec.name, shouldBeArmed: shouldBeArmed(m), armed, horizonSeconds: armed ? (d - venueNowMs) / 1000 : null, everArmed: (s?.lastSuccessMs ?? null) !== null, provisionFailed: !m.runner && m.provisionError !== undefined, ineligible: s?.phase === 'ineligible' };
  });
}

/**
 * The accounts this instance has settled: armed by itself with at least their minimum horizon
 * left, or judged by its switch not to be armed (ineligible, `orders_open` with no orders, a silent
 * bot), as the previous owner would judge them. What a fleet publishes, so an instance handing an
 * account over lets go only once its new owner protects it (src/fleet/fleet.ts). An account still
 * provisioning, or over budget here, is not settled: the previous owner keeps arming it.
 */
export function settledOf(accounts: Iterable<AccountState>, venueNowMs: number, cadence: Pick<CadenceControl, 'isOverBudget'>): string[] {
  const out: string[] = [];
  for (const m of accounts) {
    const r = m.runner;
    if (!r || cadence.isOverBudget(m.spec.name)) continue;
    const d = r.snapshot().deadlineMs;
    if (!r.shouldBeArmed() || (d !== null && keepsMinHorizon(d - venueNowMs, m.spec.switch.minHorizonMs))) out.push(m.spec.name);
  }
  return out;
}
