/**
 * The per-account dead man's switch as a pure state machine: `step(settings, state, event, nowMs)`
 * returns the next state and the effects for the runner to carry out. `nowMs` is always VENUE time
 * (our estimate of it); the runner converts wake-up times to local timers.
 *
 * Invariants this file is responsible for (DESIGN.md section 3):
 * 1. Retries are planned against the deadline: the shorter the horizon, the sooner the retry.
 * 2. A clear happens only on a stop with `on_shutdown: clear`, and it is the last request: no arm
 *    is ever emitted once a stop was requested, and a clear waits for an in-flight arm to settle
 *    (nonces are accepted out of order, so a late arm could otherwise overwrite the clear).
 * 3. After a 429 no arm is planned before `retry_after` has passed.
 */
import type { PathPolicy } from '../plan/cadence.js';
import { otherRoute, type ArmRoute, type RouteChoice } from '../venue/routes.js';
import type { ActionReason } from '../venue/errors.js';
import type { VenueSwitchFacts } from '../venue/switch-facts.js';
import {
  cancelSoonBaseLeadMs,
  CANCEL_SOON_MARGIN_MS,
  cancelSoonLeadMs,
  latestPlannedRearmAtMs,
  latestRearmAfterMs,
  leaveByAtMs,
  REARM_RESERVE_MAX_MS,
  retryUsableHorizonMs,
} from '../plan/horizon.js';

/** What a silent bot gets (liveness.ts): one arm at the earliest time the venue accepts, or none. */
export type OnSilence = 'cancel_soon' | 'stop_rearming';

// The cancel-soon lead and the latest re-arm time are the horizon's arithmetic (plan/horizon.ts).
export { cancelSoonBaseLeadMs, CANCEL_SOON_MARGIN_MS, cancelSoonLeadMs, latestRearmAfterMs };

/** An account's switch as configured (config/, app/from-config.ts): SwitchSettings without its venue. */
export type SwitchConfig = Omit<SwitchSettings, 'venue'>;

export interface SwitchSettings {
  /**
   * The account's venue's switch (minimum lead, daily trigger limit, kind, the waits its refusals
   * ask for), as data from the port (VenuePort.switchFacts): the machine imports no venue facts.
   */
  venue: VenueSwitchFacts;
  deadlineMs: number;
  rearmEveryMs: number;
  minHorizonMs: number;
  armWhen: 'always' | 'orders_open';
  onShutdown: 'keep' | 'clear';
  path: PathPolicy;
  /** The request budget cannot arm this account (lower priority than those it can): not armed. */
  overBudget?: boolean;
  /**
   * `rest_then_exchange` only: the route the plan puts this account on (the accounts the REST
   * route's budget cannot carry get `exchange`); absent: REST. The switch always names it; the port
   * sends the arm the other way while this route is held by a 429 or failing (venue/port.ts).
   */
  preferredRoute?: ArmRoute;
  /** Liveness configured (liveness.ts): what a silent bot gets. Absent: the bot is never judged. */
  onSilence?: OnSilence;
}

export type Phase =
  | 'starting' // nothing sent yet
  | 'armed' // a deadline we set is in the future
  | 'unarmed' // should be armed, but the last attempts failed (or the deadline lapsed)
  | 'idle' // arm_when: orders_open and no open orders: deliberately not re-arming
  | 'over_budget' // the request budget cannot arm it (planProtection): not armed, reported
  | 'ineligible' // the venue's volume gate refuses this account
  | 'blocked' // the signer is not accepted (agent pruned, unfunded): waiting for re-provisioning
  | 'bot_silent' // the account's bot fell silent: no re-arm (after one cancel-soon arm, with cancel_soon)
  | 'stopping'
  | 'stopped';

export type ArmResultKind = 'ok' | 'rate_limited' | 'rejected' | 'error';

export interface LastResult {
  op: 'arm' | 'clear';
  result: ArmResultKind;
  reason?: string;
  message?: string;
  route: ArmRoute;
  atMs: number;
}

