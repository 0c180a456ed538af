import type { TimerHandle } from '../time/clock.js';
import type { AdmissionWait } from '../budget/scheduler.js';
import type { ArmClass } from '../budget/request-class.js';
import type { VenueClock } from '../time/venue-clock.js';
import type { ArmRoute, RouteChoice, VenueReading } from '../venue/routes.js';
import { ActionError, DecodeError, isVenueError, refusesRequest, RestError } from '../venue/errors.js';
import { buildScheduleCancel } from '../venue/actions.js';
import { ClobError } from '../venue/polymarket/errors.js';
import type { NonceSource } from '../venue/signing/nonce.js';
import type { Signer } from '../venue/signing/signer.js';
import type { VenuePort } from '../venue/port.js';
import type { Network } from '../venue/types.js';
import {
  horizonMs,
  initialState,
  latestRearmAfterMs,
  step,
  wantsArmed,
  type Effect,
  type Failure,
  type SwitchEvent,
  type SwitchSettings,
  type SwitchState,
} from './switch-machine.js';

/**
 * A timer already set to fire within this much of the wake-up just decided is kept. Timers are whole
 * milliseconds, and the venue-time reading behind a wake-up (Date.now against the monotonic clock)
 * moves by a fraction of one between two ticks: a keep for "not earlier" only re-set half of them.
 * One early ticks and sets the next; one late by under 1 ms is inside the timer's own resolution.
 */
const TIMER_KEEP_MS = 1;

/**
 * Signs and posts one scheduleCancel for one account (time set: arm; time absent: clear). Built by
 * the account (makeSender, below) around its agent signer, nonce source and vault address; the
 * runner never sees a key.
 */
export interface ScheduleCancelSender {
  /**
   * `timeMs` is read once the request is admitted and leaves: the deadline to arm (undefined:
   * clear). `cls` orders arms in the budget: a re-arm by its current deadline, a cancel-soon arm by
   * when it was queued (absent: none to protect).
   */
  send(args: {
    route: ArmRoute;
    timeMs: () => number | undefined;
    cls?: ArmClass;
    signal?: AbortSignal;
    onAdmitted?: (wait: AdmissionWait) => void;
    /**
     * The other route and the venue time the request must leave by, as the switch chose them: the
     * port sends it that way when `route` is held by a 429, failing, or too slow (see
     * VenuePort.scheduleCancel), timing it from `queuedAt`, the account's reading as it queued it.
     */
    alternative?: RouteChoice;
    queuedAt?: VenueReading;
    /** The route the request finally waits on. */
    onRoute?: (route: ArmRoute) => void;
  }): Promise<void>;
}

/** The venue port as the runner's sender needs it. */
export type SenderVenue = Pick<VenuePort, 'scheduleCancel'>;

/**
 * The runner's port to the venue: an account's scheduleCancel sender. The port admits the request,
 * then `timeMs()` is read and the body signed by the account's agent (as the request leaves, so
 * the deadline is fresh).
 */
export function makeSender(args: { agent: Signer; vaultAddress?: string; network: Network; nonces: NonceSource; venue: SenderVenue }): ScheduleCancelSender {
  const { agent, vaultAddress, network, nonces, venue } = args;
  return {
    send: async ({ route, timeMs, cls, signal, onAdmitted, alternative, queuedAt, onRoute }: Parameters<ScheduleCancelSender['send']>[0]) => {
      await venue.scheduleCancel(
        route,
        // The nonce is drawn in the signer's turn, so nonces leave in the order they were drawn.
        () => buildScheduleCancel({ signer: agent, network, nonce: nonces.next(agent.address), timeMs: timeMs(), vaultAddress }),
        {
          signer: agent.address,
          ...(cls ? { cls } : {}),
          ...(signal ? { signal } : {}),
          ...(onAdmitted ? { onAdmitted } : {}),
          ...(alternative ? { alternative } : {}),
          ...(queuedAt ? { queuedAt } : {}),
          ...(onRoute ? { onRoute } : {}),
        },
      );
    },
  };
}

