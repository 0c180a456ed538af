import { describe, expect, it } from 'vitest';
import type { HttpRequest, HttpResponse } from '../http.js';
import { DecodeError, TransportError } from '../errors.js';
import { PolymarketClob } from './clob.js';
import { ClobError, ClobRequestError } from './errors.js';
import { polyHmacSignature } from './l2-auth.js';

const CREDS = { key: 'k', secret: Buffer.from('secret-bytes-0123').toString('base64'), passphrase: 'p' };
const ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

type Reply = { status: number; body: string; headers?: Record<string, string> } | Error;

/** A transport that records each request and answers from a script (the last reply repeats). */
function scripted(...replies: Reply[]): { transport: { request(req: HttpRequest): Promise<HttpResponse> }; seen: HttpRequest[] } {
  const seen: HttpRequest[] = [];
  let mono = 100;
  return {
    seen,
    transport: {
      async request(req: HttpRequest): Promise<HttpResponse> {
        seen.push(req);
        const r = replies[Math.min(seen.length - 1, replies.length - 1)]!;
        if (r instanceof Error) throw r;
        mono += 10;
        return { status: r.status, headers: r.headers ?? {}, body: Buffer.from(r.body), latencyMs: 5, sentMonoMs: mono - 5, recvMonoMs: mono };
      },
    },
  };
}

function clob(t: ReturnType<typeof scripted>, now = 1_700_000_000.7): PolymarketClob {
  return new PolymarketClob({ baseUrl: 'https://clob.example/', transport: t.transport, address: ADDRESS, creds: CREDS, nowSeconds: () => now });
}

const page = (next: string | null | undefined, ids: Array<string | null>): Reply => ({
  status: 200,
  body: JSON.stringify({ ...(next === undefined ? {} : { next_cursor: next }), data: ids.map((id) => (id === null ? { status: 'LIVE' } : { id, status: 'LIVE' })) }),
});

describe('PolymarketClob.heartbeat', () => {
  it('posts the chained body with L2 headers signed over path and body at the floored time', async () => {
    const t = scripted({ status: 200, body: '{"heartbeat_id":"n2"}' });
    const out = await clob(t).heartbeat('n1', { timeoutMs: 900 });
    expect(out).toEqual({ kind: 'accepted', httpStatus: 200, heartbeatId: 'n2', sentMonoMs: 105, recvMonoMs: 110 });
    const req = t.seen[0]!;
    expect(req).toMatchObject({ endpoint: 'POST /v1/heartbeats', method: 'POST', url: 'https://clob.example/v1/heartbeats', json: { heartbeat_id: 'n1' }, timeoutMs: 900 });
    expect(req.headers).toMatchObject({
      POLY_ADDRESS: ADDRESS,
      POLY_TIMESTAMP: '1700000000',
      POLY_SIGNATURE: polyHmacSignature(CREDS.secret, 1_700_000_000, 'POST', '/v1/heartbeats', '{"heartbeat_id":"n1"}'),
      POLY_API_KEY: 'k',
      POLY_PASSPHRASE: 'p',
    });
  });

  it('a stale answer carries the current id to resend with', async () => {
    const t = scripted({ status: 400, body: '{"error":"Invalid Heartbeat ID","heartbeat_id":"cur"}' });
    expect(await clob(t).heartbeat('old')).toMatchObject({ kind: 'stale', currentId: 'cur' });
  });

  it.each([
    ['a timeout', new TransportError('POST /v1/heartbeats', 'timeout', 'x'), { kind: 'transient', cause: 'timeout' }],
    ['a reset', new TransportError('POST /v1/heartbeats', 'network', 'x'), { kind: 'transient', cause: 'network' }],
    ['a caller abort', new TransportError('POST /v1/heartbeats', 'aborted', 'x'), { kind: 'transient', cause: 'aborted' }],
    ['a body past the cap', new DecodeError('POST /v1/heartbeats', 'too_large', 'x', 200), { kind: 'transient', cause: 'too_large', httpStatus: 200 }],
  ])('no answer (%s) is a transient outcome, not a throw', async (_w, err, want) => {
    expect(await clob(scripted(err)).heartbeat(null)).toEqual(want);
  });

  it('a bug below (not a transport failure) is not disguised as an outcome', async () => {
    await expect(clob(scripted(new TypeError('boom'))).heartbeat(null)).rejects.toThrow(TypeError);
  });
});

