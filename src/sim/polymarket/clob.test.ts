/**
 * ClobVenue on its own (no HTTP): pagination, per-route limits, restart gating, the admin routes,
 * order checks. Requests are signed with the venue SDK's own header and order builders.
 */
import { createL2Headers, OrderBuilder, OrderType, Side } from '@polymarket/clob-client';
import { orderToJson } from '@polymarket/clob-client/dist/utilities.js';
import { createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../time/fake-clock.js';
import type { SimRequest } from '../http-util.js';
import { ClobVenue, END_CURSOR, INITIAL_CURSOR, type ClobAccountCreds, type ClobVenueOptions } from './clob.js';
import { ASSUMPTIONS, CLOB_TEXTS } from './texts.js';

const signer = createWalletClient({ account: privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'), transport: http('http://127.0.0.1:9') });
const ADDRESS = signer.account.address.toLowerCase();

function venue(opts: Partial<ClobVenueOptions> = {}): { clock: FakeClock; v: ClobVenue; creds: ClobAccountCreds } {
  const clock = new FakeClock();
  const v = new ClobVenue({ clock, ...opts });
  return { clock, v, creds: v.createAccount(ADDRESS) };
}

async function call(v: ClobVenue, clock: FakeClock, creds: ClobAccountCreds | undefined, method: string, pathAndQuery: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const [path = '/', query = ''] = pathAndQuery.split('?');
  const text = body === undefined ? '' : JSON.stringify(body);
  const headers = creds ? await createL2Headers(signer, creds, { method, requestPath: path, ...(text ? { body: text } : {}) }, Math.floor(clock.nowMs() / 1000)) : {};
  const lower = Object.fromEntries(Object.entries(headers).map(([k, val]) => [k.toLowerCase(), String(val)]));
  const r = await v.handle({ method, path, query: new URLSearchParams(query), headers: lower, body: text, remoteAddress: '127.0.0.1' });
  return { status: r.status, body: r.body };
}

async function orderBody(v: ClobVenue, creds: ClobAccountCreds, price: number, opts: { type?: OrderType; postOnly?: boolean; expiration?: number; market?: number; tickSize?: '0.01' | '0.001'; size?: number } = {}): Promise<unknown> {
  const m = v.markets.markets[opts.market ?? 0];
  if (!m) throw new Error('no market');
  const o = await new OrderBuilder(signer, 137).buildOrder(
    { tokenID: m.tokens[0].tokenId, price, size: opts.size ?? 10, side: Side.BUY, ...(opts.expiration ? { expiration: opts.expiration } : {}) },
    { tickSize: opts.tickSize ?? (m.tickSize as '0.01'), negRisk: m.negRisk },
  );
  return orderToJson(o, creds.key, opts.type ?? OrderType.GTC, false, opts.postOnly);
}

function admin(v: ClobVenue, method: string, path: string, body?: unknown, query = ''): { status: number; body: unknown } {
  const req: SimRequest = { method, path, query: new URLSearchParams(query), headers: {}, body, nowMs: 0, remoteAddress: '127.0.0.1' };
  const r = v.admin(req);
  return { status: r.status, body: r.body };
}

describe('ClobVenue', () => {
  it('pages open orders with base64 offsets and ends with LTE=', async () => {
    const { clock, v, creds } = venue({ openOrdersPageSize: 2 });
    for (const price of [0.1, 0.2, 0.3, 0.4, 0.5]) expect((await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, price))).status).toBe(200);
    const seen: string[] = [];
    let cursor = INITIAL_CURSOR;
    const cursors: string[] = [];
    while (cursor !== END_CURSOR) {
      const r = (await call(v, clock, creds, 'GET', `/data/orders?next_cursor=${encodeURIComponent(cursor)}`)).body as { data: Array<{ price: string }>; next_cursor: string; count: number; limit: number };
      expect(r.limit).toBe(2);
      expect(r.count).toBe(r.data.length);
      seen.push(...r.data.map((o) => o.price));
      cursor = r.next_cursor;
      cursors.push(cursor);
    }
    expect(seen).toEqual(['0.1', '0.2', '0.3', '0.4', '0.5']);
    expect(cursors).toEqual([Buffer.from('2').toString('base64'), Buffer.from('4').toString('base64'), END_CURSOR]);
    expect((await call(v, clock, creds, 'GET', '/data/orders?next_cursor=bm9wZQ==')).status).toBe(400);
  });

  it('checks orders: tick, post-only order types, FOK (no counterparty), GTD in the past, duplicates, unknown tokens', async () => {
    const { clock, v, creds } = venue();
    expect(await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.5, { type: OrderType.FOK }))).toEqual({ status: 400, body: { error: ASSUMPTIONS.unfillableText } });
    expect(await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.5, { type: OrderType.FAK }))).toEqual({ status: 400, body: { error: ASSUMPTIONS.unfillableText } });
    const past = Math.floor(clock.nowMs() / 1000) - 1;
    expect((await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.5, { type: OrderType.GTD, expiration: past }))).status).toBe(400);
    const body = (await orderBody(v, creds, 0.5)) as { order: Record<string, unknown> };
    expect((await call(v, clock, creds, 'POST', '/order', body)).status).toBe(200);
    expect((await call(v, clock, creds, 'POST', '/order', body)).status).toBe(400); // the same order again
    expect(await call(v, clock, creds, 'POST', '/order', { ...body, order: { ...body.order, tokenId: '12345' } })).toEqual({ status: 400, body: { error: CLOB_TEXTS.invalidTokenId } });
    expect(await call(v, clock, creds, 'POST', '/order', { ...body, owner: v.createAccount(ADDRESS, 5).key })).toEqual({ status: 400, body: { error: CLOB_TEXTS.ownerMismatch } });
    expect(await call(v, clock, creds, 'POST', '/order', { nonsense: true })).toEqual({ status: 400, body: { error: CLOB_TEXTS.invalidPayload } });
    expect(await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.5, { size: 4.99 }))).toEqual({ status: 400, body: { error: 'Size (4.99) lower than the minimum: 5' } });
    expect((await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.5, { size: 5 }))).status).toBe(200);
    // 0.123 is on the tick of the 0.001 market, off the tick of the 0.01 one (signed as if it were finer).
    expect((await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.123, { market: 2 }))).status).toBe(200);
    const offTick = await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.123, { market: 0, tickSize: '0.001' }));
    expect(offTick.status).toBe(400);
    expect((offTick.body as { error: string }).error).toMatch(/^invalid price/);
    // A GTD order leaves the book at its expiration.
    const soon = Math.floor(clock.nowMs() / 1000) + 120;
    expect((await call(v, clock, creds, 'POST', '/order', await orderBody(v, creds, 0.25, { type: OrderType.GTD, expiration: soon }))).status).toBe(200);
    expect(v.openOrders(ADDRESS)).toHaveLength(4);
    await clock.advance(120_000);
    expect(v.openOrders(ADDRESS)).toHaveLength(3);
  });

  it('limits DELETE /cancel-all to 250 per 10 s, apart from the general window', async () => {
    const { clock, v, creds } = venue();
    for (let i = 0; i < 250; i++) expect((await call(v, clock, creds, 'DELETE', '/cancel-all')).status).toBe(200);
    expect(await call(v, clock, creds, 'DELETE', '/cancel-all')).toEqual({ status: 429, body: { error: CLOB_TEXTS.tooManyRequests } });
    expect((await call(v, clock, creds, 'GET', '/data/orders')).status).toBe(200);
    await clock.advance(10_000);
    expect((await call(v, clock, creds, 'DELETE', '/cancel-all')).status).toBe(200);
  });

  it('answers 425 on the order routes, heartbeats and order reads during a restart, not on /time or the key routes', async () => {
    const { clock, v, creds } = venue();
    admin(v, 'POST', '/_sim/clob/restart', {});
    for (const [method, path] of [
      ['POST', '/order'],
      ['DELETE', '/order'],
      ['DELETE', '/orders'],
      ['DELETE', '/cancel-all'],
      ['GET', '/data/orders'],
      ['POST', '/v1/heartbeats'],
      ['POST', '/heartbeats'],
    ] as const) {
      expect((await call(v, clock, creds, method, path, method === 'GET' ? undefined : {})).status, `${method} ${path}`).toBe(425);
    }
    expect((await call(v, clock, undefined, 'GET', '/time')).status).toBe(200);
    expect((await call(v, clock, creds, 'GET', '/auth/api-keys')).body).toEqual({ apiKeys: [creds.key] });
    expect((await call(v, clock, creds, 'GET', '/nope')).status).toBe(404);
  });

  it('admin: accounts, state, settings (restart heartbeat mode, null while live), bad input', async () => {
    const { clock, v, creds } = venue();
    expect(admin(v, 'POST', '/_sim/clob/accounts', { address: ADDRESS }).body).toEqual(creds);
    expect(admin(v, 'POST', '/_sim/clob/accounts', { address: 'nope' }).status).toBe(400);
    expect(admin(v, 'POST', '/_sim/clob/accounts', {}).status).toBe(400);
    expect(admin(v, 'POST', '/_sim/clob/settings', { restartHeartbeats: 'maybe' }).status).toBe(400);
    expect(admin(v, 'POST', '/_sim/clob/settings', { restartHeartbeats: 'suspend', nullWhileLive: 'restart' }).body).toMatchObject({ restartHeartbeats: 'suspend' });
    const first = (await call(v, clock, creds, 'POST', '/v1/heartbeats', { heartbeat_id: null })).body as { heartbeat_id: string };
    const again = (await call(v, clock, creds, 'POST', '/v1/heartbeats', { heartbeat_id: null })).body as { heartbeat_id: string };
    expect(again.heartbeat_id).not.toBe(first.heartbeat_id);
    expect(admin(v, 'GET', '/_sim/clob/state', undefined, `address=${ADDRESS}`).body).toMatchObject({ phase: 'open', heartbeat: { heartbeatId: again.heartbeat_id }, openOrders: 0, fires: [] });
    expect(admin(v, 'GET', '/_sim/clob/heartbeats', undefined, `address=${ADDRESS}`).body).toMatchObject({ heartbeats: [{ address: ADDRESS.toLowerCase(), refused: 0, live: true }] });
    expect(admin(v, 'GET', '/_sim/clob/orders').status).toBe(400);
    expect(admin(v, 'GET', '/_sim/clob/nothing').status).toBe(404);
    // A heartbeat with no body starts a chain as null does (the API reference's curl sends none).
    const { clock: c2, v: v2, creds: k2 } = venue();
    expect((await call(v2, c2, k2, 'POST', '/heartbeats')).status).toBe(200);
    expect((await call(v2, c2, k2, 'POST', '/heartbeats', { heartbeat_id: 5 })).status).toBe(400);
  });
});
