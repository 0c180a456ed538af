/**
 * HIP-4 as the venue runs it, in the simulator (`hip4_recurring` profile): the venue's asset ids, a
 * recurring 15-minute series that settles on the venue clock (FakeClock), what settlement does to
 * resting orders, positions and the scheduled-cancel trigger count, and the merged book's dual
 * orders in `/info`'s open-orders listings.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../time/fake-clock.js';
import { decodeInfoOpenOrders } from '../../venue/info-decode.js';
import type { Event, OpenOrder, Outcome } from '../../venue/types.js';
import { startSimulator, type Simulator } from '../simulator.js';
import type { VenueState } from '../venue/index.js';
import { MASTER, scheduleCancelBody } from '../venue/test-support.js';
import { outcomeAssetId, outcomeCoin, outcomeToken, parseOutcomeCoin } from './asset-id.js';
import { buildCatalog } from './catalog.js';
import { RECURRING_PERIOD_MS } from './recurring.js';

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

/** 09:05 UTC: outcome 0 opened at 09:00 and settles at 09:15. */
const T0 = Date.UTC(2026, 0, 5, 9, 5, 0);
const CLOSE_0 = Date.UTC(2026, 0, 5, 9, 15, 0);
const MAIN = MASTER.address.toLowerCase();
const R0 = 'out_btc_up_down_15m_0';
const R1 = 'out_btc_up_down_15m_1';
const FIXED = 'out_btc_above_120000';

async function start(clock: FakeClock, profile = 'hip4_recurring'): Promise<Simulator> {
  const sim = await startSimulator({ clock, accounts: [], profile });
  sims.push(sim);
  return sim;
}

/** Orders that left the listing, with the status that closed them (VenueState's test view). */
function closed(sim: Simulator): ReadonlyArray<{ order: OpenOrder; status: string }> {
  return (sim.state as unknown as VenueState).closedOrders(MAIN);
}

async function get<T>(sim: Simulator, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${sim.baseUrl}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

async function info(sim: Simulator, type: string, user: string): Promise<unknown> {
  const res = await fetch(`${sim.exchangeUrl}/info`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type, user }) });
  return res.json();
}

function seed(sim: Simulator): void {
  sim.state.addAccount({
    address: MAIN,
    tradedVolumeUsd: 2_000_000,
    orders: [
      { outcome_id: R0, side: 0, direction: 'buy', price: '0.45', quantity: '100' },
      { outcome_id: R0, side: 1, direction: 'sell', price: '0.6', quantity: '40' },
      { outcome_id: R1, side: 0, direction: 'buy', price: '0.5', quantity: '10' },
      { outcome_id: FIXED, side: 0, direction: 'buy', price: '0.2', quantity: '50' },
    ],
    positions: [
      { outcome_id: R0, side: 0, quantity: '30', average_entry_price: '0.4', mark_price: '0.5' },
      { outcome_id: R0, side: 1, quantity: '5', average_entry_price: '0.5', mark_price: '0.5' },
      { outcome_id: FIXED, side: 0, quantity: '7', average_entry_price: '0.2', mark_price: '0.25' },
    ],
    spotBalances: [{ coin: 'USDC', token: 0, total: '100' }],
  });
}