export interface SwitchState {
  phase: Phase;
  /** Venue-time ms of the schedule we last set; null when none (never armed, cleared, fired). */
  deadlineMs: number | null;
  /** `soon`: a cancel-soon arm (its deadline the venue's minimum lead ahead), not a re-arm. */
  inFlight: null | { op: 'arm' | 'clear'; route: ArmRoute; sentAtMs: number; soon?: boolean };
  /** Venue time when the next arm is planned; null when nothing is planned. */
  nextArmAtMs: number | null;
  /** When the current plan was made for (the cadence slot), to measure lag and keep the cadence. */
  plannedSlotMs: number | null;
  /** No arm of this account before this venue time (a 429's retry_after). */
  notBeforeMs: number;
  consecutiveFailures: number;
  lastResult: LastResult | null;
  lastSuccessMs: number | null;
  /** Open orders as last observed; null until the first read. */
  openOrders: number | null;
  stopMode: null | 'keep' | 'clear';
  /** Re-provisioning attempts since the last success: one, then we stop asking. */
  reprovisions: number;
  /** When we last asked for a re-provision (venue time); at most one per `reprovisionEveryMs`. */
  lastReprovisionMs: number | null;
  /** One immediate retry after `Invalid nonce`, then ordinary backoff. */
  nonceRetried: boolean;
  clearAttempts: number;
  /**
   * Null while the bot is alive (or not judged). Silent: since when (venue time), and the deadline
   * that will cancel its orders once one is set near enough (a cancel-soon arm accepted, or a
   * deadline already nearer than one would set); null until then.
   */
  silence: null | { sinceMs: number; cancelAtMs: number | null };
}

export type SwitchEvent =
  | { type: 'start' }
  | { type: 'tick' }
  | { type: 'arm_sent'; route: ArmRoute; soon?: boolean }
  | {
      type: 'arm_ok';
      deadlineMs: number;
      route: ArmRoute;
      /** when the request left (venue time) */
      sentAtMs?: number;
    }
  | { type: 'arm_failed'; route: ArmRoute; failure: Failure }
  | { type: 'clear_sent'; route: ArmRoute }
  | { type: 'clear_ok'; route: ArmRoute }
  | { type: 'clear_failed'; route: ArmRoute; failure: Failure }
  /** null: the read failed, the count is unknown (treated as open orders). */
  | { type: 'orders_observed'; count: number | null }
  | { type: 'reprovisioned'; ok: boolean }
  /** The keeper's slot calendar moved the planned re-arm to `atMs`: only ever earlier, never past. */
  | { type: 'replan'; atMs: number }
  /**
   * Venue time moved by `deltaMs` against the local monotonic clock (the estimate was corrected).
   * Plans and holds keep their real instants; the deadline, a venue fact, does not move.
   */
  | { type: 'clock_step'; deltaMs: number }
  /** The monotonic latest re-arm time fixed by the last accepted arm has come: arm now. */
  | { type: 'rearm_due' }
  /** The account's bot was judged alive (a heartbeat, a probe) or silent (liveness.ts). */
  | { type: 'bot'; alive: boolean }
  | { type: 'stop'; mode?: 'keep' | 'clear' };

export type Failure =
  | { kind: 'rate_limited'; retryAfterMs: number }
  /** The venue refused the request itself: an action error, or a 400/404 about our request. */
  | { kind: 'rejected'; reason: ActionReason | 'invalid_request'; message: string }
  | { kind: 'error'; reason: string; message: string };

export type Effect =
  | {
      type: 'send_arm';
      route: ArmRoute;
      plannedSlotMs: number | null;
      /** `rest_then_exchange`: the other route and when to take it (RouteChoice, built here once). */
      alternative?: RouteChoice;
      /** A cancel-soon arm: its deadline this far ahead of when it leaves, not `deadlineMs`. */
      soonLeadMs?: number;
    }
  | { type: 'send_clear'; route: ArmRoute; alternative?: RouteChoice }
  | { type: 'wake_at'; atMs: number }
  | { type: 'reprovision' }
  /** `botSilent`: the deadline passed because the bot fell silent, as intended: a fired cancel, not a lapse. */
  | { type: 'lapsed'; deadlineMs: number; botSilent: boolean }
  | { type: 'stopped' };

