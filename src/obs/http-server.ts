import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Registry } from 'prom-client';
import { parseListen as parseListenText } from '../config/rules.js';
import type { HeartbeatRefusal } from './metrics.js';
import { jsonPieces } from './json-pieces.js';

/** An answer computed elsewhere (the heartbeat), written here. */
export interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Heartbeat bodies over this are refused (413) unread: a heartbeat is a few account names. */
export const HEARTBEAT_MAX_BODY_BYTES = 16 * 1024;

/** `/status`: `head`'s members, then `accounts` last (read lazily, as the body is written). */
export interface StatusView {
  head: Record<string, unknown>;
  accounts: Iterable<unknown>;
}

/**
 * The operator endpoints. Small and defensive: GET/HEAD only, except `POST /heartbeat` (a bot
 * saying it is alive, docs/liveness.md) whose body is read up to 16 KiB; bounded header size and
 * URL length, short timeouts, every answer small. Nothing here can stall the keeper: handlers only
 * read in-memory state.
 */
export interface OpsViews {
  processHealth(): { alive: boolean; lastLoopAgeMs: number };
  readiness(): { ready: boolean; faults: unknown[] };
  status(): StatusView;
  statusPage(): string;
  registry: Registry;
  /** `POST /heartbeat`; absent: 404 like any unknown path. */
  heartbeat?(input: { authorization: string | undefined; body: string }): HttpAnswer;
  /** Counts a heartbeat refused before it was read (too large). */
  heartbeatRefused?(reason: HeartbeatRefusal): HttpAnswer;
}

const MAX_URL_CHARS = 2048;

export interface OpsServer {
  readonly address: { host: string; port: number };
  close(): Promise<void>;
}

/** The config's grammar (src/config/rules.ts, its one home); a bad address throws. */
export function parseListen(listen: string): { host: string; port: number } {
  const r = parseListenText(listen);
  if ('problem' in r) throw new Error(`listen must be host:port (IPv6 in brackets), got '${listen}'`);
  return r;
}

function send(res: ServerResponse, status: number, body: string, contentType: string, extra: Record<string, string> = {}): void {
  const buf = Buffer.from(body, 'utf8');
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': String(buf.length),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  res.end(res.req.method === 'HEAD' ? undefined : buf);
}

/**
 * A body written as it is made (chunked transfer encoding: its length is known only at the end),
 * each piece made once the one before has been written to the socket, so a slow reader holds one
 * piece of it, not all of it, and a piece may be a view of a buffer the next one is written in
 * (KeeperRegistry.metricsPieces `lent`). A client that leaves stops the making.
 */
async function streamBody(res: ServerResponse, status: number, pieces: AsyncGenerator<Buffer>, contentType: string): Promise<void> {
  const first = await pieces.next(); // a registry that cannot write this format throws here, before the headers
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  if (res.req.method === 'HEAD') {
    await pieces.return(undefined);
    res.end();
    return;
  }
  for (let p = first; !p.done; p = await pieces.next()) {
    if (res.destroyed) {
      await pieces.return(undefined);
      return;
    }
    await written(res, p.value);
  }
  res.end();
}

/** Resolves once `piece` has been written to the socket (its write's callback), or the response is gone. */
function written(res: ServerResponse, piece: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('close', done);
      resolve();
    };
    res.on('close', done);
    res.write(piece, done);
  });
}

function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, `${JSON.stringify(value)}\n`, 'application/json; charset=utf-8');
}

/** The heartbeat route: only its body is read; every other request's body is discarded unread. */
export function isHeartbeatRequest(req: IncomingMessage): boolean {
  return req.method === 'POST' && (req.url ?? '/').split('?')[0] === '/heartbeat';
}

/**
 * Reads a request body of at most `maxBytes`; null (after the 413 is due) when it is larger. A
 * declared length over the limit is refused before a byte is read.
 */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function handleHeartbeat(views: OpsViews, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const answer = (a: HttpAnswer, extra: Record<string, string> = {}): void =>
    send(res, a.status, `${JSON.stringify(a.body)}\n`, 'application/json; charset=utf-8', { ...(a.headers ?? {}), ...extra });
  const body = await readBody(req, HEARTBEAT_MAX_BODY_BYTES);
  if (body === null) {
    // The rest of an oversized body is not read: answer and close the connection.
    answer(views.heartbeatRefused?.('too_large') ?? { status: 413, body: { error: 'too_large' } }, { connection: 'close' });
    res.once('finish', () => req.destroy());
    return;
  }
  answer(views.heartbeat!({ authorization: req.headers.authorization, body }));
}

