import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../app/app.js';
import { budgetLimitsView } from '../keeper/views.js';
import { FakeClock } from '../time/fake-clock.js';
import { LIMIT_QUIET_MS } from '../budget/limits.js';
import { RequestScheduler } from '../budget/scheduler.js';
import { reportBudgetLimits } from './budget-limits.js';
import { createMetrics } from './metrics.js';

describe('budget limits: metric, log lines, /status', () => {
  it('learned at warn, restored at info; one series per scope, of the source in force', async () => {
    const clock = new FakeClock(0);
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    const logger = createLogger('info', stream, clock);
    const metrics = createMetrics({ version: 'test', defaultMetrics: false });
    const s = new RequestScheduler(clock, { schedule_cancel: { limit: 1_200, windowMs: 60_000 } });
    reportBudgetLimits(s, { logger, metrics });
    const series = async () => (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('dms_keeper_budget_limit{'));
    expect(await series()).toEqual(['dms_keeper_budget_limit{scope="schedule_cancel",source="configured"} 20']);

    s.adoptLimit('schedule_cancel', { limit: 10, windowMs: 10_000 });
    expect(await series()).toEqual(['dms_keeper_budget_limit{scope="schedule_cancel",source="learned"} 1']);
    expect(lines.at(-1)).toMatchObject({ level: 40, event: 'budget_limit_learned', scope: 'schedule_cancel', limit: 10, window_seconds: 10, configured: { limit: 1_200, window_seconds: 60 } });
    expect(budgetLimitsView(s.limits())).toEqual([
      { scope: 'schedule_cancel', source: 'learned', limit: 10, window_seconds: 10, per_second: 1, configured: { limit: 1_200, window_seconds: 60 } },
    ]);

    for (let i = 0; i < 5; i++) await clock.advance(LIMIT_QUIET_MS);
    expect(lines.filter((l) => l.event === 'budget_limit_probe').map((l) => l.limit)).toEqual([20, 40, 80, 160]);
    expect(lines.at(-1)).toMatchObject({ level: 30, event: 'budget_limit_restored', limit: 1_200, window_seconds: 60 });
    expect(await series()).toEqual(['dms_keeper_budget_limit{scope="schedule_cancel",source="configured"} 20']);
    s.stop();
  });
});