export interface StepResult {
  state: SwitchState;
  effects: Effect[];
}

/** Tunables of the retry plan; exported so tests and docs name the same numbers. */
export const RETRY = {
  /** Never retry sooner than this (a hot loop helps nobody). */
  floorMs: 200,
  /** First retry after a transient failure, doubling per consecutive failure. */
  baseMs: 1_000,
  capMs: 30_000,
  /** Retries keep at least this many attempts inside the remaining horizon. */
  attemptsInHorizon: 3,
  ineligibleMs: 5 * 60_000,
  blockedMs: 60_000,
  /** Waited on top of the venue's pending agent removal (VenueSwitchFacts.pendingAgentRemovalMs). */
  pendingAgentRemovalExtraMs: 500,
  /**
   * A clear on a clean stop is tried this often, waiting `clearRetryMs` doubling in between, so a
   * few seconds' outage (a proxy's 502s) does not leave a schedule the operator asked to remove.
   */
  maxClearAttempts: 4,
  clearRetryMs: 500,
  /**
   * An arm sent this late (or a tenth of the period, if less) re-bases the account's cadence on
   * its send time. Network latency does not count (the send time is when the request left).
   */
  rebaseAfterLagMs: 50,
  /**
   * Something that keeps pruning our agent (another keeper approving the same agent name) would
   * otherwise make the two rotate each other's agent forever: re-provision at most this often.
   */
  reprovisionEveryMs: 10 * 60_000,
  /** Upper bound of the retry reserve kept before the monotonic latest re-arm time. */
  rearmReserveMaxMs: REARM_RESERVE_MAX_MS,
} as const;

export function initialState(): SwitchState {
  return {
    phase: 'starting',
    deadlineMs: null,
    inFlight: null,
    nextArmAtMs: null,
    plannedSlotMs: null,
    notBeforeMs: 0,
    consecutiveFailures: 0,
    lastResult: null,
    lastSuccessMs: null,
    openOrders: null,
    stopMode: null,
    reprovisions: 0,
    lastReprovisionMs: null,
    nonceRetried: false,
    clearAttempts: 0,
    silence: null,
  };
}

/** Whether this account should carry a schedule now. Unknown orders count as open: fail safe. */
export function wantsArmed(settings: SwitchSettings, state: SwitchState): boolean {
  if (state.stopMode !== null) return false;
  if (state.silence !== null) return false;
  if (settings.overBudget) return false;
  if (settings.armWhen === 'always') return true;
  return state.openOrders === null || state.openOrders > 0;
}

export function horizonMs(state: SwitchState, nowMs: number): number | null {
  return state.deadlineMs === null ? null : state.deadlineMs - nowMs;
}

/**
 * The route a request names: the one the account's `path` fixes, or for `rest_then_exchange` the plan's
 * (REST when it names none). A function of the settings alone: whether REST is held or failing is
 * the port's to know (it sees every account's arms) and to act on, through the alternative.
 */
export function plannedRoute(settings: SwitchSettings): ArmRoute {
  return settings.path === 'rest_then_exchange' ? (settings.preferredRoute ?? 'rest') : settings.path;
}

/** A request's route and, for `rest_then_exchange`, the other one it may go by if it leaves by `leaveByAtVenueMs`. */
function routed(settings: SwitchSettings, leaveByAtVenueMs: number): { route: ArmRoute; alternative?: RouteChoice } {
  const route = plannedRoute(settings);
  return settings.path === 'rest_then_exchange' ? { route, alternative: { route: otherRoute(route), leaveByVenueMs: leaveByAtVenueMs } } : { route };
}

