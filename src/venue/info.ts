import { ADDRESS_RE } from './address.js';
import { ASSUMED } from './assumptions.js';
import { errorForStatus, parseSuccessBody } from './decode.js';
import { DecodeError, RestError } from './errors.js';
import { VENUE_FACTS } from './facts.js';
import type { HttpResponse, HttpTransport } from './http.js';
import {
  decodeInfoClearinghouseState,
  decodeInfoExtraAgents,
  decodeInfoOpenOrders,
  decodeInfoSpotClearinghouseState,
  decodeInfoUserRateLimit,
  decodeInfoUserRole,
  INFO_REQUEST_TYPES,
  infoEndpoint,
  type InfoClearinghouseState,
  type InfoExtraAgent,
  type InfoOpenOrders,
  type InfoRequestType,
  type InfoSpotClearinghouseState,
  type InfoUserRateLimit,
  type InfoUserRole,
  type OpenOrdersType,
} from './info-decode.js';
import type { CallOptions } from './rest.js';
import { decodeWitnessed, type VenueDateSink } from './venue-time.js';

export interface InfoClientOptions {
  /** `{exchange_url}`; the client appends `/info`. */
  exchangeUrl: string;
  transport: HttpTransport;
  /** Hears the `Date` of every answer the venue wrote (see venue-time.ts): the venue clock's samples. */
  onVenueDate?: VenueDateSink;
  /** The request type open orders are read with; defaults to ASSUMED.infoOpenOrdersType. */
  openOrdersType?: OpenOrdersType;
}

/** Options of the reads that take a perp dex. */
export interface InfoDexOptions extends CallOptions {
  /**
   * A builder-deployed perp dex by name. Absent: the first perp dex, with spot (and, assumed,
   * outcome) orders: ASSUMED.infoDefaultDexIncludesSpotAndOutcomes.
   */
  dex?: string;
}

export interface InfoOpenOrdersOptions extends InfoDexOptions {
  /** This call's request type, overriding the client's current one (and never changing it). */
  type?: OpenOrdersType;
}

/**
 * The weight each info request the keeper sends spends of the IP's budget. The venue's published
 * figures are only defaults (VENUE_FACTS.infoWeights): `rate_limits.info_weights` overrides them
 * (src/config/schema.ts), and the port, the read plan and check-config all read this one table.
 */
export type InfoWeights = Readonly<Record<InfoRequestType, number>>;

/** The venue's published weight of one info request type, any the venue knows (the simulator charges these too). */
export function publishedWeight(type: string): number {
  const w = VENUE_FACTS.infoWeights;
  return Object.hasOwn(w.byType, type) ? (w.byType[type] as number) : w.other;
}

export const DEFAULT_INFO_WEIGHTS: InfoWeights = Object.freeze(Object.fromEntries(INFO_REQUEST_TYPES.map((t) => [t, publishedWeight(t)])) as Record<InfoRequestType, number>);

/** The weight one request of `type` spends of the IP's budget (the published default unless `weights` says otherwise). */
export function infoRequestWeight(type: InfoRequestType, weights: InfoWeights = DEFAULT_INFO_WEIGHTS): number {
  return weights[type];
}

/**
 * `POST {exchange_url}/info` with `{"type": ..., "user": "0x..."}`. One request per call, through the
 * one transport, no retries. A 2xx is decoded tolerantly (info-decode.ts), failing closed only on
 * what the keeper acts on; a non-2xx throws `RestError` when it carries the service's envelope (a
 * 429 always does, completed from `Retry-After`), else `DecodeError('bad_status')`; transport
 * failures are `TransportError`s. Every error's endpoint is `info:<type>`.
 */
export class InfoClient {
  private readonly url: string;
  private readonly transport: HttpTransport;
  private readonly onVenueDate: VenueDateSink | undefined;
  private currentOpenOrdersType: OpenOrdersType;

