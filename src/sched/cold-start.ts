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
 * 2. First arms are held back until `firstArmGateMs`: the projected end of the cold start minus
 *    the shortest longest-safe period. A first arm sent earlier than that comes due again before
 *    the last account is armed, and that re-arm takes a slot from every account still waiting.
 *    From the gate on, a first arm goes before any approval (an approved account is one request
 *    from protection). Approvals fill every slot before the gate.
 *
 * Why this order ("just in time") and not the two obvious ones: `simulateColdStart` computes all
 * three on the same slot model, and the unit tests pin the comparison. Approvals-first arms the
 * last account as early as possible but leaves every account unprotected for the whole approval
 * phase; interleaving (approve, then arm, each account in turn) protects the first accounts at
 * once but its early arms come due inside the cold start, so the last accounts wait longest. Just
 * in time arms the last account as early as approvals-first (the ideal: every request once) and
 * leaves fewer unprotected account-seconds than it; interleaving leaves fewer still, but only by
 * making the last account wait past a whole deadline (at 180 accounts, B = 20/s, deadline 20 s:
 * 25 s against 18 s). We choose the order that arms every account within the ideal, and among
 * those the one that leaves the fewest unprotected account-seconds.
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
 * urgency, as it did before this plan).
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

// ---- the comparison behind the choice (tests and docs) ----

export type ColdStartOrder = 'approvals_first' | 'interleaved' | 'just_in_time';

export interface ColdStartOutcome {
  order: ColdStartOrder;
  /** When the last account got its first arm (s from the start). */
  lastArmedSeconds: number;
  /** Sum over accounts of the time until its first arm: the account-seconds left unprotected. */
  unprotectedAccountSeconds: number;
  /** Re-arms that had to be sent before the last account was armed. */
  rearmsInside: number;
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
  let rearmsInside = 0;
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
      rearmsInside++;
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
  if (armed < accounts) return { order, lastArmedSeconds: Number.POSITIVE_INFINITY, unprotectedAccountSeconds: Number.POSITIVE_INFINITY, rearmsInside };
  return { order, lastArmedSeconds: lastArmedMs / 1000, unprotectedAccountSeconds: sumArmedAtMs / 1000, rearmsInside };
}
