import { describe, expect, it } from 'vitest';
import { DEMAND_PUBLISH_PERIOD_MS, DEMAND_TTL_MS, type DemandEntry } from './shared-demand.js';
import { budgetShare, modeStep, viewFresh, type BudgetMode, type DemandView, type ShareState } from './shared-mode.js';

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

const REDIS_NOW = 1_700_000_000_000;
const MONO = 5_000_000;
const other = (armsPerSecond: number): DemandEntry => ({ id: 'b', atMs: REDIS_NOW - 500, armsPerSecond, backlog: 0 });
const view = (others: DemandEntry[], readAtMonoMs = MONO): DemandView => ({ redisNowMs: REDIS_NOW, others, readAtMonoMs });
const state = (over: Partial<ShareState> = {}): ShareState => ({
  mode: 'shared',
  stopped: false,
  fallbackShare: 0.5,
  own: { armsPerSecond: 3, backlog: 0 },
  view: view([other(1)]),
  firstReadRedisMs: REDIS_NOW - DEMAND_PUBLISH_PERIOD_MS,
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
    expect(budgetShare(state({ firstReadRedisMs: REDIS_NOW - DEMAND_PUBLISH_PERIOD_MS + 1 }), MONO)).toBe(0.5);
    expect(budgetShare(state({ firstReadRedisMs: undefined }), MONO)).toBe(0.5);
    expect(budgetShare(state({ own: { armsPerSecond: 1, backlog: 0 }, view: view([other(3)]), firstReadRedisMs: REDIS_NOW }), MONO)).toBeCloseTo(0.25, 12);
  });
});
