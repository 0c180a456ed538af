/**
 * Options, socket seam and events of the notification client. The event union is what the keeper
 * consumes; reasons are closed sets exported as arrays so metric labels can be pre-created.
 */
import WebSocket from 'ws';
import type { Clock } from '../../time/clock.js';
import { VENUE_FACTS } from '../facts.js';
import { DEFAULT_BACKOFF, validateBackoff, type BackoffOptions } from './backoff.js';
import type { UnparsedReason } from './frames.js';

/**
 * The slice of a `ws` WebSocket the client uses. A real `ws` socket satisfies it; unit tests pass
 * an EventEmitter fake. Every socket must eventually emit `close` after `close()`/`terminate()`.
 */
export interface SocketLike {
  send(data: string, cb?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  /** Drops the connection without a close handshake. */
  terminate(): void;
  on(event: 'open', listener: () => void): unknown;
  on(event: 'message', listener: (data: unknown, isBinary: boolean) => void): unknown;
  on(event: 'close', listener: (code: number, reason: unknown) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

export type SocketFactory = (url: string) => SocketLike;

/** Notifications are one-line texts; refusing megabyte frames bounds what a bad peer can make us buffer. */
const MAX_FRAME_BYTES = 1024 * 1024;

export function defaultSocketFactory(url: string): SocketLike {
  return new WebSocket(url, { maxPayload: MAX_FRAME_BYTES });
}

export const DISCONNECT_REASONS = ['pong_timeout', 'closed', 'error', 'connect_timeout'] as const;
export type DisconnectReason = (typeof DISCONNECT_REASONS)[number];

export const CONNECTION_STATES = ['idle', 'connecting', 'open', 'backoff'] as const;
export type ConnectionStateName = (typeof CONNECTION_STATES)[number];

export type NotificationClientEvent =
  /** First open of a connection (since start, or since it last went idle for want of users). */
  | { type: 'connected'; connection: number; users: string[]; atMs: number }
  /** An open connection died; a reconnect is scheduled `retryInMs` from now. */
  | { type: 'disconnected'; connection: number; reason: DisconnectReason; users: string[]; retryInMs: number; atMs: number }
  /** A connect attempt failed before the socket opened. */
  | { type: 'connect_failed'; connection: number; reason: DisconnectReason; attempt: number; retryInMs: number; atMs: number }
  /** Reopened and every user re-subscribed (acks may still be in flight): reconcile these from REST. */
  | { type: 'reconnected'; connection: number; users: string[]; atMs: number }
  /** The venue acknowledged a subscription. */
  | { type: 'subscribed'; connection: number; user: string; atMs: number }
  | {
      type: 'notification';
      connection: number;
      text: string;
      /** Everyone subscribed on that connection: any of them may be concerned. */
      users: string[];
      /** Set only when unambiguous. */
      user?: string;
      receivedAtMs: number;
    }
  /** `{"channel":"error"}`; the connection stays up. `user` when the text names exactly one of ours. */
  | { type: 'server_error'; connection: number; message: string; user?: string; atMs: number }
  | { type: 'unparsed_frame'; connection: number; reason: UnparsedReason; sample: string; atMs: number };

export type NotificationClientEventType = NotificationClientEvent['type'];

export type SubscribeResult =
  | { subscribed: true; connection: number }
  | { subscribed: false; reason: 'user_cap' | 'invalid_address' };

export interface ConnectionInfo {
  id: number;
  state: ConnectionStateName;
  users: string[];
  confirmedUsers: string[];
  /** Failed attempts since the connection was last healthy. */
  attempt: number;
  openedAtMs?: number;
  lastFrameAtMs?: number;
}

export interface NotificationClientCounters {
  greetings: number;
  unparsedFrames: number;
  notifications: number;
  serverErrors: number;
  /** Throws from `onEvent`, swallowed so a listener bug cannot kill a socket callback. */
  listenerErrors: number;
  connectAttempts: number;
  disconnects: Record<DisconnectReason, number>;
}

export interface NotificationClientOptions {
  /** The spec's `{ws_url}`; the client connects to `${wsUrl}/ws`. */
  wsUrl: string;
  clock: Clock;
  onEvent: (e: NotificationClientEvent) => void;
  socketFactory?: SocketFactory;
  /** Jitter source in [0, 1); defaults to Math.random. */
  random?: () => number;
  pingEveryMs?: number;
  pongTimeoutMs?: number;
  /** A socket not open after this long is abandoned and retried. */
  connectTimeoutMs?: number;
  /** How long `stop()` waits for close handshakes before terminating. */
  stopTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  maxUsers?: number;
  usersPerConnection?: number;
}

export interface ResolvedOptions {
  url: string;
  clock: Clock;
  onEvent: (e: NotificationClientEvent) => void;
  socketFactory: SocketFactory;
  random: () => number;
  pingEveryMs: number;
  pongTimeoutMs: number;
  connectTimeoutMs: number;
  stopTimeoutMs: number;
  backoff: BackoffOptions;
  maxUsers: number;
  usersPerConnection: number;
  /** Connections needed for `maxUsers`, capped by the venue's per-IP limit. */
  maxConnections: number;
  /** Users we can actually carry: min(maxUsers, maxConnections * usersPerConnection). */
  capacity: number;
}

/** `${wsUrl}/ws` without a doubled slash. */
export function wsEndpoint(wsUrl: string): string {
  return `${wsUrl.trim().replace(/\/+$/, '')}/ws`;
}

function positiveInt(name: string, v: number): number {
  if (!(Number.isInteger(v) && v > 0)) throw new RangeError(`ws ${name} must be a positive integer, got ${v}`);
  return v;
}

/** Defaults plus every check that can fail, so mistakes surface at construction. */
export function resolveOptions(o: NotificationClientOptions): ResolvedOptions {
  let parsed: URL;
  try {
    parsed = new URL(o.wsUrl);
  } catch {
    throw new RangeError(`ws wsUrl is not a URL: ${JSON.stringify(o.wsUrl)}`);
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new RangeError(`ws wsUrl must start with ws:// or wss://, got ${JSON.stringify(o.wsUrl)}`);
  }
  const pingEveryMs = positiveInt('pingEveryMs', o.pingEveryMs ?? 30_000);
  if (pingEveryMs > VENUE_FACTS.wsPingEveryMaxMs) {
    throw new RangeError(
      `ws pingEveryMs must be <= ${VENUE_FACTS.wsPingEveryMaxMs} (the venue drops connections silent for ${VENUE_FACTS.wsIdleCloseMs} ms), got ${pingEveryMs}`,
    );
  }
  const pongTimeoutMs = positiveInt('pongTimeoutMs', o.pongTimeoutMs ?? 10_000);
  const connectTimeoutMs = positiveInt('connectTimeoutMs', o.connectTimeoutMs ?? 10_000);
  const stopTimeoutMs = positiveInt('stopTimeoutMs', o.stopTimeoutMs ?? 2_000);
  const backoff = { ...DEFAULT_BACKOFF, ...o.backoff };
  validateBackoff(backoff);
  const maxUsers = positiveInt('maxUsers', o.maxUsers ?? VENUE_FACTS.wsMaxUsersPerIp);
  if (maxUsers > VENUE_FACTS.wsMaxUsersPerIp) {
    throw new RangeError(`ws maxUsers must be <= ${VENUE_FACTS.wsMaxUsersPerIp} (the venue's per-IP limit), got ${maxUsers}`);
  }
  const usersPerConnection = positiveInt('usersPerConnection', o.usersPerConnection ?? 10);
  const maxConnections = Math.min(VENUE_FACTS.wsMaxConnectionsPerIp, Math.ceil(maxUsers / usersPerConnection));
  return {
    url: wsEndpoint(o.wsUrl),
    clock: o.clock,
    onEvent: o.onEvent,
    socketFactory: o.socketFactory ?? defaultSocketFactory,
    random: o.random ?? Math.random,
    pingEveryMs,
    pongTimeoutMs,
    connectTimeoutMs,
    stopTimeoutMs,
    backoff,
    maxUsers,
    usersPerConnection,
    maxConnections,
    capacity: Math.min(maxUsers, maxConnections * usersPerConnection),
  };
}
