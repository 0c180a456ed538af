import { describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { ActionError, DecodeError, RestError, TransportError } from './errors.js';
import { HttpTransport, type ResponseObservation } from './http.js';
import { RestClient } from './rest.js';
import { buildScheduleCancel } from './actions.js';
import { signerFromPrivateKey } from './signing/signer.js';

const ORIGIN = 'http://svc.test';

const ORDER = {
  order_id: 'ord-1',
  outcome_id: 'o1',
  side: 0,
  direction: 'buy',
  order_type: 'limit',
  price: '0.55',
  original_quantity: '10',
  filled_quantity: '2.5',
  remaining_quantity: '7.5',
  status: 'open',
  submitted_by: null,
};
const OUTCOME = { id: 'o1', slug: 'will-it-rain', hl_id: null, sides: [{ side: 0, abbreviation: null }, { side: 1 }] };
const BASE = `${ORIGIN}/api`;

interface Harness {
  agent: MockAgent;
  rest: RestClient;
  seen: ResponseObservation[];
  /** Answers the next request on any path with this status and body. */
  reply(status: number, body: unknown, headers?: Record<string, string>): void;
  lastUrl(): string | undefined;
  lastBody(): unknown;
}

function harness(opts: { maxPages?: number } = {}): Harness {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  const seen: ResponseObservation[] = [];
  const transport = new HttpTransport({ requestTimeoutMs: 5_000, dispatcher: agent, onResponse: (o) => seen.push(o) });
  const rest = new RestClient({ baseUrl: `${BASE}/`, transport, ...opts });
  return {
    agent,
    rest,
    seen,
    reply(status, body, headers = { 'content-type': 'application/json' }) {
      agent
        .get(ORIGIN)
        .intercept({ path: () => true, method: () => true })
        .reply(status, typeof body === 'string' ? body : JSON.stringify(body), { headers });
    },
    lastUrl: () => agent.getCallHistory()?.lastCall()?.fullUrl,
    lastBody: () => agent.getCallHistory()?.lastCall()?.body,
  };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('RestClient: paths, queries and decoding of every endpoint', () => {
  it('getAccount: path param encoded, endpoint label is the template', async () => {
    const h = harness();
    h.reply(200, { account_type: 'main', address: '0xabc', subaccounts: [] });
    const a = await h.rest.getAccount('0xABC');
    expect(a).toEqual({ account_type: 'main', address: '0xabc', subaccounts: [] });
    expect(h.lastUrl()).toBe(`${BASE}/v1/accounts/0xABC`);
    expect(h.seen).toMatchObject([{ endpoint: 'GET /v1/accounts/{address}', method: 'GET', status: 200 }]);
  });

  it('path params are percent-encoded, and dot segments cannot climb the path', async () => {
    const h = harness();
    h.reply(200, {});
    await h.rest.getEvent('a/b c?d#e');
    expect(h.lastUrl()).toBe(`${BASE}/v1/events/a%2Fb%20c%3Fd%23e`);
    // URL parsing resolves "..", even percent-encoded: refused before anything is sent
    await expect(h.rest.getEvent('..')).rejects.toThrow(TypeError);
    await expect(h.rest.getAccount('.')).rejects.toThrow(TypeError);
    await expect(h.rest.getEvent('')).rejects.toThrow(TypeError);
    expect(h.agent.getCallHistory()?.calls()).toHaveLength(1);
    h.reply(200, {});
    await h.rest.getEvent('a..b');
    expect(h.lastUrl()).toBe(`${BASE}/v1/events/a..b`);
  });

  it('listOrders: every query parameter', async () => {
    const h = harness();
    h.reply(200, { data: [ORDER], next_cursor: 'n1', included: { outcomes: [OUTCOME] } });
    const page = await h.rest.listOrders('0xabc', { outcome_id: 'o 1', limit: 50, cursor: 'c+/=', submitted_by: '0xagent', include: ['outcome', 'event'] });
    const url = new URL(h.lastUrl()!);
    expect(url.pathname).toBe('/api/v1/accounts/0xabc/orders');
    expect(url.searchParams.get('outcome_id')).toBe('o 1');
    expect(url.searchParams.get('limit')).toBe('50');
    expect(url.searchParams.get('cursor')).toBe('c+/=');
    expect(url.searchParams.get('submitted_by')).toBe('0xagent');
    expect(url.searchParams.getAll('include')).toEqual(['outcome', 'event']);
    expect(page.data?.[0]?.price).toBe('0.55');
    expect(page.next_cursor).toBe('n1');
    expect(page.included?.outcomes?.[0]?.id).toBe('o1');
  });

  it('listOrders with no query sends no query string', async () => {
    const h = harness();
    h.reply(200, { data: [] });
    await h.rest.listOrders('0xabc');
    expect(h.lastUrl()).toBe(`${BASE}/v1/accounts/0xabc/orders`);
  });

  it('listPositions', async () => {
    const h = harness();
    h.reply(200, { data: [{ outcome_id: 'o1', side: 1, quantity: '2' }], as_of: '2026-01-01T00:00:00Z' });
    const page = await h.rest.listPositions('0xabc', { outcome_id: 'o1', limit: 10, include: 'event' });
    expect(h.lastUrl()).toBe(`${BASE}/v1/accounts/0xabc/positions?outcome_id=o1&limit=10&include=event`);
    expect(page.as_of).toBe('2026-01-01T00:00:00Z');
    expect(page.data?.[0]?.quantity).toBe('2');
  });

  it('getBook: depth 0 is sent (full book), include comma-joined, empty include omitted', async () => {
    const h = harness();
    h.reply(200, { outcome_id: 'o1', depth: 0, sides: [{ side: 0, bids: [{ price: '0.4', size: '3' }], asks: [] }] });
    const b = await h.rest.getBook('o1', { depth: 0, include: ['accounts'] });
    expect(h.lastUrl()).toBe(`${BASE}/v1/outcomes/o1/book?depth=0&include=accounts`);
    expect(b.sides?.[0]?.bids?.[0]?.price).toBe('0.4');
    h.reply(200, {});
    await h.rest.getBook('o1', { include: [] });
    expect(h.lastUrl()).toBe(`${BASE}/v1/outcomes/o1/book`);
    expect(h.seen.map((o) => o.endpoint)).toEqual(['GET /v1/outcomes/{id}/book', 'GET /v1/outcomes/{id}/book']);
  });

  it('getStats', async () => {
    const h = harness();
    h.reply(200, { outcome_id: 'o1', volume_usdc: '12.5', trade_count: 3 });
    expect(await h.rest.getStats('o1')).toEqual({ outcome_id: 'o1', volume_usdc: '12.5', trade_count: 3 });
    expect(h.lastUrl()).toBe(`${BASE}/v1/outcomes/o1/stats`);
  });

  it('getEvent', async () => {
    const h = harness();
    h.reply(200, { id: 'e1', outcomes: [OUTCOME], series: null });
    const e = await h.rest.getEvent('e1');
    expect(e.outcomes?.[0]?.slug).toBe('will-it-rain');
    expect(h.lastUrl()).toBe(`${BASE}/v1/events/e1`);
  });

  it('listParticipants', async () => {
    const h = harness();
    h.reply(200, { data: [{ id: 'p1', color: null }], next_cursor: '' });
    const p = await h.rest.listParticipants({ topic_id: 'sports', category_id: 'soccer', series_id: 'epl', limit: 5, cursor: 'x' });
    expect(h.lastUrl()).toBe(`${BASE}/v1/participants?topic_id=sports&category_id=soccer&series_id=epl&limit=5&cursor=x`);
    // null is read as absent (spec 1.5): the tolerant reading drops it.
    expect(p.data?.[0]).toEqual({ id: 'p1' });
  });

  it('getTopic and getSeries', async () => {
    const h = harness();
    h.reply(200, { id: 'sports', categories: [{ id: 'soccer', series: [] }] });
    expect((await h.rest.getTopic('sports')).categories?.[0]?.id).toBe('soccer');
    expect(h.lastUrl()).toBe(`${BASE}/v1/topics/sports`);
    h.reply(200, { id: 'epl', category_id: 'soccer' });
    expect(await h.rest.getSeries('epl')).toEqual({ id: 'epl', category_id: 'soccer' });
    expect(h.lastUrl()).toBe(`${BASE}/v1/series/epl`);
  });

  it('listProviders, listTemplates, getHealth', async () => {
    const h = harness();
    h.reply(200, { data: [{ id: 'sportradar' }] });
    expect(await h.rest.listProviders({ series_id: 'epl' })).toEqual({ data: [{ id: 'sportradar' }] });
    expect(h.lastUrl()).toBe(`${BASE}/v1/providers?series_id=epl`);
    h.reply(200, { data: [{ id: 't', kind: 'question_outcome', parent: 'q', side_names: ['Yes', 'No'] }] });
    expect((await h.rest.listTemplates()).data?.[0]?.side_names).toEqual(['Yes', 'No']);
    expect(h.lastUrl()).toBe(`${BASE}/v1/templates`);
    h.reply(200, { ok: false, as_of: '2026-01-01T00:00:00Z', block: '99' }, { 'content-type': 'application/json', date: 'Thu, 01 Jan 2026 00:00:01 GMT' });
    expect(await h.rest.getHealth()).toEqual({ ok: false, as_of: '2026-01-01T00:00:00Z', block: '99' });
    expect(h.lastUrl()).toBe(`${BASE}/v1/health`);
    expect(h.seen.at(-1)).toMatchObject({ endpoint: 'GET /v1/health', status: 200, dateHeader: 'Thu, 01 Jan 2026 00:00:01 GMT' });
  });

  it('refuses a negative or fractional limit before sending', async () => {
    const h = harness();
    await expect(h.rest.listOrders('0xabc', { limit: -1 })).rejects.toThrow(RangeError);
    await expect(h.rest.listOrders('0xabc', { limit: 1.5 })).rejects.toThrow(RangeError);
    expect(h.agent.getCallHistory()?.calls()).toHaveLength(0);
  });

  it('refuses a base URL with a query', () => {
    const agent = new MockAgent();
    expect(() => new RestClient({ baseUrl: 'http://x/?a=1', transport: new HttpTransport({ requestTimeoutMs: 1, dispatcher: agent }) })).toThrow(TypeError);
  });
});

describe('RestClient: failures', () => {
  it('404 with the envelope -> RestError not_found', async () => {
    const h = harness();
    h.reply(404, { error: { code: 404, status: 'NOT_FOUND', message: 'no such account', details: [] } });
    const e = await rejection(h.rest.getAccount('0xabc'));
    expect(e).toBeInstanceOf(RestError);
    expect(e).toMatchObject({ reason: 'not_found', httpStatus: 404, endpoint: 'GET /v1/accounts/{address}' });
  });

  it('503 with a dependency detail -> RestError unavailable', async () => {
    const h = harness();
    h.reply(503, { error: { code: 503, status: 'UNAVAILABLE', message: 'x', details: [{ type: 'dependency', reason: 'chain_feed' }] } });
    const e = (await rejection(h.rest.getHealth())) as RestError;
    expect(e.reason).toBe('unavailable');
    expect(e.dependency?.reason).toBe('chain_feed');
  });

  it('HTML 502 from a proxy -> DecodeError bad_status with the status', async () => {
    const h = harness();
    h.reply(502, '<html><body><h1>502 Bad Gateway</h1></body></html>', { 'content-type': 'text/html' });
    const e = await rejection(h.rest.listOrders('0xabc'));
    expect(e).toBeInstanceOf(DecodeError);
    expect(e).toMatchObject({ reason: 'bad_status', httpStatus: 502 });
    expect((e as Error).message).not.toContain('<h1>');
  });

  it('200 with truncated JSON -> not_json', async () => {
    const h = harness();
    h.reply(200, '{"data":[{"order_id":"a","price":"0.5"},{"order_');
    expect(await rejection(h.rest.listOrders('0xabc'))).toMatchObject({ reason: 'not_json', httpStatus: 200 });
  });

  it('200 with a number for a decimal: that value is skipped, the order still counted', async () => {
    const h = harness();
    h.reply(200, { data: [ORDER, { ...ORDER, remaining_quantity: 7.5 }] });
    const page = await h.rest.listOrders('0xabc');
    expect(page.data).toHaveLength(2);
    expect(page.data?.[1]).not.toHaveProperty('remaining_quantity');
  });

  it('200 with null for any optional field (spec 1.5): read as absent', async () => {
    const h = harness();
    h.reply(200, { data: [{ outcome_id: null, account: { main_account: { address: '0xab', username: null }, subaccount: null } }], next_cursor: null, as_of: null });
    const page = await h.rest.listPositions('0xabc');
    expect(page).toEqual({ data: [{ account: { main_account: { address: '0xab' } } }] });
  });

  it('an account: missing, null or unknown account_type is an error naming it; other nulls are absent', async () => {
    const h = harness();
    h.reply(200, { address: '0xab', account_type: 'main', username: null, image_url: null, venue_name: null, parent: null, subaccounts: null });
    expect(await h.rest.getAccount('0xab')).toEqual({ address: '0xab', account_type: 'main' });
    for (const account_type of [null, undefined, 'vault']) {
      h.reply(200, { address: '0xab', account_type });
      const e = await rejection(h.rest.getAccount('0xab'));
      expect(e).toMatchObject({ reason: 'bad_shape' });
      expect((e as Error).message).toContain('account_type');
    }
  });

  it('a page: data missing, or next_cursor of the wrong type, fails closed', async () => {
    const h = harness();
    h.reply(200, { next_cursor: null });
    expect(((await rejection(h.rest.listOrders('0xabc'))) as Error).message).toContain('data: required');
    h.reply(200, { data: [], next_cursor: 12 });
    expect(((await rejection(h.rest.listOrders('0xabc'))) as Error).message).toContain('next_cursor');
  });

  it('the caller signal reaches the transport', async () => {
    const h = harness();
    const e = await rejection(h.rest.getHealth({ signal: AbortSignal.abort() }));
    expect(e).toBeInstanceOf(TransportError);
    expect((e as TransportError).reason).toBe('aborted');
  });
});

describe('RestClient.scheduleCancel', () => {
  const signer = signerFromPrivateKey('0x0123456789012345678901234567890123456789012345678901234567890123');

  it('posts the exchange body to the ASSUMED path with time as a bare integer, ok -> resolves', async () => {
    const h = harness();
    h.reply(200, { status: 'ok', response: { type: 'default' } });
    const body = await buildScheduleCancel({ signer, network: 'testnet', nonce: 1767268800000, timeMs: 1767268830000 });
    expect(await h.rest.scheduleCancel(body)).toEqual({ status: 'ok', response: { type: 'default' } });
    const call = h.agent.getCallHistory()?.lastCall();
    expect(call?.method).toBe('POST');
    expect(call?.fullUrl).toBe(`${BASE}/v1/trading/orders/schedule-cancel`);
    expect(String(h.lastBody())).toMatch(/^\{"action":\{"type":"scheduleCancel","time":1767268830000\},"nonce":1767268800000,"signature":\{/);
    expect(h.seen).toMatchObject([{ endpoint: 'POST /v1/trading/orders/schedule-cancel', method: 'POST', status: 200 }]);
  });

  it('status err -> ActionError, never success', async () => {
    const h = harness();
    h.reply(200, { status: 'err', response: 'Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $0.' });
    const body = await buildScheduleCancel({ signer, network: 'testnet', nonce: 1 });
    const e = await rejection(h.rest.scheduleCancel(body));
    expect(e).toBeInstanceOf(ActionError);
    expect(e).toMatchObject({ reason: 'ineligible', endpoint: 'POST /v1/trading/orders/schedule-cancel' });
  });

  it('429 with rate_limit -> RestError carrying retry_after_seconds', async () => {
    const h = harness();
    h.reply(429, {
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        message: 'too many',
        details: [{ type: 'rate_limit', limit: 10, reason: 'per_endpoint', retry_after_seconds: 3, scope: 'endpoint', window_seconds: 1 }],
      },
    });
    const body = await buildScheduleCancel({ signer, network: 'testnet', nonce: 2, timeMs: 1767268830000 });
    const e = (await rejection(h.rest.scheduleCancel(body))) as RestError;
    expect(e).toBeInstanceOf(RestError);
    expect(e.reason).toBe('rate_limited');
    expect(e.rateLimit).toMatchObject({ retry_after_seconds: 3, scope: 'endpoint', window_seconds: 1, limit: 10 });
  });
});

describe('RestClient pagination', () => {
  function pagedOrders(h: Harness, pages: Array<{ ids: string[]; next?: string; outcomes?: string[] }>): void {
    for (const p of pages) {
      h.reply(200, {
        data: p.ids.map((id) => ({ ...ORDER, order_id: id })),
        ...(p.next !== undefined ? { next_cursor: p.next } : {}),
        included: { outcomes: (p.outcomes ?? []).map((id) => ({ id, title: `${id}@${p.ids[0]}` })) },
      });
    }
  }

  it('walks 3 pages, passing each next_cursor, with the default page limit', async () => {
    const h = harness();
    pagedOrders(h, [{ ids: ['a', 'b'], next: 'c1' }, { ids: ['c'], next: 'c2' }, { ids: ['d'] }]);
    const got: string[][] = [];
    for await (const page of h.rest.ordersPages('0xabc', { outcome_id: 'o1' })) {
      got.push((page.data ?? []).map((o) => o.order_id ?? '?'));
    }
    expect(got).toEqual([['a', 'b'], ['c'], ['d']]);
    const urls = (h.agent.getCallHistory()?.calls() ?? []).map((c) => c.fullUrl);
    expect(urls).toEqual([
      `${BASE}/v1/accounts/0xabc/orders?outcome_id=o1&limit=100`,
      `${BASE}/v1/accounts/0xabc/orders?outcome_id=o1&limit=100&cursor=c1`,
      `${BASE}/v1/accounts/0xabc/orders?outcome_id=o1&limit=100&cursor=c2`,
    ]);
  });

  it('stops on an empty next_cursor', async () => {
    const h = harness();
    pagedOrders(h, [{ ids: ['a'], next: '' }]);
    let n = 0;
    for await (const _page of h.rest.ordersPages('0xabc')) n++;
    expect(n).toBe(1);
    expect(h.agent.getCallHistory()?.calls()).toHaveLength(1);
  });

  it('refuses a repeated cursor instead of looping', async () => {
    const h = harness();
    pagedOrders(h, [{ ids: ['a'], next: 'c1' }, { ids: ['b'], next: 'c2' }, { ids: ['c'], next: 'c1' }, { ids: ['never'] }]);
    const seen: string[] = [];
    const e = await rejection(
      (async () => {
        for await (const page of h.rest.ordersPages('0xabc')) seen.push(page.data?.[0]?.order_id ?? '?');
      })(),
    );
    expect(e).toBeInstanceOf(DecodeError);
    expect(e).toMatchObject({ reason: 'bad_shape', endpoint: 'GET /v1/accounts/{address}/orders' });
    expect((e as Error).message).toContain('repeated');
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(h.agent.getCallHistory()?.calls()).toHaveLength(3);
  });

  it('a next_cursor equal to the starting cursor is a repeat too', async () => {
    const h = harness();
    h.reply(200, { data: [], next_cursor: 'start' });
    const it = h.rest.ordersPages('0xabc', { cursor: 'start' });
    expect((await it.next()).done).toBe(false);
    expect(await rejection(it.next())).toMatchObject({ reason: 'bad_shape' });
    expect(h.lastUrl()).toBe(`${BASE}/v1/accounts/0xabc/orders?cursor=start&limit=100`);
  });

  it('refuses more than maxPages pages', async () => {
    const h = harness({ maxPages: 2 });
    pagedOrders(h, [{ ids: ['a'], next: 'c1' }, { ids: ['b'], next: 'c2' }, { ids: ['c'] }]);
    const e = await rejection(h.rest.allOrders('0xabc'));
    expect(e).toMatchObject({ reason: 'bad_shape' });
    expect((e as Error).message).toContain('2 pages');
    expect(h.agent.getCallHistory()?.calls()).toHaveLength(2);
  });

  it('allOrders concatenates pages and merges included by id', async () => {
    const h = harness();
    pagedOrders(h, [
      { ids: ['a', 'b'], next: 'c1', outcomes: ['o1', 'o2'] },
      { ids: ['c'], next: 'c2', outcomes: ['o2', 'o3'] },
      { ids: ['d'], outcomes: ['o1'] },
    ]);
    const all = await h.rest.allOrders('0xabc', { include: 'outcome', limit: 2 });
    expect(all.data.map((o) => o.order_id)).toEqual(['a', 'b', 'c', 'd']);
    expect(all.included.outcomes.map((o) => o.id)).toEqual(['o1', 'o2', 'o3']);
    // the latest page's copy wins
    expect(all.included.outcomes.find((o) => o.id === 'o1')?.title).toBe('o1@d');
    expect(all.included.events).toEqual([]);
    expect(new URL(h.lastUrl()!).searchParams.get('limit')).toBe('2');
  });

  it('allPositions concatenates, keeps the first as_of, merges events', async () => {
    const h = harness();
    h.reply(200, { data: [{ outcome_id: 'o1', quantity: '1' }], next_cursor: 'p2', as_of: 'T1', included: { events: [{ id: 'e1' }] } });
    h.reply(200, { data: [{ outcome_id: 'o2', quantity: '2' }], as_of: 'T2', included: { events: [{ id: 'e1' }, { id: 'e2' }] } });
    const all = await h.rest.allPositions('0xabc');
    expect(all.data.map((p) => p.quantity)).toEqual(['1', '2']);
    expect(all.as_of).toBe('T1');
    expect(all.included.events.map((e) => e.id)).toEqual(['e1', 'e2']);
  });

  it('participantsPages follows cursors', async () => {
    const h = harness();
    h.reply(200, { data: [{ id: 'p1' }], next_cursor: 'x' });
    h.reply(200, { data: [{ id: 'p2' }] });
    const ids: string[] = [];
    for await (const page of h.rest.participantsPages({ topic_id: 'sports' })) ids.push(...(page.data ?? []).map((p) => p.id ?? '?'));
    expect(ids).toEqual(['p1', 'p2']);
    expect(h.lastUrl()).toBe(`${BASE}/v1/participants?topic_id=sports&limit=100&cursor=x`);
  });
});
