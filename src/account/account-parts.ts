import { NonceSource } from '../venue/signing/nonce.js';
import { ActivityReporter } from './activity.js';
import { AddressActions } from './address-actions.js';
import { AgentChecks } from './agent-check.js';
import { AgentLifecycle } from './agents.js';
import { BotLiveness, type BotSlot } from '../liveness/bot-liveness.js';
import { CadenceControl } from './cadence-control.js';
import { ColdStartGate } from './cold-start-gate.js';
import { HeartbeatRelay } from '../liveness/heartbeat-relay.js';
import type { AccountState, KeeperAccountSpec, KeeperDeps, KeeperOptions, NotificationFeed } from './keeper-types.js';
import { firstReads } from './read-stagger.js';
import { AccountReports } from './reports.js';
import type { FirstReads } from './watcher.js';

/** What the parts read of the keeper that holds the accounts. */
export interface AccountsHost {
  options(): KeeperOptions;
  /** The account of that name, if this keeper holds it (it carries its bot's record and hears its verdict: a BotSlot). */
  account(name: string): (AccountState & BotSlot) | undefined;
  accounts(): Iterable<AccountState>;
  /** False once the keeper is stopping: no more retries are planned. */
  accepting(): boolean;
  /** Set as soon as a stop is asked for: a switch not yet started never starts. */
  stopRequested(): boolean;
  /** The WebSocket feed, once started (notifications on). */
  feed(): NotificationFeed | undefined;
}

/**
 * The parts every account shares: one plan, one cold start, one nonce source, one bots' judge, one
 * report sink. Each acts on the account it is handed (its state is the account's) and reaches an
 * account back by a method of it; the few callbacks wired here join two shared parts (the address
 * budget reads at the plan's period, a lost agent is re-approved by the agent lifecycle), and each
 * is one line.
 */
export interface AccountParts {
  deps: KeeperDeps;
  options(): KeeperOptions;
  stopRequested(): boolean;
  /** False once the keeper is stopping: no more retries are planned. */
  accepting(): boolean;
  feed(): NotificationFeed | undefined;
  nonces: NonceSource;
  cadence: CadenceControl;
  reports: AccountReports;
  activity: ActivityReporter;
  agents: AgentLifecycle;
  addressActions: AddressActions;
  agentChecks: AgentChecks;
  bots: BotLiveness;
  /** Heartbeats for other shards' accounts, through the fleet's Redis; absent: none. */
  relay?: HeartbeatRelay;
  gate: ColdStartGate;
  /** The next watcher's first reads in the start-up stagger (read-stagger.ts). */
  firstReads(spec: KeeperAccountSpec): FirstReads;
}

export function buildAccountParts(deps: KeeperDeps, host: AccountsHost): AccountParts {
  // Only a keeper that reads the venue (watch.source venue, service_then_venue) reads the address
  // budget and the agents' list: info reads spend the exchange scope alone (port.ts), and a venue
  // that counts /info in the same per-IP window as the service (the simulator's ip_window) would
  // refuse them with 429s that the keeper's global budget never planned for (300 accounts under a
  // tight window: measured).
  const readsVenue = (): boolean => (host.options().watch.source ?? 'service') !== 'service';
  const nonces = new NonceSource(deps.clock, () => deps.venueClock.nowMs());
  const cadence = new CadenceControl(deps);
  const activity = new ActivityReporter();
  const agents = new AgentLifecycle({
    ...deps,
    nonces,
    network: () => host.options().network,
    chainField: () => host.options().chainField,
    resolveFallbackToVenue: () => host.options().watch.source === 'service_then_venue',
    hasAccount: (name) => host.account(name) !== undefined,
    accepting: () => host.accepting(),
  });
  const reports = new AccountReports({ ...deps, activity, triggerWarnAt: () => host.options().triggerWarnAt, accounts: () => host.accounts(), factsOf: (spec) => cadence.venueOf(spec) });
  const addressActions = new AddressActions({
    clock: deps.clock,
    metrics: deps.metrics,
    ...(deps.venue.infoUserRateLimit ? { read: (user: string, o: { maxWaitMs: number }) => deps.venue.infoUserRateLimit!(user, o) } : {}),
    enabled: readsVenue,
    periodMs: (m) => cadence.effectiveSettings(m.spec).rearmEveryMs,
    warnShare: () => host.options().watch.addressBudgetWarnShare ?? 0.5,
    onReadFailed: (m, f) => reports.readFailed(m.log, 'user_rate_limit', f),
  });
  const agentChecks = new AgentChecks({
    clock: deps.clock,
    venueClock: deps.venueClock,
    metrics: deps.metrics,
    ...(deps.venue.infoExtraAgents ? { read: (master: string, o: { maxWaitMs: number }) => deps.venue.infoExtraAgents!(master, o) } : {}),
    enabled: readsVenue,
    onReadFailed: (m, f) => reports.readFailed(m.log, 'extra_agents', f),
    reprovision: (m) => agents.provision(m, true),
    adoptExpiry: (m, validUntilMs) => agents.adoptVenueExpiry(m, validUntilMs),
  });
  // The relay and the bots' judge ask each other (a relayed heartbeat is applied as one heard here;
  // a heartbeat for another shard is relayed): `bots` is read when a heartbeat comes, after both exist.
  const relay: HeartbeatRelay | undefined = deps.heartbeatBus
    ? new HeartbeatRelay({
        bus: deps.heartbeatBus,
        clock: deps.clock,
        metrics: deps.metrics,
        logger: deps.logger,
        clockAllowanceMs: () => host.options().maxClockSkewMs,
        silenceOf: (name) => bots.heartbeatSilenceMs(name),
        apply: (name, agoMs) => bots.relayedHeartbeat(name, agoMs),
      })
    : undefined;
  const bots: BotLiveness = new BotLiveness({
    clock: deps.clock,
    metrics: deps.metrics,
    logger: deps.logger,
    ...(deps.probe ? { probe: deps.probe } : {}),
    ...(relay ? { foreign: relay } : {}),
    slot: (name) => host.account(name),
  });
  let watchersStarted = 0;
  return {
    deps,
    options: () => host.options(),
    stopRequested: () => host.stopRequested(),
    accepting: () => host.accepting(),
    feed: () => host.feed(),
    nonces,
    cadence,
    reports,
    activity,
    agents,
    addressActions,
    agentChecks,
    bots,
    ...(relay ? { relay } : {}),
    gate: new ColdStartGate(),
    firstReads: (spec) => firstReads(watchersStarted++, spec, host.options(), { exchange: deps.scheduler.specOf('exchange') }),
  };
}

/**
 * The cold start's plan: on while provisioning is under way (armed accounts at their longest safe
 * periods), parked first arms released once the gate opens, accounts that no longer want arming
 * (no open orders, ineligible, over budget) taken out of it. `sweep` is the loop's (once a
 * second), not every provisioning's: it walks the accounts awaiting their first arm.
 */
export function updateColdStart(parts: AccountParts, accounts: ReadonlyMap<string, AccountState & { shouldBeArmed(): boolean }>, options: KeeperOptions, nowMonoMs: number, sweep: boolean): void {
  const { gate, cadence } = parts;
  if (sweep) {
    for (const name of [...gate.awaitingNames()]) {
      const m = accounts.get(name);
      if (!m || (m.runner && !m.shouldBeArmed())) gate.forget(name);
    }
  }
  cadence.setProvisioning(gate.active() ? gate.provisioning() : null, options, accounts.values());
  gate.release(nowMonoMs, cadence.coldStartWindow());
}
