/**
 * The simulator's notification WebSocket (spec 4.16 and part 6, VENUE.md "WebSocket"), attached to
 * the simulator's HTTP server at `/ws` (`noServer`, so REST and WebSocket share one port).
 *
 * Behaviour the keeper depends on, mirrored from the venue:
 * - a non-JSON greeting text frame on connect, errors on the `error` channel as plain text;
 * - subscribe/unsubscribe acks on `subscriptionResponse`, `{"method":"ping"}` answered on `pong`;
 * - a connection silent for 60 s (on the injected clock) is closed;
 * - at most 10 connections and 10 distinct subscribed users per IP.
 * Faults: `wsSilent` freezes the server (no greeting, acks, pongs or notifications; sockets stay
 * open) and `wsDropEveryMs` drops every connection periodically.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Clock, TimerHandle } from '../time/clock.js';
import { VENUE_FACTS } from '../venue/facts.js';
import type { FaultControl } from './faults.js';
import { normalizeAddress } from './http-util.js';

export type SimLogger = (line: Record<string, unknown>) => void;

export interface WsHubOptions {
  /** Drives the idle close and the periodic drop (virtual time under a FakeClock). */
  clock: Clock;
  faults: FaultControl;
  logger?: SimLogger | undefined;
  maxConnectionsPerIp?: number;
  maxUsersPerIp?: number;
  idleCloseMs?: number;
  /** Largest inbound frame; the venue's messages are tiny. */
  maxPayloadBytes?: number;
}

/**
 * What the hub needs of a server-side socket: a `ws` WebSocket, or the in-process end of a pair
 * (in-process.ts) that carries the same frames without a socket.
 */
