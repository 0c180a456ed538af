/**
 * Drives a recurring series' settlements on the venue clock: at each outcome's close, `settle` is
 * called once with the outcome and its fraction (the venue state removes its resting orders and pays
 * its positions; accounts.ts). Timers are only a wake-up, as in the scheduled cancel: the callback
 * re-reads venue time, so a FakeClock jump across several closes settles each of them, in order,
 * and a wake-up that came early (a clock offset changed) waits again.
 */
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { RecurringSeries } from './recurring.js';

/** Node's setTimeout overflows above 2^31 - 1 ms. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export interface SettlementDriverOptions {
  /** The venue clock (the catalog's outcomes turn `settled` on the same one). */
  clock: Clock;
  series: RecurringSeries;
  settle: (outcomeId: string, settleFraction: string, atMs: number) => void;
}

/** Starts settling; returns the stop. Outcomes whose close is already past at start settle at once. */
export function startRecurringSettlements(opts: SettlementDriverOptions): () => void {
  const { clock, series } = opts;
  let next = 0;
  let handle: TimerHandle | null = null;
  let stopped = false;

  const run = (): void => {
    handle = null;
    if (stopped) return;
    const now = clock.nowMs();
    while (series.closeMs(next) <= now && next <= series.currentIndex(now)) {
      const n = next++;
      try {
        opts.settle(series.outcomeId(n), series.settleFraction(n), now);
      } catch {
        // One settlement that throws must not stop the series.
      }
    }
    if (next > series.lastIndex) return;
    const delay = Math.min(Math.max(0, series.closeMs(next) - now), MAX_TIMER_DELAY_MS);
    handle = clock.setTimeout(run, delay);
  };
  run();
  return () => {
    stopped = true;
    if (handle !== null) clock.clearTimeout(handle);
    handle = null;
  };
}
