import { describe, expect, it } from 'vitest';
import { LOW_HEADROOM_PERCENT } from '../cli/check-config-plan.js';
import { accountReads, keeperReadDemand, readDemand, readStretch, READ_UTILISATION, venueReadWeights } from './read-plan.js';

const W = { openOrders: 20, clearinghouseState: 2, spotClearinghouseState: 2 };
const PERIODS = { ordersEveryMs: 20_000, positionsEveryMs: 60_000 };

describe('accountReads: what one account spends where, as the watcher reads', () => {
  it('venue: open orders 20 and positions 2 + 2 of weight, no service request', () => {
    expect(accountReads('venue', W, { ordersOnVenue: false, fallenBack: false })).toEqual({ service: { orders: 0, positions: 0 }, venue: { orders: 20, positions: 4 } });
  });

  it('service: one request per read, no weight', () => {
    expect(accountReads('service', W, { ordersOnVenue: true, fallenBack: true })).toEqual({ service: { orders: 1, positions: 1 }, venue: { orders: 0, positions: 0 } });
  });

  it('service_then_venue: an orders_open account reads its orders on the venue only; a fallen-back account asks the service first, then the venue', () => {
    expect(accountReads('service_then_venue', W, { ordersOnVenue: true, fallenBack: false })).toEqual({ service: { orders: 0, positions: 1 }, venue: { orders: 20, positions: 0 } });
    expect(accountReads('service_then_venue', W, { ordersOnVenue: false, fallenBack: false })).toEqual({ service: { orders: 1, positions: 1 }, venue: { orders: 0, positions: 0 } });
    expect(accountReads('service_then_venue', W, { ordersOnVenue: false, fallenBack: true })).toEqual({ service: { orders: 1, positions: 1 }, venue: { orders: 20, positions: 4 } });
  });

  it('builder-deployed perp dexes (watch.perp_dexes): open orders and clearinghouseState once more per dex, spot once', () => {
    expect(venueReadWeights(W)).toEqual({ orders: 20, positions: 4 });
    expect(venueReadWeights(W, 1)).toEqual({ orders: 40, positions: 6 });
    expect(venueReadWeights(W, 2)).toEqual({ orders: 60, positions: 8 });
    expect(accountReads('venue', W, { ordersOnVenue: false, fallenBack: false, perpDexes: 2 })).toEqual({ service: { orders: 0, positions: 0 }, venue: { orders: 60, positions: 8 } });
    expect(accountReads('service_then_venue', W, { ordersOnVenue: true, fallenBack: false, perpDexes: 1 })).toEqual({ service: { orders: 0, positions: 1 }, venue: { orders: 40, positions: 0 } });
    expect(accountReads('service_then_venue', W, { ordersOnVenue: false, fallenBack: true, perpDexes: 1 })).toEqual({ service: { orders: 1, positions: 1 }, venue: { orders: 40, positions: 6 } });
    // the service reads no dex: its requests do not change
    expect(accountReads('service', W, { ordersOnVenue: false, fallenBack: false, perpDexes: 3 })).toEqual({ service: { orders: 1, positions: 1 }, venue: { orders: 0, positions: 0 } });
    // with the configured weights: 40 * 3 and 4 * 3 + 5
    expect(venueReadWeights({ openOrders: 40, clearinghouseState: 4, spotClearinghouseState: 5 }, 2)).toEqual({ orders: 120, positions: 17 });
  });

  it('uses the weights it is given (a venue that changed them, rate_limits.info_weights)', () => {
    expect(accountReads('venue', { openOrders: 40, clearinghouseState: 4, spotClearinghouseState: 5 }, { ordersOnVenue: false, fallenBack: false }).venue).toEqual({ orders: 40, positions: 9 });
  });
});

