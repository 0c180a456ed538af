/**
 * The horizon's safety arithmetic, pure and in one place: every number and formula that decides how
 * near the deadline a re-arm may go. The config rules, the budget plan, check-config, the switch,
 * readiness and the fleet's handover all call these functions instead of re-deriving them.
 *
 * One accepted arm, on venue time; the horizon is `deadline - now` and falls 1 ms per ms. D =
 * deadline_seconds, P = the period (rearm_every_seconds, or the plan's), M = min_horizon_seconds;
 * the figures under the line are the defaults (D 60 s, P 15 s, M 20 s, request_timeout_ms 5000).
 *
 *   horizon:  D               D-P           M+reserve    M+lag    M                 6 s     5 s    0
 *   time:     |---------------|------ ... --|------------|--------|---------- ... ---|-------|------|
 *             arm accepted    planned       latest       longest  readiness fails    |       |      deadline:
 *                             re-arm        re-arm       safe     below it; the      |       |      the venue
 *                             (the period)  (switch)     period   fleet hands over   |       |      cancels
 *                                                        (plan)   only at >= M       |       venue's minimum
 *                                                                                    |       lead (5 s)
 *                                                                     cancel-soon lead (5 s + 1 s)
 *   defaults: 60              45            25           21       20                 6       5      0
 *   (time s)  0               15            35           39       40                 54      55     60
 *
 *   rule (config, check-config):  D - P >= M + RETRIES_BEFORE_MIN_HORIZON x retrySlotSeconds(timeout)
 *                                 (45 >= 20 + 2 x 6): two failed attempts still leave M.
 *   lag reserve (plan):           the longest safe period is D - M - lagAllowanceMs (1 s, or two arm-budget
 *                                 slots when longer); giving it up (tier `reserve`) allows D - M; below
 *                                 that only shortHorizonFloorMs, the venue's minimum lead (tier `short_horizon`).
 *   retry reserve (switch):       latest re-arm = D - M - min(5 s, (D - M - P) / 2), never before P.
 *   deadline itself:              D >= minDeadlineSeconds = the venue's 5 s minimum lead + 5 s margin.
 *
 * Some of these reserves look alike and differ (the rule's two retry slots, the plan's lag, the
 * switch's half-margin): each is kept as the behaviour it always had, and named for what it is.
 * The venue's minimum lead is the account's venue's fact (VenueSwitchFacts.minLeadMs, from the
 * port): every function that needs it takes it as `minLeadMs`.
 */

/** An account's switch timing, in ms: what the plan and the switch reason about. */
export interface HorizonInputMs {
  deadlineMs: number;
  rearmEveryMs: number;
  minHorizonMs: number;
}

/** The same timing, in the config's seconds: what the rules and check-config reason about. */
export interface HorizonInputSeconds {
  deadlineSeconds: number;
  rearmEverySeconds: number;
  minHorizonSeconds: number;
}

// ---- the deadline ----

// The venue's minimum lead (`minLeadMs`) is the account's venue's fact (venue/switch-facts.ts,
// VenueSwitchFacts.minLeadMs): a parameter here, never imported.

/**
 * Kept on top of the venue's 5 s minimum lead when checking `deadline_seconds`: the lead is
 * measured on the venue's clock after the request arrives, so skew estimation error and request
 * latency eat into it. With the margin, a deadline can still be re-armed after a slow first try.
 */
export const DEADLINE_SAFETY_MARGIN_SECONDS = 5;
/** The shortest `deadline_seconds` on a venue whose minimum lead is `minLeadMs`. */
export function minDeadlineSeconds(minLeadMs: number): number {
  return minLeadMs / 1000 + DEADLINE_SAFETY_MARGIN_SECONDS;
}

// ---- the rule's retry reserve (config rules, check-config) ----

/** The retries that `rearm_every_seconds` must leave room for before `min_horizon_seconds`. */
export const RETRIES_BEFORE_MIN_HORIZON = 2;

/**
 * How long one failed arm attempt can take, in seconds: the request timeout, plus 1 s for the
 * scheduler's backoff and the signer. The re-arm rule is
 * `deadline - rearm_every >= min_horizon + RETRIES_BEFORE_MIN_HORIZON * retrySlotSeconds(timeout)`.
 */
export function retrySlotSeconds(requestTimeoutMs: number): number {
  return requestTimeoutMs / 1000 + 1;
}

/** The horizon just before a planned re-arm, on time: `deadline - rearm_every`. */
export function preRearmHorizonSeconds(sw: Pick<HorizonInputSeconds, 'deadlineSeconds' | 'rearmEverySeconds'>): number {
  return sw.deadlineSeconds - sw.rearmEverySeconds;
}

