/**
 * `order` and `cancel` L1 actions on outcome assets (asset id 100_000_000 + 10 * outcome + side):
 * who may sign, the per-order statuses in the venue's words, the one store of outcome orders that
 * `/info`, the service's listing and the scheduled cancel share, and the hash over the action as
 * received.
 */
import { describe, expect, it } from 'vitest';
import type { Event, Outcome } from '../../venue/types.js';
import type { Signer } from '../../venue/signing/signer.js';
import type { Catalog } from '../types.js';
import { outcomeAssetId } from '../catalog/asset-id.js';
import { AGENT_A, approveAgentBody, approveBuilderFeeBody, harness, MASTER, OTHER_MASTER, scheduleCancelBody, STRANGER, SUB, wire } from './test-support.js';

/** Two deployed outcomes (venue indexes 7 and 8), one not deployed. */
function tradingCatalog(): Catalog {
  const trading = { quote: 'USDC', min_notional: '10', tick_size: '0.001', lot_size: '1' };
  const list: Outcome[] = [
    { id: 'out-7', status: 'active', hl_id: '7', title: 'Seven', trading },
    { id: 'out-8', status: 'active', hl_id: '8', title: 'Eight', trading },
    { id: 'out-x', status: 'active', hl_id: null, title: 'Draft' },
  ];
  const byId = new Map(list.map((o) => [o.id as string, o]));
  return {
    outcome: (id) => byId.get(id),
    event: (): Event | undefined => undefined,
    tradableOutcomeIds: () => list.filter((o) => o.hl_id !== null).map((o) => o.id as string),
  };
}

const YES_7 = outcomeAssetId(7, 0);
const NO_8 = outcomeAssetId(8, 1);

type Order = { a: number; b: boolean; p: string; s: string; r: boolean; t: Record<string, unknown>; c?: string };
const limit = (a: number, p: string, s: string, extra: Partial<Order> = {}): Order => ({ a, b: true, p, s, r: false, t: { limit: { tif: 'Gtc' } }, ...extra });

async function l1Body(signer: Signer, action: Record<string, unknown>, nonce: number, vaultAddress?: string): Promise<unknown> {
  const signature = await signer.signL1({ action, nonce, network: 'testnet', ...(vaultAddress !== undefined ? { vaultAddress } : {}) });
  return wire({ action, nonce, signature, ...(vaultAddress !== undefined ? { vaultAddress } : {}) });
}

const orderAction = (orders: Order[], builder?: { b: string; f: number }): Record<string, unknown> => ({ type: 'order', orders, grouping: 'na', ...(builder ? { builder } : {}) });

async function withAgent() {
  const h = harness({ catalog: tradingCatalog(), seeds: [{ address: MASTER.address, tradedVolumeUsd: 5_000_000 }, { address: SUB, parent: MASTER.address, tradedVolumeUsd: 2_000_000 }, { address: OTHER_MASTER.address, tradedVolumeUsd: 2_000_000 }] });
  expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'bot', nonce: h.nonce() }), 'exchange')).toMatchObject({ body: { status: 'ok' } });
  return h;
}

function statuses(r: unknown): unknown[] {
  const body = (r as { kind: string; body: { status: string; response: { data: { statuses: unknown[] } } } }).body;
  expect(body.status).toBe('ok');
  return body.response.data.statuses;
}

