/**
 * The Polymarket CLOB calls the keeper makes, over the shared HTTP transport: the heartbeat, the
 * open orders (every page) and the server time. A thin shell: the bytes come from heartbeat.ts and
 * l2-auth.ts, the readings from answer.ts, heartbeat.ts and orders.ts. No retries here (as with the
 * first venue, the one retry layer lives above, where the deadline is known).
 */
import type { HttpResponse, HttpTransport } from '../http.js';
import { parseSuccessBody } from '../decode.js';
import { ADDRESS_RE } from '../address.js';
import { classifyFailure, clobErrorOf, failureFromError } from './answer.js';
import { ClobError, ClobRequestError } from './errors.js';
import { POLYMARKET_ASSUMPTIONS, POLYMARKET_FACTS } from './facts.js';
import { decodeHeartbeatAnswer, heartbeatRequest, HEARTBEAT_ENDPOINT, type HeartbeatOutcome, type HeartbeatPath } from './heartbeat.js';
import { ApiCredentials, l2Headers, type ApiCreds } from './l2-auth.js';
import { decodeOpenOrdersPage, type OpenOrder } from './orders.js';

export const OPEN_ORDERS_ENDPOINT = `GET ${POLYMARKET_FACTS.openOrdersPath}`;
export const SERVER_TIME_ENDPOINT = `GET ${POLYMARKET_FACTS.serverTimePath}`;

export interface PolymarketClobOptions {
  /** `https://clob.polymarket.com`; a trailing `/` is dropped, as the client does. */
  baseUrl: string;
  transport: Pick<HttpTransport, 'request'>;
  /** The address the API key belongs to (`POLY_ADDRESS`). */
  address: string;
  creds: ApiCreds;
  /** Unix seconds for `POLY_TIMESTAMP` (the venue clock's estimate, or the local one); floored. */
  nowSeconds: () => number;
}

export interface ClobCallOptions {
  signal?: AbortSignal;
  /** A heartbeat's path (heartbeat.ts HEARTBEAT_PATHS); default the clients'. */
  path?: HeartbeatPath;
  /** A tighter deadline than the transport's. */
  timeoutMs?: number;
}

/** The outcome, with when the request left and its answer arrived (local monotonic ms) if one did. */
export type HeartbeatResult = HeartbeatOutcome & { sentMonoMs?: number; recvMonoMs?: number };

export interface OpenOrdersResult {
  orders: OpenOrder[];
  pages: number;
  /** Entries without an id, over all pages (see orders.ts). */
  skippedWithoutId: number;
  /** A page had no `next_cursor` and was read as the last one. */
  cursorMissing: boolean;
}

export class PolymarketClob {
  readonly address: string;
  private readonly baseUrl: string;
  private readonly transport: Pick<HttpTransport, 'request'>;
  private readonly creds: ApiCredentials;
  private readonly nowSeconds: () => number;

