import type { Clock, TimerHandle } from '../../time/clock.js';
import type { ScheduleInfo } from '../types.js';

const DAY_MS = 24 * 3600 * 1000;
/** Node's setTimeout overflows above 2^31 - 1 ms (about 24.8 days) and would fire at once. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

interface Entry {
  timeMs?: number;
  handle?: TimerHandle;
  /** Identifies the arm a timer belongs to: a stale timer (re-armed, cleared) does nothing. */
  token?: object;
  /** UTC day index (ms / 86 400 000) the trigger count belongs to. */
  triggerDay: number;
  triggers: number;
}

/**
 * Scheduled cancels per account, on the venue clock. One deadline per account: arming again moves
 * it (no trigger), clearing removes it. When the deadline comes, `onDue(address)` runs once; the
 * caller cancels the orders and calls `recordTrigger`.
 *
 * Timers are only a wake-up: the callback re-reads venue time and waits again if it woke early
 * (a clock offset changed, or the delay was capped), so a cancel never fires before its time.
 */
export class ScheduleBook {
  private readonly entries = new Map<string, Entry>();
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (address: string) => void,
  ) {}

  arm(address: string, timeMs: number): void {
    const e = this.entry(address);
    this.cancelTimer(e);
    e.timeMs = timeMs;
    const token = {};
    e.token = token;
    this.wait(address, e, token);
  }

  clear(address: string): void {
    const e = this.entries.get(address);
    if (!e) return;
    this.cancelTimer(e);
    delete e.timeMs;
    delete e.token;
  }

  info(address: string, nowMs: number): ScheduleInfo {
    const e = this.entries.get(address);
    const out: ScheduleInfo = { triggersToday: this.triggersToday(address, nowMs) };
    if (e?.timeMs !== undefined) out.timeMs = e.timeMs;
    return out;
  }

  /** Fired cancels in the UTC day of `nowMs` (the count resets at 00:00 UTC). */
  triggersToday(address: string, nowMs: number): number {
    const e = this.entries.get(address);
    if (!e || e.triggerDay !== utcDay(nowMs)) return 0;
    return e.triggers;
  }

  recordTrigger(address: string, nowMs: number): number {
    const e = this.entry(address);
    const day = utcDay(nowMs);
    if (e.triggerDay !== day) {
      e.triggerDay = day;
      e.triggers = 0;
    }
    e.triggers += 1;
    return e.triggers;
  }

  stop(): void {
    this.stopped = true;
    for (const e of this.entries.values()) this.cancelTimer(e);
  }

  private wait(address: string, e: Entry, token: object): void {
    if (this.stopped || e.timeMs === undefined) return;
    const delay = Math.min(Math.max(0, e.timeMs - this.clock.nowMs()), MAX_TIMER_DELAY_MS);
    e.handle = this.clock.setTimeout(() => {
      if (e.token !== token || e.timeMs === undefined) return;
      delete e.handle;
      if (this.clock.nowMs() < e.timeMs) {
        this.wait(address, e, token);
        return;
      }
      delete e.timeMs;
      delete e.token;
      this.onDue(address);
    }, delay);
  }

  private cancelTimer(e: Entry): void {
    if (e.handle !== undefined) this.clock.clearTimeout(e.handle);
    delete e.handle;
  }

  private entry(address: string): Entry {
    let e = this.entries.get(address);
    if (!e) {
      e = { triggerDay: -1, triggers: 0 };
      this.entries.set(address, e);
    }
    return e;
  }
}

export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}
