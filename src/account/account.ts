import type { Logger } from 'pino';
import type { TimerHandle } from '../time/clock.js';
import { initAccountSeries, removeAccountSeries } from '../obs/metrics.js';
import { AccountRunner, makeSender, type ScheduleCancelSender } from '../switch/account-runner.js';
import type { AccountParts } from './account-parts.js';
import { AccountWatcher } from './watcher.js';
import type { AccountState, AgentCheckRecord, KeeperAccountSpec } from './keeper-types.js';
import type { Provisioned } from './provision.js';
import type { BotEntry, BotSlot } from '../liveness/bot-liveness.js';
import type { ClobSession } from '../venue/polymarket/port.js';
import { clobWatchSource, makeHeartbeatSender, openClobSession, venueNameOf, warnOtherWriter } from './clob.js';
import { holdScopeOf } from '../venue/port.js';
import type { ArmRoute } from '../venue/routes.js';

/**
 * How long one overdue re-arm keeps its scope pressed: two seconds, so a keeper that stays short of
 * CPU (late re-arms every second at any real plan) presses without a break, while a pause of a few
 * seconds (a GC, a stalled disk) breaks the meter's stretch and measures nothing.
 */
const OVERDUE_PRESS_MS = 2_000;

/**
 * A re-arm whose timer fired this late presses the pace meter: a Node timer is a few ms late on a
 * loop with CPU to spare, and one late by this much is a loop that is not keeping up. Measured in
 * the starved-keeper test (a quarter of a core): of 2,100 late timers in 40 s, 1,930 were 200 to
 * 1,000 ms late and 43 over 1 s, so a 1 s threshold never kept the meter pressed.
 */
const TIMER_LATE_PRESS_MS = 250;

/** A CLOB session that could not be opened (a credential unreadable) is tried again this much later. */
const CLOB_RETRY_MS = 30_000;

/** Whether an account should carry a schedule now; not provisioned yet counts as yes (it is not). */
export function shouldBeArmed(m: Pick<AccountState, 'runner'>): boolean {
  if (!m.runner) return true;
  return m.runner.shouldBeArmed();
}

/**
 * One account, whole: its settings, its agent, its switch (runner), its watcher, its address's
 * action budget, its agent check and its coverage, created, reloaded and closed here. The keeper
 * holds a set of these; the shared parts (the plan, the budget, the cold start's gate, the bots'
 * liveness, the reports) act on the account they are handed and call it back by method
 * (`agentReady`, `botVerdict`), never by name.
 */
export class Account implements AccountState, BotSlot {
  readonly log: Logger;
  runner?: AccountRunner;
  sender?: ScheduleCancelSender;
  watcher?: AccountWatcher;
  provisioned?: Provisioned;
  provisionError?: string;
  provisionTimer?: TimerHandle;
  renewAtMs?: number;
  provisionAttempts = 0;
  provisioning?: Promise<boolean>;
  orders?: AccountState['orders'];
  positions?: AccountState['positions'];
  subscribed = false;
  removed = false;
  addressActions: AccountState['addressActions'] = { reading: false };
  agentCheck?: AgentCheckRecord;
  bot?: BotEntry;
  everArmed = false;
  /** On a CLOB venue: its session (the heartbeat chain and its reads). */
  private clobSession?: ClobSession;
  /** When it last warned of another writer on its CLOB chain (monotonic ms). */
  private otherWriterWarnedMs?: number;

  constructor(
    public spec: KeeperAccountSpec,
    private readonly parts: AccountParts,
  ) {
    const { deps } = parts;
    // A CLOB account's lines name its venue; a line without `venue` is the default venue's (as before venues:).
    this.log = deps.logger.child(spec.clob ? { account: spec.name, venue: spec.clob.venue } : { account: spec.name });
    // A CLOB account's first heartbeat waits for no one: its venue's budget is its own (clob.ts).
    if (!spec.clob) parts.gate.added(spec.name, spec.switch);
    initAccountSeries(deps.metrics, spec.name, { agent: !spec.clob });
    deps.metrics.accountVenue.set({ account: spec.name, venue: this.venueName }, 1);
    this.setCoverage(spec);
    deps.metrics.triggersToday.set({ account: spec.name }, deps.triggers.get(spec.name));
  }

  get name(): string {
    return this.spec.name;
  }

  /** Its venue's name: the default venue's, or its CLOB venue's (an account's venue is part of its identity: it never changes under it). */
  get venueName(): string {
    return venueNameOf(this.spec);
  }