  constructor(opts: PolymarketClobOptions) {
    let url: URL;
    try {
      url = new URL(opts.baseUrl);
    } catch {
      throw new ClobRequestError('bad_url', 'baseUrl is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ClobRequestError('bad_url', 'baseUrl must be http(s)');
    if (url.search !== '' || url.hash !== '') throw new ClobRequestError('bad_url', 'baseUrl must not carry a query or fragment');
    if (typeof opts.address !== 'string' || !ADDRESS_RE.test(opts.address)) throw new ClobRequestError('bad_address', 'address is not 0x followed by 40 hex digits');
    this.baseUrl = opts.baseUrl.endsWith('/') ? opts.baseUrl.slice(0, -1) : opts.baseUrl;
    this.transport = opts.transport;
    this.address = opts.address;
    this.creds = opts.creds instanceof ApiCredentials ? opts.creds : new ApiCredentials(opts.creds);
    this.nowSeconds = opts.nowSeconds;
  }

  /** One beat. Never throws for the venue's answers or their absence: every case is an outcome. */
  async heartbeat(prevId: string | null, opts: ClobCallOptions = {}): Promise<HeartbeatResult> {
    const req = heartbeatRequest(prevId, opts.path);
    const timestampSeconds = this.timestamp();
    const headers = l2Headers({ address: this.address, creds: this.creds, timestampSeconds, method: req.method, requestPath: req.path, body: req.body });
    let res: HttpResponse;
    try {
      res = await this.transport.request({ endpoint: HEARTBEAT_ENDPOINT, method: req.method, url: `${this.baseUrl}${req.path}`, json: req.json, headers, ...callOpts(opts) });
    } catch (err) {
      const failure = failureFromError(err);
      if (failure === undefined) throw err;
      return failure;
    }
    return { ...decodeHeartbeatAnswer(res, timestampSeconds * 1000), sentMonoMs: res.sentMonoMs, recvMonoMs: res.recvMonoMs };
  }

  /**
   * Every open order, following `next_cursor` from the initial cursor to the end cursor. Each page
   * is signed afresh over the bare path (the client signs `/data/orders` whatever the cursor).
   * Throws `ClobError` when a page cannot be had or read.
   */
  async openOrders(opts: ClobCallOptions & { maxPages?: number } = {}): Promise<OpenOrdersResult> {
    const maxPages = opts.maxPages ?? POLYMARKET_ASSUMPTIONS.maxOpenOrderPages;
    const path = POLYMARKET_FACTS.openOrdersPath;
    const out: OpenOrdersResult = { orders: [], pages: 0, skippedWithoutId: 0, cursorMissing: false };
    const seen = new Set<string>();
    let cursor: string = POLYMARKET_FACTS.initialCursor;
    while (cursor !== POLYMARKET_FACTS.endCursor) {
      if (out.pages >= maxPages) throw new ClobError(OPEN_ORDERS_ENDPOINT, 'transient', `no end cursor after ${maxPages} pages`);
      if (seen.has(cursor)) throw new ClobError(OPEN_ORDERS_ENDPOINT, 'transient', `the cursor repeats after ${out.pages} pages`);
      seen.add(cursor);
      const headers = l2Headers({ address: this.address, creds: this.creds, timestampSeconds: this.timestamp(), method: 'GET', requestPath: path });
      const url = `${this.baseUrl}${path}?next_cursor=${encodeURIComponent(cursor)}`;
      const json = await this.read(OPEN_ORDERS_ENDPOINT, url, headers, opts);
      const page = decodeOpenOrdersPage(json);
      if (!page.ok) throw new ClobError(OPEN_ORDERS_ENDPOINT, 'transient', `unreadable page: ${page.problem}`);
      out.pages++;
      out.orders.push(...page.orders);
      out.skippedWithoutId += page.skippedWithoutId;
      if (page.nextCursor === undefined) {
        out.cursorMissing = true;
        break;
      }
      cursor = page.nextCursor;
    }
    return out;
  }

  /** The venue's clock, Unix seconds (`GET /time`, unauthenticated). Throws `ClobError`. */
  async serverTimeSeconds(opts: ClobCallOptions = {}): Promise<number> {
    const json = await this.read(SERVER_TIME_ENDPOINT, `${this.baseUrl}${POLYMARKET_FACTS.serverTimePath}`, undefined, opts);
    const seconds = typeof json === 'string' && /^\d+$/.test(json.trim()) ? Number(json.trim()) : json;
    if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds <= 0) {
      throw new ClobError(SERVER_TIME_ENDPOINT, 'transient', 'the answer is not a positive integer of seconds');
    }
    return seconds;
  }

  private async read(endpoint: string, url: string, headers: Readonly<Record<string, string>> | undefined, opts: ClobCallOptions): Promise<unknown> {
    let res: HttpResponse;
    try {
      res = await this.transport.request({ endpoint, method: 'GET', url, ...(headers === undefined ? {} : { headers }), ...callOpts(opts) });
    } catch (err) {
      const failure = failureFromError(err);
      if (failure === undefined) throw err;
      throw clobErrorOf(endpoint, failure);
    }
    if (res.status < 200 || res.status >= 300) throw clobErrorOf(endpoint, classifyFailure(res, this.timestamp() * 1000));
    try {
      return parseSuccessBody(endpoint, res);
    } catch {
      throw clobErrorOf(endpoint, { kind: 'transient', cause: 'not_json', httpStatus: res.status });
    }
  }

  private timestamp(): number {
    const now = this.nowSeconds();
    if (!Number.isFinite(now) || now < 0) throw new ClobRequestError('bad_timestamp', 'nowSeconds() returned no usable time');
    return Math.floor(now);
  }
}

function callOpts(opts: ClobCallOptions): { signal?: AbortSignal; timeoutMs?: number } {
  const o: { signal?: AbortSignal; timeoutMs?: number } = {};
  if (opts.signal !== undefined) o.signal = opts.signal;
  if (opts.timeoutMs !== undefined) o.timeoutMs = opts.timeoutMs;
  return o;
}