  constructor(opts: InfoClientOptions) {
    const u = new URL(opts.exchangeUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError('exchangeUrl must be http(s)');
    if (u.search || u.hash) throw new TypeError('exchangeUrl must not carry a query or fragment');
    this.url = `${u.href.replace(/\/+$/, '')}/info`;
    this.transport = opts.transport;
    this.onVenueDate = opts.onVenueDate;
    this.currentOpenOrdersType = opts.openOrdersType ?? ASSUMED.infoOpenOrdersType;
  }

  /** The type `openOrders()` sends when the call names none: the configured one, or the fallback once it was refused. */
  get openOrdersType(): OpenOrdersType {
    return this.currentOpenOrdersType;
  }

  /**
   * Every open order the scheduled cancel hits (on `dex`), and their count. When the client's own
   * type is refused with a 4xx other than 429 (the venue does not know it), the error is thrown and
   * later calls use ASSUMED.infoOpenOrdersFallbackType. Only a read of the default listing (no
   * `dex`) decides that: a refused read of a named dex may be the dex the venue refuses, not the type.
   */
  async openOrders(user: string, opts: InfoOpenOrdersOptions = {}): Promise<InfoOpenOrders> {
    const type = opts.type ?? this.currentOpenOrdersType;
    try {
      return await this.post(type, user, opts, (v, status) => decodeInfoOpenOrders(v, type, status));
    } catch (e) {
      if (opts.type === undefined && opts.dex === undefined && type !== ASSUMED.infoOpenOrdersFallbackType && refusesRequestType(e)) {
        this.currentOpenOrdersType = ASSUMED.infoOpenOrdersFallbackType;
      }
      throw e;
    }
  }

  /** Perp positions (`assetPositions[].position`), `marginSummary.accountValue`, `withdrawable`. */
  clearinghouseState(user: string, opts: InfoDexOptions = {}): Promise<InfoClearinghouseState> {
    return this.post('clearinghouseState', user, opts, decodeInfoClearinghouseState);
  }

  /** Spot balances (`balances[]`: coin, total, hold). */
  spotClearinghouseState(user: string, opts: InfoDexOptions = {}): Promise<InfoSpotClearinghouseState> {
    return this.post('spotClearinghouseState', user, opts, decodeInfoSpotClearinghouseState);
  }

  /** The address's role and, for a subaccount, its master. Weighs 60: read once per account, not per period. */
  userRole(user: string, opts: CallOptions = {}): Promise<InfoUserRole> {
    return this.post('userRole', user, opts, decodeInfoUserRole);
  }

  /** Cumulative volume (the scheduled cancel's gate) and the address's action budget. */
  userRateLimit(user: string, opts: CallOptions = {}): Promise<InfoUserRateLimit> {
    return this.post('userRateLimit', user, opts, decodeInfoUserRateLimit);
  }

  /** The account's approved (named) agents, with their expiry. */
  extraAgents(user: string, opts: CallOptions = {}): Promise<InfoExtraAgent[]> {
    return this.post('extraAgents', user, opts, decodeInfoExtraAgents);
  }

  private async post<T>(
    type: InfoRequestType,
    user: string,
    opts: InfoDexOptions,
    decode: (value: unknown, httpStatus: number) => T,
  ): Promise<T> {
    // Refused before sending: a malformed address would only cost weight for a 422.
    if (!ADDRESS_RE.test(user)) throw new TypeError('user must be a 0x address of 40 hex digits');
    const endpoint = infoEndpoint(type);
    const body: Record<string, string> = { type, user };
    if (opts.dex !== undefined) body.dex = opts.dex;
    const res = await this.transport.request({
      endpoint,
      method: 'POST',
      url: this.url,
      json: body,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
    return decodeWitnessed(res, this.onVenueDate, () => decodeInfoResponse(endpoint, res, decode));
  }
}

/** Status check, JSON parse, then the type's decoder. */
function decodeInfoResponse<T>(endpoint: string, res: HttpResponse, decode: (value: unknown, httpStatus: number) => T): T {
  if (res.status < 200 || res.status >= 300) throw errorForStatus(endpoint, res);
  return decode(parseSuccessBody(endpoint, res), res.status);
}

/** A 4xx other than 429: the venue (or a proxy) does not take this request, as opposed to being busy or down. */
function refusesRequestType(e: unknown): boolean {
  const status = e instanceof RestError ? e.httpStatus : e instanceof DecodeError && e.reason === 'bad_status' ? e.httpStatus : undefined;
  return status !== undefined && status >= 400 && status < 500 && status !== 429;
}
