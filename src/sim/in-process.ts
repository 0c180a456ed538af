/**
 * The simulator without sockets: an undici `Dispatcher` that hands each request to the simulator's
 * own HTTP handler (http-handler.ts, the one its loopback server carries), and WebSocket pairs that
 * carry frames to its hub (ws-server.ts). The keeper's side is unchanged: its `HttpTransport` runs
 * the same dispatch handler, deadlines and error classification over this dispatcher, and its
 * `NotificationClient` takes the pair's client end from a `SocketFactory`.
 *
 * Faults behave as over loopback: latency waits on the venue clock, forced answers and broken
 * bodies arrive as written, and a reset is the error undici raises when the peer closes the
 * connection (`SocketError`, `UND_ERR_SOCKET`), so the transport classifies it as it does off a
 * socket (`network`).
 *
 * For virtual time: nothing here waits on real time. Each piece of work is a promise continuation
 * or a `setImmediate` callback, so a driver can tell when everything that can run has run
 * (`idle()`), except what waits on the venue clock (a latency fault), which only moving the clock
 * releases. The keeper's and the simulator's figures then depend on virtual time only.
 */
import { EventEmitter } from 'node:events';
import { Dispatcher, errors } from 'undici';
import type { SocketLike } from '../venue/ws/types.js';
import { judgeBody, type SimExchange, type SimHttpHandler } from './http-handler.js';
import type { HubSocket, WsHub } from './ws-server.js';

/** The peer address the simulator sees (rate limits and WebSocket limits are per IP). */
export const IN_PROCESS_ADDRESS = '127.0.0.1';
/** The origin the in-process simulator's URLs carry; the dispatcher ignores it. */
export const IN_PROCESS_ORIGIN = 'http://sim.in-process';

type LegacyHandler = Required<Pick<Dispatcher.DispatchHandler, 'onHeaders' | 'onData' | 'onComplete' | 'onError'>> & Dispatcher.DispatchHandler;

/** What one request's answer is delivered through, whichever handler interface undici handed over. */
interface Sink {
  headers(status: number, headers: Record<string, string>): void;
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

function toRecord(h: Dispatcher.DispatchOptions['headers']): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  const put = (k: string, v: unknown): void => {
    if (v === undefined || v === null) return;
    out[k.toLowerCase()] = Array.isArray(v) ? v.map(String) : String(v as string);
  };
  if (!h) return out;
  if (Array.isArray(h)) {
    for (let i = 0; i + 1 < h.length; i += 2) put(String(h[i]), h[i + 1]);
  } else if (typeof (h as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k, v] of h as Iterable<[string, string]>) put(k, v);
  } else {
    for (const [k, v] of Object.entries(h)) put(k, v);
  }
  return out;
}

function bodyBytes(body: Dispatcher.DispatchOptions['body']): Buffer | undefined {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return undefined;
}

/** The error undici raises when the server drops the connection (as over a socket). */
function peerClosed(): Error {
  return new errors.SocketError('other side closed');
}

export class InProcessDispatcher extends Dispatcher {
  private closed = false;
  /** Requests in the handler, and those of them waiting on the venue clock; aborted ones left out. */
  private readonly live = new Set<object>();
  private readonly waiting = new Set<object>();

  constructor(
    private readonly handler: SimHttpHandler,
    private readonly remoteAddress = IN_PROCESS_ADDRESS,
  ) {
    super();
  }

  /** Requests not yet answered that can progress without the clock moving. */
  active(): number {
    return this.live.size - this.waiting.size;
  }

