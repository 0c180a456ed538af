import { describe, expect, it } from 'vitest';
import { DEFAULT_WEEKLY_RESTART, RestartCalendar, weeklyStartAtOrBefore, zonedToUtcMs } from './maintenance.js';

describe('RestartCalendar', () => {
  it('Monday 20:00 America/New_York follows daylight saving: 00:00 UTC Tuesday in summer, 01:00 UTC in winter', () => {
    expect(new Date(zonedToUtcMs(2026, 7, 6, 20, 0, 'America/New_York')).toISOString()).toBe('2026-07-07T00:00:00.000Z');
    expect(new Date(zonedToUtcMs(2026, 11, 30, 20, 0, 'America/New_York')).toISOString()).toBe('2026-12-01T01:00:00.000Z');
    // The week the clocks change (2 November 2026 is the Monday after the switch back).
    expect(new Date(weeklyStartAtOrBefore(Date.UTC(2026, 10, 3, 12), DEFAULT_WEEKLY_RESTART)).toISOString()).toBe('2026-11-03T01:00:00.000Z');
    expect(new Date(weeklyStartAtOrBefore(Date.UTC(2026, 10, 3, 0, 59), DEFAULT_WEEKLY_RESTART)).toISOString()).toBe('2026-10-27T00:00:00.000Z');
  });

  it('phases: 90 s restarting, 2 min post-only, then open; weekly only when scheduled', () => {
    const start = Date.UTC(2026, 11, 1, 1);
    const weekly = new RestartCalendar({ weekly: DEFAULT_WEEKLY_RESTART });
    expect(weekly.phase(start - 1)).toBe('open');
    expect(weekly.phase(start)).toBe('restarting');
    expect(weekly.phase(start + 89_999)).toBe('restarting');
    expect(weekly.phase(start + 90_000)).toBe('post_only');
    expect(weekly.phase(start + 209_999)).toBe('post_only');
    expect(weekly.phase(start + 210_000)).toBe('open');
    expect(weekly.nextWeeklyAfter(start - 1)).toBe(start);
    expect(weekly.nextWeeklyAfter(start)).toBe(start + 7 * 86_400_000);
    expect(new RestartCalendar().phase(start)).toBe('open');
  });

  it('a manual restart starts at the given instant; firstStartBetween finds windows strictly inside the span', () => {
    const c = new RestartCalendar();
    const w = c.trigger(1_000_000);
    expect(w).toEqual({ startMs: 1_000_000, backMs: 1_090_000, postOnlyEndMs: 1_210_000, cause: 'manual' });
    expect(c.phase(1_000_000)).toBe('restarting');
    expect(c.firstStartBetween(990_000, 1_000_001)).toEqual(w);
    expect(c.firstStartBetween(1_000_000, 1_010_000)).toBeUndefined();
    expect(c.firstStartBetween(990_000, 1_000_000)).toBeUndefined();
  });
});
