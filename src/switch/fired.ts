import type { OpenOrder } from '../venue/types.js';

/**
 * What a fired scheduled cancel cancelled, from the keeper's orders reads (pure).
 *
 * The keeper decides that a cancel fired from its own armed deadline passing (switch-machine.ts
 * `lapsed`), never from orders vanishing: a HIP-4 outcome that settles (every 15 minutes on
 * recurring markets) takes its resting orders with it, and no scheduled cancel fired, no trigger
 * counted (ASSUMED.settlementIsNoTrigger). What the cancel cancelled is then the orders open at the
 * last read taken **before the deadline** that are gone at the read after it, by order id: orders
 * gone earlier (a settlement, a fill, the bot's own cancel) left an earlier read already; a read that
 * landed after the deadline (a poll between the deadline and its detection) is not the "before";
 * orders placed since are not subtracted from it; a primary and its dual are one order
 * (ASSUMED.outcomeDualSharesOid). An outcome that settles inside the last orders period before the
 * deadline is the one case these reads cannot tell apart from the cancel: its orders are counted.
 */
export interface OrdersSnapshot {
  /** Distinct orders (a primary and its dual counted once). */
  count: number;
  /** Their ids (`venue_order_id`, the venue's `oid`), when every order had one; else null. */
  ids: readonly string[] | null;
  /** Venue time at which the read completed. */
  venueAtMs: number;
}

export function ordersSnapshot(orders: readonly OpenOrder[], count: number, venueAtMs: number): OrdersSnapshot {
  const ids = orders.map((o) => o.venue_order_id);
  const complete = ids.length === count && ids.every((id): id is string => typeof id === 'string' && id !== '');
  return { count, ids: complete ? (ids as string[]) : null, venueAtMs };
}

/** The latest of the reads that completed before the deadline (the last one, or the one before it). */
export function lastReadBefore(deadlineMs: number, last: OrdersSnapshot | undefined, previous: OrdersSnapshot | undefined): OrdersSnapshot | undefined {
  if (last && last.venueAtMs < deadlineMs) return last;
  if (previous && previous.venueAtMs < deadlineMs) return previous;
  return undefined;
}

/**
 * Orders the cancel took: open `before` the deadline and gone `after` it. Null when no read before
 * the deadline is known. `after` unknown (the read failed): every order of `before` counted.
 */
export function cancelledOrders(before: OrdersSnapshot | undefined, after: readonly OpenOrder[] | undefined): number | null {
  if (!before) return null;
  if (!after) return before.count;
  if (before.ids) {
    const still = new Set(after.map((o) => o.venue_order_id).filter((id): id is string => id !== undefined));
    return before.ids.filter((id) => !still.has(id)).length;
  }
  return Math.max(0, before.count - after.length);
}
