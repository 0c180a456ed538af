/**
 * The read plan: how often the watchers may read so that their reads fit beside the arms. Pure: a
 * function of the accounts' read sources, the budgets in force and the arms planned on them.
 *
 * Two scopes carry reads. The service's listings spend `global` one request each (the arms spend it
 * too); the venue's info endpoint spends `exchange` by weight (an open-orders read 20, positions 2 +
 * 2 at the published weights, the open orders and clearinghouseState once more per builder-deployed
 * dex of `watch.perp_dexes`), which the exchange arms and approvals spend one each. Arms come
 * first: the arm plan (cadence.ts) takes what it needs, and reads get what is left, every account's
 * periods stretched by one common factor, so a read late by a period beats a read shed at random.
 */
import { DAY_MS } from '../sched/clock.js';
import { ARM_RESERVE_SHARE } from '../sched/request-class.js';
import { ASSUMED } from '../venue/assumptions.js';
import type { InfoWeights } from '../venue/info.js';

/** What one account reads in each period, as the watcher will send it. */
export interface AccountReads {
  /** Service requests per orders read and per positions read (a failing service is still asked first). */
  service: { orders: number; positions: number };
  /** Venue weight per orders read and per positions read. */
  venue: { orders: number; positions: number };
}

export interface ReadDemand {
  /** Service requests per second, in `global`. */
  globalPerSecond: number;
  /** Venue weight per second, in `exchange`. */
  exchangeWeightPerSecond: number;
}

/** The published weights of the venue reads the watcher sends (config `rate_limits.info_weights`). */
export interface ReadWeights {
  openOrders: number;
  clearinghouseState: number;
  spotClearinghouseState: number;
}

export type ReadSourceMode = 'service' | 'venue' | 'service_then_venue';

/**
 * The venue weight of one orders read and one positions read (VenuePort `infoOpenOrders`,
 * `infoPositions`): the open orders and `clearinghouseState` once for the default listing and once
 * per builder-deployed perp dex read besides it (`perpDexes`, `watch.perp_dexes`), the spot
 * balances once.
 */
export function venueReadWeights(w: ReadWeights, perpDexes = 0): { orders: number; positions: number } {
  const reads = 1 + perpDexes;
  return { orders: w.openOrders * reads, positions: w.clearinghouseState * reads + w.spotClearinghouseState };
}

/**
 * What one account's reads spend, by where they go (watcher.ts `readOrders`, `readPositions`):
 * `venue` reads the info endpoint alone; `service` the service alone; `service_then_venue` asks the
 * service and, when it fails, the venue too (`fallenBack`: its last read came from the venue), and
 * reads an `orders_open` account's orders from the venue always. `perpDexes`: the builder-deployed
 * dexes each venue read covers besides the default listing (venueReadWeights).
 */
export function accountReads(mode: ReadSourceMode, w: ReadWeights, a: { ordersOnVenue: boolean; fallenBack: boolean; perpDexes?: number }): AccountReads {
  const v = venueReadWeights(w, a.perpDexes ?? 0);
  if (mode === 'venue') return { service: { orders: 0, positions: 0 }, venue: { orders: v.orders, positions: v.positions } };
  if (mode === 'service') return { service: { orders: 1, positions: 1 }, venue: { orders: 0, positions: 0 } };
  const ordersFromVenue = a.ordersOnVenue || a.fallenBack;
  return {
    service: { orders: a.ordersOnVenue ? 0 : 1, positions: 1 },
    venue: { orders: ordersFromVenue ? v.orders : 0, positions: a.fallenBack ? v.positions : 0 },
  };
}

/**
 * The address budget's `userRateLimit` reads (keeper/address-budget.ts), per account when the
 * keeper reads the venue (`watch.source` venue or service_then_venue): one after provisioning,
 * then this often. At one re-arm per 15 s an address
 * spends 40 actions in 10 minutes, so the headroom moves little between reads, and one read of
 * weight 20 per account in 10 minutes is 2 weight a minute: a sixth of one percent of the venue's
 * 1,200 per IP. Reads go last in the budget (arms first) and are shed under pressure.
 */
export const ADDRESS_BUDGET_READ_EVERY_MS = 10 * 60_000;

/**
 * How often the keeper reads the master's `extraAgents` per account when it reads the venue
 * (keeper/agent-check.ts), besides once after each approval: an agent replaced or pruned is
 * found within a day even on an account that is not arming. Weight 20 a day per account.
 */
export const AGENT_CHECK_EVERY_MS = DAY_MS;

/** The reads of every account at the configured periods: each kind of account's reads, and how many read so. */
export function readDemand(reads: Iterable<readonly [AccountReads, number]>, periods: { ordersEveryMs: number; positionsEveryMs: number }): ReadDemand {
  let globalPerSecond = 0;
  let exchangeWeightPerSecond = 0;
  for (const [r, n] of reads) {
    globalPerSecond += n * ((r.service.orders * 1000) / periods.ordersEveryMs + (r.service.positions * 1000) / periods.positionsEveryMs);
    exchangeWeightPerSecond += n * ((r.venue.orders * 1000) / periods.ordersEveryMs + (r.venue.positions * 1000) / periods.positionsEveryMs);
  }
  return { globalPerSecond, exchangeWeightPerSecond };
}

