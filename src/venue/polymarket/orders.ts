/**
 * One page of `GET /data/orders`, read tolerantly: `{limit, next_cursor, count, data: [order...]}`
 * (docs.polymarket.com/api-reference/trade/get-user-orders). Of each order only what the keeper
 * looks at is kept; a field that is missing, null or not a string is absent, an unknown status or
 * side is kept verbatim. An entry without an id cannot be told apart from another, so it is skipped
 * and counted, never a failure of the page: the keeper's question is whether orders rest, and the
 * count keeps the answer honest.
 */

export interface OpenOrder {
  id: string;
  /** `ORDER_STATUS_LIVE`, `LIVE`, ...: kept verbatim, unknown values too. */
  status?: string;
  /** The market's condition id. */
  market?: string;
  /** The outcome token id. */
  asset_id?: string;
  /** `BUY` or `SELL`, verbatim. */
  side?: string;
  /** Decimal texts, verbatim. */
  price?: string;
  original_size?: string;
  size_matched?: string;
}

export const OPEN_ORDER_FIELDS = ['status', 'market', 'asset_id', 'side', 'price', 'original_size', 'size_matched'] as const;

export type OpenOrdersPage =
  | {
      ok: true;
      orders: OpenOrder[];
      /** Undefined when the page had none (missing, null, not a string): read as the last page. */
      nextCursor: string | undefined;
      /** Entries dropped: not an object, or without a non-empty string id. */
      skippedWithoutId: number;
    }
  | { ok: false; problem: string };

/** Reads a parsed 2xx body. A page whose `data` is not an array is refused: it cannot say "no orders". */
export function decodeOpenOrdersPage(json: unknown): OpenOrdersPage {
  // A bare array: the orders with no paging around them.
  const page = Array.isArray(json) ? { data: json } : json;
  if (page === null || typeof page !== 'object') return { ok: false, problem: 'the answer is not an object' };
  const data = (page as Record<string, unknown>)['data'];
  if (!Array.isArray(data)) return { ok: false, problem: 'data: not an array' };
  const orders: OpenOrder[] = [];
  let skippedWithoutId = 0;
  for (const entry of data as unknown[]) {
    const order = decodeOrder(entry);
    if (order === undefined) skippedWithoutId++;
    else orders.push(order);
  }
  const cursor = (page as Record<string, unknown>)['next_cursor'];
  return { ok: true, orders, nextCursor: typeof cursor === 'string' && cursor !== '' ? cursor : undefined, skippedWithoutId };
}

function decodeOrder(entry: unknown): OpenOrder | undefined {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
  const e = entry as Record<string, unknown>;
  const id = e['id'];
  if (typeof id !== 'string' || id === '') return undefined;
  const order: OpenOrder = { id };
  for (const field of OPEN_ORDER_FIELDS) {
    const v = e[field];
    if (typeof v === 'string') order[field] = v;
  }
  return order;
}
