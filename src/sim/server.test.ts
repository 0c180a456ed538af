/**
 * The simulator's HTTP server over real loopback sockets, with a small stub of the venue state and
 * catalog (the real ones are exercised in simulator.test.ts): routing and envelopes, the account
 * routes (4.1 to 4.3, 4.13, /exchange), rate limits on a FakeClock, every fault kind, the Date
 * header, hostile input, the admin API, and stop().
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../time/clock.js';
import { systemClock, offsetClock } from '../time/clock.js';
import { FakeClock } from '../time/fake-clock.js';
import type { Account, Event, OpenOrder, Outcome, Position } from '../venue/types.js';
import { ACCOUNT_ENDPOINTS, accountRoutes } from './account-routes.js';
import { adminHandler } from './admin.js';
import { FaultControl } from './faults.js';
import type { Route } from './http-util.js';
import { parseBudget, RateLimiter, type RateLimitConfig } from './rate-limit.js';
import { listenSimServer, type SimServer } from './server.js';
import type { ActionOutcome, AgentInfo, Catalog, RestingOrder, ScheduleInfo, SeedOrder, SimAccountSeed, VenueStateApi } from './types.js';
import { WsHub } from './ws-server.js';

const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const SUBMITTER = '0x1111111111111111111111111111111111111111';
const UNKNOWN = '0x9999999999999999999999999999999999999999';

// ---- stubs ----

class StubCatalog implements Catalog {
  readonly outcomesById = new Map<string, Outcome>([
    ['o1', { id: 'o1', event_id: 'e1', title: 'one' }],
    ['o2', { id: 'o2', event_id: 'e1', title: 'two' }],
    ['o3', { id: 'o3', event_id: 'e2', title: 'three' }],
  ]);
  readonly eventsById = new Map<string, Event>([
    ['e1', { id: 'e1', title: 'E1' }],
    ['e2', { id: 'e2', title: 'E2' }],
  ]);
  outcome(id: string): Outcome | undefined {
    return this.outcomesById.get(id);
  }
  event(id: string): Event | undefined {
    return this.eventsById.get(id);
  }
  tradableOutcomeIds(): string[] {
    return [...this.outcomesById.keys()];
  }
}

/** Just enough venue state: accounts with orders and positions, and a scripted action answer. */
class StubState implements VenueStateApi {
  readonly accounts = new Map<string, { seed: SimAccountSeed; orders: OpenOrder[]; positions: Position[]; volume: number }>();
  readonly actions: Array<{ body: unknown; via: 'rest' | 'exchange' }> = [];
  answer: ActionOutcome = { kind: 'answer', body: { status: 'ok', response: { type: 'default' } } };
  throwOnAction = false;
  stopped = 0;
  private seq = 0;

  addAccount(seed: SimAccountSeed): void {
    const a = seed.address.toLowerCase();
    if (this.accounts.has(a)) throw new Error(`account ${a} exists`);
    this.accounts.set(a, { seed, orders: [], positions: [], volume: seed.tradedVolumeUsd });
    for (const o of seed.orders ?? []) this.placeOrder(a, o);
    for (const p of seed.positions ?? []) {
      this.accounts.get(a)?.positions.push({ outcome_id: p.outcome_id, side: p.side, quantity: p.quantity });
    }
  }
  hasAccount(address: string): boolean {
    return this.accounts.has(address.toLowerCase());
  }
  getAccount(address: string): Account | undefined {
    const a = this.accounts.get(address.toLowerCase());
    return a ? { address: a.seed.address, account_type: 'main', username: a.seed.username ?? 'u' } : undefined;
  }
  openOrders(address: string): OpenOrder[] {
    return [...(this.accounts.get(address.toLowerCase())?.orders ?? [])];
  }
  positions(address: string): Position[] {
    return [...(this.accounts.get(address.toLowerCase())?.positions ?? [])];
  }
  restingOrders(_outcomeId: string): RestingOrder[] {
    return [];
  }
  placeOrder(address: string, o: SeedOrder): OpenOrder {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) throw new Error('unknown account');
    const order: OpenOrder = {
      order_id: `ord-${++this.seq}`,
      outcome_id: o.outcome_id,
      side: o.side,
      direction: o.direction,
      price: o.price,
      original_quantity: o.quantity,
      status: 'open',
      submitted_by: o.submitted_by ? { address: o.submitted_by, account_type: 'main' } : null,
    };
    a.orders.push(order);
    return order;
  }
  setTradedVolume(address: string, usd: number): void {
    const a = this.accounts.get(address.toLowerCase());
    if (a) a.volume = usd;
  }
  async handleAction(body: unknown, via: 'rest' | 'exchange'): Promise<ActionOutcome> {
    this.actions.push({ body, via });
    if (this.throwOnAction) throw new Error('boom');
    return this.answer;
  }
  schedule(_address: string): ScheduleInfo {
    return { timeMs: 1_800_000_000_000, triggersToday: 2 };
  }
  agents(_address: string): AgentInfo[] {
    return [{ address: B, name: 'dms-keeper' }];
  }
  actionLog(): ReadonlyArray<{ atMs: number; via: 'rest' | 'exchange'; type: string; result: string }> {
    return this.actions.map((a) => ({ atMs: 0, via: a.via, type: 'scheduleCancel', result: 'ok' }));
  }
  stop(): void {
    this.stopped++;
  }
}