describe('outcome asset ids (asset-id.ts)', () => {
  it('follow the venue: 100000000 + 10 * outcome + side, coin #<encoding>, token +<encoding>', () => {
    expect(outcomeAssetId(0, 0)).toBe(100_000_000);
    expect(outcomeAssetId(0, 1)).toBe(100_000_001);
    expect(outcomeAssetId(1210, 0)).toBe(100_012_100);
    expect(outcomeCoin(42, 1)).toBe('#421');
    expect(outcomeToken(42, 1)).toBe('+421');
    expect(parseOutcomeCoin('#421')).toEqual({ outcome: 42, side: 1 });
    expect(parseOutcomeCoin('#422')).toBeUndefined();
    expect(parseOutcomeCoin('@107')).toBeUndefined();
    expect(() => outcomeAssetId(-1, 0)).toThrow(RangeError);
    expect(() => outcomeAssetId(1.5, 0)).toThrow(RangeError);
    expect(() => outcomeAssetId(1, 2)).toThrow(RangeError);
  });

  it("are what the service's hl_asset_id and /info's coins and tokens say", async () => {
    const clock = new FakeClock(T0);
    const sim = await start(clock, 'strict');
    const outcome = sim.catalog.outcome(FIXED)!;
    const chain = Number(outcome.hl_id);
    expect(outcome.sides?.map((s) => s.hl_asset_id)).toEqual([String(100_000_000 + 10 * chain), String(100_000_000 + 10 * chain + 1)]);
    sim.state.addAccount({
      address: MAIN,
      tradedVolumeUsd: 0,
      orders: [{ outcome_id: FIXED, side: 1, direction: 'sell', price: '0.7', quantity: '3' }],
      positions: [{ outcome_id: FIXED, side: 1, quantity: '3', average_entry_price: '0.6', mark_price: '0.7' }],
    });
    const orders = (await info(sim, 'openOrders', MAIN)) as Array<{ coin: string }>;
    expect(orders.map((o) => o.coin)).toEqual([`#${10 * chain + 1}`]);
    const spot = (await info(sim, 'spotClearinghouseState', MAIN)) as { balances: Array<{ coin: string; token: number }> };
    expect(spot.balances[0]).toMatchObject({ coin: `+${10 * chain + 1}`, token: 100_000_000 + 10 * chain + 1 });
  });
});

describe('recurring 15-minute outcomes (hip4_recurring)', () => {
  it('only under the profile: the default catalog is unchanged', () => {
    const plain = buildCatalog({ nowMs: T0 });
    expect(plain.outcome(R0)).toBeUndefined();
    expect(plain.recurring).toBeUndefined();
    const withSeries = buildCatalog({ nowMs: T0, recurring: { nowMs: () => T0 } });
    expect(withSeries.outcomes().length).toBe(plain.outcomes().length + 2);
    expect(withSeries.series('btc-up-down-15m')).toMatchObject({ category_id: 'bitcoin', topic_id: 'crypto' });
    expect(plain.series('btc-up-down-15m')).toBeUndefined();
  });

  it('an outcome settles at its close: marked as the spec says, its resting orders gone from every listing, positions paid, no trigger counted', async () => {
    const clock = new FakeClock(T0);
    const sim = await start(clock);
    seed(sim);
    // The switch is armed well past the settlement.
    const arm = await fetch(`${sim.exchangeUrl}/exchange`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(await scheduleCancelBody(MASTER, { time: CLOSE_0 + 30 * 60_000, nonce: T0 })),
    }).then((r) => r.json());
    expect(arm).toEqual({ status: 'ok', response: { type: 'default' } });

    const before = await get<Outcome>(sim, `/v1/events/evt_btc_up_down_15m`).then((r) => (r.body as unknown as Event).outcomes!.find((o) => o.id === R0)!);
    expect(before).toMatchObject({ status: 'active', hl_settle_fraction: null, settlement: [], hl_settlement: [] });
    expect(before.settled_at).toBeUndefined();
    expect((await get<{ data: OpenOrder[] }>(sim, `/v1/accounts/${MAIN}/orders`)).body.data).toHaveLength(4);

    // One millisecond before the close nothing has happened; at the close it settles.
    await clock.advance(CLOSE_0 - T0 - 1);
    expect(sim.state.openOrders(MAIN)).toHaveLength(4);
    await clock.advance(1);

    const event = (await get<Event>(sim, `/v1/events/evt_btc_up_down_15m`)).body;
    const settled = event.outcomes!.find((o) => o.id === R0)!;
    expect(settled).toMatchObject({
      status: 'settled',
      hl_settle_fraction: '1',
      settled_at: new Date(CLOSE_0).toISOString(),
      settlement_initiated_at: new Date(CLOSE_0).toISOString(),
      settlement_approved_at: new Date(CLOSE_0).toISOString(),
      settlement: [
        { side: 0, fraction: '1' },
        { side: 1, fraction: '0' },
      ],
      hl_settlement: [
        { side: 0, fraction: '1' },
        { side: 1, fraction: '0' },
      ],
    });
    // the next one trades, and the one after is listed
    expect(event.outcomes!.map((o) => [o.id, o.status])).toEqual([
      [R0, 'settled'],
      [R1, 'active'],
      ['out_btc_up_down_15m_2', 'active'],
    ]);
    expect((await get<{ state: string }>(sim, `/v1/outcomes/${R0}/book`)).body.state).toBe('settled');

    // orders: gone from the service's listing, /info, and the book; the others stay
    const listed = (await get<{ data: OpenOrder[] }>(sim, `/v1/accounts/${MAIN}/orders`)).body.data;
    expect(listed.map((o) => o.outcome_id).sort()).toEqual([FIXED, R1].sort());
    const venue = decodeInfoOpenOrders(await info(sim, 'frontendOpenOrders', MAIN));
    expect(venue.count).toBe(2);
    expect(sim.state.restingOrders(R0)).toEqual([]);
    // the closed ones carry the settlement's status, never scheduledCancel
    expect(closed(sim).map((c) => [c.order.outcome_id, c.status])).toEqual([
      [R0, 'delistedCanceled'],
      [R0, 'delistedCanceled'],
    ]);

    // positions: the settled outcome's leave; 30 Up tokens pay 30 USDC, 5 Down pay nothing
    const positions = (await get<{ data: Array<{ outcome_id: string }> }>(sim, `/v1/accounts/${MAIN}/positions`)).body.data;
    expect(positions.map((p) => p.outcome_id)).toEqual([FIXED]);
    const spot = (await info(sim, 'spotClearinghouseState', MAIN)) as { balances: Array<{ coin: string; total: string }> };
    expect(spot.balances.find((b) => b.coin === 'USDC')?.total).toBe('130.0');

    // no scheduled cancel fired: the trigger count is unchanged, the switch still armed
    expect(sim.state.schedule(MAIN)).toEqual({ triggersToday: 0, timeMs: CLOSE_0 + 30 * 60_000 });
    expect(sim.state.actionLog().filter((a) => a.type === 'scheduleCancel')).toHaveLength(1);
  });

  it('a jump across several closes settles each outcome once, in order, with alternating fractions', async () => {
    const clock = new FakeClock(T0);
    const sim = await start(clock);
    seed(sim);
    await clock.advance(CLOSE_0 - T0 + 2 * RECURRING_PERIOD_MS + 1_000);
    expect(sim.catalog.outcome(R0)?.hl_settle_fraction).toBe('1');
    expect(sim.catalog.outcome(R1)?.hl_settle_fraction).toBe('0');
    expect(sim.catalog.outcome('out_btc_up_down_15m_2')?.status).toBe('settled');
    expect(sim.catalog.outcome('out_btc_up_down_15m_3')?.status).toBe('active');
    // outcome 5 is not listed yet
    expect(sim.catalog.outcome('out_btc_up_down_15m_5')).toBeUndefined();
    expect(sim.state.openOrders(MAIN).map((o) => o.outcome_id)).toEqual([FIXED]);
    expect(closed(sim).map((c) => c.order.outcome_id)).toEqual([R0, R0, R1]);
    expect(sim.state.schedule(MAIN).triggersToday).toBe(0);
  });
});

