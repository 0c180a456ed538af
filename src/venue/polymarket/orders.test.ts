import { describe, expect, it } from 'vitest';
import { decodeOpenOrdersPage } from './orders.js';

/** The API reference's example order (docs.polymarket.com/api-reference/trade/get-user-orders). */
const DOC_ORDER = {
  id: '0xabcdef1234567890abcdef1234567890abcdef12',
  status: 'ORDER_STATUS_LIVE',
  owner: 'f4f247b7-4ac7-ff29-a152-04fda0a8755a',
  maker_address: '0x1234567890123456789012345678901234567890',
  market: '0x0000000000000000000000000000000000000000000000000000000000000001',
  asset_id: '0xabc123def456...',
  side: 'BUY',
  original_size: '100000000',
  size_matched: '0',
  price: '0.5',
  outcome: 'YES',
  expiration: '1735689600',
  order_type: 'GTC',
  associate_trades: [],
  created_at: 1700000000,
};

describe('decodeOpenOrdersPage', () => {
  it("keeps the documented page's orders, only the fields the keeper reads, and the cursor", () => {
    const page = decodeOpenOrdersPage({ limit: 100, next_cursor: 'MTAw', count: 1, data: [DOC_ORDER] });
    expect(page).toEqual({
      ok: true,
      nextCursor: 'MTAw',
      skippedWithoutId: 0,
      orders: [{ id: DOC_ORDER.id, status: 'ORDER_STATUS_LIVE', market: DOC_ORDER.market, asset_id: DOC_ORDER.asset_id, side: 'BUY', price: '0.5', original_size: '100000000', size_matched: '0' }],
    });
  });

  it('null, missing or mistyped fields are absent; unknown statuses and sides are kept verbatim', () => {
    const page = decodeOpenOrdersPage({
      next_cursor: 'LTE=',
      data: [
        { id: 'a', status: null, market: 12, side: 'SIDEWAYS', price: 0.5, original_size: '1', extra: { deep: [1] } },
        { id: 'b', status: 'ORDER_STATUS_SOMETHING_NEW' },
      ],
    });
    expect(page).toEqual({
      ok: true,
      nextCursor: 'LTE=',
      skippedWithoutId: 0,
      orders: [
        { id: 'a', side: 'SIDEWAYS', original_size: '1' },
        { id: 'b', status: 'ORDER_STATUS_SOMETHING_NEW' },
      ],
    });
  });

  it('an entry without a usable id is skipped and counted, the rest kept', () => {
    const page = decodeOpenOrdersPage({ next_cursor: 'LTE=', data: [{ status: 'LIVE' }, { id: null }, { id: '' }, { id: 7 }, null, 'x', [], { id: 'ok' }] });
    expect(page).toEqual({ ok: true, nextCursor: 'LTE=', skippedWithoutId: 7, orders: [{ id: 'ok' }] });
  });

  it('a missing, null, empty or mistyped cursor is undefined (the caller reads the last page)', () => {
    for (const cursor of [undefined, null, '', 5]) {
      const page = decodeOpenOrdersPage({ data: [], ...(cursor === undefined ? {} : { next_cursor: cursor }) });
      expect(page).toEqual({ ok: true, orders: [], nextCursor: undefined, skippedWithoutId: 0 });
    }
  });

  it('a bare array is the orders with no cursor', () => {
    expect(decodeOpenOrdersPage([{ id: 'z' }])).toEqual({ ok: true, orders: [{ id: 'z' }], nextCursor: undefined, skippedWithoutId: 0 });
  });

  it('a page whose data is not an array, or that is not an object, is refused (it cannot say "no orders")', () => {
    expect(decodeOpenOrdersPage({ next_cursor: 'LTE=' })).toEqual({ ok: false, problem: 'data: not an array' });
    expect(decodeOpenOrdersPage({ data: null })).toEqual({ ok: false, problem: 'data: not an array' });
    expect(decodeOpenOrdersPage({ data: { id: 'a' } })).toEqual({ ok: false, problem: 'data: not an array' });
    expect(decodeOpenOrdersPage(null)).toEqual({ ok: false, problem: 'the answer is not an object' });
    expect(decodeOpenOrdersPage('orders')).toEqual({ ok: false, problem: 'the answer is not an object' });
  });
});
