/**
 * The Polymarket CLOB client (`@polymarket/clob-client`, the venue's own) as the oracle for what
 * the keeper sends: for the same address, credentials, timestamp and previous id, our L2 headers and
 * our heartbeat and open-orders requests (method, path and query, body bytes, every header) equal
 * what the client puts on the wire. Both are run against one local HTTP server that records each
 * request as it arrives; the client's clock is frozen by stubbing `Date.now` around its call only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { ClobClient, createL2Headers } from '@polymarket/clob-client';
import { buildPolyHmacSignature } from '@polymarket/clob-client/dist/signing/hmac.js';
import { END_CURSOR, INITIAL_CURSOR } from '@polymarket/clob-client/dist/constants.js';
import { GET_OPEN_ORDERS, POST_HEARTBEAT, TIME } from '@polymarket/clob-client/dist/endpoints.js';
import { createWalletClient, custom } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { HttpTransport } from '../src/venue/http.js';
import { PolymarketClob } from '../src/venue/polymarket/clob.js';
import { l2Headers, polyHmacSignature, type L2Method } from '../src/venue/polymarket/l2-auth.js';
import { heartbeatRequest } from '../src/venue/polymarket/heartbeat.js';
import { POLYMARKET_FACTS } from '../src/venue/polymarket/facts.js';

// A fixed test key (not a real account's): the address the client derives from it is what it sends.
const TEST_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const account = privateKeyToAccount(TEST_KEY);
// A wallet client the client accepts as a signer; L2 never asks it to sign, and it has no chain to reach.
const wallet = createWalletClient({
  account,
  transport: custom({
    request: async () => {
      throw new Error('no RPC in this test');
    },
  }),
});
const CREDS = {
  key: '1d9b6b9e-6f32-4c1e-9f64-7a1b2c3d4e5f',
  // base64url with '-' and '_', as secrets routinely come
  secret: 'dGVzdC1zZWNyZXQtZm9yLWRtcy1rZWVwZXI_-yZW-_8A',
  passphrase: '6b1f0c1c3e2d4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f90',
};
const T = 1_764_330_000;

interface Captured {
  method: string;
  url: string;
  /** Header names as sent (case kept), in order. */
  names: string[];
  /** Lowercased name -> value. */
  headers: Record<string, string>;
  body: string;
}

let server: Server;
let base: string;
const captured: Captured[] = [];

/** What the server answers: a heartbeat id, two pages of orders (the second after a cursor with + / =), the time. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  res.setHeader('content-type', 'application/json');
  if (req.method === 'POST' && url.pathname === '/v1/heartbeats') {
    res.end('{"heartbeat_id":"hb-2"}');
  } else if (req.method === 'GET' && url.pathname === '/data/orders') {
    const cursor = url.searchParams.get('next_cursor');
    if (cursor === 'MA==') {
      res.end(JSON.stringify({ limit: 1, count: 1, next_cursor: 'a+b/c=', data: [{ id: '0xa1', status: 'LIVE', market: '0xm', asset_id: '7', side: 'BUY', price: '0.5', original_size: '10', size_matched: '0', outcome: 'YES' }] }));
    } else if (cursor === 'a+b/c=') {
      res.end(JSON.stringify({ limit: 1, count: 1, next_cursor: 'LTE=', data: [{ id: '0xa2', status: 'LIVE', side: 'SELL', price: '0.6', original_size: '5', size_matched: '1' }] }));
    } else {
      res.statusCode = 400;
      res.end('{"error":"bad cursor"}');
    }
  } else if (req.method === 'GET' && url.pathname === '/time') {
    res.end(String(T));
  } else {
    res.statusCode = 404;
    res.end('{"error":"not found"}');
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const names: string[] = [];
      const headers: Record<string, string> = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        names.push(req.rawHeaders[i]!);
        headers[req.rawHeaders[i]!.toLowerCase()] = req.rawHeaders[i + 1]!;
      }
      captured.push({ method: req.method ?? '', url: req.url ?? '', names, headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Runs `f` with the client's clock frozen at T (seconds), and returns the requests it made. */
async function capture(f: () => Promise<unknown>, frozen = false): Promise<Captured[]> {
  const from = captured.length;
  const spy = frozen ? vi.spyOn(Date, 'now').mockReturnValue(T * 1000 + 789) : undefined;
  try {
    await f();
  } finally {
    spy?.mockRestore();
  }
  return captured.slice(from);
}

function ours(): { clob: PolymarketClob; transport: HttpTransport } {
  const transport = new HttpTransport({ requestTimeoutMs: 5_000 });
  return { clob: new PolymarketClob({ baseUrl: `${base}/`, transport, address: account.address.toLowerCase(), creds: CREDS, nowSeconds: () => T + 0.9 }), transport };
}