/**
 * The venue time an arm must leave by so that the horizon keeps `min_horizon` plus the retry
 * reserve: past it, the other route is the safer one. Now when there is no deadline, or it is
 * already that near (a first arm, a retry): then the route that admits it soonest.
 */
export function leaveByVenueMs(settings: SwitchSettings, state: SwitchState, nowMs: number): number {
  if (state.deadlineMs === null) return nowMs;
  return Math.max(nowMs, leaveByAtMs(state.deadlineMs, settings));
}

/**
 * How long to wait before retrying an arm that failed transiently: exponential backoff, but never
 * so long that fewer than `attemptsInHorizon` attempts fit before the venue's minimum lead (`minLeadMs`).
 */
export function retryDelayMs(consecutiveFailures: number, horizon: number | null, minLeadMs: number): number {
  const backoff = Math.min(RETRY.capMs, RETRY.baseMs * 2 ** Math.max(0, consecutiveFailures - 1));
  if (horizon === null) return Math.max(RETRY.floorMs, Math.min(backoff, 2_000));
  const usable = retryUsableHorizonMs(horizon, minLeadMs);
  const byHorizon = usable / RETRY.attemptsInHorizon;
  return Math.max(RETRY.floorMs, Math.min(backoff, byHorizon));
}

/** The main loop body. Pure: same inputs, same outputs. */
export function step(settings: SwitchSettings, state: SwitchState, event: SwitchEvent, nowMs: number): StepResult {
  const s: SwitchState = { ...state };
  const effects: Effect[] = [];

  switch (event.type) {
    case 'start':
      if (s.phase === 'starting' && s.nextArmAtMs === null) {
        s.nextArmAtMs = nowMs;
        s.plannedSlotMs = nowMs;
      }
      break;

    case 'tick':
      break;

    case 'replan':
      // Only a plan still waiting for its slot moves, and only earlier: a later arm would shorten
      // the horizon below what the period promised.
      if (s.phase === 'armed' && s.inFlight === null && s.stopMode === null && s.plannedSlotMs !== null && s.nextArmAtMs === s.plannedSlotMs) {
        s.plannedSlotMs = s.nextArmAtMs = Math.max(nowMs, Math.min(event.atMs, s.plannedSlotMs));
      }
      break;

    case 'clock_step': {
      const d = event.deltaMs;
      const shift = (v: number | null): number | null => (v === null ? null : v + d);
      s.nextArmAtMs = shift(s.nextArmAtMs);
      s.plannedSlotMs = shift(s.plannedSlotMs);
      s.lastReprovisionMs = shift(s.lastReprovisionMs);
      if (s.notBeforeMs > 0) s.notBeforeMs += d;
      if (s.inFlight) s.inFlight = { ...s.inFlight, sentAtMs: s.inFlight.sentAtMs + d };
      // The deadline is where the venue holds it: nearer now when venue time moved forward. Re-plan
      // so the next arm still leaves with `deadline - rearm_every` of horizon at the latest.
      if (s.phase === 'armed' && s.deadlineMs !== null && s.nextArmAtMs !== null && s.stopMode === null) {
        const byHorizon = latestPlannedRearmAtMs(s.deadlineMs, settings);
        if (byHorizon < s.nextArmAtMs) s.plannedSlotMs = s.nextArmAtMs = Math.max(nowMs, byHorizon);
      }
      break;
    }

    case 'rearm_due':
      // Only the regular re-arm: once an arm failed, the deadline-aware retry plan governs.
      if (s.phase === 'armed' && s.consecutiveFailures === 0 && s.inFlight === null && s.stopMode === null && s.nextArmAtMs !== null && s.nextArmAtMs > nowMs) {
        s.plannedSlotMs = s.nextArmAtMs = nowMs;
      }
      break;

    case 'bot':
      if (event.alive && s.silence !== null) {
        // Back: armed at its normal horizon at once (if the cancel has not fired, the orders stay).
        s.silence = null;
        if (s.stopMode === null) {
          s.phase = s.deadlineMs !== null && s.deadlineMs > nowMs ? 'armed' : 'unarmed';
          s.nextArmAtMs = nowMs;
          s.plannedSlotMs = nowMs;
        }
      } else if (!event.alive && s.silence === null && settings.onSilence !== undefined && s.stopMode === null) {
        s.silence = { sinceMs: nowMs, cancelAtMs: null };
        s.nextArmAtMs = settings.onSilence === 'cancel_soon' ? nowMs : null;
        s.plannedSlotMs = null;
      }
      break;

    case 'arm_sent':
      s.inFlight = { op: 'arm', route: event.route, sentAtMs: nowMs, ...(event.soon ? { soon: true } : {}) };
      s.nextArmAtMs = null;
      break;

    case 'clear_sent':
      s.inFlight = { op: 'clear', route: event.route, sentAtMs: nowMs };
      break;

    case 'arm_ok': {
      const soon = s.inFlight?.soon === true;
      s.inFlight = null;
      s.deadlineMs = event.deadlineMs;
      s.lastSuccessMs = nowMs;
      s.consecutiveFailures = 0;
      s.reprovisions = 0;
      s.nonceRetried = false;
      s.lastResult = { op: 'arm', result: 'ok', route: event.route, atMs: nowMs };
      if (s.stopMode === null && s.silence !== null) {
        // Silent: no plan. A cancel-soon arm set the time that cancels; a re-arm that was already
        // in flight only moved the deadline, and finishSilent brings it near again.
        if (soon) s.silence = { ...s.silence, cancelAtMs: event.deadlineMs };
        s.nextArmAtMs = soon ? null : nowMs;
        s.plannedSlotMs = null;
      } else if (s.stopMode === null) {
        s.phase = 'armed';
        // Keep the cadence slot (drift-corrected) while on time; when the arm went out late (the
        // budget queued it, e.g. every account starting at once), re-base on when it really went,
        // so the budget's spacing becomes the accounts' spread over the period instead of every
        // account planning the same instant forever.
        const slot = s.plannedSlotMs ?? nowMs;
        const sentAt = event.sentAtMs ?? slot; // unknown: assume it left on time
        const late = sentAt - slot > Math.min(RETRY.rebaseAfterLagMs, settings.rearmEveryMs / 10);
        // Never later than when the deadline the venue accepted falls to `deadline - rearm_every`
        // of horizon: if our venue-time estimate was off when the arm left (a clock step), the
        // accepted deadline is nearer than planned, and so is the next arm.
        const byHorizon = latestPlannedRearmAtMs(event.deadlineMs, settings);
        s.plannedSlotMs = Math.max(Math.min((late ? sentAt : slot) + settings.rearmEveryMs, byHorizon), nowMs);
        s.nextArmAtMs = s.plannedSlotMs;
      }
      break;
    }

    case 'arm_failed': {
      s.inFlight = null;
      s.consecutiveFailures += 1;
      const f = event.failure;
      const restFailedBefore = failedOnRest(s.lastResult);
      s.lastResult = failedResult('arm', f, event.route, nowMs);
      if (s.stopMode !== null) break;
      if (s.phase !== 'armed' || (s.deadlineMs !== null && s.deadlineMs <= nowMs)) s.phase = 'unarmed';
      planRetry(settings, s, event.route, f, nowMs, effects, restFailedBefore);
      break;
    }

    case 'clear_ok':
      s.inFlight = null;
      s.deadlineMs = null;
      s.lastResult = { op: 'clear', result: 'ok', route: event.route, atMs: nowMs };
      break;

    case 'clear_failed': {
      s.inFlight = null;
      const f = event.failure;
      s.lastResult = failedResult('clear', f, event.route, nowMs);
      // A refused clear (ineligible, unknown signer) will not succeed on retry; a transient one may,
      // after a short wait (a 429's retry_after at least).
      if (f.kind === 'rejected') s.clearAttempts = RETRY.maxClearAttempts;
      else {
        const waitMs = f.kind === 'rate_limited' ? f.retryAfterMs : RETRY.clearRetryMs * 2 ** Math.max(0, s.clearAttempts - 1);
        s.notBeforeMs = Math.max(s.notBeforeMs, nowMs + waitMs);
      }
      break;
    }

    case 'orders_observed':
      s.openOrders = event.count === null ? null : Math.max(0, Math.floor(event.count));
      // A silent bot's idle account whose orders appear (or whose count is unknown): the cancel-soon is due.
      if (s.silence !== null && s.silence.cancelAtMs === null && s.nextArmAtMs === null && s.openOrders !== 0 && settings.onSilence === 'cancel_soon') s.nextArmAtMs = nowMs;
      break;

    case 'reprovisioned':
      if (s.stopMode === null) {
        if (event.ok) {
          s.phase = s.deadlineMs !== null && s.deadlineMs > nowMs ? 'armed' : 'unarmed';
          s.nextArmAtMs = Math.max(nowMs, s.notBeforeMs);
        } else {
          s.nextArmAtMs = nowMs + RETRY.blockedMs;
        }
      }
      break;

    case 'stop':
      if (s.stopMode === null) {
        s.stopMode = event.mode ?? settings.onShutdown;
        s.phase = 'stopping';
        s.nextArmAtMs = null;
      }
      break;
  }

  return finish(settings, s, nowMs, effects);
}

