/**
 * The venue itself as a read source (issue 20, "Done when"), the whole keeper against the simulator
 * in virtual time: (a) no service at all, 20 accounts (one a subaccount) on the venue's 1,200-weight
 * budget; (b) the service down for 5 minutes, reads falling back to the venue; (c) an account whose
 * only orders are outside the service's listing, armed on `orders_open`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import type { Simulator } from '../src/sim/simulator.js';
import { account, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** 429s the venue answered the keeper, every endpoint together. */
function venue429s(metricsText: string): number {
  return [...metricsText.matchAll(/dms_keeper_venue_requests_total\{endpoint="[^"]+",code="429"\} (\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
}

function requestsTo(metricsText: string, endpoint: string): number {
  return [...metricsText.matchAll(/dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="(\d+)"\} (\d+)/g)].filter((m) => m[1] === endpoint && m[2] === '200').reduce((s, m) => s + Number(m[3]), 0);
}

/** The venue's own count of an address's positions: perp positions with a size, spot tokens held other than USDC. */
function venuePositions(sim: Simulator, address: string): number {
  const perp = sim.state.perpPositions(address).filter((p) => Number(p.szi) !== 0).length;
  const spot = sim.state.spotBalances(address).filter((b) => b.coin !== 'USDC' && Number(b.total) !== 0).length;
  return perp + spot;
}

/** Lowest venue-side horizon of the addresses, sampled every `stepMs` over `totalMs`. */
async function lowestHorizon(harness: Harness, addresses: string[], totalMs: number, stepMs = 1_000): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let t = 0; t < totalMs; t += stepMs) {
    await harness.advance(stepMs);
    for (const a of addresses) min = Math.min(min, harness.venueHorizonMs(a) ?? Number.NEGATIVE_INFINITY);
  }
  return min;
}

