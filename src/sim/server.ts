/**
 * The simulator's HTTP server: one node:http server on loopback carrying the REST routes (`/v1`),
 * the exchange endpoint (`POST /exchange`), the info endpoint (`POST /info`), the WebSocket upgrade
 * (`/ws`) and the admin API (`/_sim/`). Everything stateful is injected (routes, venue clock, faults, rate limiter, WebSocket
 * hub), so the server can be tested with stubs and composed by `simulator.ts`.
 *
 * What a request gets (routes, faults, rate limits, profiles) is decided by the shared handler
 * (http-handler.ts), which the in-process carrier (in-process.ts) calls too; this file is the
 * socket carrier: it reads the body off the socket, writes the answer, and turns a "reset" into a
 * destroyed socket.
 *
 * Hostile input never crashes it: a malformed URL, percent-encoding or JSON is a 400 envelope,
 * oversized bodies are refused, oversized headers get node's 431 (answered by our `clientError`
 * handler), slow or aborted uploads are dropped, and a handler that throws is a 500.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { systemClock } from '../time/clock.js';
import { createSimHttpHandler, HARD_BODY_LIMIT_BYTES, type BodyRead, type SimExchange, type SimHandlerOptions, type SimHttpHandler } from './http-handler.js';
import type { WsHub } from './ws-server.js';

/** How long `close()` waits for sockets to finish before it gives up waiting (it has destroyed them). */
const CLOSE_BOUND_MS = 2_000;

export { clientIp, DEFAULT_MAX_BODY_BYTES, statusFaultResponse } from './http-handler.js';

export interface SimServerOptions extends SimHandlerOptions {
  host: string;
  /** 0 = ephemeral. */
  port: number;
  ws: WsHub;
  /** The handler to carry; built from these options when absent (simulator.ts shares one with in-process.ts). */
  handler?: SimHttpHandler;
}

export interface SimServer {
  readonly host: string;
  readonly port: number;
  readonly httpServer: http.Server;
  /** Stops accepting, ends the WebSocket hub, destroys every socket. Bounded and idempotent. */
  close(): Promise<void>;
}

function readBody(req: IncomingMessage, cap: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > HARD_BODY_LIMIT_BYTES) {
      resolve({ kind: 'abandon' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (r: BodyRead): void => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > HARD_BODY_LIMIT_BYTES) {
        req.pause();
        settle({ kind: 'abandon' });
      } else if (size <= cap) {
        chunks.push(chunk);
      } else {
        chunks.length = 0; // keep draining, stop buffering
      }
    });
    req.on('end', () => settle(size > cap ? { kind: 'too_large' } : { kind: 'ok', bytes: Buffer.concat(chunks) }));
    req.on('error', () => settle({ kind: 'aborted' }));
    req.on('close', () => settle({ kind: 'aborted' }));
  });
}

export async function listenSimServer(opts: SimServerOptions): Promise<SimServer> {
  const { clock, ws, logger } = opts;
  const handler = opts.handler ?? createSimHttpHandler(opts);
  const sockets = new Set<Socket>();
  const stopping = new AbortController();

  const log = (line: Record<string, unknown>): void => logger?.({ component: 'sim.http', ...line });
  const dateHeader = (): string => new Date(clock.nowMs()).toUTCString();

  /** The shared handler's view of one node:http request. */
  const exchange = (req: IncomingMessage, res: ServerResponse): SimExchange => ({
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    headers: req.headers,
    remoteAddress: req.socket.remoteAddress ?? '',
    readBody: (cap) => readBody(req, cap),
    gone: () => res.headersSent || res.destroyed || req.socket.destroyed,
    respond: (status, headers, body) => {
      res.writeHead(status, headers);
      res.end(body);
    },
    respondThenReset: (status, headers, partial) => {
      res.writeHead(status, headers);
      res.flushHeaders();
      const kill = (): void => {
        req.socket.destroy();
      };
      if (partial.length > 0) res.write(partial, kill);
      else req.socket.write('', kill);
    },
    reset: () => {
      req.socket.destroy();
    },
  });

  const server = http.createServer((req, res) => {
    // Real elapsed time for the log line (a measurement, not venue time).
    const started = performance.now();
    res.on('finish', () => log({ msg: 'request', method: req.method, url: req.url, status: res.statusCode, ms: Math.round(performance.now() - started) }));
    const x = exchange(req, res);
    handler.handle(x).catch((err: unknown) => {
      log({ msg: 'request failed', err: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent && !req.socket.destroyed) handler.fail(x);
      else req.socket.destroy();
    });
  });
  // Slow clients cannot hold sockets forever (slowloris); these are real-time limits on purpose.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 200;

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  // Replaces node's default so that the answer carries our envelope; 431 for oversized headers.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const busy = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || busy) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify({
      error: { code: status, status: 'INVALID_ARGUMENT', message: http.STATUS_CODES[status] ?? 'bad request', details: [] },
    });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Date: ${dateHeader()}\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    let pathname: string | undefined;
    try {
      pathname = new URL(req.url ?? '/', 'http://sim.invalid').pathname;
    } catch {
      pathname = undefined;
    }
    if (pathname !== '/ws' || stopping.signal.aborted) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    ws.handleUpgrade(req, socket, head);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(opts.port, opts.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (err) => log({ msg: 'server error', err: String(err) }));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopping.abort();
      handler.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await ws.close().catch(() => undefined);
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      // The bound is a real timer: under a FakeClock nobody would advance an injected one.
      const real = systemClock();
      await new Promise<void>((resolve) => {
        const t = real.setTimeout(resolve, CLOSE_BOUND_MS);
        void closed.then(() => {
          real.clearTimeout(t);
          resolve();
        });
      });
    })();
    return closing;
  };

  return { host: opts.host, port, httpServer: server, close };
}
