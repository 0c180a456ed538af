import type { ErrorDetail, RestErrorBody, RestStatusName } from '../venue/errors.js';

/** A parsed request as the simulator's route handlers see it. */
export interface SimRequest {
  method: string;
  /** Decoded pathname, e.g. `/v1/accounts/0xabc/orders`. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or undefined when there was none. Invalid JSON never reaches handlers. */
  body: unknown;
  /** Venue time at arrival (ms). */
  nowMs: number;
  /** Peer address, for per-IP limits. */
  remoteAddress: string;
}

export interface SimResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A body that is not JSON, sent as `text/plain` in place of `body` (the venue's 422 on /info). */
  raw?: string;
  /**
   * The answer's name for the profiles (profiles.ts), when one route serves several kinds of answer
   * (`POST /info clearinghouseState`); default the route's endpoint.
   */
  endpoint?: string;
}

export type RouteHandler = (req: SimRequest, params: Record<string, string>) => SimResponse | Promise<SimResponse>;

export interface Route {
  method: 'GET' | 'POST';
  /** Path pattern with `{name}` segments, e.g. `/v1/accounts/{address}/orders`. */
  pattern: string;
  /** Stable endpoint name, used for per-endpoint rate limits and fault targeting. */
  endpoint: string;
  handler: RouteHandler;
  /**
   * The request's IP weight on the venue host (weights.ts), from its body (parsed leniently: the
   * weight is charged before the body is checked). Only the venue's routes (`/info`, `/exchange`)
   * have one; the service's REST routes are another host.
   */
  weight?: (body: unknown) => number;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/** Path matching with 405 for a known path under the wrong method. */
export class Router {
  private readonly routes: CompiledRoute[] = [];

  add(...routes: Route[]): this {
    for (const r of routes) {
      const names: string[] = [];
      const src = r.pattern.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}|\{(\w+)\}/g, (_m, a, b) => {
        names.push((a ?? b) as string);
        return '([^/]+)';
      });
      this.routes.push({ ...r, regex: new RegExp(`^${src}$`), names });
    }
    return this;
  }

  /** A route for (method, path); `'method_not_allowed'` when only other methods match. */
  match(method: string, path: string): RouteMatch | 'method_not_allowed' | undefined {
    let pathKnown = false;
    for (const r of this.routes) {
      const m = r.regex.exec(path);
      if (!m) continue;
      pathKnown = true;
      if (r.method !== method) continue;
      const params: Record<string, string> = {};
      r.names.forEach((n, i) => {
        params[n] = decodeURIComponent(m[i + 1] ?? '');
      });
      return { route: r, params };
    }
    return pathKnown ? 'method_not_allowed' : undefined;
  }
}

const STATUS_NAME_BY_CODE: Record<number, RestStatusName> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'ALREADY_EXISTS',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** A response carrying the spec's RESTError envelope. */
export function restError(code: number, message: string, details: ErrorDetail[] = []): SimResponse {
  const status = STATUS_NAME_BY_CODE[code] ?? 'INTERNAL';
  const error: RestErrorBody = { code, status, message, details };
  return { status: code, body: { error } };
}

export function badRequest(field: string, reason: string, message?: string): SimResponse {
  return restError(400, message ?? `invalid ${field}: ${reason}`, [{ type: 'field_violation', field, reason }]);
}

export function notFound(what: string): SimResponse {
  return restError(404, `${what} not found`);
}

export function ok(body: unknown): SimResponse {
  return { status: 200, body };
}

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 500;

export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): number | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (v && typeof v === 'object' && Number.isSafeInteger((v as { o?: unknown }).o) && (v as { o: number }).o >= 0) {
      return (v as { o: number }).o;
    }
  } catch {
    // fall through: an unreadable cursor is a 400, not a crash
  }
  return undefined;
}

export interface Page<T> {
  data: T[];
  /** Absent on the last page. */
  next_cursor?: string;
}

/**
 * Opaque cursor pagination over a stable ordering. Returns a 400 response on a bad `limit` or
 * `cursor` (field_violation naming the parameter).
 */
export function paginate<T>(items: readonly T[], query: URLSearchParams): Page<T> | SimResponse {
  const limitText = query.get('limit');
  let limit = PAGE_LIMIT_DEFAULT;
  if (limitText !== null) {
    if (!/^\d+$/.test(limitText)) return badRequest('limit', 'not_an_integer');
    limit = Number(limitText);
    if (limit < 1 || limit > PAGE_LIMIT_MAX) return badRequest('limit', 'out_of_range', `limit must be 1..${PAGE_LIMIT_MAX}`);
  }
  let offset = 0;
  const cursor = query.get('cursor');
  if (cursor !== null && cursor !== '') {
    const o = decodeCursor(cursor);
    if (o === undefined) return badRequest('cursor', 'invalid_cursor');
    offset = o;
  }
  const data = items.slice(offset, offset + limit);
  const page: Page<T> = { data };
  if (offset + limit < items.length) page.next_cursor = encodeCursor(offset + limit);
  return page;
}

export function isSimResponse(v: unknown): v is SimResponse {
  return typeof v === 'object' && v !== null && 'status' in v && 'body' in v && !('data' in v);
}

/** Lower-cased 0x + 40 hex, or undefined. */
export function normalizeAddress(text: string): string | undefined {
  return /^0x[0-9a-fA-F]{40}$/.test(text) ? text.toLowerCase() : undefined;
}