describe('the venue as the read source', () => {
  it('(a) no base_url: 20 accounts, one a subaccount, on a venue serving only /exchange, /info and /ws with 1,200 weight a minute: all armed, counts equal the venue\'s, zero 429s over 5 minutes', { timeout: 240_000 }, async () => {
    const mains = benchAddresses(19);
    const sub = demoAddress('venue-only-sub');
    const seeds = [
      ...mains.map((address, i) => ({
        address,
        tradedVolumeUsd: 50_000_000,
        venueOrders: Array.from({ length: i % 4 }, (_, k) => ({ coin: k % 2 ? 'ETH' : '@107', side: (k % 2 ? 'A' : 'B') as 'A' | 'B', limitPx: '100.5', sz: '1.25' })),
        perpPositions: i % 3 === 0 ? [{ coin: 'BTC', szi: '0.5', entryPx: '60000', markPx: '61000' }] : [],
        spotBalances: [{ coin: 'USDC', token: 0, total: '1000' }, ...(i % 5 === 0 ? [{ coin: 'PURR', token: 1, total: '12' }] : [])],
      })),
      { address: sub, parent: mains[0]!, tradedVolumeUsd: 50_000_000, venueOrders: [{ coin: 'SOL', side: 'B' as const, limitPx: '150', sz: '3' }] },
    ];
    const exchange = { path: 'exchange' as const };
    h = await startHarness({
      sim: { accounts: seeds, venueOnly: true, budget: 'ip_weight_1200_per_60s' },
      noService: true,
      notifications: true,
      accounts: () => [
        ...mains.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, exchange)),
        account('acct-sub', sub, benchKey(0), { agentName: 'dms-keeper-sub' }, exchange),
      ],
      // Orders every 20 s: 20 accounts read 1,280 weight a minute with their positions, more than
      // the 1,200 the venue allows less what the arms take; only a budget that counts weight keeps
      // off the 429s, and only a read plan that counts it keeps the reads from being shed.
      watch: { source: 'venue', ordersEveryMs: 20_000, positionsEveryMs: 60_000 },
    });
    const all = [...mains, sub];
    await h.keeper.start();
    const min = await lowestHorizon(h, all, 300_000, 2_000);
    const status = h.keeper.status();
    expect(status.accounts.map((a) => a.phase)).toEqual(all.map(() => 'armed'));
    expect(status.accounts.find((a) => a.name === 'acct-sub')!.account_type).toBe('subaccount');
    expect(min).toBeGreaterThan(0);
    for (const [i, address] of all.entries()) {
      const a = status.accounts[i]!;
      expect(a.address).toBe(address);
      expect({ name: a.name, orders: a.open_orders, source: a.orders_source, positions: a.positions?.count, positionsSource: a.positions?.source }).toEqual({
        name: a.name,
        orders: h.sim.state.venueOpenOrders(address).length,
        source: 'venue',
        positions: venuePositions(h.sim, address),
        positionsSource: 'venue',
      });
    }
    // the counts are not all zero: the comparison compares something
    expect(status.accounts.reduce((n, a) => n + (a.open_orders ?? 0), 0)).toBeGreaterThan(15);
    expect(status.accounts.reduce((n, a) => n + (a.positions?.count ?? 0), 0)).toBeGreaterThan(5);
    const text = await h.metricsText();
    expect(venue429s(text)).toBe(0);
    const WEIGHTS: Record<string, number> = { frontendOpenOrders: 20, clearinghouseState: 2, spotClearinghouseState: 2, userRole: 60 };
    const weight = Object.entries(WEIGHTS).reduce((n, [t, w]) => n + requestsTo(text, `info:${t}`) * w, 0);
    const actions = requestsTo(text, 'exchange:scheduleCancel') + requestsTo(text, 'exchange:approveAgent');
    const shed = Number(/dms_keeper_reads_shed_total (\d+)/.exec(text)?.[1]);
    console.log(`(a) 5 min: info weight ${weight}, exchange actions ${actions}, reads shed ${shed}, read stretch ${status.cadence?.read_stretch}, lowest horizon ${min} ms`);
    // the read plan: 20 * (60/20 * 20 + 60/60 * 4 + 20/10) = 1,320 weight a minute against the 880 the
    // arms leave of 80 % of 1,200: every read period x1.5, so no read is shed, cold start included
    expect(status.cadence?.read_stretch).toBeGreaterThan(1.4);
    expect(shed).toBe(0);
    expect(text).toMatch(/^dms_keeper_read_stretch 1\.[45]/m);
    // resolved by the venue's userRole (the subaccount only: a master key proves a main account), never the service
    expect(requestsTo(text, 'info:userRole')).toBe(1);
    expect(text).not.toMatch(/dms_keeper_venue_requests_total\{endpoint="GET \/v1/);
    expect(text).toMatch(/dms_keeper_orders_source\{account="acct-sub",source="venue"\} 1/);
    // notifications stay on the WebSocket (the venue's /ws: 10 users per IP)
    expect(text).toMatch(/dms_keeper_ws_connected 1/);
    expect(status.accounts.filter((x) => x.notifications).length).toBe(10);
  });

  it('(b) service_then_venue: the service answering 503 for 5 minutes: orders stay known from the venue, arms go through the exchange endpoint, no lapse', { timeout: 240_000 }, async () => {
    const ALICE = demoAddress('alice');
    const BOB = demoAddress('bob');
    const both = { path: 'rest_then_exchange' as const };
    h = await startHarness({
      accounts: () => [account('mm-main', ALICE, demoMasterKey('alice'), {}, both), account('arb-desk', BOB, demoMasterKey('bob'), {}, both)],
      watch: { source: 'service_then_venue' },
    });
    await h.keeper.start();
    await h.advance(40_000);
    expect(h.keeper.status().accounts.map((a) => a.orders_source)).toEqual(['service', 'service']);
    const exchangeArmsBefore = requestsTo(await h.metricsText(), 'exchange:scheduleCancel');
    h.sim.faults.restUnavailable(300_000);
    let sawVenue = 0;
    let min = Number.POSITIVE_INFINITY;
    for (let t = 0; t < 300_000; t += 5_000) {
      min = Math.min(min, await lowestHorizon(h, [ALICE, BOB], 5_000));
      if (t < 60_000) continue; // one orders period for the first fallback read
      for (const a of h.keeper.status().accounts) {
        expect(a.open_orders, `${a.name} at ${t} ms`).toBe(h.sim.state.venueOpenOrders(a.address).length);
        expect(a.orders_source).toBe('venue');
        expect(a.positions?.count, `${a.name} positions at ${t} ms`).toBe(venuePositions(h.sim, a.address));
        sawVenue++;
      }
    }
    expect(sawVenue).toBeGreaterThan(0);
    expect(min).toBeGreaterThan(0);
    const text = await h.metricsText();
    expect(requestsTo(text, 'exchange:scheduleCancel') - exchangeArmsBefore).toBeGreaterThan(2 * (300_000 / 15_000) * 0.8);
    expect(text).toMatch(/dms_keeper_lapses_total\{account="mm-main"\} 0/);
    expect(text).toMatch(/dms_keeper_lapses_total\{account="arb-desk"\} 0/);
    // and back on the service once it answers
    await h.advance(65_000);
    expect(h.keeper.status().accounts.map((a) => a.orders_source)).toEqual(['service', 'service']);
  });

  it('(b) service_then_venue with the service down from the start: a subaccount is resolved by the venue (userRole) and armed through the exchange endpoint', { timeout: 120_000 }, async () => {
    const ALICE_SUB = demoAddress('alice-sub');
    h = await startHarness({
      accounts: () => [account('mm-sub', ALICE_SUB, demoMasterKey('alice'), { agentName: 'dms-keeper-sub' }, { path: 'rest_then_exchange' })],
      watch: { source: 'service_then_venue' },
    });
    h.sim.faults.restUnavailable(300_000);
    await h.keeper.start();
    await h.advance(30_000);
    const [a] = h.keeper.status().accounts;
    expect(a).toMatchObject({ name: 'mm-sub', account_type: 'subaccount', phase: 'armed', orders_source: 'venue' });
    expect(h.venueHorizonMs(ALICE_SUB)).toBeGreaterThan(20_000);
    expect(requestsTo(await h.metricsText(), 'info:userRole')).toBe(1);
  });

  it('(c) an account whose only orders are outside the service\'s listing, arm_when orders_open, watch.source venue: armed', { timeout: 120_000 }, async () => {
    const [hidden, idle] = benchAddresses(2) as [string, string];
    h = await startHarness({
      sim: {
        accounts: [
          { address: hidden, tradedVolumeUsd: 50_000_000, venueOrders: [{ coin: 'BTC', side: 'B', limitPx: '50000', sz: '0.1' }, { coin: '@107', side: 'A', limitPx: '2', sz: '10' }] },
          { address: idle, tradedVolumeUsd: 50_000_000 },
        ],
      },
      accounts: () => [account('hidden', hidden, benchKey(0), {}, { armWhen: 'orders_open' }), account('idle', idle, benchKey(1), {}, { armWhen: 'orders_open' })],
      watch: { source: 'venue' },
    });
    await h.keeper.start();
    // two deadlines: an arm sent while the count was still unknown has run out by then
    const min = await lowestHorizon(h, [hidden], 150_000);
    const [a, b] = h.keeper.status().accounts;
    // the service lists none of its orders; the venue's count does, and the account stays armed
    expect(a).toMatchObject({ name: 'hidden', open_orders: 2, orders_source: 'venue', should_be_armed: true, phase: 'armed' });
    expect(min).toBeGreaterThan(0);
    expect(h.venueHorizonMs(hidden)).toBeGreaterThan(20_000);
    // an account with no order anywhere is not kept armed: the count is what decides
    expect(b).toMatchObject({ name: 'idle', open_orders: 0, orders_source: 'venue', should_be_armed: false });
    expect(h.venueHorizonMs(idle)).toBeNull();
  });
});

