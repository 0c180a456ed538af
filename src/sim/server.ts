/**
 * The simulator's HTTP server: one node:http server on loopback carrying the REST routes (`/v1`),
 * the exchange endpoint (`POST /exchange`), the info endpoint (`POST /info`), the WebSocket upgrade
 * (`/ws`) and the admin API (`/_sim/`). Everything stateful is injected (routes, venue clock, faults, rate limiter, WebSocket
 * hub), so the server can be tested with stubs and composed by `simulator.ts`.
 *
 * Per request, in this order: parse the URL -> read the body (capped) -> admin? -> venue-only
 * (a `/v1` request answers 404 or 503 when the service is not served, services.ts) -> route
 * (404/405) -> faults (latency, then a forced answer or a reset before the handler) -> rate limits
 * (429; a REST POST and every `/exchange` request count as a signed action, a GET and `/info` as a
 * read; the venue host's routes also carry their IP weight, weights.ts) ->
 * Content-Type and JSON checks (400) -> handler -> write (possibly truncated or cut off by a fault).
 * A request that a fault answers never reaches the rate limiter: it models a failure in front of the
 * venue (a proxy, the network), not traffic the venue admitted.
 *
 * Hostile input never crashes it: a malformed URL, percent-encoding or JSON is a 400 envelope,
 * oversized bodies are refused, oversized headers get node's 431 (answered by our `clientError`
 * handler), slow or aborted uploads are dropped, and a handler that throws is a 500.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { sleep, systemClock, type Clock } from '../sched/clock.js';
import type { BodyFault, FaultControl, FaultPath, ResetFault, StatusFault } from './faults.js';
import { badRequest, notFound, restError, Router, type Route, type SimRequest, type SimResponse } from './http-util.js';
import type { RateLimiter } from './rate-limit.js';
import { infoRefusal } from './info-routes.js';
import type { ServiceSwitch } from './services.js';
import { VENUE_TEXTS } from './venue/texts.js';
import type { SimLogger, WsHub } from './ws-server.js';

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** Past this much upload we stop draining and drop the connection. */
const HARD_BODY_LIMIT_BYTES = 1024 * 1024;
/** How long `close()` waits for sockets to finish before it gives up waiting (it has destroyed them). */
const CLOSE_BOUND_MS = 2_000;

export interface SimServerOptions {
  host: string;
  /** 0 = ephemeral. */
  port: number;
  /** The venue clock (injected clock + offset): `Date` headers, `SimRequest.nowMs`, fault latency. */
  clock: Clock;
  /** REST and exchange routes. */
  routes: Route[];
  faults: FaultControl;
  rateLimiter: RateLimiter;
  ws: WsHub;
  /** The admin handler; undefined disables `/_sim/` (it answers 404 like any unknown path). */
  admin?: ((req: SimRequest) => Promise<SimResponse>) | undefined;
  logger?: SimLogger | undefined;
  maxBodyBytes?: number;
  /** Serve the service (`/v1`) or only the venue host; default both. */
  services?: ServiceSwitch | undefined;
  /** Rewrites a route's JSON answer before it is sent (the venue profile, see profiles.ts). */
  transform?: ((endpoint: string, r: SimResponse) => SimResponse) | undefined;
}

export interface SimServer {
  readonly host: string;
  readonly port: number;
  readonly httpServer: http.Server;
  /** Stops accepting, ends the WebSocket hub, destroys every socket. Bounded and idempotent. */
  close(): Promise<void>;
}

type BodyRead =
  | { kind: 'ok'; bytes: Buffer }
  /** Over the cap but drained: answer 400 and keep the connection. */
  | { kind: 'too_large' }
  /** Over the hard limit: answer 400 and close the connection (we stopped reading it). */
  | { kind: 'abandon' }
  /** The client went away mid-upload: nobody to answer. */
  | { kind: 'aborted' };

