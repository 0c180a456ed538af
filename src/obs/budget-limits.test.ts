import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../app/app.js';
import { budgetLimitsView } from '../keeper/views.js';
import { FakeClock } from '../time/fake-clock.js';
import { LIMIT_QUIET_MS } from '../budget/limits.js';
import { sleep } from '../time/clock.js';
import { RequestScheduler } from '../budget/scheduler.js';
import { reportBudgetLimits } from './budget-limits.js';
import { createMetrics } from './metrics.js';

/** A scheduler with one `schedule_cancel` scope on a fake clock, reported to a logger (its lines kept) and a registry. */
function reporting(spec: { limit: number; windowMs: number }) {
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
  const s = new RequestScheduler(clock, { schedule_cancel: spec });
  reportBudgetLimits(s, { logger, metrics });
  const series = async () => (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('dms_keeper_budget_limit{'));
  return { clock, lines, s, series };
}

describe('budget limits: metric, log lines, /status', () => {
  it('learned at warn, restored at info; one series per scope, of the source in force', async () => {
    const { clock, lines, s, series } = reporting({ limit: 1_200, windowMs: 60_000 });
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

  it('the pace achieved: source achieved on the metric, /status and the log line (the learned event, at warn), then restored', async () => {
    const { clock, lines, s, series } = reporting({ limit: 100, windowMs: 10_000 });
    // A venue answering in 5 s: 100 per 15.05 s go out of a 100-per-10-s window.
    for (let i = 0; i < 300; i++) void s.run({ kind: 'arm', deadlineVenueMs: i, scopes: ['schedule_cancel'] }, () => sleep(clock, 5_000)).catch(() => undefined);
    await clock.advance(31_000);
    const [line] = await series();
    expect(line).toMatch(/^dms_keeper_budget_limit\{scope="schedule_cancel",source="achieved"\} [67]\.\d+$/);
    const perSecond = Number(line!.split(' ')[1]);
    expect(lines.at(-1)).toMatchObject({ level: 40, event: 'budget_limit_learned', source: 'achieved', scope: 'schedule_cancel', window_seconds: 10, per_second: perSecond, configured: { limit: 100, window_seconds: 10 } });
    expect(lines.at(-1)!.msg).toMatch(/sent less than the limit of schedule_cancel while arms waited/);
    expect(budgetLimitsView(s.limits())).toEqual([{ scope: 'schedule_cancel', source: 'achieved', limit: perSecond * 10, window_seconds: 10, per_second: perSecond, configured: { limit: 100, window_seconds: 10 } }]);

    // Probed back by 1.5 a quiet spell: about 9.9/s first (a probe), then the configured 10/s.
    await clock.advance(LIMIT_QUIET_MS + 60_000);
    expect(lines.at(-1)).toMatchObject({ level: 30, event: 'budget_limit_probe', source: 'achieved', window_seconds: 10 });
    await clock.advance(LIMIT_QUIET_MS);
    expect(lines.at(-1)).toMatchObject({ level: 30, event: 'budget_limit_restored', source: 'configured', limit: 100, window_seconds: 10 });
    expect(await series()).toEqual(['dms_keeper_budget_limit{scope="schedule_cancel",source="configured"} 10']);
    s.stop();
  });
});
