/**
 * The outcome book (spec 4.4) from the exchange's resting orders.
 *
 * An outcome's two tokens trade against one collateral, so buying side 1 at p is the same
 * liquidity as selling side 0 at 1 - p. Each side's view therefore shows every resting order:
 * natively (bid if buy, ask if sell) when posted on that side, mirrored (buy becomes ask, sell
 * becomes bid, price 1 - p) when posted on the other; `source_side` says which. Prices and sizes
 * go through exact decimals: a level's size is the exact sum of its orders.
 */
import { createHash } from 'node:crypto';
import type { OutcomeBookLevel, OutcomeBookOrder, OutcomeBookSide } from '../../venue/types.js';
import type { RestingOrder } from '../types.js';
import { addFixed, cmpFixed, type Fixed, formatFixed, parseFixed, subFixed } from '../../venue/decimal.js';

const ONE: Fixed = { coef: 1n, scale: 0 };

interface LevelAcc {
  price: Fixed;
  size: Fixed;
  orders: Array<{ order: OutcomeBookOrder; priority: number; oid: string }>;
}

function addTo(levels: Map<string, LevelAcc>, price: Fixed, o: RestingOrder, size: Fixed): void {
  // Keyed by canonical text so that "0.5" and "0.50" land on one level.
  const key = formatFixed(price);
  let level = levels.get(key);
  if (!level) {
    level = { price, size: { coef: 0n, scale: 0 }, orders: [] };
    levels.set(key, level);
  }
  level.size = addFixed(level.size, size);
  level.orders.push({
    order: { oid: o.oid, address: o.address, size: formatFixed(size), priority: o.priority, source_side: o.side },
    priority: o.priority,
    oid: o.oid,
  });
}

function finish(levels: Map<string, LevelAcc>, descending: boolean, depth: number): OutcomeBookLevel[] {
  const sorted = [...levels.values()].sort((a, b) => (descending ? cmpFixed(b.price, a.price) : cmpFixed(a.price, b.price)));
  const kept = depth > 0 ? sorted.slice(0, depth) : sorted;
  return kept.map((l) => ({
    price: formatFixed(l.price),
    size: formatFixed(l.size),
    // Time priority inside a level: lower rests earlier; oid breaks ties deterministically.
    orders: l.orders
      .sort((a, b) => a.priority - b.priority || (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0))
      .map((x) => x.order),
  }));
}

/** Both side views, ordered side 0 then 1; `depth` levels per bids and per asks, 0 for all. */
export function aggregateBook(orders: readonly RestingOrder[], depth: number): OutcomeBookSide[] {
  const parsed = orders.map((o) => ({ o, price: parseFixed(o.price), size: parseFixed(o.size) }));
  return ([0, 1] as const).map((view) => {
    const bids = new Map<string, LevelAcc>();
    const asks = new Map<string, LevelAcc>();
    for (const { o, price, size } of parsed) {
      if (o.side === view) addTo(o.direction === 'buy' ? bids : asks, price, o, size);
      else addTo(o.direction === 'buy' ? asks : bids, subFixed(ONE, price), o, size);
    }
    return { side: view, bids: finish(bids, true, depth), asks: finish(asks, false, depth) };
  });
}

/** Addresses in the given levels, in order of first appearance. */
export function bookAddresses(sides: readonly OutcomeBookSide[]): string[] {
  const seen = new Set<string>();
  for (const s of sides) {
    for (const level of [...(s.bids ?? []), ...(s.asks ?? [])]) {
      for (const o of level.orders ?? []) if (o.address !== undefined) seen.add(o.address);
    }
  }
  return [...seen];
}

/**
 * A revision that changes whenever the resting set changes and stays put otherwise, without the
 * handler keeping state: a digest of the canonical order list.
 */
export function bookRevision(outcomeId: string, orders: readonly RestingOrder[]): string {
  const canon = [...orders]
    .map((o) => [o.oid, o.address.toLowerCase(), o.side, o.direction, formatFixed(parseFixed(o.price)), formatFixed(parseFixed(o.size)), o.priority])
    .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
  return createHash('sha256').update(JSON.stringify([outcomeId, canon])).digest('hex').slice(0, 16);
}