const L2_NAMES = ['POLY_ADDRESS', 'POLY_SIGNATURE', 'POLY_TIMESTAMP', 'POLY_API_KEY', 'POLY_PASSPHRASE'];

/**
 * Headers the HTTP stacks add on their own, unsigned, where axios (the client's) and undici (ours)
 * differ. Anything else that differs fails the test; so does any of these that stops differing
 * (then it belongs with the equal ones).
 */
const STACK_HEADERS: Record<'POST' | 'GET', string[]> = {
  POST: ['accept', 'accept-encoding', 'user-agent'],
  GET: ['accept', 'accept-encoding', 'content-type', 'user-agent'],
};

function compare(theirs: Captured, mine: Captured, method: 'POST' | 'GET'): void {
  expect(mine.method).toBe(theirs.method);
  expect(mine.url).toBe(theirs.url);
  expect(mine.body).toBe(theirs.body);
  // The signed headers: same names, same case, same order, same values.
  expect(mine.names.filter((n) => n.startsWith('POLY_'))).toEqual(L2_NAMES);
  expect(theirs.names.filter((n) => n.startsWith('POLY_'))).toEqual(L2_NAMES);
  for (const n of L2_NAMES) expect(mine.headers[n.toLowerCase()], n).toBe(theirs.headers[n.toLowerCase()]);
  const all = new Set([...Object.keys(theirs.headers), ...Object.keys(mine.headers)]);
  const differing = [...all].filter((k) => theirs.headers[k] !== mine.headers[k]).sort();
  expect(differing).toEqual(STACK_HEADERS[method]);
}

describe('the Polymarket client as the oracle for our requests', () => {
  it.each([
    ['the first beat of a chain (null)', null],
    ['a beat naming the previous id', '6a1d3f3c-5b7e-4a44-9b1c-2f0e8d7c6b5a'],
    ['an id with characters JSON escapes', 'id"with\\quote\u2028and\u00e9'],
    ['the empty id (clob-client-v2 starts a chain with "")', ''],
  ])('heartbeat, %s: method, path, body bytes and every header equal the client', async (_what, prevId) => {
    const client = new ClobClient(base, 137, wallet, CREDS);
    const [theirs] = await capture(() => client.postHeartbeat(prevId), true);
    const { clob, transport } = ours();
    try {
      const [mine] = await capture(() => clob.heartbeat(prevId));
      compare(theirs!, mine!, 'POST');
      expect(mine!.body).toBe(heartbeatRequest(prevId).body);
      expect(mine!.headers['poly_timestamp']).toBe(String(T));
      expect(mine!.headers['poly_address']).toBe(account.address); // checksummed, as the signer gives it
      expect(mine!.headers['content-type']).toBe('application/json');
    } finally {
      await transport.close();
    }
  });

  it('heartbeat: our decoded answer carries the id the server gave', async () => {
    const { clob, transport } = ours();
    try {
      const out = await clob.heartbeat(null);
      expect(out).toMatchObject({ kind: 'accepted', heartbeatId: 'hb-2', httpStatus: 200 });
      expect(out.recvMonoMs).toBeGreaterThanOrEqual(out.sentMonoMs!);
    } finally {
      await transport.close();
    }
  });

  it('open orders: every page (query, signed path, headers) equals the client, and the same orders come back', async () => {
    const client = new ClobClient(base, 137, wallet, CREDS);
    let theirOrders: Array<{ id: string }> = [];
    const theirs = await capture(async () => {
      theirOrders = await client.getOpenOrders();
    }, true);
    const { clob, transport } = ours();
    try {
      let mine: Captured[] = [];
      let result: Awaited<ReturnType<PolymarketClob['openOrders']>> | undefined;
      mine = await capture(async () => {
        result = await clob.openOrders();
      });
      expect(theirs.map((c) => c.url)).toEqual(['/data/orders?next_cursor=MA%3D%3D', '/data/orders?next_cursor=a%2Bb%2Fc%3D']);
      expect(mine.length).toBe(theirs.length);
      for (let i = 0; i < theirs.length; i++) compare(theirs[i]!, mine[i]!, 'GET');
      expect(result!.orders.map((o) => o.id)).toEqual(theirOrders.map((o) => o.id));
      expect(result!.orders[0]).toEqual({ id: '0xa1', status: 'LIVE', market: '0xm', asset_id: '7', side: 'BUY', price: '0.5', original_size: '10', size_matched: '0' });
      expect(result).toMatchObject({ pages: 2, skippedWithoutId: 0, cursorMissing: false });
    } finally {
      await transport.close();
    }
  });

  it('server time: the same request, unauthenticated, and the same seconds', async () => {
    const client = new ClobClient(base, 137, wallet, CREDS);
    let theirTime: unknown;
    const [theirs] = await capture(async () => {
      theirTime = await client.getServerTime();
    });
    const { clob, transport } = ours();
    try {
      let mine: number | undefined;
      const [req] = await capture(async () => {
        mine = await clob.serverTimeSeconds();
      });
      expect(req!.method).toBe(theirs!.method);
      expect(req!.url).toBe(theirs!.url);
      expect(req!.names.filter((n) => n.startsWith('POLY_'))).toEqual([]);
      expect(theirs!.names.filter((n) => n.startsWith('POLY_'))).toEqual([]);
      expect(mine).toBe(theirTime);
    } finally {
      await transport.close();
    }
  });

  it('l2Headers equals createL2Headers for the same inputs (names, order, values)', async () => {
    const args = { method: 'POST' as const, requestPath: '/v1/heartbeats', body: '{"heartbeat_id":null}' };
    const theirs = await createL2Headers(wallet, CREDS, args, T);
    const mine = l2Headers({ address: account.address.toLowerCase(), creds: CREDS, timestampSeconds: T, ...args });
    expect(Object.entries(mine)).toEqual(Object.entries(theirs));
    const get = await createL2Headers(wallet, CREDS, { method: 'GET', requestPath: '/data/orders' }, T);
    expect(Object.entries(l2Headers({ address: account.address, creds: CREDS, timestampSeconds: T, method: 'GET', requestPath: '/data/orders' }))).toEqual(Object.entries(get));
  });
});