/** What the runner tells the outside world (logs, metrics, watchers). */
export type RunnerReport =
  | {
      type: 'arm';
      result: 'ok' | 'rate_limited' | 'rejected' | 'error';
      route: ArmRoute;
      deadlineMs?: number;
      latencyMs: number;
      /** Send time minus planned slot, split: `timerLateMs` (slot to the request being queued) and `queuedMs` (queued to sent: budget, signer turn). */
      lagMs?: number;
      timerLateMs?: number;
      queuedMs?: number;
      /** Where the queued time went (the budget's view, see AdmissionWait). */
      wait?: AdmissionWait;
      reason?: string;
      message?: string;
      retryAfterMs?: number;
      scope?: string;
      /** A cancel-soon arm (the bot fell silent): its deadline is the venue's minimum lead ahead. */
      soon?: boolean;
    }
  | { type: 'clear'; result: 'ok' | 'rate_limited' | 'rejected' | 'error'; route: ArmRoute; latencyMs: number; reason?: string; message?: string }
  | { type: 'lapsed'; deadlineMs: number; botSilent: boolean }
  | { type: 'phase'; from: SwitchState['phase']; to: SwitchState['phase'] }
  | { type: 'reprovision_requested' }
  | { type: 'stopped' };

export interface AccountRunnerDeps {
  /** Venue time estimate for decisions; local (monotonic) timers underneath. */
  clock: VenueClock;
  sender: ScheduleCancelSender;
  /** Re-approve the agent (after `User or API Wallet … does not exist`). Resolves to success. */
  reprovision: () => Promise<boolean>;
  report: (r: RunnerReport) => void;
  /**
   * The keeper's slot calendar: given when the next re-arm is wanted, the slot to use (at or
   * before it). Absent: re-arms go at their period's end.
   */
  claimSlot?: (wishMs: number, nowMs: number) => number;
  /**
   * Hears each planned re-arm as it is queued, with how late the timer that sent it fired (ms; 0
   * when no timer sent it): a keeper short of CPU is late here before any budget sees it (account.ts
   * presses the budget's pace meter with it). Not its lateness after its slot: a retry after a failed
   * arm is late on its slot by design, and pressing with it put a CPU limit on a venue outage (the
   * reads of a fired cancel's reconciliation were held back). Absent: nobody listens.
   */
  onQueued?: (route: ArmRoute, timerLateMs: number) => void;
}

/** Maps a failed request to the machine's vocabulary (and the metric's `result` label). */
export function toFailure(e: unknown): Failure {
  if (e instanceof RestError) {
    if (e.httpStatus === 429) {
      const rl = e.rateLimit;
      return { kind: 'rate_limited', retryAfterMs: Math.max(1, rl?.retry_after_seconds ?? 1) * 1000 };
    }
    if (refusesRequest(e.httpStatus)) {
      return { kind: 'rejected', reason: 'invalid_request', message: e.message };
    }
    return { kind: 'error', reason: e.reason, message: e.message };
  }
  if (e instanceof ActionError) return { kind: 'rejected', reason: e.reason, message: e.message };
  // A CLOB venue (venue/polymarket): its credentials refused, or a request it refuses as sent, is
  // refused again if sent again; a 429 holds; the rest (a stale chain after its one recovery, the
  // weekly restart's 425, a 5xx, no answer) is retried on the horizon's schedule.
  if (e instanceof ClobError) {
    if (e.reason === 'rate_limited') return { kind: 'rate_limited', retryAfterMs: Math.max(1_000, e.retryAfterMs ?? 1_000) };
    if (e.reason === 'unauthorized' || e.reason === 'refused') return { kind: 'rejected', reason: 'invalid_request', message: e.message };
    return { kind: 'error', reason: e.reason, message: e.message };
  }
  // The venue's /exchange answers a body it cannot read with 422 and plain text, no envelope: it
  // refuses what we sent (sending it again is refused again), it is not a failing route.
  if (e instanceof DecodeError && e.reason === 'bad_status' && e.httpStatus === 422) {
    return { kind: 'rejected', reason: 'invalid_request', message: e.message };
  }
  if (isVenueError(e)) return { kind: 'error', reason: e.reason, message: e.message };
  const err = e as { reason?: unknown; message?: unknown };
  return { kind: 'error', reason: typeof err?.reason === 'string' ? err.reason : 'internal', message: String(err?.message ?? e) };
}

/**
 * Runs one account's switch: feeds events to the pure machine and carries out its effects. One
 * request at a time per account (the machine never emits a send while one is in flight), so the
 * account's nonces reach the venue in order.
 */
