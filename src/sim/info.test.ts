/**
 * `POST /info` on the simulator (issue 20): each request type against seeded state in the venue's
 * recorded format, the orders only the venue shows (listed by /info, cancelled by the scheduled
 * cancel), the action count of `userRateLimit`, the venue's 422, the IP weight budget exact at its
 * boundary, the venue-only option, the REST 503 fault, and the profiles applied to the answers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import {
  decodeInfoClearinghouseState,
  decodeInfoExtraAgents,
  decodeInfoOpenOrders,
  decodeInfoSpotClearinghouseState,
  decodeInfoUserRateLimit,
  decodeInfoUserRole,
} from '../venue/info-decode.js';
import type { OpenOrder } from '../venue/types.js';
import { startSimulator, type Simulator } from './simulator.js';
import type { SimAccountSeed } from './types.js';
import { AGENT_A, approveAgentBody, MASTER, scheduleCancelBody } from './venue/test-support.js';

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const SUB = '0x5ab0000000000000000000000000000000000001';
const NOBODY = '0x00000000000000000000000000000000000000ee';
const MAIN = MASTER.address.toLowerCase();

async function start(opts: Parameters<typeof startSimulator>[0] = {}): Promise<Simulator> {
  const sim = await startSimulator({ clock: new FakeClock(T0), accounts: [], ...opts });
  sims.push(sim);
  return sim;
}

interface Answer {
  status: number;
  text: string;
  body: unknown;
  contentType: string | null;
}

async function post(sim: Simulator, path: string, body: unknown, raw?: string): Promise<Answer> {
  const res = await fetch(`${sim.exchangeUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw ?? JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed, contentType: res.headers.get('content-type') };
}

const info = (sim: Simulator, type: string, user: string): Promise<Answer> => post(sim, '/info', { type, user });

/** A main account with one listed outcome order, one own position, venue-only orders, perps, spot USDC. */
function seedMain(sim: Simulator): { outcome: string; coin: string } {
  const outcome = sim.catalog.tradableOutcomeIds()[0] as string;
  const hlId = Number(sim.catalog.outcome(outcome)?.hl_id);
  const seed: SimAccountSeed = {
    address: MAIN,
    tradedVolumeUsd: 2_000_000,
    orders: [{ outcome_id: outcome, side: 1, direction: 'sell', price: '0.42', quantity: '100', filled: '25' }],
    positions: [{ outcome_id: outcome, side: 1, quantity: '300', average_entry_price: '0.4', mark_price: '0.5' }],
    venueOrders: [
      { coin: 'BTC', side: 'B', limitPx: '60000', sz: '0.5' },
      { coin: 'ETH', side: 'A', limitPx: '3000', sz: '2', orderType: 'Stop Market', triggerPx: '2900', triggerCondition: 'Price below 2900', reduceOnly: true },
    ],
    perpPositions: [
      { coin: 'BTC', szi: '-0.1', entryPx: '60000', markPx: '61000', leverage: 20 },
      { coin: 'ETH', szi: '2', entryPx: '3000', markPx: '3100', leverage: 10, liquidationPx: '1500' },
    ],
    perpUsd: '10000',
    spotBalances: [{ coin: 'USDC', token: 0, total: '1234.5', hold: '100' }],
  };
  sim.state.addAccount(seed);
  return { outcome, coin: `#${10 * hlId + 1}` };
}