  /**
   * A reload's settings for it (same identity: same signer). Coverage shows at once; a changed
   * switch, builder fee or validity is applied by `applySettings` once the plan is redone.
   * Returns whether anything the switch acts on changed.
   */
  reconfigure(spec: KeeperAccountSpec): boolean {
    this.setCoverage(spec);
    const changed = JSON.stringify(spec.switch) !== JSON.stringify(this.spec.switch) || JSON.stringify(spec.builderFee) !== JSON.stringify(this.spec.builderFee) || spec.validDays !== this.spec.validDays;
    this.spec = spec;
    return changed;
  }

  /** The switch takes the settings the plan in force gives it (from its next decision). */
  applySettings(): void {
    this.runner?.updateSettings(this.parts.cadence.effectiveSettings(this.spec));
  }

  /** Whether it should carry a schedule now; not provisioned yet counts as yes (it is not). */
  shouldBeArmed(): boolean {
    return shouldBeArmed(this);
  }

  /**
   * Its bot's verdict, handed to it by BotLiveness as its BotSlot (bot-liveness.ts), or by the keeper
   * after a reload: the switch hears it (a silent bot: no more re-arms, or a cancel-soon).
   */
  botVerdict(alive: boolean): void {
    this.runner?.botLiveness(alive);
  }

  /** Its first provisioning (agent, builder fee; on a CLOB venue its session); false: failed (it retries on its own backoff). */
  provision(): Promise<boolean> {
    if (this.spec.clob) return this.openClob();
    return this.parts.agents.provision(this, false);
  }

  /**
   * On a CLOB venue: no agent; its L2 credentials are read and its session opened, the switch's
   * sender is a heartbeat and the watcher reads the CLOB (clob.ts). A credential that cannot be
   * read is its provisioning error, retried like a failed approval.
   */
  private async openClob(): Promise<boolean> {
    const { parts } = this;
    try {
      const session = await openClobSession(this.spec, parts.deps.clobVenues);
      this.provisionError = undefined;
      this.sender = makeHeartbeatSender(session, () => this.otherClobWriter());
      this.clobSession = session;
      this.startSwitch();
      return true;
    } catch (e) {
      this.provisionError = e instanceof Error ? e.message : String(e);
      this.log.error({ event: 'provision_failed', reason: 'clob_session', err: this.provisionError }, 'CLOB session could not be opened');
      if (!this.removed && parts.accepting()) this.provisionTimer = parts.deps.clock.setTimeout(() => void this.openClob(), CLOB_RETRY_MS);
      return false;
    }
  }

  /** Its heartbeat chain had moved on without it: said once a minute unless replicas explain it (clob.ts warnOtherWriter). */
  private otherClobWriter(): void {
    const nowMs = this.parts.deps.clock.monoMs();
    if (!warnOtherWriter(this.spec.coveredBy, this.otherWriterWarnedMs, nowMs)) return;
    this.otherWriterWarnedMs = nowMs;
    this.log.warn({ event: 'clob_other_writer' }, 'another writer is heartbeating this account on the CLOB (the bot itself?): recovered, but the bot must stop sending its own heartbeats (docs/polymarket.md)');
  }

  /**
   * Its agent is approved (or reused, or re-approved): the venue's list is checked about it, the
   * signer is (re)built, and on the first time the switch and the watcher start.
   */
  agentReady(): void {
    const { parts } = this;
    parts.agentChecks.afterProvision(this);
    const p = this.provisioned!;
    const sender: ScheduleCancelSender = makeSender({
      agent: p.agent,
      vaultAddress: p.vaultAddress,
      network: parts.options().network,
      nonces: parts.nonces,
      venue: parts.deps.venue,
    });
    this.sender = sender;
    if (this.runner) return; // re-provisioned: only the signer changes
    // The address's budget and volume gate, read before the first arm (bounded: address-actions.ts),
    // so an account below the gate is reported before an arm is spent on it.
    const firstRead = parts.addressActions.first(this);
    if (parts.gate.isUnsettled(this.name)) {
      parts.gate.settledOk(this.name, (p.source === 'approved' ? 1 : 0) + (p.builderFeeApproved ? 1 : 0));
      // During a cold start its first arm may wait for the gate, so it does not come due again
      // before the last account is armed (plan/cold-start.ts).
      parts.gate.admit(this.name, parts.deps.clock.monoMs(), parts.cadence.coldStartWindow(), () => void firstRead.then(() => this.startSwitch()));
      return;
    }
    void firstRead.then(() => this.startSwitch());
  }

