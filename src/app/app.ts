import cron from 'node-cron';
import type { DestinationStream, Logger } from 'pino';
import { Agent } from 'undici';
import { Keeper, type NotificationFeed } from '../keeper/keeper.js';
import { createMetrics, type KeeperMetrics } from '../obs/metrics.js';
import { reportBudgetLimits } from '../obs/budget-limits.js';
import { watchLiveHeap } from '../obs/heap-live.js';
import { heapLimitProblem } from '../config/memory.js';
import { getHeapStatistics } from 'node:v8';
import { startOpsServer, type OpsServer } from '../obs/http-server.js';
import { renderStatusPage } from '../obs/status-page.js';
import type { Clock } from '../time/clock.js';
import { AgentStore } from '../state/agent-store.js';
import { TriggerCounter } from '../state/triggers.js';
import { BudgetLog } from '../state/budget-log.js';
import { HttpTransport } from '../venue/http.js';
import { buildVenue } from './venue.js';
import { buildClobVenues, clobScopes } from './clob-venues.js';
import type { SharedBudget } from '../budget/shared-budget.js';
import { BUDGET_MODES, type BudgetMode } from '../budget/shared-share.js';
import { NotificationClient } from '../venue/ws.js';
import { loadSigningCurve, signingCurveNotice, type CurveChoice } from '../venue/signing/curve.js';
import type { Simulator } from '../sim/simulator.js';
import { httpProbe } from './probe.js';
import { DemoBots } from './demo-bots.js';
import { connectHeartbeatBus } from './heartbeat-bus.js';
import { relayChannel } from '../liveness/relay.js';
import type { AccountCover, KeeperAccountSpec } from '../account/keeper-types.js';
import { AGENT_SLOTS, replicaAgentName } from '../config/shard.js';
import { renewAtMs } from '../account/provision.js';
import { FleetFile } from '../fleet/fleet-file.js';
import { freshEmbeddedVenueState } from './embedded-venue-state.js';
import { Fleet } from '../fleet/fleet.js';
import { redisFleetStore } from '../fleet/fleet-redis.js';
import { newRedisClient } from './shared-redis.js';

export type { AppConfig } from './app-config.js';
import type { AppConfig } from './app-config.js';

export interface AppDeps {
  clock: Clock;
  version: string;
  /** Where pino writes (stdout in production, a capture in tests). */
  logStream?: DestinationStream;
  /** Starts the embedded simulator (only when `venue.simulator`), given the accounts to seed. */
  startSimulator?: () => Promise<Simulator>;
  /** Called while the keeper is healthy (systemd watchdog ping). */
  onHealthyTick?: () => void;
  /** Calendar job at 00:00 UTC; node-cron by default. */
  scheduleDaily?: (fn: () => void) => { stop(): void };
  random?: () => number;
  /** V8's heap limit in bytes (v8.getHeapStatistics().heap_size_limit by default). */
  heapSizeLimitBytes?: () => number;
  /** The secp256k1 implementation to sign with (libsecp256k1 when it loads, by default). */
  signingCurve?: () => CurveChoice;
}

import { createLogger } from '../obs/logger.js';
export { createLogger };

/**
 * The composition root: builds every collaborator from the config, starts them in order, and stops
 * them in reverse within a time bound. Nothing here reads argv, env or signals (that is `main`).
 */
export class App {
  readonly logger: Logger;
  readonly metrics: KeeperMetrics;
  private keeper?: Keeper;
  private ops?: OpsServer;
  private sim?: Simulator;
  private transport?: HttpTransport;
  private shared?: SharedBudget;
  private heartbeatBus?: ReturnType<typeof connectHeartbeatBus>;
  private dispatcher?: Agent;
  /** The bots' health probes (liveness.probe): a pool apart from the venue's. */
  private probeDispatcher?: Agent;
  private started?: Promise<void>;
  private stopped?: Promise<void>;
  private config: AppConfig;
  private liveHeap?: { stop(): void };
  private demoBots?: DemoBots;
  /** `shard.fleet`: the membership that gives this instance its accounts, and its Redis client. */
  private fleet?: Fleet;
  private fleetRedis?: import('ioredis').Redis;

  constructor(
    config: AppConfig,
    private readonly deps: AppDeps,
  ) {
    this.config = config;
    this.metrics = createMetrics({ version: deps.version });
    this.logger = createLogger(config.logLevel, deps.logStream, deps.clock, config.logFormat, () => this.metrics.logLinesDropped.inc());
  }

  start(): Promise<void> {
    this.started ??= this.doStart().catch(async (e: unknown) => {
      // A failed start rolls back what it set up.
      await this.teardown(5_000);
      throw e;
    });
    return this.started;
  }

