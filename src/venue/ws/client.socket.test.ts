/**
 * NotificationClient against a real `ws` server on loopback, with the real clock and the default
 * socket factory. Short ping/pong intervals keep each case well under a second or two.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { systemClock, type Clock, type TimerHandle } from '../../time/clock.js';
import { VENUE_FACTS } from '../facts.js';
import { NotificationClient } from './client.js';
import type { NotificationClientEvent, NotificationClientOptions } from './types.js';

const A = '0x' + '1a'.repeat(20);
const B = '0x' + '2b'.repeat(20);
const sub = (u: string): string => `{"method":"subscribe","subscription":{"type":"notification","user":"${u}"}}`;
const unsub = (u: string): string => `{"method":"unsubscribe","subscription":{"type":"notification","user":"${u}"}}`;

interface ServerConn {
  ws: WebSocket;
  path: string | undefined;
  received: string[];
  closed: boolean;
  /** Answers pings and acks subscriptions while true. */
  responsive: boolean;
}

/** A minimal venue: greets, acks subscribes, answers pings, and lets a test misbehave on cue. */
class FakeVenue {
  readonly conns: ServerConn[] = [];
  /** Indexes of connections that go silent once their subscriptions are acked. */
  readonly silentAfterAck = new Set<number>();

  private constructor(
    private readonly wss: WebSocketServer,
    readonly url: string,
  ) {
    wss.on('connection', (ws, req) => {
      const index = this.conns.length;
      const conn: ServerConn = { ws, path: req.url, received: [], closed: false, responsive: true };
      this.conns.push(conn);
      ws.on('close', () => (conn.closed = true));
      ws.send(VENUE_FACTS.wsGreeting);
      ws.on('message', (raw) => {
        const text = raw.toString();
        conn.received.push(text);
        if (!conn.responsive) return;
        const msg = JSON.parse(text) as { method: string; subscription?: unknown };
        if (msg.method === 'ping') ws.send('{"channel":"pong"}');
        if (msg.method === 'subscribe') {
          ws.send(JSON.stringify({ channel: 'subscriptionResponse', data: msg }));
          if (this.silentAfterAck.has(index)) conn.responsive = false;
        }
      });
    });
  }

  static async start(): Promise<FakeVenue> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', resolve);
      wss.once('error', reject);
    });
    const addr = wss.address();
    if (addr === null || typeof addr === 'string') throw new Error('unexpected address');
    // A trailing slash on purpose: the client must not produce `//ws`.
    return new FakeVenue(wss, `ws://127.0.0.1:${addr.port}/`);
  }

  conn(i: number): ServerConn {
    const c = this.conns[i];
    if (!c) throw new Error(`no server connection #${i} (have ${this.conns.length})`);
    return c;
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.conns) c.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