export class AccountRunner {
  private state: SwitchState = initialState();
  private timer: TimerHandle | null = null;
  /** How late the timer now running fired (ms): what onQueued hears; 0 outside a timer's dispatch. */
  private timerLateMs = 0;
  /** When the timer now set is due (monotonic ms). */
  private timerDueMono = 0;
  private stopWaiters: Array<() => void> = [];
  /**
   * The arm in flight, to abort. One per arm, not one per account for its lifetime: an idle
   * AbortController with its signal took about 0.5 KB of heap (the signal gets a map of its own),
   * 5 MB at 10,000 accounts.
   */
  private inFlight: AbortController | null = null;
  private abortedBy: Error | null = null;
  /**
   * The last arm the venue accepted: venue time we sent it at, and the monotonic instant. Venue
   * time for this account never reads below `venueMs + (mono now - monoMs)`: the venue took that
   * reading, so no later correction of the estimate may postpone what was planned from it.
   */
  private accepted: { venueMs: number; monoMs: number } | null = null;
  /** Monotonic instant by which the next arm must leave (see latestRearmAfterMs); null when none. */
  private latestRearmMono: number | null = null;
  /** The last venue reading and its monotonic instant, to measure a correction of the estimate. */
  private lastRead = { venueMs: 0, monoMs: 0 };

  constructor(
    readonly name: string,
    private settings: SwitchSettings,
    private readonly deps: AccountRunnerDeps,
  ) {}

  snapshot(): Readonly<SwitchState> {
    return this.state;
  }

  currentSettings(): Readonly<SwitchSettings> {
    return this.settings;
  }

  /**
   * Venue time as this account plans with it: the estimate, but never below the venue time of the
   * last accepted arm plus the monotonic time elapsed since.
   */
  venueNowMs(): number {
    const mono = this.deps.clock.monoMs();
    let t = this.deps.clock.nowMs();
    if (this.accepted) t = Math.max(t, this.accepted.venueMs + (mono - this.accepted.monoMs));
    this.lastRead = { venueMs: t, monoMs: mono };
    return t;
  }

  /** Venue-time horizon of the armed cancel; null when none. */
  horizonMs(): number | null {
    return horizonMs(this.state, this.venueNowMs());
  }

  /**
   * The venue clock estimate was corrected: move every plan and hold so it keeps its real instant
   * (a deadline nearer in venue time re-plans the next arm), and set the timer anew.
   */
  clockStepped(): void {
    if (this.state.phase === 'stopped') return;
    const expected = this.lastRead.venueMs + (this.deps.clock.monoMs() - this.lastRead.monoMs);
    const deltaMs = this.venueNowMs() - expected;
    if (Math.abs(deltaMs) < 1) return;
    this.dispatch({ type: 'clock_step', deltaMs });
  }

  shouldBeArmed(): boolean {
    return wantsArmed(this.settings, this.state) && this.state.phase !== 'ineligible';
  }

  start(): void {
    this.dispatch({ type: 'start' });
  }

  /** Settings changed (a reload, a new plan): takes effect from the next decision, timers untouched. */
  updateSettings(settings: SwitchSettings): void {
    this.settings = settings;
    this.dispatch({ type: 'tick' });
  }

  /** The account's bot was judged alive or silent (bot-liveness.ts); ignored without `onSilence`. */
  botLiveness(alive: boolean): void {
    this.dispatch({ type: 'bot', alive });
  }

  /** Open orders as read; null when the read failed: unknown counts as open (arm), never a stale 0. */
  observeOrders(count: number | null): void {
    this.dispatch({ type: 'orders_observed', count });
  }

  /** Resolves once the account is stopped (after its clear, with `clear`). */
  stop(mode?: 'keep' | 'clear'): Promise<void> {
    if (this.state.phase === 'stopped') return Promise.resolve();
    const done = new Promise<void>((resolve) => this.stopWaiters.push(resolve));
    this.dispatch(mode === undefined ? { type: 'stop' } : { type: 'stop', mode });
    return done;
  }

  /** Gives up at once: aborts what is in flight (used when a bounded stop runs out of time). */
  abortNow(): void {
    this.abortedBy = new Error('keeper stopping');
    this.inFlight?.abort(this.abortedBy);
    this.clearTimer();
    this.finishStop();
  }

  /** Trades the planned re-arm time for a calendar slot at or before it (see SlotCalendar). */
  private claimNextSlot(): void {
    const { plannedSlotMs, nextArmAtMs, phase } = this.state;
    if (!this.deps.claimSlot || phase !== 'armed' || plannedSlotMs === null || nextArmAtMs !== plannedSlotMs) return;
    const at = this.deps.claimSlot(plannedSlotMs, this.venueNowMs());
    if (at < plannedSlotMs) this.dispatch({ type: 'replan', atMs: at });
  }