function failedResult(op: 'arm' | 'clear', f: Failure, route: ArmRoute, atMs: number): LastResult {
  return {
    op,
    result: f.kind,
    reason: f.kind === 'rate_limited' ? 'rate_limited' : f.reason,
    message: f.kind === 'rate_limited' ? undefined : f.message,
    route,
    atMs,
  };
}

/** `r` is an arm that failed on REST: a REST failure now is the second in a row (the port kept the retry there). */
function failedOnRest(r: LastResult | null): boolean {
  return r !== null && r.op === 'arm' && r.result !== 'ok' && r.route === 'rest';
}

function planRetry(settings: SwitchSettings, s: SwitchState, route: ArmRoute, f: Failure, nowMs: number, effects: Effect[], restFailedBefore: boolean): void {
  const horizon = horizonMs(s, nowMs);
  // REST failed or refused for its quota (a 429), and the exchange endpoint is behind it: retry at
  // once. The port learned from this very arm that REST is failing or held, so the retry (which
  // names the planned route, with the other as its alternative) goes by the exchange endpoint
  // without waiting out REST's hold. Only once in a row: a retry the port still sent by REST
  // failed for something else than the route (a signing error), and retrying at once again would
  // be a hot loop.
  if (settings.path === 'rest_then_exchange' && route === 'rest' && f.kind !== 'rejected' && !restFailedBefore) {
    s.nextArmAtMs = nowMs;
    return;
  }

  if (f.kind === 'rate_limited') {
    s.notBeforeMs = Math.max(s.notBeforeMs, nowMs + f.retryAfterMs);
    s.nextArmAtMs = Math.max(s.notBeforeMs, nowMs + retryDelayMs(s.consecutiveFailures, horizon, settings.venue.minLeadMs));
    return;
  }

  if (f.kind === 'error') {
    s.nextArmAtMs = nowMs + retryDelayMs(s.consecutiveFailures, horizon, settings.venue.minLeadMs);
    return;
  }

  switch (f.reason) {
    case 'ineligible':
      s.phase = 'ineligible';
      s.nextArmAtMs = nowMs + RETRY.ineligibleMs;
      return;
    case 'unknown_signer':
      s.phase = 'blocked';
      if (s.reprovisions === 0 && (s.lastReprovisionMs === null || nowMs - s.lastReprovisionMs >= RETRY.reprovisionEveryMs)) {
        s.reprovisions += 1;
        s.lastReprovisionMs = nowMs;
        s.nextArmAtMs = null; // resumes on `reprovisioned`
        effects.push({ type: 'reprovision' });
      } else {
        s.nextArmAtMs = nowMs + RETRY.blockedMs;
      }
      return;
    case 'unfunded':
      s.phase = 'blocked';
      s.nextArmAtMs = nowMs + RETRY.blockedMs;
      return;
    case 'invalid_nonce':
    case 'expired':
      // The runner draws a fresh nonce for every request; one immediate retry, then backoff.
      if (!s.nonceRetried) {
        s.nonceRetried = true;
        s.nextArmAtMs = nowMs;
      } else {
        s.nextArmAtMs = nowMs + retryDelayMs(s.consecutiveFailures, horizon, settings.venue.minLeadMs);
      }
      return;
    case 'address_budget':
      s.nextArmAtMs = nowMs + settings.venue.addressBudgetExhaustedIntervalMs;
      return;
    case 'trigger_cap':
      // The day's 10 triggers are spent: the venue refuses arms until 00:00 UTC. The account is
      // unprotected (readiness says so); ask again every 5 minutes, not every second all day.
      s.phase = 'blocked';
      s.nextArmAtMs = nowMs + RETRY.ineligibleMs;
      return;
    case 'pending_agent_removal':
      s.nextArmAtMs = nowMs + settings.venue.pendingAgentRemovalMs + RETRY.pendingAgentRemovalExtraMs;
      return;
    case 'other':
    case 'invalid_request':
      s.nextArmAtMs = nowMs + Math.max(retryDelayMs(s.consecutiveFailures, horizon, settings.venue.minLeadMs), 1_000);
      return;
  }
}

