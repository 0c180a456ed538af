/**
 * HIP-4 outcomes as the venue runs them, against the keeper in virtual time (simulator profile
 * `hip4_recurring`): a 15-minute outcome settles and takes its resting orders with it, and no
 * scheduled cancel fired (no `cancel_fired`, no trigger counted, the switch stays armed); a real
 * fired cancel after a settlement is still reported as fired, with what it cancelled and left; and a
 * primary and its dual order (the merged Yes/No book) count as one order, in open orders and in
 * what a fired cancel cancelled.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimAccountSeed } from '../src/sim/types.js';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { decodeInfoOpenOrders } from '../src/venue/info-decode.js';
import { account, gauge, startHarness, T_START, type Harness } from './support/harness.js';

const BOB = demoAddress('bob');
const bob = (over = {}, sw = {}) => account('arb-desk', BOB, demoMasterKey('bob'), over, sw);

/** The series opened at T_START (a quarter hour): outcome 0 settles 15 minutes later. */
const CLOSE_0 = T_START + 15 * 60_000;
const R0 = 'out_btc_up_down_15m_0';
const R1 = 'out_btc_up_down_15m_1';
const FIXED = 'out_btc_above_120000';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * BOB armed, with three orders and a position on the 15-minute outcome 0, one order on outcome 1,
 * and orders and a position on a fixed outcome.
 */
async function bobOnTheSeries(watch: Parameters<typeof startHarness>[0]['watch'] = {}): Promise<Harness> {
  const seed: SimAccountSeed = {
    address: BOB,
    tradedVolumeUsd: 5_000_000,
    orders: [
      { outcome_id: R0, side: 0, direction: 'buy', price: '0.41', quantity: '20' },
      { outcome_id: R0, side: 0, direction: 'buy', price: '0.42', quantity: '20' },
      { outcome_id: R0, side: 1, direction: 'sell', price: '0.7', quantity: '20' },
      { outcome_id: R1, side: 0, direction: 'buy', price: '0.5', quantity: '10' },
      { outcome_id: FIXED, side: 0, direction: 'buy', price: '0.2', quantity: '50' },
      { outcome_id: FIXED, side: 1, direction: 'sell', price: '0.9', quantity: '5' },
    ],
    positions: [
      { outcome_id: R0, side: 1, quantity: '30', average_entry_price: '0.4', mark_price: '0.5' },
      { outcome_id: FIXED, side: 1, quantity: '7', average_entry_price: '0.2', mark_price: '0.25' },
    ],
    venueOrders: [{ coin: 'BTC', side: 'B', limitPx: '60000', sz: '0.5' }],
  };
  const harness = await startHarness({
    accounts: () => [bob()],
    sim: { profile: 'hip4_recurring', accounts: [seed] },
    watch: { ordersEveryMs: 5_000, positionsEveryMs: 10_000, ...watch },
  });
  h = harness;
  await harness.keeper.start();
  await harness.advance(26_000);
  expect(harness.venueHorizonMs(BOB)).toBeGreaterThan(0);
  return harness;
}

/** The venue's `/info` answer, raw (through the simulator's in-process dispatcher). */
async function infoRaw(harness: Harness, type: string, user: string): Promise<unknown> {
  const res = await request(`${harness.sim.exchangeUrl}/info`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type, user }),
    dispatcher: harness.sim.inProcess.dispatcher,
  });
  return res.body.json();
}

async function metric(harness: Harness, series: string): Promise<number | undefined> {
  return gauge(await harness.metricsText(), series);
}

describe('a 15-minute outcome settles: not a fired cancel', () => {
  it('its orders are gone, yet no cancel_fired (status, metrics, logs), no trigger counted, the switch stays armed', async () => {
    h = await bobOnTheSeries();
    const onSeries = h.sim.state.openOrders(BOB).filter((o) => o.outcome_id === R0).length;
    expect(onSeries).toBe(3);
    const total = h.sim.state.openOrders(BOB).length;
    expect(h.keeper.status().accounts[0]!.open_orders).toBe(total);

    // Across the settlement, and past a whole deadline (60 s) after it.
    await h.advance(CLOSE_0 - h.sim.clock.nowMs() + 90_000);
    expect(h.sim.catalog.outcome(R0)?.status).toBe('settled');
    expect(h.sim.state.openOrders(BOB).some((o) => o.outcome_id === R0)).toBe(false);
    // the venue: no trigger, still armed
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(0);
    expect(h.venueHorizonMs(BOB)!).toBeGreaterThan(40_000);

    // the keeper: saw the orders go, and reports no fired cancel anywhere
    const status = h.keeper.status().accounts[0]!;
    expect(status.open_orders).toBe(total - onSeries);
    expect(status.phase).toBe('armed');
    expect(status.last_cancel_fired).toBeNull();
    expect(status.triggers_today).toBe(0);
    expect(h.logs.filter((l) => l.event === 'cancel_fired')).toEqual([]);
    expect(await metric(h, 'dms_keeper_cancels_fired_total{account="arb-desk"}')).toBe(0);
    expect(await metric(h, 'dms_keeper_lapses_total{account="arb-desk"}')).toBe(0);
    expect(await metric(h, 'dms_keeper_triggers_today{account="arb-desk"}')).toBe(0);
    expect(await metric(h, 'dms_keeper_open_orders{account="arb-desk"}')).toBe(total - onSeries);
  }, 60_000);
});

