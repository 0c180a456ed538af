import { BUDGET_UTILISATION, type RouteBudgets } from './cadence.js';

/**
 * The cold start as one plan over the window it spends (the figures are in DESIGN.md section 7).
 * N accounts each need an approval and a first arm, and every armed account comes due again a
 * period later; on a venue whose one window counts every signed action, all three compete. Pure
 * rules: while provisioning, armed accounts run at their longest safe period; under the just-in-time
 * order a first arm waits for `firstArmGateMs` (one sent earlier comes due again before the last
 * account is armed, taking a slot from one still waiting), then goes before any approval. The order
 * is the one with the fewest unprotected account-seconds among those that arm the last account
 * within COLD_START_SLACK times the ideal (chooseColdStartOrder).
 */

export interface ColdStartInput {
  /** Approvals (approveAgent, approveBuilderFee) still to send. */
  approvalsLeft: number;
  /** First arms still to send (approved or not). */
  firstArmsLeft: number;
  /** Requests per second the plan may use on the window provisioning and arms share. */
  usablePerSecond: number;
  /** Re-arms per second the accounts already armed need at their longest safe periods. */
  armedPerSecond: number;
  /** The shortest longest-safe period among the accounts: the soonest a first arm comes due again. */
  periodMs: number;
}

/** Below this share of the window left to provisioning the projection is infinite: the gate opens. */
const MIN_PROVISION_SHARE = 0.02;

/** When the cold start will end if provisioning gets what the armed accounts leave (ms from now). */
export function coldStartRemainingMs(c: ColdStartInput): number {
  const left = c.approvalsLeft + c.firstArmsLeft;
  if (left <= 0) return 0;
  const room = c.usablePerSecond - c.armedPerSecond;
  if (!(room > c.usablePerSecond * MIN_PROVISION_SHARE)) return Number.POSITIVE_INFINITY;
  return (left * 1000) / room;
}

/**
 * The earliest time (same clock as `nowMs`) a first arm should be sent: the projected end of the
 * cold start minus the period after which it comes due again. At or before `nowMs`: send now.
 */
export function firstArmGateMs(nowMs: number, c: ColdStartInput): number {
  if (c.approvalsLeft <= 0 || c.firstArmsLeft <= 0) return nowMs;
  const remaining = coldStartRemainingMs(c);
  if (!Number.isFinite(remaining)) return nowMs;
  return nowMs + remaining - c.periodMs;
}

// ---- which order: the one that leaves the fewest unprotected account-seconds ----

export type ColdStartOrder = 'approvals_first' | 'interleaved' | 'just_in_time';

/** The cold start may take this much longer than the ideal (every request once) to protect accounts sooner. */
export const COLD_START_SLACK = 1.5;

/**
 * Whether a first arm takes a slot an approval needs. Approvals spend `exchange` and `global`; an
 * exchange arm always contends, a REST arm only when `global` is narrower than both paces together.
 * `windowPerSecond`: the shared window's usable rate (0: none). On the bench's venue (REST arms and
 * approvals 100/s each, global 400/s) they never contend; holding first arms for the approvals there
 * left the first of 10,000 accounts unarmed for 104 s.
 */
export function provisioningContention(limits: RouteBudgets, armsOnExchange: boolean): { contends: boolean; windowPerSecond: number; approvalsPerSecond: number } {
  const global = limits.global ?? Number.POSITIVE_INFINITY;
  const approvals = Math.min(limits.exchange ?? Number.POSITIVE_INFINITY, global);
  if (!Number.isFinite(approvals)) return { contends: false, windowPerSecond: 0, approvalsPerSecond: approvals };
  if (armsOnExchange) return { contends: true, windowPerSecond: approvals * BUDGET_UTILISATION, approvalsPerSecond: approvals };
  const arms = Math.min(limits.rest ?? Number.POSITIVE_INFINITY, global);
  const contends = Number.isFinite(global) && global < approvals + Math.min(approvals, arms);
  return { contends, windowPerSecond: contends ? global * BUDGET_UTILISATION : 0, approvalsPerSecond: approvals };
}

/**
 * Not contended: interleaved (each account armed as soon as it is approved). Contended: of the
 * orders that arm the last account within COLD_START_SLACK times the ideal on the slot model, the
 * one with the fewest unprotected account-seconds; none: just in time (it arms the last at the ideal).
 */
export function chooseColdStartOrder(c: { contends: boolean; accounts: number; perSecond: number; periodMs: number }): ColdStartOrder {
  if (!c.contends || c.accounts <= 0 || !(c.perSecond > 0)) return 'interleaved';
  const idealSeconds = (2 * c.accounts) / c.perSecond;
  const within = (['interleaved', 'just_in_time'] as const)
    .map((order) => simulateColdStart(order, c.accounts, c.perSecond, c.periodMs))
    .filter((o) => o.lastArmedSeconds <= COLD_START_SLACK * idealSeconds)
    .sort((x, y) => x.unprotectedAccountSeconds - y.unprotectedAccountSeconds);
  return within[0]?.order ?? 'just_in_time';
}

export interface ColdStartOutcome {
  order: ColdStartOrder;
  /** When the last account got its first arm (s from the start). */
  lastArmedSeconds: number;
  /** Sum over accounts of the time until its first arm: the account-seconds left unprotected. */
  unprotectedAccountSeconds: number;
}

/** The slot model: each slot of the window goes to a due re-arm, then (as the order allows) a first arm, then an approval. */
export function simulateColdStart(order: ColdStartOrder, accounts: number, perSecond: number, periodMs: number): ColdStartOutcome {
  const slotMs = 1000 / perSecond;
  let unapproved = accounts;
  let approvedWaiting = 0;
  let armed = 0;
  let sumArmedAtMs = 0;
  let lastArmedMs = 0;
  // Due times of the armed accounts, in arm order (each re-arm moves one to the back).
  const due: number[] = [];
  let head = 0;
  // Past this the armed accounts' re-arms fill the window and the rest can never be armed.
  const maxSlots = 20 * accounts + 1000;
  let slot = 0;
  for (; armed < accounts && slot < maxSlots; slot++) {
    const t = slot * slotMs;
    if (head < due.length && due[head]! <= t) {
      head++;
      due.push(t + periodMs);
      continue;
    }
    const gateOpen =
      order === 'interleaved' ||
      (order === 'approvals_first' && unapproved === 0) ||
      (order === 'just_in_time' &&
        t >= firstArmGateMs(t, { approvalsLeft: unapproved, firstArmsLeft: accounts - armed, usablePerSecond: perSecond, armedPerSecond: (armed * 1000) / periodMs, periodMs }));
    if (approvedWaiting > 0 && (gateOpen || unapproved === 0)) {
      approvedWaiting--;
      armed++;
      sumArmedAtMs += t + slotMs;
      lastArmedMs = t + slotMs;
      due.push(t + periodMs);
    } else if (unapproved > 0) {
      unapproved--;
      approvedWaiting++;
    }
  }
  if (armed < accounts) return { order, lastArmedSeconds: Number.POSITIVE_INFINITY, unprotectedAccountSeconds: Number.POSITIVE_INFINITY };
  return { order, lastArmedSeconds: lastArmedMs / 1000, unprotectedAccountSeconds: sumArmedAtMs / 1000 };
}