  private dispatch(event: SwitchEvent): void {
    const now = this.venueNowMs();
    const before = this.state.phase;
    const r = step(this.settings, this.state, event, now);
    this.state = r.state;
    if (r.state.phase !== before) this.deps.report({ type: 'phase', from: before, to: r.state.phase });
    this.apply(r.effects);
  }

  private apply(effects: Effect[]): void {
    let wake: number | null = null;
    for (const e of effects) {
      switch (e.type) {
        case 'send_arm':
          this.sendArm(e.route, e.plannedSlotMs, e.alternative, e.soonLeadMs);
          break;
        case 'send_clear':
          this.sendClear(e.route, e.alternative);
          break;
        case 'wake_at':
          wake = e.atMs;
          break;
        case 'reprovision':
          this.deps.report({ type: 'reprovision_requested' });
          this.deps.reprovision().then(
            (ok) => this.dispatch({ type: 'reprovisioned', ok }),
            () => this.dispatch({ type: 'reprovisioned', ok: false }),
          );
          break;
        case 'lapsed':
          this.deps.report({ type: 'lapsed', deadlineMs: e.deadlineMs, botSilent: e.botSilent });
          break;
        case 'stopped':
          this.clearTimer();
          this.deps.report({ type: 'stopped' });
          this.finishStop();
          break;
      }
    }
    if (wake !== null) this.setTimer(wake);
  }

  /** `soonLeadMs`: a cancel-soon arm, its deadline that far ahead of when it leaves (not `deadlineMs`). */
  private sendArm(planned: ArmRoute, plannedSlotMs: number | null, alternative?: RouteChoice, soonLeadMs?: number): void {
    const soon = soonLeadMs !== undefined;
    // A re-arm protects a deadline; a first arm (or one after a lapse) has none. Only a re-arm's lag
    // is reported: a first arm's "slot" is its account's start, and at 50,000 accounts first arms
    // waiting over 1 s in the cold start's queue were logged as late re-arms (33,847 of one run's
    // 40,523), which hid the real ones.
    const rearm = this.state.deadlineMs !== null;
    this.dispatch({ type: 'arm_sent', route: planned, ...(soon ? { soon } : {}) });
    // The route it really goes by: the port may send it the other way (a 429 hold, a long queue).
    let route = planned;
    const queuedAt = this.venueNowMs();
    if (plannedSlotMs !== null) this.deps.onQueued?.(planned, this.timerLateMs);
    let sentAt = queuedAt;
    let sentMono = this.deps.clock.monoMs();
    let deadlineMs = 0;
    let wait: AdmissionWait | undefined;
    const ac = new AbortController();
    if (this.abortedBy) ac.abort(this.abortedBy);
    this.inFlight = ac;
    this.deps.sender
      .send({
        route,
        // A cancel-soon arm is due now, as queued: its own class, ordered by its queue time, ahead of
        // every re-arm whose deadline lies later (request-class.ts orderKey), and sent without waiting
        // for a shared token (tokenWait).
        cls: soon ? { kind: 'arm', urgency: 'cancel_soon', queuedVenueMs: queuedAt } : this.state.deadlineMs === null ? { kind: 'arm', urgency: 'first' } : { kind: 'arm', deadlineVenueMs: this.state.deadlineMs },
        signal: ac.signal,
        onAdmitted: (w) => {
          wait = w;
        },
        ...(alternative ? { alternative, queuedAt: { venueMs: queuedAt, monoMs: sentMono }, onRoute: (r: ArmRoute) => (route = r) } : {}),
        timeMs: () => {
          sentAt = this.venueNowMs();
          sentMono = this.deps.clock.monoMs();
          // The deadline is fixed when the request leaves, not when it was queued; whole ms, rounded
          // up (clocks and budget spacing may be fractional; the venue takes an integer).
          deadlineMs = Math.ceil(sentAt + (soonLeadMs ?? this.settings.deadlineMs));
          return deadlineMs;
        },
      })
      .finally(() => {
        if (this.inFlight === ac) this.inFlight = null;
      })
      .then(
        () => {
          const latencyMs = this.deps.clock.monoMs() - sentMono;
          const lag = plannedSlotMs === null || !rearm ? {} : { lagMs: sentAt - plannedSlotMs, timerLateMs: queuedAt - plannedSlotMs, queuedMs: sentAt - queuedAt, ...(wait ? { wait } : {}) };
          if (!this.accepted || sentMono >= this.accepted.monoMs) {
            this.accepted = { venueMs: sentAt, monoMs: sentMono };
            // A cancel-soon arm sets no re-arm bound: nothing re-arms a silent bot's account.
            this.latestRearmMono = soon ? null : sentMono + latestRearmAfterMs(this.settings);
          }
          this.deps.report({ type: 'arm', result: 'ok', route, deadlineMs, latencyMs, ...lag, ...(soon ? { soon } : {}) });
          this.dispatch({ type: 'arm_ok', deadlineMs, route, sentAtMs: sentAt });
          this.claimNextSlot();
        },
        (e: unknown) => {
          const failure = toFailure(e);
          this.deps.report({
            type: 'arm',
            result: failure.kind,
            route,
            latencyMs: this.deps.clock.monoMs() - sentMono,
            reason: failure.kind === 'rate_limited' ? 'rate_limited' : failure.reason,
            message: failure.kind === 'rate_limited' ? undefined : failure.message,
            retryAfterMs: failure.kind === 'rate_limited' ? failure.retryAfterMs : undefined,
            scope: e instanceof RestError ? e.rateLimit?.scope : undefined,
            ...(soon ? { soon } : {}),
          });
          this.dispatch({ type: 'arm_failed', route, failure });
        },
      );
  }

