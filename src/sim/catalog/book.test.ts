import { describe, expect, it } from 'vitest';
import type { RestingOrder } from '../types.js';
import { aggregateBook, bookAddresses, bookRevision } from './book.js';

const A = '0x1111111111111111111111111111111111111111';
const B = '0x2222222222222222222222222222222222222222';
const C = '0x3333333333333333333333333333333333333333';

function order(oid: string, address: string, side: 0 | 1, direction: 'buy' | 'sell', price: string, size: string, priority: number): RestingOrder {
  return { oid, address, side, direction, price, size, priority };
}

describe('aggregateBook', () => {
  it('sums a level exactly and keeps time priority inside it', () => {
    const sides = aggregateBook(
      [
        order('o2', B, 0, 'buy', '0.50', '0.2', 7),
        order('o1', A, 0, 'buy', '0.5', '0.1', 3),
        order('o3', C, 0, 'buy', '0.49', '5', 1),
      ],
      10,
    );
    const bids = sides[0]?.bids ?? [];
    // "0.5" and "0.50" are one level; 0.1 + 0.2 is 0.3 exactly, not 0.30000000000000004.
    expect(bids.map((l) => [l.price, l.size])).toEqual([
      ['0.5', '0.3'],
      ['0.49', '5'],
    ]);
    expect(bids[0]?.orders?.map((o) => o.oid)).toEqual(['o1', 'o2']);
    expect(bids[0]?.orders?.[0]).toEqual({ oid: 'o1', address: A, size: '0.1', priority: 3, source_side: 0 });
  });

  it('orders bids descending and asks ascending', () => {
    const sides = aggregateBook(
      [
        order('b1', A, 0, 'buy', '0.3', '1', 1),
        order('b2', A, 0, 'buy', '0.41', '1', 2),
        order('b3', A, 0, 'buy', '0.4', '1', 3),
        order('a1', B, 0, 'sell', '0.7', '1', 4),
        order('a2', B, 0, 'sell', '0.61', '1', 5),
        order('a3', B, 0, 'sell', '0.65', '1', 6),
      ],
      0,
    );
    expect(sides[0]?.bids?.map((l) => l.price)).toEqual(['0.41', '0.4', '0.3']);
    expect(sides[0]?.asks?.map((l) => l.price)).toEqual(['0.61', '0.65', '0.7']);
  });

  it('mirrors the other side at 1 - price with source_side', () => {
    const sides = aggregateBook([order('x', A, 1, 'buy', '0.45', '12.5', 1), order('y', B, 0, 'sell', '0.55', '2.5', 2)], 10);
    expect(sides.map((s) => s.side)).toEqual([0, 1]);
    // Side 0: a buy of side 1 at 0.45 is an ask of side 0 at 0.55, sharing the native ask's level.
    expect(sides[0]?.asks).toEqual([
      {
        price: '0.55',
        size: '15',
        orders: [
          { oid: 'x', address: A, size: '12.5', priority: 1, source_side: 1 },
          { oid: 'y', address: B, size: '2.5', priority: 2, source_side: 0 },
        ],
      },
    ]);
    expect(sides[0]?.bids).toEqual([]);
    // Side 1 sees the same liquidity as bids at 0.45.
    expect(sides[1]?.bids?.map((l) => [l.price, l.size])).toEqual([['0.45', '15']]);
    expect(sides[1]?.asks).toEqual([]);
  });

  it('limits levels per bids and per asks; 0 means all', () => {
    const orders: RestingOrder[] = [];
    for (let i = 1; i <= 15; i++) {
      orders.push(order(`b${i}`, A, 0, 'buy', `0.${String(i).padStart(2, '0')}`, '1', i));
      orders.push(order(`a${i}`, B, 0, 'sell', `0.${50 + i}`, '1', 100 + i));
    }
    const three = aggregateBook(orders, 3);
    expect(three[0]?.bids?.map((l) => l.price)).toEqual(['0.15', '0.14', '0.13']);
    expect(three[0]?.asks?.map((l) => l.price)).toEqual(['0.51', '0.52', '0.53']);
    expect(three[1]?.bids?.length).toBe(3);
    const all = aggregateBook(orders, 0);
    expect(all[0]?.bids?.length).toBe(15);
    expect(all[0]?.asks?.length).toBe(15);
  });

  it('always returns both sides, even for an empty book', () => {
    expect(aggregateBook([], 10)).toEqual([
      { side: 0, bids: [], asks: [] },
      { side: 1, bids: [], asks: [] },
    ]);
  });
});

describe('bookAddresses and bookRevision', () => {
  it('lists each address once, in order of appearance', () => {
    const sides = aggregateBook([order('1', B, 0, 'buy', '0.4', '1', 1), order('2', A, 0, 'buy', '0.5', '1', 2), order('3', B, 0, 'sell', '0.6', '1', 3)], 0);
    expect(bookAddresses(sides)).toEqual([A, B]);
  });

  it('changes with the resting set and not with its order', () => {
    const o1 = order('1', A, 0, 'buy', '0.4', '1', 1);
    const o2 = order('2', B, 1, 'sell', '0.3', '2', 2);
    const r = bookRevision('out_x', [o1, o2]);
    expect(bookRevision('out_x', [o2, o1])).toBe(r);
    expect(bookRevision('out_x', [o1])).not.toBe(r);
    expect(bookRevision('out_x', [o1, { ...o2, size: '1.5' }])).not.toBe(r);
    expect(bookRevision('out_y', [o1, o2])).not.toBe(r);
  });
});
