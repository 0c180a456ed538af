/**
 * Everything VENUE.md marks **(assumed)**, or that the spec leaves "not shown" and we had to decide,
 * in one place. When the venue's real behaviour is known, change it here (and the test that pins it).
 */
export const ASSUMED = {
  /**
   * `POST {base_url}/v1/trading/orders/schedule-cancel` takes exactly the exchange body
   * (`{action, nonce, signature, vaultAddress?, expiresAfter?}`) and answers with the same
   * `{"status":"ok"|"err"}` object, or with the spec's RESTError envelope on 400/429/500/503.
   */
  restScheduleCancelPath: '/v1/trading/orders/schedule-cancel',
  restScheduleCancelTakesExchangeBody: true,
  /** The exchange endpoint's errors other than `status:"err"` bodies (spec: "not shown"): any
   * non-2xx is treated as a transient server failure; a RESTError envelope there is decoded. */
  exchangeNon2xxIsTransient: true,
  /** Notification `data` is `{"notification": "<free text>"}`; the text is opaque (a hint only). */
  notificationTextField: 'notification',
  /** Responses larger than this are refused (no spec limit; our largest real page is far smaller). */
  maxResponseBytes: 8 * 1024 * 1024,
  /** A page size we ask for on orders/positions; the spec publishes no bounds. */
  defaultPageLimit: 100,
  /**
   * The venue's answer once an account's 10 daily triggers are spent is not published; we match
   * this prefix (the simulator answers `Too many scheduled cancel triggers today`).
   */
  triggerCapErrorPrefix: 'Too many scheduled cancel triggers',
  /**
   * How long a 429 holds its scope when neither the `rate_limit` detail nor `Retry-After` says (a
   * proxy's 429, an envelope cut short): long enough not to hammer, short against a 20 s minimum
   * horizon.
   */
  rateLimitRetryAfterDefaultSeconds: 5,
  /** The venue clock is read from `/v1/health` `as_of` and the HTTP `Date` header. */
  venueClockSources: ['health.as_of', 'http.date'] as const,
  // ---- the venue's info endpoint (`POST {exchange_url}/info`, src/venue/info.ts) ----
  /**
   * Open orders are read with `frontendOpenOrders` (every resting and trigger order, with its
   * children); `openOrders` lists the same orders with fewer fields. A venue or proxy that refuses
   * the preferred type with a 4xx other than 429 (Hyperliquid answers an unknown type with 422)
   * makes the client use `openOrders` from the next call on: one request per call, never a hidden
   * second one outside the budget.
   */
  infoOpenOrdersType: 'frontendOpenOrders' as 'frontendOpenOrders' | 'openOrders',
  infoOpenOrdersFallbackType: 'openOrders' as const,
  /**
   * The count the keeper acts on is the top-level list: a `frontendOpenOrders` entry's `children`
   * (the TP/SL orders attached to it) are listed at the top level too in the recorded answer, so
   * they are not counted again.
   */
  infoOpenOrdersCountTopLevel: true,
  /**
   * No `dex` in the request means the first perp dex, with spot (and, we assume, outcome) orders;
   * a builder-deployed perp dex (HIP-3) is listed only when asked by name. The scheduled cancel
   * hits them all, so the keeper reads the default listing plus one per dex of `watch.perp_dexes`
   * (`VenuePort.infoOpenOrders`, `infoPositions`) and sums them.
   */
  infoDefaultDexIncludesSpotAndOutcomes: true,
  /**
   * A `dex` the venue does not know (a typo in `watch.perp_dexes`, a dex not yet deployed) is
   * answered as one the account has nothing on: an empty open-orders list and no positions. The
   * venue documents no answer for it; were it an error instead, every read of the account would
   * fail closed (count unknown, so an `orders_open` account arms), never a partial count. The
   * simulator answers so (`src/sim/info-routes.ts`).
   */
  infoUnknownDexAnswersEmpty: true,
  /**
   * `userRole` answers `{"role": ...}` with one of these; a subaccount's master is `data.master`
   * (an agent's is `data.user`). Another role is kept as `unknown` with its text: never read as a
   * plain user.
   */
  infoUserRoles: ['user', 'agent', 'vault', 'subAccount', 'missing'] as const,
  infoSubAccountMasterField: 'master',
  /**
   * Numbers on the info endpoint come as JSON numbers (counts, ids, ms times) or decimal strings
   * (sizes, prices, USDC). Either form is read for both: an integer as a string of digits, a
   * decimal as a finite JSON number whose text is a plain decimal (a float has lost nothing the
   * keeper compares: a volume against a $1M gate, a count of requests).
   */
  infoNumbersEitherForm: true,
  // ---- HIP-4 outcomes ----
  /**
   * The merged Yes/No book: a listing may return one resting outcome order twice, as the primary
   * and as its dual (a buy of Yes at p is also the sell of No at 1 - p). The venue publishes no
   * field marking a dual; both carry the same order id (the venue's `oid`, the service's
   * `venue_order_id`), so the keeper counts one order per id (open orders, and what a fired cancel
   * left). An order without an id counts on its own.
   */
  outcomeDualSharesOid: true,
  /**
   * When a recurring outcome settles (every 15 minutes, daily at 06:00 UTC), its resting orders
   * are gone and no scheduled cancel fired: the venue counts no trigger. The keeper decides that a
   * cancel fired from its armed deadline passing (switch-machine.ts), never from orders vanishing;
   * orders gone before the deadline (a settlement, fills, the bot's own cancels) are not what a
   * fired cancel cancelled (reports.ts `cancelledOrders`).
   */
  settlementIsNoTrigger: true,
} as const;
