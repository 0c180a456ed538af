/**
 * The typed client against the simulator over real loopback HTTP and WebSocket: every endpoint of
 * spec part 4 (4.1 to 4.16), every error status the spec lists for it, signed actions on both
 * paths, and WebSocket reconnects after a drop and after a silent peer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/time/clock.js';
import { startSimulator, type Simulator } from '../src/sim/simulator.js';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { buildApproveAgent, buildApproveBuilderFee, buildScheduleCancel } from '../src/venue/actions.js';
import { ActionError, DecodeError, RestError } from '../src/venue/errors.js';
import { ExchangeClient } from '../src/venue/exchange.js';
import { HttpTransport } from '../src/venue/http.js';
import { RestClient } from '../src/venue/rest.js';
import { signerFromPrivateKey } from '../src/venue/signing/signer.js';
import { NotificationClient, type NotificationClientEvent } from '../src/venue/ws.js';

const ALICE = demoAddress('alice');
const ALICE_SUB = demoAddress('alice-sub');
const BOB = demoAddress('bob');
const UNKNOWN = '0x' + '9'.repeat(40);

let sim: Simulator;
let transport: HttpTransport;
let rest: RestClient;
let exchange: ExchangeClient;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, rateLimits: { global: { limit: 100_000, windowSeconds: 60 }, scheduleCancel: { limit: 100_000, windowSeconds: 60 } } });
  transport = new HttpTransport({ requestTimeoutMs: 3_000 });
  rest = new RestClient({ baseUrl: sim.baseUrl, transport });
  exchange = new ExchangeClient({ exchangeUrl: sim.exchangeUrl, transport });
});

afterAll(async () => {
  await transport.close();
  await sim.stop();
});

async function expectRest(p: Promise<unknown>, httpStatus: number, status: string): Promise<RestError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(RestError);
  const r = e as RestError;
  expect(r.httpStatus).toBe(httpStatus);
  expect(r.body.status).toBe(status);
  expect(r.body.code).toBe(httpStatus);
  return r;
}

/** 500 and 503 for one endpoint, through the simulator's faults. */
async function serverErrors(endpoint: string, call: () => Promise<unknown>): Promise<void> {
  sim.faults.add({ kind: 'status', status: 500, endpoint, count: 1 });
  await expectRest(call(), 500, 'INTERNAL');
  sim.faults.add({ kind: 'status', status: 503, endpoint, count: 1, reason: 'index_lagging' });
  const e = await expectRest(call(), 503, 'UNAVAILABLE');
  expect(e.dependency?.reason).toBe('index_lagging');
}

/** A request with the wrong method on a known path answers 405 in the envelope. */
async function methodNotAllowed(path: string): Promise<void> {
  const res = await transport.request({ endpoint: 'test', method: 'POST', url: `${sim.baseUrl}${path}`, json: {} });
  expect(res.status).toBe(405);
  const body = JSON.parse(res.body.toString('utf8')) as { error: { status: string; code: number } };
  expect(body.error).toMatchObject({ status: 'METHOD_NOT_ALLOWED', code: 405 });
}

