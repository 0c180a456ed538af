import type { TimerHandle } from '../sched/clock.js';
import { READ_UTILISATION } from '../plan/read-plan.js';
import { keepsMinHorizon } from '../plan/horizon.js';
import { infoRequestWeight } from '../venue/info.js';
import type { ClockStep } from '../sched/venue-clock.js';
import { StateWriteError } from '../state/atomic-file.js';
import { initAccountSeries, removeAccountSeries } from '../obs/metrics.js';
import { NonceSource } from '../venue/signing/nonce.js';
import { mapLimited } from '../sched/pool.js';
import { AccountRunner, type ScheduleCancelSender } from './account-runner.js';
import { makeSender } from './sender.js';
import { CadenceControl } from './cadence-control.js';
import { ColdStartGate } from './cold-start-gate.js';
import { AccountReports } from './reports.js';
import { AgentLifecycle } from './agents.js';
import { readinessOf, shouldBeArmed, statusOf, type Readiness, type ViewInput } from './views.js';
import { AccountWatcher } from './watcher.js';
import { AddressBudgets } from './address-budget.js';
import { AgentChecks } from './agent-check.js';
import { ActivityReporter, type AccountActivity } from './activity.js';
import { BotLiveness } from './bot-liveness.js';
import { HeartbeatRelay } from './heartbeat-relay.js';
import type { HeartbeatRefusal, HttpAnswer } from './liveness.js';
import type { KeeperAccountSpec, KeeperDeps, KeeperOptions, KeeperStatus, Managed, NotificationFeed } from './keeper-types.js';

export type { AccountStatus, KeeperAccountSpec, KeeperDeps, KeeperOptions, KeeperStatus, NotificationFeed } from './keeper-types.js';

const LOOP_EVERY_MS = 1_000;
/**
 * First reads of each watcher are spread at this many global slots per account (per kind), so
 * start-up reads use at most 1/8 of the global budget each and never queue by the thousand.
 */
const FIRST_READ_SPREAD_SLOTS = 8;
const HEALTH_EVERY_MS = 60_000;
/**
 * Accounts provisioned at once (key and agent files open, requests queued). 50,000 at once failed
 * with EMFILE; the request budget admits a few hundred a second, so this many lose no time.
 */
const PROVISION_CONCURRENCY = 256;
/** Provisionings started at once; one more per provisioning done (mapLimited: slow start). */
const PROVISION_FIRST = 8;

export class Keeper {
  private readonly accounts = new Map<string, Managed>();
  private options: KeeperOptions;
  private readonly nonces: NonceSource;
  private feed?: NotificationFeed;
  private loopTimer: TimerHandle | null = null;
  private healthTimer: TimerHandle | null = null;
  private daily?: { stop(): void };
  private lastLoopMs = 0;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private startPromise?: Promise<void>;
  private stopPromise?: Promise<void>;
  /** Set as soon as stop() is called: provisioning not yet begun is skipped. */
  private stopRequested = false;
  private skewLogged = false;
  private readonly unsubscribeClock: () => void;
  private loopCount = 0;
  /** Periods, slots and over_budget verdicts within the arm budget (cadence-control.ts). */
  private readonly cadence: CadenceControl;
  /** Reports of runners, watchers and the WebSocket into metrics and logs (reports.ts). */
  private readonly reports: AccountReports;
  /** Provisioning, renewal and agent-name claims (agents.ts). */
  private readonly agents: AgentLifecycle;
  /** Watchers started so far: the position of the next one in the start-up read stagger. */
  private watchersStarted = 0;
  /** Minute summaries and start-up progress (activity.ts). */
  private readonly activity = new ActivityReporter();
  /** Provisioning inside the plan: the cold start's counters and its first-arm gate (cold-start-gate.ts). */
  private readonly gate = new ColdStartGate();
  /** Each address's action budget and volume gate, read from the venue now and then (address-budget.ts). */
  private readonly addressBudgets: AddressBudgets;
  /** Whether each account's agent is on the venue and when it lapses (agent-check.ts). */
  private readonly agentChecks: AgentChecks;
  /** Whether each account's bot is alive: heartbeats, probes, silences (bot-liveness.ts). */
  private readonly bots: BotLiveness;
  /** Heartbeats for other shards' accounts, through the fleet's Redis (heartbeat-relay.ts); absent: none. */
  private readonly relay?: HeartbeatRelay;
  /** Set once the configured accounts' bots are known: heartbeats before that get 503 (retried), not 404. */
  private botsKnown = false;

