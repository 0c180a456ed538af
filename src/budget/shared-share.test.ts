import { describe, expect, it } from 'vitest';
import { bucketWindow, budgetMoved, budgetShare, DEMAND_PUBLISH_PERIOD_MS, DEMAND_TTL_MS, demandRate, demandShare, formatDemand, MIN_SHARE, modeStep, parseDemandTable, PLAN_HORIZON_S, shareOf, sharedChunk, sharedChunks, sharedReservoir, viewFresh, windowAtRate, type BudgetMode, type DemandEntry, type DemandView, type SharedReservoir, type ShareState } from './shared-share.js';
import { sharedMaxInSpan } from './test-support.js';

const NOW = 1_700_000_000_000;
const other = (armsPerSecond: number, backlog = 0, ageMs = 500, id = 'b'): DemandEntry => ({ id, atMs: NOW - ageMs, armsPerSecond, backlog });
const share = (own: { armsPerSecond: number; backlog: number } | undefined, others: DemandEntry[], settled = true, fallbackShare = 0.5) =>
  demandShare({ own, others, nowMs: NOW, fallbackShare, settled });

const at = (mode: BudgetMode, stopped = false) => ({ mode, stopped });

describe('modeStep', () => {
  it('ready: the shared budget, from the fallback (connecting included); nothing when already shared', () => {
    expect(modeStep(at('local_fallback'), { kind: 'ready' })).toEqual({ to: { mode: 'shared', reason: 'redis answers' } });
    expect(modeStep(at('shared'), { kind: 'ready' })).toEqual({});
  });

  it('a failure while shared: the fallback with its reason, and a resume scheduled', () => {
    expect(modeStep(at('shared'), { kind: 'failed', reason: 'redis connection closed' })).toEqual({
      to: { mode: 'local_fallback', reason: 'redis connection closed' },
      retryResume: true,
    });
  });

  it('a failure on the fallback changes nothing and schedules nothing: one fallback, one retry', () => {
    expect(modeStep(at('local_fallback'), { kind: 'failed', reason: 'redis error' })).toEqual({});
  });

  it('a resume due: shared again if the connection is up, else another retry', () => {
    expect(modeStep(at('local_fallback'), { kind: 'resume_due', connectionReady: true })).toEqual({ to: { mode: 'shared', reason: 'redis answers' } });
    expect(modeStep(at('local_fallback'), { kind: 'resume_due', connectionReady: false })).toEqual({ retryResume: true });
    // Shared again by a `ready` in between: nothing to do.
    expect(modeStep(at('shared'), { kind: 'resume_due', connectionReady: true })).toEqual({});
  });

  it('stopped: no event changes anything', () => {
    for (const mode of ['shared', 'local_fallback'] as const) {
      expect(modeStep(at(mode, true), { kind: 'ready' })).toEqual({});
      expect(modeStep(at(mode, true), { kind: 'failed', reason: 'redis error' })).toEqual({});
      expect(modeStep(at(mode, true), { kind: 'resume_due', connectionReady: true })).toEqual({});
      expect(modeStep(at(mode, true), { kind: 'resume_due', connectionReady: false })).toEqual({});
    }
  });
});

const MONO = 5_000_000;
const view = (others: DemandEntry[], readAtMonoMs = MONO): DemandView => ({ redisNowMs: NOW, others, readAtMonoMs });
const state = (over: Partial<ShareState> = {}): ShareState => ({
  mode: 'shared',
  stopped: false,
  fallbackShare: 0.5,
  own: { armsPerSecond: 3, backlog: 0 },
  view: view([other(1)]),
  firstReadRedisMs: NOW - DEMAND_PUBLISH_PERIOD_MS,
  ...over,
});

describe('viewFresh', () => {
  it('fresh up to the TTL after the read, on the monotonic clock; stale after', () => {
    expect(viewFresh(view([]), MONO + DEMAND_TTL_MS)).toBe(true);
    expect(viewFresh(view([]), MONO + DEMAND_TTL_MS + 1)).toBe(false);
  });
});

describe('budgetShare', () => {
  it('shared, settled, fresh: its demand over the total', () => {
    expect(budgetShare(state(), MONO + 1_000)).toBeCloseTo(0.75, 12);
  });

  it('the fallback share while not shared, stopped, with no view or a stale one', () => {
    expect(budgetShare(state({ mode: 'local_fallback' }), MONO)).toBe(0.5);
    expect(budgetShare(state({ stopped: true }), MONO)).toBe(0.5);
    expect(budgetShare(state({ view: undefined }), MONO)).toBe(0.5);
    expect(budgetShare(state(), MONO + DEMAND_TTL_MS + 1)).toBe(0.5);
  });

  it('no demand of its own yet: the fallback share', () => {
    expect(budgetShare(state({ own: undefined }), MONO)).toBe(0.5);
  });

  it('not settled (first read since it joined less than a period ago): at most the fallback share', () => {
    expect(budgetShare(state({ firstReadRedisMs: NOW - DEMAND_PUBLISH_PERIOD_MS + 1 }), MONO)).toBe(0.5);
    expect(budgetShare(state({ firstReadRedisMs: undefined }), MONO)).toBe(0.5);
    expect(budgetShare(state({ own: { armsPerSecond: 1, backlog: 0 }, view: view([other(3)]), firstReadRedisMs: NOW }), MONO)).toBeCloseTo(0.25, 12);
  });
});

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


