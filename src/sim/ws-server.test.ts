/**
 * The notification WebSocket over a real loopback socket with a real `ws` client: greeting, acks,
 * errors, ping/pong, notification push, per-IP limits, idle close on the injected clock, and the
 * silent and drop faults.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { systemClock, type Clock } from '../time/clock.js';
import { FakeClock } from '../time/fake-clock.js';
import { FaultControl } from './faults.js';
import { RateLimiter } from './rate-limit.js';
import { listenSimServer, type SimServer } from './server.js';
import { WsHub } from './ws-server.js';

const U1 = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const U2 = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

interface Harness {
  url: string;
  hub: WsHub;
  faults: FaultControl;
  server: SimServer;
}

const servers: SimServer[] = [];
const clients: WebSocket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.terminate();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function harness(clock: Clock = systemClock()): Promise<Harness> {
  const faults = new FaultControl(clock);
  const hub = new WsHub({ clock, faults });
  const server = await listenSimServer({ host: '127.0.0.1', port: 0, clock, routes: [], faults, rateLimiter: new RateLimiter(clock), ws: hub });
  servers.push(server);
  return { url: `ws://127.0.0.1:${server.port}/ws`, hub, faults, server };
}

/** A client that queues every text frame, so tests can await them in order. */
class Client {
  readonly ws: WebSocket;
  private readonly queue: string[] = [];
  private waiters: Array<(s: string) => void> = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    clients.push(this.ws);
    this.ws.on('error', () => undefined);
    this.ws.on('message', (data) => {
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
      const w = this.waiters.shift();
      if (w) w(text);
      else this.queue.push(text);
    });
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static async open(url: string): Promise<Client> {
    const c = new Client(url);
    await new Promise<void>((resolve, reject) => {
      c.ws.once('open', () => resolve());
      c.ws.once('error', reject);
    });
    return c;
  }

  next(timeoutMs = 2_000): Promise<string> {
    const q = this.queue.shift();
    if (q !== undefined) return Promise.resolve(q);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(new Error('no frame in time'));
      }, timeoutMs);
      const done = (s: string): void => {
        clearTimeout(t);
        resolve(s);
      };
      this.waiters.push(done);
    });
  }

  async nextJson(): Promise<unknown> {
    return JSON.parse(await this.next()) as unknown;
  }

  /** Resolves true if no frame arrives within `ms`. */
  async quiet(ms: number): Promise<boolean> {
    try {
      await this.next(ms);
      return false;
    } catch {
      return true;
    }
  }

  send(v: unknown): void {
    this.ws.send(typeof v === 'string' ? v : JSON.stringify(v));
  }

  /** Opens and consumes the greeting. */
  static async ready(url: string): Promise<Client> {
    const c = await Client.open(url);
    expect(await c.next()).toBe('Websocket connection established.');
    return c;
  }
}

const sub = (user: string, method: 'subscribe' | 'unsubscribe' = 'subscribe') => ({ method, subscription: { type: 'notification', user } });