  constructor(
    options: KeeperOptions,
    private readonly deps: KeeperDeps,
  ) {
    this.options = options;
    this.nonces = new NonceSource(deps.clock, () => deps.venueClock.nowMs());
    this.cadence = new CadenceControl(deps);
    this.agents = new AgentLifecycle({
      ...deps,
      nonces: this.nonces,
      network: () => this.options.network,
      chainField: () => this.options.chainField,
      resolveFallbackToVenue: () => this.options.watch.source === 'service_then_venue',
      hasAccount: (name) => this.accounts.has(name),
      accepting: () => this.state !== 'stopping' && this.state !== 'stopped',
      onProvisioned: (m) => {
        this.agentChecks.afterProvision(m);
        this.ensureRunning(m);
      },
    });
    this.addressBudgets = new AddressBudgets({
      clock: deps.clock,
      metrics: deps.metrics,
      // Only a keeper that reads the venue (watch.source venue, service_then_venue) reads it: info
      // reads spend the exchange scope alone (port.ts), and a venue that counts /info in the same
      // per-IP window as the service (the simulator's ip_window) would refuse them with 429s that
      // the keeper's global budget never planned for (300 accounts under a tight window: measured).
      ...(deps.venue.infoUserRateLimit ? { read: (user: string, o: { maxWaitMs: number }) => deps.venue.infoUserRateLimit!(user, o) } : {}),
      enabled: () => this.readsVenue(),
      periodMs: (m) => this.cadence.effectiveSettings(m.spec).rearmEveryMs,
      warnShare: () => this.options.watch.addressBudgetWarnShare ?? 0.5,
      onReadFailed: (m, f) => this.reports.readFailed(m.log, 'user_rate_limit', f),
    });
    this.agentChecks = new AgentChecks({
      clock: deps.clock,
      venueClock: deps.venueClock,
      metrics: deps.metrics,
      // Read only by a keeper that reads the venue, for the reason the address budget gives above.
      ...(deps.venue.infoExtraAgents ? { read: (master: string, o: { maxWaitMs: number }) => deps.venue.infoExtraAgents!(master, o) } : {}),
      enabled: () => this.readsVenue(),
      onReadFailed: (m, f) => this.reports.readFailed(m.log, 'extra_agents', f),
      reprovision: (m) => this.agents.provision(m, true),
      adoptExpiry: (m, validUntilMs) => this.agents.adoptVenueExpiry(m, validUntilMs),
    });
    if (deps.heartbeatBus) {
      this.relay = new HeartbeatRelay({
        bus: deps.heartbeatBus,
        clock: deps.clock,
        metrics: deps.metrics,
        logger: deps.logger,
        clockAllowanceMs: () => this.options.maxClockSkewMs,
        silenceOf: (name) => this.bots.heartbeatSilenceMs(name),
        apply: (name, agoMs) => this.bots.relayedHeartbeat(name, agoMs),
      });
    }
    this.bots = new BotLiveness({
      clock: deps.clock,
      metrics: deps.metrics,
      logger: deps.logger,
      ...(deps.probe ? { probe: deps.probe } : {}),
      ...(this.relay ? { foreign: this.relay } : {}),
      onChange: (name, alive) => this.accounts.get(name)?.runner?.botLiveness(alive),
    });
    this.reports = new AccountReports({ ...deps, activity: this.activity, triggerWarnAt: () => this.options.triggerWarnAt, accounts: () => this.accounts.values() });
    deps.metrics.onCollect.push(() => this.refreshGauges());
    for (const direction of ['forward', 'backward']) deps.metrics.venueClockSteps.inc({ direction }, 0);
    this.unsubscribeClock = deps.venueClock.onStep((step) => this.onVenueClockStep(step));
  }