describe('POST /info: each type from the seeded state, in the venue format', () => {
  it('openOrders and frontendOpenOrders list every open order, the listed and the venue-only, newest first', async () => {
    const clock = new FakeClock(T0);
    const sim = await start({ clock });
    const { coin } = seedMain(sim);
    await clock.advance(1_000);
    sim.state.placeVenueOrder(MAIN, { coin: 'PURR/USDC', side: 'B', limitPx: '0.2', sz: '1000', tif: 'Alo', cloid: '0x' + 'ab'.repeat(16) });

    const listed = (await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}/orders`).then((r) => r.json())) as { data: OpenOrder[] };
    expect(listed.data).toHaveLength(1);

    const open = await info(sim, 'openOrders', MAIN.toUpperCase().replace('0X', '0x'));
    expect(open.status).toBe(200);
    const rows = open.body as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.coin)).toEqual(['PURR/USDC', 'ETH', 'BTC', coin]);
    expect(rows[3]).toEqual({ coin, limitPx: '0.42', oid: Number(listed.data[0]?.venue_order_id), side: 'A', sz: '75.0', timestamp: T0, origSz: '100.0' });
    expect(rows[2]).toEqual({ coin: 'BTC', limitPx: '60000.0', oid: expect.any(Number) as number, side: 'B', sz: '0.5', timestamp: T0, origSz: '0.5' });
    expect(rows[0]?.cloid).toBe('0x' + 'ab'.repeat(16));
    expect(rows[1]?.reduceOnly).toBe(true);
    const base = ['coin', 'limitPx', 'oid', 'origSz', 'side', 'sz', 'timestamp'];
    expect(rows.map((r) => Object.keys(r).sort())).toEqual([[...base, 'cloid'].sort(), [...base, 'reduceOnly'].sort(), base, base]);

    const front = (await info(sim, 'frontendOpenOrders', MAIN)).body as Array<Record<string, unknown>>;
    expect(front).toHaveLength(4);
    expect(front[1]).toEqual({
      children: [],
      coin: 'ETH',
      isPositionTpsl: false,
      isTrigger: true,
      limitPx: '3000.0',
      oid: rows[1]?.oid,
      orderType: 'Stop Market',
      origSz: '2.0',
      reduceOnly: true,
      side: 'A',
      sz: '2.0',
      tif: null,
      timestamp: T0,
      triggerCondition: 'Price below 2900',
      triggerPx: '2900.0',
    });
    expect(front[0]).toMatchObject({ tif: 'Alo', isTrigger: false, triggerPx: '0.0', triggerCondition: 'N/A', cloid: '0x' + 'ab'.repeat(16), timestamp: T0 + 1_000 });
    expect(front[3]).toMatchObject({ coin, orderType: 'Limit', tif: 'Gtc', origSz: '100.0', sz: '75.0' });

    // An address with no orders, or no account at all: an empty list, as the venue answers.
    expect((await info(sim, 'openOrders', NOBODY)).body).toEqual([]);
  });

  it('clearinghouseState and spotClearinghouseState agree with the seeded perps and the service-listed positions', async () => {
    const sim = await start();
    const { coin, outcome } = seedMain(sim);
    const ch = await info(sim, 'clearinghouseState', MAIN);
    expect(ch.status).toBe(200);
    // accountValue = totalRawUsd + sum(szi * markPx) = 10000 - 6100 + 6200.
    const summary = { accountValue: '10100.0', totalMarginUsed: '925.0', totalNtlPos: '12300.0', totalRawUsd: '10000.0' };
    expect(ch.body).toEqual({
      assetPositions: [
        {
          position: {
            coin: 'BTC',
            entryPx: '60000.0',
            leverage: { type: 'cross', value: 20 },
            liquidationPx: null,
            marginUsed: '305.0',
            positionValue: '6100.0',
            returnOnEquity: '-0.33333333',
            szi: '-0.1',
            unrealizedPnl: '-100.0',
          },
          type: 'oneWay',
        },
        {
          position: {
            coin: 'ETH',
            entryPx: '3000.0',
            leverage: { type: 'cross', value: 10 },
            liquidationPx: '1500.0',
            marginUsed: '620.0',
            positionValue: '6200.0',
            returnOnEquity: '0.33333333',
            szi: '2.0',
            unrealizedPnl: '200.0',
          },
          type: 'oneWay',
        },
      ],
      crossMarginSummary: summary,
      marginSummary: summary,
      withdrawable: '9175.0',
      time: T0,
    });

    const rest = (await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}/positions`).then((r) => r.json())) as { data: Array<{ outcome_id: string; quantity: string }> };
    expect(rest.data.map((p) => [p.outcome_id, p.quantity])).toEqual([[outcome, '300']]);
    const spot = await info(sim, 'spotClearinghouseState', MAIN);
    expect(spot.body).toEqual({
      balances: [
        // The outcome token of the listed position; its open sell order (75 left) is on hold.
        { coin: `+${coin.slice(1)}`, token: 100_000_000 + Number(coin.slice(1)), hold: '75.0', total: '300.0', entryNtl: '120.0' },
        { coin: 'USDC', token: 0, hold: '100.0', total: '1234.5', entryNtl: '0.0' },
      ],
    });
    expect((await info(sim, 'spotClearinghouseState', NOBODY)).body).toEqual({ balances: [] });
    expect((await info(sim, 'clearinghouseState', NOBODY)).body).toMatchObject({ assetPositions: [], withdrawable: '0.0' });
  });

  it('userRole: user, subAccount with its master, agent with its user, missing', async () => {
    const sim = await start();
    seedMain(sim);
    sim.state.addAccount({ address: SUB, parent: MAIN, tradedVolumeUsd: 0 });
    const approved = await post(sim, '/exchange', await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'dms-keeper', nonce: T0 }));
    expect(approved.body).toEqual({ status: 'ok', response: { type: 'default' } });

    expect((await info(sim, 'userRole', MAIN)).body).toEqual({ role: 'user' });
    expect((await info(sim, 'userRole', SUB)).body).toEqual({ role: 'subAccount', data: { master: MAIN } });
    expect((await info(sim, 'userRole', AGENT_A.address)).body).toEqual({ role: 'agent', data: { user: MAIN } });
    expect((await info(sim, 'userRole', NOBODY)).body).toEqual({ role: 'missing' });
  });

  it('extraAgents lists the named agents with their validUntil', async () => {
    const sim = await start();
    seedMain(sim);
    const until = T0 + 30 * 86_400_000;
    await post(sim, '/exchange', await approveAgentBody(MASTER, { agent: AGENT_A.address, name: `dms-keeper valid_until ${until}`, nonce: T0 }));
    const agents = await info(sim, 'extraAgents', MAIN);
    expect(agents.body).toEqual([{ name: 'dms-keeper', address: AGENT_A.address.toLowerCase(), validUntil: until }]);
    expect((await info(sim, 'extraAgents', NOBODY)).body).toEqual([]);
  });

  it('userRateLimit: seeded fields, and nRequestsUsed rising with each action the account signs', async () => {
    const sim = await start();
    seedMain(sim);
    expect((await info(sim, 'userRateLimit', MAIN)).body).toEqual({ cumVlm: '2000000.0', nRequestsUsed: 0, nRequestsCap: 2_010_000 });
    sim.state.setUserRateLimit(MAIN, { cumVlm: '1500000.25', nRequestsUsed: 41, nRequestsCap: 45 });
    expect((await info(sim, 'userRateLimit', MAIN)).body).toEqual({ cumVlm: '1500000.25', nRequestsUsed: 41, nRequestsCap: 45 });

    const arm = await post(sim, '/exchange', await scheduleCancelBody(MASTER, { time: T0 + 60_000, nonce: T0 }));
    expect(arm.body).toEqual({ status: 'ok', response: { type: 'default' } });
    await post(sim, '/exchange', await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'dms-keeper', nonce: T0 + 1 }));
    await post(sim, '/exchange', await scheduleCancelBody(AGENT_A, { time: T0 + 60_000, nonce: T0 + 2 }));
    expect((await info(sim, 'userRateLimit', MAIN)).body).toEqual({ cumVlm: '1500000.25', nRequestsUsed: 44, nRequestsCap: 45 });
    // The seeded cap is the one enforced: the 46th action over it is the venue's address-budget refusal.
    await post(sim, '/exchange', await scheduleCancelBody(AGENT_A, { time: T0 + 60_000, nonce: T0 + 3 }));
    await post(sim, '/exchange', await scheduleCancelBody(AGENT_A, { time: T0 + 60_000, nonce: T0 + 4 }));
    const refused = await post(sim, '/exchange', await scheduleCancelBody(AGENT_A, { time: T0 + 60_000, nonce: T0 + 5 }));
    expect(refused.body).toMatchObject({ status: 'err', response: expect.stringMatching(/^Too many cumulative requests sent \(47 > 45\)/) as string });

    // Seeded at start too, and over the admin API.
    sim.state.addAccount({ address: SUB, parent: MAIN, tradedVolumeUsd: 0, rateLimit: { cumVlm: '12.5', nRequestsCap: 100 } });
    expect((await info(sim, 'userRateLimit', SUB)).body).toEqual({ cumVlm: '12.5', nRequestsUsed: 0, nRequestsCap: 100 });
    const admin = await post(sim, '/_sim/user-rate-limit', { address: SUB, nRequestsUsed: 99 });
    expect(admin.body).toEqual({ address: SUB, cumVlm: '12.5', nRequestsUsed: 99, nRequestsCap: 100 });
    expect((await info(sim, 'userRateLimit', NOBODY)).body).toEqual({ cumVlm: '0.0', nRequestsUsed: 0, nRequestsCap: 10_000 });
  });

  it('an unknown type, a missing user or a body that is not JSON: the venue\'s 422 text', async () => {
    const sim = await start();
    for (const a of [
      await post(sim, '/info', { type: 'allMids2', user: MAIN }),
      await post(sim, '/info', { type: 'openOrders' }),
      await post(sim, '/info', { type: 'openOrders', user: '0x123' }),
      await post(sim, '/info', [1, 2]),
      await post(sim, '/info', undefined, '{not json'),
    ]) {
      expect(a.status).toBe(422);
      expect(a.contentType).toMatch(/^text\/plain/);
      expect(a.text).toBe('Failed to deserialize the JSON body into the target type');
    }
  });
});

