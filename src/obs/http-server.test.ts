import { connect } from 'node:net';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpsServer, type OpsServer, type OpsViews } from './http-server.js';

function views(over: Partial<OpsViews> = {}): OpsViews {
  return {
    liveness: () => ({ alive: true, lastLoopAgeMs: 12 }),
    readiness: () => ({ ready: false, faults: [{ account: 'mm-main', problem: 'horizon 3.0 s below 20 s', horizon_seconds: 3 }] }),
    status: () => ({ accounts: [] }),
    statusPage: () => '<!doctype html><title>x</title>',
    registry: new Registry(),
    ...over,
  };
}

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(v = views()): Promise<string> {
  server = await startOpsServer('127.0.0.1:0', v);
  return `http://127.0.0.1:${server.address.port}`;
}

/** Sends raw bytes and returns whatever comes back before the peer closes (or 2 s pass). */
function raw(port: number, data: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => resolve(out));
    s.on('error', () => resolve(out));
    s.write(data);
    setTimeout(() => {
      s.destroy();
      resolve(out);
    }, 2_000).unref();
  });
}

describe('ops HTTP server', () => {
  it('answers each path with its status and content type', async () => {
    const base = await start();
    const h = await fetch(`${base}/healthz`);
    expect(h.status).toBe(200);
    expect(await h.json()).toEqual({ status: 'ok', last_loop_age_ms: 12 });
    const r = await fetch(`${base}/readyz`);
    expect(r.status).toBe(503);
    expect(((await r.json()) as { accounts: Array<{ account: string }> }).accounts[0]!.account).toBe('mm-main');
    expect((await fetch(`${base}/status`)).headers.get('content-type')).toContain('application/json');
    expect((await fetch(`${base}/metrics`)).headers.get('content-type')).toContain('text/plain');
    const page = await fetch(`${base}/`);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('small, correct errors: 404 unknown path, 405 with Allow, HEAD works, 414 long URL', async () => {
    const base = await start();
    const nf = await fetch(`${base}/nope`);
    expect(nf.status).toBe(404);
    const post = await fetch(`${base}/healthz`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await fetch(`${base}/${'a'.repeat(3_000)}`)).status).toBe(414);
  });

  it('huge headers get 431, a garbage request line 400, and the server keeps answering', async () => {
    const base = await start();
    const port = server!.address.port;
    const big = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431/);
    const garbage = await raw(port, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x01, 0x0d, 0x0a, 0x0d, 0x0a]));
    expect(garbage).toMatch(/^HTTP\/1\.1 400/);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('a slowloris client does not stall other requests', async () => {
    const base = await start();
    const port = server!.address.port;
    const slow = connect(port, '127.0.0.1');
    slow.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => slow.write('X-a: b\r\n'), 50);
    try {
      const t0 = Date.now();
      const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${base}/healthz`).then((r) => r.status)));
      expect(answers.every((s) => s === 200)).toBe(true);
      expect(Date.now() - t0).toBeLessThan(2_000);
    } finally {
      clearInterval(drip);
      slow.destroy();
    }
  });

  it('random bytes, random request lines and random headers never stall or crash it (fast-check)', async () => {
    const base = await start();
    const port = server!.address.port;
    const junk = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'BREW', ''), fc.string({ maxLength: 200 }), fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/9', ''))
        .map(([m, path, v]) => Buffer.from(`${m} /${path} ${v}\r\nHost: x\r\n\r\n`)),
      fc.array(fc.tuple(fc.string({ maxLength: 30 }), fc.string({ maxLength: 100 })), { maxLength: 20 })
        .map((hs) => Buffer.from(`GET /healthz HTTP/1.1\r\n${hs.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`)),
    );
    await fc.assert(
      fc.asyncProperty(junk, async (bytes) => {
        const answer = await raw(port, bytes);
        // whatever came back is HTTP (or nothing, when the peer closed on garbage)
        if (answer.length > 0) expect(answer).toMatch(/^HTTP\/1\.[01] \d{3}/);
      }),
      { numRuns: 60 },
    );
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  }, 60_000);

  it('a view that throws gives a 500, not a crash', async () => {
    const base = await start(views({ status: () => { throw new Error('boom'); } }));
    expect((await fetch(`${base}/status`)).status).toBe(500);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('close() is bounded with an idle keep-alive connection open, and idempotent', async () => {
    const base = await start();
    const port = server!.address.port;
    const s = connect(port, '127.0.0.1');
    s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await new Promise((r) => s.once('data', r));
    const t0 = Date.now();
    await Promise.all([server!.close(), server!.close()]);
    expect(Date.now() - t0).toBeLessThan(2_000);
    s.destroy();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    server = undefined;
  });
});