describe('order', () => {
  it('an agent rests an order on an outcome asset: the same order /info, the service listing and the scheduled cancel see', async () => {
    const h = await withAgent();
    const cloid = `0x${'ab'.repeat(16)}`;
    const r = await h.venue.handleAction(await l1Body(AGENT_A, orderAction([limit(YES_7, '0.42', '100', { c: cloid })]), h.nonce()), 'exchange');
    const [s] = statuses(r) as Array<{ resting: { oid: number; cloid?: string } }>;
    expect(s?.resting.cloid).toBe(cloid);
    const oid = s?.resting.oid as number;
    expect(Number.isSafeInteger(oid)).toBe(true);

    expect(h.venue.venueOpenOrders(MASTER.address)).toMatchObject([{ coin: '#70', oid, side: 'B', limitPx: '0.42', sz: '100', tif: 'Gtc', cloid }]);
    expect(h.venue.openOrders(MASTER.address)).toMatchObject([
      { venue_order_id: String(oid), outcome_id: 'out-7', side: 0, direction: 'buy', price: '0.42', original_quantity: '100', time_in_force: 'gtc', submitted_by: { address: AGENT_A.address } },
    ]);
    expect(h.venue.restingOrders('out-7')).toMatchObject([{ oid: String(oid), address: MASTER.address }]);

    expect(await h.venue.handleAction(await scheduleCancelBody(AGENT_A, { time: h.clock.nowMs() + 6_000, nonce: h.nonce() }), 'exchange')).toMatchObject({ body: { status: 'ok' } });
    await h.clock.advance(6_000);
    expect(h.venue.openOrders(MASTER.address)).toEqual([]);
    expect(h.venue.venueOpenOrders(MASTER.address)).toEqual([]);
    expect(h.venue.closedOrders(MASTER.address)).toMatchObject([{ status: 'scheduledCancel', order: { venue_order_id: String(oid) } }]);
  });

  it('answers each order with its own status, in order, with the venue\'s texts', async () => {
    const h = await withAgent();
    const orders: Order[] = [
      limit(NO_8, '0.5', '20', { b: false }),
      limit(outcomeAssetId(99, 0), '0.5', '20'),
      limit(outcomeAssetId(7, 0) + 2, '0.5', '20'),
      limit(3, '0.5', '20'),
      limit(YES_7, '1', '20'),
      limit(YES_7, '0.4205', '20'),
      limit(YES_7, 'abc', '20'),
      limit(YES_7, '0.5', '2.5'),
      limit(YES_7, '0.5', '0'),
      limit(YES_7, '0.05', '100'),
      limit(YES_7, '0.5', '20', { t: { limit: { tif: 'Ioc' } } }),
      limit(YES_7, '0.5', '20', { t: { trigger: { isMarket: false, triggerPx: '0.5', tpsl: 'tp' } } }),
      limit(YES_7, '0.5', '20', { r: true }),
      limit(YES_7, '0.5', '20', { t: { limit: { tif: 'Alo' } } }),
    ];
    const got = statuses(await h.venue.handleAction(await l1Body(AGENT_A, orderAction(orders), h.nonce()), 'exchange'));
    expect(got).toEqual([
      { resting: { oid: expect.any(Number) as number } },
      { error: `Invalid asset: ${outcomeAssetId(99, 0)}` },
      { error: `Invalid asset: ${outcomeAssetId(7, 0) + 2}` },
      { error: 'Invalid asset: 3' },
      { error: `Order has invalid price. asset=${YES_7}` },
      { error: `Order has invalid price. asset=${YES_7}` },
      { error: `Order has invalid price. asset=${YES_7}` },
      { error: `Order has invalid size. asset=${YES_7}` },
      { error: `Order has invalid size. asset=${YES_7}` },
      { error: `Order must have minimum value of $10. asset=${YES_7}` },
      { error: `Order could not immediately match against any resting orders. asset=${YES_7}` },
      { error: `Trigger orders are not supported for this asset. asset=${YES_7}` },
      { error: `Reduce only orders are not supported for this asset. asset=${YES_7}` },
      { resting: { oid: expect.any(Number) as number } },
    ]);
    expect(h.venue.openOrders(MASTER.address).map((o) => [o.outcome_id, o.side, o.direction, o.time_in_force])).toEqual([
      ['out-8', 1, 'sell', 'gtc'],
      ['out-7', 0, 'buy', 'alo'],
    ]);
  });

  it('the signer must be the master or its approved agent; vaultAddress places on the subaccount', async () => {
    const h = await withAgent();
    const stranger = await h.venue.handleAction(await l1Body(STRANGER, orderAction([limit(YES_7, '0.5', '20')]), h.nonce()), 'exchange');
    expect(stranger).toEqual({ kind: 'answer', body: { status: 'err', response: `User or API Wallet ${STRANGER.address} does not exist.` } });
    statuses(await h.venue.handleAction(await l1Body(MASTER, orderAction([limit(YES_7, '0.5', '20')]), h.nonce()), 'exchange'));
    statuses(await h.venue.handleAction(await l1Body(AGENT_A, orderAction([limit(YES_7, '0.5', '30')]), h.nonce(), SUB), 'exchange'));
    expect(h.venue.openOrders(MASTER.address).map((o) => o.original_quantity)).toEqual(['20']);
    expect(h.venue.openOrders(SUB).map((o) => o.original_quantity)).toEqual(['30']);
    // OTHER_MASTER's agent it is not: refused as an unknown signer for that vault.
    const foreign = await h.venue.handleAction(await l1Body(OTHER_MASTER, orderAction([limit(YES_7, '0.5', '20')]), h.nonce(), SUB), 'exchange');
    expect(foreign).toEqual({ kind: 'answer', body: { status: 'err', response: `User or API Wallet ${OTHER_MASTER.address} does not exist.` } });
  });

  it('a builder must be approved by the master for at least the fee', async () => {
    const h = await withAgent();
    const builder = `0x${'b1'.repeat(20)}`;
    const send = async () => h.venue.handleAction(await l1Body(AGENT_A, orderAction([limit(YES_7, '0.5', '20')], { b: builder, f: 10 }), h.nonce()), 'exchange');
    expect(await send()).toEqual({ kind: 'answer', body: { status: 'err', response: 'Builder fee has not been approved.' } });
    await h.venue.handleAction(await approveBuilderFeeBody(MASTER, { builder, maxFeeRate: '0.005%', nonce: h.nonce() }), 'exchange');
    expect(await send()).toEqual({ kind: 'answer', body: { status: 'err', response: 'Builder fee has not been approved.' } });
    await h.venue.handleAction(await approveBuilderFeeBody(MASTER, { builder, maxFeeRate: '0.01%', nonce: h.nonce() }), 'exchange');
    expect(statuses(await send())).toEqual([{ resting: { oid: expect.any(Number) as number } }]);
  });

  it('the hash is over the action as received: the same keys in another order recover another signer', async () => {
    const h = await withAgent();
    const action = orderAction([limit(YES_7, '0.5', '20')]);
    const nonce = h.nonce();
    const body = (await l1Body(AGENT_A, action, nonce)) as { action: { orders: Array<Record<string, unknown>> } };
    const [o] = body.action.orders;
    const reordered = { ...body, action: { type: 'order', orders: [{ b: o?.b, a: o?.a, p: o?.p, s: o?.s, r: o?.r, t: o?.t }], grouping: 'na' } };
    const r = await h.venue.handleAction(reordered, 'exchange');
    expect(r).toMatchObject({ kind: 'answer', body: { status: 'err' } });
    expect((r as { body: { response: string } }).body.response).toMatch(/^User or API Wallet 0x[0-9a-f]{40} does not exist\.$/);
    expect(h.venue.openOrders(MASTER.address)).toEqual([]);
    // As signed, it rests.
    expect(statuses(await h.venue.handleAction(body, 'exchange'))).toHaveLength(1);
  });

  it('a body the venue cannot read is its 422 on /exchange; the REST path takes scheduleCancel only', async () => {
    const h = await withAgent();
    const unreadable = [
      { type: 'order', orders: 'none', grouping: 'na' },
      { type: 'order', orders: [{ ...limit(YES_7, '0.5', '20'), a: '100000070' }], grouping: 'na' },
      { type: 'order', orders: [{ ...limit(YES_7, '0.5', '20'), p: 0.5 }], grouping: 'na' },
      { type: 'order', orders: [{ ...limit(YES_7, '0.5', '20'), t: { limit: { tif: 'Day' } } }], grouping: 'na' },
      { type: 'order', orders: [{ ...limit(YES_7, '0.5', '20'), c: '0x12' }], grouping: 'na' },
      { type: 'order', orders: [limit(YES_7, '0.5', '20')], grouping: 'sometimes' },
      { type: 'cancel', cancels: [{ a: YES_7, o: '5' }] },
    ];
    for (const action of unreadable) {
      const r = await h.venue.handleAction(await l1Body(AGENT_A, action, h.nonce()), 'exchange');
      expect(r, JSON.stringify(action)).toEqual({ kind: 'http', status: 422, body: null, raw: 'Failed to deserialize the JSON body into the target type' });
    }
    const rest = await h.venue.handleAction(await l1Body(AGENT_A, orderAction([limit(YES_7, '0.5', '20')]), h.nonce()), 'rest');
    expect(rest).toMatchObject({ kind: 'http', status: 400, body: { error: { details: [{ field: 'action.type', reason: 'unsupported_action_type' }] } } });
    expect(h.venue.openOrders(MASTER.address)).toEqual([]);
  });
});