describe('PolymarketClob.openOrders', () => {
  it('follows next_cursor from MA== to LTE=, each page signed over the bare path, the cursor URL-encoded', async () => {
    const t = scripted(page('a+b/c=', ['1', '2']), page('LTE=', ['3']));
    const out = await clob(t).openOrders();
    expect(out).toEqual({ orders: [{ id: '1', status: 'LIVE' }, { id: '2', status: 'LIVE' }, { id: '3', status: 'LIVE' }], pages: 2, skippedWithoutId: 0, cursorMissing: false });
    expect(t.seen.map((r) => r.url)).toEqual(['https://clob.example/data/orders?next_cursor=MA%3D%3D', 'https://clob.example/data/orders?next_cursor=a%2Bb%2Fc%3D']);
    for (const r of t.seen) {
      expect(r).toMatchObject({ method: 'GET', endpoint: 'GET /data/orders' });
      expect(r.json).toBeUndefined();
      expect(r.headers!['POLY_SIGNATURE']).toBe(polyHmacSignature(CREDS.secret, 1_700_000_000, 'GET', '/data/orders'));
    }
  });

  it('counts entries without an id over all pages', async () => {
    const out = await clob(scripted(page('c2', ['1', null]), page('LTE=', [null, null, '2']))).openOrders();
    expect(out).toMatchObject({ pages: 2, skippedWithoutId: 3, orders: [{ id: '1' }, { id: '2' }] });
  });

  it('a page without a cursor is the last one, and says so', async () => {
    const t = scripted(page(undefined, ['1']), page('LTE=', ['never']));
    expect(await clob(t).openOrders()).toMatchObject({ pages: 1, cursorMissing: true, orders: [{ id: '1' }] });
    expect(t.seen.length).toBe(1);
    expect(await clob(scripted(page(null, []))).openOrders()).toMatchObject({ pages: 1, cursorMissing: true, orders: [] });
  });

  it('a cursor that repeats, or pages without end, fail rather than loop', async () => {
    await expect(clob(scripted(page('x', ['1']), page('x', ['2']))).openOrders()).rejects.toThrow(/cursor repeats/);
    let n = 0;
    const endless = { request: async (): Promise<HttpResponse> => ({ status: 200, headers: {}, body: Buffer.from(JSON.stringify({ next_cursor: `c${++n}`, data: [] })), latencyMs: 1, sentMonoMs: 0, recvMonoMs: 1 }) };
    const c = new PolymarketClob({ baseUrl: 'https://clob.example', transport: endless, address: ADDRESS, creds: CREDS, nowSeconds: () => 1 });
    await expect(c.openOrders({ maxPages: 5 })).rejects.toThrow(/no end cursor after 5 pages/);
    expect(n).toBe(5);
  });

  it.each([
    ['401', { status: 401, body: '{"error":"Unauthorized/Invalid api key"}' }, 'unauthorized', 'Unauthorized/Invalid api key'],
    ['425', { status: 425, body: '' }, 'maintenance', undefined],
    ['429', { status: 429, body: '', headers: { 'retry-after': '2' } }, 'rate_limited', undefined],
    ['500', { status: 500, body: '<html>oops</html>' }, 'transient', undefined],
    ['400', { status: 400, body: '{"error":"bad cursor"}' }, 'refused', 'bad cursor'],
    ['200 not JSON', { status: 200, body: '<html>' }, 'transient', undefined],
    ['200 data not an array', { status: 200, body: '{"data":{}}' }, 'transient', undefined],
  ] as const)('%s fails with a ClobError of the right reason', async (_w, reply, reasonWant, venueMessage) => {
    const err = await clob(scripted(reply)).openOrders().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClobError);
    expect(err).toMatchObject({ code: 'POLYMARKET_CLOB_ERROR', reason: reasonWant, endpoint: 'GET /data/orders', venueMessage });
    if (reasonWant === 'rate_limited') expect((err as ClobError).retryAfterMs).toBe(2000);
  });

  it('no answer fails as transient, keeping the transport reason in the message', async () => {
    const err = await clob(scripted(new TransportError('GET /data/orders', 'timeout', 'x'))).openOrders().catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'transient' });
    expect((err as Error).message).toContain('timeout');
  });
});

describe('PolymarketClob.serverTimeSeconds', () => {
  it.each([
    ['a bare integer', '1764330000', 1764330000],
    ['a JSON string of digits', '"1764330000"', 1764330000],
  ])('reads %s, unauthenticated', async (_w, body, want) => {
    const t = scripted({ status: 200, body });
    expect(await clob(t).serverTimeSeconds()).toBe(want);
    expect(t.seen[0]).toMatchObject({ method: 'GET', url: 'https://clob.example/time', endpoint: 'GET /time' });
    expect(t.seen[0]!.headers).toBeUndefined();
  });

  it.each([['{"time":1}'], ['1.5'], ['-3'], ['0'], ['"soon"'], ['null'], ['<html>']])('refuses %s', async (body) => {
    await expect(clob(scripted({ status: 200, body })).serverTimeSeconds()).rejects.toMatchObject({ code: 'POLYMARKET_CLOB_ERROR', reason: 'transient' });
  });
});

describe('PolymarketClob construction', () => {
  const ok = { baseUrl: 'https://clob.example', transport: scripted().transport, address: ADDRESS, creds: CREDS, nowSeconds: () => 1 };
  it.each([
    ['a base URL that is not one', { baseUrl: 'clob' }, 'bad_url'],
    ['a base URL that is not http(s)', { baseUrl: 'ftp://clob.example' }, 'bad_url'],
    ['a base URL with a query', { baseUrl: 'https://clob.example/?a=1' }, 'bad_url'],
    ['a bad address', { address: '0xnope' }, 'bad_address'],
    ['a bad secret', { creds: { ...CREDS, secret: '=' } }, 'bad_secret'],
  ])('refuses %s', (_w, patch, reasonWant) => {
    expect(() => new PolymarketClob({ ...ok, ...patch })).toThrow(expect.objectContaining({ reason: reasonWant }) as unknown as Error);
    expect(() => new PolymarketClob({ ...ok, ...patch })).toThrow(ClobRequestError);
  });

  it('a clock that says nothing usable fails the call before anything is sent', async () => {
    const t = scripted({ status: 200, body: '{}' });
    const c = new PolymarketClob({ ...ok, transport: t.transport, nowSeconds: () => Number.NaN });
    await expect(c.heartbeat(null)).rejects.toThrow(ClobRequestError);
    expect(t.seen).toEqual([]);
  });

  it('does not print the credentials', () => {
    const c = new PolymarketClob(ok);
    expect(JSON.stringify(c)).not.toContain(CREDS.secret);
    expect(JSON.stringify(c)).not.toContain('"p"');
  });
});
