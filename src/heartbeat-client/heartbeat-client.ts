/**
 * The heartbeat client loop (docs/heartbeat-clients.md): tells a keeper, once a period, that a bot
 * is alive, by `POST /heartbeat` naming every account the bot trades (docs/liveness.md). Used by
 * `dms-keeper heartbeat` (a sidecar or a systemd unit beside the bot) and by anything that embeds
 * a bot, such as the keeper's demo bots.
 *
 * One request at a time: a keeper that answers slowly gets no pile-up, and periods that pass while
 * a request waits are skipped, not caught up (a burst after an outage would say nothing more).
 * Decisions live in heartbeat-outcome.ts; this file only sends, times out and reports.
 */
import type { Clock, TimerHandle } from '../time/clock.js';
import { checkOutcome, heartbeatOutcome, isNews, periodTooLong, type ClientState, type Exchange, type FailReason, type PeriodResult } from './heartbeat-outcome.js';
import { heartbeatEndpoint, parseHttpUrl, redactUrl } from './heartbeat-url.js';

export type { HttpCall, HttpRequest } from './heartbeat-http.js';
import type { HttpCall, HttpRequest } from './heartbeat-http.js';

/** What the loop reports: only changes of state, never one line per heartbeat, never the token. */
export type HeartbeatClientEvent =
  /** The first accepted heartbeat, or the first after failures (`failedPeriods` of them, over `downMs`). */
  | { type: 'ok'; url: string; accounts: readonly string[]; silenceSeconds?: number; failedPeriods: number; downMs: number }
  /** Heartbeats stopped getting through; retried every period. */
  | { type: 'failing'; url: string; reason: FailReason; status?: number; detail: string }
  /** The bot's own health URL did not answer 2xx: no heartbeat is sent, on purpose. */
  | { type: 'bot_unhealthy'; checkUrl: string; reason: 'timeout' | 'unreachable' | 'http_status'; status?: number; detail: string }
  /** The keeper refused the request (wrong token, unknown account, …): the loop has stopped. */
  | { type: 'refused'; url: string; status: number; error: string; accounts?: string[] }
  /** Said once: fewer than two heartbeats per silence, so one lost heartbeat reads as a dead bot. */
  | { type: 'period_too_long'; url: string; everyMs: number; silenceSeconds: number };

export type HeartbeatEnd = { reason: 'stopped' } | { reason: 'refused'; status: number; error: string; accounts?: string[] };

export interface HeartbeatOptions {
  /** The keeper's base URL, e.g. http://127.0.0.1:9464 (the client posts to its /heartbeat). */
  url: string;
  /** Every account the bot trades: one request names them all. */
  accounts: readonly string[];
  /** The bot's token; a `Secret` (src/config/secret.ts) or anything else with `reveal()` keeps it out of logs. */
  token: string | { reveal(): string };
  everyMs: number;
  /** For each request (the check and the heartbeat alike). */
  timeoutMs: number;
  /** The bot's own health URL: a heartbeat is sent only in a period where it answered 2xx. */
  checkUrl?: string;
  clock: Clock;
  request?: HttpRequest;
  onEvent: (e: HeartbeatClientEvent) => void;
}

export interface HeartbeatRun {
  /** Stops the loop: aborts a request in flight and resolves once the loop is idle. Idempotent. */
  stop(): Promise<void>;
  /** Resolves when the loop ends: stopped, or refused by the keeper. */
  readonly done: Promise<HeartbeatEnd>;
}

export class HeartbeatOptionsError extends Error {
  readonly code = 'HEARTBEAT_OPTIONS' as const;
  constructor(message: string) {
    super(message);
    this.name = 'HeartbeatOptionsError';
  }
}

/** Thrown into an aborted request: told apart from the bot's own failures by the signal, not by name. */
class Aborted extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'Aborted';
  }
}