/** Decides what to send now and when to wake up next, from the state after an event. */
function finish(settings: SwitchSettings, s: SwitchState, nowMs: number, effects: Effect[]): StepResult {
  // A deadline that passed while we believed it armed: the venue fired (or is about to).
  if (s.deadlineMs !== null && s.deadlineMs <= nowMs && s.inFlight === null) {
    effects.push({ type: 'lapsed', deadlineMs: s.deadlineMs, botSilent: s.silence !== null });
    // A silent bot's cancel fired: that was the point, nothing more to send until it is back.
    if (s.silence !== null && s.silence.cancelAtMs === null) s.silence = { ...s.silence, cancelAtMs: s.deadlineMs };
    s.deadlineMs = null;
    if (s.phase === 'armed') s.phase = 'unarmed';
    if (s.stopMode === null && wantsArmed(settings, s) && s.nextArmAtMs === null) s.nextArmAtMs = nowMs;
  }

  if (s.stopMode !== null) {
    return finishStopping(settings, s, nowMs, effects);
  }
  if (s.silence !== null) return finishSilent(settings, s, nowMs, effects);

  const want = wantsArmed(settings, s);
  if (!want) {
    // orders_open with no orders: stop re-arming and let the schedule lapse on its own (a clear
    // is reserved for stops and disarm), and look again when orders appear.
    if (settings.overBudget) s.phase = 'over_budget';
    else if (s.phase === 'armed' || s.phase === 'unarmed' || s.phase === 'starting' || s.phase === 'over_budget') s.phase = 'idle';
    s.nextArmAtMs = null;
  } else {
    if (s.phase === 'idle' || s.phase === 'over_budget' || (s.phase === 'starting' && s.nextArmAtMs === null)) {
      s.phase = s.deadlineMs !== null ? 'armed' : 'unarmed';
      s.nextArmAtMs = nowMs;
      s.plannedSlotMs = nowMs;
    }
    // A fresh plan never undercuts a 429 window.
    if (s.nextArmAtMs !== null) s.nextArmAtMs = Math.max(s.nextArmAtMs, s.notBeforeMs);
    if (s.inFlight === null && s.nextArmAtMs !== null && s.nextArmAtMs <= nowMs) {
      effects.push({ type: 'send_arm', ...routed(settings, leaveByVenueMs(settings, s, nowMs)), plannedSlotMs: s.plannedSlotMs });
      return { state: s, effects };
    }
  }

  const wake = nextWake(s, nowMs);
  if (wake !== null) effects.push({ type: 'wake_at', atMs: wake });
  return { state: s, effects };
}