describe('REST reads (4.1 to 4.12)', () => {
  it('4.1 accounts: main with subaccounts, subaccount with parent; 400, 404, 405, 500, 503', async () => {
    const main = await rest.getAccount(ALICE);
    expect(main.account_type).toBe('main');
    expect(main.subaccounts?.map((s) => s.address)).toContain(ALICE_SUB);
    const sub = await rest.getAccount(ALICE_SUB);
    expect(sub.account_type).toBe('subaccount');
    expect(sub.parent?.address).toBe(ALICE);
    const bad = await expectRest(rest.getAccount('0x12'), 400, 'INVALID_ARGUMENT');
    expect(bad.fieldViolations[0]?.field).toBe('address');
    await expectRest(rest.getAccount(UNKNOWN), 404, 'NOT_FOUND');
    await methodNotAllowed(`/v1/accounts/${ALICE}`);
    await serverErrors('GET /v1/accounts/{address}', () => rest.getAccount(ALICE));
  });

  it('4.2 orders: every cursor page, filters, include with dedup; 400, 404, 405, 500, 503', async () => {
    const outcome = sim.catalog.tradableOutcomeIds()[0]!;
    for (let i = 0; i < 7; i++) sim.state.placeOrder(BOB, { outcome_id: outcome, side: 0, direction: 'buy', price: `0.${10 + i}`, quantity: '5' });
    const all = await rest.allOrders(BOB, { limit: 3, include: 'outcome' } as never);
    expect(all.data.length).toBe(sim.state.openOrders(BOB).length);
    expect(new Set(all.data.map((o) => o.order_id)).size).toBe(all.data.length);
    for (const o of all.data) {
      expect(o.status).toBe('open');
      expect(typeof o.price).toBe('string');
    }
    const ids = new Set(all.included.outcomes.map((o) => o.id));
    expect(ids.size).toBe(all.included.outcomes.length);
    expect(ids.has(outcome)).toBe(true);
    const page = await rest.listOrders(BOB, { outcome_id: outcome, limit: 2 });
    expect(page.data!.every((o) => o.outcome_id === outcome)).toBe(true);
    expect(page.next_cursor).toBeTruthy();
    const withEvents = await rest.listOrders(BOB, { include: 'event' } as never);
    expect(withEvents.included?.events?.length).toBeGreaterThan(0);
    await expectRest(rest.listOrders(BOB, { cursor: 'not-a-cursor' }), 400, 'INVALID_ARGUMENT');
    await expectRest(rest.listOrders(BOB, { limit: 0 }), 400, 'INVALID_ARGUMENT');
    await expectRest(rest.listOrders(UNKNOWN), 404, 'NOT_FOUND');
    await methodNotAllowed(`/v1/accounts/${BOB}/orders`);
    await serverErrors('GET /v1/accounts/{address}/orders', () => rest.listOrders(BOB));
  });

  it('4.3 positions: a main account includes its subaccounts; as_of; 400, 404, 405, 500, 503', async () => {
    const main = await rest.allPositions(ALICE);
    const sub = await rest.allPositions(ALICE_SUB);
    expect(main.data.length).toBeGreaterThanOrEqual(sub.data.length);
    expect(sub.data.every((p) => p.account?.subaccount?.address === ALICE_SUB)).toBe(true);
    const page = await rest.listPositions(ALICE);
    expect(page.as_of).toMatch(/^\d{4}-\d\d-\d\dT/);
    for (const p of page.data ?? []) expect(p.value_usdc).toMatch(/^-?\d+(\.\d+)?$/);
    await expect(rest.listPositions(ALICE, { limit: -1 } as never)).rejects.toBeInstanceOf(RangeError); // refused before sending
    await expectRest(rest.listPositions(ALICE, { cursor: 'garbage' }), 400, 'INVALID_ARGUMENT');
    await expectRest(rest.listPositions(UNKNOWN), 404, 'NOT_FOUND');
    await methodNotAllowed(`/v1/accounts/${ALICE}/positions`);
    await serverErrors('GET /v1/accounts/{address}/positions', () => rest.listPositions(ALICE));
  });

  it('4.4 book and 4.5 stats: sides ordered 0 then 1, depth, include accounts; 400, 404, 405, 500, 503', async () => {
    const outcome = sim.catalog.tradableOutcomeIds()[0]!;
    const book = await rest.getBook(outcome, { depth: 0, include: ['accounts'] } as never);
    expect(book.sides?.map((s) => s.side)).toEqual([0, 1]);
    expect(book.depth).toBe(0);
    expect(book.accounts?.data?.length).toBeGreaterThan(0);
    const shallow = await rest.getBook(outcome);
    expect(shallow.depth).toBe(10);
    await expect(rest.getBook(outcome, { depth: -1 } as never)).rejects.toBeInstanceOf(RangeError); // refused before sending
    const raw = await transport.request({ endpoint: 'test', method: 'GET', url: `${sim.baseUrl}/v1/outcomes/${outcome}/book?depth=-1` });
    expect(raw.status).toBe(400);
    expect(JSON.parse(raw.body.toString()).error.details[0]).toMatchObject({ type: 'field_violation', field: 'depth' });
    await expectRest(rest.getBook('out_nope'), 404, 'NOT_FOUND');
    await methodNotAllowed(`/v1/outcomes/${outcome}/book`);
    await serverErrors('GET /v1/outcomes/{id}/book', () => rest.getBook(outcome));

    const stats = await rest.getStats(outcome);
    expect(stats.sides?.map((s) => s.side)).toEqual([0, 1]);
    expect(stats.volume_usdc).toMatch(/^\d+(\.\d+)?$/);
    await expectRest(rest.getStats('out_nope'), 404, 'NOT_FOUND');
    await expectRest(rest.getStats('bad id!'), 400, 'INVALID_ARGUMENT');
    await methodNotAllowed(`/v1/outcomes/${outcome}/stats`);
    await serverErrors('GET /v1/outcomes/{id}/stats', () => rest.getStats(outcome));
  });

  it('4.6 events: nullable and omitted-key rules survive the decoder; 400, 404, 405, 500, 503', async () => {
    const events = sim.catalog.events();
    let sawContest = false;
    let sawNoParticipants = false;
    for (const ev of events) {
      const got = await rest.getEvent(ev.id!);
      expect(got.id).toBe(ev.id);
      for (const o of got.outcomes ?? []) expect(o.sides?.length).toBe(2);
      if (got.contest) sawContest = true;
      if (!('participants' in got)) sawNoParticipants = true;
    }
    expect(sawContest && sawNoParticipants).toBe(true);
    await expectRest(rest.getEvent('evt_nope'), 404, 'NOT_FOUND');
    await expectRest(rest.getEvent('bad id!'), 400, 'INVALID_ARGUMENT');
    await methodNotAllowed(`/v1/events/${events[0]!.id}`);
    await serverErrors('GET /v1/events/{id}', () => rest.getEvent(events[0]!.id!));
  });

  it('4.7 participants (paged, filtered), 4.8 topics, 4.9 series, 4.10 providers, 4.11 templates, 4.12 health', async () => {
    const pages: number[] = [];
    for await (const p of rest.participantsPages({ limit: 7 })) pages.push(p.data?.length ?? 0);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(sim.catalog.participants().length);
    const topic = sim.catalog.topics()[0]!;
    const t = await rest.getTopic(topic.id!);
    expect(t.categories?.length).toBeGreaterThan(0);
    const filtered = await rest.listParticipants({ topic_id: topic.id! });
    expect((filtered.data ?? []).every((p) => p.topic_id === topic.id)).toBe(true);
    const series = sim.catalog.allSeries()[0]!;
    expect((await rest.getSeries(series.id!)).id).toBe(series.id);
    expect((await rest.listProviders()).data?.length).toBeGreaterThan(0);
    expect((await rest.listProviders({ series_id: 'no-such-series' })).data).toEqual([]);
    const templates = await rest.listTemplates();
    expect(new Set(templates.data?.map((x) => x.kind))).toEqual(new Set(['standalone', 'question', 'question_outcome']));
    const health = await rest.getHealth();
    expect(health.ok).toBe(true);
    expect(health.block).toMatch(/^\d+$/);

    await expectRest(rest.getTopic('no-such-topic'), 404, 'NOT_FOUND');
    await expectRest(rest.getSeries('no-such-series'), 404, 'NOT_FOUND');
    await expectRest(rest.listParticipants({ limit: 100_000 }), 400, 'INVALID_ARGUMENT');
    for (const path of ['/v1/participants', `/v1/topics/${topic.id}`, `/v1/series/${series.id}`, '/v1/providers', '/v1/templates', '/v1/health']) {
      await methodNotAllowed(path);
    }
    await serverErrors('GET /v1/participants', () => rest.listParticipants());
    await serverErrors('GET /v1/topics/{topic_id}', () => rest.getTopic(topic.id!));
    await serverErrors('GET /v1/series/{series_id}', () => rest.getSeries(series.id!));
    await serverErrors('GET /v1/providers', () => rest.listProviders());
    await serverErrors('GET /v1/templates', () => rest.listTemplates());
    await serverErrors('GET /v1/health', () => rest.getHealth());
  });

  it('hostile answers are typed errors, never success: HTML from a proxy, truncated JSON, a reset mid-response', async () => {
    sim.faults.add({ kind: 'body', mode: 'html', endpoint: 'GET /v1/health', count: 1 });
    const html = await rest.getHealth().catch((e: unknown) => e);
    expect(html).toBeInstanceOf(DecodeError);
    expect((html as DecodeError).reason).toBe('bad_status');
    sim.faults.add({ kind: 'body', mode: 'truncated', endpoint: 'GET /v1/health', count: 1 });
    const cut = await rest.getHealth().catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(DecodeError);
    expect((cut as DecodeError).reason).toBe('not_json');
    sim.faults.add({ kind: 'reset', endpoint: 'GET /v1/health', count: 1 });
    const reset = await rest.getHealth().catch((e: unknown) => e);
    expect((reset as { code?: string }).code).toMatch(/VENUE_(TRANSPORT|DECODE)_ERROR/);
  });
});