// ---- harness ----

interface Harness {
  url: string;
  port: number;
  server: SimServer;
  state: StubState;
  faults: FaultControl;
  limiter: RateLimiter;
  ws: WsHub;
  clock: Clock;
  logs: Array<Record<string, unknown>>;
}

const open: SimServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function harness(opts: { clock?: Clock; offsetMs?: number; rateLimits?: RateLimitConfig; admin?: boolean; extraRoutes?: Route[]; maxBodyBytes?: number } = {}): Promise<Harness> {
  const base = opts.clock ?? systemClock();
  const faults = new FaultControl(base, opts.offsetMs ?? 0);
  const clock = offsetClock(base, () => faults.clockOffsetMs());
  const limiter = new RateLimiter(base, opts.rateLimits ?? {});
  const state = new StubState();
  const catalog = new StubCatalog();
  const ws = new WsHub({ clock: base, faults });
  const logs: Array<Record<string, unknown>> = [];
  state.addAccount({ address: A, tradedVolumeUsd: 2_000_000 });
  const server = await listenSimServer({
    host: '127.0.0.1',
    port: 0,
    clock,
    routes: [...accountRoutes({ state, catalog }), ...(opts.extraRoutes ?? [])],
    faults,
    rateLimiter: limiter,
    ws,
    admin: opts.admin === false ? undefined : adminHandler({ state, faults, rateLimiter: limiter, clock }),
    logger: (l) => logs.push(l),
    ...(opts.maxBodyBytes !== undefined ? { maxBodyBytes: opts.maxBodyBytes } : {}),
  });
  open.push(server);
  return { url: `http://127.0.0.1:${server.port}`, port: server.port, server, state, faults, limiter, ws, clock, logs };
}

interface Envelope {
  error: { code: number; status: string; message: string; details: Array<Record<string, unknown>> };
}

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as unknown, headers: res.headers };
}

function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; headers: Headers }> {
  return getJson(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

function expectEnvelope(r: { status: number; body: unknown }, code: number, status: string): Envelope['error'] {
  expect(r.status).toBe(code);
  const e = (r.body as Envelope).error;
  expect(e.code).toBe(code);
  expect(e.status).toBe(status);
  expect(typeof e.message).toBe('string');
  expect(Array.isArray(e.details)).toBe(true);
  return e;
}

function expectFieldViolation(r: { status: number; body: unknown }, field: string): void {
  const e = expectEnvelope(r, 400, 'INVALID_ARGUMENT');
  expect(e.details).toContainEqual(expect.objectContaining({ type: 'field_violation', field }));
}

/** Sends raw bytes and collects everything the server writes until it closes (or `ms` passes). */
function rawExchange(port: number, payload: string | Buffer, ms = 2000): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = (): void => {
      clearTimeout(t);
      s.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const t = setTimeout(done, ms);
    s.on('data', (c) => chunks.push(c));
    s.on('close', done);
    s.on('error', done);
    s.write(payload);
  });
}

const sc = (time?: number): unknown => ({
  action: time === undefined ? { type: 'scheduleCancel' } : { type: 'scheduleCancel', time },
  nonce: 1,
  signature: { r: '0x1', s: '0x2', v: 27 },
});

// ---- tests ----

