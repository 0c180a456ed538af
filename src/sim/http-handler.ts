/**
 * The simulator's HTTP logic, apart from any socket: one request in, one answer (or a broken
 * connection) out. Two carriers share it: `server.ts` (node:http on loopback, for the tests that are
 * about the wire and for child processes) and `in-process.ts` (an undici Dispatcher that calls it
 * directly, for the keeper's timelines in virtual time). Both see the same routes, profiles, faults
 * and rate limits: only the carrier differs.
 *
 * Per request, in this order: parse the URL -> read the body (capped) -> admin? -> a mounted venue
 * (`SimMount`: the Polymarket CLOB under `/clob`, which applies its own rules from there) -> venue-only
 * (a `/v1` request answers 404 or 503 when the service is not served, services.ts) -> route
 * (404/405) -> faults (latency, then a forced answer or a reset before the handler) -> rate limits
 * (429; a REST POST and every `/exchange` request count as a signed action, a GET and `/info` as a
 * read; the venue host's routes also carry their IP weight, weights.ts) ->
 * Content-Type and JSON checks (400) -> handler -> write (possibly truncated or cut off by a fault).
 * A request that a fault answers never reaches the rate limiter: it models a failure in front of the
 * venue (a proxy, the network), not traffic the venue admitted.
 */
import { STATUS_CODES } from 'node:http';
import { sleep, type Clock } from '../time/clock.js';
import type { BodyFault, FaultControl, FaultPath, ResetFault, StatusFault } from './faults.js';
import { badRequest, notFound, restError, Router, type Route, type SimRequest, type SimResponse } from './http-util.js';
import type { RateLimiter } from './rate-limit.js';
import { infoRefusal } from './info-routes.js';
import type { ServiceSwitch } from './services.js';
import { isLoopbackAddress } from './admin.js';
import { VENUE_TEXTS } from './venue/texts.js';
import type { SimLogger } from './ws-server.js';

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** Past this much upload we stop draining and drop the connection. */
export const HARD_BODY_LIMIT_BYTES = 1024 * 1024;

export interface SimHandlerOptions {
  /** The venue clock (injected clock + offset): `Date` headers, `SimRequest.nowMs`, fault latency. */
  clock: Clock;
  /** REST and exchange routes. */
  routes: Route[];
  faults: FaultControl;
  rateLimiter: RateLimiter;
  /** The admin handler; undefined disables `/_sim/` (it answers 404 like any unknown path). */
  admin?: ((req: SimRequest) => Promise<SimResponse>) | undefined;
  logger?: SimLogger | undefined;
  maxBodyBytes?: number;
  /** Serve the service (`/v1`) or only the venue host; default both. */
  services?: ServiceSwitch | undefined;
  /** Rewrites a route's JSON answer before it is sent (the venue profile, see profiles.ts). */
  transform?: ((endpoint: string, r: SimResponse) => SimResponse) | undefined;
  /** Other venues served under a path prefix of the same host (the Polymarket CLOB under `/clob`). */
  mounts?: SimMount[] | undefined;
}

/**
 * A venue mounted under a path prefix, as behind a reverse proxy that strips it: it gets the path
 * without the prefix and the raw body (its signatures cover both), and answers with its own
 * rules, limits and formats (no route table, fault plan, rate limiter or profile of this file's
 * applies). Its admin routes live under `adminPrefix` behind the same loopback gate as `/_sim/`.
 */
export interface SimMount {
  /** `/clob`: requests to `/clob` and `/clob/...`. */
  prefix: string;
  handle(req: SimMountRequest): Promise<SimResponse>;
  /** `/_sim/clob`: admin requests under it go to `admin` (body parsed as JSON, as for `/_sim/`). */
  adminPrefix?: string;
  admin?(req: SimRequest): SimResponse | Promise<SimResponse>;
  /**
   * Request faults of the mounted venue (latency, forced status, reset, broken body), planned by
   * `endpoint(method, path)` and answered in the venue's own error format by `answer`.
   */
  faults?: {
    faults: FaultControl;
    endpoint(method: string, path: string): string;
    answer(f: StatusFault): SimResponse;
  };
}

