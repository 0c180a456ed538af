import type { TimerHandle } from '../time/clock.js';
import { mapLimited } from '../budget/pool.js';
import { Account } from '../account/account.js';
import { buildAccountParts, updateColdStart, type AccountParts } from '../account/account-parts.js';
import { accountStatusesOf, activityOf, publishGauges, readinessOf, settledOf, statusHeadOf, statusOf, type Readiness, type ViewInput } from './views.js';
import type { StatusView } from '../obs/http-server.js';
import { loadCarriedState, rollDay, saveBudget, settledWithin, VenueClockCheck, venueClockStepped } from './upkeep.js';
import type { AccountRunner } from '../switch/account-runner.js';
import type { HeartbeatRefusal, HttpAnswer } from '../liveness/liveness.js';
import type { KeeperAccountSpec, KeeperDeps, KeeperOptions, KeeperStatus, NotificationFeed } from '../account/keeper-types.js';

export type { AccountStatus, KeeperAccountSpec, KeeperDeps, KeeperOptions, KeeperStatus, NotificationFeed } from '../account/keeper-types.js';

const LOOP_EVERY_MS = 1_000;
const HEALTH_EVERY_MS = 60_000;
/**
 * Accounts provisioned at once (key and agent files open, requests queued). 50,000 at once failed
 * with EMFILE; the request budget admits a few hundred a second, so this many lose no time.
 */
const PROVISION_CONCURRENCY = 256;
/** Provisionings started at once; one more per provisioning done (mapLimited: slow start). */
const PROVISION_FIRST = 8;

/**
 * The set of accounts (account.ts), the 1 s loop that keeps the plan in force, the reload's diff,
 * and start and stop. What one account does is its own; what the accounts share is account-parts.ts.
 */
export class Keeper {
  private readonly accounts = new Map<string, Account>();
  private options: KeeperOptions;
  private readonly parts: AccountParts;
  private readonly clockCheck: VenueClockCheck;
  private feed?: NotificationFeed;
  private loopTimer: TimerHandle | null = null;
  private healthTimer: TimerHandle | null = null;
  private daily?: { stop(): void };
  private lastLoopMs = 0;
  private loopCount = 0;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private startPromise?: Promise<void>;
  private stopPromise?: Promise<void>;
  /** Set as soon as stop() is called: provisioning not yet begun is skipped. */
  private stopRequested = false;
  /** Set once the configured accounts' bots are known: heartbeats before that get 503 (retried), not 404. */
  private botsKnown = false;
  private readonly unsubscribeClock: () => void;
  private readonly unsubscribeLimits: () => void;

  constructor(
    options: KeeperOptions,
    private readonly deps: KeeperDeps,
  ) {
    this.options = options;
    this.parts = buildAccountParts(deps, {
      options: () => this.options,
      account: (name) => this.accounts.get(name),
      accounts: () => this.accounts.values(),
      accepting: () => this.state !== 'stopping' && this.state !== 'stopped',
      stopRequested: () => this.stopRequested,
      feed: () => this.feed,
    });
    this.clockCheck = new VenueClockCheck(deps, this.parts.reports);
    deps.metrics.onCollect.push(() => publishGauges(deps, this.state, this.feed, this.accounts.values()));
    for (const direction of ['forward', 'backward']) deps.metrics.venueClockSteps.inc({ direction }, 0);
    this.unsubscribeClock = deps.venueClock.onStep((step) => venueClockStepped(deps, step, this.accounts.values()));
    // A pace achieved (a keeper short of CPU) is planned for at once, not at the next 1 s loop: that
    // loop's timer is as late as the re-arms (30 s in test/budget-starved-cpu.test.ts).
    this.unsubscribeLimits = deps.scheduler.onLimitChange((c) => {
      if (c.source === 'achieved' && this.state !== 'new' && this.state !== 'stopped') this.parts.cadence.apply(this.options, this.accounts.values());
    });
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
    const { deps, parts } = this;
    await loadCarriedState(deps);
    this.lastLoopMs = deps.clock.monoMs();
    this.loop();
    await this.clockCheck.check(this.options.maxClockSkewMs);
    this.scheduleHealthCheck();
    this.daily = deps.scheduleDaily?.(() => rollDay(deps, this.accounts.keys()));
    if (this.options.watch.notifications && deps.notifications) {
      this.feed = deps.notifications((e) => parts.reports.notification(e));
      this.feed.start();
    }
    parts.cadence.apply(this.options, this.accounts.values());
    // Other shards' tokens are read before heartbeats are answered (botsKnown, in addAccounts).
    await parts.relay?.configure(this.options.foreignAccounts ?? []);
    parts.relay?.start();
    await this.addAccounts(this.options.accounts);
    this.state = 'running';
  }