/**
 * The bot is silent. `stop_rearming`: nothing is sent; the last deadline fires. `cancel_soon`: one
 * arm at the earliest time the venue accepts, unless the deadline is already nearer than that; its
 * failures are retried by the ordinary plan (planRetry) until one is accepted. Either way the
 * deadline is watched, so its passing is reported (a fired cancel, not a lapse).
 */
function finishSilent(settings: SwitchSettings, s: SwitchState, nowMs: number, effects: Effect[]): StepResult {
  let silence = s.silence!;
  s.phase = 'bot_silent';
  if (silence.cancelAtMs === null && s.inFlight === null && s.deadlineMs !== null && s.deadlineMs <= nowMs + cancelSoonLeadMs(0, settings.venue.minLeadMs)) {
    silence = s.silence = { ...silence, cancelAtMs: s.deadlineMs };
  }
  // `orders_open` with no open orders (a known 0, not an unknown count): nothing to cancel, and a
  // cancel would spend one of the day's triggers for nothing. Orders that appear make it needed.
  const nothingToCancel = settings.armWhen === 'orders_open' && s.openOrders === 0;
  if (settings.onSilence !== 'cancel_soon' || silence.cancelAtMs !== null || nothingToCancel) {
    s.nextArmAtMs = null;
  } else if (s.nextArmAtMs !== null) {
    // (null: waiting for a re-provisioning, which plans the next attempt)
    s.nextArmAtMs = Math.max(s.nextArmAtMs, s.notBeforeMs);
    if (s.inFlight === null && s.nextArmAtMs <= nowMs) {
      // With the alternative like a re-arm: a cancel-soon arm must not wait on a failing route either.
      effects.push({ type: 'send_arm', ...routed(settings, leaveByVenueMs(settings, s, nowMs)), plannedSlotMs: null, soonLeadMs: cancelSoonLeadMs(s.consecutiveFailures, settings.venue.minLeadMs) });
      return { state: s, effects };
    }
  }
  const wake = nextWake(s, nowMs);
  if (wake !== null) effects.push({ type: 'wake_at', atMs: wake });
  return { state: s, effects };
}