export interface SimMountRequest {
  method: string;
  /** The path after the prefix, undecoded (`/order`, `/` for the prefix itself). */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent (UTF-8), '' when none. */
  body: string;
  remoteAddress: string;
}

function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

export type BodyRead =
  | { kind: 'ok'; bytes: Buffer }
  /** Over the cap but drained: answer 400 and keep the connection. */
  | { kind: 'too_large' }
  /** Over the hard limit: answer 400 and close the connection (we stopped reading it). */
  | { kind: 'abandon' }
  /** The client went away mid-upload: nobody to answer. */
  | { kind: 'aborted' };

/**
 * One request as a carrier hands it over, and the ways the carrier can answer it. The handler calls
 * exactly one of `respond`, `respondThenReset` or `reset`, or none when the client has gone.
 */
export interface SimExchange {
  method: string;
  /** The request target (`/v1/...?x=1`). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  remoteAddress: string;
  /** Reads the body (capped at `cap` bytes); called at most once, after the URL parsed. */
  readBody(cap: number): Promise<BodyRead>;
  /** The client went away (or the connection is already destroyed): nobody to answer. */
  gone(): boolean;
  /** Status, headers and the whole body. */
  respond(status: number, headers: Record<string, string>, body: Buffer): void;
  /** Status and headers (which promise the whole body), `partial` of it, then the connection drops. */
  respondThenReset(status: number, headers: Record<string, string>, partial: Buffer): void;
  /** The connection drops with no answer. */
  reset(): void;
  /**
   * Called around a wait on the venue clock (a latency fault): `true` before, `false` after. Under
   * a FakeClock the request cannot progress until virtual time moves; the in-process carrier tells
   * its driver so (in-process.ts).
   */
  clockWait?(waiting: boolean): void;
}

export interface SimHttpHandler {
  handle(x: SimExchange): Promise<void>;
  /** Answers the request with a 500 envelope (the carrier's last resort when `handle` threw). */
  fail(x: SimExchange): void;
  /** Aborts the latency waits in progress (they end as a reset): under a FakeClock they would wait forever. */
  stop(): void;
}

/** A body that arrived whole (the in-process carrier), judged as `readBody` judges one off a socket. */
export function judgeBody(bytes: Buffer, cap: number): BodyRead {
  if (bytes.length > HARD_BODY_LIMIT_BYTES) return { kind: 'abandon' };
  return bytes.length > cap ? { kind: 'too_large' } : { kind: 'ok', bytes };
}

/** `::ffff:127.0.0.1` -> `127.0.0.1`, so one client has one rate-limit and per-IP identity. */
export function clientIp(remote: string | undefined): string {
  if (!remote) return 'unknown';
  return remote.toLowerCase().startsWith('::ffff:') ? remote.slice(7) : remote;
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
      return restError(f.status, f.message ?? STATUS_CODES[f.status] ?? 'error');
  }
}

