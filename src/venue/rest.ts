import type { z } from 'zod';
import { ASSUMED } from './assumptions.js';
import {
  AccountSchema,
  EventSchema,
  HealthSchema,
  OrdersPageSchema,
  OutcomeBookSchema,
  OutcomeStatsSchema,
  ParticipantsPageSchema,
  PositionsPageSchema,
  ProvidersListSchema,
  SeriesSchema,
  TemplatesListSchema,
  TopicSchema,
  decodeActionResponse,
  decodeResponse,
  type ReadContract,
} from './decode.js';
import { decodeWitnessed, type VenueDateSink } from './venue-time.js';
import { DecodeError } from './errors.js';
import type { HttpMethod, HttpTransport } from './http.js';
import type {
  Account,
  ActionOk,
  Event,
  Health,
  Included,
  IncludeKind,
  OpenOrder,
  OrdersPage,
  OutcomeBook,
  OutcomeStats,
  ParticipantsPage,
  Position,
  PositionsPage,
  ProvidersList,
  ScheduleCancelAction,
  Series,
  SignedRequest,
  TemplatesList,
  Topic,
} from './types.js';

/** Per-call options. `timeoutMs` tightens the transport's deadline (a retry layer's remaining budget). */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ListOrdersQuery {
  outcome_id?: string;
  limit?: number;
  cursor?: string;
  submitted_by?: string;
  /** Several values are sent as a repeated parameter, the form spec 4.4 documents for `include`. */
  include?: IncludeKind | readonly IncludeKind[];
}

export interface ListPositionsQuery {
  outcome_id?: string;
  limit?: number;
  cursor?: string;
  include?: IncludeKind | readonly IncludeKind[];
}

export interface BookQuery {
  /** Levels per side; the service defaults to 10; 0 is the full book. */
  depth?: number;
  include?: readonly 'accounts'[];
}

export interface ListParticipantsQuery {
  topic_id?: string;
  category_id?: string;
  series_id?: string;
  limit?: number;
  cursor?: string;
}

export interface ListProvidersQuery {
  topic_id?: string;
  category_id?: string;
  series_id?: string;
}

export interface RestClientOptions {
  /** `{base_url}`; may carry a path prefix. */
  baseUrl: string;
  transport: HttpTransport;
  /** Guard for the page iterators: past this many pages the listing is refused, not followed. */
  maxPages?: number;
  /** `limit` the iterators ask for when the caller sets none. */
  defaultPageLimit?: number;
  /** Hears the `Date` of every answer the venue wrote (see venue-time.ts): the venue clock's samples. */
  onVenueDate?: VenueDateSink;
}

/** Concatenated pages with their side resources merged and deduplicated by id. */
export interface AllOrders {
  data: OpenOrder[];
  included: Required<Included>;
}
export interface AllPositions {
  data: Position[];
  /** `as_of` of the first page: the listing is not an atomic snapshot, so this is its oldest time. */
  as_of?: string;
  included: Required<Included>;
}

type Query = Record<string, string | number | readonly string[] | undefined>;

const DEFAULT_MAX_PAGES = 1000;

export const REST_ENDPOINTS = {
  account: 'GET /v1/accounts/{address}',
  orders: 'GET /v1/accounts/{address}/orders',
  positions: 'GET /v1/accounts/{address}/positions',
  book: 'GET /v1/outcomes/{id}/book',
  stats: 'GET /v1/outcomes/{id}/stats',
  event: 'GET /v1/events/{id}',
  participants: 'GET /v1/participants',
  topic: 'GET /v1/topics/{topic_id}',
  series: 'GET /v1/series/{series_id}',
  providers: 'GET /v1/providers',
  templates: 'GET /v1/templates',
  health: 'GET /v1/health',
  scheduleCancel: `POST ${ASSUMED.restScheduleCancelPath}`,
} as const;

/**
 * What the keeper acts on in each read; everything else is read tolerantly (tolerant.ts). An
 * account's type decides how it is armed (a subaccount through `vaultAddress`): missing, `null` or
 * unknown is an error, never "main" by default. A page's `data` is counted (every element is an
 * order or position) and `next_cursor` decides whether more pages follow.
 */
const ACCOUNT_CONTRACT: ReadContract = { critical: [['account_type']], required: ['account_type'] };
const PAGE_CONTRACT: ReadContract = { critical: [['data'], ['data', '*'], ['next_cursor']], required: ['data'] };

/**
 * The typed REST client (spec part 4). Each method is one request through the transport: no
 * retries here. Non-2xx with the spec's envelope throws `RestError`, without one
 * `DecodeError('bad_status')`; a 2xx whose body is not what the spec promises throws `DecodeError`.
 */
export class RestClient {
  private readonly base: string;
  private readonly transport: HttpTransport;
  private readonly maxPages: number;
  private readonly defaultPageLimit: number;
  private readonly onVenueDate: VenueDateSink | undefined;