/** The service's orders and positions reads it answered 503. */
function serviceReads503(text: string): number {
  const reads = new Set(['GET /v1/accounts/{address}/orders', 'GET /v1/accounts/{address}/positions']);
  return [...text.matchAll(/dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="503"\} (\d+)/g)].filter((m) => reads.has(m[1]!)).reduce((n, m) => n + Number(m[2]), 0);
}

describe('service_then_venue, 20 accounts, the service answering 503 for 5 minutes (as measured with built processes)', () => {
  it('no read is shed when they all fall back to the venue, and every count stays known and equal to the venue\'s', { timeout: 240_000 }, async () => {
    const mains = benchAddresses(20);
    h = await startHarness({
      sim: {
        accounts: mains.map((address, i) => ({
          address,
          tradedVolumeUsd: 50_000_000,
          venueOrders: Array.from({ length: i % 3 }, () => ({ coin: 'ETH', side: 'B' as const, limitPx: '100', sz: '1' })),
          perpPositions: i % 2 === 0 ? [{ coin: 'BTC', szi: '0.5', entryPx: '60000', markPx: '61000' }] : [],
        })),
        budget: 'ip_weight_1200_per_60s',
      },
      accounts: () => mains.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, { path: 'rest_then_exchange' })),
      watch: { source: 'service_then_venue' },
    });
    await h.keeper.start();
    await h.advance(60_000);
    const before = await h.metricsText();
    h.sim.faults.restUnavailable(300_000);
    // one orders period (30 s) and one positions period (60 s) for every account's first fallback read
    await h.advance(65_000);
    let unknown = 0;
    let wrong = 0;
    for (let t = 0; t < 230_000; t += 10_000) {
      await h.advance(10_000);
      for (const [i, a] of h.keeper.status().accounts.entries()) {
        if (a.open_orders === null || a.positions === null) unknown++;
        else if (a.open_orders !== h.sim.state.venueOpenOrders(mains[i]!).length || a.positions.count !== venuePositions(h.sim, mains[i]!) || a.positions.source !== 'venue') wrong++;
      }
    }
    const text = await h.metricsText();
    const shed = Number(/dms_keeper_reads_shed_total (\d+)/.exec(text)?.[1]);
    console.log(`service 503 for 5 min, 20 accounts: reads shed ${shed}, unknown counts ${unknown}, wrong counts ${wrong}, 429s ${venue429s(text)}, read stretch ${h.keeper.status().cadence?.read_stretch}`);
    expect(shed).toBe(0);
    expect(unknown).toBe(0);
    expect(wrong).toBe(0);
    expect(venue429s(text)).toBe(0);

    // The arms: REST is probed by one arm every 10 s for the whole keeper (venue/routes.ts),
    // not by each account every 10 to 30 s (185 failed REST arms in 5 minutes before it).
    const REST_ARM = 'POST /v1/trading/orders/schedule-cancel';
    const failedRest = [...text.matchAll(/dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="503"\} (\d+)/g)].filter((m) => m[1] === REST_ARM).reduce((n, m) => n + Number(m[2]), 0);
    const exchangeArms = requestsTo(text, 'exchange:scheduleCancel') - requestsTo(before, 'exchange:scheduleCancel');
    console.log(`service 503, 355 s in: failed REST arms ${failedRest}, exchange arms ${exchangeArms}`);
    expect(failedRest).toBeLessThanOrEqual(295 / 10 + 5); // a probe every 10 s, and the arms already in flight when it began
    expect(exchangeArms).toBeGreaterThanOrEqual(20 * Math.floor(290 / 15));
    // The service is back at 360 s: the next probe finds it, and every account arms on REST again within a period.
    const restBefore = requestsTo(await h.metricsText(), REST_ARM);
    const min = await lowestHorizon(h, mains, 40_000);
    const after = await h.metricsText();
    expect(requestsTo(after, REST_ARM) - restBefore).toBeGreaterThanOrEqual(20);
    expect(min).toBeGreaterThanOrEqual(20_000);

    // The reads likewise: while the service fails, one read every 10 s for the whole keeper asks it
    // (the probe), every other goes to the venue at once. Before, each of the 300 reads of the
    // outage asked the service first: 300 failed service reads, each a request and a wait.
    const failedServiceReads = serviceReads503(after);
    await h.advance(30_000); // every account's next orders read, after the probe found the service back
    const back = h.keeper.status().accounts.filter((a) => a.orders_source === 'service').length;
    console.log(`service 503 for 5 min: failed service reads ${failedServiceReads}; 60 s after its return ${back} of 20 accounts count orders on the service again`);
    expect(failedServiceReads).toBeLessThanOrEqual(300 / 10 + 5);
    expect(back).toBe(20);
  });
});

