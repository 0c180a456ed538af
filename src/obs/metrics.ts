import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ARM_ROUTES } from '../venue/routes.js';
import { AccountFamily, AccountTable, KeeperRegistry } from './account-series.js';

/**
 * Every metric of docs/DESIGN.md section 2 (names and labels are the contract), declared once here.
 * The registry is ours (never prom-client's global one); label values are pre-created so that
 * rates and absent() alerts work from the first scrape.
 */
export const ARM_RESULTS = ['ok', 'rate_limited', 'rejected', 'error'] as const;
/**
 * Scopes of the venue's 429s. `client` is gone from this metric: our own budget holding a request
 * back is ordinary pacing, not a refusal, and is counted apart (dms_keeper_client_pacing_waits_total).
 */
export const RATE_LIMIT_SCOPES = ['endpoint', 'global'] as const;
/** Queues of the client budget (budget/request-class.ts RequestQueue). */
export const PACING_KINDS = ['arm', 'read'] as const;
/** The state directory's files, as `dms_keeper_state_unreadable_total` names them. */
export const STATE_FILES = ['agent', 'triggers', 'budget', 'fleet'] as const;
/** Where a read came from: the service's listing or the venue's info endpoint (account/watcher.ts). */
export const READ_SOURCES = ['service', 'venue'] as const;
export type ReadSource = (typeof READ_SOURCES)[number];
/** Why a heartbeat was refused (docs/liveness.md, the heartbeat API): one HTTP status each. */
export const HEARTBEAT_REFUSALS = ['malformed', 'unauthorized', 'unknown_account', 'too_large', 'rate_limited', 'relay_unavailable'] as const;
export type HeartbeatRefusal = (typeof HEARTBEAT_REFUSALS)[number];
/** A probe of a bot's health URL: ok (2xx in time), another status, no answer in time, no answer at all. */
export const PROBE_RESULTS = ['ok', 'http_status', 'timeout', 'error'] as const;
export type ProbeResult = (typeof PROBE_RESULTS)[number];

