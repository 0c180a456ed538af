/**
 * Polymarket CLOB facts the keeper relies on, each with where it comes from. What we merely assume
 * is in `POLYMARKET_ASSUMPTIONS` below, never here. `@polymarket/clob-client` 5.8.1 is the venue's
 * own TypeScript client (installed as a test-only oracle: test/polymarket-oracle.test.ts holds our
 * requests to it byte for byte).
 */

export const POLYMARKET_FACTS = {
  /** Heartbeat endpoint, as every official client posts it (clob-client dist/endpoints.js POST_HEARTBEAT; py-clob-client endpoints.py). */
  heartbeatPath: '/v1/heartbeats',
  /** The API reference's path for the same endpoint (docs.polymarket.com/api-reference/trade/send-heartbeat): the clients' path wins, see the assumptions. */
  heartbeatPathInApiReference: '/heartbeats',
  /** "if one isn't sent within 10s, all orders will be cancelled" (the postHeartbeat docstring of clob-client's client; py-clob-client client.py post_heartbeat). */
  heartbeatTimeoutMs: 10_000,
  /** The official examples beat every 5 s (clob-client examples/postHeartbeat.ts; py-clob-client examples/post_heartbeat.py; rs-clob-client default). */
  heartbeatExamplePeriodMs: 5_000,
  /** A stale `heartbeat_id` is answered 400 with this `error` text and the current id (clob-client-v2's client; py-clob-client examples/post_heartbeat.py). */
  staleHeartbeatError: 'Invalid Heartbeat ID',
  /** Open orders, L2-authenticated, signed over the path without its query (clob-client dist/endpoints.js GET_OPEN_ORDERS, client.js getOpenOrders). */
  openOrdersPath: '/data/orders',
  /** Server time in Unix seconds, unauthenticated (clob-client dist/endpoints.js TIME, client.js getServerTime). */
  serverTimePath: '/time',
  /** The first page's cursor, sent as `next_cursor` (clob-client dist/constants.js INITIAL_CURSOR). */
  initialCursor: 'MA==',
  /** `next_cursor` of the last page (clob-client dist/constants.js END_CURSOR). */
  endCursor: 'LTE=',
  /** CLOB "General" rate limit: 9,000 requests per 10 s; heartbeats have no row of their own (docs.polymarket.com/api-reference/rate-limits). */
  generalRateLimit: { requests: 9_000, windowMs: 10_000 },
  /** `GET /data/orders`: 500 requests per 10 s, within the general limit (same page, "Ledger"). */
  openOrdersRateLimit: { requests: 500, windowMs: 10_000 },
  /**
   * Past a limit Cloudflare throttles ("delayed/queued") rather than rejects (same page): a beat sent
   * over the limit may arrive late instead of failing, so the keeper's own pacing must keep under it.
   */
  rateLimitDelaysRatherThanRejects: true,
  /** The weekly matching-engine restart answers 425 on order endpoints (docs.polymarket.com/trading/matching-engine). */
  maintenanceHttpStatus: 425,
  /** L2 header names, in the order the client builds them (clob-client dist/headers/index.js createL2Headers). */
  l2HeaderNames: ['POLY_ADDRESS', 'POLY_SIGNATURE', 'POLY_TIMESTAMP', 'POLY_API_KEY', 'POLY_PASSPHRASE'] as const,
} as const;

/** Decided without a published source; change here (and the test that pins it) when the venue says. */
export const POLYMARKET_ASSUMPTIONS = {
  /**
   * The 10 s timeout runs from the venue's receipt of the last accepted heartbeat (the docstrings say
   * "within 10s" of nothing more precise); the keeper's horizon is that receipt plus the timeout.
   */
  timeoutFromVenueReceiptOfLastAcceptedBeat: true,
  /** `/v1/heartbeats` (the clients') is live, whatever the API reference's `/heartbeats` says. */
  clientsHeartbeatPathIsLive: true,
  /** A 200 may or may not carry the next `heartbeat_id` (the reference shows `{"status":"ok"}`): both are accepted. */
  acceptedAnswerMayOmitId: true,
  /** A 503 whose text says cancel-only is maintenance (the V2 cutover's window), any other 503 transient. */
  cancelOnly503IsMaintenance: true,
  /** One heartbeat chain per user: a second sender (the bot) makes the keeper's id stale. */
  oneChainPerUser: true,
  /** A page without `next_cursor` is the last one (the client would loop on it forever). */
  missingCursorEndsPages: true,
  /** Pages read before giving up on a cursor that never reaches the end cursor. */
  maxOpenOrderPages: 100,
} as const;