describe('service_then_venue with the service answering: orders_open counts on the venue', () => {
  it('(c) the account whose only orders are unlisted is armed (orders_source venue); an account with listed orders is unaffected', { timeout: 120_000 }, async () => {
    const [hidden, listed, always] = benchAddresses(3) as [string, string, string];
    h = await startHarness({
      sim: {
        accounts: [
          { address: hidden, tradedVolumeUsd: 50_000_000, venueOrders: [{ coin: 'BTC', side: 'B', limitPx: '50000', sz: '0.1' }, { coin: '@107', side: 'A', limitPx: '2', sz: '10' }] },
          { address: listed, tradedVolumeUsd: 50_000_000 },
          { address: always, tradedVolumeUsd: 50_000_000 },
        ],
      },
      accounts: () => [
        account('hidden', hidden, benchKey(0), {}, { armWhen: 'orders_open' }),
        account('listed', listed, benchKey(1), {}, { armWhen: 'orders_open' }),
        account('always', always, benchKey(2)),
      ],
      watch: { source: 'service_then_venue' },
    });
    const outcome = h.sim.catalog.tradableOutcomeIds()[0]!;
    for (const address of [listed, always]) h.sim.state.placeOrder(address, { outcome_id: outcome, side: 0, direction: 'buy', price: '0.4', quantity: '5' });
    await h.keeper.start();
    const min = await lowestHorizon(h, [hidden, listed, always], 150_000);
    const [a, b, c] = h.keeper.status().accounts;
    // the service lists none of hidden's orders; the venue counts both, and the account stays armed
    expect(a).toMatchObject({ name: 'hidden', open_orders: 2, orders_source: 'venue', should_be_armed: true, phase: 'armed' });
    expect(b).toMatchObject({ name: 'listed', open_orders: 1, orders_source: 'venue', should_be_armed: true, phase: 'armed' });
    // arm_when always: read from the service as before, no venue read spent on it
    expect(c).toMatchObject({ name: 'always', open_orders: 1, orders_source: 'service', phase: 'armed' });
    expect(min).toBeGreaterThan(0);
    const text = await h.metricsText();
    expect(text).toMatch(/dms_keeper_orders_source\{account="hidden",source="venue"\} 1/);
    expect(text).toMatch(/dms_keeper_orders_source\{account="always",source="service"\} 1/);
    // one venue count per orders period for each orders_open account, none for the other
    console.log(`(c) service_then_venue 150 s: info:frontendOpenOrders ${requestsTo(text, 'info:frontendOpenOrders')}, GET orders ${requestsTo(text, 'GET /v1/accounts/{address}/orders')}`);
    const perPeriod = 150_000 / 60_000 + 1;
    expect(requestsTo(text, 'info:frontendOpenOrders')).toBeLessThanOrEqual(2 * (perPeriod + 2));
    expect(requestsTo(text, 'info:frontendOpenOrders')).toBeGreaterThanOrEqual(2);
  });
});