describe('routing and envelopes', () => {
  it('answers an unknown path with a 404 envelope and a wrong method with a 405 envelope', async () => {
    const h = await harness();
    expectEnvelope(await getJson(`${h.url}/v1/nope`), 404, 'NOT_FOUND');
    expectEnvelope(await getJson(`${h.url}/`), 404, 'NOT_FOUND');
    expectEnvelope(await postJson(`${h.url}/v1/accounts/${A}`, {}), 405, 'METHOD_NOT_ALLOWED');
    expectEnvelope(await getJson(`${h.url}/exchange`), 405, 'METHOD_NOT_ALLOWED');
    expectEnvelope(await getJson(`${h.url}/v1/trading/orders/schedule-cancel`, { method: 'DELETE' }), 405, 'METHOD_NOT_ALLOWED');
  });

  it('refuses invalid JSON and a wrong Content-Type: the venue\'s 422 text on /exchange, 400 envelopes on REST; an oversized body 400', async () => {
    const h = await harness({ maxBodyBytes: 1024 });
    const path = `${h.url}/exchange`;
    const text = async (init: RequestInit): Promise<{ status: number; type: string | null; body: string }> => {
      const res = await fetch(path, init);
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    };
    const refused = { status: 422, type: 'text/plain; charset=utf-8', body: 'Failed to deserialize the JSON body into the target type' };
    expect(await text({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"action":' })).toEqual(refused);
    expect(await text({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '' })).toEqual(refused);
    expect(await text({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })).toEqual(refused);
    const rest = `${h.url}/v1/trading/orders/schedule-cancel`;
    expectFieldViolation(await getJson(rest, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"action":' }), 'body');
    expectFieldViolation(await getJson(rest, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }), 'Content-Type');
    // Over the cap: drained and refused, the connection kept (the hard limit is tested below).
    expectFieldViolation(await postJson(path, { pad: 'x'.repeat(5000) }), 'body');
    expect(h.state.actions).toHaveLength(0);
    // The server still works afterwards, and accepts a charset parameter.
    const ok = await postJson(path, sc(), { 'content-type': 'application/json; charset=utf-8' });
    expect(ok.status).toBe(200);
  });

  it('maps an action answer to 200 and an http outcome to its status, and a throwing handler to 500', async () => {
    const h = await harness();
    const r1 = await postJson(`${h.url}/exchange`, sc(123));
    expect(r1).toMatchObject({ status: 200, body: { status: 'ok', response: { type: 'default' } } });
    expect(h.state.actions.at(-1)?.via).toBe('exchange');

    h.state.answer = { kind: 'answer', body: { status: 'err', response: 'Cannot set scheduled cancel time until enough volume traded.' } };
    const r2 = await postJson(`${h.url}/v1/trading/orders/schedule-cancel`, sc(123));
    expect(r2).toMatchObject({ status: 200, body: { status: 'err' } });
    expect(h.state.actions.at(-1)?.via).toBe('rest');

    h.state.answer = { kind: 'http', status: 422, body: { weird: true } };
    expect(await postJson(`${h.url}/exchange`, sc())).toMatchObject({ status: 422, body: { weird: true } });

    h.state.throwOnAction = true;
    expectEnvelope(await postJson(`${h.url}/exchange`, sc()), 500, 'INTERNAL');
    expect(h.logs.some((l) => l.msg === 'handler failed')).toBe(true);
  });

  it('requires action.type scheduleCancel on the REST schedule-cancel path', async () => {
    const h = await harness();
    const url = `${h.url}/v1/trading/orders/schedule-cancel`;
    expectFieldViolation(await postJson(url, { action: { type: 'approveAgent' }, nonce: 1 }), 'action.type');
    expectFieldViolation(await postJson(url, { nonce: 1 }), 'action');
    expectFieldViolation(await postJson(url, [1, 2]), 'body');
    expect(h.state.actions).toHaveLength(0);
    expect((await postJson(url, sc(5))).status).toBe(200);
    expect(h.state.actions).toHaveLength(1);
  });
});

describe('account routes', () => {
  it('4.1: 400 field_violation for a bad address, 404 for an unknown one, 200 otherwise', async () => {
    const h = await harness();
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/0x123`), 'address');
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}zz/orders`), 'address');
    expectEnvelope(await getJson(`${h.url}/v1/accounts/${UNKNOWN}`), 404, 'NOT_FOUND');
    expectEnvelope(await getJson(`${h.url}/v1/accounts/${UNKNOWN}/positions`), 404, 'NOT_FOUND');
    const r = await getJson(`${h.url}/v1/accounts/${A.toUpperCase().replace('0X', '0x')}`);
    expect(r).toMatchObject({ status: 200, body: { address: A } });
  });

  it('4.2: paginates orders across pages with opaque cursors, and filters', async () => {
    const h = await harness();
    for (let i = 0; i < 7; i++) {
      h.state.placeOrder(A, {
        outcome_id: i % 2 === 0 ? 'o1' : 'o3',
        side: 0,
        direction: 'buy',
        price: '0.5',
        quantity: '1',
        ...(i < 2 ? { submitted_by: SUBMITTER } : {}),
      });
    }
    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await getJson(`${h.url}/v1/accounts/${A}/orders?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      const body = r.body as { data: OpenOrder[]; next_cursor?: string; included?: unknown };
      expect(body).not.toHaveProperty('included');
      ids.push(...body.data.map((o) => o.order_id as string));
      cursor = body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(ids).toEqual(h.state.openOrders(A).map((o) => o.order_id));

    const byOutcome = await getJson(`${h.url}/v1/accounts/${A}/orders?outcome_id=o3`);
    expect((byOutcome.body as { data: OpenOrder[] }).data.map((o) => o.outcome_id)).toEqual(['o3', 'o3', 'o3']);
    const bySubmitter = await getJson(`${h.url}/v1/accounts/${A}/orders?submitted_by=${SUBMITTER.toUpperCase().replace('0X', '0x')}`);
    expect((bySubmitter.body as { data: OpenOrder[] }).data).toHaveLength(2);
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/orders?submitted_by=bob`), 'submitted_by');
  });

  it('4.2: rejects a bad limit, cursor or include with field violations naming them', async () => {
    const h = await harness();
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/orders?limit=abc`), 'limit');
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/orders?limit=0`), 'limit');
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/orders?cursor=garbage!`), 'cursor');
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/orders?include=accounts`), 'include');
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/orders?include=outcome,bogus`), 'include');
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/positions?include=outcomes`), 'include');
    expectFieldViolation(await getJson(`${h.url}/v1/accounts/${A}/positions?limit=-1`), 'limit');
  });

  it('4.2: include=outcome and include=event fill included, deduplicated by id', async () => {
    const h = await harness();
    for (const outcome_id of ['o1', 'o2', 'o1', 'o3', 'o2']) {
      h.state.placeOrder(A, { outcome_id, side: 1, direction: 'sell', price: '0.4', quantity: '2' });
    }
    const r1 = await getJson(`${h.url}/v1/accounts/${A}/orders?include=outcome`);
    const b1 = r1.body as { included: { outcomes?: Outcome[]; events?: Event[] } };
    expect(b1.included.outcomes?.map((o) => o.id)).toEqual(['o1', 'o2', 'o3']);
    expect(b1.included).not.toHaveProperty('events');

    const r2 = await getJson(`${h.url}/v1/accounts/${A}/orders?include=event`);
    const b2 = r2.body as { included: { outcomes?: Outcome[]; events?: Event[] } };
    expect(b2.included.events?.map((e) => e.id)).toEqual(['e1', 'e2']);
    expect(b2.included).not.toHaveProperty('outcomes');

    // Only the page's outcomes are included: the first two orders are o1, o2 (both event e1).
    const r3 = await getJson(`${h.url}/v1/accounts/${A}/orders?include=outcome&include=event&limit=2`);
    const b3 = r3.body as { included: { outcomes?: Outcome[]; events?: Event[] } };
    expect(b3.included.outcomes?.map((o) => o.id)).toEqual(['o1', 'o2']);
    expect(b3.included.events?.map((e) => e.id)).toEqual(['e1']);
  });

  it('4.3: positions page with as_of (venue time), filter and include', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 2, 3, 4, 5));
    const h = await harness({ clock, offsetMs: 3_000 });
    h.state.addAccount({
      address: B,
      tradedVolumeUsd: 0,
      positions: [
        { outcome_id: 'o3', side: 0, quantity: '5', average_entry_price: '0.5', mark_price: '0.6' },
        { outcome_id: 'o1', side: 1, quantity: '1', average_entry_price: '0.5', mark_price: '0.6' },
      ],
    });
    const r = await getJson(`${h.url}/v1/accounts/${B}/positions?include=event`);
    expect(r.status).toBe(200);
    const body = r.body as { data: Position[]; as_of: string; included: { events: Event[] } };
    expect(body.as_of).toBe(new Date(Date.UTC(2026, 0, 2, 3, 4, 8)).toISOString());
    expect(body.data).toHaveLength(2);
    expect(body.included.events.map((e) => e.id)).toEqual(['e2', 'e1']);
    const f = await getJson(`${h.url}/v1/accounts/${B}/positions?outcome_id=o1`);
    expect((f.body as { data: Position[] }).data.map((p) => p.outcome_id)).toEqual(['o1']);
  });
});

