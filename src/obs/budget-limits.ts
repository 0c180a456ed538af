import type { Logger } from 'pino';
import { ratePerSecond, type LimitChange, type LimitChangeKind, type LimitSource } from '../budget/limits.js';
import type { RequestScheduler } from '../budget/scheduler.js';
import type { KeeperMetrics } from './metrics.js';

const SOURCES: readonly LimitSource[] = ['configured', 'learned', 'achieved'];

const EVENTS: Record<LimitChangeKind, string> = {
  learned: 'budget_limit_learned',
  // The same event as a learned limit: a lower limit in force; `source` tells which.
  achieved: 'budget_limit_learned',
  probed: 'budget_limit_probe',
  restored: 'budget_limit_restored',
};

/** What a change's log line says: by kind, and for a restore by what is back in force. */
function messageOf(c: LimitChange): string {
  const limit = `${c.to.limit} per ${c.to.windowMs / 1000} s`;
  if (c.kind === 'learned') return `the venue announced a lower limit on ${c.scope}: ${limit}, in force until it has been quiet a while`;
  if (c.kind === 'achieved') return `the keeper sent less than the limit of ${c.scope} while arms waited: its pace, ${limit}, is in force (the plan is made for it) until it has been quiet a while`;
  if (c.kind === 'probed') return c.source === 'achieved' ? `the pace of ${c.scope} fell short of no limit for a while: its limit probed up to ${limit}` : `no 429 on ${c.scope} for a while: its limit probed up to ${limit}`;
  return c.source === 'learned' ? `the limit learned on ${c.scope} is back in force: ${limit}` : `the configured limit of ${c.scope} is back in force: ${limit}`;
}

/**
 * Reports the request budget's limits: `dms_keeper_budget_limit{scope,source}` (requests per second
 * of the limit in force; the series of the other sources removed, so a scope has exactly one), a
 * warning when a 429 makes the keeper learn a lower limit or its own pace falls short of it, info
 * as it is probed back and restored. Every line names the source in force. Returns the unsubscribe.
 */
export function reportBudgetLimits(scheduler: Pick<RequestScheduler, 'limits' | 'onLimitChange'>, out: { logger: Logger; metrics: Pick<KeeperMetrics, 'budgetLimit'> }): () => void {
  const gauge = out.metrics.budgetLimit;
  const set = (scope: string, source: LimitSource, perSecond: number): void => {
    for (const other of SOURCES) if (other !== source) gauge.remove({ scope, source: other });
    gauge.set({ scope, source }, perSecond);
  };
  for (const l of scheduler.limits()) set(l.scope, l.source, ratePerSecond(l.inForce));
  return scheduler.onLimitChange((c: LimitChange) => {
    set(c.scope, c.source, ratePerSecond(c.to));
    const fields = {
      event: EVENTS[c.kind],
      scope: c.scope,
      source: c.source,
      limit: c.to.limit,
      window_seconds: c.to.windowMs / 1000,
      per_second: Number(ratePerSecond(c.to).toFixed(3)),
      ...(c.configured ? { configured: { limit: c.configured.limit, window_seconds: c.configured.windowMs / 1000 } } : {}),
    };
    if (c.kind === 'learned' || c.kind === 'achieved') out.logger.warn(fields, messageOf(c));
    else out.logger.info(fields, messageOf(c));
  });
}
