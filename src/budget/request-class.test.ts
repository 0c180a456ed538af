import { describe, expect, it } from 'vitest';
import { VENUE_FACTS } from '../venue/facts.js';
import { BYPASS_MARGIN_MS, DEFAULT_READ_MAX_WAIT_MS, NO_DEADLINE_TOKEN_CAP_MS, orderKey, queueOf, tokenWait, type RequestClass } from './request-class.js';

describe('orderKey', () => {
  it('arms by deadline (none to protect first), then approvals, then prepares; reads all alike', () => {
    const inOrder: RequestClass[] = [{ kind: 'arm' }, { kind: 'arm', deadlineVenueMs: 1_700_000_000_000 }, { kind: 'arm', deadlineVenueMs: 1_700_000_060_000 }, { kind: 'approval' }, { kind: 'prepare' }];
    const keys = inOrder.map(orderKey);
    expect([...keys].sort((a, b) => a - b)).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(orderKey({ kind: 'read' })).toBe(orderKey({ kind: 'read' }));
  });

  it('a cancel-soon arm is due when it was queued: the place of a re-arm whose deadline is that time, ahead of later ones', () => {
    const soon: RequestClass = { kind: 'arm', urgency: 'cancel_soon', queuedVenueMs: 1_700_000_000_000 };
    expect(orderKey(soon)).toBe(orderKey({ kind: 'arm', deadlineVenueMs: 1_700_000_000_000 }));
    expect(orderKey(soon)).toBeGreaterThan(orderKey({ kind: 'arm' }));
    expect(orderKey(soon)).toBeLessThan(orderKey({ kind: 'arm', deadlineVenueMs: 1_700_000_000_001 }));
    expect(orderKey(soon)).toBeLessThan(orderKey({ kind: 'approval' }));
  });

  it('reads wait in their own queue; every other class in the arm queue', () => {
    expect(queueOf({ kind: 'read' })).toBe('read');
    for (const c of [{ kind: 'arm' }, { kind: 'arm', urgency: 'cancel_soon', queuedVenueMs: 1 }, { kind: 'approval' }, { kind: 'prepare' }] as const) expect(queueOf(c)).toBe('arm');
  });
});

const NOW = 1_700_000_000_000;
const LEAD = VENUE_FACTS.scheduleCancelMinLeadMs;

describe('tokenWait', () => {
  it('an armed account: waits until its deadline less the minimum lead and the margin, then goes', () => {
    const deadline = NOW + 15_000;
    expect(tokenWait({ cls: { kind: 'arm', deadlineVenueMs: deadline }, minLeadMs: LEAD, venueNowMs: NOW })).toEqual({
      waitMs: 15_000 - VENUE_FACTS.scheduleCancelMinLeadMs - BYPASS_MARGIN_MS,
      onTimeout: 'send',
    });
  });

  it('a deadline already inside the lead (or passed): goes at once if no token is there', () => {
    expect(tokenWait({ cls: { kind: 'arm', deadlineVenueMs: NOW + 6_000 }, minLeadMs: LEAD, venueNowMs: NOW })).toEqual({ waitMs: 0, onTimeout: 'send' });
    expect(tokenWait({ cls: { kind: 'arm', deadlineVenueMs: NOW - 1_000 }, minLeadMs: LEAD, venueNowMs: NOW })).toEqual({ waitMs: 0, onTimeout: 'send' });
  });

  it('a cancel-soon arm, due already: goes at once if no token is there, wherever its queue time lies', () => {
    for (const queuedVenueMs of [NOW, NOW - 1_000, NOW + 20_000]) {
      expect(tokenWait({ cls: { kind: 'arm', urgency: 'cancel_soon', queuedVenueMs }, minLeadMs: LEAD, venueNowMs: NOW })).toEqual({ waitMs: 0, onTimeout: 'send' });
    }
  });

  it('no deadline to protect (first arm, approval, resolve): waits up to the cap, then shed', () => {
    for (const cls of [{ kind: 'arm' }, { kind: 'arm', deadlineVenueMs: 0 }, { kind: 'approval' }, { kind: 'prepare' }] as const) {
      expect(tokenWait({ cls, minLeadMs: LEAD, venueNowMs: NOW })).toEqual({ waitMs: NO_DEADLINE_TOKEN_CAP_MS, onTimeout: 'shed' });
    }
  });

  it('a read: its max wait, then shed; never sent without its token', () => {
    expect(tokenWait({ cls: { kind: 'read' }, minLeadMs: LEAD, venueNowMs: NOW, readMaxWaitMs: 30_000 })).toEqual({ waitMs: 30_000, onTimeout: 'shed' });
    expect(tokenWait({ cls: { kind: 'read' }, minLeadMs: LEAD, venueNowMs: NOW })).toEqual({ waitMs: DEFAULT_READ_MAX_WAIT_MS, onTimeout: 'shed' });
  });
});