  /**
   * The venue clock estimate moved by more than a second: every plan made in venue time is stale.
   * Re-plan every account now (each keeps its real instants, see AccountRunner.clockStepped) and
   * say so loudly: a venue clock that jumps is worth a look even when nothing lapsed.
   */
  private onVenueClockStep(step: ClockStep): void {
    const direction = step.deltaMs > 0 ? 'forward' : 'backward';
    this.deps.metrics.venueClockSteps.inc({ direction });
    this.deps.logger.error(
      { event: 'venue_clock_step', direction, delta_ms: step.deltaMs, offset_ms: step.offsetMs, samples: step.samples, accounts: this.accounts.size },
      `venue clock estimate moved ${direction} by ${(Math.abs(step.deltaMs) / 1000).toFixed(1)} s; every account re-planned`,
    );
    for (const m of this.accounts.values()) m.runner?.clockStepped();
  }

  /** Idempotent. Resolves once every account had its first provisioning attempt. */
  start(): Promise<void> {
    this.startPromise ??= this.doStart();
    return this.startPromise;
  }

  /** Idempotent and bounded: after `timeoutMs` whatever is left is abandoned (fail safe: keep). */
  stop(timeoutMs = 10_000): Promise<void> {
    this.stopRequested = true;
    this.stopPromise ??= this.doStop(timeoutMs);
    return this.stopPromise;
  }

  private async doStart(): Promise<void> {
    this.state = 'starting';
    const { deps } = this;
    const loaded = await deps.triggers.load();
    if (!loaded.ok) {
      // Counted from zero: the venue still refuses arms once an account's cap is spent, which the
      // keeper reports (phase blocked); what it cannot know is how near the cap each account is.
      deps.metrics.stateUnreadable.inc({ file: 'triggers' });
      deps.logger.warn({ event: 'state_unreadable', file: 'triggers', problem: loaded.problem, action: "today's fired cancels counted from zero: unknown until the venue refuses an arm at its cap" }, "trigger counts not loaded: today's fired cancels are unknown, counted from zero");
    }
    // Start-up pacing: what the previous instance sent still counts in the venue's windows.
    const budget = (await deps.budgetLog?.load()) ?? { scopes: {} };
    if (budget.problem) {
      deps.metrics.stateUnreadable.inc({ file: 'budget' });
      deps.logger.warn({ event: 'state_unreadable', file: 'budget', problem: budget.problem, action: "start-up paced without the previous instance's requests" }, "budget log not loaded: start-up is paced without the previous instance's requests");
    }
    const recent = budget.scopes;
    // Saved in wall-clock time (it outlives the process); the scheduler counts on the monotonic clock.
    deps.scheduler.importRecent(shiftTimes(recent, deps.clock.monoMs() - deps.clock.nowMs()));
    const carried = Object.values(recent).reduce((n, l) => n + l.length, 0);
    if (carried > 0) deps.logger.info({ event: 'budget_carried_over', requests: carried }, 'pacing start-up around the previous instance\'s recent requests');
    this.lastLoopMs = deps.clock.monoMs();
    this.loop();
    await this.checkVenueClock();
    this.scheduleHealthCheck();
    this.daily = deps.scheduleDaily?.(() => this.rollDay());
    if (this.options.watch.notifications && deps.notifications) {
      this.feed = deps.notifications((e) => this.reports.notification(e));
      this.feed.start();
    }
    this.cadence.apply(this.options, this.accounts.values());
    // Other shards' tokens are read before heartbeats are answered (botsKnown, in addAccounts).
    await this.relay?.configure(this.options.foreignAccounts ?? []);
    this.relay?.start();
    await this.addAccounts(this.options.accounts);
    this.state = 'running';
  }

