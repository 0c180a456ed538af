/**
 * The composed simulator with the real catalog and venue state: the whole path a keeper takes
 * (resolve the account, list orders with include, arm the dead man's switch with a real signature
 * over REST, watch it fire on the venue clock and get the notification on the WebSocket), the
 * catalog routes behind the same server, the venue clock offset, and stop().
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeClock } from '../time/fake-clock.js';
import { signerFromPrivateKey } from '../venue/signing/signer.js';
import type { Event, Health, OpenOrder, Outcome } from '../venue/types.js';
import { startSimulator, type Simulator } from './simulator.js';
import { demoAccountSeeds, demoMasterKey } from './venue/demo.js';

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

async function start(opts: Parameters<typeof startSimulator>[0] = {}): Promise<Simulator> {
  const sim = await startSimulator(opts);
  sims.push(sim);
  return sim;
}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url, init);
  return { status: res.status, body: JSON.parse(await res.text()) as unknown, headers: res.headers };
}

/** A signed scheduleCancel body as the wire carries it (`time` a JSON number). */
async function scheduleCancelBody(key: `0x${string}`, time: number | undefined, nonce: number): Promise<string> {
  const action: Record<string, unknown> = { type: 'scheduleCancel' };
  if (time !== undefined) action.time = BigInt(time);
  const signature = await signerFromPrivateKey(key).signL1({ action, nonce, network: 'testnet' });
  return JSON.stringify({ action, nonce, signature }, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
}

describe('startSimulator', () => {
  it('refuses a non-loopback host', async () => {
    await expect(startSimulator({ host: '0.0.0.0' })).rejects.toThrow(/loopback/);
    await expect(startSimulator({ host: '10.1.2.3' })).rejects.toThrow(/loopback/);
  });

  it('serves the demo accounts and the catalog routes with the spec envelopes', async () => {
    const sim = await start();
    expect(sim.baseUrl).toBe(`http://127.0.0.1:${sim.port}`);
    expect(sim.wsUrl).toBe(`ws://127.0.0.1:${sim.port}`);
    const seeds = demoAccountSeeds(sim.catalog);
    const alice = seeds[0]?.address as string;

    const health = await json(`${sim.baseUrl}/v1/health`);
    expect(health.status).toBe(200);
    expect((health.body as Health).ok).toBe(true);
    expect((await json(`${sim.baseUrl}/v1/templates`)).status).toBe(200);
    expect((await json(`${sim.baseUrl}/v1/health`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(405);

    const account = await json(`${sim.baseUrl}/v1/accounts/${alice}`);
    expect(account).toMatchObject({ status: 200, body: { address: alice, account_type: 'main' } });

    const orders = await json(`${sim.baseUrl}/v1/accounts/${alice}/orders?include=outcome,event`);
    const body = orders.body as { data: OpenOrder[]; included: { outcomes: Outcome[]; events: Event[] } };
    expect(body.data.length).toBeGreaterThan(0);
    const outcomeIds = [...new Set(body.data.map((o) => o.outcome_id))];
    expect(body.included.outcomes.map((o) => o.id)).toEqual(outcomeIds);
    const eventIds = [...new Set(body.included.outcomes.map((o) => o.event_id))];
    expect(body.included.events.map((e) => e.id)).toEqual(eventIds);

    // The book shows alice's resting orders, attributed through the venue state's account refs.
    const outcomeId = body.data[0]?.outcome_id as string;
    const book = await json(`${sim.baseUrl}/v1/outcomes/${outcomeId}/book?include=accounts&depth=0`);
    expect(book.status).toBe(200);
    expect(JSON.stringify(book.body)).toContain(alice);
  });

  it('arms the switch over REST with a real signature, fires it on the venue clock, and pushes the notification', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    const sim = await start({ clock, clockOffsetMs: 3_000 });
    const alice = demoAccountSeeds(sim.catalog)[0]?.address as string;
    const key = demoMasterKey('alice');
    const ordersBefore = sim.state.openOrders(alice).length;
    expect(ordersBefore).toBeGreaterThan(0);

    const ws = new WebSocket(`${sim.wsUrl}/ws`);
    const frames: string[] = [];
    ws.on('message', (d) => frames.push(String(d)));
    await new Promise<void>((r) => ws.once('open', () => r()));
    ws.send(JSON.stringify({ method: 'subscribe', subscription: { type: 'notification', user: alice } }));

    const venueNow = sim.clock.nowMs();
    expect(venueNow).toBe(clock.nowMs() + 3_000);
    const res = await fetch(`${sim.baseUrl}/v1/trading/orders/schedule-cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: await scheduleCancelBody(key, venueNow + 10_000, venueNow),
    });
    expect(await res.json()).toEqual({ status: 'ok', response: { type: 'default' } });
    expect(Date.parse(res.headers.get('date') ?? '')).toBe(Math.floor(venueNow / 1000) * 1000);

    const st = await json(`${sim.baseUrl}/_sim/state?account=${alice}`);
    expect(st.body).toMatchObject({ account: { schedule: { timeMs: venueNow + 10_000, triggersToday: 0 }, openOrders: ordersBefore } });

    await clock.advance(10_000);
    for (let i = 0; i < 100 && !frames.some((f) => f.includes('"notification"')); i++) await new Promise((r) => setTimeout(r, 10));
    const note = frames.map((f) => (f.startsWith('{') ? (JSON.parse(f) as { channel: string; data: unknown }) : undefined)).find((f) => f?.channel === 'notification');
    expect(note?.data).toEqual({ notification: expect.stringContaining('Scheduled cancel') });
    const after = await json(`${sim.baseUrl}/v1/accounts/${alice}/orders`);
    expect((after.body as { data: unknown[] }).data).toEqual([]);
    expect(sim.state.schedule(alice).triggersToday).toBe(1);
    const log = await json(`${sim.baseUrl}/_sim/actions`);
    expect((log.body as { actions: Array<{ via: string; type: string; result: string }> }).actions).toContainEqual(
      expect.objectContaining({ via: 'rest', type: 'scheduleCancel', result: 'ok' }),
    );
    ws.terminate();
  });

  it('moves venue time with a run-time clock offset (Date header and health as_of)', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    const sim = await start({ clock });
    const h1 = await json(`${sim.baseUrl}/v1/health`);
    expect(h1.headers.get('date')).toBe('Mon, 05 Jan 2026 09:00:00 GMT');
    expect((h1.body as Health).as_of).toBe('2026-01-05T09:00:00.000Z');
    sim.faults.setClockOffset(-60_000);
    const h2 = await json(`${sim.baseUrl}/v1/health`);
    expect(h2.headers.get('date')).toBe('Mon, 05 Jan 2026 08:59:00 GMT');
    expect((h2.body as Health).as_of).toBe('2026-01-05T08:59:00.000Z');
    await json(`${sim.baseUrl}/_sim/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ offsetMs: 3_000 }) });
    expect((await fetch(`${sim.baseUrl}/v1/health`)).headers.get('date')).toBe('Mon, 05 Jan 2026 09:00:03 GMT');
  });

  it('seeds the given accounts instead of the demo ones, and honours rate limit options', async () => {
    const clock = new FakeClock();
    const addr = '0x00000000000000000000000000000000000000a1';
    const sim = await start({ clock, accounts: [{ address: addr, tradedVolumeUsd: 0 }], rateLimits: { global: { limit: 2, windowSeconds: 30 } } });
    expect((await json(`${sim.baseUrl}/v1/accounts/${addr}`)).status).toBe(200);
    const alice = demoAccountSeeds(sim.catalog)[0]?.address as string;
    expect((await json(`${sim.baseUrl}/v1/accounts/${alice}`)).status).toBe(404);
    const r = await json(`${sim.baseUrl}/v1/health`);
    expect(r.status).toBe(429);
    expect((r.body as { error: { details: unknown[] } }).error.details[0]).toMatchObject({ scope: 'global', retry_after_seconds: 30, window_seconds: 30, limit: 2 });
  });

  it('takes a named budget, its fields overridden one by one by rateLimits', async () => {
    const sim = await start({ clock: new FakeClock(), budget: 'signed_window_100_per_5s' });
    expect(sim.rateLimiter.describe()).toEqual({ global: { limit: 100, windowSeconds: 5 }, globalCounts: 'signed', endpoints: {} });
    const over = await start({ clock: new FakeClock(), budget: 'signed_window_100_per_5s', rateLimits: { global: { limit: 50, windowSeconds: 5 } } });
    expect(over.rateLimiter.describe()).toMatchObject({ global: { limit: 50, windowSeconds: 5 }, globalCounts: 'signed', endpoints: {} });
    await expect(startSimulator({ budget: 'lavish' })).rejects.toThrow(/unknown simulator budget 'lavish'/);
  });

  it('stop() is idempotent and leaves no timers, sockets or listeners behind', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    const sim = await startSimulator({ clock, admin: false });
    const venueNow = sim.clock.nowMs();
    await fetch(`${sim.baseUrl}/v1/trading/orders/schedule-cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: await scheduleCancelBody(demoMasterKey('alice'), venueNow + 60_000, venueNow),
    });
    const ws = new WebSocket(`${sim.wsUrl}/ws`);
    ws.on('error', () => undefined);
    await new Promise<void>((r) => ws.once('open', () => r()));
    const wsClosed = new Promise<void>((r) => ws.once('close', () => r()));
    expect(clock.pendingTimers()).toBeGreaterThan(0); // the armed deadline and the ws idle timer
    const p1 = sim.stop();
    expect(sim.stop()).toBe(p1);
    await p1;
    await wsClosed;
    expect(clock.pendingTimers()).toBe(0);
    expect(sim.ws.connectionCount()).toBe(0);
    await expect(fetch(`${sim.baseUrl}/v1/health`)).rejects.toThrow();
    await sim.stop();
  });
});
