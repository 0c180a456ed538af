/**
 * The shared budget's decisions, pure: which budget is in force (shared through Redis, or this
 * instance's share of it while Redis does not answer) as Redis's events come, and the share the
 * planner gets. SharedBudget (shared-budget.ts) feeds them its state, the event and its clock's
 * monotonic time, and carries out what they return.
 */
import { DEMAND_PUBLISH_PERIOD_MS, DEMAND_TTL_MS, demandShare, type Demand, type DemandEntry } from './shared-demand.js';

export const BUDGET_MODES = ['local', 'shared', 'local_fallback'] as const;
export type BudgetMode = (typeof BUDGET_MODES)[number];

/** After a fallback with the connection still up, the shared budget is tried again this much later. */
export const RESUME_RETRY_MS = 2_000;

export interface ModeState {
  mode: BudgetMode;
  /** stop() was called: nothing changes any more. */
  stopped: boolean;
}

export type ModeEvent =
  /** The client (re)connected. */
  | { kind: 'ready' }
  /** The connection was lost or a command failed. */
  | { kind: 'failed'; reason: string }
  /** The resume retry fell due; `connectionReady`: the client's connection is up. */
  | { kind: 'resume_due'; connectionReady: boolean };

export interface ModeStep {
  /** The budget to put in force, with the reason told to onModeChange; absent: no change. */
  to?: { mode: BudgetMode; reason: string };
  /** Try the shared budget again RESUME_RETRY_MS later (unless a retry is already due). */
  retryResume?: boolean;
}

/**
 * A failure puts this instance on its share and schedules a resume: an error while the connection
 * stays up (a limiter's command sent while Redis was away, failing just after it came back) brings
 * no new `ready` to resume on (measured: both shards stayed on the fallback after Redis was back).
 * A resume falling due while the connection is down waits another period; a Redis really in
 * trouble fails the resumed budget again and the fallback stands.
 */
export function modeStep(s: ModeState, e: ModeEvent): ModeStep {
  if (s.stopped) return {};
  switch (e.kind) {
    case 'ready':
      return s.mode === 'shared' ? {} : { to: { mode: 'shared', reason: 'redis answers' } };
    case 'failed':
      return s.mode === 'local_fallback' ? {} : { to: { mode: 'local_fallback', reason: e.reason }, retryResume: true };
    case 'resume_due':
      return e.connectionReady ? modeStep(s, { kind: 'ready' }) : { retryResume: true };
  }
}

/** The others' demands as last read: Redis's time of the read, and our monotonic time when it came. */
export interface DemandView {
  /** Redis server time (ms) of the read. */
  redisNowMs: number;
  others: DemandEntry[];
  /** This instance's monotonic clock (ms) when the reply came. */
  readAtMonoMs: number;
}

/** A view older than the TTL says nothing about who is alive: the instance plans on its fallback share. */
export function viewFresh(view: DemandView, monoMs: number): boolean {
  return monoMs - view.readAtMonoMs <= DEMAND_TTL_MS;
}

export interface ShareState extends ModeState {
  fallbackShare: number;
  /** This instance's demand as last published; absent: none yet. */
  own: Demand | undefined;
  view: DemandView | undefined;
  /** Redis time of the first read since this instance (re)joined (see demandShare's `settled`). */
  firstReadRedisMs: number | undefined;
}

/**
 * This instance's share of the shared budget in (0, 1] (shared-demand.ts, demandShare): its demand
 * over the live instances' total, or `fallbackShare` while the shared budget is not in force, the
 * last read is older than the TTL, or no demand of its own is known yet.
 */
export function budgetShare(s: ShareState, monoMs: number): number {
  const v = s.view;
  if (s.mode !== 'shared' || s.stopped || !v || !viewFresh(v, monoMs)) return s.fallbackShare;
  const settled = s.firstReadRedisMs !== undefined && v.redisNowMs - s.firstReadRedisMs >= DEMAND_PUBLISH_PERIOD_MS;
  return demandShare({ own: s.own, others: v.others, nowMs: v.redisNowMs, fallbackShare: s.fallbackShare, settled });
}
