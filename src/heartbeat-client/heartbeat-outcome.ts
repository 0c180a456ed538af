/**
 * The heartbeat client's decisions (docs/heartbeat-clients.md), as pure functions of an answer or a
 * failure: what a heartbeat's answer means, whether the bot's own health check passed, and which
 * changes of state are worth a log line. The loop (heartbeat-client.ts) only does the I/O.
 */

/** What one HTTP exchange gave: a status and at most the first few KiB of the body, or a failure. */
export type Exchange =
  | { kind: 'answer'; status: number; body: string }
  /** No answer within the timeout (the loop aborted the request). */
  | { kind: 'timeout' }
  /** No answer at all: refused, reset, unresolvable name. `code` is e.g. ECONNREFUSED. */
  | { kind: 'network'; code: string };

/** Why a period sent no accepted heartbeat, in words an operator can act on. */
export type FailReason = 'unreachable' | 'timeout' | 'http_status' | 'rate_limited';

export type HeartbeatOutcome =
  | { kind: 'ok'; silenceSeconds?: number }
  /** Worth retrying next period: the keeper may be restarting, or briefly overloaded. */
  | { kind: 'failing'; reason: FailReason; status?: number; detail: string }
  /** The keeper understood and said no: retrying the same request cannot help (exit 2 in the CLI). */
  | { kind: 'refused'; status: number; error: string; accounts?: string[] };

/**
 * Statuses that refuse the request itself (docs/liveness.md, "The heartbeat API"): 400 malformed,
 * 401 wrong or missing token, 404 an account the keeper does not watch with heartbeats. 405 and 413
 * mean the URL or the request is wrong the same way (a listener without /heartbeat; more names
 * than the keeper takes): the next period would get the same answer.
 */
const REFUSING = new Set([400, 401, 404, 405, 413]);

/** The answer to a heartbeat POST. Never looks at anything but the status and the JSON body. */
export function heartbeatOutcome(x: Exchange): HeartbeatOutcome {
  if (x.kind === 'timeout') return { kind: 'failing', reason: 'timeout', detail: 'no answer within the timeout' };
  if (x.kind === 'network') return { kind: 'failing', reason: 'unreachable', detail: x.code };
  const body = parseBody(x.body);
  if (x.status >= 200 && x.status < 300) {
    const s = body?.silence_seconds;
    return typeof s === 'number' && Number.isFinite(s) && s > 0 ? { kind: 'ok', silenceSeconds: s } : { kind: 'ok' };
  }
  if (REFUSING.has(x.status)) {
    const error = typeof body?.error === 'string' ? body.error : `http_${x.status}`;
    const accounts = Array.isArray(body?.accounts) ? body.accounts.filter((a): a is string => typeof a === 'string') : undefined;
    return accounts && accounts.length > 0 ? { kind: 'refused', status: x.status, error, accounts } : { kind: 'refused', status: x.status, error };
  }
  if (x.status === 429) return { kind: 'failing', reason: 'rate_limited', status: 429, detail: 'more than 20 heartbeats a second for an account: is another client sending for it?' };
  // 5xx (a keeper stopping, a proxy in front of one that is down) and anything unexpected (a 3xx,
  // a 403 from a proxy): report and try again next period.
  return { kind: 'failing', reason: 'http_status', status: x.status, detail: typeof body?.error === 'string' ? body.error : `HTTP ${x.status}` };
}

export type CheckOutcome = { healthy: true } | { healthy: false; reason: 'timeout' | 'unreachable' | 'http_status'; status?: number; detail: string };

/** The bot's own health URL (`--check-url`): alive only on a 2xx within the timeout. */
export function checkOutcome(x: Exchange): CheckOutcome {
  if (x.kind === 'timeout') return { healthy: false, reason: 'timeout', detail: 'no answer within the timeout' };
  if (x.kind === 'network') return { healthy: false, reason: 'unreachable', detail: x.code };
  if (x.status >= 200 && x.status < 300) return { healthy: true };
  return { healthy: false, reason: 'http_status', status: x.status, detail: `HTTP ${x.status}` };
}

/** Where the client stands; a log line is written only when this changes (not once per heartbeat). */
export type ClientState = 'starting' | 'ok' | 'failing' | 'bot_unhealthy' | 'refused';

/** One period's result, as the loop saw it. */
export type PeriodResult = { check: CheckOutcome & { healthy: false } } | { heartbeat: HeartbeatOutcome };

export function stateOf(r: PeriodResult): Exclude<ClientState, 'starting'> {
  if ('check' in r) return 'bot_unhealthy';
  return r.heartbeat.kind;
}

/**
 * Whether a period's result is news: a change of state. A failure whose reason changes while
 * failing (refused connections, then 503s while the keeper starts) is not: the first line said
 * the keeper is unreachable, the recovery line says how many periods it took.
 */
export function isNews(prev: ClientState, r: PeriodResult): boolean {
  return stateOf(r) !== prev;
}

/**
 * A period long enough that one lost heartbeat makes the keeper call the bot silent: fewer than two
 * heartbeats per silence. The keeper answers 200 with its `silence_seconds`, so the client can say
 * so itself instead of the keeper's DmsKeeperBotSilent alert saying it at the first hiccup.
 */
export function periodTooLong(everyMs: number, silenceSeconds: number): boolean {
  return everyMs * 2 > silenceSeconds * 1000;
}

function parseBody(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
