import { EventEmitter } from 'node:events';
import { Agent, request, type Dispatcher } from 'undici';
import { ASSUMED } from './assumptions.js';
import { DecodeError, TransportError, type DecodeReason, type TransportReason } from './errors.js';
import { toJson } from './json.js';
import { systemClock, type Clock, type TimerHandle } from '../time/clock.js';

/**
 * One HTTP exchange with the venue, bounded in time and size, and nothing more: no retries (the
 * single retry layer lives above, where the deadline and the idempotency rules are known), no
 * status judgement (a 503 is returned like a 200; the decoders decide), no redirects.
 */

export type HttpMethod = 'GET' | 'POST';

/** What the observer sees once per request: for metrics and venue-clock estimation. */
export interface ResponseObservation {
  /** A stable template name (`GET /v1/accounts/{address}/orders`), never a concrete URL. */
  endpoint: string;
  method: HttpMethod;
  /** The HTTP status of a completely received answer, or `'error'` when none was received. */
  status: number | 'error';
  /** Set when `status` is `'error'`. */
  errorReason?: TransportReason | Extract<DecodeReason, 'too_large'>;
  /** Set when headers arrived even though the request then failed (e.g. the body was too large). */
  httpStatus?: number;
  latencyMs: number;
  /** The answer's `Date` header, when present (whoever wrote it: see venue-time.ts before using it). */
  dateHeader?: string;
}

export interface HttpTransportOptions {
  /**
   * The whole request's deadline: connect, headers and body each get it as their own timeout, and
   * the overall exchange is aborted when it passes. undici's defaults are 300 s.
   */
  requestTimeoutMs: number;
  /** Defaults to `requestTimeoutMs`. Only used when the transport builds its own Agent. */
  connectTimeoutMs?: number;
  /** Injected for tests (undici `MockAgent`) or to share a pool; the caller then owns its life. */
  dispatcher?: Dispatcher;
  /** Bodies beyond this are cut off while streaming. Defaults to `ASSUMED.maxResponseBytes`. */
  maxResponseBytes?: number;
  /** Called once per request. Exceptions from it are swallowed: metrics must not fail a request. */
  onResponse?: (observation: ResponseObservation) => void;
  /** Timer and latency source. Defaults to the system clock. */
  clock?: Clock;
  userAgent?: string;
}

export interface HttpRequest {
  endpoint: string;
  method: HttpMethod;
  /** Absolute URL. Never echoed in errors (it may carry credentials). */
  url: string;
  /** Serialized with `toJson` (bigint as bare integers) and sent as `application/json`. */
  json?: unknown;
  /**
   * Extra request headers (a venue's authentication headers), sent after `accept`/`user-agent` and
   * before `content-type`. Never echoed in errors or observations (they may carry credentials).
   */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** A tighter deadline for this request (e.g. what is left of a retry budget). */
  timeoutMs?: number;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Raw bytes: the decoder chooses how strictly to read them (a 2xx must be UTF-8 JSON). */
  body: Buffer;
  dateHeader?: string;
  latencyMs: number;
  /** Local monotonic clock when the request left and when the whole answer had arrived. */
  sentMonoMs: number;
  recvMonoMs: number;
}

/**
 * What undici's `request()` takes as a signal besides an AbortSignal: an EventEmitter with `aborted`
 * that emits `abort` (its documented `signal: AbortSignal | EventEmitter`). An AbortController per
 * request, with its EventTarget, was the largest single cost of a request's own bookkeeping (15 µs
 * each on the bench machine, 2 % of a timeline's CPU); the caller's signal, when there is one, is
 * still an AbortSignal.
 */
class RequestStop extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

export class HttpTransport {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly requestTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly onResponse: ((o: ResponseObservation) => void) | undefined;
  private readonly clock: Clock;
  private readonly userAgent: string | undefined;

  constructor(opts: HttpTransportOptions) {
    if (!(opts.requestTimeoutMs > 0)) throw new RangeError('requestTimeoutMs must be > 0');
    this.requestTimeoutMs = opts.requestTimeoutMs;
    this.maxResponseBytes = opts.maxResponseBytes ?? ASSUMED.maxResponseBytes;
    if (!(this.maxResponseBytes > 0)) throw new RangeError('maxResponseBytes must be > 0');
    this.onResponse = opts.onResponse;
    this.clock = opts.clock ?? systemClock();
    this.userAgent = opts.userAgent;
    if (opts.dispatcher) {
      this.dispatcher = opts.dispatcher;
      this.ownsDispatcher = false;
    } else {
      this.dispatcher = new Agent({
        connect: { timeout: opts.connectTimeoutMs ?? opts.requestTimeoutMs },
        headersTimeout: opts.requestTimeoutMs,
        bodyTimeout: opts.requestTimeoutMs,
      });
      this.ownsDispatcher = true;
    }
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    const { endpoint, method } = req;
    const started = this.clock.monoMs();
    let httpStatus: number | undefined;
    let dateHeader: string | undefined;

    const observe = (status: number | 'error', errorReason?: ResponseObservation['errorReason']): void => {
      if (!this.onResponse) return;
      const o: ResponseObservation = { endpoint, method, status, latencyMs: Math.max(0, this.clock.monoMs() - started) };
      if (errorReason !== undefined) o.errorReason = errorReason;
      if (status === 'error' && httpStatus !== undefined) o.httpStatus = httpStatus;
      if (dateHeader !== undefined) o.dateHeader = dateHeader;
      try {
        this.onResponse(o);
      } catch {
        // An observer bug must not turn a good answer into a failure.
      }
    };

    if (req.signal?.aborted) {
      observe('error', 'aborted');
      throw new TransportError(endpoint, 'aborted', 'aborted by the caller before sending');
    }

    const timeoutMs = req.timeoutMs ?? this.requestTimeoutMs;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.userAgent) headers['user-agent'] = this.userAgent;
    if (req.headers) for (const [name, value] of Object.entries(req.headers)) headers[name] = value;
    let body: string | undefined;
    if (req.json !== undefined) {
      body = toJson(req.json);
      headers['content-type'] = 'application/json';
    }

