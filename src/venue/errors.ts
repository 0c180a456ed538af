/**
 * Every failure talking to the venue is a `VenueError` with a stable `code` (one per class) and a
 * `reason` from a small closed set. Reasons double as metric labels, so the sets are exported as
 * arrays to pre-create label values.
 *
 * Messages never contain key material, signatures or request bodies: they are built from the
 * venue's answer (already safe to show, per the spec) and our own words.
 */

/** The spec's RESTError status names (part 7). */
export const REST_STATUS_NAMES = [
  'INVALID_ARGUMENT',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'ALREADY_EXISTS',
  'RESOURCE_EXHAUSTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
] as const;
export type RestStatusName = (typeof REST_STATUS_NAMES)[number];

export interface FieldViolationDetail {
  type: 'field_violation';
  field: string;
  reason: string;
}
export interface RateLimitDetail {
  type: 'rate_limit';
  limit: number;
  reason: string;
  retry_after_seconds: number;
  scope: 'endpoint' | 'global';
  window_seconds: number;
}
export interface DependencyDetail {
  type: 'dependency';
  reason: string;
}
export type ErrorDetail = FieldViolationDetail | RateLimitDetail | DependencyDetail;

export interface RestErrorBody {
  code: number;
  status: RestStatusName;
  message: string;
  details: ErrorDetail[];
}

/** Why a REST call failed, by HTTP status family. */
export const REST_REASONS = [
  'invalid', // 400
  'not_found', // 404
  'method_not_allowed', // 405
  'rate_limited', // 429
  'server', // 500 and other 5xx without a better name
  'unavailable', // 503
  'other', // any other status carrying a valid envelope
] as const;
export type RestReason = (typeof REST_REASONS)[number];

/**
 * The statuses that refuse what we sent, not the route: a switch does not fall back on them
 * (account-runner.ts toFailure) and a failing REST route is not inferred from them (routes.ts).
 */
export function refusesRequest(httpStatus: number): boolean {
  return httpStatus === 400 || httpStatus === 404 || httpStatus === 405;
}

/** Classes of HTTP-200 `{"status":"err"}` answers (VENUE.md, "Error strings worth classifying"). */
export const ACTION_REASONS = [
  'ineligible',
  'unknown_signer',
  'unfunded',
  'invalid_nonce',
  'address_budget',
  'pending_agent_removal',
  'expired',
  'trigger_cap',
  'other',
] as const;
export type ActionReason = (typeof ACTION_REASONS)[number];

export const TRANSPORT_REASONS = ['timeout', 'network', 'aborted'] as const;
export type TransportReason = (typeof TRANSPORT_REASONS)[number];

export const DECODE_REASONS = [
  'not_json', // body is not JSON (an HTML page from a proxy, truncated JSON)
  'too_large', // body exceeded the size cap
  'bad_shape', // JSON, but not what the spec says
  'bad_status', // a non-2xx answer without a valid RESTError envelope
] as const;
export type DecodeReason = (typeof DECODE_REASONS)[number];

export type VenueErrorCode =
  | 'VENUE_REST_ERROR'
  | 'VENUE_ACTION_ERROR'
  | 'VENUE_TRANSPORT_ERROR'
  | 'VENUE_DECODE_ERROR';

export abstract class VenueError extends Error {
  abstract readonly code: VenueErrorCode;
  abstract readonly reason: string;
  /** Which call failed, e.g. `GET /v1/accounts/{address}` or `exchange:approveAgent`. */
  readonly endpoint: string;

  protected constructor(endpoint: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.endpoint = endpoint;
    this.name = new.target.name;
  }
}

/** A non-2xx answer carrying the spec's RESTError envelope. */
export class RestError extends VenueError {
  readonly code = 'VENUE_REST_ERROR' as const;
  readonly reason: RestReason;
  readonly httpStatus: number;
  readonly body: RestErrorBody;
  /**
   * False when the envelope was not the venue's (a 429 from a proxy, completed from `Retry-After`):
   * such an answer still holds its scope, but tells us nothing about the venue's clock.
   */
  readonly venueWrote: boolean;

  constructor(endpoint: string, httpStatus: number, body: RestErrorBody, opts: { venueWrote?: boolean } = {}) {
    super(endpoint, `${endpoint}: ${httpStatus} ${body.status}: ${body.message}`);
    this.httpStatus = httpStatus;
    this.body = body;
    this.reason = restReasonFor(httpStatus);
    this.venueWrote = opts.venueWrote ?? true;
  }

  get rateLimit(): RateLimitDetail | undefined {
    return this.body.details.find((d): d is RateLimitDetail => d.type === 'rate_limit');
  }

  get dependency(): DependencyDetail | undefined {
    return this.body.details.find((d): d is DependencyDetail => d.type === 'dependency');
  }

  get fieldViolations(): FieldViolationDetail[] {
    return this.body.details.filter((d): d is FieldViolationDetail => d.type === 'field_violation');
  }
}

export function restReasonFor(httpStatus: number): RestReason {
  switch (httpStatus) {
    case 400:
      return 'invalid';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return httpStatus >= 500 ? 'server' : 'other';
  }
}

/** HTTP 200 with `{"status":"err","response":"<text>"}`: the venue refused the action. */
export class ActionError extends VenueError {
  readonly code = 'VENUE_ACTION_ERROR' as const;
  readonly reason: ActionReason;
  /** The venue's text, verbatim. */
  readonly venueMessage: string;

  constructor(endpoint: string, reason: ActionReason, venueMessage: string) {
    super(endpoint, `${endpoint}: venue refused the action (${reason}): ${truncate(venueMessage, 300)}`);
    this.reason = reason;
    this.venueMessage = venueMessage;
  }
}

/** No usable answer: timeout, connection refused or reset, or the caller aborted. */
export class TransportError extends VenueError {
  readonly code = 'VENUE_TRANSPORT_ERROR' as const;
  readonly reason: TransportReason;

  constructor(endpoint: string, reason: TransportReason, message: string, options?: { cause?: unknown }) {
    super(endpoint, `${endpoint}: ${reason}: ${message}`, options);
    this.reason = reason;
  }
}

/** An answer arrived but is not what the spec promises; never treated as success. */
export class DecodeError extends VenueError {
  readonly code = 'VENUE_DECODE_ERROR' as const;
  readonly reason: DecodeReason;
  readonly httpStatus: number | undefined;

  constructor(endpoint: string, reason: DecodeReason, message: string, httpStatus?: number) {
    super(endpoint, `${endpoint}: ${reason}: ${message}`);
    this.reason = reason;
    this.httpStatus = httpStatus;
  }
}

export function isVenueError(e: unknown): e is VenueError {
  return e instanceof VenueError;
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…(${s.length - max} more chars)`;
}
