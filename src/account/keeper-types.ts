/**
 * The keeper's contract with its composition root and its parts: options, dependencies, the
 * per-account record, and the shapes of /status.
 */
import type { ChainField } from '../venue/signing/user-signed.js';
import type { OrdersSnapshot } from '../switch/fired.js';
import type { Logger } from 'pino';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { RequestScheduler } from '../budget/scheduler.js';
import type { VenueClock } from '../time/venue-clock.js';
import type { AgentStore } from '../state/agent-store.js';
import type { BudgetLog } from '../state/budget-log.js';
import type { TriggerCounter } from '../state/triggers.js';
import type { ArmRoute } from '../venue/routes.js';
import type { VenuePort } from '../venue/port.js';
import type { Network } from '../venue/types.js';
import type { NotificationClientEvent, SubscribeResult } from '../venue/ws.js';
import type { AccountRunner, ScheduleCancelSender, SenderVenue } from '../switch/account-runner.js';
import type { LastCancelFired, StartProgress } from './activity.js';
import type { KeyLoader, ProvisionSpec, ProvisionVenue, Provisioned } from './provision.js';
import type { ClobVenuePort } from '../venue/polymarket/port.js';
import type { SwitchConfig } from '../switch/switch-machine.js';
import type { AccountWatcher, PositionsSummary, ReadSource, WatchSource, WatchSourceMode } from './watcher.js';
import type { SigningCurve } from '../venue/signing/curve.js';
import type { InfoWeights } from '../venue/info.js';
import type { LivenessSpec } from '../liveness/liveness.js';
import type { BotEntry, BotView, ProbeFn } from '../liveness/bot-liveness.js';
import type { ForeignAccountSpec, HeartbeatBus } from '../liveness/heartbeat-relay.js';

/**
 * How this instance covers an account: which of its owners it is (`replica`, 0 first), the agent
 * slot it signs in (src/config/shard.ts replicaAgentName), and every instance that arms it.
 */
export interface AccountCover {
  replica: number;
  slot: number;
  coveredBy: readonly string[];
}

export interface KeeperAccountSpec extends ProvisionSpec {
  /** As configured; the keeper adds the account's venue's switch facts (CadenceControl.effectiveSettings). */
  switch: SwitchConfig;
  /** Protected first when the budget cannot arm every account (config `priority`, default 0). */
  priority?: number;
  /** Compared on reload: anything that changes who signs (address, agent name, key sources). */
  identity: string;
  /** Re-armed only while its bot is alive (docs/liveness.md); absent: while the keeper runs. */
  liveness?: LivenessSpec;
  /**
   * Which of the account's owners this instance is (src/config/shard.ts): 0 the first (static: the
   * account's own shard's; fleet: the best rendezvous score), 1 the second; a fleet instance handing
   * the account over counts as the last. Absent: 0. Only replica 0 brings a silent bot's deadline near.
   */
  replica?: number;
  /** The instances that arm this account (static: `shard-<index>`; fleet: instance names), shown in /status; absent: a lone instance. */
  coveredBy?: readonly string[];
  /**
   * On a CLOB venue (config `venues:`, docs/polymarket.md): the venue's name and the loaders of the
   * account's L2 credentials (read when its session starts, never held in the spec). Absent: the
   * default venue, with its agent.
   */
  clob?: { venue: string; credentials: { key: KeyLoader; secret: KeyLoader; passphrase: KeyLoader } };
}

export interface KeeperOptions {
  network: Network;
  /** The network field's name in approvals (`venue.chain_field`); absent: the venue's own. */
  chainField?: ChainField;
  accounts: KeeperAccountSpec[];
  /**
   * `source`: where orders and positions are read (watcher.ts WatchSourceMode; absent: `service`).
   * `perpDexes`: builder-deployed perp dexes read on the venue besides the default listing
   * (`watch.perp_dexes`; absent: none).
   */
  watch: { ordersEveryMs: number; positionsEveryMs: number; notifications: boolean; source?: WatchSourceMode; addressBudgetWarnShare?: number; perpDexes?: readonly string[] };
  /** A skew (local minus venue) beyond this is logged as an error. */
  maxClockSkewMs: number;
  /** Warn when this many of the day's triggers are spent. */
  triggerWarnAt: number;
  /** Arms per second the schedule-cancel budget allows (the adaptive cadence plans within it). */
  armBudgetPerSecond?: number;
  /** What each info request weighs (`rate_limits.info_weights`): the read plan's venue reads; absent: the published weights. */
  infoWeights?: InfoWeights;
  /**
   * The other shards' heartbeat accounts (docs/liveness.md, "Fleets"), whose heartbeats this
   * instance authenticates and relays; used only with `KeeperDeps.heartbeatBus`.
   */
  foreignAccounts?: ForeignAccountSpec[];
}