const rate = (w: { limit: number; windowMs: number }): number => (w.limit * 1000) / w.windowMs;

/**
 * The clustered bucket saturated by jobs of `chunk` tokens, as Bottleneck's Redis script keeps it:
 * each interval the increase up to the maximum, then every job that fits. The share of the
 * increases let out.
 */
function letOut(r: SharedReservoir, chunk: number, intervals = 20_000): number {
  let reservoir = r.reservoir;
  let taken = 0;
  for (let i = 0; i < intervals; i++) {
    reservoir = Math.min(reservoir + r.reservoirIncreaseAmount, r.reservoirIncreaseMaximum);
    while (reservoir >= chunk) {
      reservoir -= chunk;
      taken += chunk;
    }
  }
  return (taken - r.reservoir) / (intervals * r.reservoirIncreaseAmount);
}

describe('shared reservoir windows', () => {
  it('a share keeps the rate exact where rounding the limit alone lost a request per window', () => {
    // 10 per 10 s shared by two: 0.5/s each, not 4 per 10 s (0.4/s).
    const half = shareOf({ limit: 10, windowMs: 10_000 }, 0.5);
    expect(rate(half)).toBeCloseTo(0.5, 9);
    expect(half.windowMs).toBeLessThanOrEqual(10_000);
    // 3.5 per 10 s: 3 per 8.57 s, never more than 3 in any span shorter than that.
    expect(shareOf({ limit: 7, windowMs: 10_000 }, 0.5)).toEqual({ limit: 3, windowMs: (3 * 1000) / 0.35 });
    expect(windowAtRate(0.01, 5_000)).toEqual({ limit: 1, windowMs: 5_000 });
  });

  it('the bucket as a window: at most what the bucket lets out, never the whole venue window', () => {
    const spec = { limit: 100, windowMs: 5_000 };
    const w = bucketWindow(spec, 150);
    expect(rate(w)).toBeLessThan(20);
    expect(rate(w)).toBeGreaterThan(18);
    expect(sharedMaxInSpan(sharedReservoir(spec, 150), 5_000)).toBeLessThanOrEqual(100);
  });

  it('heavy requests go in jobs no larger than leaves room for a whole increase: nothing of the rate is lost', () => {
    const venue = sharedReservoir({ limit: 1_200, windowMs: 60_000 }, 150);
    expect(venue.reservoirIncreaseMaximum).toBe(4);
    expect(venue.reservoirIncreaseAmount).toBeCloseTo(2.98, 2);
    expect(sharedChunk(venue)).toBe(1); // 4 - 2.98
    expect(letOut(venue, 1)).toBeGreaterThan(0.999);
    expect(letOut(venue, 2)).toBeLessThan(0.9); // the cap clips what a waiting pair leaves
    expect(letOut(venue, 4)).toBeLessThan(0.7); // a job of the whole bucket
    // An increase just under a whole number leaves room for jobs of 2, not 3.
    const odd = sharedReservoir({ limit: 2_010, windowMs: 60_000 }, 150);
    expect(sharedChunk(odd)).toBe(2); // 7 - 4.995
    expect(letOut(odd, 2)).toBeGreaterThan(0.999);
    expect(letOut(odd, 3)).toBeLessThan(0.95);
    for (const spec of [
      { limit: 40, windowMs: 2_000 },
      { limit: 120, windowMs: 6_000 },
      { limit: 100, windowMs: 5_000 },
      { limit: 50, windowMs: 10_000 },
    ]) {
      const r = sharedReservoir(spec, 150);
      expect(sharedChunk(r)).toBeGreaterThanOrEqual(1);
      expect(sharedChunk(r) + r.reservoirIncreaseAmount).toBeLessThanOrEqual(r.reservoirIncreaseMaximum);
      expect(letOut(r, sharedChunk(r))).toBeGreaterThan(0.999);
    }
    expect(sharedChunks(60, 1)).toHaveLength(60);
    expect(sharedChunks(5, 2)).toEqual([2, 2, 1]);
    expect(sharedChunks(1, 4)).toEqual([1]);
  });
});
