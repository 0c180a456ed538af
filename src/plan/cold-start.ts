import { BUDGET_UTILISATION, type RouteBudgets } from './cadence.js';

/**
 * The cold start as one plan over the window it spends (DESIGN.md section 7, "The cold start").
 *
 * A cold start is a transient: N accounts each need an approval (approveAgent, when no stored agent
 * is valid) and a first arm, and every account already armed comes due again one period after its
 * arm. On a venue whose one window counts every signed action, all three compete for the same
 * slots. Two rules follow, both pure:
 *
 * 1. While accounts are still being provisioned, every armed account runs at its longest safe
 *    period (`maxPeriodMs`): each re-arm spent during the cold start is a slot provisioning loses.
 * 2. Under the just-in-time order, first arms are held back until `firstArmGateMs`: the projected end of the cold start minus
 *    the shortest longest-safe period. A first arm sent earlier than that comes due again before
 *    the last account is armed, and that re-arm takes a slot from every account still waiting.
 *    From the gate on, a first arm goes before any approval (an approved account is one request
 *    from protection). Approvals fill every slot before the gate.
 *
 * Which order is chosen per venue (chooseColdStartOrder): the one that leaves the fewest
 * unprotected account-seconds among those that arm the last account within COLD_START_SLACK times
 * the ideal. When approvals and first arms do not share a window (provisioningContention: the
 * schedule-cancel route has a quota of its own and the global window carries both paces), a first
 * arm costs an approval nothing: interleaved, each account armed as soon as it is approved. On one
 * window they compete, and `simulateColdStart` compares the orders on the same slot model (the unit
 * tests pin it): approvals-first arms the last account as early as possible but leaves every account
 * unprotected for the whole approval phase; interleaving protects the first accounts at once but its
 * early arms come due inside the cold start, so the last accounts wait longest (at 180 accounts,
 * B = 20/s, deadline 20 s: 25 s against 18 s, past the slack); just in time arms the last account
 * at the ideal with fewer account-seconds than approvals-first.
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

/**
 * Below this share of the window, provisioning is starved by the armed accounts' re-arms: the
 * projection would run to infinity, so the gate simply opens (each first arm then competes by
 * urgency).
 */
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
 * Whether a first arm takes a slot an approval needs: only when both spend one window too narrow to
 * carry the approvals at their own pace and the arms that follow them. Approvals spend `exchange`
 * and `global`; an arm spends its route's scope and `global`. An arm by the exchange endpoint always
 * takes an approval's slot; a REST arm only when `global` is narrower than both paces together.
 * `windowPerSecond`: that shared window's usable rate (what the slot model runs on); 0 when none.
 * `approvalsPerSecond`: the approvals' own pace (the narrower of `exchange` and `global`).
 *
 * On a venue with a schedule-cancel quota of its own (the bench's: 100/s of REST arms, approvals
 * on an exchange quota of the same rate, global 400/s) they never contend, and holding first arms
 * back for the approvals only left every account unprotected for the whole approval phase: at
 * 10,000 accounts the first was armed 104 s after the start.
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
 * The order of a cold start of `accounts` (each needing an approval and a first arm) on a window
 * of `perSecond` both contend for (provisioningContention), armed accounts due every `periodMs`:
 * of the orders that arm the last account within COLD_START_SLACK times the ideal, the one that
 * leaves the fewest unprotected account-seconds on the slot model (simulateColdStart); when none
 * does, just in time (it arms the last account at the ideal). Not contended: interleaved, each
 * account armed as soon as it is approved (its arm takes no approval's slot).
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

/**
 * A slot model of the cold start: `accounts` each need an approval and a first arm, on one window
 * of `perSecond` requests; an armed account comes due every `periodMs`. Each slot goes to a due
 * re-arm first, then (when the order allows) a first arm, then an approval.
 */
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