/** The WebSocket client as the keeper uses it. */
export interface NotificationFeed {
  start(): void;
  stop(): Promise<void>;
  subscribe(user: string): SubscribeResult;
  unsubscribe(user: string): void;
  connected(): boolean;
}

export interface KeeperDeps {
  /** Local clock (timers). */
  clock: Clock;
  /** Venue time estimate. */
  venueClock: VenueClock;
  scheduler: RequestScheduler;
  /** The venue port: every request, admitted through the shared budget (venue/port.ts). */
  venue: ProvisionVenue & SenderVenue & WatchSource & Pick<VenuePort, 'health' | 'switchFacts'> & Partial<Pick<VenuePort, 'infoUserRateLimit' | 'infoExtraAgents'>>;
  /** The CLOB venues (config `venues:`) by name, each its own port; absent: none. */
  clobVenues?: ReadonlyMap<string, ClobVenuePort>;
  /** Built lazily with the event sink; undefined when notifications are off. */
  notifications?: (onEvent: (e: NotificationClientEvent) => void) => NotificationFeed;
  metrics: KeeperMetrics;
  logger: Logger;
  agentStore: AgentStore;
  triggers: TriggerCounter;
  /** Calendar job at 00:00 UTC (node-cron in production). */
  scheduleDaily?: (fn: () => void) => { stop(): void };
  generateKey?: () => `0x${string}`;
  /** The secp256k1 implementation signers use (venue/signing/curve.ts); absent: viem's. */
  curve?: SigningCurve;
  /** Persists the budget's recent admissions so a restart paces itself (absent: no pacing memory). */
  budgetLog?: BudgetLog;
  /** GETs a bot's health URL for `liveness.probe` (its own connection pool); absent: probes fail as `error`. */
  probe?: ProbeFn;
  /** The fleet's heartbeat relay (Redis pub/sub, liveness/heartbeat-relay.ts); absent: no relay, another shard's account is unknown (404). */
  heartbeatBus?: HeartbeatBus;
  /** Called from the loop while the keeper is healthy (systemd watchdog). */
  onHealthyTick?: () => void;
  /** The request budget in force (`local`, `shared`, `local_fallback`); absent: local. */
  budgetMode?: () => string;
  /**
   * Shards planned by demand (`rate_limits.shared`, budget/shared-share.ts); absent: no shared
   * budget. `publishDemand`: what this instance will spend (at most once a second); `share()`: its
   * part of the whole configured budget in (0, 1], `fallback_share` while Redis is not answering.
   */
  sharedDemand?: { publishDemand(d: { armsPerSecond: number; backlog: number }): void; share(): number };
}

/** What the keeper holds per account (the parts of it share). */
export interface AccountState {
  spec: KeeperAccountSpec;
  log: Logger;
  runner?: AccountRunner;
  /** The live sender (replaced when the agent is re-provisioned; the runner keeps its timers). */
  sender?: ScheduleCancelSender;
  watcher?: AccountWatcher;
  provisioned?: Provisioned;
  provisionError?: string;
  provisionTimer?: TimerHandle;
  /** Venue time at which the agent is re-approved (AgentLifecycle.renewDue); undefined: none planned. */
  renewAtMs?: number;
  provisionAttempts: number;
  /** The provisioning under way (one at a time: two approvals would rotate the agent twice). */
  provisioning?: Promise<boolean>;
  /**
   * The last orders read: its count, which source answered it, and its snapshot (ids, venue
   * time) with the one before it: what a fired cancel cancelled is read from them (fired.ts).
   */
  orders?: { count: number; atMs: number; source: ReadSource; snapshot?: OrdersSnapshot; previous?: OrdersSnapshot };
  /** The last positions read, and which source answered it. */
  positions?: PositionsSummary & { atMs: number; source: ReadSource };
  subscribed: boolean;
  removed: boolean;
  /** The address's action budget and volume gate (address-actions.ts): the last read, the next one's timer. */
  addressActions: { view?: AddressActionsView; timer?: TimerHandle; reading: boolean };
  /** What the venue's list of the master's agents said of this account's agent (agent-check.ts); undefined: not checked. */
  agentCheck?: AgentCheckRecord;
  /** What is known of its bot (bot-liveness.ts); undefined: no liveness. */
  bot?: BotEntry;
  /** Armed at least once since it was added (its first arm is logged at info). */
  everArmed: boolean;
  /** Its agent is approved (or reused, or re-approved): the parts call this, the account starts or re-keys its switch (account.ts). */
  agentReady(): void;
}

/** The address's action budget at the last `userRateLimit` read (address-actions.ts). */
export interface AddressActionsView {
  cumVlm: string;
  used: number;
  cap: number;
  left: number;
  belowVolumeGate: boolean;
  /** The warn state (a day of re-arms over the share of `left`). */
  low: boolean;
}