  /** Requests held on the venue clock (latency faults). */
  waitingOnClock(): number {
    return this.waiting.size;
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const key = {};
    let aborted = false;
    let finished = false;
    const done = (): void => {
      finished = true;
      this.live.delete(key);
      this.waiting.delete(key);
    };
    const sink = this.sink(handler, (err) => {
      if (aborted || finished) return;
      aborted = true;
      done();
      sink.error(err ?? new errors.RequestAbortedError());
    });
    if (this.closed) {
      sink.error(new errors.ClientDestroyedError());
      return false;
    }
    const bytes = bodyBytes(opts.body);
    if (bytes === undefined) {
      sink.error(new errors.NotSupportedError('the in-process dispatcher takes string or byte bodies only'));
      return true;
    }
    if (aborted) return true; // aborted in onConnect (a signal already fired)
    this.live.add(key);
    const gone = (): boolean => aborted || finished;
    const headers = toRecord(opts.headers);
    headers['host'] ??= 'sim.in-process';
    if (bytes.length > 0 || opts.method === 'POST') headers['content-length'] ??= String(bytes.length);
    const x: SimExchange = {
      method: opts.method,
      url: opts.path,
      headers,
      remoteAddress: this.remoteAddress,
      readBody: async (cap) => judgeBody(bytes, cap),
      gone,
      respond: (status, h, body) => {
        if (gone()) return;
        done();
        sink.headers(status, h);
        if (body.length > 0) sink.data(body);
        sink.end();
      },
      respondThenReset: (status, h, partial) => {
        if (gone()) return;
        done();
        sink.headers(status, h);
        if (partial.length > 0) sink.data(partial);
        sink.error(peerClosed());
      },
      reset: () => {
        if (gone()) return;
        done();
        sink.error(peerClosed());
      },
      clockWait: (on) => {
        if (on && !gone()) this.waiting.add(key);
        else this.waiting.delete(key);
      },
    };
    void Promise.resolve()
      .then(() => this.handler.handle(x))
      .catch(() => {
        if (!gone()) this.handler.fail(x);
      })
      .finally(() => {
        // A handler that returned without answering (it saw the client gone): nothing is owed.
        if (!gone()) x.reset();
      });
    return true;
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    this.closed = true;
    if (callback) {
      queueMicrotask(callback);
      return;
    }
    return Promise.resolve();
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    this.closed = true;
    const callback = typeof a === 'function' ? a : b;
    if (callback) {
      queueMicrotask(callback);
      return;
    }
    return Promise.resolve();
  }

  /** Adapts undici's handler, old interface (`onConnect`...`onError`, what the keeper's transport passes) or new. */
  private sink(handler: Dispatcher.DispatchHandler, abort: (err?: Error) => void): Sink {
    if (handler.onRequestStart) {
      let paused = false;
      const controller: Dispatcher.DispatchController = {
        get aborted() {
          return false;
        },
        get paused() {
          return paused;
        },
        get reason() {
          return null;
        },
        abort: (reason: Error) => abort(reason),
        pause: () => {
          paused = true;
        },
        resume: () => {
          paused = false;
        },
      };
      handler.onRequestStart(controller, {});
      return {
        headers: (status, h) => handler.onResponseStart?.(controller, status, lower(h), ''),
        data: (chunk) => handler.onResponseData?.(controller, chunk),
        end: () => handler.onResponseEnd?.(controller, {}),
        error: (err) => handler.onResponseError?.(controller, err),
      };
    }
    const legacy = handler as LegacyHandler;
    legacy.onConnect?.(abort);
    return {
      headers: (status, h) => {
        const raw: Buffer[] = [];
        for (const [k, v] of Object.entries(h)) raw.push(Buffer.from(k, 'latin1'), Buffer.from(v, 'latin1'));
        legacy.onHeaders(status, raw, () => undefined, '');
      },
      data: (chunk) => legacy.onData(chunk),
      end: () => legacy.onComplete([]),
      error: (err) => legacy.onError(err),
    };
  }
}

