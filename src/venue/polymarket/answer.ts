/**
 * What a CLOB answer that is not a success means, shared by the heartbeat and the reads. The CLOB's
 * error bodies are `{"error": "<text>", ...}` (the client's http-helpers errorHandling reads them so),
 * but a proxy may answer HTML or nothing: the status decides, the text is only quoted.
 */
import { retryAfterSeconds } from '../decode.js';
import { TransportError, DecodeError } from '../errors.js';
import { parseJson } from '../json.js';
import { ClobError, type ClobReason } from './errors.js';
import { POLYMARKET_FACTS } from './facts.js';

export type TransientCause = 'server' | 'bad_status' | 'not_json' | 'bad_shape' | 'timeout' | 'network' | 'aborted' | 'too_large';

export type ClobFailure =
  | { kind: 'unauthorized'; httpStatus: number; venueMessage?: string }
  | { kind: 'maintenance'; httpStatus: number; venueMessage?: string }
  | { kind: 'rate_limited'; httpStatus: number; retryAfterMs?: number; venueMessage?: string }
  | { kind: 'transient'; cause: TransientCause; httpStatus?: number; venueMessage?: string }
  | { kind: 'refused'; httpStatus: number; venueMessage: string };

export interface ClobAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const lenientUtf8 = new TextDecoder('utf-8');

/** The body as JSON when it is JSON, else undefined (never throws, never quotes the body). */
export function bodyJson(body: Buffer): unknown {
  const parsed = parseJson(lenientUtf8.decode(body));
  return parsed.ok ? parsed.value : undefined;
}

/**
 * The venue's error text: the `error` field of a JSON object (a string, else its JSON), else a short
 * printable-ASCII text body. An HTML page or a binary answer is not quoted.
 */
export function venueMessageOf(body: Buffer): string | undefined {
  const json = bodyJson(body);
  // `error` in the venue's own example; several clients read `error_msg` for the same answer, so a
  // venue (or a proxy) writing that is read too: missing a stale id's 400 would leave the chain stale.
  const key = json !== null && typeof json === 'object' && !Array.isArray(json) ? (['error', 'error_msg'] as const).find((k) => k in json) : undefined;
  if (key !== undefined) {
    const e = (json as Record<string, unknown>)[key];
    if (typeof e === 'string') return e;
    if (e !== null && e !== undefined) return JSON.stringify(e).slice(0, 300);
  }
  if (typeof json === 'string') return json.slice(0, 300);
  if (json !== undefined || body.length === 0 || body.length > 512) return undefined;
  const text = lenientUtf8.decode(body).trim();
  return /^[\x20-\x7e]+$/.test(text) && !text.startsWith('<') ? text.slice(0, 300) : undefined;
}

/** A non-2xx answer, classified. `nowMs` lets an HTTP-date `Retry-After` count. */
export function classifyFailure(res: ClobAnswer, nowMs?: number): ClobFailure {
  const httpStatus = res.status;
  const venueMessage = venueMessageOf(res.body);
  const withText = <T extends object>(o: T): T & { venueMessage?: string } => (venueMessage === undefined ? o : { ...o, venueMessage });
  if (httpStatus === 401 || httpStatus === 403) return withText({ kind: 'unauthorized', httpStatus });
  if (httpStatus === POLYMARKET_FACTS.maintenanceHttpStatus) return withText({ kind: 'maintenance', httpStatus });
  if (httpStatus === 503 && /cancel[\s_-]*only/i.test(venueMessage ?? lenientUtf8.decode(res.body.subarray(0, 4096)))) {
    return withText({ kind: 'maintenance', httpStatus });
  }
  if (httpStatus === 429) {
    const seconds = retryAfterSeconds(res.headers['retry-after'], nowMs);
    return withText(seconds === undefined ? { kind: 'rate_limited', httpStatus } : { kind: 'rate_limited', httpStatus, retryAfterMs: seconds * 1000 });
  }
  if (httpStatus >= 500) return withText({ kind: 'transient', cause: 'server', httpStatus });
  if (httpStatus >= 400) return { kind: 'refused', httpStatus, venueMessage: venueMessage ?? '' };
  // 1xx/3xx (redirects are not followed): not an answer we can read; try again.
  return withText({ kind: 'transient', cause: 'bad_status', httpStatus });
}

/** No answer at all (the transport's errors): always transient, with the transport's reason. */
export function failureFromError(err: unknown): ClobFailure | undefined {
  if (err instanceof TransportError) return { kind: 'transient', cause: err.reason };
  if (err instanceof DecodeError && err.reason === 'too_large') {
    return err.httpStatus === undefined ? { kind: 'transient', cause: 'too_large' } : { kind: 'transient', cause: 'too_large', httpStatus: err.httpStatus };
  }
  return undefined;
}

/** A failure as a typed error, for callers that throw on anything but success. */
export function clobErrorOf(
  endpoint: string,
  failure: { kind: ClobReason; httpStatus?: number; venueMessage?: string; retryAfterMs?: number; cause?: TransientCause },
  detail?: string,
): ClobError {
  const opts: { httpStatus?: number; venueMessage?: string; retryAfterMs?: number } = {};
  if (failure.httpStatus !== undefined) opts.httpStatus = failure.httpStatus;
  if (failure.venueMessage !== undefined && failure.venueMessage !== '') opts.venueMessage = failure.venueMessage;
  if (failure.retryAfterMs !== undefined) opts.retryAfterMs = failure.retryAfterMs;
  const text = detail ?? (failure.kind === 'transient' ? `no usable answer (${failure.cause ?? 'unknown'})` : 'the venue did not accept the request');
  return new ClobError(endpoint, failure.kind, text, opts);
}
