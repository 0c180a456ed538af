import { decodeActionResponse } from './decode.js';
import type { HttpTransport } from './http.js';
import { decodeWitnessed, type VenueDateSink } from './venue-time.js';
import type { CallOptions } from './rest.js';
import type {
  ActionOk,
  ApproveAgentAction,
  ApproveBuilderFeeAction,
  ScheduleCancelAction,
  SignedRequest,
} from './types.js';

/** The actions this client may post; a closed set keeps the endpoint label's cardinality bounded. */
export type ExchangeAction = ScheduleCancelAction | ApproveAgentAction | ApproveBuilderFeeAction;

export interface ExchangeClientOptions {
  /** `{exchange_url}`; the client appends `/exchange`. */
  exchangeUrl: string;
  transport: HttpTransport;
  /** Hears the `Date` of every answer the venue wrote (see venue-time.ts): the venue clock's samples. */
  onVenueDate?: VenueDateSink;
}

/** Every label `post` can produce, so metrics can pre-create them. */
export const EXCHANGE_ENDPOINTS = ['exchange:scheduleCancel', 'exchange:approveAgent', 'exchange:approveBuilderFee'] as const;
export type ExchangeEndpoint = (typeof EXCHANGE_ENDPOINTS)[number];

/** `exchange:scheduleCancel` etc.: the error endpoint and the metric label of one action kind. */
export function exchangeEndpoint(action: ExchangeAction): ExchangeEndpoint {
  return `exchange:${action.type}`;
}

/**
 * `POST {exchange_url}/exchange`. One request, no retries. `status:"ok"` resolves; `status:"err"`
 * (HTTP 200) throws `ActionError`; a non-2xx throws `RestError` when it carries the spec's
 * envelope, else `DecodeError('bad_status')`; any other body throws `DecodeError`.
 */
export class ExchangeClient {
  private readonly url: string;
  private readonly transport: HttpTransport;
  private readonly onVenueDate: VenueDateSink | undefined;

  constructor(opts: ExchangeClientOptions) {
    const u = new URL(opts.exchangeUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError('exchangeUrl must be http(s)');
    if (u.search || u.hash) throw new TypeError('exchangeUrl must not carry a query or fragment');
    this.url = `${u.href.replace(/\/+$/, '')}/exchange`;
    this.transport = opts.transport;
    this.onVenueDate = opts.onVenueDate;
  }

  async post(body: SignedRequest<ExchangeAction>, opts?: CallOptions): Promise<ActionOk> {
    const endpoint = exchangeEndpoint(body.action);
    const res = await this.transport.request({
      endpoint,
      method: 'POST',
      url: this.url,
      json: body,
      ...(opts?.signal ? { signal: opts.signal } : {}),
      ...(opts?.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
    return decodeWitnessed(res, this.onVenueDate, () => decodeActionResponse(endpoint, res));
  }
}