describe('keeperReadDemand: every account\'s reads by where they go, the address budget\'s and the agent checks\'', () => {
  const WU = { ...W, userRateLimit: 20, extraAgents: 20 };
  it('venue: 20 accounts, orders every 20 s, positions every 60 s, userRateLimit every 10 min, extraAgents daily: 20 * (1 + 4/60) + 20 * 20/600 + 20 * 20/86400 weight a second', () => {
    expect(keeperReadDemand('venue', WU, { accounts: 20, ordersOnVenue: 0, fallenBack: 0 }, PERIODS, 0).exchangeWeightPerSecond).toBeCloseTo(22 + 400 / 86_400, 9);
  });

  it('service: one request a read in global, no venue weight (no address budget reads either)', () => {
    expect(keeperReadDemand('service', WU, { accounts: 20, ordersOnVenue: 0, fallenBack: 0 }, PERIODS, 0)).toEqual({ globalPerSecond: expect.closeTo(20 * (1 / 20 + 1 / 60), 9), exchangeWeightPerSecond: 0 });
  });

  it('service_then_venue, 20 accounts of which 3 orders_open and 5 fallen back', () => {
    const d = keeperReadDemand('service_then_venue', WU, { accounts: 20, ordersOnVenue: 3, fallenBack: 5 }, PERIODS, 0);
    // 12 read the service only, 3 their positions there, 5 ask it before the venue
    expect(d.globalPerSecond).toBeCloseTo(12 * (1 / 20 + 1 / 60) + 3 / 60 + 5 * (1 / 20 + 1 / 60), 9);
    expect(d.exchangeWeightPerSecond).toBeCloseTo((3 * 20) / 20 + 5 * (20 / 20 + 4 / 60) + (20 * 20) / 600 + (20 * 20) / 86_400, 9);
  });
});

describe('readDemand and readStretch', () => {
  it('20 accounts on the venue, orders every 20 s: 21.33 weight a second; beside 1.33 arms/s of 20, stretched x1.45', () => {
    const d = readDemand([[accountReads('venue', W, { ordersOnVenue: false, fallenBack: false }), 20]], PERIODS);
    expect(d.globalPerSecond).toBe(0);
    expect(d.exchangeWeightPerSecond).toBeCloseTo(20 * (20 / 20 + 4 / 60), 9);
    const arms = 20 / 15;
    const k = readStretch(d, { global: 20, exchange: 20 }, { global: arms, exchange: arms });
    expect(k).toBeCloseTo(d.exchangeWeightPerSecond / (20 * READ_UTILISATION - arms), 9);
    // stretched, the reads and the arms together fill READ_UTILISATION of the budget
    expect(d.exchangeWeightPerSecond / k + arms).toBeCloseTo(20 * READ_UTILISATION, 9);
  });

  it('20 accounts on the venue with one builder dex, orders every 20 s: 42 weight a second (twice the orders, 6 for positions); stretched x2.86', () => {
    const d = readDemand([[accountReads('venue', W, { ordersOnVenue: false, fallenBack: false, perpDexes: 1 }), 20]], PERIODS);
    expect(d.exchangeWeightPerSecond).toBeCloseTo(20 * (40 / 20 + 6 / 60), 9);
    expect(d.exchangeWeightPerSecond).toBeCloseTo(42, 9);
    const arms = 20 / 15;
    // room 20 * 0.8 - 1.33 = 14.67 weight a second: x2.86
    expect(readStretch(d, { global: 20, exchange: 20 }, { global: arms, exchange: arms })).toBeCloseTo(42 / (16 - arms), 9);
  });

  it('1 when the reads fit; infinite when the arms leave nothing; a scope with no budget constrains nothing', () => {
    const d = { globalPerSecond: 1, exchangeWeightPerSecond: 2 };
    expect(readStretch(d, { global: 20, exchange: 20 }, { global: 1, exchange: 1 })).toBe(1);
    expect(readStretch(d, { global: 20, exchange: 2 }, { global: 1, exchange: 1.6 })).toBe(Number.POSITIVE_INFINITY);
    expect(readStretch(d, {}, { global: 100, exchange: 100 })).toBe(1);
    expect(readStretch({ globalPerSecond: 0, exchangeWeightPerSecond: 0 }, { global: 1, exchange: 1 }, { global: 5, exchange: 5 })).toBe(1);
  });

  it('the larger of the two scopes decides: service reads in global, venue weight in exchange', () => {
    const d = { globalPerSecond: 16, exchangeWeightPerSecond: 8 };
    // global room 20 * 0.8 - 8 = 8: x2; exchange room 20 * 0.8 - 12 = 4: x2; then exchange tighter
    expect(readStretch(d, { global: 20, exchange: 20 }, { global: 8, exchange: 12 })).toBeCloseTo(2, 9);
    expect(readStretch(d, { global: 20, exchange: 20 }, { global: 8, exchange: 14 })).toBeCloseTo(4, 9);
  });

  it('reads stretched to fit leave exactly the headroom check-config asks for', () => {
    expect((1 - READ_UTILISATION) * 100).toBeCloseTo(LOW_HEADROOM_PERCENT, 9);
  });
});
