/**
 * Polymarket CLOB failures: a stable `code` per class and a `reason` from a small closed set, as in
 * ../errors.ts (the reasons double as metric labels). Not `VenueError`s: that class's `code` is a
 * closed union of the first venue's codes. Messages carry our words and the venue's error text
 * (truncated), never credentials, signatures or request bodies.
 */
import { truncate } from '../errors.js';

/** Why a CLOB call failed (the heartbeat's outcomes, less `accepted`, plus a read's bad shape). */
export const CLOB_REASONS = [
  'stale', // heartbeat only: 400 Invalid Heartbeat ID
  'unauthorized', // 401, 403
  'maintenance', // 425, or 503 saying cancel-only
  'rate_limited', // 429
  'transient', // 5xx, no answer, an unreadable 2xx
  'refused', // any other 4xx
] as const;
export type ClobReason = (typeof CLOB_REASONS)[number];

export class ClobError extends Error {
  readonly code = 'POLYMARKET_CLOB_ERROR' as const;
  readonly reason: ClobReason;
  /** A stable template, e.g. `GET /data/orders`. */
  readonly endpoint: string;
  readonly httpStatus: number | undefined;
  /** The venue's error text, verbatim, when it gave one. */
  readonly venueMessage: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    endpoint: string,
    reason: ClobReason,
    detail: string,
    opts: { httpStatus?: number; venueMessage?: string; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    const status = opts.httpStatus === undefined ? '' : ` (HTTP ${opts.httpStatus})`;
    const venue = opts.venueMessage === undefined ? '' : `: ${truncate(opts.venueMessage, 300)}`;
    super(`${endpoint}: ${reason}${status}: ${detail}${venue}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ClobError';
    this.endpoint = endpoint;
    this.reason = reason;
    this.httpStatus = opts.httpStatus;
    this.venueMessage = opts.venueMessage;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/**
 * Bad input from our side (config, caller): nothing was sent. Says what is wrong, never which
 * character of a secret.
 */
export const REQUEST_REASONS = ['bad_address', 'bad_credentials', 'bad_secret', 'bad_timestamp', 'bad_request', 'bad_url'] as const;
export type RequestReason = (typeof REQUEST_REASONS)[number];

export class ClobRequestError extends Error {
  readonly code = 'POLYMARKET_REQUEST_ERROR' as const;
  readonly reason: RequestReason;

  constructor(reason: RequestReason, message: string) {
    super(message);
    this.name = 'ClobRequestError';
    this.reason = reason;
  }
}
