/**
 * Timing logic of NotificationClient in virtual time: fake sockets, FakeClock. Socket I/O against a
 * real server is in client.socket.test.ts.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '../../time/fake-clock.js';
import { VENUE_FACTS } from '../facts.js';
import { NotificationClient } from './client.js';
import type { NotificationClientEvent, NotificationClientOptions, SocketLike } from './types.js';

const addr = (n: number): string => '0x' + n.toString(16).padStart(40, '0');
const A = addr(0xa);
const B = addr(0xb);
const C = addr(0xc);
const sub = (u: string): string => `{"method":"subscribe","subscription":{"type":"notification","user":"${u}"}}`;
const PING = '{"method":"ping"}';

class FakeSocket extends EventEmitter implements SocketLike {
  readonly sent: string[] = [];
  closeCode: number | undefined;
  terminated = false;
  /** When false, close()/terminate() never emit `close` (a wedged socket). */
  closesCleanly = true;
  private gone = false;

  constructor(readonly url: string) {
    super();
  }
  send(data: string, cb?: (err?: Error) => void): void {
    this.sent.push(data);
    cb?.();
  }
  close(code?: number): void {
    this.closeCode = code;
    this.finish(code ?? 1005);
  }
  terminate(): void {
    this.terminated = true;
    this.finish(1006);
  }
  open(): void {
    this.emit('open');
  }
  recv(text: string): void {
    this.emit('message', Buffer.from(text), false);
  }
  /** The peer went away. */
  drop(): void {
    this.finish(1006);
  }
  fail(): void {
    this.emit('error', new Error('ECONNREFUSED'));
    this.finish(1006);
  }
  private finish(code: number): void {
    if (this.gone || !this.closesCleanly) return;
    this.gone = true;
    setImmediate(() => this.emit('close', code, Buffer.alloc(0)));
  }
}

function setup(over: Partial<NotificationClientOptions> = {}) {
  const clock = new FakeClock();
  const sockets: FakeSocket[] = [];
  const events: NotificationClientEvent[] = [];
  const client = new NotificationClient({
    wsUrl: 'wss://venue.example/',
    clock,
    onEvent: (e) => events.push(e),
    socketFactory: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    random: () => 0.5,
    pingEveryMs: 30_000,
    pongTimeoutMs: 10_000,
    ...over,
  });
  const last = (): FakeSocket => {
    const s = sockets[sockets.length - 1];
    if (!s) throw new Error('no socket yet');
    return s;
  };
  const ofType = <T extends NotificationClientEvent['type']>(t: T) =>
    events.filter((e): e is Extract<NotificationClientEvent, { type: T }> => e.type === t);
  return { clock, sockets, events, client, last, ofType };
}