/** `::ffff:127.0.0.1` -> `127.0.0.1`, so one client has one rate-limit and per-IP identity. */
export function clientIp(remote: string | undefined): string {
  if (!remote) return 'unknown';
  return remote.toLowerCase().startsWith('::ffff:') ? remote.slice(7) : remote;
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

function isJsonContentType(v: string | string[] | undefined): boolean {
  const t = Array.isArray(v) ? v[0] : v;
  return typeof t === 'string' && t.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/** Answer of a forced-status fault, in the spec's envelope. */
export function statusFaultResponse(f: StatusFault): SimResponse {
  switch (f.status) {
    case 429: {
      const scope = f.scope ?? 'global';
      const retry = f.retryAfterSeconds ?? 1;
      const r = restError(429, f.message ?? 'rate limit exceeded', [
        {
          type: 'rate_limit',
          limit: f.limit ?? 1,
          reason: f.reason ?? `${scope}_quota`,
          retry_after_seconds: retry,
          scope,
          window_seconds: f.windowSeconds ?? 60,
        },
      ]);
      return { ...r, headers: { 'Retry-After': String(retry) } };
    }
    case 503:
      return restError(503, f.message ?? 'a required dependency is temporarily unavailable', [
        { type: 'dependency', reason: f.reason ?? 'upstream_unavailable' },
      ]);
    case 500:
      return restError(500, f.message ?? 'the server could not complete the request');
    default:
      return restError(f.status, f.message ?? http.STATUS_CODES[f.status] ?? 'error');
  }
}

/** What a proxy in front of the venue serves when the upstream fails: HTML, not JSON. */
function proxyPage(status: number): string {
  const text = `${status} ${http.STATUS_CODES[status] ?? 'Error'}`;
  return `<html>\r\n<head><title>${text}</title></head>\r\n<body>\r\n<center><h1>${text}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

function safeDecode(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

export async function listenSimServer(opts: SimServerOptions): Promise<SimServer> {
  const { clock, faults, rateLimiter, ws, admin, logger } = opts;
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const router = new Router().add(...opts.routes);
  const sockets = new Set<Socket>();
  // Aborts latency sleeps on close: under a FakeClock they would otherwise wait forever.
  const stopping = new AbortController();

  const log = (line: Record<string, unknown>): void => logger?.({ component: 'sim.http', ...line });
  const dateHeader = (): string => new Date(clock.nowMs()).toUTCString();

  /** Writes a JSON answer; `breakWith` truncates it or cuts the connection mid-body. */
  const send = (req: IncomingMessage, res: ServerResponse, r: SimResponse, breakWith?: ResetFault | BodyFault, closeAfter = false): void => {
    if (res.headersSent || res.destroyed || req.socket.destroyed) return;
    let status = r.status;
    let bytes = r.raw !== undefined ? Buffer.from(r.raw, 'utf8') : Buffer.from(JSON.stringify(r.body ?? null), 'utf8');
    const headers: Record<string, string> = {
      'Content-Type': r.raw !== undefined ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
      // Node would stamp its own (system) time; the venue's clock is the one clients estimate skew from.
      Date: dateHeader(),
      ...r.headers,
    };
    if (closeAfter) headers.Connection = 'close';
    if (breakWith?.kind === 'body' && breakWith.mode === 'truncated') {
      status = breakWith.status ?? status;
      bytes = bytes.subarray(0, Math.floor(bytes.length / 2));
    }
    headers['Content-Length'] = String(bytes.length);
    res.writeHead(status, headers);
    if (breakWith?.kind === 'reset') {
      // Headers promise the whole body; part of it arrives, then the connection ends.
      const cut = Math.min(bytes.length, breakWith.afterBytes ?? Math.floor(bytes.length / 2));
      res.flushHeaders();
      const kill = (): void => {
        req.socket.destroy();
      };
      if (cut > 0) res.write(bytes.subarray(0, cut), kill);
      else req.socket.write('', kill);
      return;
    }
    res.end(bytes);
  };

  const sendHtml = (req: IncomingMessage, res: ServerResponse, status: number, dateShiftMs = 0): void => {
    if (res.headersSent || res.destroyed || req.socket.destroyed) return;
    const bytes = Buffer.from(proxyPage(status), 'utf8');
    const date = new Date(clock.nowMs() + dateShiftMs).toUTCString();
    res.writeHead(status, { 'Content-Type': 'text/html', 'Content-Length': String(bytes.length), Date: date });
    res.end(bytes);
  };

  const parseJsonBody = (req: IncomingMessage, bytes: Buffer): { ok: true; body: unknown } | { ok: false; response: SimResponse } => {
    if (!isJsonContentType(req.headers['content-type'])) {
      return {
        ok: false,
        response: restError(400, 'Content-Type must be application/json', [
          { type: 'field_violation', field: 'Content-Type', reason: 'unsupported_media_type' },
        ]),
      };
    }
    try {
      return { ok: true, body: JSON.parse(bytes.toString('utf8')) as unknown };
    } catch {
      return { ok: false, response: badRequest('body', 'invalid_json', 'the body is not valid JSON') };
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const remoteAddress = req.socket.remoteAddress ?? '';
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://sim.invalid');
    } catch {
      send(req, res, badRequest('url', 'invalid_url', 'the request URL is malformed'));
      return;
    }
    const rawPath = url.pathname;
    const body = await readBody(req, maxBody);
    if (body.kind === 'aborted') return;
    if (body.kind === 'abandon') {
      send(req, res, badRequest('body', 'too_large', `the body exceeds ${maxBody} bytes`), undefined, true);
      return;
    }
    const path = safeDecode(rawPath);
    if (path === undefined) {
      send(req, res, badRequest('path', 'invalid_encoding', 'the path has invalid percent-encoding'));
      return;
    }
    const tooLarge = body.kind === 'too_large' ? badRequest('body', 'too_large', `the body exceeds ${maxBody} bytes`) : undefined;
    const bytes = body.kind === 'ok' ? body.bytes : Buffer.alloc(0);
    const base = { method, path, query: url.searchParams, headers: req.headers, remoteAddress };

    if (admin && (path === '/_sim' || path.startsWith('/_sim/'))) {
      let parsed: unknown;
      if (method === 'POST') {
        if (tooLarge) return send(req, res, tooLarge);
        const p = parseJsonBody(req, bytes);
        if (!p.ok) return send(req, res, p.response);
        parsed = p.body;
      }
      send(req, res, await admin({ ...base, body: parsed, nowMs: clock.nowMs() }));
      return;
    }
    if (path === '/ws') {
      send(req, res, restError(400, 'this path only accepts a WebSocket upgrade'));
      return;
    }

    const family: FaultPath = rawPath === '/exchange' ? 'exchange' : rawPath === '/info' ? 'info' : 'rest';
    const refusal = family === 'rest' ? opts.services?.restRefusal() : undefined;
    if (refusal === 404) return send(req, res, notFound(`path ${rawPath} (this host serves only the venue)`));
    if (refusal === 503) return send(req, res, statusFaultResponse({ kind: 'status', status: 503, message: 'the service is not served by this host' }));

    let match: ReturnType<Router['match']>;
    try {
      match = router.match(method, rawPath);
    } catch {
      // decodeURIComponent of a path parameter with broken percent-encoding
      send(req, res, badRequest('path', 'invalid_encoding', 'the path has invalid percent-encoding'));
      return;
    }
    if (match === undefined) return send(req, res, notFound(`path ${rawPath}`));
    if (match === 'method_not_allowed') return send(req, res, restError(405, `method ${method} is not allowed on ${rawPath}`));
    const { route, params } = match;

    const plan = faults.plan(route.endpoint, family);
    if (plan.latencyMs > 0) {
      try {
        await sleep(clock, plan.latencyMs, stopping.signal);
      } catch {
        req.socket.destroy(); // stopping
        return;
      }
      if (req.socket.destroyed) return; // the client gave up while we "worked"
    }
    const action = plan.action;
    const shape = (r: SimResponse): SimResponse => (opts.transform ? opts.transform(r.endpoint ?? route.endpoint, r) : r);
    if (action?.kind === 'status') return send(req, res, shape(statusFaultResponse(action)));
    if (action?.kind === 'body' && action.mode === 'html') return sendHtml(req, res, action.status ?? 502, action.dateShiftMs);
    if (action?.kind === 'reset' && action.phase === 'before_handler') {
      req.socket.destroy();
      return;
    }

    // Every POST the venue serves is a signed action (REST schedule-cancel, every /exchange action);
    // every GET is an unsigned read. The limiter needs to know when its global window counts signed
    // actions only (rate-limit.ts, `globalCounts`).
    // The venue host's requests also carry their IP weight, read from the body before it is checked
    // (the venue charges a request it then refuses; one that does not parse is charged the default).
    let weight: number | undefined;
    if (route.weight) {
      let lenient: unknown;
      try {
        lenient = bytes.length > 0 ? (JSON.parse(bytes.toString('utf8')) as unknown) : undefined;
      } catch {
        lenient = undefined;
      }
      weight = route.weight(lenient);
    }
    const cls = route.method === 'POST' && family !== 'info' ? 'signed' : 'read';
    const decision = rateLimiter.check(clientIp(remoteAddress), route.endpoint, cls, weight);
    if (!decision.ok) {
      const byWeight = decision.detail.scope === 'global' && rateLimiter.globalCounting() === 'weight';
      const message = byWeight
        ? VENUE_TEXTS.ipWeightExceeded(decision.detail.limit, decision.detail.window_seconds)
        : `rate limit exceeded (${decision.detail.scope} quota)`;
      const r = restError(429, message, [decision.detail]);
      return send(req, res, shape({ ...r, headers: { 'Retry-After': String(decision.detail.retry_after_seconds) } }));
    }

    let parsedBody: unknown;
    if (route.method === 'POST') {
      if (tooLarge) return send(req, res, tooLarge);
      const p = parseJsonBody(req, bytes);
      // The venue answers a body it cannot read with its own 422, not the service's envelope.
      if (!p.ok) return send(req, res, family === 'info' ? infoRefusal() : p.response);
      parsedBody = p.body;
    }

    let response: SimResponse;
    try {
      response = await route.handler({ ...base, body: parsedBody, nowMs: clock.nowMs() }, params);
    } catch (err) {
      log({ msg: 'handler failed', endpoint: route.endpoint, err: err instanceof Error ? err.message : String(err) });
      response = restError(500, 'the server could not complete the request');
    }
    const breaking = action?.kind === 'reset' || action?.kind === 'body' ? action : undefined;
    send(req, res, shape(response), breaking);
  };

  const server = http.createServer((req, res) => {
    // Real elapsed time for the log line (a measurement, not venue time).
    const started = performance.now();
    res.on('finish', () => log({ msg: 'request', method: req.method, url: req.url, status: res.statusCode, ms: Math.round(performance.now() - started) }));
    handle(req, res).catch((err: unknown) => {
      log({ msg: 'request failed', err: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent && !req.socket.destroyed) send(req, res, restError(500, 'the server could not complete the request'));
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