describe('POST /info: market metadata for SDK clients (meta, spotMeta, outcomeMeta)', () => {
  it('lists the perp universe, the spot tokens with one +<encoding> token per outcome side, and the outcomes with their sides\' tokens', async () => {
    const sim = await start();
    const markets = sim.catalog.tradableOutcomeIds();
    expect(markets.length).toBeGreaterThan(0);
    const first = markets[0] as string;
    const hlId = Number(sim.catalog.outcome(first)?.hl_id);

    const meta = await post(sim, '/info', { type: 'meta' });
    expect(meta.status).toBe(200);
    const m = meta.body as { universe: Array<{ name: string; szDecimals: number; maxLeverage: number; marginTableId: number }>; marginTables: Array<[number, unknown]>; collateralToken: number };
    expect(m.universe.map((u) => u.name)).toEqual(['BTC', 'ETH']);
    for (const u of m.universe) expect(m.marginTables.some(([id]) => id === u.marginTableId)).toBe(true);
    expect(m.collateralToken).toBe(0);
    expect((await post(sim, '/info', { type: 'meta', dex: 'xyz' })).body).toEqual({ universe: [], marginTables: [], collateralToken: 0 });

    const spot = (await post(sim, '/info', { type: 'spotMeta' })).body as { universe: Array<{ tokens: number[]; name: string; index: number }>; tokens: Array<{ name: string; index: number; tokenId: string; szDecimals: number }> };
    expect(spot.universe[0]).toMatchObject({ name: 'PURR/USDC', tokens: [1, 0], index: 0 });
    const yes = spot.tokens.find((t) => t.name === `+${10 * hlId}`);
    const no = spot.tokens.find((t) => t.name === `+${10 * hlId + 1}`);
    expect(yes?.index).toBe(100_000_000 + 10 * hlId);
    expect(no?.index).toBe(100_000_000 + 10 * hlId + 1);
    for (const t of spot.tokens) expect(t.tokenId).toMatch(/^0x[0-9a-f]{32}$/);
    expect(spot.tokens.filter((t) => t.name.startsWith('+'))).toHaveLength(2 * markets.length);

    const outcomes = (await post(sim, '/info', { type: 'outcomeMeta' })).body as { outcomes: Array<{ outcome: number; name: string; sideSpecs: Array<{ name: string; token: number }> }>; questions: unknown[] };
    const entry = outcomes.outcomes.find((o) => o.outcome === hlId);
    expect(entry?.name).toBe(sim.catalog.outcome(first)?.title);
    expect(entry?.sideSpecs.map((x) => x.token)).toEqual([100_000_000 + 10 * hlId, 100_000_000 + 10 * hlId + 1]);
    expect(outcomes.outcomes).toHaveLength(markets.length);

    // No user needed; a dex that is not a string is refused as unreadable.
    expect(await post(sim, '/info', { type: 'meta', dex: 5 })).toMatchObject({ status: 422, text: 'Failed to deserialize the JSON body into the target type' });
  });
});