  private startSwitch(): void {
    const { parts } = this;
    const { deps } = parts;
    if (this.removed || this.runner || parts.stopRequested()) return;
    const sender = this.sender!;
    const options = parts.options();
    const clob = this.clobSession;
    // The runner's callbacks are its ports: switch/ ranks below account/ and cannot call the account,
    // so what it needs from above (the signer in force, a re-approval, its slot, its reports) is handed in here.
    const runner = new AccountRunner(this.name, parts.cadence.effectiveSettings(this.spec), {
      clock: deps.venueClock,
      // The signer in force when the request leaves: a re-provisioning replaces it under the runner's timers.
      sender: { send: (args) => (this.sender ?? sender).send(args) },
      reprovision: () => parts.agents.provision(this, true),
      report: (r) => {
        if (r.type === 'arm' && !clob) parts.gate.firstArmAnswered(this.name, r.result === 'ok');
        parts.reports.runner(this, r);
      },
      // A CLOB account's heartbeats are not in the default venue's calendar: they beat at their period.
      ...(clob
        ? {}
        : {
            claimSlot: (wishMs: number, nowMs: number) => parts.cadence.claimSlot(wishMs, nowMs, this.name),
            // A re-arm whose timer fired late: the keeper is not keeping the plan's pace (CPU, a stalled
            // loop), and the budget's pace meter must see it (scheduler.pressOverdue). Its route's scope
            // only: pressing the global one too (every request, reads included) held the starved-keeper
            // test's two-loop run at 17.3 s without it and sank it to 0 to 6 s with it, three runs of
            // each; the reads are held back under a pace achieved by the scheduler instead (readGapMs).
            onQueued: (route: ArmRoute, timerLateMs: number) => {
              if (timerLateMs > TIMER_LATE_PRESS_MS) deps.scheduler.pressOverdue(holdScopeOf(route), OVERDUE_PRESS_MS);
            },
          }),
    });
    this.runner = runner;
    // Before its first arm: a bot already silent gets a cancel-soon arm, not a re-arm.
    if (parts.bots.judged(this.name)) runner.botLiveness(parts.bots.alive(this.name));
    runner.start();

    this.watcher = new AccountWatcher(this.spec.address, parts.cadence.readIntervals(options), {
      clock: deps.clock,
      report: (r) => parts.reports.watch(this, r),
      // On a CLOB venue: its open orders from the CLOB (the only source), no positions (it publishes none).
      ...(clob
        ? { source: clobWatchSource(clob), positions: false }
        : {
            source: deps.venue,
            mode: options.watch.source ?? 'service',
            countOrdersOnVenue: () => this.spec.switch.armWhen === 'orders_open',
            perpDexes: () => parts.options().watch.perpDexes ?? [],
          }),
    });
    this.watcher.start(parts.firstReads(this.spec));
    // The default venue's WebSocket knows nothing of a CLOB account.
    if (clob) return;
    const feed = parts.feed();
    if (feed) {
      const r = feed.subscribe(this.spec.address);
      this.subscribed = r.subscribed;
      if (!r.subscribed) this.log.info({ event: 'notifications_unavailable', reason: r.reason }, 'no WebSocket slot for this account; relying on polling');
    }
  }

  /** Removed by a reload (or its identity changed): everything of it ends, its series go. */
  async close(): Promise<void> {
    const { parts } = this;
    this.removed = true;
    parts.gate.forget(this.name);
    parts.addressActions.stop(this, true);
    parts.agentChecks.stop(this, true);
    parts.bots.forget(this.name, this);
    this.stopWatching();
    await this.stopSwitch();
    removeAccountSeries(parts.deps.metrics, this.name);
    parts.deps.metrics.accountVenue.remove({ account: this.name, venue: this.venueName });
  }

  /** The keeper's stop: no more reads or checks are planned (what was read stays shown). */
  stopReading(): void {
    this.parts.addressActions.stop(this);
    this.parts.agentChecks.stop(this);
    this.stopWatching();
  }

  /** Abandons the switch's in-flight requests (the stop timed out; schedules stay armed). */
  abort(): void {
    this.runner?.abortNow();
  }

  private stopWatching(): void {
    this.watcher?.stop();
    if (this.subscribed) this.parts.feed()?.unsubscribe(this.spec.address);
    this.subscribed = false;
  }

  /** Its switch stops as `on_shutdown` says (the keeper's stop, after every account's `stopReading`). */
  async stopSwitch(): Promise<void> {
    if (this.provisionTimer) this.parts.deps.clock.clearTimeout(this.provisionTimer);
    this.renewAtMs = undefined;
    await this.runner?.stop();
  }

  /** Which instances arm it, and which of them this one is (they change as a fleet's membership does). */
  private setCoverage(spec: KeeperAccountSpec): void {
    const { metrics } = this.parts.deps;
    metrics.accountReplicas.set({ account: spec.name }, spec.coveredBy?.length ?? 1);
    metrics.accountReplica.set({ account: spec.name }, spec.replica ?? 0);
  }
}
