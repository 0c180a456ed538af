import { Agent, util, type Dispatcher } from 'undici';
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
 * One request's handler in undici's dispatch interface: it keeps the status, headers and body bytes
 * (counting them against the cap), and settles once, with an answer or our error. Why not undici's
 * `request()`: it wraps every answer in a Readable stream that we then iterate, and it made an arm's
 * request cost about a fifth more CPU (a loopback microbench: 0.60 against 0.47 ms a request on the
 * bench machine). A stop (the deadline or the caller) aborts the request if undici has started it,
 * and settles at once either way: a request still queued behind a busy connection does not outlive
 * its deadline.
 */
class Exchange implements Dispatcher.DispatchHandler {
  /** Set once the answer's headers arrive (also when the request then fails: the body too large). */
  status: number | undefined;
  dateHeader: string | undefined;
  headers: Record<string, string | string[] | undefined> = {};
  private readonly chunks: Buffer[] = [];
  private total = 0;
  private abortFn: ((err: Error) => void) | undefined;
  private cause: 'deadline' | 'caller' | undefined;
  private settled = false;

  constructor(
    private readonly endpoint: string,
    private readonly cap: number,
    private readonly timeoutMs: number,
    /** Called once: null when the whole answer is in (status, headers, body()). */
    private readonly done: (err: Error | null) => void,
  ) {}

  /** The deadline or the caller: the first one is the cause reported. */
  stop(cause: 'deadline' | 'caller'): void {
    if (this.settled) return;
    this.cause ??= cause;
    const err = transportError(this.endpoint, new Error('stopped'), this.cause, this.timeoutMs, this.when());
    this.fail(err);
  }

  /** Settles with `err` and aborts the request if undici has started it. */
  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.abortFn?.(err);
    this.done(err);
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.settled) abort(new Error('stopped'));
    else this.abortFn = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], _resume: () => void, _statusText: string): boolean {
    if (this.settled || statusCode < 200) return true; // 1xx: informational, the answer follows
    this.status = statusCode;
    this.headers = util.parseHeaders(rawHeaders) as Record<string, string | string[] | undefined>;
    const date = this.headers['date'];
    if (typeof date === 'string') this.dateHeader = date;
    const declared = Number(this.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.cap) {
      this.fail(new DecodeError(this.endpoint, 'too_large', `declared body of ${declared} bytes exceeds the ${this.cap}-byte cap`, statusCode));
      return false;
    }
    return true;
  }

  /**
   * Past the cap the request is aborted, which closes the socket (an unfinished HTTP/1.1 answer
   * cannot be reused): a hostile or broken 50 MB answer costs the cap plus what is in flight.
   */
  onData(chunk: Buffer): boolean {
    if (this.settled) return true;
    this.total += chunk.length;
    if (this.total > this.cap) {
      this.fail(new DecodeError(this.endpoint, 'too_large', `body exceeds the ${this.cap}-byte cap`, this.status));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    this.settled = true;
    this.done(null);
  }

  /** The answer's bytes, once complete. */
  body(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.total);
  }

  onError(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.done(transportError(this.endpoint, err, this.cause, this.timeoutMs, this.when()));
  }

  private when(): string {
    return this.status === undefined ? 'before the answer arrived' : 'while reading the body';
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

    /** `seen`: what arrived of the answer (its status and Date header), if anything did. */
    const observe = (status: number | 'error', errorReason?: ResponseObservation['errorReason'], seen?: Exchange): void => {
      if (!this.onResponse) return;
      const o: ResponseObservation = { endpoint, method, status, latencyMs: Math.max(0, this.clock.monoMs() - started) };
      if (errorReason !== undefined) o.errorReason = errorReason;
      if (status === 'error' && seen?.status !== undefined) o.httpStatus = seen.status;
      if (seen?.dateHeader !== undefined) o.dateHeader = seen.dateHeader;
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

    return new Promise<HttpResponse>((resolve, reject) => {
      const exchange = new Exchange(endpoint, this.maxResponseBytes, timeoutMs, (err) => {
        this.clock.clearTimeout(timer);
        req.signal?.removeEventListener('abort', onCallerAbort);
        if (err) {
          const reason = err instanceof TransportError ? err.reason : err instanceof DecodeError && err.reason === 'too_large' ? 'too_large' : 'network';
          observe('error', reason, exchange);
          reject(err);
          return;
        }
        const recvMonoMs = this.clock.monoMs();
        const status = exchange.status ?? 0;
        observe(status, undefined, exchange);
        const out: HttpResponse = { status, headers: exchange.headers, body: exchange.body(), latencyMs: Math.max(0, recvMonoMs - started), sentMonoMs: started, recvMonoMs };
        if (exchange.dateHeader !== undefined) out.dateHeader = exchange.dateHeader;
        resolve(out);
      });
      const onCallerAbort = (): void => exchange.stop('caller');
      req.signal?.addEventListener('abort', onCallerAbort, { once: true });
      const timer: TimerHandle = this.clock.setTimeout(() => exchange.stop('deadline'), timeoutMs);
      let url: URL;
      try {
        url = new URL(req.url);
      } catch (err) {
        exchange.fail(new TransportError(endpoint, 'network', 'request failed before the answer arrived (bad URL)', { cause: err }));
        return;
      }
      try {
        this.dispatcher.dispatch(
          { origin: url.origin, path: url.pathname + url.search, method, headers, body: body ?? null, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
          exchange,
        );
      } catch (err) {
        exchange.fail(transportError(endpoint, err, undefined, timeoutMs, 'before the answer arrived'));
      }
    });
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