describe('orders only the venue shows', () => {
  it('the scheduled cancel cancels them with the listed ones; the notification counts both', async () => {
    const clock = new FakeClock(T0);
    const sim = await start({ clock });
    seedMain(sim);
    const admin = await post(sim, '/_sim/venue-orders', { address: MAIN, order: { coin: 'xyz:TSLA', side: 'A', limitPx: '250', sz: '3' } });
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ order: { coin: 'xyz:TSLA', listed: false } });
    expect(sim.state.venueOpenOrders(MAIN)).toHaveLength(4);

    const arm = await post(sim, '/exchange', await scheduleCancelBody(MASTER, { time: T0 + 10_000, nonce: T0 }));
    expect(arm.body).toEqual({ status: 'ok', response: { type: 'default' } });
    await clock.advance(10_000);
    expect((await info(sim, 'openOrders', MAIN)).body).toEqual([]);
    expect(sim.state.openOrders(MAIN)).toEqual([]);
    const venue = sim.state as unknown as { closedVenueOrders(a: string): ReadonlyArray<{ order: { coin: string }; status: string }> };
    expect(venue.closedVenueOrders(MAIN).map((c) => [c.order.coin, c.status])).toEqual([
      ['BTC', 'scheduledCancel'],
      ['ETH', 'scheduledCancel'],
      ['xyz:TSLA', 'scheduledCancel'],
    ]);
  });

  it('an account whose only orders are outside the listing shows none over REST and all of them over /info', async () => {
    const sim = await start();
    const seeded = await post(sim, '/_sim/accounts', { address: MAIN, tradedVolumeUsd: 2_000_000, venueOrders: [{ coin: 'BTC', side: 'B', limitPx: '1', sz: '1' }] });
    expect(seeded.status).toBe(200);
    const listed = (await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}/orders`).then((r) => r.json())) as { data: unknown[] };
    expect(listed.data).toEqual([]);
    expect((await info(sim, 'openOrders', MAIN)).body).toHaveLength(1);
    expect((await post(sim, '/_sim/venue-orders', { address: MAIN, order: { coin: 'BTC', side: 'X', limitPx: '1', sz: '1' } })).status).toBe(400);
  });
});

describe('builder-deployed perp dexes (HIP-3): listed only when asked by name', () => {
  const XYZ_ORDER = { coin: 'xyz:TSLA', dex: 'xyz', side: 'A' as const, limitPx: '250', sz: '3' };

  it('an order or position seeded on dex xyz is listed only with dex "xyz"; the default listing (no dex, or "") excludes it; another dex answers []', async () => {
    const sim = await start();
    const { coin } = seedMain(sim);
    sim.state.placeVenueOrder(MAIN, XYZ_ORDER);
    const seeded = await post(sim, '/_sim/accounts', {
      address: SUB.replace('5ab', '5ac'),
      tradedVolumeUsd: 2_000_000,
      venueOrders: [{ coin: 'flx:GOLD', dex: 'flx', side: 'B', limitPx: '2000', sz: '1' }],
      perpPositions: [{ coin: 'flx:GOLD', dex: 'flx', szi: '2', entryPx: '2000', markPx: '2100' }, { coin: 'BTC', szi: '1', entryPx: '60000' }],
      perpUsd: '500',
    });
    expect(seeded.status).toBe(200);
    const other = SUB.replace('5ab', '5ac');

    for (const type of ['openOrders', 'frontendOpenOrders']) {
      const coins = async (dex?: unknown) => ((await post(sim, '/info', { type, user: MAIN, ...(dex !== undefined ? { dex } : {}) })).body as Array<{ coin: string }>).map((o) => o.coin);
      expect(await coins()).toEqual(['ETH', 'BTC', coin]);
      expect(await coins('')).toEqual(['ETH', 'BTC', coin]);
      expect(await coins(null)).toEqual(['ETH', 'BTC', coin]);
      expect(await coins('xyz')).toEqual(['xyz:TSLA']);
      // a dex the account has nothing on, or one that does not exist: an empty list (ASSUMED.infoUnknownDexAnswersEmpty)
      expect(await coins('flx')).toEqual([]);
      expect(await coins('nosuch')).toEqual([]);
    }
    // what the scheduled cancel hits: every dex
    expect(sim.state.venueOpenOrders(MAIN).map((o) => [o.coin, o.dex])).toEqual([
      ['xyz:TSLA', 'xyz'],
      ['ETH', undefined],
      ['BTC', undefined],
      [coin, undefined],
    ]);

    const positions = async (dex?: string) => (await post(sim, '/info', { type: 'clearinghouseState', user: other, ...(dex !== undefined ? { dex } : {}) })).body as { assetPositions: Array<{ position: { coin: string } }>; marginSummary: { totalRawUsd: string } };
    const first = await positions();
    expect(first.assetPositions.map((p) => p.position.coin)).toEqual(['BTC']);
    expect(first.marginSummary.totalRawUsd).toBe('500.0');
    const flx = await positions('flx');
    expect(flx.assetPositions.map((p) => p.position.coin)).toEqual(['flx:GOLD']);
    expect(flx.marginSummary.totalRawUsd).toBe('0.0');
    expect((await positions('xyz')).assetPositions).toEqual([]);
    expect(((await post(sim, '/info', { type: 'frontendOpenOrders', user: other, dex: 'flx' })).body as unknown[]).length).toBe(1);
  });

  it('a dex that is not a string is refused as the venue refuses what it cannot read: 422', async () => {
    const sim = await start();
    seedMain(sim);
    const a = await post(sim, '/info', { type: 'frontendOpenOrders', user: MAIN, dex: 7 });
    expect(a.status).toBe(422);
    expect(a.text).toBe('Failed to deserialize the JSON body into the target type');
  });

  it('the scheduled cancel cancels the builder dex orders too', async () => {
    const clock = new FakeClock(T0);
    const sim = await start({ clock });
    seedMain(sim);
    sim.state.placeVenueOrder(MAIN, XYZ_ORDER);
    await post(sim, '/exchange', await scheduleCancelBody(MASTER, { time: T0 + 10_000, nonce: T0 }));
    await clock.advance(10_000);
    expect((await post(sim, '/info', { type: 'openOrders', user: MAIN, dex: 'xyz' })).body).toEqual([]);
    expect(sim.state.venueOpenOrders(MAIN)).toEqual([]);
  });

  it.each([
    ['a dex that is no dex name', { ...XYZ_ORDER, dex: 'XYZ' }, /dex must be/],
    ['a coin not named <dex>:<COIN>', { ...XYZ_ORDER, coin: 'TSLA' }, /must be named xyz:<COIN>/],
  ])('a seed with %s is refused', async (_what, order, message) => {
    const sim = await start();
    seedMain(sim);
    const r = await post(sim, '/_sim/venue-orders', { address: MAIN, order });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(message);
  });
});

describe('the IP weight budget (ip_weight_1200_per_60s)', () => {
  it('/info and /exchange spend their weight in one window: admitted exactly up to 1200, refused past it, REST not counted', async () => {
    const clock = new FakeClock(T0);
    const sim = await start({ clock, budget: 'ip_weight_1200_per_60s' });
    seedMain(sim);
    expect(sim.rateLimiter.describe()).toMatchObject({ global: { limit: 1200, windowSeconds: 60 }, globalCounts: 'weight', endpoints: {} });

    // 19 userRole (60 each) = 1140, then 29 clearinghouseState (2 each) = 1198, one action = 1199,
    // one more action = 1200: the boundary, admitted.
    for (let i = 0; i < 19; i++) expect((await info(sim, 'userRole', MAIN)).status).toBe(200);
    await clock.advance(1_000);
    for (let i = 0; i < 29; i++) expect((await info(sim, 'clearinghouseState', MAIN)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const a = await post(sim, '/exchange', await scheduleCancelBody(MASTER, { time: T0 + 120_000, nonce: T0 + i }));
      expect(a.status).toBe(200);
    }
    expect(sim.rateLimiter.globalUsed('127.0.0.1')).toBe(1200);
    // REST reads are the service's host: not counted, still served.
    expect((await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}/orders`)).status).toBe(200);

    // Past the boundary: an action (1), a cheap info (2) and the default (20) are all refused.
    const over = await post(sim, '/exchange', await scheduleCancelBody(MASTER, { time: T0 + 120_000, nonce: T0 + 5 }));
    expect(over.status).toBe(429);
    expect(over.body).toEqual({
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        message: 'rate limit exceeded (IP weight 1200 per 60 s)',
        details: [{ type: 'rate_limit', limit: 1200, reason: 'global_quota', retry_after_seconds: 59, scope: 'global', window_seconds: 60 }],
      },
    });
    expect((await info(sim, 'spotClearinghouseState', MAIN)).status).toBe(429);
    expect((await info(sim, 'openOrders', MAIN)).status).toBe(429);

    // 59 s later the 19 userRole (1140) leave the window: a 60-weight userRole fits, a 61st would not.
    await clock.advance(59_000);
    expect(sim.rateLimiter.globalUsed('127.0.0.1')).toBe(60);
    for (let i = 0; i < 19; i++) expect((await info(sim, 'userRole', MAIN)).status).toBe(200);
    expect(sim.rateLimiter.globalUsed('127.0.0.1')).toBe(1200);
    expect((await info(sim, 'userRateLimit', MAIN)).status).toBe(429);
  });

  it('a request heavier than what is left is refused while a lighter one still fits', async () => {
    const sim = await start({ budget: 'ip_weight_100_per_10s' });
    for (let i = 0; i < 4; i++) expect((await info(sim, 'openOrders', NOBODY)).status).toBe(200); // 80
    expect((await info(sim, 'userRole', NOBODY)).status).toBe(429); // 80 + 60 > 100
    expect((await info(sim, 'openOrders', NOBODY)).status).toBe(200); // 100
    expect((await info(sim, 'clearinghouseState', NOBODY)).status).toBe(429);
  });
});