describe('NotificationClient options', () => {
  const base = { wsUrl: 'ws://h:1', clock: new FakeClock(), onEvent: () => undefined };

  it('rejects a ping interval longer than the venue allows', () => {
    expect(() => new NotificationClient({ ...base, pingEveryMs: VENUE_FACTS.wsPingEveryMaxMs + 1 })).toThrow(/pingEveryMs/);
    expect(() => new NotificationClient({ ...base, pingEveryMs: VENUE_FACTS.wsPingEveryMaxMs })).not.toThrow();
  });

  it('rejects other mistakes with the field named', () => {
    expect(() => new NotificationClient({ ...base, maxUsers: VENUE_FACTS.wsMaxUsersPerIp + 1 })).toThrow(/maxUsers/);
    expect(() => new NotificationClient({ ...base, usersPerConnection: 0 })).toThrow(/usersPerConnection/);
    expect(() => new NotificationClient({ ...base, pongTimeoutMs: -1 })).toThrow(/pongTimeoutMs/);
    expect(() => new NotificationClient({ ...base, backoff: { factor: 0.5 } })).toThrow(/factor/);
    expect(() => new NotificationClient({ ...base, backoff: { initialMs: 100, maxMs: 50 } })).toThrow(/maxMs/);
    expect(() => new NotificationClient({ ...base, wsUrl: 'https://h' })).toThrow(/ws:\/\//);
    expect(() => new NotificationClient({ ...base, wsUrl: 'not a url' })).toThrow(/wsUrl/);
  });

  it.each([
    ['ws://h:1', 'ws://h:1/ws'],
    ['ws://h:1/', 'ws://h:1/ws'],
    ['wss://h/base//', 'wss://h/base/ws'],
  ])('%s -> %s', (wsUrl, want) => {
    expect(new NotificationClient({ ...base, wsUrl }).url).toBe(want);
  });
});

describe('NotificationClient subscriptions', () => {
  it('connects only once started and with users; subscribes every user on open', async () => {
    const { client, sockets, last, ofType } = setup();
    client.start();
    expect(sockets).toHaveLength(0);
    expect(client.subscribe(A.toUpperCase().replace('0X', '0x'))).toEqual({ subscribed: true, connection: 0 });
    expect(sockets).toHaveLength(1);
    expect(last().url).toBe('wss://venue.example/ws');
    client.subscribe(B); // while connecting: sent on open
    expect(last().sent).toEqual([]);
    last().open();
    expect(last().sent).toEqual([sub(A), sub(B)]);
    expect(ofType('connected')).toEqual([{ type: 'connected', connection: 0, users: [A, B], atMs: expect.any(Number) }]);
    client.subscribe(C); // while open: sent at once
    expect(last().sent).toEqual([sub(A), sub(B), sub(C)]);
    expect(client.subscribe(A)).toEqual({ subscribed: true, connection: 0 });
    expect(last().sent).toHaveLength(3);
    expect(client.connected()).toBe(true);
    await client.stop();
  });

  it('refuses users beyond maxUsers and reports them for REST polling', () => {
    const { client } = setup({ maxUsers: 2 });
    expect(client.subscribe(A).subscribed).toBe(true);
    expect(client.subscribe(B).subscribed).toBe(true);
    expect(client.subscribe(C)).toEqual({ subscribed: false, reason: 'user_cap' });
    expect(client.overCapUsers()).toEqual([C]);
    expect(client.subscribe('0xnope')).toEqual({ subscribed: false, reason: 'invalid_address' });
    // A freed place is taken only when the caller asks again.
    expect(client.unsubscribe(A)).toBe(true);
    expect(client.overCapUsers()).toEqual([C]);
    expect(client.subscribe(C).subscribed).toBe(true);
    expect(client.overCapUsers()).toEqual([]);
    expect(client.subscribedUsers().sort()).toEqual([B, C].sort());
    expect(client.unsubscribe(A)).toBe(false);
  });

  it('multiplexes users over as few connections as usersPerConnection allows', () => {
    const { client, sockets } = setup({ maxUsers: 5, usersPerConnection: 2 });
    client.start();
    const users = [1, 2, 3, 4, 5].map(addr);
    expect(users.map((u) => client.subscribe(u))).toEqual([0, 0, 1, 1, 2].map((c) => ({ subscribed: true, connection: c })));
    expect(sockets).toHaveLength(3);
    expect(client.subscribe(addr(6))).toEqual({ subscribed: false, reason: 'user_cap' });
    // A freed place on a busy connection is reused before an idle connection is opened.
    client.unsubscribe(users[0] ?? '');
    expect(client.subscribe(addr(7))).toEqual({ subscribed: true, connection: 0 });
  });

  it('ack marks a user confirmed; an ack for someone else is ignored', async () => {
    const { client, last, ofType } = setup();
    client.subscribe(A);
    client.start();
    last().open();
    last().recv(`{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"notification","user":"${B}"}}}`);
    expect(client.isConfirmed(A)).toBe(false);
    last().recv(`{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"notification","user":"${A}"}}}`);
    expect(client.isConfirmed(A)).toBe(true);
    expect(ofType('subscribed').map((e) => e.user)).toEqual([A]);
    expect(client.connections()[0]?.confirmedUsers).toEqual([A]);
    await client.stop();
  });

  it('closes a connection left without users, and reopens it for a new one', async () => {
    const { client, sockets, last, ofType } = setup();
    client.start();
    client.subscribe(A);
    last().open();
    client.unsubscribe(A);
    expect(sockets[0]?.sent.at(-1)).toBe(`{"method":"unsubscribe","subscription":{"type":"notification","user":"${A}"}}`);
    expect(sockets[0]?.closeCode).toBe(1000);
    expect(client.connections()[0]?.state).toBe('idle');
    await flushMicrotasks();
    expect(ofType('disconnected')).toEqual([]);
    client.subscribe(B);
    expect(sockets).toHaveLength(2);
    last().open();
    expect(ofType('connected')).toHaveLength(2); // a fresh connection, not a reconnect
    await client.stop();
  });
});

describe('NotificationClient heartbeat and reconnect (virtual time)', () => {
  it('pings every pingEveryMs; a pong keeps the connection', async () => {
    const { client, clock, last, ofType } = setup();
    client.subscribe(A);
    client.start();
    last().open();
    await clock.advance(29_999);
    expect(last().sent.filter((m) => m === PING)).toHaveLength(0);
    await clock.advance(1);
    expect(last().sent.filter((m) => m === PING)).toHaveLength(1);
    await clock.advance(5_000);
    last().recv('{"channel":"pong"}');
    await clock.advance(25_000);
    last().recv('{"channel":"pong"}');
    await clock.advance(30_000);
    last().recv('{"channel":"pong"}');
    await clock.advance(9_999);
    expect(last().sent.filter((m) => m === PING)).toHaveLength(3);
    expect(ofType('disconnected')).toEqual([]);
    expect(last().terminated).toBe(false);
    await client.stop();
  });

  it('any frame counts as a sign of life', async () => {
    const { client, clock, last, ofType } = setup();
    client.subscribe(A);
    client.start();
    last().open();
    await clock.advance(30_000);
    last().recv('{"channel":"notification","data":{"notification":"hi"}}');
    await clock.advance(9_999);
    expect(ofType('disconnected')).toEqual([]);
    await client.stop();
  });

  it('no pong in time: terminate, disconnected(pong_timeout), backoff, resubscribe, reconnected', async () => {
    const { client, clock, sockets, last, ofType } = setup({ random: () => 0.5 });
    client.subscribe(A);
    client.subscribe(B);
    client.start();
    last().open();
    await clock.advance(30_000 + 9_999);
    expect(ofType('disconnected')).toEqual([]);
    await clock.advance(1);
    expect(sockets[0]?.terminated).toBe(true);
    expect(sockets[0]?.closeCode).toBeUndefined(); // no close handshake with a dead peer
    expect(ofType('disconnected')).toEqual([
      { type: 'disconnected', connection: 0, reason: 'pong_timeout', users: [A, B], retryInMs: 250, atMs: clock.nowMs() },
    ]);
    expect(client.connected()).toBe(false);
    expect(client.connections()[0]?.state).toBe('backoff');
    await clock.advance(249);
    expect(sockets).toHaveLength(1);
    await clock.advance(1);
    expect(sockets).toHaveLength(2);
    last().open();
    expect(last().sent).toEqual([sub(A), sub(B)]);
    expect(ofType('reconnected')).toEqual([{ type: 'reconnected', connection: 0, users: [A, B], atMs: clock.nowMs() }]);
    expect(client.stats().disconnects.pong_timeout).toBe(1);
    await client.stop();
  });

  it('the deadline runs from the oldest unanswered ping', async () => {
    const { client, clock, last, ofType } = setup({ pingEveryMs: 1_000, pongTimeoutMs: 2_500 });
    client.subscribe(A);
    client.start();
    last().open();
    await clock.advance(1_000 + 2_499);
    expect(ofType('disconnected')).toEqual([]);
    await clock.advance(1);
    expect(ofType('disconnected').map((e) => e.reason)).toEqual(['pong_timeout']);
    await client.stop();
  });

  it('failed attempts back off with growing, jittered delays; a pong resets the counter', async () => {
    const { client, clock, sockets, last, ofType } = setup({ random: () => 0.999 });
    client.subscribe(A);
    client.start();
    for (let i = 0; i < 8; i++) {
      last().fail();
      await flushMicrotasks();
      const retry = ofType('connect_failed').at(-1)?.retryInMs ?? 0;
      await clock.advance(retry);
    }
    expect(ofType('connect_failed').map((e) => e.retryInMs)).toEqual([499, 999, 1998, 3996, 7992, 15984, 29970, 29970]);
    expect(ofType('connect_failed').map((e) => e.attempt)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(sockets).toHaveLength(9);
    last().open();
    expect(ofType('connected')).toHaveLength(1); // never open before: a first connect
    expect(client.connections()[0]?.attempt).toBe(8);
    await clock.advance(30_000);
    last().recv('{"channel":"pong"}');
    expect(client.connections()[0]?.attempt).toBe(0);
    last().drop();
    await flushMicrotasks();
    expect(ofType('disconnected')).toEqual([
      expect.objectContaining({ reason: 'closed', retryInMs: 499 }),
    ]);
    await client.stop();
  });

  it('a socket that never opens is abandoned after connectTimeoutMs', async () => {
    const { client, clock, sockets, ofType } = setup({ connectTimeoutMs: 5_000 });
    client.subscribe(A);
    client.start();
    await clock.advance(5_000);
    expect(sockets[0]?.terminated).toBe(true);
    expect(ofType('connect_failed')).toEqual([expect.objectContaining({ reason: 'connect_timeout', attempt: 0 })]);
    await client.stop();
  });

  it('events from an abandoned socket are ignored', async () => {
    const { client, clock, sockets, last, ofType } = setup({ connectTimeoutMs: 5_000 });
    client.subscribe(A);
    client.start();
    await clock.advance(5_000 + 250);
    expect(sockets).toHaveLength(2);
    sockets[0]?.open();
    sockets[0]?.recv('{"channel":"notification","data":{"notification":"late"}}');
    expect(ofType('connected')).toEqual([]);
    expect(ofType('notification')).toEqual([]);
    last().open();
    expect(ofType('connected')).toHaveLength(1);
    await client.stop();
  });

  it('a throwing listener does not break the connection', async () => {
    const clock = new FakeClock();
    let sock: FakeSocket | undefined;
    const client = new NotificationClient({
      wsUrl: 'ws://h',
      clock,
      onEvent: () => {
        throw new Error('listener bug');
      },
      socketFactory: (url) => (sock = new FakeSocket(url)),
    });
    client.subscribe(A);
    client.start();
    sock?.open();
    sock?.recv('{"channel":"notification","data":{"notification":"x"}}');
    expect(client.connected()).toBe(true);
    expect(client.stats().listenerErrors).toBe(2);
    await client.stop();
  });
});

describe('NotificationClient stop', () => {
  it('stop() while in backoff cancels every timer and never reconnects', async () => {
    const { client, clock, sockets, last } = setup();
    client.subscribe(A);
    client.start();
    last().open();
    last().drop();
    await flushMicrotasks();
    expect(client.connections()[0]?.state).toBe('backoff');
    expect(clock.pendingTimers()).toBeGreaterThan(0);
    await client.stop();
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(10 * 60_000);
    expect(sockets).toHaveLength(1);
    expect(client.connections().map((c) => c.state)).toEqual(['idle']);
  });

  it('stop() closes open sockets politely, is idempotent, and start() resumes', async () => {
    const { client, clock, sockets, last } = setup();
    client.subscribe(A);
    client.start();
    client.start();
    expect(sockets).toHaveLength(1);
    last().open();
    const p1 = client.stop();
    const p2 = client.stop();
    expect(p2).toBe(p1);
    await p1;
    await client.stop();
    expect(sockets[0]?.closeCode).toBe(1000);
    expect(clock.pendingTimers()).toBe(0);
    expect(client.connected()).toBe(false);
    client.start();
    expect(sockets).toHaveLength(2);
    last().open();
    expect(last().sent).toEqual([sub(A)]);
    await client.stop();
  });

  it('stop() is bounded even when a socket never reports close', async () => {
    const { client, clock, last } = setup({ stopTimeoutMs: 1_000 });
    client.subscribe(A);
    client.start();
    last().open();
    last().closesCleanly = false;
    let resolved = false;
    void client.stop().then(() => (resolved = true));
    await clock.advance(999);
    expect(resolved).toBe(false);
    await clock.advance(1);
    expect(resolved).toBe(true);
    expect(last().terminated).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('stop() before start() resolves at once', async () => {
    const { client, clock } = setup();
    client.subscribe(A);
    await client.stop();
    expect(clock.pendingTimers()).toBe(0);
  });
});
