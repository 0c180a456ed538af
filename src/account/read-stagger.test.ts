import { describe, expect, it } from 'vitest';
import { firstReads } from './read-stagger.js';
import type { KeeperAccountSpec, KeeperOptions } from './keeper-types.js';

const spec = (armWhen: 'always' | 'orders_open'): KeeperAccountSpec => ({ switch: { armWhen } }) as unknown as KeeperAccountSpec;
const options = (n: number, source?: 'service' | 'venue' | 'service_then_venue'): KeeperOptions =>
  ({ accounts: Array.from({ length: n }, () => ({})), watch: { ordersEveryMs: 30_000, positionsEveryMs: 60_000, ...(source ? { source } : {}) } }) as unknown as KeeperOptions;

describe('first reads', () => {
  it('spread the accounts evenly over the period: the k-th at k n-ths of it, wrapping after a reload', () => {
    expect([0, 1, 2, 3].map((k) => firstReads(k, spec('always'), options(4), {}).phase)).toEqual([0, 0.25, 0.5, 0.75]);
    expect(firstReads(5, spec('always'), options(4), {}).phase).toBe(0.25);
  });

  it('orders at once for an account that arms on its orders; service reads need not wait for the cold start', () => {
    expect(firstReads(3, spec('orders_open'), options(4), { exchange: { limit: 1_200, windowMs: 60_000 } })).toEqual({ afterMs: 0, phase: 0.75, ordersNow: true });
  });

  it('reads from the venue alone begin after the cold start has had its share of the exchange budget', () => {
    const r = firstReads(0, spec('always'), options(100, 'venue'), { exchange: { limit: 1_200, windowMs: 60_000 } });
    expect(r.afterMs).toBeGreaterThan(0);
    expect(firstReads(0, spec('always'), options(100, 'service_then_venue'), { exchange: { limit: 1_200, windowMs: 60_000 } }).afterMs).toBe(0);
  });
});