describe('venue only, and the service down', () => {
  it('venueOnly: /v1 answers 404 (or 503) while /info, /exchange and the admin API work; switchable over the admin API', async () => {
    const sim = await start({ venueOnly: true });
    seedMain(sim);
    const rest = await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}`);
    expect(rest.status).toBe(404);
    expect((await fetch(`${sim.baseUrl}/v1/health`)).status).toBe(404);
    expect((await info(sim, 'openOrders', MAIN)).status).toBe(200);
    const arm = await post(sim, '/exchange', await scheduleCancelBody(MASTER, { time: T0 + 60_000, nonce: T0 }));
    expect(arm.body).toEqual({ status: 'ok', response: { type: 'default' } });

    expect((await post(sim, '/_sim/services', { venueOnly: true, restStatus: 503 })).body).toEqual({ venueOnly: true, restStatus: 503 });
    const refused = await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}`);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { details: Array<{ type: string }> } }).error.details[0]?.type).toBe('dependency');

    expect((await post(sim, '/_sim/services', { venueOnly: false })).body).toEqual({ venueOnly: false, restStatus: 503 });
    expect((await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}`)).status).toBe(200);
    expect((await fetch(`${sim.baseUrl}/_sim/services`).then((r) => r.json())) as unknown).toEqual({ venueOnly: false, restStatus: 503 });
  });

  it('the REST 503 fault: the service answers 503 for 5 minutes, /info and /exchange keep working, then it is back', async () => {
    const clock = new FakeClock(T0);
    const sim = await start({ clock });
    seedMain(sim);
    sim.faults.restUnavailable(300_000);
    expect((await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}/orders`)).status).toBe(503);
    expect((await info(sim, 'frontendOpenOrders', MAIN)).status).toBe(200);
    expect((await post(sim, '/exchange', await scheduleCancelBody(MASTER, { time: T0 + 600_000, nonce: T0 }))).body).toEqual({ status: 'ok', response: { type: 'default' } });
    await clock.advance(299_999);
    expect((await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}/positions`)).status).toBe(503);
    await clock.advance(1);
    expect((await fetch(`${sim.baseUrl}/v1/accounts/${MAIN}/positions`)).status).toBe(200);

    // The same over the admin API, for child processes.
    const added = await post(sim, '/_sim/faults', { kind: 'status', status: 503, path: 'rest', forMs: 300_000 });
    expect(added.status).toBe(200);
    expect((await fetch(`${sim.baseUrl}/v1/health`)).status).toBe(503);
    expect((await info(sim, 'userRole', MAIN)).status).toBe(200);
  });
});

describe('the profiles vary the info answers, never what the keeper acts on', () => {
  const TYPES = ['openOrders', 'frontendOpenOrders', 'clearinghouseState', 'spotClearinghouseState', 'userRole', 'userRateLimit', 'extraAgents'] as const;

  /** What the keeper acts on, per type: must be identical under every profile. */
  function actedOn(type: (typeof TYPES)[number], body: unknown): unknown {
    const b = body as Record<string, unknown> & Array<Record<string, unknown>>;
    switch (type) {
      case 'openOrders':
      case 'frontendOpenOrders':
        return b.map((o) => [o.oid, o.coin]);
      case 'clearinghouseState':
        return (b.assetPositions as Array<{ position: Record<string, unknown> }>).map((p) => [p.position.coin, p.position.szi]);
      case 'spotClearinghouseState':
        return (b.balances as Array<Record<string, unknown>>).map((x) => [x.coin, x.total]);
      case 'userRole':
        return [b.role, (b.data as Record<string, unknown> | undefined)?.master];
      case 'userRateLimit':
        return [b.cumVlm, b.nRequestsUsed, b.nRequestsCap];
      case 'extraAgents':
        return b.map((a) => [a.name, a.address, a.validUntil]);
    }
  }

  async function answers(profile: string): Promise<Map<string, unknown>> {
    const sim = await start({ profile, clockOffsetMs: 0 });
    seedMain(sim);
    sim.state.addAccount({ address: SUB, parent: MAIN, tradedVolumeUsd: 0 });
    await post(sim, '/exchange', await approveAgentBody(MASTER, { agent: AGENT_A.address, name: `k valid_until ${T0 + 86_400_000}`, nonce: T0 }));
    const out = new Map<string, unknown>();
    for (const t of TYPES) out.set(t, (await info(sim, t, t === 'userRole' ? SUB : MAIN)).body);
    return out;
  }

  it.each(['nulls', 'omitted', 'extra_keys', 'unknown_enums', 'realistic', 'random:7'])('%s', async (profile) => {
    const strict = await answers('strict');
    const varied = await answers(profile);
    let changed = 0;
    for (const t of TYPES) {
      expect(actedOn(t, varied.get(t)), t).toEqual(actedOn(t, strict.get(t)));
      if (JSON.stringify(varied.get(t)) !== JSON.stringify(strict.get(t))) changed++;
    }
    // The profile did vary the info answers (not only passed them through): every type but the three
    // made of acted-on fields alone (userRateLimit, userRole of a subaccount, extraAgents).
    expect(changed).toBeGreaterThanOrEqual(profile === 'unknown_enums' ? 3 : 4);
  });

  it.each(['strict', 'nulls', 'omitted', 'extra_keys', 'unknown_enums', 'realistic', 'random:7', 'random:11'])(
    "the keeper's reader (src/venue/info-decode.ts) decodes every answer under %s, counts equal to the venue's",
    async (profile) => {
      const a = await answers(profile);
      const summary = {
        open: decodeInfoOpenOrders(a.get('openOrders'), 'openOrders').count,
        front: decodeInfoOpenOrders(a.get('frontendOpenOrders'), 'frontendOpenOrders').count,
        perps: decodeInfoClearinghouseState(a.get('clearinghouseState')).positions.length,
        spot: decodeInfoSpotClearinghouseState(a.get('spotClearinghouseState')).balances.length,
        role: (({ role, master }) => ({ role, master }))(decodeInfoUserRole(a.get('userRole'))),
        limit: (({ cumVlm, nRequestsUsed, nRequestsCap }) => ({ cumVlm, nRequestsUsed, nRequestsCap }))(decodeInfoUserRateLimit(a.get('userRateLimit'))),
        agents: decodeInfoExtraAgents(a.get('extraAgents')).map((x) => x.validUntil),
      };
      expect(summary).toEqual({
        open: 3,
        front: 3,
        perps: 2,
        spot: 2,
        role: { role: 'subAccount', master: MAIN },
        limit: { cumVlm: '2000000.0', nRequestsUsed: 1, nRequestsCap: 2_010_000 },
        agents: [T0 + 86_400_000],
      });
    },
  );

  it('strict passes the answers through unchanged, and the 422 text is never varied', async () => {
    const sim = await start({ profile: 'realistic' });
    const refused = await post(sim, '/info', { type: 'nope', user: MAIN });
    expect(refused.text).toBe('Failed to deserialize the JSON body into the target type');
    const a = await answers('strict');
    expect(a.get('userRole')).toEqual({ role: 'subAccount', data: { master: MAIN } });
  });
});