  private async doStop(timeoutMs: number): Promise<void> {
    await this.startPromise?.catch(() => undefined);
    this.state = 'stopping';
    const { deps, parts } = this;
    this.daily?.stop();
    if (this.healthTimer) deps.clock.clearTimeout(this.healthTimer);
    const all = [...this.accounts.values()];
    parts.bots.stop(all);
    parts.relay?.stop();
    for (const m of all) m.stopReading();
    if (!(await settledWithin(deps.clock, all.map((m) => m.stopSwitch()), timeoutMs))) {
      deps.logger.error({ event: 'stop_timeout', timeout_ms: timeoutMs }, 'stop timed out; abandoning in-flight requests (schedules stay armed)');
      for (const m of all) m.abort();
    }
    await this.feed?.stop().catch(() => undefined);
    await saveBudget(deps);
    this.unsubscribeClock();
    this.unsubscribeLimits();
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
    const { parts } = this;
    const nextByName = new Map(next.accounts.map((a) => [a.name, a]));
    const watchChanged = JSON.stringify(next.watch) !== JSON.stringify(this.options.watch);
    this.options = next;
    const work: Array<Promise<void>> = [];
    for (const [name, m] of this.accounts) {
      const spec = nextByName.get(name);
      if (!spec || spec.identity !== m.spec.identity) {
        result.removed.push(name);
        this.accounts.delete(name);
        work.push(m.close());
      }
    }
    for (const spec of next.accounts) {
      const m = this.accounts.get(spec.name);
      if (!m) {
        if (!result.removed.includes(spec.name)) result.added.push(spec.name);
        else result.updated.push(spec.name);
        continue;
      }
      (m.reconfigure(spec) ? result.updated : result.unchanged).push(spec.name);
    }
    await Promise.all(work);
    // Liveness settings and tokens are read anew (a rotated token takes effect); what was seen of each bot stays.
    await Promise.all([...this.accounts.values()].filter((m) => nextByName.has(m.name)).map((m) => parts.bots.configure(m.name, m.spec.liveness, m.log)));
    await parts.relay?.configure(next.foreignAccounts ?? []);
    parts.cadence.apply(this.options, this.accounts.values());
    if (watchChanged) parts.cadence.applyReads(this.options, this.accounts.values(), true);
    for (const name of result.updated) this.accounts.get(name)?.applySettings();
    // A liveness block removed (or a bot judged anew): the switch hears the verdict in force, so an
    // account whose liveness went away is never left silent.
    for (const m of this.accounts.values()) m.botVerdict(parts.bots.alive(m.name));
    await this.addAccounts(next.accounts.filter((s) => !this.accounts.has(s.name)));
    return result;
  }

  /**
   * Every account is known (status, readiness, metrics) at once; their provisioning runs a few
   * hundred at a time, in config order, and what has not begun when a stop comes never does.
   */
  private async addAccounts(specs: readonly KeeperAccountSpec[]): Promise<void> {
    const { parts } = this;
    const added = specs.map((spec) => {
      const m = new Account(spec, parts);
      this.accounts.set(spec.name, m);
      return m;
    });
    this.updateColdStart(false);
    // Each bot is judged from now: one silence period before a bot not heard from counts as dead.
    await Promise.all(added.map((m) => parts.bots.configure(m.name, m.spec.liveness, m.log)));
    this.botsKnown = true;
    await mapLimited(added, PROVISION_CONCURRENCY, async (m) => {
      if (this.stopRequested || m.removed) {
        parts.gate.settledFailed(m.name);
        return;
      }
      const ok = await m.provision();
      if (!ok) parts.gate.settledFailed(m.name);
      this.updateColdStart(false);
    }, { initial: PROVISION_FIRST });
  }

  /** The cold start's plan, kept in force (account-parts.ts updateColdStart). */
  private updateColdStart(sweep = true): void {
    updateColdStart(this.parts, this.accounts, this.options, this.deps.clock.monoMs(), sweep);
  }