describe('cancel', () => {
  it('cancels an open order by asset and oid; a second cancel, another asset or another account\'s order is the venue\'s error', async () => {
    const h = await withAgent();
    const placed = statuses(await h.venue.handleAction(await l1Body(AGENT_A, orderAction([limit(YES_7, '0.5', '20'), limit(NO_8, '0.3', '50')]), h.nonce()), 'exchange')) as Array<{ resting: { oid: number } }>;
    const [first, second] = placed.map((s) => s.resting.oid) as [number, number];
    const other = h.venue.placeOrder(OTHER_MASTER.address, { outcome_id: 'out-7', side: 0, direction: 'buy', price: '0.2', quantity: '100' });

    const got = statuses(
      await h.venue.handleAction(
        await l1Body(AGENT_A, { type: 'cancel', cancels: [{ a: YES_7, o: first }, { a: YES_7, o: first }, { a: YES_7, o: second }, { a: YES_7, o: Number(other.venue_order_id) }] }, h.nonce()),
        'exchange',
      ),
    );
    const missing = `Order was never placed, already canceled, or filled. asset=${YES_7}`;
    expect(got).toEqual(['success', { error: missing }, { error: missing }, { error: missing }]);
    expect(h.venue.openOrders(MASTER.address).map((o) => Number(o.venue_order_id))).toEqual([second]);
    expect(h.venue.openOrders(OTHER_MASTER.address)).toHaveLength(1);
    expect(h.venue.closedOrders(MASTER.address)).toMatchObject([{ status: 'canceled', order: { venue_order_id: String(first), status: 'not_open' } }]);
    expect(h.venue.restingOrders('out-7')).toMatchObject([{ address: OTHER_MASTER.address }]);
  });
});
