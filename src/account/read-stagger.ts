import { READ_UTILISATION } from '../plan/read-plan.js';
import type { WindowSpec } from '../budget/admission.js';
import { infoRequestWeight } from '../venue/info.js';
import type { FirstReads } from './watcher.js';
import type { KeeperAccountSpec, KeeperOptions } from './keeper-types.js';

/** What the stagger reads of the budget. */
export interface StaggerInput {
  /** The budget's `exchange` window (scheduler.specOf); absent: not configured. */
  exchange?: WindowSpec;
}

/**
 * Where the k-th watcher's first reads go: at its place in the planned read period, k n-ths of it
 * (the watcher times them on the period in force, and re-times them when the plan moves it). The
 * first round is the steady state's round, begun at start-up: reads never go faster at start-up
 * than the plan budgets for them. Why: at 50,000 accounts the first reads, sent at an eighth of
 * the global budget (200 a second) beside the cold start's approvals and first arms, took the
 * keeper's CPU the cold start needed, and its last first arms ran into the first re-arms (25,672
 * lapse samples; 290 with the reads ten times sparser). Venue reads weigh 20 and 4 of a budget
 * of 20 a second, so a few slots apart they came due together and were shed (44 of the first
 * minute's at 20 accounts); under service_then_venue reads in a burst on the service all fall back
 * to the venue at once when it fails (13 shed 16 to 20 s into an outage, built processes). An
 * `orders_open` account reads its orders at once: its first arm waits for them.
 */
export function firstReads(k: number, spec: KeeperAccountSpec, options: KeeperOptions, input: StaggerInput): FirstReads {
  const n = Math.max(1, options.accounts.length);
  // From the venue alone, the reads begin after the cold start's own venue requests (an approval,
  // a first arm and the address budget's userRateLimit read per account) have had their share of
  // the exchange budget. (Under service_then_venue the first reads go to the service: they need not wait.)
  const exchange = input.exchange;
  const provisioningWeight = n * (2 + infoRequestWeight('userRateLimit', options.infoWeights));
  const afterMs = exchange && options.watch.source === 'venue' ? (provisioningWeight * exchange.windowMs) / (exchange.limit * READ_UTILISATION) : 0;
  return { afterMs: Math.round(afterMs), phase: (k % n) / n, ordersNow: spec.switch.armWhen === 'orders_open' };
}