  private loop(): void {
    const { deps } = this;
    const { cadence, gate } = this.parts;
    this.lastLoopMs = deps.clock.monoMs();
    if (this.state !== 'new') {
      this.updateColdStart();
      cadence.publishDemand(this.options, gate.backlog());
      // A 429 may have announced a tighter budget (or a learned one was restored, or the share of a
      // shared budget moved): re-plan the cadence within it.
      if (cadence.budgetChanged(this.options)) cadence.apply(this.options, this.accounts.values());
      cadence.applyReads(this.options, this.accounts.values());
    }
    // Per-account gauges are recomputed at scrape time (metrics.onCollect), not every second: with
    // thousands of accounts that would be most of the loop's work for nothing.
    // The watchdog proves the process works, not that the venue cooperates: a keeper retrying
    // through a venue outage (not ready) must not be killed, that would only stop its retries. A
    // hung event loop stops this loop, and with it the pings.
    if (this.state === 'running') deps.onHealthyTick?.();
    if (++this.loopCount % 2 === 0 && this.state === 'running') void saveBudget(deps);
    if (this.state === 'starting' || this.state === 'running') this.reportActivity();
    if (this.state !== 'stopped') {
      this.loopTimer = deps.clock.setTimeout(() => this.loop(), LOOP_EVERY_MS);
    }
  }

  private scheduleHealthCheck(): void {
    this.healthTimer = this.deps.clock.setTimeout(async () => {
      this.parts.agents.renewDue(this.accounts.values());
      await this.clockCheck.check(this.options.maxClockSkewMs);
      if (this.state === 'running' || this.state === 'starting') this.scheduleHealthCheck();
    }, HEALTH_EVERY_MS);
  }

  /** The minute summary and the start-up progress (activity.ts), logged from the loop. */
  private reportActivity(): void {
    const { activity, cadence } = this.parts;
    const views = () => activityOf(this.accounts.values(), this.deps.venueClock.nowMs());
    for (const r of activity.tick(this.deps.clock.nowMs(), this.options.accounts.length, views, cadence.armBudget(this.options))) this.deps.logger[r.level](r.fields, r.msg);
  }

  /** `POST /heartbeat` (docs/liveness.md): answered from memory, never waiting on the venue. */
  heartbeat(input: { authorization: string | undefined; body: string }): HttpAnswer {
    // The listener is up before the accounts are read: a bot heartbeating into a (re)start must
    // retry, not be told its account does not exist (a client stops on 404).
    if (!this.botsKnown) return { status: 503, body: { error: 'starting', retry_after_seconds: 1 }, headers: { 'retry-after': '1' } };
    return this.parts.bots.heartbeat(input);
  }

  /** A heartbeat the HTTP layer refused before reading it (a body over the limit). */
  heartbeatRefused(reason: HeartbeatRefusal): HttpAnswer {
    return this.parts.bots.refusedEarly(reason);
  }

  /** `/healthz`: the process works (its loop ran within 10 s); not the bots' liveness, not the venue's health. */
  processHealth(): { alive: boolean; lastLoopAgeMs: number } {
    const age = this.deps.clock.monoMs() - this.lastLoopMs;
    return { alive: this.state !== 'stopped' && this.state !== 'new' && age < 10 * LOOP_EVERY_MS, lastLoopAgeMs: age };
  }

  readiness(): Readiness {
    return readinessOf(this.viewInput());
  }

  status(): KeeperStatus {
    const v = this.viewInput();
    return statusOf(v, readinessOf(v, 1).ready);
  }

  /**
   * `status()` as the ops server writes it (http-server.ts, in pieces with turns of the event loop
   * between): the accounts are made one by one as they are written.
   */
  statusView(): StatusView {
    const v = this.viewInput();
    return { head: statusHeadOf(v, readinessOf(v, 1).ready), accounts: accountStatusesOf(v) };
  }

  /** The accounts this instance has settled (views.ts settledOf): what a fleet publishes. */
  settledAccounts(): string[] {
    return settledOf(this.accounts.values(), this.deps.venueClock.nowMs(), this.parts.cadence);
  }

  private viewInput(): ViewInput {
    const { deps, parts } = this;
    return {
      state: this.state,
      accounts: [...this.accounts.values()],
      venueNowMs: deps.venueClock.nowMs(),
      skewSeconds: deps.venueClock.skewSeconds(),
      wsConnected: this.feed?.connected() ?? false,
      budgetMode: deps.budgetMode?.() ?? 'local',
      cadence: parts.cadence,
      budgetLimits: () => deps.scheduler.limits(),
      triggersToday: (name) => deps.triggers.get(name),
      lastCancelFired: (name) => deps.triggers.lastFired(name),
      bot: (name) => parts.bots.view(name),
      activity: parts.activity,
    };
  }

  /** For tests and the benchmark: the runner of an account. */
  runnerOf(name: string): AccountRunner | undefined {
    return this.accounts.get(name)?.runner;
  }
}
