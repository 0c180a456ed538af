/**
 * The simulator's Polymarket CLOB (src/sim/polymarket/) driven by the venue's own TypeScript client,
 * `@polymarket/clob-client`, as a bot would drive the venue: host = the simulator + `/clob`, a viem
 * wallet client as signer. The SDK is the oracle for what goes on the wire (L1 ClobAuth headers,
 * L2 HMAC headers, the signed order, the heartbeat body); the simulator checks all of it with its
 * own code.
 *
 * Timelines (the 10 s heartbeat lapse, restarts) run in virtual time: the simulator's clock is a
 * FakeClock that starts at the host's time, and the client reads the venue's `/time` for its
 * timestamps (`useServerTime`), so no test waits in real time.
 */
import { ClobClient, createL2Headers, OrderType, Side, type ApiKeyCreds } from '@polymarket/clob-client';
import { request } from 'undici';
import { createWalletClient, http, type WalletClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { polygon } from 'viem/chains';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOB_ASSUMPTIONS, CLOB_TEXTS } from '../src/sim/polymarket/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../src/sim/simulator.js';
import { FakeClock } from '../src/time/fake-clock.js';

const KEY_A = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const KEY_B = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';

function wallet(pk: `0x${string}`): WalletClient {
  return createWalletClient({ account: privateKeyToAccount(pk), chain: polygon, transport: http('http://127.0.0.1:9') });
}

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

async function sim(opts: SimulatorOptions = {}): Promise<Simulator> {
  const s = await startSimulator({ port: 0, ...opts });
  sims.push(s);
  return s;
}

/** A bot's client: L1 only (no creds) or L2 with creds; venue time for its timestamps when asked. */
function client(s: Simulator, signer: WalletClient, creds?: ApiKeyCreds, useServerTime = false): ClobClient {
  return new ClobClient(s.clobUrl, 137, signer, creds, undefined, undefined, undefined, useServerTime);
}

function tokenOf(s: Simulator, market = 0, outcome = 0): string {
  const m = s.clob.markets.markets[market];
  if (!m) throw new Error('no such fixture market');
  return m.tokens[outcome]?.tokenId as string;
}

/** Rests one GTC buy through the SDK; its order id. */
async function restOrder(c: ClobClient, tokenID: string, price = 0.5, size = 10, postOnly = false): Promise<unknown> {
  const order = await c.createOrder({ tokenID, price, size, side: Side.BUY });
  return c.postOrder(order, OrderType.GTC, false, postOnly);
}