  private async doStop(timeoutMs: number): Promise<void> {
    await this.startPromise?.catch(() => undefined);
    this.state = 'stopping';
    const { deps } = this;
    this.daily?.stop();
    if (this.healthTimer) deps.clock.clearTimeout(this.healthTimer);
    const all = [...this.accounts.values()];
    this.addressBudgets.stop();
    this.agentChecks.stop();
    this.bots.stop();
    this.relay?.stop();
    for (const m of all) this.stopWatching(m);
    const stops = all.map((m) => this.stopAccount(m));
    let timer: TimerHandle | undefined;
    const timedOut = await Promise.race([
      Promise.all(stops).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = deps.clock.setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    if (timer) deps.clock.clearTimeout(timer);
    if (timedOut) {
      deps.logger.error({ event: 'stop_timeout', timeout_ms: timeoutMs }, 'stop timed out; abandoning in-flight requests (schedules stay armed)');
      for (const m of all) m.runner?.abortNow();
    }
    await this.feed?.stop().catch(() => undefined);
    await this.saveBudget();
    this.unsubscribeClock();
    deps.scheduler.stop();
    if (this.loopTimer) deps.clock.clearTimeout(this.loopTimer);
    this.loopTimer = null;
    deps.metrics.up.set(0);
    this.state = 'stopped';
  }

  /**
   * Applies a new config: unchanged accounts keep their timers; changed settings apply from the
   * next decision; added accounts are provisioned and armed; removed ones follow `on_shutdown`.
   */
  async reload(next: KeeperOptions): Promise<{ added: string[]; removed: string[]; updated: string[]; unchanged: string[] }> {
    const result = { added: [] as string[], removed: [] as string[], updated: [] as string[], unchanged: [] as string[] };
    const nextByName = new Map(next.accounts.map((a) => [a.name, a]));
    const watchChanged = JSON.stringify(next.watch) !== JSON.stringify(this.options.watch);
    this.options = next;
    const work: Array<Promise<void>> = [];
    for (const [name, m] of this.accounts) {
      const spec = nextByName.get(name);
      if (!spec || spec.identity !== m.spec.identity) {
        result.removed.push(name);
        work.push(this.removeAccount(m));
      }
    }
    for (const spec of next.accounts) {
      const m = this.accounts.get(spec.name);
      if (m && !m.removed) this.setCoverageSeries(spec);
      if (!m || m.removed) {
        if (!result.removed.includes(spec.name)) result.added.push(spec.name);
        else result.updated.push(spec.name);
        continue;
      }
      if (JSON.stringify(spec.switch) !== JSON.stringify(m.spec.switch) || JSON.stringify(spec.builderFee) !== JSON.stringify(m.spec.builderFee) || spec.validDays !== m.spec.validDays) {
        m.spec = spec;
        result.updated.push(spec.name);
      } else {
        m.spec = spec;
        result.unchanged.push(spec.name);
      }
    }
    await Promise.all(work);
    // Liveness settings and tokens are read anew (a rotated token takes effect); what was seen of each bot stays.
    await Promise.all([...this.accounts.values()].filter((m) => nextByName.has(m.spec.name)).map((m) => this.bots.configure(m.spec.name, m.spec.liveness, m.log)));
    await this.relay?.configure(next.foreignAccounts ?? []);
    this.cadence.apply(this.options, this.accounts.values());
    if (watchChanged) this.cadence.applyReads(this.options, this.accounts.values(), true);
    for (const name of result.updated) {
      const m = this.accounts.get(name);
      m?.runner?.updateSettings(this.cadence.effectiveSettings(m.spec));
    }
    // A liveness block removed (or a bot judged anew): the switch hears the verdict in force, so an
    // account whose liveness went away is never left silent.
    for (const m of this.accounts.values()) m.runner?.botLiveness(this.bots.alive(m.spec.name));
    await this.addAccounts(next.accounts.filter((s) => !this.accounts.has(s.name)));
    return result;
  }

  // ---- accounts ----

  /**
   * Every account is known (status, readiness, metrics) at once; their provisioning runs a few
   * hundred at a time, in config order, and what has not begun when a stop comes never does.
   */
  private async addAccounts(specs: readonly KeeperAccountSpec[]): Promise<void> {
    const added = specs.map((spec) => {
      const m: Managed = { spec, log: this.deps.logger.child({ account: spec.name }), provisionAttempts: 0, subscribed: false, removed: false };
      this.accounts.set(spec.name, m);
      this.gate.added(spec.name, spec.switch);
      initAccountSeries(this.deps.metrics, spec.name);
      this.setCoverageSeries(spec);
      this.deps.metrics.triggersToday.set({ account: spec.name }, this.deps.triggers.get(spec.name));
      return m;
    });
    this.updateColdStart(false);
    // Each bot is judged from now: one silence period before a bot not heard from counts as dead.
    await Promise.all(added.map((m) => this.bots.configure(m.spec.name, m.spec.liveness, m.log)));
    this.botsKnown = true;
    await mapLimited(added, PROVISION_CONCURRENCY, async (m) => {
      if (this.stopRequested || m.removed) {
        this.gate.settledFailed(m.spec.name);
        return;
      }
      const ok = await this.agents.provision(m, false);
      if (!ok) this.gate.settledFailed(m.spec.name);
      this.updateColdStart(false);
    }, { initial: PROVISION_FIRST });
  }

  /** Which instances arm the account, and which of them this one is (they change as a fleet's membership does). */
  private setCoverageSeries(spec: KeeperAccountSpec): void {
    this.deps.metrics.accountReplicas.set({ account: spec.name }, spec.coveredBy?.length ?? 1);
    this.deps.metrics.accountReplica.set({ account: spec.name }, spec.replica ?? 0);
  }

  private async removeAccount(m: Managed): Promise<void> {
    m.removed = true;
    this.accounts.delete(m.spec.name);
    this.gate.forget(m.spec.name);
    this.addressBudgets.forget(m.spec.name);
    this.agentChecks.forget(m.spec.name);
    this.bots.forget(m.spec.name);
    this.stopWatching(m);
    await this.stopAccount(m);
    removeAccountSeries(this.deps.metrics, m.spec.name);
  }

  private async stopAccount(m: Managed): Promise<void> {
    if (m.provisionTimer) this.deps.clock.clearTimeout(m.provisionTimer);
    m.renewAtMs = undefined;
    await m.runner?.stop();
  }

  private stopWatching(m: Managed): void {
    m.watcher?.stop();
    if (m.subscribed) this.feed?.unsubscribe(m.spec.address);
    m.subscribed = false;
  }

  private ensureRunning(m: Managed): void {
    const { deps } = this;
    const p = m.provisioned!;
    const sender: ScheduleCancelSender = makeSender({
      agent: p.agent,
      vaultAddress: p.vaultAddress,
      network: this.options.network,
      nonces: this.nonces,
      venue: deps.venue,
    });
    m.sender = sender;
    if (m.runner) return; // re-provisioned: only the signer changes
    // The address's budget and volume gate, read before the first arm (bounded: address-budget.ts),
    // so an account below the gate is reported before an arm is spent on it.
    const firstRead = this.addressBudgets.first(m);
    if (this.gate.isUnsettled(m.spec.name)) {
      this.gate.settledOk(m.spec.name, (p.source === 'approved' ? 1 : 0) + (p.builderFeeApproved ? 1 : 0));
      // During a cold start its first arm may wait for the gate, so it does not come due again
      // before the last account is armed (plan/cold-start.ts).
      this.gate.admit(m.spec.name, this.deps.clock.monoMs(), this.cadence.coldStartWindow(), () => void firstRead.then(() => this.startRunner(m)));
      return;
    }
    void firstRead.then(() => this.startRunner(m));
  }

  private startRunner(m: Managed): void {
    const { deps } = this;
    if (m.removed || m.runner || this.stopRequested) return;
    const sender = m.sender!;
    const runner = new AccountRunner(m.spec.name, this.cadence.effectiveSettings(m.spec), {
      clock: deps.venueClock,
      sender: { send: (args) => (m.sender ?? sender).send(args) },
      reprovision: () => this.agents.provision(m, true),
      report: (r) => {
        if (r.type === 'arm') this.gate.firstArmAnswered(m.spec.name, r.result === 'ok');
        this.reports.runner(m, r);
      },
      claimSlot: (wishMs, nowMs) => this.cadence.claimSlot(wishMs, nowMs, m.spec.name),
    });
    m.runner = runner;
    // Before its first arm: a bot already silent gets a cancel-soon arm, not a re-arm.
    if (this.bots.judged(m.spec.name)) runner.botLiveness(this.bots.alive(m.spec.name));
    runner.start();

    m.watcher = new AccountWatcher(m.spec.address, this.cadence.readIntervals(this.options), {
      clock: deps.clock,
      source: deps.venue,
      report: (r) => this.reports.watch(m, r),
      mode: this.options.watch.source ?? 'service',
      countOrdersOnVenue: () => m.spec.switch.armWhen === 'orders_open',
      perpDexes: () => this.options.watch.perpDexes ?? [],
    });
    m.watcher.start(this.firstReadDelays(m.spec));
    if (this.feed) {
      const r = this.feed.subscribe(m.spec.address);
      m.subscribed = r.subscribed;
      if (!r.subscribed) m.log.info({ event: 'notifications_unavailable', reason: r.reason }, 'no WebSocket slot for this account; relying on polling');
    }
  }

  /** Whether reads may go to the venue's info endpoint (`watch.source` venue or service_then_venue). */
  private readsVenue(): boolean {
    return (this.options.watch.source ?? 'service') !== 'service';
  }

  /**
   * Where this account's first reads go in the start-up stagger: the k-th watcher waits k slots,
   * never longer than its own period (when reads may go to the venue: k n-ths of the planned period).
   * An `orders_open` account reads its orders at once: its first arm waits for them.
   */
  private firstReadDelays(spec: KeeperAccountSpec): { ordersMs: number; positionsMs: number } {
    const global = this.deps.scheduler.specOf('global');
    const k = this.watchersStarted++;
    const ordersNow = spec.switch.armWhen === 'orders_open';
    if (this.readsVenue()) {
      // Venue reads weigh 20 and 4 of a budget of 20 a second: a few slots apart they would still
      // come due together and be shed (measured: 44 of the first minute's reads at 20 accounts).
      // Spread evenly over the planned periods instead, the pattern the steady state keeps. Under
      // service_then_venue too: reads in a burst on the service all fall back to the venue at once
      // when it fails (measured with built processes: 13 reads shed 16 to 20 s into an outage).
      // They begin after the cold start's own venue requests (an approval, a first arm and the
      // address budget's userRateLimit read per account) have had their share of the budget.
      const n = Math.max(1, this.options.accounts.length);
      const { ordersEveryMs, positionsEveryMs } = this.cadence.readIntervals(this.options);
      // (Under service_then_venue the first reads go to the service: they need not wait for it.)
      const exchange = this.deps.scheduler.specOf('exchange');
      const provisioningWeight = n * (2 + infoRequestWeight('userRateLimit', this.options.infoWeights));
      const afterMs = exchange && this.options.watch.source === 'venue' ? (provisioningWeight * exchange.windowMs) / (exchange.limit * READ_UTILISATION) : 0;
      const at = (periodMs: number): number => Math.round(afterMs + ((k % n) * periodMs) / n);
      return { ordersMs: ordersNow ? 0 : at(ordersEveryMs), positionsMs: at(positionsEveryMs) };
    }
    if (!global) return { ordersMs: 0, positionsMs: 0 };
    const offsetMs = k * FIRST_READ_SPREAD_SLOTS * (global.windowMs / global.limit);
    const { ordersEveryMs, positionsEveryMs } = this.options.watch;
    return {
      ordersMs: ordersNow ? 0 : Math.min(offsetMs, ordersEveryMs),
      positionsMs: Math.min(offsetMs, positionsEveryMs),
    };
  }

  /**
   * The cold start's plan: on while provisioning is under way (armed accounts at their longest safe
   * periods), parked first arms released once the gate opens, accounts that no longer want arming
   * (no open orders, ineligible, over budget) taken out of it.
   */
  private updateColdStart(sweep = true): void {
    const now = this.deps.clock.monoMs();
    // The sweep is the loop's (once a second), not every provisioning's: it walks the awaiting accounts.
    if (sweep) {
      for (const name of [...this.gate.awaitingNames()]) {
        const m = this.accounts.get(name);
        if (!m || (m.runner && !shouldBeArmed(m))) this.gate.forget(name);
      }
    }
    this.cadence.setProvisioning(this.gate.active() ? this.gate.provisioning() : null, this.options, this.accounts.values());
    this.gate.release(now, this.cadence.coldStartWindow());
  }

  // ---- loop, time, health ----

  private loop(): void {
    const { deps } = this;
    this.lastLoopMs = deps.clock.monoMs();
    if (this.state !== 'new') {
      this.updateColdStart();
      this.cadence.publishDemand(this.options, this.gate.backlog());
      // A 429 may have announced a tighter budget (or a learned one was restored, or the share of a
      // shared budget moved): re-plan the cadence within it.
      if (this.cadence.budgetChanged(this.options)) this.cadence.apply(this.options, this.accounts.values());
      this.cadence.applyReads(this.options, this.accounts.values());
    }
    // Per-account gauges are recomputed at scrape time (metrics.onCollect), not every second: with
    // thousands of accounts that would be most of the loop's work for nothing.
    // The watchdog proves the process works, not that the venue cooperates: a keeper retrying
    // through a venue outage (not ready) must not be killed, that would only stop its retries. A
    // hung event loop stops this loop, and with it the pings.
    if (this.state === 'running') deps.onHealthyTick?.();
    if (++this.loopCount % 2 === 0 && this.state === 'running') void this.saveBudget();
    if (this.state === 'starting' || this.state === 'running') this.reportActivity();
    if (this.state !== 'stopped') {
      this.loopTimer = deps.clock.setTimeout(() => this.loop(), LOOP_EVERY_MS);
    }
  }

  /** Gauges derived from state; run by the loop and at every scrape. */
  private refreshGauges(): void {
    const { deps } = this;
    const venueNow = deps.venueClock.nowMs();
    const m = deps.metrics;
    m.up.set(this.state === 'stopped' || this.state === 'new' ? 0 : 1);
    m.clockSkew.set(deps.venueClock.skewSeconds());
    m.wsConnected.set(this.feed?.connected() ? 1 : 0);
    for (const acct of this.accounts.values()) {
      const name = acct.spec.name;
      const s = acct.runner?.snapshot();
      const deadline = s?.deadlineMs ?? null;
      const armed = deadline !== null && deadline > venueNow;
      m.armed.set({ account: name }, armed ? 1 : 0);
      m.horizon.set({ account: name }, armed ? (deadline - venueNow) / 1000 : 0);
      if (deadline !== null) m.deadline.set({ account: name }, deadline / 1000);
      m.shouldBeArmed.set({ account: name }, shouldBeArmed(acct) ? 1 : 0);
      m.minHorizonConfigured.set({ account: name }, acct.spec.switch.minHorizonMs / 1000);
      m.deadlineConfigured.set({ account: name }, acct.spec.switch.deadlineMs / 1000);
    }
  }

  private scheduleHealthCheck(): void {
    this.healthTimer = this.deps.clock.setTimeout(async () => {
      this.agents.renewDue(this.accounts.values());
      await this.checkVenueClock();
      if (this.state === 'running' || this.state === 'starting') this.scheduleHealthCheck();
    }, HEALTH_EVERY_MS);
  }

  /** `/v1/health` `as_of` is the precise venue clock sample (the port takes it; Date headers refine it). */
  private async checkVenueClock(): Promise<void> {
    const { deps } = this;
    try {
      // With no service there is no /v1/health: the venue clock is sampled from the Date header of
      // every info and exchange answer the venue wrote (venue-time.ts), which the reads and arms bring.
      if (deps.venue.hasService !== false) await deps.venue.health();
    } catch (e) {
      // Shed for budget (arms first): counted, not a warning (reports.ts readShed).
      if ((e as { reason?: unknown }).reason === 'shed') this.reports.readShed(deps.logger, 'health', (e as Error).message);
      else deps.logger.warn({ event: 'venue_health_failed', err: (e as Error).message }, 'cannot read the venue clock from /v1/health');
    }
    const skewMs = Math.abs(deps.venueClock.skewSeconds() * 1000);
    if (skewMs > this.options.maxClockSkewMs) {
      deps.logger.error({ event: 'clock_skew', skew_seconds: deps.venueClock.skewSeconds(), threshold_seconds: this.options.maxClockSkewMs / 1000 }, 'local clock disagrees with the venue; deadlines use venue time, but fix NTP');
      this.skewLogged = true;
    } else if (this.skewLogged) {
      deps.logger.info({ event: 'clock_skew_resolved', skew_seconds: deps.venueClock.skewSeconds() }, 'clock skew back within threshold');
      this.skewLogged = false;
    }
  }

  private async saveBudget(): Promise<void> {
    const { deps } = this;
    try {
      await deps.budgetLog?.save(shiftTimes(deps.scheduler.exportRecent(), deps.clock.nowMs() - deps.clock.monoMs()), deps.clock.nowMs());
    } catch (e) {
      if (e instanceof StateWriteError) deps.metrics.stateWriteErrors.inc({ reason: e.reason });
    }
  }

  private rollDay(): void {
    const { deps } = this;
    if (deps.triggers.rollIfNewDay(deps.venueClock.nowMs())) {
      for (const name of this.accounts.keys()) deps.metrics.triggersToday.set({ account: name }, 0);
      deps.triggers.save().catch((e: unknown) => {
        if (e instanceof StateWriteError) deps.metrics.stateWriteErrors.inc({ reason: e.reason });
      });
      deps.logger.info({ event: 'trigger_day_reset', day: deps.triggers.currentDay() }, 'daily trigger counts reset (00:00 UTC)');
    }
  }

  /** The minute summary and the start-up progress (activity.ts), logged from the loop. */
  private reportActivity(): void {
    const venueNow = this.deps.venueClock.nowMs();
    const views = (): AccountActivity[] =>
      [...this.accounts.values()].map((m) => {
        const s = m.runner?.snapshot();
        const d = s?.deadlineMs ?? null;
        const armed = d !== null && d > venueNow;
        return { name: m.spec.name, shouldBeArmed: shouldBeArmed(m), armed, horizonSeconds: armed ? (d - venueNow) / 1000 : null, everArmed: (s?.lastSuccessMs ?? null) !== null, provisionFailed: !m.runner && m.provisionError !== undefined, ineligible: s?.phase === 'ineligible' };
      });
    for (const r of this.activity.tick(this.deps.clock.nowMs(), this.options.accounts.length, views, this.cadence.armBudget(this.options))) this.deps.logger[r.level](r.fields, r.msg);
  }

  // ---- bots ----

  /** `POST /heartbeat` (docs/liveness.md): answered from memory, never waiting on the venue. */
  heartbeat(input: { authorization: string | undefined; body: string }): HttpAnswer {
    // The listener is up before the accounts are read: a bot heartbeating into a (re)start must
    // retry, not be told its account does not exist (a client stops on 404).
    if (!this.botsKnown) return { status: 503, body: { error: 'starting', retry_after_seconds: 1 }, headers: { 'retry-after': '1' } };
    return this.bots.heartbeat(input);
  }

  /** A heartbeat the HTTP layer refused before reading it (a body over the limit). */
  heartbeatRefused(reason: HeartbeatRefusal): HttpAnswer {
    return this.bots.refusedEarly(reason);
  }

  // ---- views ----

  liveness(): { alive: boolean; lastLoopAgeMs: number } {
    const age = this.deps.clock.monoMs() - this.lastLoopMs;
    return { alive: this.state !== 'stopped' && this.state !== 'new' && age < 10 * LOOP_EVERY_MS, lastLoopAgeMs: age };
  }

  readiness(): Readiness {
    return readinessOf(this.viewInput());
  }

  status(): KeeperStatus {
    return statusOf(this.viewInput(), this.readiness().ready);
  }

  /**
   * The accounts this instance has settled: armed by itself with at least their minimum horizon
   * left, or judged by its switch not to be armed (ineligible, `orders_open` with no orders, a silent
   * bot), as the previous owner would judge them. What a fleet publishes, so an instance handing an
   * account over lets go only once its new owner protects it (src/app/fleet.ts). An account still
   * provisioning, or over budget here, is not settled: the previous owner keeps arming it.
   */
  settledAccounts(): string[] {
    const venueNow = this.deps.venueClock.nowMs();
    const out: string[] = [];
    for (const m of this.accounts.values()) {
      const r = m.runner;
      if (!r || this.cadence.isOverBudget(m.spec.name)) continue;
      const d = r.snapshot().deadlineMs;
      if (!r.shouldBeArmed() || (d !== null && keepsMinHorizon(d - venueNow, m.spec.switch.minHorizonMs))) out.push(m.spec.name);
    }
    return out;
  }

  private viewInput(): ViewInput {
    return {
      state: this.state,
      accounts: [...this.accounts.values()],
      venueNowMs: this.deps.venueClock.nowMs(),
      skewSeconds: this.deps.venueClock.skewSeconds(),
      wsConnected: this.feed?.connected() ?? false,
      budgetMode: this.deps.budgetMode?.() ?? 'local',
      cadence: this.cadence,
      budgetLimits: () => this.deps.scheduler.limits(),
      triggersToday: (name) => this.deps.triggers.get(name),
      lastCancelFired: (name) => this.deps.triggers.lastFired(name),
      addressBudget: (name) => this.addressBudgets.view(name),
      agentCheck: (name) => this.agentChecks.view(name),
      bot: (name) => this.bots.view(name),
      activity: this.activity,
    };
  }

  /** For tests and the benchmark: the runner of an account. */
  runnerOf(name: string): AccountRunner | undefined {
    return this.accounts.get(name)?.runner;
  }
}

/** Moves every recorded time by `deltaMs` (between the wall and the monotonic clock). */
function shiftTimes(scopes: Record<string, number[]>, deltaMs: number): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [k, times] of Object.entries(scopes)) out[k] = times.map((t) => t + deltaMs);
  return out;
}