describe('trading and signed actions (4.13 to 4.15)', () => {
  const alice = signerFromPrivateKey(demoMasterKey('alice'));
  const carol = signerFromPrivateKey(demoMasterKey('carol'));
  let nonce = 0;
  const next = () => Math.max(sim.clock.nowMs(), ++nonce) + nonce;

  it('approveAgent, then scheduleCancel on both paths (REST trading endpoint and exchange), subaccount via vault, clear', async () => {
    const agent = signerFromPrivateKey('0x' + '5a'.repeat(32));
    const approve = await buildApproveAgent({ signer: alice, network: 'testnet', nonce: next(), agentAddress: agent.address, agentName: `client-test valid_until ${sim.clock.nowMs() + 86_400_000}` });
    expect((await exchange.post(approve)).status).toBe('ok');

    const viaRest = await buildScheduleCancel({ signer: agent, network: 'testnet', nonce: next(), timeMs: sim.clock.nowMs() + 60_000 });
    expect((await rest.scheduleCancel(viaRest)).status).toBe('ok');
    expect(sim.state.schedule(ALICE).timeMs).toBe(Number(viaRest.action.time));

    const viaExchange = await buildScheduleCancel({ signer: agent, network: 'testnet', nonce: next(), timeMs: sim.clock.nowMs() + 90_000 });
    expect((await exchange.post(viaExchange)).status).toBe('ok');
    expect(sim.state.schedule(ALICE).timeMs).toBe(Number(viaExchange.action.time));

    const sub = await buildScheduleCancel({ signer: agent, network: 'testnet', nonce: next(), timeMs: sim.clock.nowMs() + 60_000, vaultAddress: ALICE_SUB });
    expect((await rest.scheduleCancel(sub)).status).toBe('ok');
    expect(sim.state.schedule(ALICE_SUB).timeMs).toBeDefined();

    const clear = await buildScheduleCancel({ signer: agent, network: 'testnet', nonce: next() });
    expect('time' in clear.action).toBe(false);
    await rest.scheduleCancel(clear);
    expect(sim.state.schedule(ALICE).timeMs).toBeUndefined();
  });

  it('the venue\'s refusals on /exchange reach the keeper as the venue sends them: 422 text (spec dialect) and 200 err (wrong network)', async () => {
    const agent = signerFromPrivateKey('0x' + '5b'.repeat(32));
    const spec = await buildApproveAgent({ signer: alice, network: 'testnet', nonce: next(), agentAddress: agent.address, agentName: 'spec-dialect', chainField: 'venueChain' });
    const e = await exchange.post(spec).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DecodeError);
    expect(e).toMatchObject({ reason: 'bad_status', httpStatus: 422 });
    const mainnet = await buildApproveAgent({ signer: alice, network: 'mainnet', nonce: next(), agentAddress: agent.address, agentName: 'wrong-net' });
    const w = await exchange.post(mainnet).catch((x: unknown) => x);
    expect(w).toBeInstanceOf(ActionError);
    expect((w as ActionError).reason).toBe('other');
    expect(sim.state.agents(ALICE).map((a) => a.address)).not.toContain(agent.address.toLowerCase());
  });

  it('approveBuilderFee by the master', async () => {
    const body = await buildApproveBuilderFee({ signer: alice, network: 'testnet', nonce: next(), builder: '0x' + 'b1'.repeat(20), maxFeeRate: '0.01%' });
    expect((await exchange.post(body)).status).toBe('ok');
  });

  it('HTTP 200 status:err answers are typed ActionErrors: volume gate, unknown signer, nonce reuse, too early', async () => {
    const gate = await buildScheduleCancel({ signer: carol, network: 'testnet', nonce: next(), timeMs: sim.clock.nowMs() + 60_000 });
    const e1 = await rest.scheduleCancel(gate).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ActionError);
    expect((e1 as ActionError).reason).toBe('ineligible');

    const stranger = signerFromPrivateKey('0x' + '7c'.repeat(32));
    const e2 = await rest.scheduleCancel(await buildScheduleCancel({ signer: stranger, network: 'testnet', nonce: next(), timeMs: sim.clock.nowMs() + 60_000 })).catch((e: unknown) => e);
    expect((e2 as ActionError).reason).toBe('unknown_signer');

    const n = next();
    const once = await buildScheduleCancel({ signer: alice, network: 'testnet', nonce: n, timeMs: sim.clock.nowMs() + 60_000 });
    await exchange.post(once);
    const twice = await buildScheduleCancel({ signer: alice, network: 'testnet', nonce: n, timeMs: sim.clock.nowMs() + 61_000 });
    expect(((await exchange.post(twice).catch((e: unknown) => e)) as ActionError).reason).toBe('invalid_nonce');

    const early = await buildScheduleCancel({ signer: alice, network: 'testnet', nonce: next(), timeMs: sim.clock.nowMs() + 1_000 });
    expect(await exchange.post(early).catch((e: unknown) => e)).toBeInstanceOf(ActionError);
  });

  it('4.13 errors: 400 (wrong action type, bad body), 405, 429 with rate_limit details, 500, 503', async () => {
    const res = await transport.request({ endpoint: 'test', method: 'POST', url: `${sim.baseUrl}/v1/trading/orders/schedule-cancel`, json: { action: { type: 'order' }, nonce: 1, signature: { r: '0x1', s: '0x1', v: 27 } } });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).error.details[0]).toMatchObject({ type: 'field_violation', field: 'action.type' });
    const get = await transport.request({ endpoint: 'test', method: 'GET', url: `${sim.baseUrl}/v1/trading/orders/schedule-cancel` });
    expect(get.status).toBe(405);

    const body = await buildScheduleCancel({ signer: alice, network: 'testnet', nonce: next(), timeMs: sim.clock.nowMs() + 60_000 });
    sim.faults.add({ kind: 'status', status: 429, endpoint: 'POST /v1/trading/orders/schedule-cancel', scope: 'endpoint', retryAfterSeconds: 7, limit: 600, windowSeconds: 60, count: 1 });
    const rl = await expectRest(rest.scheduleCancel(body), 429, 'RESOURCE_EXHAUSTED');
    expect(rl.rateLimit).toMatchObject({ type: 'rate_limit', retry_after_seconds: 7, scope: 'endpoint', limit: 600, window_seconds: 60 });
    await serverErrors('POST /v1/trading/orders/schedule-cancel', () => rest.scheduleCancel(body));
  });

  it('the simulator\'s real rolling window: 429 with a retry_after that is enough', async () => {
    const s2 = await startSimulator({ port: 0, rateLimits: { global: { limit: 3, windowSeconds: 2 } } });
    const r2 = new RestClient({ baseUrl: s2.baseUrl, transport });
    try {
      for (let i = 0; i < 3; i++) await r2.getHealth();
      const e = await expectRest(r2.getHealth(), 429, 'RESOURCE_EXHAUSTED');
      expect(e.rateLimit).toMatchObject({ scope: 'global', limit: 3, window_seconds: 2 });
      const wait = e.rateLimit!.retry_after_seconds;
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(2);
      await new Promise((r) => setTimeout(r, wait * 1000 + 50));
      expect((await r2.getHealth()).ok).toBe(true);
    } finally {
      await s2.stop();
    }
  });
});

