/**
 * The CLOB heartbeat, pure: the request for a previous id, and its answer read into one outcome.
 * A chain: each beat names the id the last accepted one returned (`null` before the first); the
 * venue answers the next id, or 400 `Invalid Heartbeat ID` with the current one when ours is stale.
 * Exact in what we send (the client's `JSON.stringify({heartbeat_id: id ?? null})`), tolerant in
 * what we read (an `ok` without an id, extra keys, null fields, non-JSON error pages).
 */
import { toJson } from '../json.js';
import { bodyJson, classifyFailure, clobErrorOf, venueMessageOf, type ClobAnswer, type ClobFailure } from './answer.js';
import { ClobError, ClobRequestError } from './errors.js';
import { POLYMARKET_FACTS } from './facts.js';

export const HEARTBEAT_ENDPOINT = `POST ${POLYMARKET_FACTS.heartbeatPath}`;

export interface HeartbeatRequest {
  method: 'POST';
  path: string;
  /** The body object; `toJson` of it is `body`, so the transport sends exactly the bytes signed. */
  json: { heartbeat_id: string | null };
  /** The exact bytes signed and sent. */
  body: string;
}

/** The two paths a heartbeat may go to: the clients' first (what we send), the API reference's second. */
export const HEARTBEAT_PATHS = [POLYMARKET_FACTS.heartbeatPath, POLYMARKET_FACTS.heartbeatPathInApiReference] as const;
export type HeartbeatPath = (typeof HEARTBEAT_PATHS)[number];

/** `prevId`: the id of the last accepted beat, or null for the first of a chain. `path`: the clients' unless the venue proved it wrong (port.ts). */
export function heartbeatRequest(prevId: string | null, path: HeartbeatPath = POLYMARKET_FACTS.heartbeatPath): HeartbeatRequest {
  if (prevId !== null && typeof prevId !== 'string') throw new ClobRequestError('bad_request', 'the previous heartbeat id must be a string or null');
  const json = { heartbeat_id: prevId };
  return { method: 'POST', path, json, body: toJson(json) };
}

export type HeartbeatOutcome =
  /** The beat counts. `heartbeatId` is the next id to send, when the venue gave one. */
  | { kind: 'accepted'; httpStatus: number; heartbeatId: string | undefined }
  /** Our id was not the chain's current one (another sender, or a lost answer). Resend with `currentId`. */
  | { kind: 'stale'; httpStatus: number; currentId: string | undefined; venueMessage: string }
  | ClobFailure;

export type HeartbeatKind = HeartbeatOutcome['kind'];
export const HEARTBEAT_KINDS = ['accepted', 'stale', 'unauthorized', 'maintenance', 'rate_limited', 'transient', 'refused'] as const satisfies readonly HeartbeatKind[];

const STALE_RE = /invalid\s+heartbeat\s+id/i;

/** Reads a heartbeat's HTTP answer. Never throws. `nowMs` lets an HTTP-date `Retry-After` count. */
export function decodeHeartbeatAnswer(res: ClobAnswer, nowMs?: number): HeartbeatOutcome {
  const { status } = res;
  if (status >= 200 && status < 300) return decodeSuccess(res);
  if (status === 400) {
    const venueMessage = venueMessageOf(res.body);
    if (venueMessage !== undefined && STALE_RE.test(venueMessage)) {
      return { kind: 'stale', httpStatus: status, currentId: idField(bodyJson(res.body)), venueMessage };
    }
  }
  return classifyFailure(res, nowMs);
}

function decodeSuccess(res: ClobAnswer): HeartbeatOutcome {
  const httpStatus = res.status;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(res.body);
  } catch {
    return { kind: 'transient', cause: 'not_json', httpStatus };
  }
  if (text.trim() === '') return { kind: 'transient', cause: 'not_json', httpStatus };
  const json = bodyJson(Buffer.from(text, 'utf8'));
  if (json === undefined) return { kind: 'transient', cause: 'not_json', httpStatus };
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { kind: 'transient', cause: 'bad_shape', httpStatus };
  const o = json as Record<string, unknown>;
  const heartbeatId = idField(o);
  if (heartbeatId === undefined && typeof o['error'] === 'string') {
    // A 2xx that says error: a stale id spelled with the wrong status, or a failure we cannot name.
    // Either way the beat did not count.
    if (STALE_RE.test(o['error'])) return { kind: 'stale', httpStatus, currentId: undefined, venueMessage: o['error'] };
    return { kind: 'transient', cause: 'bad_shape', httpStatus, venueMessage: o['error'] };
  }
  return { kind: 'accepted', httpStatus, heartbeatId };
}

/** `heartbeat_id` when it is a non-empty string; anything else (null, a number, "") is absent. */
function idField(json: unknown): string | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const id = (json as Record<string, unknown>)['heartbeat_id'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The outcome as a typed error, for callers that throw on anything but `accepted`. */
export function heartbeatError(outcome: Exclude<HeartbeatOutcome, { kind: 'accepted' }>): ClobError {
  return clobErrorOf(HEARTBEAT_ENDPOINT, outcome, outcome.kind === 'stale' ? "the heartbeat id is not the chain's current one" : undefined);
}