describe('a real fired cancel after a settlement', () => {
  it.each(['service', 'venue'] as const)('watch.source %s: reported as fired, with what it cancelled (duals once) and the positions it left', async (source) => {
    h = await bobOnTheSeries({ source });
    await h.advance(CLOSE_0 - h.sim.clock.nowMs() + 20_000);
    expect(h.sim.catalog.outcome(R0)?.status).toBe('settled');
    const left = h.sim.state.openOrders(BOB);
    expect(left.some((o) => o.outcome_id === R1)).toBe(true);
    // The venue lists R1's order twice (primary and dual); it is one order.
    const venueRows = decodeInfoOpenOrders(await infoRaw(h, 'openOrders', BOB), 'openOrders');
    expect(venueRows.count).toBe(h.sim.state.venueOpenOrders(BOB).length);
    expect(h.keeper.status().accounts[0]!.open_orders).toBe(source === 'venue' ? h.sim.state.venueOpenOrders(BOB).length : left.length);
    const cancelledByTheVenue = source === 'venue' ? h.sim.state.venueOpenOrders(BOB).length : left.length;
    const positionsLeft = h.sim.state.positions(BOB).length;
    expect(positionsLeft).toBe(1); // the settled outcome's position was paid out
    // On the venue: perp positions and outcome tokens (no token of the settled outcome is left).
    const venuePositionsLeft = h.sim.state.perpPositions(BOB).length + h.sim.state.spotBalances(BOB).filter((b) => b.coin !== 'USDC').length;
    expect(h.sim.state.spotBalances(BOB).some((b) => b.coin === `+${10 * Number(h!.sim.catalog.outcome(R0)!.hl_id)}`)).toBe(false);

    // Now the venue refuses arms for longer than the deadline: the cancel fires for real.
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 80_000 });
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /exchange', forMs: 80_000 });
    await h.advance(90_000);

    expect(h.sim.state.schedule(BOB).triggersToday).toBe(1);
    expect(h.sim.state.openOrders(BOB)).toEqual([]);
    const fired = h.logs.filter((l) => l.event === 'cancel_fired');
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ orders_before: cancelledByTheVenue, orders_cancelled: cancelledByTheVenue, orders_after: 0 });
    const status = h.keeper.status().accounts[0]!;
    expect(status.last_cancel_fired).toMatchObject({ orders_cancelled: cancelledByTheVenue, triggers_today: 1 });
    // the settled outcome's positions were paid out: not left open by the cancel
    expect(h.sim.state.positions(BOB)).toHaveLength(positionsLeft);
    expect(status.last_cancel_fired!.positions_open).toBe(source === 'venue' ? venuePositionsLeft : positionsLeft);
    expect(await metric(h, 'dms_keeper_cancels_fired_total{account="arb-desk"}')).toBe(1);
    expect(await metric(h, 'dms_keeper_triggers_today{account="arb-desk"}')).toBe(1);
  }, 60_000);
});

describe('the merged Yes/No book: a primary and its dual are one order', () => {
  it('in open orders (status, metric) and in what a fired cancel cancelled, reading the venue', async () => {
    h = await bobOnTheSeries({ source: 'venue' });
    const distinct = h.sim.state.venueOpenOrders(BOB).length;
    const outcomeOrders = h.sim.state.venueOpenOrders(BOB).filter((o) => o.coin.startsWith('#')).length;
    expect(outcomeOrders).toBeGreaterThanOrEqual(4);
    // the venue's listing shows every outcome order twice
    const raw = (await infoRaw(h, 'frontendOpenOrders', BOB)) as unknown[];
    expect(raw).toHaveLength(distinct + outcomeOrders);
    expect(h.keeper.status().accounts[0]!.open_orders).toBe(distinct);
    expect(await metric(h, 'dms_keeper_open_orders{account="arb-desk"}')).toBe(distinct);

    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 80_000 });
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /exchange', forMs: 80_000 });
    await h.advance(90_000);
    const fired = h.logs.find((l) => l.event === 'cancel_fired');
    expect(fired).toMatchObject({ orders_before: distinct, orders_cancelled: distinct });
    expect(h.keeper.status().accounts[0]!.last_cancel_fired).toMatchObject({ orders_cancelled: distinct });
  }, 60_000);
});