export interface KeeperMetrics {
  registry: Registry;
  /** Where the per-account series keep their values (one row an account, see account-series.ts). */
  accounts: AccountTable;
  /**
   * Run at every scrape before anything is read, so gauges like the horizon are exact then. A hook
   * may work in steps (a generator): /metrics gives the event loop a turn between two.
   */
  onCollect: Array<() => Iterable<unknown> | void>;
  armed: AccountFamily;
  deadline: AccountFamily;
  horizon: AccountFamily;
  lastArmSuccess: AccountFamily;
  armRequests: AccountFamily<'result'>;
  armLatency: Histogram<'path'>;
  openOrders: AccountFamily;
  positions: AccountFamily;
  /** 1 for the source (`service`, `venue`) the account's last orders read came from. */
  ordersSource: AccountFamily<'source'>;
  positionValue: AccountFamily;
  unrealizedPnl: AccountFamily;
  cancelsFired: AccountFamily;
  notifications: AccountFamily;
  wsConnected: Gauge;
  venueRequests: Counter<'endpoint' | 'code'>;
  rateLimited: Counter<'scope'>;
  clockSkew: Gauge;
  venueClockSteps: Counter<'direction'>;
  overBudget: AccountFamily;
  agentApproved: AccountFamily;
  agentListed: AccountFamily;
  agentValidUntil: AccountFamily;
  configReloads: Counter<'result'>;
  buildInfo: Gauge<'version'>;
  // additions beyond the contract
  triggersToday: AccountFamily;
  shouldBeArmed: AccountFamily;
  ineligible: AccountFamily;
  /** nRequestsCap - nRequestsUsed of the account's address at the last userRateLimit read (absent until one answered). */
  addressActionsLeft: AccountFamily;
  armLag: Histogram;
  lapses: AccountFamily;
  stateWriteErrors: Counter<'reason'>;
  /** State files found unreadable (corrupt) at a load, by file (agent, triggers, budget). */
  stateUnreadable: Counter<'file'>;
  readsShed: Counter;
  /** Log lines dropped because stdout's reader fell behind (obs/logger.ts stdoutLogDestination). */
  logLinesDropped: Counter;
  up: Gauge;
  cadenceStretch: Gauge;
  /** Factor applied to the configured read periods so the reads fit what the arms leave. */
  readStretch: Gauge;
  capacityAccounts: Gauge;
  armBudgetUtilisation: Gauge;
  /** The configured switch of each account, so alerts compare against it instead of a constant. */
  minHorizonConfigured: AccountFamily;
  deadlineConfigured: AccountFamily;
  /** Requests our own budget made wait for a slot: normal pacing, not trouble (see RATE_LIMIT_SCOPES). */
  clientPacingWaits: Counter<'kind'>;
  budgetMode: Gauge<'mode'>;
  /** `shard.fleet`: live instances in the last membership read. */
  fleetMembers: Gauge;
  /** `shard.fleet`: 1 while the membership is read from Redis, 0 while the last one known stands. */
  fleetConnected: Gauge;
  /** `shard.fleet`: accounts held here until their new owners have armed them. */
  fleetHandovers: Gauge;
  /** `shard.fleet`: accounts gained and let go. */
  fleetMoves: Counter<'direction'>;
  /** Requests per second of each rate scope's limit in force, by where it comes from (only that series is present). */
  budgetLimit: Gauge<'scope' | 'source'>;
  /** Requests that went without their shared-budget token because their account would otherwise pass its deadline. */
  sharedBudgetBypass: Counter<'class'>;
  /** Requests dropped because their shared-budget token did not come within their wait. */
  sharedBudgetShed: Counter<'class'>;
  // bot liveness (docs/liveness.md): only accounts with `liveness:` have these series
  /** 1 while the account's bot counts as alive (heard from within the silence, or the start's grace), 0 silent. */
  botAlive: AccountFamily;
  /** 1 for the account's venue: join on `account` to read any per-account series by venue (its label values come from the config, so not an AccountFamily). */
  accountVenue: Gauge<'account' | 'venue'>;
  accountReplicas: AccountFamily;
  accountReplica: AccountFamily;
  botLastSeen: AccountFamily;
  botSilences: AccountFamily;
  cancelSoon: AccountFamily;
  heartbeats: AccountFamily;
  heartbeatsRefused: Counter<'reason'>;
  /** Heartbeats for another shard's account published to the fleet (`out`), another instance's applied here (`in`). */
  heartbeatsRelayed: Counter<'direction'>;
  botProbes: AccountFamily<'result'>;
}