/** `/status` `agent.venue`, as read (agent-check.ts). */
export interface AgentCheckView {
  listed: boolean;
  validUntilMs?: number;
  checkedAtMs: number;
}

/** The agent check's record of an account (agent-check.ts). */
export interface AgentCheckRecord {
  /** The agent these facts are about: a re-provisioning with a new agent starts afresh. */
  agent: string;
  everListed: boolean;
  warnedUnlisted: boolean;
  warnedExpiring: boolean;
  view?: AgentCheckView;
  timer?: TimerHandle;
}

/** `/status` `agent.venue`: the last read of the master's `extraAgents` about the account's agent. */
export interface AgentVenueStatus {
  listed: boolean;
  valid_until: string | null;
  checked_at: string;
}

export interface AccountStatus {
  name: string;
  address: string;
  /** Its venue's name: `hyperliquid` (the config's `venue:`) or one of `venues:`. */
  venue: string;
  account_type?: 'main' | 'subaccount';
  phase: string;
  should_be_armed: boolean;
  armed: boolean;
  deadline: string | null;
  horizon_seconds: number | null;
  min_horizon_seconds: number;
  last_arm: null | { op: string; result: string; reason?: string; message?: string; path: string; at: string };
  last_success_at: string | null;
  open_orders: number | null;
  /** Which source counted `open_orders`: the service's listing or the venue's info endpoint (null: none yet). */
  orders_source: ReadSource | null;
  /** `source`: which answered the last positions read (`service` or `venue`). */
  positions: null | { count: number; value_usdc: string; unrealized_pnl_usdc: string; source: ReadSource };
  triggers_today: number;
  /**
   * `valid_until`: when the approval lapses (the venue's figure once a check found an earlier one);
   * `venue`: the last read of the master's `extraAgents` (agent-check.ts), null until read.
   */
  agent: null | { address: string; source: string; valid_until: string | null; venue: AgentVenueStatus | null };
  provision_error: string | null;
  path: string;
  arm_when: string;
  on_shutdown: string;
  notifications: boolean;
  /** The effective period (the configured one unless the adaptive cadence stretched it). */
  rearm_every_seconds: number;
  /**
   * What the budget plan (plan/budget-plan.ts) decided for it: the route its arms are planned on and
   * its verdict (keeps_min_horizon, short_horizon, over_budget); null before the first plan. The
   * same figures `check-config` prints for it.
   */
  plan: { route: ArmRoute; verdict: string } | null;
  /**
   * Which instances arm it (`shard.replication`, `shard.fleet`), and which of them this one is
   * (replica 0: the first). Null for a lone instance.
   */
  coverage: { instances: string[]; replica: number } | null;
  /** The last scheduled cancel that fired since the keeper started (null: none). */
  last_cancel_fired: LastCancelFired | null;
  /** The address's action budget at the last `userRateLimit` read (null: none yet). */
  address_budget: null | { cum_vlm: string; actions_used: number; actions_cap: number; actions_left: number; low: boolean };
  /** What the keeper found wrong before arming (`below_volume_gate: ...`); null: nothing. */
  problem: string | null;
  /**
   * The account's bot (docs/liveness.md); null without liveness. `cancel_soon_deadline`: when the
   * venue cancels a silent bot's orders (a cancel-soon arm accepted, or a deadline already nearer);
   * `triggers_left`: the day's fired cancels the venue still allows.
   */
  bot: null | (BotView & { cancel_soon_deadline: string | null; triggers_left: number });
}

export interface KeeperStatus {
  venue_time: string;
  cadence: null | {
    stretch: number;
    arms_per_second: number;
    budget_per_second: number;
    capacity_accounts: number;
    holds: boolean;
    tier: string;
    over_budget: number;
    short_horizon: number;
    /** Accounts still being provisioned: armed accounts at their longest safe periods (cold-start.ts). */
    cold_start: boolean;
    /**
     * The cold start's order (plan/budget-plan.ts): `interleaved` (each account armed once approved)
     * or `just_in_time` (first arms held so none comes due inside the cold start: approvals and arms share one window).
     */
    cold_start_order: string;
    /** This instance's share of a shared budget (1 alone). */
    budget_share: number;
    /** How many `rest_then_exchange` accounts the plan puts on each route. */
    routes: { rest: number; exchange: number };
    /** Every watcher's read periods are the configured ones times this (read-plan.ts; 1 = as configured). */
    read_stretch: number;
  };
  clock_skew_seconds: number;
  /** The request budget in force: `local`, `shared` (rate_limits.shared, through Redis) or `local_fallback`. */
  budget_mode: string;
  ws_connected: boolean;
  ready: boolean;
  /** The cold start: accounts armed so far, ETA; `complete` once every account had its first arm. */
  start_progress: StartProgress | null;
  accounts: AccountStatus[];
}