describe('rate limits (FakeClock)', () => {
  it('refuses with 429 rate_limit details, and a request after exactly retry_after_seconds succeeds', async () => {
    const clock = new FakeClock();
    const h = await harness({
      clock,
      rateLimits: { global: { limit: 100, windowSeconds: 60 }, endpoints: { [ACCOUNT_ENDPOINTS.account]: { limit: 2, windowSeconds: 10 } } },
    });
    const url = `${h.url}/v1/accounts/${A}`;
    expect((await getJson(url)).status).toBe(200); // t = 0
    await clock.advance(1_500);
    expect((await getJson(url)).status).toBe(200); // t = 1.5 s
    await clock.advance(500);
    const refused = await getJson(url); // t = 2 s: the t=0 slot frees at 10 s
    const e = expectEnvelope(refused, 429, 'RESOURCE_EXHAUSTED');
    expect(e.details).toEqual([
      { type: 'rate_limit', limit: 2, reason: 'endpoint_quota', retry_after_seconds: 8, scope: 'endpoint', window_seconds: 10 },
    ]);
    expect(refused.headers.get('retry-after')).toBe('8');
    // Other endpoints are not affected by this endpoint's quota.
    expect((await getJson(`${h.url}/v1/accounts/${A}/orders`)).status).toBe(200);

    await clock.advance(8_000 - 1); // one millisecond early
    const early = expectEnvelope(await getJson(url), 429, 'RESOURCE_EXHAUSTED');
    expect(early.details[0]).toMatchObject({ retry_after_seconds: 1, scope: 'endpoint' });
    await clock.advance(1); // exactly retry_after_seconds after the refusal
    expect((await getJson(url)).status).toBe(200);
    // The next slot is the t=1.5 s one: frees at 11.5 s, 1.5 s away, rounded up.
    const next = expectEnvelope(await getJson(url), 429, 'RESOURCE_EXHAUSTED');
    expect(next.details[0]).toMatchObject({ retry_after_seconds: 2 });
  });

  it('counts every REST and exchange request against the global quota', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock, rateLimits: { global: { limit: 3, windowSeconds: 5 } } });
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
    expect((await getJson(`${h.url}/v1/accounts/${A}/orders`)).status).toBe(200);
    expect((await postJson(`${h.url}/exchange`, sc())).status).toBe(200);
    await clock.advance(2_000);
    const r = await postJson(`${h.url}/v1/trading/orders/schedule-cancel`, sc());
    const e = expectEnvelope(r, 429, 'RESOURCE_EXHAUSTED');
    expect(e.details[0]).toEqual({ type: 'rate_limit', limit: 3, reason: 'global_quota', retry_after_seconds: 3, scope: 'global', window_seconds: 5 });
    expect(h.state.actions).toHaveLength(1); // the refused action never reached the venue state
    await clock.advance(3_000);
    expect((await postJson(`${h.url}/v1/trading/orders/schedule-cancel`, sc())).status).toBe(200);
  });

  it('applies the schedule-cancel default quota to the REST schedule-cancel endpoint', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock, rateLimits: { scheduleCancel: { limit: 1, windowSeconds: 60 } } });
    expect((await postJson(`${h.url}/v1/trading/orders/schedule-cancel`, sc())).status).toBe(200);
    const e = expectEnvelope(await postJson(`${h.url}/v1/trading/orders/schedule-cancel`, sc()), 429, 'RESOURCE_EXHAUSTED');
    expect(e.details[0]).toMatchObject({ scope: 'endpoint', limit: 1, window_seconds: 60, retry_after_seconds: 60 });
    // /exchange is a different endpoint.
    expect((await postJson(`${h.url}/exchange`, sc())).status).toBe(200);
  });
});

