import { describe, expect, it } from 'vitest';
import { budgetMoved, DEMAND_TTL_MS, MIN_SHARE, PLAN_HORIZON_S, demandRate, demandShare, formatDemand, parseDemandTable, type DemandEntry } from './shared-demand.js';

const NOW = 1_700_000_000_000;
const other = (armsPerSecond: number, backlog = 0, ageMs = 500, id = 'b'): DemandEntry => ({ id, atMs: NOW - ageMs, armsPerSecond, backlog });
const share = (own: { armsPerSecond: number; backlog: number } | undefined, others: DemandEntry[], settled = true, fallbackShare = 0.5) =>
  demandShare({ own, others, nowMs: NOW, fallbackShare, settled });

describe('demandShare', () => {
  it('two equal shards: half each', () => {
    expect(share({ armsPerSecond: 9, backlog: 0 }, [other(9)])).toBeCloseTo(0.5, 12);
  });

  it('a shard with a backlog gets more while the other is steady, and the two add up to 1', () => {
    // 9 arms/s and 180 approvals + 180 first arms to send, against a steady 9 arms/s.
    const busy = { armsPerSecond: 9, backlog: 360 };
    const steady = { armsPerSecond: 9, backlog: 0 };
    const a = share(busy, [other(steady.armsPerSecond, steady.backlog)]);
    const b = share(steady, [other(busy.armsPerSecond, busy.backlog)]);
    expect(a).toBeCloseTo((9 + 360 / PLAN_HORIZON_S) / (18 + 360 / PLAN_HORIZON_S), 12); // 27 / 36
    expect(a).toBeCloseTo(0.75, 12);
    expect(a + b).toBeCloseTo(1, 12);
  });

  it('3:1 demands: 0.75 and 0.25', () => {
    expect(share({ armsPerSecond: 3, backlog: 0 }, [other(1)])).toBeCloseTo(0.75, 12);
    expect(share({ armsPerSecond: 1, backlog: 0 }, [other(3)])).toBeCloseTo(0.25, 12);
  });

  it('entries older than the TTL are gone instances, ignored', () => {
    const stale = other(9, 0, DEMAND_TTL_MS + 1, 'gone');
    const fresh = other(9, 0, DEMAND_TTL_MS, 'alive');
    expect(share({ armsPerSecond: 9, backlog: 0 }, [stale])).toBe(1);
    expect(share({ armsPerSecond: 9, backlog: 0 }, [stale, fresh])).toBeCloseTo(0.5, 12);
  });

  it('a shard alone: the whole budget', () => {
    expect(share({ armsPerSecond: 4, backlog: 10 }, [])).toBe(1);
  });

  it('zero total demand, or none of its own known yet: the fallback share', () => {
    expect(share({ armsPerSecond: 0, backlog: 0 }, [other(0)], true, 0.4)).toBe(0.4);
    expect(share({ armsPerSecond: 0, backlog: 0 }, [], true, 0.4)).toBe(0.4);
    expect(share(undefined, [other(9)], true, 0.4)).toBe(0.4);
  });

  it('no demand of its own while others have some: a small share, never 0', () => {
    expect(share({ armsPerSecond: 0, backlog: 0 }, [other(9)])).toBe(MIN_SHARE);
  });

  it('not settled (first read since joining): at most the fallback share', () => {
    expect(share({ armsPerSecond: 9, backlog: 0 }, [], false, 0.5)).toBe(0.5);
    expect(share({ armsPerSecond: 1, backlog: 0 }, [other(3)], false, 0.5)).toBeCloseTo(0.25, 12);
  });

  it('a malformed demand counts as none', () => {
    expect(demandRate({ armsPerSecond: Number.NaN, backlog: -5 })).toBe(0);
    expect(demandRate({ armsPerSecond: Number.POSITIVE_INFINITY, backlog: 40 })).toBe(40 / PLAN_HORIZON_S);
  });
});

describe('the demand table on the wire', () => {
  it('round trip: the script stamps Redis time before the published value', () => {
    const reply = [String(NOW), 'a', `${NOW - 10} ${formatDemand({ armsPerSecond: 9.5, backlog: 12 })}`, 'b', `${NOW - 20} 3 0`];
    expect(parseDemandTable(reply)).toEqual({
      nowMs: NOW,
      entries: [
        { id: 'a', atMs: NOW - 10, armsPerSecond: 9.5, backlog: 12 },
        { id: 'b', atMs: NOW - 20, armsPerSecond: 3, backlog: 0 },
      ],
    });
  });

  it('malformed entries are left out, a malformed reply is no table', () => {
    expect(parseDemandTable([String(NOW), 'a', 'garbage', 'b', `${NOW} 1`, 'c', `${NOW} 1 2`])?.entries.map((e) => e.id)).toEqual(['c']);
    expect(parseDemandTable('nope')).toBeUndefined();
    expect(parseDemandTable([])).toBeUndefined();
    expect(parseDemandTable(['x'])).toBeUndefined();
  });

  it('formats a bad demand as zeros', () => {
    expect(formatDemand({ armsPerSecond: Number.NaN, backlog: -1 })).toBe('0 0');
  });
});

describe('budgetMoved', () => {
  it('none applied yet, or a move of more than 2% of the applied one', () => {
    expect(budgetMoved(undefined, 0.5)).toBe(true);
    expect(budgetMoved(0.5, 0.509)).toBe(false);
    expect(budgetMoved(0.5, 0.491)).toBe(false);
    expect(budgetMoved(0.5, 0.5101)).toBe(true);
    expect(budgetMoved(0.5, 0.4899)).toBe(true);
  });
});
