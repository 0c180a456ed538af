import type { Logger } from 'pino';
import { ratePerSecond, type LimitChange } from '../budget/limits.js';
import type { RequestScheduler } from '../budget/scheduler.js';
import type { KeeperMetrics } from './metrics.js';

/**
 * Reports the request budget's limits: `dms_keeper_budget_limit{scope,source}` (requests per second
 * of the limit in force; the series of the other source removed, so a scope has exactly one), a
 * warning when a 429 makes the keeper learn a lower limit, info as it is probed back and restored.
 * Returns the unsubscribe.
 */
export function reportBudgetLimits(scheduler: Pick<RequestScheduler, 'limits' | 'onLimitChange'>, out: { logger: Logger; metrics: Pick<KeeperMetrics, 'budgetLimit'> }): () => void {
  const gauge = out.metrics.budgetLimit;
  const set = (scope: string, source: 'configured' | 'learned', perSecond: number): void => {
    gauge.remove({ scope, source: source === 'learned' ? 'configured' : 'learned' });
    gauge.set({ scope, source }, perSecond);
  };
  for (const l of scheduler.limits()) set(l.scope, l.source, ratePerSecond(l.inForce));
  return scheduler.onLimitChange((c: LimitChange) => {
    set(c.scope, c.source, ratePerSecond(c.to));
    const fields = {
      event: c.kind === 'learned' ? 'budget_limit_learned' : c.kind === 'probed' ? 'budget_limit_probe' : 'budget_limit_restored',
      scope: c.scope,
      limit: c.to.limit,
      window_seconds: c.to.windowMs / 1000,
      per_second: Number(ratePerSecond(c.to).toFixed(3)),
      ...(c.configured ? { configured: { limit: c.configured.limit, window_seconds: c.configured.windowMs / 1000 } } : {}),
    };
    if (c.kind === 'learned') out.logger.warn(fields, `the venue announced a lower limit on ${c.scope}: ${c.to.limit} per ${c.to.windowMs / 1000} s, in force until it has been quiet a while`);
    else if (c.kind === 'probed') out.logger.info(fields, `no 429 on ${c.scope} for a while: its limit probed up to ${c.to.limit} per ${c.to.windowMs / 1000} s`);
    else out.logger.info(fields, `the configured limit of ${c.scope} is back in force: ${c.to.limit} per ${c.to.windowMs / 1000} s`);
  });
}
