/**
 * The matching engine's restarts: a weekly window (Monday 20:00 America/New_York, as the brief's
 * venue notes give it; the venue's page has also said Tuesday 07:00 ET, so the day and hour are
 * parameters) and restarts triggered by hand (the admin API), each `restartMs` (90 s) of HTTP 425
 * on the order routes followed by `postOnlyMs` (2 min) in which only post-only orders are taken.
 *
 * Pure arithmetic on venue time: no timers. The weekly instant follows the zone's daylight-saving
 * rules (Intl), so 20:00 ET is 00:00 or 01:00 UTC depending on the season.
 */

const DAY_MS = 86_400_000;
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

export type EnginePhase = 'open' | 'restarting' | 'post_only';

export interface RestartWindow {
  startMs: number;
  /** The engine answers again (425 ends). */
  backMs: number;
  /** Post-only ends. */
  postOnlyEndMs: number;
  cause: 'weekly' | 'manual';
}

export interface WeeklyRestart {
  /** 0 = Sunday ... 6 = Saturday. */
  weekday: number;
  hour: number;
  minute: number;
  timeZone: string;
}

export const DEFAULT_WEEKLY_RESTART: WeeklyRestart = { weekday: 1, hour: 20, minute: 0, timeZone: 'America/New_York' };

export interface RestartCalendarOptions {
  /** The weekly window; undefined: restarts only by hand. */
  weekly?: WeeklyRestart | undefined;
  restartMs?: number;
  postOnlyMs?: number;
}

interface ZonedParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
}

/** Formatters by zone: building one costs far more than using it, and phases are read per request. */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let fmt = FORMATTERS.get(timeZone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    FORMATTERS.set(timeZone, fmt);
  }
  return fmt;
}

function zonedParts(ms: number, timeZone: string): ZonedParts {
  const p: Record<string, string> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(ms))) p[part.type] = part.value;
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
    second: Number(p.second),
    weekday: WEEKDAYS.indexOf(p.weekday ?? ''),
  };
}

/** Zone time minus UTC at `ms`. */
function zoneOffsetMs(ms: number, timeZone: string): number {
  const p = zonedParts(ms, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ms / 1000) * 1000;
}

/** The UTC instant of a wall-clock time in `timeZone`. */
export function zonedToUtcMs(year: number, month: number, day: number, hour: number, minute: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = guess - zoneOffsetMs(guess, timeZone);
  return guess - zoneOffsetMs(first, timeZone);
}

/** The latest weekly restart start at or before `ms`. */
export function weeklyStartAtOrBefore(ms: number, w: WeeklyRestart): number {
  for (let k = 0; k <= 8; k++) {
    const p = zonedParts(ms - k * DAY_MS, w.timeZone);
    if (p.weekday !== w.weekday) continue;
    const start = zonedToUtcMs(p.year, p.month, p.day, w.hour, w.minute, w.timeZone);
    if (start <= ms) return start;
  }
  throw new Error('no weekly restart found in the last 8 days'); // unreachable for a valid weekday
}

export class RestartCalendar {
  private weekly: WeeklyRestart | undefined;
  private readonly manual: RestartWindow[] = [];
  readonly restartMs: number;
  readonly postOnlyMs: number;

  constructor(opts: RestartCalendarOptions = {}) {
    this.weekly = opts.weekly;
    this.restartMs = opts.restartMs ?? 90_000;
    this.postOnlyMs = opts.postOnlyMs ?? 120_000;
  }

  setWeekly(weekly: WeeklyRestart | undefined): void {
    this.weekly = weekly;
  }

  weeklySchedule(): WeeklyRestart | undefined {
    return this.weekly;
  }

  /** A restart beginning at `startMs` (the admin API: now). */
  trigger(startMs: number): RestartWindow {
    const w = this.window(startMs, 'manual');
    this.manual.push(w);
    return w;
  }

  /** The window `ms` falls in (restart or post-only), if any. */
  windowAt(ms: number): RestartWindow | undefined {
    const candidates = [...this.manual];
    if (this.weekly) candidates.push(this.window(weeklyStartAtOrBefore(ms, this.weekly), 'weekly'));
    return candidates.find((w) => w.startMs <= ms && ms < w.postOnlyEndMs);
  }

  phase(ms: number): EnginePhase {
    const w = this.windowAt(ms);
    if (!w) return 'open';
    return ms < w.backMs ? 'restarting' : 'post_only';
  }

  /** The earliest window starting in (afterMs, untilMs), if any. */
  firstStartBetween(afterMs: number, untilMs: number): RestartWindow | undefined {
    const candidates = this.manual.filter((w) => w.startMs > afterMs && w.startMs < untilMs);
    if (this.weekly) {
      const s = weeklyStartAtOrBefore(untilMs, this.weekly);
      if (s > afterMs && s < untilMs) candidates.push(this.window(s, 'weekly'));
    }
    return candidates.sort((a, b) => a.startMs - b.startMs)[0];
  }

  /** The next weekly start after `ms` (for the admin state), if weekly restarts are on. */
  nextWeeklyAfter(ms: number): number | undefined {
    return this.weekly ? this.firstWeeklyAfter(ms, this.weekly) : undefined;
  }

  private firstWeeklyAfter(ms: number, w: WeeklyRestart): number {
    let s = weeklyStartAtOrBefore(ms + 7 * DAY_MS, w);
    for (;;) {
      const earlier = weeklyStartAtOrBefore(s - 1, w);
      if (earlier <= ms) return s;
      s = earlier;
    }
  }

  private window(startMs: number, cause: RestartWindow['cause']): RestartWindow {
    const backMs = startMs + this.restartMs;
    return { startMs, backMs, postOnlyEndMs: backMs + this.postOnlyMs, cause };
  }
}
