import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MockAgent, Pool } from 'undici';
import { DecodeError, TransportError } from './errors.js';
import { HttpTransport, type ResponseObservation } from './http.js';
import { FakeClock } from '../time/fake-clock.js';

const ORIGIN = 'http://venue.test';

function mockAgent(): MockAgent {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  return agent;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

// Loopback servers stand in where MockAgent cannot: real sockets, real streaming, real stalls.
const servers: http.Server[] = [];
async function serve(handler: http.RequestListener): Promise<string> {
  const srv = http.createServer(handler);
  servers.push(srv);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

describe('HttpTransport with MockAgent', () => {
  it('returns status, raw body and Date header, sends JSON with bigint bare, observes once', async () => {
    const agent = mockAgent();
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1/trading/orders/schedule-cancel', method: 'POST' })
      .reply(200, '{"status":"ok"}', { headers: { date: 'Thu, 01 Jan 2026 12:00:00 GMT', 'content-type': 'application/json' } });
    const seen: ResponseObservation[] = [];
    const t = new HttpTransport({ requestTimeoutMs: 5_000, dispatcher: agent, onResponse: (o) => seen.push(o) });
    const res = await t.request({
      endpoint: 'POST /v1/trading/orders/schedule-cancel',
      method: 'POST',
      url: `${ORIGIN}/v1/trading/orders/schedule-cancel`,
      json: { action: { type: 'scheduleCancel', time: 1767268805000n }, nonce: 1767268800000 },
    });
    expect(res.status).toBe(200);
    expect(res.body.toString('utf8')).toBe('{"status":"ok"}');
    expect(res.dateHeader).toBe('Thu, 01 Jan 2026 12:00:00 GMT');

    const call = agent.getCallHistory()?.lastCall();
    expect(call?.body).toBe('{"action":{"type":"scheduleCancel","time":1767268805000},"nonce":1767268800000}');
    expect(call?.headers).toMatchObject({ 'content-type': 'application/json', accept: 'application/json' });

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      endpoint: 'POST /v1/trading/orders/schedule-cancel',
      method: 'POST',
      status: 200,
      dateHeader: 'Thu, 01 Jan 2026 12:00:00 GMT',
    });
    expect(seen[0]!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(seen[0]!.errorReason).toBeUndefined();
  });

  it('returns a non-2xx answer as is: judging it is the decoder’s job', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/health' }).reply(503, 'down');
    const seen: ResponseObservation[] = [];
    const t = new HttpTransport({ requestTimeoutMs: 5_000, dispatcher: agent, onResponse: (o) => seen.push(o) });
    const res = await t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${ORIGIN}/v1/health` });
    expect(res.status).toBe(503);
    expect(res.body.toString()).toBe('down');
    expect(seen.map((o) => o.status)).toEqual([503]);
  });

  it('overall deadline -> TransportError timeout, observed as error, timer cleared', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/health' }).reply(200, '{}').delay(60_000);
    const clock = new FakeClock();
    const seen: ResponseObservation[] = [];
    const t = new HttpTransport({ requestTimeoutMs: 2_000, dispatcher: agent, clock, onResponse: (o) => seen.push(o) });
    const p = rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${ORIGIN}/v1/health` }));
    await clock.advance(1_999);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(1);
    const err = await p;
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).reason).toBe('timeout');
    expect((err as TransportError).endpoint).toBe('GET /v1/health');
    expect(seen).toEqual([{ endpoint: 'GET /v1/health', method: 'GET', status: 'error', errorReason: 'timeout', latencyMs: 2_000 }]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a per-request timeoutMs tightens the deadline', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/health' }).reply(200, '{}').delay(60_000);
    const clock = new FakeClock();
    const t = new HttpTransport({ requestTimeoutMs: 10_000, dispatcher: agent, clock });
    const p = rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${ORIGIN}/v1/health`, timeoutMs: 300 }));
    await clock.advance(300);
    expect((await p) as TransportError).toMatchObject({ reason: 'timeout' });
  });

  it('caller abort in flight -> TransportError aborted', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/health' }).reply(200, '{}').delay(60_000);
    const seen: ResponseObservation[] = [];
    const t = new HttpTransport({ requestTimeoutMs: 30_000, dispatcher: agent, onResponse: (o) => seen.push(o) });
    const ac = new AbortController();
    const p = rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${ORIGIN}/v1/health`, signal: ac.signal }));
    setTimeout(() => ac.abort(), 20);
    const err = await p;
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).reason).toBe('aborted');
    expect(seen.map((o) => [o.status, o.errorReason])).toEqual([['error', 'aborted']]);
  });

  it('leaves no listener on a long-lived caller signal', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/health' }).reply(200, '{}').times(3);
    const t = new HttpTransport({ requestTimeoutMs: 1_000, dispatcher: agent });
    const daemonLife = new AbortController();
    for (let i = 0; i < 3; i++) {
      await t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${ORIGIN}/v1/health`, signal: daemonLife.signal });
    }
    expect(getEventListeners(daemonLife.signal, 'abort')).toHaveLength(0);
  });

  it('an already-aborted signal sends nothing', async () => {
    const agent = mockAgent();
    const t = new HttpTransport({ requestTimeoutMs: 1_000, dispatcher: agent });
    const err = await rejection(
      t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${ORIGIN}/v1/health`, signal: AbortSignal.abort() }),
    );
    expect((err as TransportError).reason).toBe('aborted');
    expect(agent.getCallHistory()?.calls()).toHaveLength(0);
  });

  it('a connection failure -> TransportError network, without URL credentials or the body in the message', async () => {
    const agent = mockAgent();
    agent
      .get('http://venue.test')
      .intercept({ path: '/exchange', method: 'POST' })
      .replyWithError(new Error('socket hang up http://user:hunter2@venue.test/exchange'));
    const t = new HttpTransport({ requestTimeoutMs: 1_000, dispatcher: agent });
    const err = await rejection(
      t.request({
        endpoint: 'exchange:scheduleCancel',
        method: 'POST',
        url: 'http://user:hunter2@venue.test/exchange',
        json: { signature: { r: '0xSIGNATURE_R' } },
      }),
    );
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).reason).toBe('network');
    const msg = (err as Error).message;
    expect(msg).toContain('exchange:scheduleCancel');
    expect(msg).not.toContain('hunter2');
    expect(msg).not.toContain('SIGNATURE');
    expect(msg).not.toContain('venue.test');
  });

  it('a body over the cap with content-length -> too_large before reading', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/templates' }).replyContentLength().reply(200, 'x'.repeat(2_000));
    const seen: ResponseObservation[] = [];
    const t = new HttpTransport({ requestTimeoutMs: 1_000, dispatcher: agent, maxResponseBytes: 1_024, onResponse: (o) => seen.push(o) });
    const err = await rejection(t.request({ endpoint: 'GET /v1/templates', method: 'GET', url: `${ORIGIN}/v1/templates` }));
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).reason).toBe('too_large');
    expect((err as DecodeError).httpStatus).toBe(200);
    expect(seen).toMatchObject([{ status: 'error', errorReason: 'too_large', httpStatus: 200 }]);
  });

  it('a body over the cap without content-length -> too_large while streaming', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/templates' }).reply(200, 'y'.repeat(1_025));
    const t = new HttpTransport({ requestTimeoutMs: 1_000, dispatcher: agent, maxResponseBytes: 1_024 });
    const err = await rejection(t.request({ endpoint: 'GET /v1/templates', method: 'GET', url: `${ORIGIN}/v1/templates` }));
    expect((err as DecodeError).reason).toBe('too_large');
    // exactly at the cap is fine
    agent.get(ORIGIN).intercept({ path: '/v1/templates' }).reply(200, 'y'.repeat(1_024));
    const ok = await t.request({ endpoint: 'GET /v1/templates', method: 'GET', url: `${ORIGIN}/v1/templates` });
    expect(ok.body.length).toBe(1_024);
  });

  it('an observer that throws does not fail the request', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/v1/health' }).reply(200, '{}');
    const t = new HttpTransport({
      requestTimeoutMs: 1_000,
      dispatcher: agent,
      onResponse: () => {
        throw new Error('metrics bug');
      },
    });
    const res = await t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${ORIGIN}/v1/health` });
    expect(res.status).toBe(200);
  });
});

describe('HttpTransport over real loopback sockets', () => {
  it('cuts a 50 MB streamed body off at the cap and releases the socket', async () => {
    const TOTAL = 50 * 1024 * 1024;
    const CHUNK = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    let closedEarly = false;
    let onClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      onClosed = resolve;
    });
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no content-length to refuse early
      res.on('close', () => {
        closedEarly = !res.writableFinished;
        onClosed();
      });
      const pump = (): void => {
        while (written < TOTAL && !res.destroyed) {
          written += CHUNK.length;
          if (!res.write(CHUNK)) {
            res.once('drain', pump);
            return;
          }
        }
        if (written >= TOTAL) res.end();
      };
      pump();
    });

    const t = new HttpTransport({ requestTimeoutMs: 10_000, maxResponseBytes: 1024 * 1024 });
    try {
      const heapBefore = process.memoryUsage().arrayBuffers;
      const err = await rejection(t.request({ endpoint: 'GET /v1/templates', method: 'GET', url: `${url}/v1/templates` }));
      expect(err).toBeInstanceOf(DecodeError);
      expect((err as DecodeError).reason).toBe('too_large');
      await closed;
      expect(closedEarly).toBe(true);
      // Backpressure bounds what the server could push: the cap plus socket buffers, not 50 MB.
      expect(written).toBeLessThan(16 * 1024 * 1024);
      expect(process.memoryUsage().arrayBuffers - heapBefore).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await t.close();
    }
  });

  it('a server that never answers -> timeout (undici headers timeout or our deadline)', async () => {
    const url = await serve(() => {
      /* never responds */
    });
    const t = new HttpTransport({ requestTimeoutMs: 200 });
    try {
      const started = Date.now();
      const err = await rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${url}/v1/health` }));
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).reason).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await t.close();
    }
  });

  it('a body that stalls mid-way -> timeout', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok":');
    });
    const t = new HttpTransport({ requestTimeoutMs: 200 });
    try {
      const err = await rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${url}/v1/health` }));
      expect((err as TransportError).reason).toBe('timeout');
    } finally {
      await t.close();
    }
  });

  it('a request queued behind a busy connection settles at its own deadline', async () => {
    const url = await serve(() => {
      /* never responds */
    });
    const pool = new Pool(url, { connections: 1 });
    const t = new HttpTransport({ requestTimeoutMs: 3_000, dispatcher: pool });
    try {
      const first = rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${url}/v1/health` }));
      const started = Date.now();
      const err = await rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${url}/v1/health`, timeoutMs: 150 }));
      expect((err as TransportError).reason).toBe('timeout');
      // Before, it waited for the first one's 3 s deadline to free the connection.
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(((await first) as TransportError).reason).toBe('timeout');
    } finally {
      await pool.destroy();
    }
  });

  it('connection refused -> network', async () => {
    const url = await serve(() => {});
    const srv = servers.pop()!;
    await new Promise<void>((resolve) => srv.close(() => resolve()));
    const t = new HttpTransport({ requestTimeoutMs: 2_000 });
    try {
      const err = await rejection(t.request({ endpoint: 'GET /v1/health', method: 'GET', url: `${url}/v1/health` }));
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).reason).toBe('network');
      expect((err as Error).message).not.toContain('127.0.0.1');
    } finally {
      await t.close();
    }
  });
});