/** The least pre-re-arm horizon the rule accepts: min_horizon plus `retries` retry slots (RETRIES_BEFORE_MIN_HORIZON by default). */
export function minPreRearmHorizonSeconds(minHorizonSeconds: number, requestTimeoutMs: number, retries = RETRIES_BEFORE_MIN_HORIZON): number {
  return minHorizonSeconds + retries * retrySlotSeconds(requestTimeoutMs);
}

/** The re-arm rule (config rules): the pre-re-arm horizon leaves room for the retries above min_horizon. */
export function rearmLeavesRetries(sw: HorizonInputSeconds, requestTimeoutMs: number, retries = RETRIES_BEFORE_MIN_HORIZON): boolean {
  return !(preRearmHorizonSeconds(sw) < minPreRearmHorizonSeconds(sw.minHorizonSeconds, requestTimeoutMs, retries));
}

// ---- a heartbeat venue (VenueSwitchFacts.kind `heartbeat`: Polymarket's CLOB) ----

/**
 * On a heartbeat venue every formula above holds with D = the venue's timeout (each accepted beat
 * moves the deadline to the beat plus the timeout; the keeper cannot ask for more), P = the
 * venue's `heartbeat_every_seconds` and M = its `min_horizon_seconds`. The timeout is short (10 s),
 * so the rule leaves room for one failed beat, not two; with the defaults (D 10, P 5, M 2, a
 * 1,000 ms request timeout) a beat that fails still leaves 5 - 2 = 1 x 2 s for its retry:
 *
 *   horizon:  10 (beat accepted)   5 (next beat)   3.5 (latest re-beat: M + half the margin)   2 (M)   0 (venue cancels)
 *
 * A keeper silent for longer than D cancels every order of the account (docs/polymarket.md).
 */
export const HEARTBEAT_RETRIES_BEFORE_MIN_HORIZON = 1;

/** A heartbeat account's timing as the switch and the plan take it: D is the venue's timeout. */
export function heartbeatHorizonSeconds(timeoutMs: number, everySeconds: number, minHorizonSeconds: number): HorizonInputSeconds {
  return { deadlineSeconds: timeoutMs / 1000, rearmEverySeconds: everySeconds, minHorizonSeconds };
}

/** How many whole retry slots fit between the pre-re-arm horizon and min_horizon (check-config's warning). */
export function retriesThatFit(sw: HorizonInputSeconds, requestTimeoutMs: number): number {
  const room = sw.deadlineSeconds - sw.rearmEverySeconds - sw.minHorizonSeconds;
  return Math.max(0, Math.floor(room / retrySlotSeconds(requestTimeoutMs)));
}

// ---- the plan's lag reserve (budget plan: keeper and check-config) ----

/**
 * Send lag the longest period still leaves room for (p99 lag is far below this). It includes the
 * daemon's timer slack (time/clock.ts TIMER_SLACK_MS, a tenth of it at most: cadence.test.ts).
 */
export const LAG_ALLOWANCE_MS = 1_000;

/**
 * The send lag a plan at `usablePerSecond` leaves room for: LAG_ALLOWANCE_MS, or two slots of the
 * arm budget when longer (a re-arm may wait its turn, and one more behind a first arm). At 0.26
 * arms/s, with 1 s allowed, the horizon fell to 19.9 s against a 20 s minimum.
 */
export function lagAllowanceMs(usablePerSecond: number): number {
  return usablePerSecond > 0 ? Math.max(LAG_ALLOWANCE_MS, 2000 / usablePerSecond) : LAG_ALLOWANCE_MS;
}

/**
 * The longest period the plan may stretch an account to and still keep min_horizon plus the send
 * lag: an arm sets the horizon to `deadline`, which falls to `deadline - period` by the next arm.
 * Never below the configured period.
 */
export function longestSafePeriodMs(a: HorizonInputMs, lagMs = LAG_ALLOWANCE_MS): number {
  return Math.max(a.rearmEveryMs, a.deadlineMs - a.minHorizonMs - lagMs);
}

/** Tier `reserve`: the lag reserve given up, periods up to `deadline - min_horizon`. */
export function longestPeriodWithoutReserveMs(a: HorizonInputMs): number {
  return Math.max(a.rearmEveryMs, a.deadlineMs - a.minHorizonMs);
}

/**
 * How close to the deadline an account's next arm may slip once the budget cannot keep every
 * min_horizon (tier `short_horizon`): the venue's own minimum lead for a new deadline, 5 s.
 */
export function shortHorizonFloorMs(minLeadMs: number): number {
  return minLeadMs;
}

/** Tier `short_horizon`: periods up to `deadline - shortHorizonFloorMs(minLeadMs)`. */
export function longestShortHorizonPeriodMs(a: Pick<HorizonInputMs, 'deadlineMs' | 'rearmEveryMs'>, minLeadMs: number): number {
  return Math.max(a.rearmEveryMs, a.deadlineMs - shortHorizonFloorMs(minLeadMs));
}