export function runHeartbeats(opts: HeartbeatOptions): HeartbeatRun {
  if (opts.accounts.length === 0) throw new HeartbeatOptionsError('name at least one account');
  if (!(opts.everyMs > 0) || !(opts.timeoutMs > 0)) throw new HeartbeatOptionsError('everyMs and timeoutMs must be positive');
  const target = heartbeatEndpoint(opts.url);
  const checkUrl = opts.checkUrl === undefined ? undefined : parseHttpUrl(opts.checkUrl, '--check-url').toString();
  const shownUrl = redactUrl(opts.url);
  const accounts = [...opts.accounts];
  const body = JSON.stringify({ accounts });
  const { clock } = opts;
  const request = opts.request ?? defaultRequest;

  let state: ClientState = 'starting';
  let failedPeriods = 0;
  let firstFailureMs: number | undefined;
  let toldPeriod = false;
  let stopped = false;
  let timer: TimerHandle | undefined;
  let inFlight: AbortController | undefined;
  let period: Promise<void> = Promise.resolve();
  let finish!: (end: HeartbeatEnd) => void;
  let fail!: (e: unknown) => void;
  const done = new Promise<HeartbeatEnd>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const startMs = clock.monoMs();

  const exchange = async (call: Omit<HttpCall, 'signal'>): Promise<Exchange> => {
    const ac = new AbortController();
    inFlight = ac;
    const timeout = clock.setTimeout(() => ac.abort(new Aborted('timeout')), opts.timeoutMs);
    // Raced against the signal too, so a request function that ignores it cannot stall the loop.
    const aborted = new Promise<never>((_, reject) => ac.signal.addEventListener('abort', () => reject(ac.signal.reason as Error), { once: true }));
    try {
      const answer = await Promise.race([request({ ...call, signal: ac.signal }), aborted]);
      return { kind: 'answer', status: answer.status, body: answer.body };
    } catch (e) {
      return ac.signal.aborted ? { kind: 'timeout' } : { kind: 'network', code: errorCode(e) };
    } finally {
      clock.clearTimeout(timeout);
      inFlight = undefined;
    }
  };

  const onePeriod = async (): Promise<PeriodResult> => {
    if (checkUrl !== undefined) {
      const check = checkOutcome(await exchange({ method: 'GET', url: checkUrl, headers: {} }));
      if (!check.healthy) return { check };
    }
    const token = typeof opts.token === 'string' ? opts.token : opts.token.reveal();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    return { heartbeat: heartbeatOutcome(await exchange({ method: 'POST', url: target, headers, body })) };
  };

  const report = (r: PeriodResult): void => {
    const news = isNews(state, r);
    if ('check' in r) {
      const c = r.check;
      if (news) opts.onEvent({ type: 'bot_unhealthy', checkUrl: redactUrl(checkUrl ?? ''), reason: c.reason, ...(c.status !== undefined ? { status: c.status } : {}), detail: c.detail });
      state = 'bot_unhealthy';
      countFailure();
      return;
    }
    const h = r.heartbeat;
    if (h.kind === 'ok') {
      if (news) {
        const downMs = firstFailureMs === undefined ? 0 : clock.monoMs() - firstFailureMs;
        opts.onEvent({ type: 'ok', url: shownUrl, accounts, ...(h.silenceSeconds !== undefined ? { silenceSeconds: h.silenceSeconds } : {}), failedPeriods, downMs });
      }
      if (!toldPeriod && h.silenceSeconds !== undefined && periodTooLong(opts.everyMs, h.silenceSeconds)) {
        toldPeriod = true;
        opts.onEvent({ type: 'period_too_long', url: shownUrl, everyMs: opts.everyMs, silenceSeconds: h.silenceSeconds });
      }
      state = 'ok';
      failedPeriods = 0;
      firstFailureMs = undefined;
    } else if (h.kind === 'failing') {
      if (news) opts.onEvent({ type: 'failing', url: shownUrl, reason: h.reason, ...(h.status !== undefined ? { status: h.status } : {}), detail: h.detail });
      state = 'failing';
      countFailure();
    } else {
      opts.onEvent({ type: 'refused', url: shownUrl, status: h.status, error: h.error, ...(h.accounts ? { accounts: h.accounts } : {}) });
      state = 'refused';
      stopped = true;
      finish({ reason: 'refused', status: h.status, error: h.error, ...(h.accounts ? { accounts: h.accounts } : {}) });
    }
  };

  const countFailure = (): void => {
    failedPeriods++;
    firstFailureMs ??= clock.monoMs();
  };

  const tick = (): void => {
    timer = undefined;
    period = onePeriod()
      .then((r) => {
        if (stopped) return; // an answer that arrives while stopping is nobody's news
        report(r);
        if (!stopped) scheduleNext();
      })
      .catch((e: unknown) => {
        // Only onEvent can throw here (exchange turns every failure into an outcome): the
        // caller's bug ends the loop through `done` instead of an unhandled rejection.
        stopped = true;
        fail(e);
      });
  };

  // On the period grid from the start, so a slow answer does not push every later heartbeat back.
  const scheduleNext = (): void => {
    const now = clock.monoMs();
    const next = startMs + (Math.floor((now - startMs) / opts.everyMs) + 1) * opts.everyMs;
    timer = clock.setTimeout(tick, next - now);
  };

  tick();

  let stopping: Promise<void> | undefined;
  return {
    done,
    stop: () =>
      (stopping ??= (async () => {
        stopped = true;
        if (timer !== undefined) clock.clearTimeout(timer);
        inFlight?.abort(new Aborted('stopped'));
        await period;
        finish({ reason: 'stopped' });
      })()),
  };
}

/** A stable code for a failed request (ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET): never its message. */
function errorCode(e: unknown): string {
  const pick = (x: unknown): string | undefined => {
    const code = (x as { code?: unknown } | null)?.code;
    return typeof code === 'string' && code !== '' ? code : undefined;
  };
  return pick(e) ?? pick((e as { cause?: unknown } | null)?.cause) ?? ((e as { name?: unknown } | null)?.name as string | undefined) ?? 'error';
}

/** undici's request, loaded on first use so that a caller injecting its own never loads undici. */
const defaultRequest: HttpRequest = async (call) => (await import('./heartbeat-http.js')).undiciRequest(call);
