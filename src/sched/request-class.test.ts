import { describe, expect, it } from 'vitest';
import { orderKey, queueOf, type RequestClass } from './request-class.js';

describe('orderKey', () => {
  it('arms by deadline (none to protect first), then approvals, then prepares; reads all alike', () => {
    const inOrder: RequestClass[] = [{ kind: 'arm' }, { kind: 'arm', deadlineVenueMs: 1_700_000_000_000 }, { kind: 'arm', deadlineVenueMs: 1_700_000_060_000 }, { kind: 'approval' }, { kind: 'prepare' }];
    const keys = inOrder.map(orderKey);
    expect([...keys].sort((a, b) => a - b)).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(orderKey({ kind: 'read' })).toBe(orderKey({ kind: 'read' }));
  });

  it('reads wait in their own queue; every other class in the arm queue', () => {
    expect(queueOf({ kind: 'read' })).toBe('read');
    for (const c of [{ kind: 'arm' }, { kind: 'approval' }, { kind: 'prepare' }] as const) expect(queueOf(c)).toBe('arm');
  });
});