/** What a proxy in front of the venue serves when the upstream fails: HTML, not JSON. */
function proxyPage(status: number): string {
  const text = `${status} ${STATUS_CODES[status] ?? 'Error'}`;
  return `<html>\r\n<head><title>${text}</title></head>\r\n<body>\r\n<center><h1>${text}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

function safeDecode(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

export function createSimHttpHandler(opts: SimHandlerOptions): SimHttpHandler {
  const { clock, faults, rateLimiter, admin, logger } = opts;
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const router = new Router().add(...opts.routes);
  // Aborts latency sleeps on close: under a FakeClock they would otherwise wait forever.
  const stopping = new AbortController();

  const log = (line: Record<string, unknown>): void => logger?.({ component: 'sim.http', ...line });
  // The HTTP date has whole seconds: made once a second, not per answer.
  let dateSecond = Number.NaN;
  let dateText = '';
  const dateHeader = (): string => {
    const second = Math.floor(clock.nowMs() / 1000);
    if (second !== dateSecond) {
      dateSecond = second;
      dateText = new Date(second * 1000).toUTCString();
    }
    return dateText;
  };

  /** Writes a JSON answer; `breakWith` truncates it or cuts the connection mid-body. */
  const send = (x: SimExchange, r: SimResponse, breakWith?: ResetFault | BodyFault, closeAfter = false): void => {
    if (x.gone()) return;
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
    if (breakWith?.kind === 'reset') {
      // Headers promise the whole body; part of it arrives, then the connection ends.
      const cut = Math.min(bytes.length, breakWith.afterBytes ?? Math.floor(bytes.length / 2));
      x.respondThenReset(status, headers, bytes.subarray(0, cut));
      return;
    }
    x.respond(status, headers, bytes);
  };

  const sendHtml = (x: SimExchange, status: number, dateShiftMs = 0): void => {
    if (x.gone()) return;
    const bytes = Buffer.from(proxyPage(status), 'utf8');
    const date = new Date(clock.nowMs() + dateShiftMs).toUTCString();
    x.respond(status, { 'Content-Type': 'text/html', 'Content-Length': String(bytes.length), Date: date }, bytes);
  };

  const parseJsonBody = (x: SimExchange, bytes: Buffer): { ok: true; body: unknown } | { ok: false; response: SimResponse } => {
    if (!isJsonContentType(x.headers['content-type'])) {
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

  /** A latency fault: waits `ms` on the venue clock; false when the client went or we are stopping. */
  const hold = async (x: SimExchange, ms: number): Promise<boolean> => {
    if (ms <= 0) return true;
    x.clockWait?.(true);
    try {
      await sleep(clock, ms, stopping.signal);
    } catch {
      x.reset(); // stopping
      return false;
    } finally {
      x.clockWait?.(false);
    }
    return !x.gone(); // the client may have given up while we "worked"
  };

  const handle = async (x: SimExchange): Promise<void> => {
    const method = x.method;
    const remoteAddress = x.remoteAddress;
    let url: URL;
    try {
      url = new URL(x.url, 'http://sim.invalid');
    } catch {
      send(x, badRequest('url', 'invalid_url', 'the request URL is malformed'));
      return;
    }
    const rawPath = url.pathname;
    const body = await x.readBody(maxBody);
    if (body.kind === 'aborted') return;
    if (body.kind === 'abandon') {
      send(x, badRequest('body', 'too_large', `the body exceeds ${maxBody} bytes`), undefined, true);
      return;
    }
    const path = safeDecode(rawPath);
    if (path === undefined) {
      send(x, badRequest('path', 'invalid_encoding', 'the path has invalid percent-encoding'));
      return;
    }
    const tooLarge = body.kind === 'too_large' ? badRequest('body', 'too_large', `the body exceeds ${maxBody} bytes`) : undefined;
    const bytes = body.kind === 'ok' ? body.bytes : Buffer.alloc(0);
    const base = { method, path, query: url.searchParams, headers: x.headers, remoteAddress };

    if (admin && (path === '/_sim' || path.startsWith('/_sim/'))) {
      // A mounted venue's admin routes (`/_sim/clob/...`) behind the same loopback gate as ours.
      const mounted = opts.mounts?.find((m) => m.adminPrefix && underPrefix(path, m.adminPrefix))?.admin;
      if (mounted && !isLoopbackAddress(remoteAddress)) return send(x, restError(403, 'the admin route answers loopback peers only'));
      let parsed: unknown;
      if (method === 'POST') {
        if (tooLarge) return send(x, tooLarge);
        const p = parseJsonBody(x, bytes);
        if (!p.ok) return send(x, p.response);
        parsed = p.body;
      }
      send(x, await (mounted ?? admin)({ ...base, body: parsed, nowMs: clock.nowMs() }));
      return;
    }
    const mount = opts.mounts?.find((m) => underPrefix(rawPath, m.prefix));
    if (mount) {
      if (tooLarge) return send(x, tooLarge);
      const subPath = rawPath.slice(mount.prefix.length) || '/';
      // The mount's own faults (a proxy or network in front of that venue), targeted by its endpoint names.
      const mountPlan = mount.faults?.faults.plan(mount.faults.endpoint(method, subPath), 'rest');
      if (!(await hold(x, mountPlan?.latencyMs ?? 0))) return;
      const mountAction = mountPlan?.action;
      if (mountAction?.kind === 'status') return send(x, mount.faults?.answer(mountAction) ?? statusFaultResponse(mountAction));
      if (mountAction?.kind === 'body' && mountAction.mode === 'html') return sendHtml(x, mountAction.status ?? 502, mountAction.dateShiftMs);
      if (mountAction?.kind === 'reset' && mountAction.phase === 'before_handler') return x.reset();
      let r: SimResponse;
      try {
        r = await mount.handle({
          method,
          path: subPath,
          query: url.searchParams,
          headers: x.headers,
          body: bytes.toString('utf8'),
          remoteAddress,
        });
      } catch (err) {
        log({ msg: 'mount failed', prefix: mount.prefix, err: err instanceof Error ? err.message : String(err) });
        r = { status: 500, body: { error: 'Internal Server Error' } };
      }
      send(x, r, mountAction?.kind === 'reset' || mountAction?.kind === 'body' ? mountAction : undefined);
      return;
    }
    if (path === '/ws') {
      send(x, restError(400, 'this path only accepts a WebSocket upgrade'));
      return;
    }

    const family: FaultPath = rawPath === '/exchange' ? 'exchange' : rawPath === '/info' ? 'info' : 'rest';
    const refusal = family === 'rest' ? opts.services?.restRefusal() : undefined;
    if (refusal === 404) return send(x, notFound(`path ${rawPath} (this host serves only the venue)`));
    if (refusal === 503) return send(x, statusFaultResponse({ kind: 'status', status: 503, message: 'the service is not served by this host' }));

    let match: ReturnType<Router['match']>;
    try {
      match = router.match(method, rawPath);
    } catch {
      // decodeURIComponent of a path parameter with broken percent-encoding
      send(x, badRequest('path', 'invalid_encoding', 'the path has invalid percent-encoding'));
      return;
    }
    if (match === undefined) return send(x, notFound(`path ${rawPath}`));
    if (match === 'method_not_allowed') return send(x, restError(405, `method ${method} is not allowed on ${rawPath}`));
    const { route, params } = match;

    const plan = faults.plan(route.endpoint, family);
    if (!(await hold(x, plan.latencyMs))) return;
    const action = plan.action;
    const shape = (r: SimResponse): SimResponse => (opts.transform ? opts.transform(r.endpoint ?? route.endpoint, r) : r);
    if (action?.kind === 'status') return send(x, shape(statusFaultResponse(action)));
    if (action?.kind === 'body' && action.mode === 'html') return sendHtml(x, action.status ?? 502, action.dateShiftMs);
    if (action?.kind === 'reset' && action.phase === 'before_handler') {
      x.reset();
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
      return send(x, shape({ ...r, headers: { 'Retry-After': String(decision.detail.retry_after_seconds) } }));
    }

    let parsedBody: unknown;
    if (route.method === 'POST') {
      if (tooLarge) return send(x, tooLarge);
      const p = parseJsonBody(x, bytes);
      // The venue answers a body it cannot read with its own 422, not the service's envelope.
      if (!p.ok) return send(x, family === 'rest' ? p.response : infoRefusal());
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
    send(x, shape(response), breaking);
  };

  return {
    handle,
    fail: (x) => send(x, restError(500, 'the server could not complete the request')),
    stop: () => stopping.abort(),
  };
}