export async function handleOps(views: OpsViews, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  if (url.length > MAX_URL_CHARS) return json(res, 414, { error: 'uri too long' });
  const path = url.split('?')[0] ?? '/';
  if (path === '/heartbeat' && views.heartbeat) {
    if (req.method !== 'POST') return send(res, 405, `${JSON.stringify({ error: 'method not allowed' })}\n`, 'application/json; charset=utf-8', { allow: 'POST' });
    return handleHeartbeat(views, req, res);
  }
  const known = path === '/' || path === '/metrics' || path === '/healthz' || path === '/readyz' || path === '/status';
  if (!known) return json(res, 404, { error: 'not found', paths: ['/', '/metrics', '/healthz', '/readyz', '/status', ...(views.heartbeat ? ['/heartbeat'] : [])] });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, 405, `${JSON.stringify({ error: 'method not allowed' })}\n`, 'application/json; charset=utf-8', { allow: 'GET, HEAD' });
  }
  switch (path) {
    case '/healthz': {
      const l = views.processHealth();
      return json(res, l.alive ? 200 : 503, { status: l.alive ? 'ok' : 'stalled', last_loop_age_ms: l.lastLoopAgeMs });
    }
    case '/readyz': {
      const r = views.readiness();
      return json(res, r.ready ? 200 : 503, r.ready ? { status: 'ready' } : { status: 'not ready', accounts: r.faults });
    }
    case '/status': {
      // Written in pieces as it is made (json-pieces.ts): at 50,000 accounts the whole body was
      // about 2 s of one turn of the event loop on a starved machine, and the status page asks for
      // it every 2 s.
      const s = views.status();
      return streamBody(res, 200, jsonPieces(s.head, 'accounts', s.accounts), 'application/json; charset=utf-8');
    }
    case '/metrics': {
      // Written as it is made when the registry can (KeeperRegistry.metricsPieces): at 10,000
      // accounts the text is about 11 MB, and made whole before the first byte left, with the
      // Buffers the socket made of it, a scrape was the keeper's peak RSS (bench: 204-209 MB once
      // all were armed, 251-253 MB at the first scrape).
      const reg = views.registry as Registry & { metricsPieces?: (o: { lent: boolean }) => AsyncGenerator<Buffer> };
      if (reg.metricsPieces) return streamBody(res, 200, reg.metricsPieces({ lent: true }), reg.contentType);
      return send(res, 200, await reg.metrics(), reg.contentType);
    }
    default:
      return send(res, 200, views.statusPage(), 'text/html; charset=utf-8', {
        'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:",
      });
  }
}

/**
 * Connection slots. A neighbour (a misbehaving client, a scanner, a slowloris) that holds every
 * slot must not cost us a scrape or a probe. Node's own `server.maxConnections` refuses the newest
 * connection when full, i.e. exactly the scrape, and a held slot is freed only by `headersTimeout`
 * (5 s), which a client that reconnects at once defeats. Instead, every connection is accepted and,
 * over OPS_MAX_CONNECTIONS, the least recently active connection with no request in flight is closed
 * (an idle keep-alive, or one still sending its request: slowloris). A client that completes requests
 * keeps its place; one that never does ages out first, however it drips bytes; a new scrape, the
 * youngest connection, goes last. Why not the alternatives: per-client limits do nothing when the
 * neighbour and Prometheus share an address (loopback, a node's NAT, a sidecar proxy), which is the
 * case here; a faster first-line timeout only shortens how long each held slot lasts, and a client
 * that reconnects keeps them all held anyway.
 */
export const OPS_MAX_CONNECTIONS = 256;
/** A hard ceiling past the evicting one, so a connect flood faster than sockets close stays bounded. */
const OPS_HARD_MAX_CONNECTIONS = 2 * OPS_MAX_CONNECTIONS;

export async function startOpsServer(listen: string, views: OpsViews, onError: (e: Error) => void = () => undefined): Promise<OpsServer> {
  const { host, port } = parseListen(listen);
  /** Open sockets, least recently active first (re-inserted when a request starts), with their requests in flight. */
  const sockets = new Map<Socket, { inFlight: number }>();
  const evictOne = (): void => {
    for (const [s, c] of sockets) {
      if (c.inFlight > 0 || s.destroyed) continue;
      sockets.delete(s);
      s.destroy();
      return;
    }
  };
  // connectionsCheckingInterval: Node enforces headersTimeout only on this tick (30 s by default), so
  // slow clients could hold every connection slot for half a minute and fail liveness probes.
  const server: Server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 }, (req, res) => {
    const s = req.socket;
    const c = sockets.get(s);
    if (c) {
      c.inFlight++;
      sockets.delete(s);
      sockets.set(s, c);
      res.once('close', () => c.inFlight--);
    }
    // The body of a GET is never read: discard it so a slow uploader cannot hold the socket.
    if (!isHeartbeatRequest(req)) req.resume();
    handleOps(views, req, res).catch((e: unknown) => {
      onError(e as Error);
      if (!res.headersSent) json(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.set(s, { inFlight: 0 });
    s.on('close', () => sockets.delete(s));
    if (sockets.size > OPS_MAX_CONNECTIONS) evictOne();
  });
  server.on('clientError', (err, socket) => {
    if (socket.writable) {
      const errno = (err as NodeJS.ErrnoException).code;
      const code = errno === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : errno === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${code}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    } else socket.destroy();
  });
  server.maxConnections = OPS_HARD_MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? { host, port: addr.port } : { host, port };
  let closing: Promise<void> | undefined;
  return {
    address: bound,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Bounded: connections still open after a moment are cut.
        const t = setTimeout(() => {
          for (const s of sockets.keys()) s.destroy();
        }, 1_000);
        t.unref();
      });
      return closing;
    },
  };
}