/** The weights the read plan needs: the watcher's reads, and the per-account checks' (address budget, agent check). */
export type PlanReadWeights = ReadWeights & { userRateLimit: number; extraAgents: number };

/** The read plan's weights from `rate_limits.info_weights`. */
export function readWeightsOf(w: InfoWeights): PlanReadWeights {
  return { openOrders: w[ASSUMED.infoOpenOrdersType], clearinghouseState: w.clearinghouseState, spotClearinghouseState: w.spotClearinghouseState, userRateLimit: w.userRateLimit, extraAgents: w.extraAgents };
}

/** How many accounts read where (accountReads): all of them, and under service_then_venue those on the venue. */
export interface ReadMix {
  accounts: number;
  /** `arm_when: orders_open` accounts, whose orders are read on the venue. */
  ordersOnVenue: number;
  /** Accounts whose last read came from the venue (the service failing for them). */
  fallenBack: number;
}

/**
 * What the keeper's reads spend at the configured periods, the one figure the keeper
 * (CadenceControl.readStretch) and check-config plan on: every account's reads by where they go,
 * and when the keeper reads the venue the address budget's `userRateLimit` reads too (once per
 * account every ADDRESS_BUDGET_READ_EVERY_MS; not stretched, but they spend the same room), and
 * the agent checks' `extraAgents` (once per account every AGENT_CHECK_EVERY_MS).
 */
export function keeperReadDemand(
  mode: ReadSourceMode,
  w: PlanReadWeights,
  mix: ReadMix,
  periods: { ordersEveryMs: number; positionsEveryMs: number },
  perpDexes: number,
): ReadDemand {
  const plain = mix.accounts - mix.ordersOnVenue - mix.fallenBack;
  const d = readDemand(
    [
      [accountReads(mode, w, { ordersOnVenue: false, fallenBack: false, perpDexes }), plain],
      [accountReads(mode, w, { ordersOnVenue: true, fallenBack: false, perpDexes }), mix.ordersOnVenue],
      [accountReads(mode, w, { ordersOnVenue: false, fallenBack: true, perpDexes }), mix.fallenBack],
    ],
    periods,
  );
  if (mode === 'service') return d;
  return { ...d, exchangeWeightPerSecond: d.exchangeWeightPerSecond + mix.accounts * accountChecksWeightPerSecond(w) };
}

/**
 * The weight a second one account's own venue checks spend when the keeper reads the venue: the
 * address budget's `userRateLimit` every ADDRESS_BUDGET_READ_EVERY_MS and the agent check's
 * `extraAgents` every AGENT_CHECK_EVERY_MS (not stretched with the watchers' reads).
 */
export function accountChecksWeightPerSecond(w: Pick<PlanReadWeights, 'userRateLimit' | 'extraAgents'>): number {
  return (w.userRateLimit * 1000) / ADDRESS_BUDGET_READ_EVERY_MS + (w.extraAgents * 1000) / AGENT_CHECK_EVERY_MS;
}

/**
 * Share of a budget arms and reads may fill together before reads are stretched. Lower than the
 * arms' own 0.97 (cadence.ts BUDGET_UTILISATION): reads are the cheapest thing to slow down, and
 * the fifth they leave (ARM_RESERVE_SHARE) is the headroom check-config asks for
 * (LOW_HEADROOM_PERCENT), which the arms' retries after errors and 429s and the approvals of a
 * re-provision spend.
 */
export const READ_UTILISATION = 1 - ARM_RESERVE_SHARE;

/**
 * Longest stretch the keeper applies. Past it the reads would come so seldom that the watcher's
 * picture is useless anyway; the budget's admission sheds what still does not fit (reads wait
 * behind arms, then go or are dropped), and readiness is never made to wait for reads.
 */
export const MAX_READ_STRETCH = 20;

/**
 * The common factor every read period is stretched by so the reads fit in what the arms leave:
 * 1 when they fit as configured, infinite when nothing is left (the keeper applies at most
 * MAX_READ_STRETCH; check-config says no room).
 * `budgets` are requests (weight) per second in force on each scope, `arms` what the arm plan
 * spends there; a scope with no known budget constrains nothing.
 */
export function readStretch(demand: ReadDemand, budgets: { global?: number; exchange?: number }, arms: { global: number; exchange: number }): number {
  const factor = (need: number, budget: number | undefined, used: number): number => {
    if (need <= 0 || budget === undefined) return 1;
    const room = budget * READ_UTILISATION - used;
    return room <= 0 ? Number.POSITIVE_INFINITY : need / room;
  };
  return Math.max(1, factor(demand.globalPerSecond, budgets.global, arms.global), factor(demand.exchangeWeightPerSecond, budgets.exchange, arms.exchange));
}
