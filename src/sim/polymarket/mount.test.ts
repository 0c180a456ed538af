/**
 * The CLOB as the shared HTTP handler mounts it (http-handler.ts `SimMount`): prefix stripped,
 * raw body handed over, its admin routes behind the loopback gate, its faults its own.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../time/fake-clock.js';
import { FaultControl } from '../faults.js';
import { createSimHttpHandler, type SimMountRequest } from '../http-handler.js';
import { ok } from '../http-util.js';
import { InProcessDispatcher } from '../in-process.js';
import { RateLimiter } from '../rate-limit.js';

function handler(seen: SimMountRequest[]): { handle: ReturnType<typeof createSimHttpHandler>; faults: FaultControl } {
  const clock = new FakeClock();
  const faults = new FaultControl(clock);
  return {
    faults,
    handle: createSimHttpHandler({
      clock,
      routes: [],
      faults: new FaultControl(clock),
      rateLimiter: new RateLimiter(clock),
      admin: async () => ok({ admin: 'hyperliquid side' }),
      mounts: [
        {
          prefix: '/clob',
          handle: async (req) => {
            seen.push(req);
            return { status: 200, body: { path: req.path } };
          },
          adminPrefix: '/_sim/clob',
          admin: () => ok({ admin: 'clob' }),
          faults: { faults, endpoint: (m, p) => `${m} ${p}`, answer: (f) => ({ status: f.status, body: { error: 'forced' } }) },
        },
      ],
    }),
  };
}

async function get(d: InProcessDispatcher, path: string, init: { method?: 'GET' | 'POST' | 'DELETE'; body?: string } = {}): Promise<{ status: number; body: unknown }> {
  const r = await request(`http://sim.in-process${path}`, { dispatcher: d, method: init.method ?? 'GET', headers: { 'content-type': 'application/json' }, ...(init.body !== undefined ? { body: init.body } : {}) });
  return { status: r.statusCode, body: await r.body.json() };
}

describe('SimMount', () => {
  it('hands the mounted venue its own path (prefix stripped, query apart) and the body as sent', async () => {
    const seen: SimMountRequest[] = [];
    const d = new InProcessDispatcher(handler(seen).handle);
    expect(await get(d, '/clob/data/orders?next_cursor=MA%3D%3D')).toEqual({ status: 200, body: { path: '/data/orders' } });
    expect(await get(d, '/clob')).toEqual({ status: 200, body: { path: '/' } });
    await get(d, '/clob/order', { method: 'DELETE', body: '{ "orderID" : "0x1" }' });
    expect(seen.map((r) => [r.method, r.path, r.body])).toEqual([
      ['GET', '/data/orders', ''],
      ['GET', '/', ''],
      ['DELETE', '/order', '{ "orderID" : "0x1" }'],
    ]);
    expect(seen[0]?.query.get('next_cursor')).toBe('MA==');
    // Not the mount: a path that only starts with its letters.
    expect((await get(d, '/clobber')).status).toBe(404);
  });

  it('routes /_sim/clob/ to the mount\'s admin and /_sim/ to ours, loopback peers only', async () => {
    const h = handler([]).handle;
    const local = new InProcessDispatcher(h);
    expect((await get(local, '/_sim/clob/state')).body).toEqual({ admin: 'clob' });
    expect((await get(local, '/_sim/state')).body).toEqual({ admin: 'hyperliquid side' });
    const remote = new InProcessDispatcher(h, '10.1.2.3');
    expect((await get(remote, '/_sim/clob/state')).status).toBe(403);
  });

  it("applies the mount's own faults in its own format", async () => {
    const { handle, faults } = handler([]);
    const d = new InProcessDispatcher(handle);
    faults.forceStatus(503, { endpoint: 'POST /v1/heartbeats', count: 1 });
    expect(await get(d, '/clob/v1/heartbeats', { method: 'POST', body: '{}' })).toEqual({ status: 503, body: { error: 'forced' } });
    expect((await get(d, '/clob/v1/heartbeats', { method: 'POST', body: '{}' })).status).toBe(200);
  });
});