// ---- the minimum horizon: the plan's verdict, readiness, the fleet's handover ----

/**
 * Whether a horizon keeps the minimum: the plan's verdict (`deadline - period`), readiness (the
 * horizon now; below it `/readyz` fails) and the fleet's handover (an account counts as settled by
 * its new owner only from here).
 */
export function keepsMinHorizon(horizonMs: number, minHorizonMs: number): boolean {
  return horizonMs >= minHorizonMs;
}

/** The fleet's step: an instance renews its lease and re-reads the membership every lease / 3. */
export function fleetStepSeconds(leaseSeconds: number): number {
  return leaseSeconds / 3;
}

/**
 * The horizon left when every owner of an account is lost at once: the last arm was a period ago,
 * the lease must run out, and the next step must pass before a new owner arms it.
 */
export function horizonAfterOwnersLostSeconds(sw: Pick<HorizonInputSeconds, 'deadlineSeconds' | 'rearmEverySeconds'>, leaseSeconds: number): number {
  return sw.deadlineSeconds - sw.rearmEverySeconds - leaseSeconds - fleetStepSeconds(leaseSeconds);
}

// ---- the switch's retry reserve (switch/switch-machine.ts, account-runner.ts) ----

/** Upper bound of the retry reserve kept before the latest re-arm time. */
export const REARM_RESERVE_MAX_MS = 5_000;

/** The retry reserve kept before the latest re-arm time: half the cadence's margin (deadline - min_horizon - period), at most 5 s. */
export function rearmReserveMs(s: HorizonInputMs): number {
  return Math.min(REARM_RESERVE_MAX_MS, Math.max(0, s.deadlineMs - s.minHorizonMs - s.rearmEveryMs) / 2);
}

/**
 * How long after an accepted arm left the next one must leave at the latest, on the monotonic clock:
 * when the horizon it set would fall to `min_horizon` plus the retry reserve. On time it is never
 * earlier than the planned period.
 */
export function latestRearmAfterMs(s: HorizonInputMs): number {
  // A period the budget stretched past the margin (short horizons, see planProtection) is the
  // plan: forcing arms sooner would spend budget the plan does not have.
  return Math.max(s.rearmEveryMs, s.deadlineMs - s.minHorizonMs - rearmReserveMs(s));
}

/**
 * The venue time an arm must leave by for a deadline at `deadlineAtMs` so that the horizon keeps
 * `min_horizon` plus the retry reserve: past it, the other route is the safer one. Unlike
 * latestRearmAfterMs, not held at the period (the switch takes the later of it and now).
 */
export function leaveByAtMs(deadlineAtMs: number, s: HorizonInputMs): number {
  return deadlineAtMs - s.minHorizonMs - rearmReserveMs(s);
}

/**
 * The latest venue time the switch plans the next re-arm for a deadline at `deadlineAtMs`: when the
 * horizon falls to `deadline - period`, what the period promised (after a clock step, or an arm
 * whose deadline landed nearer than planned).
 */
export function latestPlannedRearmAtMs(deadlineAtMs: number, s: Pick<HorizonInputMs, 'deadlineMs' | 'rearmEveryMs'>): number {
  return deadlineAtMs - (s.deadlineMs - s.rearmEveryMs);
}

/** The part of a horizon retries may use: up to the venue's minimum lead, after which no new deadline is accepted. */
export function retryUsableHorizonMs(horizonMs: number, minLeadMs: number): number {
  return horizonMs - minLeadMs;
}

// ---- a silent bot's cancel-soon arm (liveness/liveness.ts, switch-machine.ts) ----

/**
 * The keeper's margin on top of the venue's minimum lead for a cancel-soon arm: the lead is measured
 * on the venue's clock after the request arrives, so latency and the clock estimate's error eat into
 * it. 1 s keeps the scheduled time within 2 s of the minimum (docs/liveness.md); each refused
 * cancel-soon attempt in a row adds another second (`cancelSoonLeadMs`).
 */
export const CANCEL_SOON_MARGIN_MS = 1_000;
/** The lead of a first cancel-soon arm: the venue's minimum plus our margin. */
export function cancelSoonBaseLeadMs(minLeadMs: number): number {
  return minLeadMs + CANCEL_SOON_MARGIN_MS;
}

/** The lead of a cancel-soon arm: the venue's minimum plus our margin, a second more per refusal in a row (at most 5). */
export function cancelSoonLeadMs(consecutiveFailures: number, minLeadMs: number): number {
  return cancelSoonBaseLeadMs(minLeadMs) + Math.min(5, consecutiveFailures) * 1_000;
}
