import { READ_UTILISATION } from '../plan/read-plan.js';
import type { WindowSpec } from '../budget/admission.js';
import { infoRequestWeight } from '../venue/info.js';
import type { KeeperAccountSpec, KeeperOptions } from './keeper-types.js';

/**
 * First reads of each watcher are spread at this many global slots per account (per kind), so
 * start-up reads use at most 1/8 of the global budget each and never queue by the thousand.
 */
const FIRST_READ_SPREAD_SLOTS = 8;

/** What the stagger reads of the budget and the read plan in force. */
export interface StaggerInput {
  /** The budget's `global` and `exchange` windows (scheduler.specOf); absent: not configured. */
  global?: WindowSpec;
  exchange?: WindowSpec;
  /** The planned read periods (CadenceControl.readIntervals). */
  planned: () => { ordersEveryMs: number; positionsEveryMs: number };
}

/**
 * Where the k-th watcher's first reads go in the start-up stagger: k slots in, never later than its
 * own period (when reads may go to the venue: k n-ths of the planned period). An `orders_open`
 * account reads its orders at once: its first arm waits for them.
 */
export function firstReadDelays(k: number, spec: KeeperAccountSpec, options: KeeperOptions, input: StaggerInput): { ordersMs: number; positionsMs: number } {
  const ordersNow = spec.switch.armWhen === 'orders_open';
  if ((options.watch.source ?? 'service') !== 'service') {
    // Venue reads weigh 20 and 4 of a budget of 20 a second: a few slots apart they would still
    // come due together and be shed (measured: 44 of the first minute's reads at 20 accounts).
    // Spread evenly over the planned periods instead, the pattern the steady state keeps. Under
    // service_then_venue too: reads in a burst on the service all fall back to the venue at once
    // when it fails (measured with built processes: 13 reads shed 16 to 20 s into an outage).
    // They begin after the cold start's own venue requests (an approval, a first arm and the
    // address budget's userRateLimit read per account) have had their share of the budget.
    const n = Math.max(1, options.accounts.length);
    const { ordersEveryMs, positionsEveryMs } = input.planned();
    // (Under service_then_venue the first reads go to the service: they need not wait for it.)
    const exchange = input.exchange;
    const provisioningWeight = n * (2 + infoRequestWeight('userRateLimit', options.infoWeights));
    const afterMs = exchange && options.watch.source === 'venue' ? (provisioningWeight * exchange.windowMs) / (exchange.limit * READ_UTILISATION) : 0;
    const at = (periodMs: number): number => Math.round(afterMs + ((k % n) * periodMs) / n);
    return { ordersMs: ordersNow ? 0 : at(ordersEveryMs), positionsMs: at(positionsEveryMs) };
  }
  const global = input.global;
  if (!global) return { ordersMs: 0, positionsMs: 0 };
  const offsetMs = k * FIRST_READ_SPREAD_SLOTS * (global.windowMs / global.limit);
  const { ordersEveryMs, positionsEveryMs } = options.watch;
  return {
    ordersMs: ordersNow ? 0 : Math.min(offsetMs, ordersEveryMs),
    positionsMs: Math.min(offsetMs, positionsEveryMs),
  };
}