export interface HubSocket {
  readonly readyState: number;
  readonly OPEN: number;
  send(data: string, cb?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  pong(data?: Buffer): void;
  on(event: 'message', listener: (data: RawData, isBinary: boolean) => void): unknown;
  on(event: 'ping', listener: (payload: Buffer) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

interface Conn {
  ws: HubSocket;
  ip: string;
  /** Normalized addresses this connection is subscribed to. */
  users: Set<string>;
  idleTimer: TimerHandle | undefined;
}

const ERR_TOO_MANY_CONNECTIONS = 'Too many websocket connections from this IP';
const ERR_TOO_MANY_USERS = 'Too many distinct users subscribed from this IP';

export class WsHub {
  private readonly wss: WebSocketServer;
  private readonly conns = new Set<Conn>();
  /** ip -> user -> number of this IP's connections subscribed to that user. */
  private readonly usersByIp = new Map<string, Map<string, number>>();
  private readonly maxConnectionsPerIp: number;
  private readonly maxUsersPerIp: number;
  private readonly idleCloseMs: number;
  private dropTimer: TimerHandle | undefined;
  private dropPeriodMs: number | null = null;
  private readonly unsubscribeFaults: () => void;
  private closed = false;

  constructor(private readonly opts: WsHubOptions) {
    this.maxConnectionsPerIp = opts.maxConnectionsPerIp ?? VENUE_FACTS.wsMaxConnectionsPerIp;
    this.maxUsersPerIp = opts.maxUsersPerIp ?? VENUE_FACTS.wsMaxUsersPerIp;
    this.idleCloseMs = opts.idleCloseMs ?? VENUE_FACTS.wsIdleCloseMs;
    // autoPong off: protocol pings must go unanswered while the server is "silent".
    this.wss = new WebSocketServer({ noServer: true, autoPong: false, maxPayload: opts.maxPayloadBytes ?? 64 * 1024 });
    this.wss.on('error', (err) => this.log({ msg: 'ws server error', err: String(err) }));
    this.unsubscribeFaults = opts.faults.subscribe(() => this.syncDropTimer());
    this.syncDropTimer();
  }

  /** Completes an HTTP upgrade already known to target `/ws`. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => this.onConnection(ws, req.socket.remoteAddress ?? 'unknown'));
  }

  /** Takes a connection that arrived without a socket (in-process.ts): the same rules from here on. */
  accept(socket: HubSocket, ip: string): void {
    if (this.closed) {
      socket.terminate();
      return;
    }
    this.onConnection(socket, ip);
  }

  /**
   * Pushes a notification to every connection subscribed to `user` (the venue state's
   * `onNotification`). Returns how many connections it was sent to.
   */
  notify(user: string, text: string): number {
    const address = normalizeAddress(user) ?? user.toLowerCase();
    if (this.opts.faults.wsSilent()) return 0;
    const frame = JSON.stringify({ channel: 'notification', data: { notification: text } });
    let sent = 0;
    for (const c of this.conns) {
      if (c.users.has(address)) {
        this.send(c, frame);
        sent++;
      }
    }
    return sent;
  }

  connectionCount(): number {
    return this.conns.size;
  }

  /** Distinct users subscribed from `ip`. */
  usersFromIp(ip: string): number {
    return this.usersByIp.get(ip)?.size ?? 0;
  }

  /** Drops every connection without a close handshake (a network drop, as the venue side sees it). */
  dropAll(): void {
    for (const c of [...this.conns]) c.ws.terminate();
  }

  /** Terminates every client and stops the timers; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribeFaults();
    if (this.dropTimer) this.opts.clock.clearTimeout(this.dropTimer);
    this.dropTimer = undefined;
    for (const c of [...this.conns]) {
      if (c.idleTimer) this.opts.clock.clearTimeout(c.idleTimer);
      c.ws.terminate();
    }
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private onConnection(ws: HubSocket, ip: string): void {
    const conn: Conn = { ws, ip, users: new Set(), idleTimer: undefined };
    ws.on('error', (err) => this.log({ msg: 'ws client error', ip, err: String(err) }));
    ws.on('close', () => this.forget(conn));
    let fromIp = 0;
    for (const c of this.conns) if (c.ip === ip) fromIp++;
    if (fromIp >= this.maxConnectionsPerIp) {
      // Accepted only to say why, then closed: the client sees the reason on the error channel.
      if (!this.opts.faults.wsSilent()) ws.send(JSON.stringify({ channel: 'error', data: ERR_TOO_MANY_CONNECTIONS }));
      ws.close(1008, 'too many connections');
      this.log({ msg: 'ws connection refused', ip, reason: 'per_ip_connections' });
      return;
    }
    this.conns.add(conn);
    ws.on('message', (data, isBinary) => {
      this.touch(conn);
      this.onMessage(conn, data, isBinary);
    });
    ws.on('ping', (payload) => {
      this.touch(conn);
      if (!this.opts.faults.wsSilent()) ws.pong(payload);
    });
    this.touch(conn);
    this.send(conn, VENUE_FACTS.wsGreeting);
    this.log({ msg: 'ws connected', ip });
  }

  private onMessage(conn: Conn, data: RawData, _isBinary: boolean): void {
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.error(conn, `Error parsing JSON into valid websocket request: ${text.slice(0, 200)}`);
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      this.error(conn, `Error parsing JSON into valid websocket request: ${text.slice(0, 200)}`);
      return;
    }
    const m = msg as { method?: unknown; subscription?: unknown };
    if (m.method === 'ping') {
      this.send(conn, JSON.stringify({ channel: 'pong' }));
      return;
    }
    if (m.method !== 'subscribe' && m.method !== 'unsubscribe') {
      this.error(conn, `Unknown method: ${typeof m.method === 'string' ? m.method.slice(0, 50) : String(m.method)}`);
      return;
    }
    const sub = m.subscription;
    if (typeof sub !== 'object' || sub === null || Array.isArray(sub)) {
      this.error(conn, 'Invalid subscription: expected an object');
      return;
    }
    const { type, user } = sub as { type?: unknown; user?: unknown };
    if (type !== 'notification') {
      this.error(conn, `Unsupported subscription type: ${typeof type === 'string' ? type.slice(0, 50) : String(type)}`);
      return;
    }
    const address = typeof user === 'string' ? normalizeAddress(user) : undefined;
    if (!address) {
      this.error(conn, 'Invalid subscription: user must be an address');
      return;
    }
    if (m.method === 'subscribe') {
      if (conn.users.has(address)) {
        this.error(conn, `Already subscribed: ${JSON.stringify(sub)}`);
        return;
      }
      const ipUsers = this.usersByIp.get(conn.ip) ?? new Map<string, number>();
      if (!ipUsers.has(address) && ipUsers.size >= this.maxUsersPerIp) {
        this.error(conn, ERR_TOO_MANY_USERS);
        return;
      }
      ipUsers.set(address, (ipUsers.get(address) ?? 0) + 1);
      this.usersByIp.set(conn.ip, ipUsers);
      conn.users.add(address);
    } else {
      if (!conn.users.has(address)) {
        this.error(conn, `Already unsubscribed: ${JSON.stringify(sub)}`);
        return;
      }
      conn.users.delete(address);
      this.releaseUser(conn.ip, address);
    }
    // The ack echoes the subscription as the client sent it.
    this.send(conn, JSON.stringify({ channel: 'subscriptionResponse', data: { method: m.method, subscription: sub } }));
  }

  private error(conn: Conn, text: string): void {
    this.send(conn, JSON.stringify({ channel: 'error', data: text }));
  }

  private send(conn: Conn, frame: string): void {
    // Silent: the server is wedged, not gone; the socket stays open and nothing comes out of it.
    if (this.opts.faults.wsSilent()) return;
    if (conn.ws.readyState !== conn.ws.OPEN) return;
    conn.ws.send(frame, (err) => {
      if (err) this.log({ msg: 'ws send failed', ip: conn.ip, err: String(err) });
    });
  }

  /** Restarts the idle timer: any frame from the client (message or protocol ping) counts. */
  private touch(conn: Conn): void {
    if (conn.idleTimer) this.opts.clock.clearTimeout(conn.idleTimer);
    conn.idleTimer = this.opts.clock.setTimeout(() => {
      conn.idleTimer = undefined;
      if (!this.conns.has(conn)) return;
      this.log({ msg: 'ws idle close', ip: conn.ip });
      conn.ws.close(1000, 'idle timeout');
      // If the peer never completes the close handshake, do not keep its slot forever.
      this.forget(conn);
    }, this.idleCloseMs);
  }

  private forget(conn: Conn): void {
    if (!this.conns.delete(conn)) return;
    if (conn.idleTimer) this.opts.clock.clearTimeout(conn.idleTimer);
    conn.idleTimer = undefined;
    for (const u of conn.users) this.releaseUser(conn.ip, u);
    conn.users.clear();
  }

  private releaseUser(ip: string, user: string): void {
    const ipUsers = this.usersByIp.get(ip);
    if (!ipUsers) return;
    const n = (ipUsers.get(user) ?? 0) - 1;
    if (n > 0) ipUsers.set(user, n);
    else ipUsers.delete(user);
    if (ipUsers.size === 0) this.usersByIp.delete(ip);
  }

  /** Follows the `wsDropEveryMs` setting; restarts the period only when the setting changed. */
  private syncDropTimer(): void {
    const every = this.opts.faults.wsDropEveryMs();
    if (this.closed || every === this.dropPeriodMs) return;
    if (this.dropTimer) this.opts.clock.clearTimeout(this.dropTimer);
    this.dropTimer = undefined;
    this.dropPeriodMs = every;
    if (every === null) return;
    const tick = (): void => {
      this.dropTimer = undefined;
      if (this.closed || this.dropPeriodMs !== every) return;
      this.log({ msg: 'ws drop (fault)', connections: this.conns.size });
      this.dropAll();
      this.dropTimer = this.opts.clock.setTimeout(tick, every);
    };
    this.dropTimer = this.opts.clock.setTimeout(tick, every);
  }

  private log(line: Record<string, unknown>): void {
    this.opts.logger?.({ component: 'sim.ws', ...line });
  }
}
