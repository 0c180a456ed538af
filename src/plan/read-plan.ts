/**
 * The read plan, pure: how often the watchers may read beside the arms. The service's listings
 * spend `global`, one request each; the venue's info reads spend `exchange` by weight. Arms take
 * what they need first, and every read period is stretched by one common factor to fit the rest:
 * a read late by a period beats a read shed at random.
 */
import { DAY_MS } from '../time/clock.js';
import { ARM_RESERVE_SHARE } from '../budget/request-class.js';
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

/** The venue weight of one orders read and one positions read: once per listing (the default and each of `watch.perp_dexes`), spot once. */
export function venueReadWeights(w: ReadWeights, perpDexes = 0): { orders: number; positions: number } {
  const reads = 1 + perpDexes;
  return { orders: w.openOrders * reads, positions: w.clearinghouseState * reads + w.spotClearinghouseState };
}

/**
 * What one account's reads spend, as the watcher sends them: `service_then_venue` asks the service
 * and, once it failed (`fallenBack`), the venue too; an `orders_open` account's orders always come
 * from the venue.
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
 * How often the address budget reads `userRateLimit` per account when the keeper reads the venue
 * (account/address-actions.ts). At one re-arm per 15 s the headroom moves by 40 in that time, and the
 * read costs a sixth of one percent of the venue's 1,200 weight a minute.
 */
export const ADDRESS_BUDGET_READ_EVERY_MS = 10 * 60_000;

/** How often the agent check reads `extraAgents` per account (account/agent-check.ts), besides after each approval. */
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
 * What the keeper's reads spend at the configured periods, the figure the keeper and check-config
 * both plan on: every account's reads by where they go, plus the per-account venue checks.
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

/** Weight a second of one account's own venue checks (address budget, agent check); not stretched. */
export function accountChecksWeightPerSecond(w: Pick<PlanReadWeights, 'userRateLimit' | 'extraAgents'>): number {
  return (w.userRateLimit * 1000) / ADDRESS_BUDGET_READ_EVERY_MS + (w.extraAgents * 1000) / AGENT_CHECK_EVERY_MS;
}

/** Share of a budget arms and reads fill together before reads are stretched: the fifth left is the arms' (ARM_RESERVE_SHARE). */
export const READ_UTILISATION = 1 - ARM_RESERVE_SHARE;

/** Longest stretch applied: past it the watcher's picture is useless anyway, and admission sheds what does not fit. */
export const MAX_READ_STRETCH = 20;

/** The common read stretch: 1 when the reads fit as configured, infinite when the arms leave nothing. */
export function readStretch(demand: ReadDemand, budgets: { global?: number; exchange?: number }, arms: { global: number; exchange: number }): number {
  const factor = (need: number, budget: number | undefined, used: number): number => {
    if (need <= 0 || budget === undefined) return 1;
    const room = budget * READ_UTILISATION - used;
    return room <= 0 ? Number.POSITIVE_INFINITY : need / room;
  };
  return Math.max(1, factor(demand.globalPerSecond, budgets.global, arms.global), factor(demand.exchangeWeightPerSecond, budgets.exchange, arms.exchange));
}