describe('WebSocket hub', () => {
  it('greets with the non-JSON text frame, acks subscriptions and answers pings', async () => {
    const h = await harness();
    const c = await Client.open(h.url);
    expect(await c.next()).toBe('Websocket connection established.');
    c.send(sub(U1));
    expect(await c.nextJson()).toEqual({ channel: 'subscriptionResponse', data: { method: 'subscribe', subscription: { type: 'notification', user: U1 } } });
    c.send({ method: 'ping' });
    expect(await c.nextJson()).toEqual({ channel: 'pong' });
    c.send(sub(U1, 'unsubscribe'));
    expect(await c.nextJson()).toEqual({ channel: 'subscriptionResponse', data: { method: 'unsubscribe', subscription: { type: 'notification', user: U1 } } });
  });

  it('answers invalid messages on the error channel', async () => {
    const h = await harness();
    const c = await Client.ready(h.url);
    const bad: unknown[] = [
      'not json',
      '[1,2]',
      { method: 'explode' },
      { method: 'subscribe' },
      { method: 'subscribe', subscription: { type: 'trades', user: U1 } },
      { method: 'subscribe', subscription: { type: 'notification', user: 'bob' } },
      sub(U2, 'unsubscribe'),
    ];
    for (const m of bad) {
      c.send(m);
      const f = (await c.nextJson()) as { channel: string; data: unknown };
      expect(f.channel).toBe('error');
      expect(typeof f.data).toBe('string');
    }
    c.send(sub(U1));
    await c.next();
    c.send(sub(U1));
    expect(await c.nextJson()).toMatchObject({ channel: 'error' }); // already subscribed
  });

  it('pushes a notification to every connection subscribed to that user, and only those', async () => {
    const h = await harness();
    const a = await Client.ready(h.url);
    const b = await Client.ready(h.url);
    const other = await Client.ready(h.url);
    a.send(sub(U1));
    b.send(sub(U1.toUpperCase().replace('0X', '0x')));
    other.send(sub(U2));
    await Promise.all([a.next(), b.next(), other.next()]);
    expect(h.hub.notify(U1, 'Scheduled cancel triggered')).toBe(2);
    const expected = { channel: 'notification', data: { notification: 'Scheduled cancel triggered' } };
    expect(await a.nextJson()).toEqual(expected);
    expect(await b.nextJson()).toEqual(expected);
    expect(await other.quiet(100)).toBe(true);
    a.send(sub(U1, 'unsubscribe'));
    await a.next();
    expect(h.hub.notify(U1, 'again')).toBe(1);
    expect(await a.quiet(100)).toBe(true);
  });

  it('allows 10 connections per IP and refuses the 11th on the error channel', async () => {
    const h = await harness();
    const ten = await Promise.all(Array.from({ length: 10 }, () => Client.ready(h.url)));
    expect(h.hub.connectionCount()).toBe(10);
    const eleventh = new Client(h.url);
    expect(JSON.parse(await eleventh.next())).toMatchObject({ channel: 'error' });
    expect((await eleventh.closed).code).toBe(1008);
    expect(h.hub.connectionCount()).toBe(10);
    // A slot frees when a connection closes.
    ten[0]?.ws.close();
    await ten[0]?.closed;
    await new Promise((r) => setTimeout(r, 20));
    const again = await Client.ready(h.url);
    again.send({ method: 'ping' });
    expect(await again.nextJson()).toEqual({ channel: 'pong' });
  });

  it('allows 10 distinct users per IP across connections', async () => {
    const h = await harness();
    const a = await Client.ready(h.url);
    const b = await Client.ready(h.url);
    const users = Array.from({ length: 11 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
    for (const u of users.slice(0, 10)) {
      a.send(sub(u));
      expect(await a.nextJson()).toMatchObject({ channel: 'subscriptionResponse' });
    }
    b.send(sub(users[10] as string));
    expect(await b.nextJson()).toMatchObject({ channel: 'error' });
    // The same user on another connection is not a new distinct user.
    b.send(sub(users[0] as string));
    expect(await b.nextJson()).toMatchObject({ channel: 'subscriptionResponse' });
    // Unsubscribing on a frees the user only if b no longer holds it: users[1] is a's alone.
    a.send(sub(users[1] as string, 'unsubscribe'));
    await a.next();
    expect(h.hub.usersFromIp('127.0.0.1')).toBe(9);
    b.send(sub(users[10] as string));
    expect(await b.nextJson()).toMatchObject({ channel: 'subscriptionResponse' });
  });

  it('closes a connection silent for 60 s on the injected clock; any message resets the timer', async () => {
    const clock = new FakeClock();
    const h = await harness(clock);
    const c = await Client.ready(h.url);
    await clock.advance(30_000);
    c.send({ method: 'ping' });
    expect(await c.nextJson()).toEqual({ channel: 'pong' });
    await clock.advance(59_999);
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    await clock.advance(1);
    expect((await c.closed).code).toBe(1000);
    expect(h.hub.connectionCount()).toBe(0);
  });

  it('wsSilent: no pongs, no notifications, socket stays open; recovers when lifted', async () => {
    const h = await harness();
    const c = await Client.ready(h.url);
    c.send(sub(U1));
    await c.next();
    h.faults.setWsSilent(true);
    c.send({ method: 'ping' });
    let protocolPong = false;
    c.ws.on('pong', () => (protocolPong = true));
    c.ws.ping();
    expect(h.hub.notify(U1, 'hello')).toBe(0);
    expect(await c.quiet(200)).toBe(true);
    expect(protocolPong).toBe(false);
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    h.faults.setWsSilent(false);
    c.send({ method: 'ping' });
    expect(await c.nextJson()).toEqual({ channel: 'pong' });
    c.ws.ping();
    await new Promise((r) => setTimeout(r, 50));
    expect(protocolPong).toBe(true);
  });

  it('wsDropEveryMs drops every connection periodically on the injected clock', async () => {
    const clock = new FakeClock();
    const h = await harness(clock);
    const a = await Client.ready(h.url);
    h.faults.setWsDropEveryMs(5_000);
    await clock.advance(4_999);
    expect(a.ws.readyState).toBe(WebSocket.OPEN);
    await clock.advance(1);
    expect((await a.closed).code).toBe(1006); // dropped, no close handshake
    const b = await Client.ready(h.url);
    await clock.advance(5_000);
    await b.closed;
    h.faults.setWsDropEveryMs(null);
    const c = await Client.ready(h.url);
    await clock.advance(20_000);
    c.send({ method: 'ping' });
    expect(await c.nextJson()).toEqual({ channel: 'pong' });
  });

  it('close() terminates every client and is idempotent', async () => {
    const h = await harness();
    const a = await Client.ready(h.url);
    const b = await Client.ready(h.url);
    await h.server.close();
    await Promise.all([a.closed, b.closed]);
    await h.hub.close();
    expect(h.hub.connectionCount()).toBe(0);
  });
});