describe('rate limits: one window over every signed action (budget signed_window_100_per_5s)', () => {
  const approveAgent = { action: { type: 'approveAgent', agentAddress: B, agentName: 'dms-keeper', nonce: 1 }, nonce: 1, signature: { r: '0x1', s: '0x2', v: 27 } };

  it('a REST schedule-cancel and an exchange approveAgent share the window; reads are not counted in it', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock, rateLimits: parseBudget('signed_window_100_per_5s') });
    const restArm = `${h.url}/v1/trading/orders/schedule-cancel`;
    for (let i = 0; i < 50; i++) {
      expect((await postJson(restArm, sc())).status).toBe(200);
      expect((await postJson(`${h.url}/exchange`, approveAgent)).status).toBe(200);
      // Reads between them, as a keeper's watchers send: never counted in the window.
      expect((await getJson(`${h.url}/v1/accounts/${A}/orders`)).status).toBe(200);
    }
    await clock.advance(4_000);
    for (const [url, body] of [
      [restArm, sc()],
      [`${h.url}/exchange`, approveAgent],
    ] as const) {
      const r = await postJson(url, body);
      const e = expectEnvelope(r, 429, 'RESOURCE_EXHAUSTED');
      expect(e.details).toEqual([{ type: 'rate_limit', limit: 100, reason: 'global_quota', retry_after_seconds: 1, scope: 'global', window_seconds: 5 }]);
      expect(r.headers.get('retry-after')).toBe('1');
    }
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
    expect(h.state.actions).toHaveLength(100);
    await clock.advance(1_000); // exactly retry_after_seconds later
    expect((await postJson(`${h.url}/exchange`, approveAgent)).status).toBe(200);
  });

  it('is selected through the admin API, as child-process tests and `dms-keeper simulate` do', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    const set = await postJson(`${h.url}/_sim/rate-limits`, { budget: 'signed_window_2_per_5s' });
    expect(set).toMatchObject({ status: 200, body: { global: { limit: 2, windowSeconds: 5 }, globalCounts: 'signed', endpoints: {} } });
    expect((await postJson(`${h.url}/v1/trading/orders/schedule-cancel`, sc())).status).toBe(200);
    expect((await postJson(`${h.url}/exchange`, approveAgent)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
    expect(expectEnvelope(await postJson(`${h.url}/exchange`, sc()), 429, 'RESOURCE_EXHAUSTED').details[0]).toMatchObject({ scope: 'global', limit: 2, window_seconds: 5, retry_after_seconds: 5 });
    // Fields override the budget's; an unknown budget is a 400 and changes nothing.
    const over = await postJson(`${h.url}/_sim/rate-limits`, { budget: 'signed_window_2_per_5s', scheduleCancel: { limit: 1, windowSeconds: 60 } });
    expect(over.body).toMatchObject({ globalCounts: 'signed', endpoints: { 'POST /v1/trading/orders/schedule-cancel': { limit: 1, windowSeconds: 60 } } });
    expectEnvelope(await postJson(`${h.url}/_sim/rate-limits`, { budget: 'lavish' }), 400, 'INVALID_ARGUMENT');
    expectEnvelope(await postJson(`${h.url}/_sim/rate-limits`, { globalCounts: 'reads' }), 400, 'INVALID_ARGUMENT');
    expect(h.limiter.globalCounting()).toBe('signed');
    // Back to the default: every request counted in 1200 per 60 s.
    expect((await postJson(`${h.url}/_sim/rate-limits`, {})).body).toMatchObject({ global: { limit: 1200, windowSeconds: 60 }, globalCounts: 'all' });
  });
});