describe('rate_limits.info_weights: a venue that doubled its info weights', () => {
  /** The venue's new weights, as the simulator charges them and as the config tells the keeper. */
  const DOUBLED = { frontendOpenOrders: 40, openOrders: 40, clearinghouseState: 4, spotClearinghouseState: 4, userRole: 120, userRateLimit: 40, extraAgents: 40 };

  async function run(configured: typeof DOUBLED | undefined): Promise<{ venue429s: number; shed: number; stretch: number; armed: number; min: number }> {
    const mains = benchAddresses(20);
    h = await startHarness({
      sim: { accounts: mains.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })), venueOnly: true, budget: 'ip_weight_1200_per_60s', infoWeights: DOUBLED },
      noService: true,
      accounts: () => mains.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, { path: 'exchange' })),
      watch: { source: 'venue', ordersEveryMs: 20_000, positionsEveryMs: 60_000 },
      ...(configured ? { infoWeights: configured } : {}),
    });
    await h.keeper.start();
    const min = await lowestHorizon(h, mains, 180_000, 2_000);
    const status = h.keeper.status();
    const text = await h.metricsText();
    return {
      venue429s: venue429s(text),
      shed: Number(/dms_keeper_reads_shed_total (\d+)/.exec(text)?.[1]),
      stretch: status.cadence?.read_stretch ?? 0,
      armed: status.accounts.filter((a) => a.phase === 'armed').length,
      min,
    };
  }

  it('told the new weights: zero 429s over 3 minutes, every account armed, the reads stretched to fit (x3)', { timeout: 180_000 }, async () => {
    const r = await run(DOUBLED);
    console.log(`info_weights doubled and configured, 3 min: ${JSON.stringify(r)}`);
    // 20 * (3 * 40 + 8 + 40 / 10) = 2,640 weight a minute against the 880 the arms leave of 80 % of 1,200
    expect(r.stretch).toBeCloseTo(3, 1);
    expect(r.venue429s).toBe(0);
    expect(r.armed).toBe(20);
    expect(r.min).toBeGreaterThan(20_000);
  });

  it('left at the published weights, the same keeper runs into the venue\'s 429s: the setting is what keeps it off them', { timeout: 180_000 }, async () => {
    const r = await run(undefined);
    console.log(`info_weights doubled on the venue, published ones configured, 3 min: ${JSON.stringify(r)}`);
    expect(r.venue429s).toBeGreaterThan(0);
    // the switch still holds: arms go first and a 429 holds the scope, never a deadline passing
    expect(r.armed).toBe(20);
    expect(r.min).toBeGreaterThan(0);
  });
});