    // One stop signal for both causes, so undici sees a single one; `cause` remembers which fired
    // first, because undici reports both as the same abort error.
    const stop = new RequestStop();
    let cause: 'deadline' | 'caller' | undefined;
    const onCallerAbort = (): void => {
      cause ??= 'caller';
      stop.abort();
    };
    req.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer: TimerHandle = this.clock.setTimeout(() => {
      cause ??= 'deadline';
      stop.abort();
    }, timeoutMs);

    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(req.url, {
          dispatcher: this.dispatcher,
          method,
          headers,
          body,
          signal: stop,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
      } catch (err) {
        throw transportError(endpoint, err, cause, timeoutMs, 'before the answer arrived');
      }
      httpStatus = res.statusCode;
      const date = res.headers['date'];
      if (typeof date === 'string') dateHeader = date;
      const bytes = await this.readCapped(endpoint, res, () => cause, timeoutMs);
      const recvMonoMs = this.clock.monoMs();
      const latencyMs = Math.max(0, recvMonoMs - started);
      observe(res.statusCode);
      const out: HttpResponse = { status: res.statusCode, headers: res.headers, body: bytes, latencyMs, sentMonoMs: started, recvMonoMs };
      if (dateHeader !== undefined) out.dateHeader = dateHeader;
      return out;
    } catch (err) {
      const reason =
        err instanceof TransportError ? err.reason : err instanceof DecodeError && err.reason === 'too_large' ? 'too_large' : 'network';
      observe('error', reason);
      throw err;
    } finally {
      this.clock.clearTimeout(timer);
      req.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  /**
   * Reads the body while counting: past the cap the stream is destroyed, which aborts the request
   * and closes the socket (an unfinished HTTP/1.1 response cannot be reused), so a hostile or broken
   * 50 MB answer costs at most the cap plus what is already in flight, never the whole body.
   */
  private async readCapped(
    endpoint: string,
    res: Dispatcher.ResponseData,
    cause: () => 'deadline' | 'caller' | undefined,
    timeoutMs: number,
  ): Promise<Buffer> {
    const cap = this.maxResponseBytes;
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > cap) {
      res.body.destroy();
      throw new DecodeError(endpoint, 'too_large', `declared body of ${declared} bytes exceeds the ${cap}-byte cap`, res.statusCode);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        total += buf.length;
        if (total > cap) {
          res.body.destroy();
          throw new DecodeError(endpoint, 'too_large', `body exceeds the ${cap}-byte cap`, res.statusCode);
        }
        chunks.push(buf);
      }
    } catch (err) {
      if (err instanceof DecodeError) throw err;
      throw transportError(endpoint, err, cause(), timeoutMs, 'while reading the body');
    }
    return Buffer.concat(chunks, total);
  }

  /** Closes the connection pool if this transport created it; an injected dispatcher is left alone. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** Our words only: undici messages can name addresses, and bodies or URLs must never leak. */
function transportError(
  endpoint: string,
  err: unknown,
  cause: 'deadline' | 'caller' | undefined,
  timeoutMs: number,
  when: string,
): TransportError {
  if (err instanceof TransportError) return err;
  if (cause === 'caller') return new TransportError(endpoint, 'aborted', `aborted by the caller ${when}`, { cause: err });
  if (cause === 'deadline') return new TransportError(endpoint, 'timeout', `no complete answer within ${timeoutMs} ms (${when})`, { cause: err });
  const code = errorCode(err);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new TransportError(endpoint, 'timeout', `${code} ${when}`, { cause: err });
  }
  if (code === 'UND_ERR_ABORTED' || (err instanceof Error && err.name === 'AbortError')) {
    return new TransportError(endpoint, 'aborted', `request aborted ${when}`, { cause: err });
  }
  return new TransportError(endpoint, 'network', `request failed ${when} (${code ?? (err instanceof Error ? err.name : 'unknown')})`, {
    cause: err,
  });
}

function errorCode(err: unknown): string | undefined {
  if (err !== null && typeof err === 'object' && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return undefined;
}