  private sendClear(planned: ArmRoute, alternative?: RouteChoice): void {
    this.dispatch({ type: 'clear_sent', route: planned });
    // The route it really goes by: the port may send it the other way (REST held or failing).
    let route = planned;
    let sentMono = this.deps.clock.monoMs();
    this.deps.sender
      .send({
        route,
        ...(alternative ? { alternative, queuedAt: { venueMs: this.venueNowMs(), monoMs: sentMono }, onRoute: (r: ArmRoute) => (route = r) } : {}),
        timeMs: () => {
          sentMono = this.deps.clock.monoMs();
          return undefined;
        },
      })
      .then(
        () => {
          this.latestRearmMono = null;
          this.deps.report({ type: 'clear', result: 'ok', route, latencyMs: this.deps.clock.monoMs() - sentMono });
          this.dispatch({ type: 'clear_ok', route });
        },
        (e: unknown) => {
          const failure = toFailure(e);
          this.deps.report({
            type: 'clear',
            result: failure.kind,
            route,
            latencyMs: this.deps.clock.monoMs() - sentMono,
            reason: failure.kind === 'rate_limited' ? 'rate_limited' : failure.reason,
            message: failure.kind === 'rate_limited' ? undefined : failure.message,
          });
          this.dispatch({ type: 'clear_failed', route, failure });
        },
      );
  }

  /**
   * One timer: at the venue-time wake-up, or at the monotonic latest re-arm time if that comes
   * first, whatever the estimate did in between.
   */
  private setTimer(atVenueMs: number): void {
    let delay = Math.max(0, atVenueMs - this.venueNowMs());
    const latest = this.latestRearmMono;
    if (latest !== null && this.state.inFlight === null) delay = Math.min(delay, Math.max(0, latest - this.deps.clock.monoMs()));
    const dueMono = this.deps.clock.monoMs() + delay;
    // The timer already set fires then (a tick that changed no plan, e.g. every runner handed a new
    // period): keep it. Re-setting 50,000 timers held the loop for 0.35 s unloaded, seconds starved.
    if (this.timer && Math.abs(dueMono - this.timerDueMono) < TIMER_KEEP_MS) return;
    this.clearTimer();
    this.timerDueMono = dueMono;
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = null;
      const due = this.latestRearmMono !== null && this.deps.clock.monoMs() >= this.latestRearmMono;
      // Once: a 429 hold may keep the arm back, and a bound in the past must not spin the timer.
      if (due) this.latestRearmMono = null;
      this.timerLateMs = Math.max(0, this.deps.clock.monoMs() - dueMono);
      try {
        this.dispatch(due ? { type: 'rearm_due' } : { type: 'tick' });
      } finally {
        this.timerLateMs = 0;
      }
    }, delay);
  }

  private clearTimer(): void {
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private finishStop(): void {
    const waiters = this.stopWaiters;
    this.stopWaiters = [];
    for (const w of waiters) w();
  }
}
