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
} as const;