function lower(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

// ---- WebSocket ---------------------------------------------------------------------------------

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/**
 * One end of an in-process WebSocket: what `ws` does that the keeper's client and the simulator's
 * hub rely on (open, text frames in order, close handshake, terminate as an abrupt drop: code
 * 1006), each delivery a `setImmediate` callback counted by the link.
 */
class PairEnd extends EventEmitter implements SocketLike, HubSocket {
  readyState = CONNECTING;
  readonly OPEN = OPEN;
  peer!: PairEnd;

  constructor(private readonly post: (fn: () => void) => void) {
    super();
  }

  send(data: string, cb?: (err?: Error) => void): void {
    if (this.readyState === CONNECTING) throw new Error('WebSocket is not open: readyState 0 (CONNECTING)');
    if (this.readyState !== OPEN) {
      if (cb) this.post(() => cb(new Error(`WebSocket is not open: readyState ${this.readyState}`)));
      return;
    }
    const peer = this.peer;
    const frame = Buffer.from(data, 'utf8');
    this.post(() => {
      if (peer.readyState === OPEN || peer.readyState === CLOSING) peer.emit('message', frame, false);
      cb?.();
    });
  }

  close(code = 1005, reason = ''): void {
    if (this.readyState === CLOSED || this.readyState === CLOSING) return;
    if (this.readyState === CONNECTING) {
      this.fail('WebSocket was closed before the connection was established');
      return;
    }
    this.readyState = CLOSING;
    const peer = this.peer;
    this.post(() => {
      // The peer answers the close frame; both ends then see the connection closed.
      const reasonBuf = Buffer.from(reason, 'utf8');
      if (peer.readyState !== CLOSED) {
        peer.readyState = CLOSED;
        peer.emit('close', code, reasonBuf);
      }
      if (this.readyState !== CLOSED) {
        this.readyState = CLOSED;
        this.emit('close', code, reasonBuf);
      }
    });
  }

  terminate(): void {
    if (this.readyState === CLOSED) return;
    if (this.readyState === CONNECTING) {
      this.fail('WebSocket was closed before the connection was established');
      return;
    }
    this.readyState = CLOSED;
    const peer = this.peer;
    this.post(() => {
      this.emit('close', 1006, Buffer.alloc(0));
      if (peer.readyState !== CLOSED) {
        peer.readyState = CLOSED;
        peer.emit('close', 1006, Buffer.alloc(0));
      }
    });
  }

  /** Protocol pongs: the keeper's client sends JSON pings only, so nobody waits for these. */
  pong(): void {}

  /** A connection that never opened: `error`, then `close` (as `ws` reports an aborted handshake). */
  fail(message: string): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.post(() => {
      this.emit('error', new Error(message));
      this.emit('close', 1006, Buffer.alloc(0));
    });
  }
}

/**
 * The simulator reached without sockets: `dispatcher` for the keeper's HTTP transport,
 * `socketFactory` for its notification client. `idle()` is true when no request or frame can make
 * progress without virtual time moving.
 */
export class InProcessLink {
  readonly dispatcher: InProcessDispatcher;
  private pendingFrames = 0;

  constructor(
    handler: SimHttpHandler,
    private readonly hub: WsHub,
    private readonly remoteAddress = IN_PROCESS_ADDRESS,
  ) {
    this.dispatcher = new InProcessDispatcher(handler, remoteAddress);
  }

  /** Frames and WebSocket events posted but not yet delivered. */
  framesInFlight(): number {
    return this.pendingFrames;
  }

  readonly socketFactory = (url: string): SocketLike => {
    const post = (fn: () => void): void => {
      this.pendingFrames++;
      setImmediate(() => {
        this.pendingFrames--;
        fn();
      });
    };
    const client = new PairEnd(post);
    const server = new PairEnd(post);
    client.peer = server;
    server.peer = client;
    let path: string | undefined;
    try {
      path = new URL(url).pathname;
    } catch {
      path = undefined;
    }
    post(() => {
      if (client.readyState !== CONNECTING) return; // given up before the handshake
      if (path !== '/ws') {
        client.fail('Unexpected server response: 404');
        return;
      }
      client.readyState = OPEN;
      server.readyState = OPEN;
      // The hub greets (a frame posted after this), then the client hears `open`: the order `ws` keeps.
      this.hub.accept(server, this.remoteAddress);
      if (client.readyState === OPEN) client.emit('open');
    });
    return client;
  };
}