/** The real clock, counting timers that are scheduled and neither fired nor cleared. */
function countingClock(): Clock & { live(): number } {
  const base = systemClock();
  const live = new Set<TimerHandle>();
  return {
    nowMs: () => base.nowMs(),
    monoMs: () => base.monoMs(),
    setTimeout: (fn, ms) => {
      const h: TimerHandle = base.setTimeout(() => {
        live.delete(h);
        fn();
      }, ms);
      live.add(h);
      return h;
    },
    clearTimeout: (h) => {
      live.delete(h);
      base.clearTimeout(h);
    },
    live: () => live.size,
  };
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 2_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let venue: FakeVenue | undefined;
let client: NotificationClient | undefined;

afterEach(async () => {
  await client?.stop();
  await venue?.close();
  client = undefined;
  venue = undefined;
});

async function setup(over: Partial<NotificationClientOptions> = {}) {
  venue = await FakeVenue.start();
  const events: NotificationClientEvent[] = [];
  const clock = countingClock();
  client = new NotificationClient({
    wsUrl: venue.url,
    clock,
    onEvent: (e) => events.push(e),
    random: () => 0.5,
    // Heartbeat-agnostic cases get a generous deadline so a busy CI machine cannot fake a timeout.
    pingEveryMs: 100,
    pongTimeoutMs: 1_000,
    backoff: { initialMs: 100, maxMs: 1_000, factor: 2 },
    ...over,
  });
  const ofType = <T extends NotificationClientEvent['type']>(t: T) =>
    events.filter((e): e is Extract<NotificationClientEvent, { type: T }> => e.type === t);
  return { venue, client, events, ofType, clock };
}

describe('NotificationClient over a real socket', () => {
  it('tolerates the greeting, sends the exact subscribe, and marks the ack confirmed', async () => {
    const { venue, client, ofType } = await setup();
    client.subscribe(A.toUpperCase().replace('0X', '0x'));
    client.start();
    await waitFor('ack', () => client.isConfirmed(A));
    expect(venue.conn(0).path).toBe('/ws');
    expect(venue.conn(0).received[0]).toBe(sub(A));
    expect(ofType('connected')).toEqual([expect.objectContaining({ connection: 0, users: [A] })]);
    expect(ofType('subscribed')).toEqual([expect.objectContaining({ connection: 0, user: A })]);
    expect(client.stats().greetings).toBe(1);
    expect(ofType('unparsed_frame')).toEqual([]);
    expect(client.connected()).toBe(true);

    venue.conn(0).ws.send('something odd');
    await waitFor('unparsed frame', () => ofType('unparsed_frame').length === 1);
    expect(ofType('unparsed_frame')[0]).toMatchObject({ reason: 'not_json', sample: 'something odd' });
    expect(client.stats().unparsedFrames).toBe(1);
    expect(client.connected()).toBe(true);
  });

  it('delivers notifications with the candidate users, and the user when unambiguous', async () => {
    const { venue, client, ofType } = await setup();
    client.subscribe(A);
    client.subscribe(B);
    client.start();
    await waitFor('acks', () => client.isConfirmed(A) && client.isConfirmed(B));
    const ws = venue.conn(0).ws;
    ws.send('{"channel":"notification","data":{"notification":"Order was cancelled"}}');
    ws.send(`{"channel":"notification","data":{"notification":"Transfer to ${B.toUpperCase().replace('0X', '0x')} done"}}`);
    ws.send(`{"channel":"notification","data":{"notification":"x","user":"${A}"}}`);
    await waitFor('3 notifications', () => ofType('notification').length === 3);
    const [n1, n2, n3] = ofType('notification');
    expect(n1).toMatchObject({ connection: 0, text: 'Order was cancelled', users: [A, B] });
    expect(n1 && 'user' in n1).toBe(false);
    expect(n1?.receivedAtMs).toBeGreaterThan(0);
    expect(n2).toMatchObject({ users: [A, B], user: B });
    expect(n3).toMatchObject({ users: [A, B], user: A });
  });

  it('one user per connection makes every notification attributable', async () => {
    const { venue, client, ofType } = await setup({ usersPerConnection: 1 });
    expect(client.subscribe(A)).toEqual({ subscribed: true, connection: 0 });
    expect(client.subscribe(B)).toEqual({ subscribed: true, connection: 1 });
    client.start();
    await waitFor('acks', () => client.isConfirmed(A) && client.isConfirmed(B));
    const conB = venue.conns.find((c) => c.received.includes(sub(B)));
    conB?.ws.send('{"channel":"notification","data":{"notification":"Order was cancelled"}}');
    await waitFor('notification', () => ofType('notification').length === 1);
    expect(ofType('notification')[0]).toMatchObject({ connection: 1, users: [B], user: B });
  });

  it('delivers the error channel as server_error and stays connected', async () => {
    const { venue, client, ofType } = await setup();
    client.subscribe(A);
    client.subscribe(B);
    client.start();
    await waitFor('acks', () => client.isConfirmed(A) && client.isConfirmed(B));
    venue.conn(0).ws.send('{"channel":"error","data":"Invalid subscription"}');
    venue.conn(0).ws.send(`{"channel":"error","data":"Already subscribed: ${B}"}`);
    venue.conn(0).ws.send('{"channel":"notification","data":{"notification":"still here"}}');
    await waitFor('notification after errors', () => ofType('notification').length === 1);
    expect(ofType('server_error').map((e) => [e.message, e.user])).toEqual([
      ['Invalid subscription', undefined],
      [`Already subscribed: ${B}`, B],
    ]);
    expect(client.connected()).toBe(true);
    expect(venue.conns).toHaveLength(1);
  });

  it('unsubscribes, and closes the connection when its last user leaves', async () => {
    const { venue, client } = await setup();
    client.subscribe(A);
    client.subscribe(B);
    client.start();
    await waitFor('acks', () => client.isConfirmed(A) && client.isConfirmed(B));
    expect(client.unsubscribe(B)).toBe(true);
    await waitFor('unsubscribe B', () => venue.conn(0).received.includes(unsub(B)));
    expect(venue.conn(0).closed).toBe(false);
    client.unsubscribe(A);
    await waitFor('unsubscribe A', () => venue.conn(0).received.includes(unsub(A)));
    await waitFor('close', () => venue.conn(0).closed);
    expect(client.connected()).toBe(false);
    await sleep(250);
    expect(venue.conns).toHaveLength(1);
  });

  it('reconnects and resubscribes when the server drops the connection', async () => {
    const { venue, client, ofType } = await setup();
    client.subscribe(A);
    client.subscribe(B);
    client.start();
    await waitFor('acks', () => client.isConfirmed(A) && client.isConfirmed(B));
    venue.conn(0).ws.terminate();
    await waitFor('reconnected', () => ofType('reconnected').length === 1);
    expect(ofType('disconnected')).toEqual([
      expect.objectContaining({ connection: 0, reason: 'closed', users: [A, B], retryInMs: 50 }),
    ]);
    expect(ofType('reconnected')[0]).toMatchObject({ connection: 0, users: [A, B] });
    await waitFor('resubscribed', () => venue.conns[1]?.received.length === 2);
    expect(venue.conn(1).received).toEqual([sub(A), sub(B)]);
    await waitFor('acks again', () => client.isConfirmed(A) && client.isConfirmed(B));
  });

  it('detects a silent peer by pong timeout and reconnects', async () => {
    const { venue, client, ofType } = await setup({ pongTimeoutMs: 300 });
    venue.silentAfterAck.add(0);
    client.subscribe(A);
    client.start();
    const t0 = Date.now();
    await waitFor('reconnected', () => ofType('reconnected').length === 1, 3_000);
    // ping at ~100 ms, deadline 300 ms later.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(390);
    expect(ofType('disconnected')).toEqual([expect.objectContaining({ reason: 'pong_timeout', users: [A] })]);
    expect(venue.conn(0).received).toContain('{"method":"ping"}');
    await waitFor('old socket gone', () => venue.conn(0).closed);
    await waitFor('resubscribed', () => venue.conns[1]?.received[0] === sub(A));
    // The new connection answers: it stays up across several ping intervals.
    await sleep(400);
    expect(ofType('disconnected')).toHaveLength(1);
    expect(client.connected()).toBe(true);
  });

  it('stop() while reconnecting leaves no timers and opens no new connection', async () => {
    const { venue, client, clock } = await setup({ random: () => 0.99 });
    client.subscribe(A);
    client.start();
    await waitFor('ack', () => client.isConfirmed(A));
    venue.conn(0).ws.terminate();
    await waitFor('backoff', () => client.connections()[0]?.state === 'backoff');
    await client.stop();
    expect(clock.live()).toBe(0);
    expect(client.connections().map((c) => c.state)).toEqual(['idle']);
    await sleep(300); // longer than the ~99 ms retry that was pending
    expect(venue.conns).toHaveLength(1);
  });

  it('stop() closes open sockets and resolves promptly', async () => {
    const { venue, client, clock } = await setup();
    client.subscribe(A);
    client.start();
    await waitFor('ack', () => client.isConfirmed(A));
    const t0 = Date.now();
    await client.stop();
    expect(Date.now() - t0).toBeLessThan(1_000);
    await waitFor('server saw close', () => venue.conn(0).closed);
    expect(clock.live()).toBe(0);
  });

  it('keeps retrying while the venue is down, with growing delays', async () => {
    const { client, venue, ofType } = await setup({ random: () => 1 });
    await venue.close(); // nothing listens any more: every attempt is refused
    client.subscribe(A);
    client.start();
    await waitFor('3 failures', () => ofType('connect_failed').length >= 3);
    expect(ofType('connect_failed').slice(0, 3).map((e) => e.retryInMs)).toEqual([100, 200, 400]);
    expect(ofType('connect_failed')[0]?.reason).toBe('error');
  });
});