/**
 * How often prom-client's event-loop monitor samples the loop's delay (ms; prom-client's default
 * is 10). Each sample is a timer of its own that wakes the loop: at 10 ms an idle Node process on
 * the 2-vCPU bench machine spent 8.2 ms of CPU a second on it (89.7 against 7.4 ms in 10 s), a
 * tenth of the keeper's whole CPU at 1,000 accounts; at 100 ms, 0.3 ms. Each sample still measures
 * its delay to the microsecond, so a stall shows in `nodejs_eventloop_lag_*` as before; the
 * quantiles rest on ten samples a second instead of a hundred.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

export function createMetrics(opts: { version: string; defaultMetrics?: boolean; registry?: Registry }): KeeperMetrics {
  const registry = opts.registry ?? new KeeperRegistry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const r = [registry];
  const onCollect: Array<() => Iterable<unknown> | void> = [];
  const table = new AccountTable();
  const m: KeeperMetrics = {
    registry,
    accounts: table,
    onCollect,
    // Registered first: its collect() refreshes every derived gauge before the registry reads them.
    armed: new AccountFamily({
      name: 'dms_keeper_armed',
      help: '1 while the account has a scheduled cancel set by this keeper in the future',
      type: 'gauge',
      table,
      registers: r,
      beforeCollect: function* () {
        for (const f of onCollect) {
          const steps = f();
          if (steps) yield* steps;
        }
      },
    }),
    deadline: new AccountFamily({ name: 'dms_keeper_deadline_timestamp_seconds', help: 'Venue time of the armed scheduled cancel (Unix seconds)', type: 'gauge', table, registers: r }),
    horizon: new AccountFamily({ name: 'dms_keeper_horizon_seconds', help: 'Armed deadline minus venue now, in seconds (0 when not armed)', type: 'gauge', table, registers: r }),
    lastArmSuccess: new AccountFamily({ name: 'dms_keeper_last_arm_success_timestamp_seconds', help: 'Local time of the last accepted arm (Unix seconds)', type: 'gauge', table, registers: r }),
    armRequests: new AccountFamily({ name: 'dms_keeper_arm_requests_total', help: 'scheduleCancel arm requests by result', type: 'counter', table, label: { name: 'result', values: ARM_RESULTS }, registers: r }),
    armLatency: new Histogram({
      name: 'dms_keeper_arm_latency_seconds',
      help: 'Latency of scheduleCancel requests by path',
      labelNames: ['path'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: r,
    }),
    openOrders: new AccountFamily({ name: 'dms_keeper_open_orders', help: 'Open orders of the account at the last read', type: 'gauge', table, registers: r }),
    ordersSource: new AccountFamily({ name: 'dms_keeper_orders_source', help: "1 for the source that counted the account's open orders at the last read (service: the service's listing; venue: the venue's info endpoint, every order the cancel hits)", type: 'gauge', table, label: { name: 'source', values: READ_SOURCES }, registers: r }),
    positions: new AccountFamily({ name: 'dms_keeper_positions', help: 'Open positions of the account at the last read', type: 'gauge', table, registers: r }),
    positionValue: new AccountFamily({ name: 'dms_keeper_position_value_usdc', help: 'Sum of position value_usdc at the last read', type: 'gauge', table, registers: r }),
    unrealizedPnl: new AccountFamily({ name: 'dms_keeper_unrealized_pnl_usdc', help: 'Sum of unrealized_pnl_usdc at the last read', type: 'gauge', table, registers: r }),
    cancelsFired: new AccountFamily({ name: 'dms_keeper_cancels_fired_total', help: 'Scheduled cancels that fired (orders cancelled by the venue)', type: 'counter', table, registers: r }),
    notifications: new AccountFamily({ name: 'dms_keeper_notifications_total', help: 'WebSocket notifications received', type: 'counter', table, registers: r }),
    wsConnected: new Gauge({ name: 'dms_keeper_ws_connected', help: '1 while the notification WebSocket is connected', registers: r }),
    venueRequests: new Counter({ name: 'dms_keeper_venue_requests_total', help: 'Requests to the venue by endpoint and HTTP status (or error)', labelNames: ['endpoint', 'code'], registers: r }),
    rateLimited: new Counter({ name: 'dms_keeper_rate_limited_total', help: 'Arm requests the venue refused with 429, by the scope it named (endpoint, global)', labelNames: ['scope'], registers: r }),
    clockSkew: new Gauge({ name: 'dms_keeper_clock_skew_seconds', help: 'Local clock minus venue clock, in seconds', registers: r }),
    overBudget: new AccountFamily({ name: 'dms_keeper_over_budget', help: '1 while the request budget cannot arm this account (lower priority than those it can)', type: 'gauge', table, registers: r }),
    venueClockSteps: new Counter({ name: 'dms_keeper_venue_clock_steps_total', help: 'Corrections of the venue clock estimate over 1 s (every account re-planned), by direction', labelNames: ['direction'], registers: r }),
    agentApproved: new AccountFamily({ name: 'dms_keeper_agent_approved', help: '1 while the account has an approved agent signing for it', type: 'gauge', table, registers: r }),
    agentListed: new AccountFamily({ name: 'dms_keeper_agent_listed', help: "1 when the venue's extraAgents of the master listed the account's agent at the last read, 0 when it did not; absent until read (only a keeper that reads the venue reads it)", type: 'gauge', table, registers: r }),
    agentValidUntil: new AccountFamily({ name: 'dms_keeper_agent_valid_until_timestamp_seconds', help: "Venue time the agent's approval lapses (Unix seconds): the earlier of the keeper's record and the venue's extraAgents; absent when neither states one", type: 'gauge', table, registers: r }),
    configReloads: new Counter({ name: 'dms_keeper_config_reloads_total', help: 'Config reloads (SIGHUP) by result', labelNames: ['result'], registers: r }),
    buildInfo: new Gauge({ name: 'dms_keeper_build_info', help: 'Build information; always 1', labelNames: ['version'], registers: r }),
    triggersToday: new AccountFamily({ name: 'dms_keeper_triggers_today', help: 'Scheduled cancels that fired this UTC day (the venue allows 10)', type: 'gauge', table, registers: r }),
    shouldBeArmed: new AccountFamily({ name: 'dms_keeper_should_be_armed', help: '1 when the account should carry a schedule now (arm_when, eligibility)', type: 'gauge', table, registers: r }),
    ineligible: new AccountFamily({ name: 'dms_keeper_account_ineligible', help: '1 while the venue refuses scheduleCancel for the account (volume gate)', type: 'gauge', table, registers: r }),
    addressActionsLeft: new AccountFamily({ name: 'dms_keeper_address_actions_left', help: "The account address's actions left at the last userRateLimit read (nRequestsCap - nRequestsUsed; negative: exhausted, one action per 10 s). Every re-arm spends one, and so does the trader's bot", type: 'gauge', table, registers: r }),
    armLag: new Histogram({
      name: 'dms_keeper_arm_lag_seconds',
      help: 'Re-arm send time minus planned slot',
      // 10 ms apart up to 100 ms, so a p99 of tens of ms reads within 10 ms.
      buckets: [0.001, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.15, 0.2, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: r,
    }),
    lapses: new AccountFamily({ name: 'dms_keeper_lapses_total', help: 'Deadlines that passed while the account should have been armed', type: 'counter', table, registers: r }),
    stateUnreadable: new Counter({ name: 'dms_keeper_state_unreadable_total', help: 'State files found unreadable when loaded (corrupt: not JSON, not the expected record), by file: agent (a new agent is approved), triggers (counted from zero), budget (start-up pacing without the previous instance)', labelNames: ['file'], registers: r }),
    stateWriteErrors: new Counter({ name: 'dms_keeper_state_write_errors_total', help: 'Failures to persist state, by reason', labelNames: ['reason'], registers: r }),
    readsShed: new Counter({ name: 'dms_keeper_reads_shed_total', help: 'Read requests dropped to keep budget for arms', registers: r }),
    logLinesDropped: new Counter({ name: 'dms_keeper_log_lines_dropped_total', help: "Log lines dropped because stdout's reader fell behind by more than the keeper holds in memory (8 MiB): the keeper never waits for its log", registers: r }),
    up: new Gauge({ name: 'dms_keeper_up', help: '1 while the keeper loop runs', registers: r }),
    cadenceStretch: new Gauge({ name: 'dms_keeper_cadence_stretch', help: 'Factor applied to configured re-arm periods to fit the arm budget (1 = as configured)', registers: r }),
    readStretch: new Gauge({ name: 'dms_keeper_read_stretch', help: 'Factor applied to the configured orders and positions read periods so the reads fit what the arms leave of the budget (1 = as configured)', registers: r }),
    capacityAccounts: new Gauge({ name: 'dms_keeper_capacity_accounts', help: 'Accounts the arm budget can hold at the longest periods their margins allow', registers: r }),
    armBudgetUtilisation: new Gauge({ name: 'dms_keeper_arm_budget_utilisation', help: 'Planned arms per second over the arm budget', registers: r }),
    minHorizonConfigured: new AccountFamily({ name: 'dms_keeper_min_horizon_seconds', help: "The account's configured switch.min_horizon_seconds (readiness and DmsKeeperHorizonLow compare the horizon with it)", type: 'gauge', table, registers: r }),
    deadlineConfigured: new AccountFamily({ name: 'dms_keeper_deadline_seconds', help: "The account's configured switch.deadline_seconds (each arm sets the cancel this far ahead)", type: 'gauge', table, registers: r }),
    budgetLimit: new Gauge({ name: 'dms_keeper_budget_limit', help: 'Requests per second of the limit in force on each rate scope: source configured (rate_limits), learned (a 429 announced a lower one; probed back after quiet spells) or achieved (the keeper sent less than it while arms waited: the plan is made for that pace; probed back the same way). Only the series of the source in force is present', labelNames: ['scope', 'source'], registers: r }),
    fleetMembers: new Gauge({ name: 'dms_keeper_fleet_members', help: 'shard.fleet: live instances in the last membership read from Redis (the last one known while Redis is away)', registers: r }),
    fleetConnected: new Gauge({ name: 'dms_keeper_fleet_membership_connected', help: 'shard.fleet: 1 while the membership is read from Redis, 0 while the last one known stands (the instance keeps arming what it holds)', registers: r }),
    fleetHandovers: new Gauge({ name: 'dms_keeper_fleet_handovers_pending', help: 'shard.fleet: accounts this instance no longer owns and still arms until their new owners have armed them', registers: r }),
    fleetMoves: new Counter({ name: 'dms_keeper_fleet_accounts_moved_total', help: 'shard.fleet: accounts this instance gained (direction=gained) and let go after a handover (direction=released)', labelNames: ['direction'], registers: r }),
    budgetMode: new Gauge({ name: 'dms_keeper_budget_mode', help: 'The request budget in force: local (this instance), shared (with the other instances of rate_limits.shared.name, through Redis) or local_fallback (Redis unreachable: this instance\'s share)', labelNames: ['mode'], registers: r }),
    sharedBudgetBypass: new Counter({ name: 'dms_keeper_shared_budget_bypass_total', help: 'Requests sent without their token from the shared budget (rate_limits.shared) because their account would otherwise have passed its deadline, by class (arm)', labelNames: ['class'], registers: r }),
    sharedBudgetShed: new Counter({ name: 'dms_keeper_shared_budget_shed_total', help: 'Requests dropped because their token from the shared budget did not come within their wait (first arms, approvals, resolves: 60 s; reads: their max wait), by class', labelNames: ['class'], registers: r }),
    accountVenue: new Gauge({ name: 'dms_keeper_account_venue', help: "1 for the account's venue (venue: hyperliquid, the config's venue:, or a name under venues:); join on account, e.g. dms_keeper_horizon_seconds * on(account) group_left(venue) dms_keeper_account_venue", labelNames: ['account', 'venue'], registers: r }),
    accountReplicas: new AccountFamily({ name: 'dms_keeper_account_replicas', help: 'How many instances arm the account (shard.replication, shard.fleet; /status accounts[].coverage names them)', type: 'gauge', table, registers: r }),
    accountReplica: new AccountFamily({ name: 'dms_keeper_account_replica', help: "Which of the account's owners this instance is: 0 the first (its own shard's, or the best rendezvous score), 1 the second", type: 'gauge', table, registers: r }),
    botAlive: new AccountFamily({ name: 'dms_keeper_bot_alive', help: "1 while the account's bot counts as alive (a heartbeat or a passing probe within liveness.silence_seconds, or the keeper's start-up grace), 0 once silent; only accounts with liveness", type: 'gauge', table, registers: r }),
    botLastSeen: new AccountFamily({ name: 'dms_keeper_bot_last_seen_timestamp_seconds', help: "Local time of the bot's last heartbeat or passing probe (Unix seconds); absent until seen", type: 'gauge', table, registers: r }),
    botSilences: new AccountFamily({ name: 'dms_keeper_bot_silences_total', help: "Times the account's bot was judged silent (its re-arms stopped)", type: 'counter', table, registers: r }),
    cancelSoon: new AccountFamily({ name: 'dms_keeper_cancel_soon_total', help: "Cancel-soon arms the venue accepted: a silent bot's account scheduled to cancel at the venue's minimum lead", type: 'counter', table, registers: r }),
    heartbeats: new AccountFamily({ name: 'dms_keeper_heartbeats_total', help: 'Heartbeats accepted, per account named', type: 'counter', table, registers: r }),
    heartbeatsRefused: new Counter({ name: 'dms_keeper_heartbeats_refused_total', help: "Heartbeat requests refused, by reason: malformed, unauthorized, unknown_account, too_large, rate_limited (nothing changed), relay_unavailable (another shard's account named while the fleet's Redis is out of reach: only this shard's accounts applied)", labelNames: ['reason'], registers: r }),
    heartbeatsRelayed: new Counter({ name: 'dms_keeper_heartbeats_relayed_total', help: "Heartbeats relayed through the fleet's Redis, per account: out (received here for another shard's account, published), in (another instance's, applied to an account of this shard)", labelNames: ['direction'], registers: r }),
    botProbes: new AccountFamily({ name: 'dms_keeper_bot_probes_total', help: "Probes of the bot's health URL by result: ok (2xx in time), http_status, timeout, error", type: 'counter', table, label: { name: 'result', values: PROBE_RESULTS }, registers: r }),
    clientPacingWaits: new Counter({ name: 'dms_keeper_client_pacing_waits_total', help: "Requests that waited for a slot of the keeper's own request budget (ordinary pacing; venue 429s are dms_keeper_rate_limited_total)", labelNames: ['kind'], registers: r }),
  };
  m.buildInfo.set({ version: opts.version }, 1);
  for (const scope of RATE_LIMIT_SCOPES) m.rateLimited.inc({ scope }, 0);
  for (const kind of PACING_KINDS) m.clientPacingWaits.inc({ kind }, 0);
  m.sharedBudgetBypass.inc({ class: 'arm' }, 0);
  for (const reason of HEARTBEAT_REFUSALS) m.heartbeatsRefused.inc({ reason }, 0);
  for (const direction of ['out', 'in']) m.heartbeatsRelayed.inc({ direction }, 0);
  for (const path of ARM_ROUTES) m.armLatency.zero({ path });
  for (const result of ['ok', 'error']) m.configReloads.inc({ result }, 0);
  for (const reason of ['read_only', 'no_space', 'permission', 'io']) m.stateWriteErrors.inc({ reason }, 0);
  for (const file of STATE_FILES) m.stateUnreadable.inc({ file }, 0);
  m.wsConnected.set(0);
  m.clockSkew.set(0);
  m.cadenceStretch.set(1);
  m.readStretch.set(1);
  return m;
}

/** Pre-creates every per-account series so dashboards and rate() work before the first event. */
export function initAccountSeries(m: KeeperMetrics, account: string, opts: { agent?: boolean } = {}): void {
  for (const g of [m.armed, m.horizon, m.openOrders, m.positions, m.positionValue, m.unrealizedPnl, m.triggersToday, m.shouldBeArmed, m.ineligible]) {
    g.set({ account }, 0);
  }
  // An account without an agent (a CLOB venue's: its credentials sign) has no agent series: a 0
  // there would raise DmsKeeperAgentNotApproved for an agent that does not exist.
  if (opts.agent !== false) m.agentApproved.set({ account }, 0);
  for (const result of ARM_RESULTS) m.armRequests.inc({ account, result }, 0);
  for (const source of READ_SOURCES) m.ordersSource.set({ account, source }, 0);
  m.cancelsFired.inc({ account }, 0);
  m.notifications.inc({ account }, 0);
  m.lapses.inc({ account }, 0);
}

/** Removes an account's series (after a reload dropped it). */
export function removeAccountSeries(m: KeeperMetrics, account: string): void {
  m.accounts.remove(account);
}