describe('faults', () => {
  it('forces a 429 storm with the chosen scope and retry_after for N requests', async () => {
    const h = await harness();
    h.faults.rateLimitStorm({ scope: 'endpoint', retryAfterSeconds: 7, limit: 600, windowSeconds: 60, count: 2, endpoint: ACCOUNT_ENDPOINTS.scheduleCancel });
    const url = `${h.url}/v1/trading/orders/schedule-cancel`;
    for (let i = 0; i < 2; i++) {
      const r = await postJson(url, sc());
      const e = expectEnvelope(r, 429, 'RESOURCE_EXHAUSTED');
      expect(e.details[0]).toEqual({ type: 'rate_limit', limit: 600, reason: 'endpoint_quota', retry_after_seconds: 7, scope: 'endpoint', window_seconds: 60 });
      expect(r.headers.get('retry-after')).toBe('7');
    }
    expect((await postJson(url, sc())).status).toBe(200);
    expect(h.state.actions).toHaveLength(1);
  });

  it('forces 500 and 503 with a dependency detail, for one endpoint only', async () => {
    const h = await harness();
    h.faults.unavailable('upstream_unavailable', { endpoint: ACCOUNT_ENDPOINTS.orders });
    const e = expectEnvelope(await getJson(`${h.url}/v1/accounts/${A}/orders`), 503, 'UNAVAILABLE');
    expect(e.details).toEqual([{ type: 'dependency', reason: 'upstream_unavailable' }]);
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
    h.faults.reset();
    h.faults.forceStatus(500, { count: 1 });
    expectEnvelope(await getJson(`${h.url}/v1/accounts/${A}`), 500, 'INTERNAL');
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
  });

  it('targets one path family: exchange faults leave REST alone', async () => {
    const h = await harness();
    h.faults.forceStatus(503, { path: 'exchange' });
    expectEnvelope(await postJson(`${h.url}/exchange`, sc()), 503, 'UNAVAILABLE');
    expect((await postJson(`${h.url}/v1/trading/orders/schedule-cancel`, sc())).status).toBe(200);
  });

  it('ends a time-span fault after forMs on the injected clock', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    h.faults.forceStatus(503, { forMs: 10_000 });
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(503);
    await clock.advance(9_999);
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(503);
    await clock.advance(1);
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
  });

  it('adds latency on the injected clock', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    h.faults.latency(3_000, { endpoint: ACCOUNT_ENDPOINTS.account, count: 1 });
    let done = false;
    const p = getJson(`${h.url}/v1/accounts/${A}`).then((r) => {
      done = true;
      return r;
    });
    // Wait until the server holds the request (its latency timer is pending on the FakeClock).
    for (let i = 0; i < 200 && clock.pendingTimers() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(clock.pendingTimers()).toBeGreaterThan(0);
    await clock.advance(2_999);
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    await clock.advance(1);
    expect((await p).status).toBe(200);
  });

  it('adds latency in real time under the real clock', async () => {
    const h = await harness();
    h.faults.latency(150);
    const t0 = performance.now();
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('resets the connection mid-response after the action was applied', async () => {
    const h = await harness();
    h.faults.resetConnection({ count: 1, path: 'exchange' });
    await expect(postJson(`${h.url}/exchange`, sc())).rejects.toThrow();
    expect(h.state.actions).toHaveLength(1); // applied, but the client never saw the answer
    // Raw view: a status line and headers arrived, the body is short of its Content-Length.
    h.faults.resetConnection({ count: 1, afterBytes: 5 });
    const raw = await rawExchange(h.port, `GET /v1/accounts/${A} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(raw.startsWith('HTTP/1.1 200')).toBe(true);
    const [head, body] = raw.split('\r\n\r\n');
    const declared = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1]);
    expect(body).toHaveLength(5);
    expect(declared).toBeGreaterThan(5);
    expect((await postJson(`${h.url}/exchange`, sc())).status).toBe(200);
  });

  it('resets the connection before the handler runs', async () => {
    const h = await harness();
    h.faults.resetConnection({ count: 1, phase: 'before_handler' });
    await expect(postJson(`${h.url}/exchange`, sc())).rejects.toThrow();
    expect(h.state.actions).toHaveLength(0);
  });

  it('serves a truncated JSON body and an HTML proxy page', async () => {
    const h = await harness();
    h.faults.badBody('truncated', { count: 1 });
    const r1 = await fetch(`${h.url}/v1/accounts/${A}`);
    const t1 = await r1.text();
    expect(r1.status).toBe(200);
    expect(t1.length).toBeGreaterThan(0);
    expect(() => JSON.parse(t1) as unknown).toThrow();

    h.faults.badBody('html', { count: 1, path: 'exchange' });
    const r2 = await fetch(`${h.url}/exchange`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sc()) });
    expect(r2.status).toBe(502);
    expect(r2.headers.get('content-type')).toContain('text/html');
    expect(await r2.text()).toMatch(/^<html>/);
    expect(h.state.actions).toHaveLength(0);
  });
});

describe('Date header and venue clock', () => {
  it('carries the venue clock, offset included, and follows a run-time offset change', async () => {
    const clock = new FakeClock(Date.UTC(2026, 2, 3, 4, 5, 6));
    const h = await harness({ clock, offsetMs: -3_000 });
    const r1 = await fetch(`${h.url}/v1/accounts/${A}`);
    expect(r1.headers.get('date')).toBe('Tue, 03 Mar 2026 04:05:03 GMT');
    h.faults.setClockOffset(60_000);
    const r2 = await fetch(`${h.url}/v1/nope`); // errors too
    expect(r2.headers.get('date')).toBe('Tue, 03 Mar 2026 04:06:06 GMT');
  });

  it('is the system time plus the offset under the real clock', async () => {
    const h = await harness({ offsetMs: 60_000 });
    const r = await fetch(`${h.url}/v1/accounts/${A}`);
    const venue = Date.parse(r.headers.get('date') ?? '');
    expect(Math.abs(venue - (Date.now() + 60_000))).toBeLessThan(2_000);
  });
});

describe('hostile input', () => {
  it('answers oversized headers with 431', async () => {
    const h = await harness();
    const raw = await rawExchange(h.port, `GET /v1/accounts/${A} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expect(raw.startsWith('HTTP/1.1 431')).toBe(true);
    expect(raw).toContain('"code":431');
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
  });

  it('answers garbage and bad percent-encoding with 400 envelopes', async () => {
    const h = await harness();
    const r1 = await rawExchange(h.port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(r1.startsWith('HTTP/1.1 400')).toBe(true);
    const r2 = await rawExchange(h.port, `GET /v1/accounts/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(r2.startsWith('HTTP/1.1 400')).toBe(true);
    expect(r2).toContain('INVALID_ARGUMENT');
    const r3 = await rawExchange(h.port, `GET /v1/accounts/${A}/orders?cursor=%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(r3.startsWith('HTTP/1.1 400')).toBe(true);
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
  });

  it('survives an aborted upload and a declared body over the hard limit', async () => {
    const h = await harness();
    await new Promise<void>((resolve) => {
      const s = net.connect(h.port, '127.0.0.1', () => {
        s.write(`POST /exchange HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"action":`);
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 50);
      });
      s.on('error', () => resolve());
    });
    const big = await rawExchange(h.port, `POST /exchange HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{`);
    expect(big.startsWith('HTTP/1.1 400')).toBe(true);
    expect(big).toContain('too_large');
    expect(h.state.actions).toHaveLength(0);
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);
  });

  it('answers a plain GET on /ws with 400 and an upgrade elsewhere with 404', async () => {
    const h = await harness();
    expectEnvelope(await getJson(`${h.url}/ws`), 400, 'INVALID_ARGUMENT');
    const raw = await rawExchange(
      h.port,
      'GET /other HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    expect(raw.startsWith('HTTP/1.1 404')).toBe(true);
  });
});

describe('admin API (loopback)', () => {
  it('reports state, sets and clears faults, seeds accounts and orders, sets the clock', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const h = await harness({ clock });
    const st = await getJson(`${h.url}/_sim/state?account=${A}`);
    expect(st).toMatchObject({
      status: 200,
      body: { nowMs: Date.UTC(2026, 0, 1), account: { address: A, schedule: { timeMs: 1_800_000_000_000, triggersToday: 2 }, openOrders: 0, agents: [{ name: 'dms-keeper' }] } },
    });
    expectEnvelope(await getJson(`${h.url}/_sim/state?account=${UNKNOWN}`), 404, 'NOT_FOUND');
    expectFieldViolation(await getJson(`${h.url}/_sim/state?account=nope`), 'account');

    const f = await postJson(`${h.url}/_sim/faults`, [{ kind: 'status', status: 503, count: 1 }, { kind: 'wsSilent', on: true }]);
    expect(f.status).toBe(200);
    expect((f.body as { ids: string[] }).ids).toHaveLength(1);
    expect(h.faults.wsSilent()).toBe(true);
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(503);
    expectFieldViolation(await postJson(`${h.url}/_sim/faults`, { kind: 'status', status: 200 }), 'body.status');
    expectFieldViolation(await postJson(`${h.url}/_sim/faults`, { kind: 'explode' }), 'body.kind');
    h.faults.forceStatus(500);
    expect((await getJson(`${h.url}/_sim/faults`, { method: 'DELETE' })).status).toBe(200);
    expect(h.faults.wsSilent()).toBe(false);
    expect((await getJson(`${h.url}/v1/accounts/${A}`)).status).toBe(200);

    expect((await postJson(`${h.url}/_sim/accounts`, { address: B, tradedVolumeUsd: 5 })).status).toBe(200);
    expect(h.state.hasAccount(B)).toBe(true);
    expectEnvelope(await postJson(`${h.url}/_sim/accounts`, { address: B, tradedVolumeUsd: 5 }), 400, 'INVALID_ARGUMENT'); // duplicate
    const o = await postJson(`${h.url}/_sim/orders`, { address: B, order: { outcome_id: 'o1', side: 0, direction: 'buy', price: '0.5', quantity: '3' } });
    expect(o).toMatchObject({ status: 200, body: { order: { outcome_id: 'o1' } } });
    expect(h.state.openOrders(B)).toHaveLength(1);
    expectEnvelope(await postJson(`${h.url}/_sim/orders`, { address: UNKNOWN, order: { outcome_id: 'o1', side: 0, direction: 'buy', price: '0.5', quantity: '3' } }), 404, 'NOT_FOUND');
    expect((await postJson(`${h.url}/_sim/volume`, { address: B, usd: 2_000_000 })).status).toBe(200);
    expect(h.state.accounts.get(B)?.volume).toBe(2_000_000);

    const c = await postJson(`${h.url}/_sim/clock`, { offsetMs: 60_000 });
    expect(c.body).toEqual({ offsetMs: 60_000, nowMs: Date.UTC(2026, 0, 1) + 60_000 });
    await postJson(`${h.url}/exchange`, sc());
    const a = await getJson(`${h.url}/_sim/actions`);
    expect((a.body as { actions: unknown[] }).actions).toHaveLength(1);
    expectEnvelope(await getJson(`${h.url}/_sim/clock`), 405, 'METHOD_NOT_ALLOWED');
    expectEnvelope(await getJson(`${h.url}/_sim/nothing`), 404, 'NOT_FOUND');
  });

  it('is neither rate limited nor faulted, and absent when disabled', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock, rateLimits: { global: { limit: 1, windowSeconds: 60 } } });
    h.faults.forceStatus(503);
    for (let i = 0; i < 3; i++) expect((await getJson(`${h.url}/_sim/state`)).status).toBe(200);
    const off = await harness({ admin: false });
    expectEnvelope(await getJson(`${off.url}/_sim/state`), 404, 'NOT_FOUND');
  });
});

describe('close()', () => {
  it('is idempotent, bounded, and closes keep-alive sockets', async () => {
    const h = await harness();
    // Hold a keep-alive connection open.
    const s = net.connect(h.port, '127.0.0.1');
    await new Promise<void>((r) => s.on('connect', () => r()));
    s.write(`GET /v1/accounts/${A} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await new Promise<void>((r) => s.once('data', () => r()));
    const closedSocket = new Promise<void>((r) => s.on('close', () => r()));
    s.on('error', () => undefined);
    const t0 = performance.now();
    const p1 = h.server.close();
    const p2 = h.server.close();
    expect(p2).toBe(p1);
    await p1;
    await closedSocket;
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect(h.server.httpServer.listening).toBe(false);
    expect(h.ws.connectionCount()).toBe(0);
    await expect(fetch(`${h.url}/v1/accounts/${A}`)).rejects.toThrow();
  });

  it('cuts a request waiting in a latency fault on a FakeClock', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    h.faults.latency(60_000);
    const p = fetch(`${h.url}/v1/accounts/${A}`).then(
      () => 'answered',
      () => 'failed',
    );
    for (let i = 0; i < 200 && clock.pendingTimers() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await h.server.close();
    expect(await p).toBe('failed');
  });
});