describe('Polymarket CLOB: a bot on the SDK against the simulator', () => {
  it('creates or derives its API key with L1 headers, rests orders (plain and neg-risk) and reads them back', async () => {
    const s = await sim();
    const signer = wallet(KEY_A);
    const address = (signer.account?.address ?? '').toLowerCase();
    const l1 = client(s, signer);
    const creds = await l1.createOrDeriveApiKey();
    expect(creds.key).toMatch(/^[0-9a-f-]{36}$/);
    // The second time the create is refused (the key exists) and the SDK derives the same one.
    expect(await l1.createApiKey()).toMatchObject({ key: undefined });
    expect(await l1.createOrDeriveApiKey()).toEqual(creds);
    expect(await l1.deriveApiKey()).toEqual(creds);
    // Another nonce is another key.
    expect((await l1.createApiKey(7)).key).not.toBe(creds.key);

    const bot = client(s, signer, creds);
    const posted = (await restOrder(bot, tokenOf(s, 0, 0), 0.53, 12)) as { success: boolean; orderID: string; status: string };
    expect(posted).toMatchObject({ success: true, status: 'live', errorMsg: '' });
    expect(posted.orderID).toMatch(/^0x[0-9a-f]{64}$/);
    const negRisk = (await restOrder(bot, tokenOf(s, 1, 1), 0.2, 5)) as { success: boolean; orderID: string };
    expect(negRisk.success).toBe(true);

    const open = await bot.getOpenOrders();
    expect(open.map((o) => o.id).sort()).toEqual([posted.orderID, negRisk.orderID].sort());
    const first = open.find((o) => o.id === posted.orderID);
    expect(first).toMatchObject({ status: 'LIVE', side: 'BUY', price: '0.53', original_size: '12', size_matched: '0', asset_id: tokenOf(s, 0, 0), outcome: 'Yes', owner: creds.key, order_type: 'GTC' });
    expect(s.clob.openOrders(address).map((o) => o.id).sort()).toEqual([posted.orderID, negRisk.orderID].sort());
    expect(await bot.getOpenOrders({ asset_id: tokenOf(s, 1, 1) })).toHaveLength(1);

    // Cancel one, then all.
    expect(await bot.cancelOrder({ orderID: posted.orderID })).toEqual({ canceled: [posted.orderID], not_canceled: {} });
    expect(await bot.cancelOrder({ orderID: posted.orderID })).toMatchObject({ canceled: [], not_canceled: { [posted.orderID]: CLOB_ASSUMPTIONS.notCanceledReason } });
    expect(await bot.cancelAll()).toEqual({ canceled: [negRisk.orderID], not_canceled: {} });
    expect(await bot.getOpenOrders()).toEqual([]);
    expect(await bot.getServerTime()).toBe(Math.floor(s.clock.nowMs() / 1000));
    expect(await bot.getOk()).toBe('OK');
    expect(await bot.getOrderBook(tokenOf(s, 1, 0))).toMatchObject({ asset_id: tokenOf(s, 1, 0), bids: [], asks: [], tick_size: '0.01', neg_risk: true });
  });

  it('refuses an order signed by another wallet, or signed for the wrong exchange', async () => {
    const s = await sim();
    const a = wallet(KEY_A);
    const b = wallet(KEY_B);
    const credsA = s.clob.createAccount(a.account?.address as string);
    // B's client carries A's API key: the order's signer is B, not the key's address.
    const mixed = new ClobClient(s.clobUrl, 137, b, credsA);
    const order = await mixed.createOrder({ tokenID: tokenOf(s), price: 0.5, size: 10, side: Side.BUY });
    expect(await mixed.postOrder(order, OrderType.GTC)).toMatchObject({ status: 401 }); // POLY_ADDRESS is B's: the key is not B's
    const bot = client(s, a, credsA);
    // A's own L2 headers and key, but an order signed by B.
    expect(await bot.postOrder(order, OrderType.GTC)).toMatchObject({ error: CLOB_TEXTS.signerMismatch, status: 400 });
    const good = await bot.createOrder({ tokenID: tokenOf(s), price: 0.5, size: 10, side: Side.BUY });
    // Signed for the neg-risk exchange on a plain market: the signature recovers someone else.
    const wrongDomain = await bot.createOrder({ tokenID: tokenOf(s), price: 0.5, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: true });
    expect(await bot.postOrder(wrongDomain, OrderType.GTC)).toMatchObject({ error: CLOB_TEXTS.invalidSignature, status: 400 });
    // A tampered amount breaks the signature too.
    expect(await bot.postOrder({ ...good, makerAmount: String(BigInt(good.makerAmount) + 10_000n) }, OrderType.GTC)).toMatchObject({ status: 400 });
    expect(await bot.getOpenOrders()).toEqual([]);
    expect(await bot.postOrder(good, OrderType.GTC)).toMatchObject({ success: true });
  });

  it('chains heartbeats: null starts, the returned id continues, a stale id gets 400 with the current id', async () => {
    const s = await sim();
    const signer = wallet(KEY_A);
    const bot = client(s, signer, s.clob.createAccount(signer.account?.address as string));
    const first = (await bot.postHeartbeat(null)) as { heartbeat_id: string };
    expect(first.heartbeat_id).toMatch(/^[0-9a-f-]{36}$/);
    const second = (await bot.postHeartbeat(first.heartbeat_id)) as { heartbeat_id: string };
    expect(second.heartbeat_id).not.toBe(first.heartbeat_id);
    expect(await bot.postHeartbeat(first.heartbeat_id)).toEqual({ error: CLOB_TEXTS.invalidHeartbeat, heartbeat_id: second.heartbeat_id, status: 400 });
    // null while the chain is live: refused, naming the live id (ASSUMPTIONS.nullWhileLive).
    expect(await bot.postHeartbeat(null)).toEqual({ error: CLOB_TEXTS.invalidHeartbeat, heartbeat_id: second.heartbeat_id, status: 400 });
    // The id a refusal names continues the chain.
    expect(await bot.postHeartbeat(second.heartbeat_id)).toMatchObject({ heartbeat_id: expect.any(String) });
    // `POST /heartbeats` (the API reference's path) is the same chain.
    const chain = s.clob.heartbeats.chain(signer.account?.address as string);
    const viaDocs = await signedPost(s, signer, bot, '/heartbeats', { heartbeat_id: chain?.heartbeatId ?? null });
    expect(viaDocs.status).toBe(200);
    expect(s.clob.heartbeats.chain(signer.account?.address as string)?.heartbeatId).toBe((viaDocs.body as { heartbeat_id: string }).heartbeat_id);
  });

  it('refuses a bad HMAC, a wrong passphrase, an unknown key, a foreign address and a stale timestamp with 401', async () => {
    const s = await sim();
    const a = wallet(KEY_A);
    const creds = s.clob.createAccount(a.account?.address as string);
    const unauthorized = { error: CLOB_TEXTS.unauthorized, status: 401 };
    const flipped = creds.secret.startsWith('A') ? `B${creds.secret.slice(1)}` : `A${creds.secret.slice(1)}`;
    expect(await client(s, a, { ...creds, secret: flipped }).postHeartbeat(null)).toEqual(unauthorized);
    expect(await client(s, a, { ...creds, passphrase: `${creds.passphrase.slice(0, -1)}0` === creds.passphrase ? `${creds.passphrase.slice(0, -1)}1` : `${creds.passphrase.slice(0, -1)}0` }).postHeartbeat(null)).toEqual(unauthorized);
    expect(await client(s, a, { ...creds, key: '00000000-0000-0000-0000-000000000000' }).postHeartbeat(null)).toEqual(unauthorized);
    expect(await client(s, wallet(KEY_B), creds).postHeartbeat(null)).toEqual(unauthorized);
    // The venue clock 60 s ahead: the client's own timestamp is outside the window...
    s.faults.setClockOffset(60_000);
    expect(await client(s, a, creds).postHeartbeat(null)).toEqual(unauthorized);
    // ...and fine when it reads the venue's time.
    expect(await client(s, a, creds, true).postHeartbeat(null)).toMatchObject({ heartbeat_id: expect.any(String) });
    // L1: a ClobAuth signed by another wallet than POLY_ADDRESS.
    const headers = await createL2Headers(a, creds, { method: 'GET', requestPath: '/auth/derive-api-key' });
    const l1 = await request(`${s.clobUrl}/auth/derive-api-key`, {
      headers: { POLY_ADDRESS: headers.POLY_ADDRESS, POLY_SIGNATURE: `0x${'11'.repeat(65)}`, POLY_TIMESTAMP: String(Math.floor(s.clock.nowMs() / 1000)), POLY_NONCE: '0' },
    });
    expect(l1.statusCode).toBe(401);
    expect(await l1.body.json()).toEqual({ error: CLOB_TEXTS.invalidL1 });
  });

  it('answers 429 past the general rate window (lowered through the admin API)', async () => {
    const s = await sim();
    const set = await request(`${s.baseUrl}/_sim/clob/rate-limits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ general: { limit: 5, windowSeconds: 10 } }) });
    expect(set.statusCode).toBe(200);
    await set.body.dump();
    const bot = client(s, wallet(KEY_A));
    for (let i = 0; i < 5; i++) expect(typeof (await bot.getServerTime())).toBe('number');
    expect(await bot.getServerTime()).toEqual({ error: CLOB_TEXTS.tooManyRequests, status: 429 });
  });
});

/** A signed L2 POST the SDK has no method for (the API reference's `/heartbeats`). */
async function signedPost(s: Simulator, signer: WalletClient, c: ClobClient, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const text = JSON.stringify(body);
  const creds = (c as unknown as { creds: ApiKeyCreds }).creds;
  const headers = await createL2Headers(signer, creds, { method: 'POST', requestPath: path, body: text }, Math.floor(s.clock.nowMs() / 1000));
  const r = await request(`${s.clobUrl}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: text });
  return { status: r.statusCode, body: await r.body.json() };
}

describe('Polymarket CLOB: the heartbeat lapse in virtual time', () => {
  it('cancels every open order 10 s after the last accepted heartbeat, exactly, and ends the chain', async () => {
    const clock = new FakeClock(Date.now());
    const s = await sim({ clock });
    const signer = wallet(KEY_A);
    const address = (signer.account?.address as string).toLowerCase();
    const bot = client(s, signer, s.clob.createAccount(address), true);
    const o1 = (await restOrder(bot, tokenOf(s, 0, 0))) as { orderID: string };
    const o2 = (await restOrder(bot, tokenOf(s, 2, 1), 0.123, 8)) as { orderID: string };
    // Orders without a started chain never lapse.
    await clock.advance(60_000);
    expect(s.clob.openOrders(address)).toHaveLength(2);

    const h1 = (await bot.postHeartbeat(null)) as { heartbeat_id: string };
    await clock.advance(9_999);
    const h2 = (await bot.postHeartbeat(h1.heartbeat_id)) as { heartbeat_id: string };
    const lastBeatMs = s.clock.nowMs();
    await clock.advance(9_999);
    expect(s.clob.fires()).toEqual([]);
    expect(await bot.getOpenOrders()).toHaveLength(2);
    await clock.advance(1);
    const fires = s.clob.fires(address);
    expect(fires).toHaveLength(1);
    expect(fires[0]).toMatchObject({ address, atMs: lastBeatMs + 10_000, deadlineMs: lastBeatMs + 10_000, lastBeatMs, heartbeatId: h2.heartbeat_id });
    expect([...(fires[0]?.cancelledOrderIds ?? [])].sort()).toEqual([o1.orderID, o2.orderID].sort());
    expect(await bot.getOpenOrders()).toEqual([]);

    // The chain ended: its last id is refused, naming no chain; null starts a new one.
    expect(await bot.postHeartbeat(h2.heartbeat_id)).toEqual({ error: CLOB_TEXTS.invalidHeartbeat, heartbeat_id: CLOB_ASSUMPTIONS.idWhenNoChain, status: 400 });
    expect(await bot.postHeartbeat(null)).toMatchObject({ heartbeat_id: expect.any(String) });

    // The admin API shows the same fire.
    const r = await request(`${s.baseUrl}/_sim/clob/fires?address=${address}`);
    expect(((await r.body.json()) as { fires: unknown[] }).fires).toEqual(fires);
  });

  it('serves the same venue in-process under the in-process origin + /clob', async () => {
    const clock = new FakeClock(Date.now());
    const s = await sim({ clock, listen: false });
    expect(s.clobUrl).toBe('http://sim.in-process/clob');
    const r = await request(`${s.clobUrl}/time`, { dispatcher: s.inProcess.dispatcher });
    expect(await r.body.json()).toBe(Math.floor(clock.nowMs() / 1000));
    const unsigned = await request(`${s.clobUrl}/v1/heartbeats`, { method: 'POST', dispatcher: s.inProcess.dispatcher, headers: { 'content-type': 'application/json' }, body: '{"heartbeat_id":null}' });
    expect(unsigned.statusCode).toBe(401);
    expect(await unsigned.body.json()).toEqual({ error: CLOB_TEXTS.unauthorized });
  });

  it('allows 9,000 requests per 10 s by default and refuses the next with 429 until the window moves', async () => {
    const clock = new FakeClock(Date.now());
    const s = await sim({ clock, listen: false });
    const get = async (): Promise<number> => {
      const r = await request(`${s.clobUrl}/time`, { dispatcher: s.inProcess.dispatcher });
      await r.body.dump();
      return r.statusCode;
    };
    const statuses = new Map<number, number>();
    for (let i = 0; i < 9_000; i++) {
      const st = await get();
      statuses.set(st, (statuses.get(st) ?? 0) + 1);
    }
    expect([...statuses]).toEqual([[200, 9_000]]);
    expect(await get()).toBe(429);
    await clock.advance(10_000);
    expect(await get()).toBe(200);
  }, 60_000);
});

describe('Polymarket CLOB: faults in front of it', () => {
  it('forces a status on one endpoint in the CLOB format; the Hyperliquid side\'s faults never reach it', async () => {
    const s = await sim();
    const signer = wallet(KEY_A);
    const bot = client(s, signer, s.clob.createAccount(signer.account?.address as string));
    const add = async (spec: unknown): Promise<number> => {
      const r = await request(`${s.baseUrl}/_sim/clob/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
      await r.body.dump();
      return r.statusCode;
    };
    expect(await add({ kind: 'status', status: 503, endpoint: 'POST /v1/heartbeats', count: 1 })).toBe(200);
    expect(await add({ kind: 'status', status: 503, path: 'rest' })).toBe(400);
    s.faults.forceStatus(500); // every Hyperliquid-side request, none of the CLOB's
    expect(await bot.getServerTime()).toEqual(expect.any(Number));
    expect(await bot.postHeartbeat(null)).toEqual({ error: 'Service Unavailable', status: 503 });
    expect(await bot.postHeartbeat(null)).toMatchObject({ heartbeat_id: expect.any(String) });
  });

  it('holds a heartbeat on the venue clock (latency): it is accepted, and its chain timed, when the hold ends', async () => {
    const clock = new FakeClock(Date.now());
    const s = await sim({ clock, listen: false });
    const signer = wallet(KEY_A);
    const address = (signer.account?.address as string).toLowerCase();
    const creds = s.clob.createAccount(address);
    s.clob.faults.latency(2_000, { endpoint: 'POST /v1/heartbeats' });
    const body = JSON.stringify({ heartbeat_id: null });
    const headers = await createL2Headers(signer, creds, { method: 'POST', requestPath: '/v1/heartbeats', body }, Math.floor(clock.nowMs() / 1000));
    const t0 = clock.nowMs();
    const pending = request(`${s.clobUrl}/v1/heartbeats`, { method: 'POST', dispatcher: s.inProcess.dispatcher, headers: { ...headers, 'content-type': 'application/json' }, body });
    while (s.inProcess.dispatcher.waitingOnClock() === 0) await new Promise((r) => setImmediate(r));
    expect(s.clob.heartbeats.chain(address)).toBeUndefined();
    await clock.advance(2_000);
    const r = await pending;
    expect(r.statusCode).toBe(200);
    await r.body.dump();
    expect(s.clob.heartbeats.chain(address)).toMatchObject({ lastBeatMs: t0 + 2_000, deadlineMs: t0 + 12_000 });
  });
});

describe('Polymarket CLOB: matching-engine restarts', () => {
  // Monday 30 November 2026, 20:00 America/New_York (EST, UTC-5) = Tuesday 01:00 UTC.
  const RESTART_MS = Date.UTC(2026, 11, 1, 1, 0, 0);

  it('pm_weekly_restart: 90 s of 425 on orders and heartbeats (the chain lapses meanwhile), then 2 min post-only', async () => {
    const clock = new FakeClock(RESTART_MS - 5_000);
    const s = await sim({ clock, clobProfile: 'pm_weekly_restart' });
    const signer = wallet(KEY_A);
    const address = (signer.account?.address as string).toLowerCase();
    const bot = client(s, signer, s.clob.createAccount(address), true);
    const resting = (await restOrder(bot, tokenOf(s))) as { orderID: string };
    const h = (await bot.postHeartbeat(null)) as { heartbeat_id: string };
    const beatMs = s.clock.nowMs();

    await clock.advance(5_000);
    expect(s.clob.phase()).toBe('restarting');
    expect(await bot.postHeartbeat(h.heartbeat_id)).toMatchObject({ status: 425 });
    const during = await bot.createOrder({ tokenID: tokenOf(s), price: 0.4, size: 10, side: Side.BUY });
    expect(await bot.postOrder(during, OrderType.GTC)).toMatchObject({ status: 425 });
    expect(await bot.cancelAll()).toMatchObject({ status: 425 });
    expect(await bot.getServerTime()).toBe(Math.floor(RESTART_MS / 1000)); // reads outside the engine still answer

    // `lapse` (the default): the timeout ran through the restart.
    await clock.advance(5_000);
    expect(s.clob.fires(address)).toEqual([expect.objectContaining({ atMs: beatMs + 10_000, cancelledOrderIds: [resting.orderID] })]);

    await clock.advance(84_999);
    expect(s.clob.phase()).toBe('restarting');
    await clock.advance(1);
    expect(s.clob.phase()).toBe('post_only');
    expect(await bot.postHeartbeat(null)).toMatchObject({ heartbeat_id: expect.any(String) });
    expect(await bot.postOrder(during, OrderType.GTC)).toMatchObject({ status: 400, error: CLOB_ASSUMPTIONS.postOnlyText });
    expect(await bot.postOrder(during, OrderType.GTC, false, true)).toMatchObject({ success: true });

    await clock.advance(119_999);
    expect(s.clob.phase()).toBe('post_only');
    await clock.advance(1);
    expect(s.clob.phase()).toBe('open');
    expect(await restOrder(bot, tokenOf(s), 0.3)).toMatchObject({ success: true });
  });

  it('suspend (a named choice): a restart triggered through the admin API holds the timeout; the chain lapses 10 s after the engine is back', async () => {
    const clock = new FakeClock(Date.now());
    const s = await sim({ clock, clob: { restartHeartbeats: 'suspend' } });
    const signer = wallet(KEY_A);
    const address = (signer.account?.address as string).toLowerCase();
    const bot = client(s, signer, s.clob.createAccount(address), true);
    await restOrder(bot, tokenOf(s));
    const h = (await bot.postHeartbeat(null)) as { heartbeat_id: string };
    await clock.advance(4_000);
    const r = await request(`${s.baseUrl}/_sim/clob/restart`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const { window } = (await r.body.json()) as { window: { startMs: number; backMs: number; postOnlyEndMs: number } };
    expect(window.backMs - window.startMs).toBe(90_000);
    expect(window.postOnlyEndMs - window.backMs).toBe(120_000);
    expect(await bot.postHeartbeat(h.heartbeat_id)).toMatchObject({ status: 425 });
    await clock.advance(90_000 + 9_999);
    expect(s.clob.fires()).toEqual([]);
    expect(s.clob.openOrders(address)).toHaveLength(1);
    // The chain kept its id: continuing it after the restart works.
    const next = (await bot.postHeartbeat(h.heartbeat_id)) as { heartbeat_id: string };
    expect(next.heartbeat_id).toEqual(expect.any(String));
    await clock.advance(10_000);
    expect(s.clob.fires(address)).toHaveLength(1);
    expect(s.clob.openOrders(address)).toEqual([]);
  });
});

describe('Polymarket CLOB: heartbeat path profiles', () => {
  it('pm_heartbeats_docs_only: the SDK path /v1/heartbeats is 404, /heartbeats works', async () => {
    const s = await sim({ clobProfile: 'pm_heartbeats_docs_only' });
    const signer = wallet(KEY_A);
    const bot = client(s, signer, s.clob.createAccount(signer.account?.address as string));
    expect(await bot.postHeartbeat(null)).toMatchObject({ status: 404 });
    const viaDocs = await signedPost(s, signer, bot, '/heartbeats', { heartbeat_id: null });
    expect(viaDocs.status).toBe(200);
  });

  it('pm_heartbeats_v1_only: /heartbeats is 404, the SDK path works', async () => {
    const s = await sim({ clobProfile: 'pm_heartbeats_v1_only' });
    const signer = wallet(KEY_A);
    const bot = client(s, signer, s.clob.createAccount(signer.account?.address as string));
    expect((await signedPost(s, signer, bot, '/heartbeats', { heartbeat_id: null })).status).toBe(404);
    expect(await bot.postHeartbeat(null)).toMatchObject({ heartbeat_id: expect.any(String) });
  });

  it('pm_heartbeat_error_msg: a refused beat names its text under error_msg, still with the current id', async () => {
    const s = await sim({ clobProfile: 'pm_heartbeat_error_msg' });
    const signer = wallet(KEY_A);
    const bot = client(s, signer, s.clob.createAccount(signer.account?.address as string));
    const first = (await bot.postHeartbeat(null)) as { heartbeat_id: string };
    expect(await bot.postHeartbeat('stale')).toEqual({ error: { error_msg: CLOB_TEXTS.invalidHeartbeat, heartbeat_id: first.heartbeat_id }, status: 400 });
  });

  it('refuses an unknown CLOB profile by name at start', async () => {
    await expect(startSimulator({ listen: false, clobProfile: 'pm_weekly_restart+pm_nope' })).rejects.toThrow(/unknown CLOB profile 'pm_nope'/);
  });

  it('creates accounts through the admin API, idempotently', async () => {
    const s = await sim();
    const address = wallet(KEY_B).account?.address as string;
    const post = async (): Promise<unknown> => {
      const r = await request(`${s.baseUrl}/_sim/clob/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address }) });
      expect(r.statusCode).toBe(200);
      return r.body.json();
    };
    const creds = await post();
    expect(creds).toEqual({ address: address.toLowerCase(), key: expect.any(String), secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}=$/), passphrase: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await post()).toEqual(creds);
    // The SDK derives the same credentials with its L1 proof.
    expect(await client(s, wallet(KEY_B)).deriveApiKey()).toEqual({ key: (creds as { key: string }).key, secret: (creds as { secret: string }).secret, passphrase: (creds as { passphrase: string }).passphrase });
  });
});