  stop(timeoutMs = 15_000): Promise<void> {
    this.stopped ??= (async () => {
      await this.started?.catch(() => undefined);
      await this.teardown(timeoutMs);
    })();
    return this.stopped;
  }

  get opsAddress(): { host: string; port: number } | undefined {
    return this.ops?.address;
  }

  get simulator(): Simulator | undefined {
    return this.sim;
  }

  keeperInstance(): Keeper | undefined {
    return this.keeper;
  }

  private async doStart(): Promise<void> {
    const { deps, config, logger, metrics } = this;
    let { baseUrl, exchangeUrl, wsUrl } = config.venue;
    let stateDir = config.stateDir;
    if (config.venue.simulator) {
      if (!deps.startSimulator) throw new Error('venue.simulator is set but no simulator is available');
      this.sim = await deps.startSimulator();
      ({ baseUrl, exchangeUrl, wsUrl } = this.sim);
      // The CLOB accounts' credentials: the embedded simulator issues each address its own
      // (deterministic, as the venue's derive), the ones the demo's credential files hold.
      // The demo's bots rest a couple of orders there too, so a crash shows them cancelled on both books.
      for (const a of config.keeper.accounts) if (a.clob) this.sim.clob.seedDemoOrders(a.address);
      // A new venue: what the keeper stored about the last one (agents, pacing, triggers) is void.
      stateDir = await freshEmbeddedVenueState(config.stateDir);
      logger.info({ event: 'simulator_started', base_url: baseUrl, state_dir: stateDir }, 'embedded venue simulator started (demo only; its state starts empty)');
    }

    this.liveHeap = watchLiveHeap(metrics.registry);
    const heapProblem = heapLimitProblem(config.keeper.accounts.length, (deps.heapSizeLimitBytes ?? (() => getHeapStatistics().heap_size_limit))());
    if (heapProblem) logger.error({ event: 'heap_limit_low', accounts: config.keeper.accounts.length }, heapProblem);
    this.dispatcher = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
    this.transport = new HttpTransport({
      dispatcher: this.dispatcher,
      clock: deps.clock,
      requestTimeoutMs: config.venue.requestTimeoutMs,
      onResponse: (o) => metrics.venueRequests.inc({ endpoint: o.endpoint, code: String(o.status) }),
    });
    // Every request from here on goes through the port: budget, 429 holds, venue clock samples.
    const sharedCfg = config.rateLimits.shared;
    const setMode = (mode: BudgetMode): void => {
      for (const m of BUDGET_MODES) metrics.budgetMode.set({ mode: m }, m === mode ? 1 : 0);
    };
    setMode('local');
    const sharedPassword = sharedCfg?.password ? await sharedCfg.password() : undefined;
    const { venueClock, scheduler, port: venue, shared } = buildVenue({
      config,
      urls: { baseUrl, exchangeUrl },
      transport: this.transport,
      clock: deps.clock,
      onThrottled: (kind) => metrics.clientPacingWaits.inc({ kind }),
      extraScopes: clobScopes(config.clobVenues),
      ...(sharedCfg
        ? {
            shared: {
              redisUrl: sharedCfg.redisUrl,
              name: sharedCfg.name,
              fallbackShare: sharedCfg.fallbackShare,
              ...(sharedPassword !== undefined ? { password: sharedPassword } : {}),
              onModeChange: (mode, reason) => {
                setMode(mode);
                const fields = { event: 'budget_mode', mode, reason, name: sharedCfg.name, fallback_share: sharedCfg.fallbackShare };
                if (mode === 'shared') logger.info(fields, 'request budget shared with the other instances through Redis');
                else logger.warn(fields, `request budget: this instance's share (${reason}); Redis is not needed to keep arming`);
              },
              onMiss: (miss, cls) => (miss === 'bypass' ? metrics.sharedBudgetBypass : metrics.sharedBudgetShed).inc({ class: cls }),
            },
          }
        : {}),
    });
    this.shared = shared;
    // A fleet's heartbeat relay (docs/liveness.md, "Fleets"): on the shared budget's Redis, when
    // there are other shards to relay to (from-config.ts relaysHeartbeats).
    if (sharedCfg && config.keeper.foreignAccounts) this.heartbeatBus = connectHeartbeatBus(sharedCfg.redisUrl, sharedPassword, relayChannel(sharedCfg.name));
    reportBudgetLimits(scheduler, { logger, metrics });
    const sim = this.sim;
    const clobVenues = buildClobVenues({
      venues: config.clobVenues,
      // The embedded simulator serves one CLOB for every CLOB venue of the demo.
      urlOf: (v) => (sim ? sim.clobUrl : v.clobUrl),
      dispatcher: this.dispatcher,
      clock: deps.clock,
      scheduler,
      onResponse: (o) => metrics.venueRequests.inc({ endpoint: o.endpoint, code: String(o.status) }),
    });

    const notifications = (onEvent: Parameters<NonNullable<import('../keeper/keeper.js').KeeperDeps['notifications']>>[0]): NotificationFeed => {
      const client = new NotificationClient({
        wsUrl,
        clock: deps.clock,
        random: deps.random ?? Math.random,
        // One account per connection, so every notification is attributable (10 at most per IP).
        usersPerConnection: 1,
        onEvent: (e) => {
          metrics.wsConnected.set(client.connected() ? 1 : 0);
          onEvent(e);
        },
      });
      return client;
    };

    const curveChoice = (deps.signingCurve ?? loadSigningCurve)();
    const { curve } = curveChoice;
    const curveNotice = signingCurveNotice(curveChoice);
    logger[curveNotice.level](curveNotice.fields, curveNotice.msg);

    this.probeDispatcher = new Agent({ connections: 4, keepAliveTimeout: 10_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const triggers = new TriggerCounter(TriggerCounter.fileIn(stateDir), venueClock.nowMs());
    const agentStore = new AgentStore(stateDir);
    // A fleet (shard.fleet): the accounts held before a restart are armed at once; the membership
    // in Redis adds and hands over the rest from the first step on (fleet.ts).
    let keeperOptions = config.keeper;
    const fleetCfg = config.fleet;
    if (fleetCfg && sharedCfg) {
      this.fleetRedis = newRedisClient(sharedCfg.redisUrl, sharedPassword);
      this.fleetRedis.on('error', () => undefined); // reported by the fleet's steps, not per reconnect attempt
      const follows = fleetCfg.fallbackShareFollows;
      this.fleet = new Fleet(fleetCfg, {
          clock: deps.clock,
          store: redisFleetStore(this.fleetRedis, sharedCfg.name),
          file: new FleetFile(FleetFile.fileIn(stateDir)),
          logger,
          metrics,
          settled: () => this.keeper?.settledAccounts() ?? [],
          apply: (covers) => this.applyFleet(covers),
          ...(follows ? { onMembers: (count: number) => shared?.setFallbackShare(1 / count) } : {}),
        preferredSlot: (account) => usableSlot(agentStore, fleetCfg.specOf(account, { replica: 0, slot: 0, coveredBy: [] }), venueClock.nowMs()),
      });
      // Up to 2 s for Redis, so that fleet.json is checked against it before anything is armed.
      await waitReady(this.fleetRedis, 2_000, deps.clock);
      keeperOptions = this.fleetOptions(await this.fleet.restore());
    }
    this.keeper = new Keeper(keeperOptions, {
      clock: deps.clock,
      venueClock,
      scheduler,
      venue,
      ...(clobVenues.size > 0 ? { clobVenues } : {}),
      budgetMode: () => shared?.mode() ?? 'local',
      ...(shared ? { sharedDemand: shared } : {}),
      notifications: config.keeper.watch.notifications ? notifications : undefined,
      metrics,
      logger,
      agentStore,
      triggers,
      budgetLog: new BudgetLog(BudgetLog.fileIn(stateDir)),
      scheduleDaily:
        deps.scheduleDaily ??
        ((fn) => {
          const task = cron.schedule('0 0 * * *', fn, { timezone: 'UTC' });
          return { stop: () => void task.stop() };
        }),
      onHealthyTick: deps.onHealthyTick,
      curve,
      probe: httpProbe(this.probeDispatcher),
      ...(this.heartbeatBus ? { heartbeatBus: this.heartbeatBus } : {}),
    });

    const keeper = this.keeper;
    this.ops = await startOpsServer(
      config.listen,
      {
        processHealth: () => keeper.processHealth(),
        readiness: () => keeper.readiness(),
        status: () => {
          const view = keeper.statusView();
          return this.fleet ? { head: { ...view.head, fleet: this.fleet.view() }, accounts: view.accounts } : view;
        },
        statusPage: () => renderStatusPage(),
        registry: metrics.registry,
        heartbeat: (input) => keeper.heartbeat(input),
        heartbeatRefused: (reason) => keeper.heartbeatRefused(reason),
      },
      (e) => logger.error({ event: 'http_error', err: e }, 'ops endpoint failed'),
    );
    logger.info({ event: 'listening', address: `${this.ops.address.host}:${this.ops.address.port}` }, 'ops endpoints up');
    // The demo's bots heartbeat through the listener, as any bot would; the keeper's start-up grace
    // covers them while it provisions.
    if (config.venue.simulator && config.demoBots?.length) {
      const host = this.ops.address.host.includes(':') ? `[${this.ops.address.host}]` : this.ops.address.host;
      this.demoBots = new DemoBots(config.demoBots, { clock: deps.clock, logger, keeperUrl: `http://${host}:${this.ops.address.port}` });
      await this.demoBots.start();
    }
    await keeper.start();
    this.fleet?.start();
    logger.info({ event: 'started', accounts: keeperOptions.accounts.length, ...(config.fleet ? { fleet_instance: config.fleet.instance } : {}) }, 'keeper started');
  }

  /** The keeper's options with exactly the accounts a fleet holds, and the other instances' heartbeat accounts. */
  private fleetOptions(covers: ReadonlyMap<string, AccountCover>): AppConfig['keeper'] {
    const { keeper, fleet } = this.config;
    const accounts = [...covers].flatMap(([name, cover]) => {
      const spec = fleet?.specOf(name, cover);
      return spec ? [spec] : [];
    });
    const foreign = keeper.foreignAccounts?.filter((f) => !covers.has(f.name));
    return { ...keeper, accounts, ...(foreign ? { foreignAccounts: foreign } : {}) };
  }

  private async applyFleet(covers: ReadonlyMap<string, AccountCover>): Promise<void> {
    const keeper = this.keeper;
    if (!keeper) return;
    const r = await keeper.reload(this.fleetOptions(covers));
    if (r.added.length || r.removed.length || r.updated.length) this.logger.info({ event: 'fleet_accounts', added: r.added.length, removed: r.removed.length, updated: r.updated.length, held: covers.size }, 'fleet accounts applied');
  }

  /** SIGHUP: a new validated config. Only the keeper's accounts and timings change live. */
  async reload(next: AppConfig): Promise<void> {
    const keeper = this.keeper;
    if (!keeper) throw new Error('not started');
    if (!!this.fleet !== !!next.fleet) throw new Error('shard.fleet cannot be turned on or off by a reload: restart the keeper');
    if (this.fleet && next.fleet && next.fleet.instance !== this.config.fleet?.instance) {
      throw new Error(`shard.fleet.instance cannot change by a reload (${this.config.fleet?.instance} -> ${next.fleet.instance}): its leases and agent slots are held under the old name; restart the keeper`);
    }
    if (this.fleet && next.fleet) {
      // The fleet re-derives what this instance holds from the new candidates, then reloads the keeper.
      this.config = next;
      await this.fleet.reconfigure(next.fleet);
      this.logger.info({ event: 'config_reload', result: 'ok', fleet: true }, 'config reloaded');
      return;
    }
    const r = await keeper.reload(next.keeper);
    this.config = next;
    this.logger.info({ event: 'config_reload', result: 'ok', ...r }, 'config reloaded');
  }

  private async teardown(timeoutMs: number): Promise<void> {
    const t0 = this.deps.clock.nowMs();
    const left = () => Math.max(1_000, timeoutMs - (this.deps.clock.nowMs() - t0));
    await this.demoBots?.stop().catch(() => undefined);
    // The lease is left to lapse, not given up: a restart within one lease moves no account.
    await this.fleet?.stop().catch(() => undefined);
    this.fleetRedis?.disconnect();
    await this.keeper?.stop(Math.max(1_000, timeoutMs - 3_000)).catch((e: unknown) => this.logger.error({ err: e }, 'keeper stop failed'));
    await this.ops?.close().catch(() => undefined);
    await this.shared?.stop().catch(() => undefined);
    this.heartbeatBus?.close();
    await this.transport?.close().catch(() => undefined);
    await this.dispatcher?.destroy().catch(() => undefined);
    await this.probeDispatcher?.destroy().catch(() => undefined);
    this.liveHeap?.stop();
    if (this.sim) await Promise.race([this.sim.stop(), new Promise((r) => setTimeout(r, left()).unref())]);
    this.logger.info({ event: 'stopped' }, 'keeper stopped');
  }
}

/** Resolves when the client is ready, or after `ms` (then the fleet starts on its state file alone). */
function waitReady(client: import('ioredis').Redis, ms: number, clock: Clock): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = clock.setTimeout(done, ms);
    function done(): void {
      clock.clearTimeout(timer);
      client.off('ready', done);
      resolve();
    }
    client.once('ready', done);
  });
}

/**
 * The agent slot (src/config/shard.ts replicaAgentName) in which this instance can sign for an
 * account without approving anything: slot 0 with a configured agent key, else the first slot
 * whose stored agent provisioning would reuse (not yet at its renewal, account/provision.ts
 * renewAtMs); -1 for none.
 */
async function usableSlot(store: AgentStore, slot0: KeeperAccountSpec | undefined, venueNowMs: number): Promise<number> {
  if (!slot0) return -1;
  if (slot0.agentKey) return 0;
  for (let slot = 0; slot < AGENT_SLOTS; slot++) {
    const stored = await store.load(slot0.name, replicaAgentName(slot0.agentName, slot));
    if (stored && venueNowMs < renewAtMs(stored.approvedAtMs, stored.validUntilMs)) return slot;
  }
  return -1;
}