  constructor(opts: RestClientOptions) {
    const url = new URL(opts.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('baseUrl must be http(s)');
    if (url.search || url.hash) throw new TypeError('baseUrl must not carry a query or fragment');
    this.base = url.href.replace(/\/+$/, '');
    this.transport = opts.transport;
    this.onVenueDate = opts.onVenueDate;
    this.maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;
    this.defaultPageLimit = opts.defaultPageLimit ?? ASSUMED.defaultPageLimit;
  }

  getAccount(address: string, opts?: CallOptions): Promise<Account> {
    return this.get(REST_ENDPOINTS.account, { address }, {}, AccountSchema, opts, ACCOUNT_CONTRACT);
  }

  listOrders(address: string, query: ListOrdersQuery = {}, opts?: CallOptions): Promise<OrdersPage> {
    return this.get(REST_ENDPOINTS.orders, { address }, { ...query, include: includeList(query.include) }, OrdersPageSchema, opts, PAGE_CONTRACT);
  }

  listPositions(address: string, query: ListPositionsQuery = {}, opts?: CallOptions): Promise<PositionsPage> {
    return this.get(REST_ENDPOINTS.positions, { address }, { ...query, include: includeList(query.include) }, PositionsPageSchema, opts, PAGE_CONTRACT);
  }

  getBook(outcomeId: string, query: BookQuery = {}, opts?: CallOptions): Promise<OutcomeBook> {
    const include = query.include && query.include.length > 0 ? query.include.join(',') : undefined;
    return this.get(REST_ENDPOINTS.book, { id: outcomeId }, { depth: query.depth, include }, OutcomeBookSchema, opts);
  }

  getStats(outcomeId: string, opts?: CallOptions): Promise<OutcomeStats> {
    return this.get(REST_ENDPOINTS.stats, { id: outcomeId }, {}, OutcomeStatsSchema, opts);
  }

  getEvent(eventId: string, opts?: CallOptions): Promise<Event> {
    return this.get(REST_ENDPOINTS.event, { id: eventId }, {}, EventSchema, opts);
  }

  listParticipants(query: ListParticipantsQuery = {}, opts?: CallOptions): Promise<ParticipantsPage> {
    return this.get(REST_ENDPOINTS.participants, {}, { ...query }, ParticipantsPageSchema, opts, PAGE_CONTRACT);
  }

  getTopic(topicId: string, opts?: CallOptions): Promise<Topic> {
    return this.get(REST_ENDPOINTS.topic, { topic_id: topicId }, {}, TopicSchema, opts);
  }

  getSeries(seriesId: string, opts?: CallOptions): Promise<Series> {
    return this.get(REST_ENDPOINTS.series, { series_id: seriesId }, {}, SeriesSchema, opts);
  }

  listProviders(query: ListProvidersQuery = {}, opts?: CallOptions): Promise<ProvidersList> {
    return this.get(REST_ENDPOINTS.providers, {}, { ...query }, ProvidersListSchema, opts);
  }

  listTemplates(opts?: CallOptions): Promise<TemplatesList> {
    return this.get(REST_ENDPOINTS.templates, {}, {}, TemplatesListSchema, opts);
  }

  getHealth(opts?: CallOptions): Promise<Health> {
    return this.get(REST_ENDPOINTS.health, {}, {}, HealthSchema, opts);
  }

  /**
   * Arms or clears the switch through the REST trading path (ASSUMED: it takes the exchange body
   * and answers like the exchange). `status:"err"` throws `ActionError`, never resolves.
   */
  async scheduleCancel(body: SignedRequest<ScheduleCancelAction>, opts?: CallOptions): Promise<ActionOk> {
    const endpoint = REST_ENDPOINTS.scheduleCancel;
    const res = await this.send(endpoint, 'POST', this.url(endpoint, {}, {}), body, opts);
    return decodeWitnessed(res, this.onVenueDate, () => decodeActionResponse(endpoint, res));
  }

  // ---- pagination ----

  ordersPages(address: string, query: ListOrdersQuery = {}, opts?: CallOptions): AsyncGenerator<OrdersPage> {
    return this.pages(REST_ENDPOINTS.orders, query, (q) => this.listOrders(address, q, opts));
  }

  positionsPages(address: string, query: ListPositionsQuery = {}, opts?: CallOptions): AsyncGenerator<PositionsPage> {
    return this.pages(REST_ENDPOINTS.positions, query, (q) => this.listPositions(address, q, opts));
  }

  participantsPages(query: ListParticipantsQuery = {}, opts?: CallOptions): AsyncGenerator<ParticipantsPage> {
    return this.pages(REST_ENDPOINTS.participants, query, (q) => this.listParticipants(q, opts));
  }

  async allOrders(address: string, query: Omit<ListOrdersQuery, 'cursor'> = {}, opts?: CallOptions): Promise<AllOrders> {
    const data: OpenOrder[] = [];
    const merged = new IncludedMerger();
    for await (const page of this.ordersPages(address, query, opts)) {
      if (page.data) data.push(...page.data);
      merged.add(page.included);
    }
    return { data, included: merged.result() };
  }

  async allPositions(address: string, query: Omit<ListPositionsQuery, 'cursor'> = {}, opts?: CallOptions): Promise<AllPositions> {
    const data: Position[] = [];
    const merged = new IncludedMerger();
    let asOf: string | undefined;
    for await (const page of this.positionsPages(address, query, opts)) {
      if (page.data) data.push(...page.data);
      asOf ??= page.as_of;
      merged.add(page.included);
    }
    const out: AllPositions = { data, included: merged.result() };
    if (asOf !== undefined) out.as_of = asOf;
    return out;
  }

  /**
   * Follows `next_cursor` until it is absent or empty. A cursor seen before, or more than
   * `maxPages` pages, is a server bug that would otherwise loop forever: refused as `bad_shape`.
   */
  private async *pages<Q extends { cursor?: string; limit?: number }, P extends { next_cursor?: string }>(
    endpoint: string,
    query: Q,
    fetchPage: (q: Q) => Promise<P>,
  ): AsyncGenerator<P> {
    const seen = new Set<string>();
    let cursor = query.cursor;
    if (cursor !== undefined && cursor !== '') seen.add(cursor);
    const limit = query.limit ?? this.defaultPageLimit;
    for (let n = 1; ; n++) {
      if (n > this.maxPages) {
        throw new DecodeError(endpoint, 'bad_shape', `pagination exceeded ${this.maxPages} pages`);
      }
      const q: Q = { ...query, limit };
      if (cursor !== undefined && cursor !== '') q.cursor = cursor;
      else delete q.cursor;
      const page = await fetchPage(q);
      yield page;
      const next = page.next_cursor;
      if (next === undefined || next === '') return;
      if (seen.has(next)) {
        throw new DecodeError(endpoint, 'bad_shape', `next_cursor repeated an earlier cursor after page ${n}`);
      }
      seen.add(next);
      cursor = next;
    }
  }

  // ---- plumbing ----

  private async get<S extends z.ZodType>(
    endpoint: string,
    params: Record<string, string>,
    query: Query,
    schema: S,
    opts: CallOptions | undefined,
    contract: ReadContract = {},
  ): Promise<z.output<S>> {
    const res = await this.send(endpoint, 'GET', this.url(endpoint, params, query), undefined, opts);
    return decodeWitnessed(res, this.onVenueDate, () => decodeResponse(endpoint, res, schema, contract));
  }

  private send(endpoint: string, method: HttpMethod, url: string, json: unknown, opts: CallOptions | undefined) {
    return this.transport.request({
      endpoint,
      method,
      url,
      ...(json !== undefined ? { json } : {}),
      ...(opts?.signal ? { signal: opts.signal } : {}),
      ...(opts?.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
  }

  /** The concrete URL from the endpoint's own template, so the label and the path cannot disagree. */
  private url(endpoint: string, params: Record<string, string>, query: Query): string {
    const template = endpoint.slice(endpoint.indexOf(' ') + 1);
    const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const v = params[name];
      if (v === undefined) throw new TypeError(`missing path parameter ${name}`);
      return encodeSegment(name, v);
    });
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined) continue;
      if (typeof v === 'number') {
        if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${k} must be a non-negative integer`);
        qs.append(k, String(v));
      } else if (typeof v === 'string') {
        qs.append(k, v);
      } else {
        for (const item of v) qs.append(k, item);
      }
    }
    const s = qs.toString();
    return `${this.base}${path}${s ? `?${s}` : ''}`;
  }
}

/**
 * One path segment, percent-encoded. `.` and `..` are refused: URL parsing resolves them (even as
 * `%2E%2E`, per the WHATWG URL rules) and the request would go to a different resource.
 */
function encodeSegment(name: string, value: string): string {
  if (value === '' || value === '.' || value === '..') throw new TypeError(`path parameter ${name} must not be empty, "." or ".."`);
  return encodeURIComponent(value);
}

function includeList(include: IncludeKind | readonly IncludeKind[] | undefined): readonly string[] | undefined {
  if (include === undefined) return undefined;
  return typeof include === 'string' ? [include] : include;
}

/** Merges `included` across pages by id; a later page's copy replaces an earlier one in place. */
class IncludedMerger {
  private readonly outcomes = new Map<string, NonNullable<Included['outcomes']>[number]>();
  private readonly events = new Map<string, NonNullable<Included['events']>[number]>();
  private readonly anonOutcomes: NonNullable<Included['outcomes']> = [];
  private readonly anonEvents: NonNullable<Included['events']> = [];

  add(included: Included | undefined): void {
    for (const o of included?.outcomes ?? []) {
      if (o.id === undefined) this.anonOutcomes.push(o);
      else this.outcomes.set(o.id, o);
    }
    for (const e of included?.events ?? []) {
      if (e.id === undefined) this.anonEvents.push(e);
      else this.events.set(e.id, e);
    }
  }

  result(): Required<Included> {
    return {
      outcomes: [...this.outcomes.values(), ...this.anonOutcomes],
      events: [...this.events.values(), ...this.anonEvents],
    };
  }
}