describe('watch.perp_dexes: an account whose only open order is on a builder-deployed perp dex (HIP-3)', () => {
  /**
   * No service, the venue's 1,200 weight a minute: the account's one order rests on dex `xyz`,
   * which the venue's default open-orders listing leaves out (it lists a builder dex only when
   * asked by name), while the scheduled cancel would cancel it.
   */
  async function start(perpDexes: string[]): Promise<string> {
    const [trader] = benchAddresses(1) as [string];
    h = await startHarness({
      sim: {
        accounts: [{ address: trader, tradedVolumeUsd: 50_000_000, venueOrders: [{ coin: 'xyz:TSLA', dex: 'xyz', side: 'B', limitPx: '250', sz: '2' }] }],
        venueOnly: true,
        budget: 'ip_weight_1200_per_60s',
      },
      noService: true,
      accounts: () => [account('hip3', trader, benchKey(0), {}, { armWhen: 'orders_open', path: 'exchange' })],
      watch: { source: 'venue', perpDexes },
    });
    await h.keeper.start();
    return trader;
  }

  it('with perp_dexes [xyz]: the order is counted (the default listing and xyz read each time) and the account is kept armed', { timeout: 120_000 }, async () => {
    const trader = await start(['xyz']);
    await h!.advance(5_000); // the first count and the first arm
    const min = await lowestHorizon(h!, [trader], 150_000);
    const a = h!.keeper.status().accounts[0]!;
    const text = await h!.metricsText();
    console.log(`perp_dexes [xyz], 155 s: open_orders ${a.open_orders}, phase ${a.phase}, lowest horizon ${min} ms, info:frontendOpenOrders ${requestsTo(text, 'info:frontendOpenOrders')}`);
    expect(a).toMatchObject({ name: 'hip3', open_orders: 1, orders_source: 'venue', should_be_armed: true, phase: 'armed' });
    expect(min).toBeGreaterThan(20_000);
    expect(h!.venueHorizonMs(trader)).toBeGreaterThan(20_000);
    // the keeper's count is the venue's on every dex
    expect(h!.sim.state.venueOpenOrders(trader).map((o) => [o.coin, o.dex])).toEqual([['xyz:TSLA', 'xyz']]);
    // two requests per orders read (every 30 s): one read alone would send at most 6 in 155 s
    expect(requestsTo(text, 'info:frontendOpenOrders')).toBeGreaterThanOrEqual(8);
    expect(venue429s(text)).toBe(0);
  });

  it('with perp_dexes []: the default listing shows 0 open orders and the account is NOT kept armed (the limitation the setting removes)', { timeout: 120_000 }, async () => {
    const trader = await start([]);
    await h!.advance(20_000);
    const a = h!.keeper.status().accounts[0]!;
    expect(a).toMatchObject({ name: 'hip3', open_orders: 0, orders_source: 'venue', should_be_armed: false });
    expect(a.phase).not.toBe('armed');
    // yet the order is there, and a fired cancel would cancel it
    expect(h!.sim.state.venueOpenOrders(trader)).toHaveLength(1);
    await h!.advance(130_000);
    // never re-armed: at most the one arm sent before the first count, long run out
    expect(h!.venueHorizonMs(trader)).toBeNull();
    expect(h!.sim.state.actionLog().filter((x) => x.type === 'scheduleCancel' && x.result === 'ok').length).toBeLessThanOrEqual(1);
    expect(h!.keeper.status().accounts[0]).toMatchObject({ open_orders: 0, should_be_armed: false });
  });
});