function finishStopping(settings: SwitchSettings, s: SwitchState, nowMs: number, effects: Effect[]): StepResult {
  s.nextArmAtMs = null;
  if (s.phase === 'stopped') return { state: s, effects };
  if (s.inFlight !== null) {
    // Wait: the clear (if any) must be the last request.
    return { state: s, effects };
  }
  const needsClear =
    s.stopMode === 'clear' &&
    s.clearAttempts < RETRY.maxClearAttempts &&
    !(s.lastResult?.op === 'clear' && s.lastResult.result === 'ok');
  if (needsClear) {
    if (nowMs < s.notBeforeMs) {
      effects.push({ type: 'wake_at', atMs: s.notBeforeMs });
      return { state: s, effects };
    }
    s.clearAttempts += 1;
    // A clear protects no deadline: whichever route takes it soonest (a failing REST never does).
    effects.push({ type: 'send_clear', ...routed(settings, nowMs) });
    return { state: s, effects };
  }
  s.phase = 'stopped';
  effects.push({ type: 'stopped' });
  return { state: s, effects };
}

function nextWake(s: SwitchState, nowMs: number): number | null {
  let wake: number | null = s.inFlight === null ? s.nextArmAtMs : null;
  // Wake at the deadline too, to notice a lapse even when no arm is planned before it.
  if (s.deadlineMs !== null && s.deadlineMs > nowMs) wake = wake === null ? s.deadlineMs : Math.min(wake, s.deadlineMs);
  return wake;
}