describe("the facts taken from the client are the client's", () => {
  it('paths, cursors and header names', async () => {
    expect(POLYMARKET_FACTS.heartbeatPath).toBe(POST_HEARTBEAT);
    expect(POLYMARKET_FACTS.openOrdersPath).toBe(GET_OPEN_ORDERS);
    expect(POLYMARKET_FACTS.serverTimePath).toBe(TIME);
    expect(POLYMARKET_FACTS.initialCursor).toBe(INITIAL_CURSOR);
    expect(POLYMARKET_FACTS.endCursor).toBe(END_CURSOR);
    expect(Object.keys(await createL2Headers(wallet, CREDS, { method: 'GET', requestPath: '/' }, 1))).toEqual([...POLYMARKET_FACTS.l2HeaderNames]);
  });
});

describe('HMAC: polyHmacSignature equals buildPolyHmacSignature', () => {
  const methods: L2Method[] = ['GET', 'POST', 'DELETE', 'PUT'];
  const b64chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=';

  /** A secret as the venue issues it (base64 of bytes), in either alphabet, padded or not, maybe with junk around. */
  const secretArb = fc
    .record({
      bytes: fc.uint8Array({ minLength: 1, maxLength: 80 }),
      urlSafe: fc.boolean(),
      stripPad: fc.boolean(),
      junk: fc.array(fc.constantFrom(' ', '\n', '.', '!', '\u00e9', '\t'), { maxLength: 4 }),
      junkAt: fc.nat(),
    })
    .map(({ bytes, urlSafe, stripPad, junk, junkAt }) => {
      let s = Buffer.from(bytes).toString('base64');
      if (urlSafe) s = s.replace(/\+/g, '-').replace(/\//g, '_');
      if (stripPad) s = s.replace(/=+$/, '');
      const at = junkAt % (s.length + 1);
      return s.slice(0, at) + junk.join('') + s.slice(at);
    });
  const pathArb = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }).map((p) => `/${p}`);
  const bodyArb = fc.option(fc.string({ unit: 'binary', maxLength: 200 }), { nil: undefined });

  it('over random secrets, timestamps, methods, paths and bodies (unicode, lone surrogates)', async () => {
    await fc.assert(
      fc.asyncProperty(secretArb, fc.integer({ min: 0, max: 4_000_000_000 }), fc.constantFrom(...methods), pathArb, bodyArb, async (secret, ts, method, path, body) => {
        const theirs = await buildPolyHmacSignature(secret, ts, method, path, body);
        expect(polyHmacSignature(secret, ts, method, path, body)).toBe(theirs);
      }),
      { numRuns: 300 },
    );
  });

  it('over arbitrary secret texts: we sign exactly when the client can, and the same bytes', async () => {
    const anySecret = fc.oneof(fc.string({ unit: fc.constantFrom(...b64chars.split('')), maxLength: 12 }), fc.string({ maxLength: 12 }));
    await fc.assert(
      fc.asyncProperty(anySecret, async (secret) => {
        let theirs: string | Error;
        try {
          theirs = await buildPolyHmacSignature(secret, T, 'POST', '/v1/heartbeats', '{}');
        } catch (e) {
          theirs = e as Error;
        }
        let mine: string | Error;
        try {
          mine = polyHmacSignature(secret, T, 'POST', '/v1/heartbeats', '{}');
        } catch (e) {
          mine = e as Error;
        }
        if (typeof theirs === 'string') expect(mine).toBe(theirs);
        else expect(mine, `client failed on ${JSON.stringify(secret)}`).toBeInstanceOf(Error);
      }),
      { numRuns: 500 },
    );
  });
});