describe('WebSocket notifications (4.16) against the simulator', () => {
  function client(onEvent: (e: NotificationClientEvent) => void) {
    return new NotificationClient({ wsUrl: sim.wsUrl, clock: systemClock(), onEvent, pingEveryMs: 150, pongTimeoutMs: 400, backoff: { initialMs: 50, maxMs: 200 } });
  }
  const until = async (pred: () => boolean, ms = 5_000) => {
    const t0 = Date.now();
    while (!pred()) {
      if (Date.now() - t0 > ms) throw new Error('timeout');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('subscribe, ack, a fired cancel pushed as a notification', async () => {
    const events: NotificationClientEvent[] = [];
    const c = client((e) => events.push(e));
    c.start();
    c.subscribe(BOB);
    await until(() => c.isConfirmed(BOB));
    const bob = signerFromPrivateKey(demoMasterKey('bob'));
    sim.state.placeOrder(BOB, { outcome_id: sim.catalog.tradableOutcomeIds()[0]!, side: 1, direction: 'sell', price: '0.7', quantity: '3' });
    // 5.5 s ahead: the venue refuses less than 5 s, and this runs in real time beside the rest of
    // the suite (100 ms of margin once lost the race to signing and the request on a loaded machine).
    const body = await buildScheduleCancel({ signer: bob, network: 'testnet', nonce: Date.now() + 5, timeMs: sim.clock.nowMs() + 5_500 });
    await rest.scheduleCancel(body);
    await until(() => events.some((e) => e.type === 'notification'), 8_000);
    const n = events.find((e) => e.type === 'notification') as Extract<NotificationClientEvent, { type: 'notification' }>;
    expect(n.user).toBe(BOB);
    expect(n.text).toMatch(/cancel/i);
    expect(sim.state.openOrders(BOB).length).toBe(0);
    await c.stop();
  }, 15_000);

  it('reconnects and resubscribes after the server drops every connection', async () => {
    const events: NotificationClientEvent[] = [];
    const c = client((e) => events.push(e));
    c.start();
    c.subscribe(ALICE);
    await until(() => c.isConfirmed(ALICE));
    sim.ws.dropAll();
    await until(() => events.some((e) => e.type === 'reconnected'));
    await until(() => events.filter((e) => e.type === 'subscribed').length >= 2);
    expect(c.connected()).toBe(true);
    await c.stop();
  });

  it('detects a silent peer (no pong) and reconnects once the server speaks again', async () => {
    const events: NotificationClientEvent[] = [];
    const c = client((e) => events.push(e));
    c.start();
    c.subscribe(ALICE);
    await until(() => c.isConfirmed(ALICE));
    sim.faults.add({ kind: 'wsSilent', on: true });
    await until(() => events.some((e) => e.type === 'disconnected' && e.reason === 'pong_timeout'));
    sim.faults.add({ kind: 'wsSilent', on: false });
    await until(() => events.some((e) => e.type === 'reconnected'));
    await until(() => c.connected());
    await c.stop();
  });
});