describe('the merged book: dual orders in /info (hip4_recurring)', () => {
  it("lists each outcome order's dual (same oid, other side's coin, opposite direction, 1 - price); the keeper's decoder counts one", async () => {
    const clock = new FakeClock(T0);
    const sim = await start(clock);
    sim.state.addAccount({
      address: MAIN,
      tradedVolumeUsd: 0,
      orders: [{ outcome_id: R0, side: 0, direction: 'buy', price: '0.45', quantity: '100' }],
      venueOrders: [{ coin: 'BTC', side: 'B', limitPx: '60000', sz: '0.5' }],
    });
    const chain = Number(sim.catalog.outcome(R0)!.hl_id);
    const rows = (await info(sim, 'openOrders', MAIN)) as Array<Record<string, unknown>>;
    expect(rows.map((r) => [r.coin, r.side, r.limitPx])).toEqual([
      ['BTC', 'B', '60000.0'],
      [`#${10 * chain}`, 'B', '0.45'],
      [`#${10 * chain + 1}`, 'A', '0.55'],
    ]);
    expect(rows[1]!.oid).toBe(rows[2]!.oid);
    expect(decodeInfoOpenOrders(rows, 'openOrders').count).toBe(2);
    const front = (await info(sim, 'frontendOpenOrders', MAIN)) as unknown[];
    expect(front).toHaveLength(3);
    expect(decodeInfoOpenOrders(front).count).toBe(2);
    // the service lists the order once
    expect((await get<{ data: OpenOrder[] }>(sim, `/v1/accounts/${MAIN}/orders`)).body.data).toHaveLength(1);
  });
});
