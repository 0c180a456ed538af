/**
 * The merged Yes/No book of a HIP-4 outcome, as the venue's order listings may show it: a resting
 * order on one side is also the opposite order on the other side (a buy of Yes at p is a sell of No
 * at 1 - p), and a listing can return that dual order separately from the primary. The dual is the
 * same order: it carries the primary's `oid` **(assumed: the venue publishes no field that marks a
 * dual; the shared oid is what identifies the pair, and the keeper counts one order per oid,
 * src/venue/assumptions.ts `outcomeDualSharesOid`)**.
 *
 * `withDualOrders` rewrites an `/info` open-orders answer (`openOrders`, `frontendOpenOrders`) so
 * that every outcome order (coin `#<encoding>`) is followed by its dual; other rows pass unchanged.
 */
import { decSub, isDecimal } from '../../venue/decimal.js';
import { outcomeCoin, parseOutcomeCoin } from './asset-id.js';

/** The dual of one venue-format order row, or undefined when the row is no outcome order. */
export function dualOrder(row: Record<string, unknown>): Record<string, unknown> | undefined {
  const coin = typeof row.coin === 'string' ? parseOutcomeCoin(row.coin) : undefined;
  if (!coin || (row.side !== 'A' && row.side !== 'B') || typeof row.limitPx !== 'string' || !isDecimal(row.limitPx)) return undefined;
  return {
    ...row,
    coin: outcomeCoin(coin.outcome, coin.side === 0 ? 1 : 0),
    side: row.side === 'B' ? 'A' : 'B',
    limitPx: decSub('1', row.limitPx),
  };
}

/** An open-orders answer with each outcome order's dual listed right after it. */
export function withDualOrders(body: unknown): unknown {
  if (!Array.isArray(body)) return body;
  return body.flatMap((row: unknown) => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return [row];
    const dual = dualOrder(row as Record<string, unknown>);
    return dual ? [row, dual] : [row];
  });
}
