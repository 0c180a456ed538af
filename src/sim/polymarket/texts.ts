/**
 * The Polymarket CLOB's answer texts as the simulator writes them, and every choice the simulator
 * makes where the venue's behaviour is not documented (ASSUMPTIONS): one place to read them all,
 * one place to change them when the venue is measured.
 *
 * Every CLOB error is a JSON object with an `error` string (the venue's error-codes page).
 */

/** Texts the venue's API reference, error-codes page or its clients' issue threads show verbatim. */
export const CLOB_TEXTS = {
  /** 401 on any L2 route: key unknown, passphrase or address mismatch, bad HMAC, stale timestamp. */
  unauthorized: 'Unauthorized/Invalid api key',
  /** 401 on the L1 routes (`/auth/api-key`, `/auth/derive-api-key`): a bad ClobAuth signature. */
  invalidL1: 'Invalid L1 Request headers',
  /** 400 from `POST /auth/api-key` when the (address, nonce) already has a key (clients then derive). */
  couldNotCreate: 'Could not create api key',
  /** 400 from `GET /auth/derive-api-key` when the (address, nonce) has no key. */
  couldNotDerive: 'Could not derive api key!',
  /**
   * 400 on a heartbeat whose id is not the chain's current one, under `error` (the venue's own
   * py-clob-client example); third-party clients parse `error_msg` (profile `pm_heartbeat_error_msg`).
   */
  invalidHeartbeat: 'Invalid Heartbeat ID',
  /** 400 on `POST /order` when `owner` is not the calling API key. */
  ownerMismatch: 'the order owner has to be the owner of the API KEY',
  /** 400 on `POST /order` when the order's `signer` is not the API key's address. */
  signerMismatch: 'the order signer address has to be the address of the API KEY',
  /** 400 on `POST /order` when the EIP-712 order signature does not recover its `signer`. */
  invalidSignature: 'invalid signature',
  /** 429 past a rate window. */
  tooManyRequests: 'Too Many Requests',
  /** 404 on a market read for a token the venue does not list. */
  marketNotFound: 'market not found',
  /** 400 on a query with a missing or malformed `token_id`. */
  invalidTokenId: 'Invalid token id',
  /** 400 on a body that is not the expected shape. */
  invalidPayload: 'Invalid order payload',
} as const;

/**
 * Choices where the venue says nothing; each is named so a test, the admin API or a profile can
 * point at it. "Stricter" means: the reading under which a keeper that copes also copes with the
 * other.
 */
export const ASSUMPTIONS = {
  /**
   * An L2 (and L1) request whose POLY_TIMESTAMP is further than this from the venue clock is
   * refused with the 401 above. The venue documents no window; 30 s is tighter than the few
   * minutes exchanges usually allow, so a keeper that passes here passes there.
   */
  timestampWindowSeconds: 30,
  /**
   * `heartbeat_id: null` (or `""`) while a chain is live: refused with 400 "Invalid Heartbeat ID"
   * carrying the live id (the client adopts it), rather than restarting the chain. The venue does
   * not say; restarting would let any second sender take the chain over silently, refusing makes
   * the fight visible. Switchable: `nullWhileLive: 'restart'`.
   */
  nullWhileLive: 'reject' as 'reject' | 'restart',
  /** The chain lapses this long after its last accepted heartbeat (SDK docstrings: "within 10s"). */
  heartbeatTimeoutMs: 10_000,
  /**
   * The `heartbeat_id` a 400 carries when no chain is running (after a lapse, or before the
   * first beat): the empty string, which the v2 clients send to start a chain.
   */
  idWhenNoChain: '',
  /**
   * During a matching-engine restart heartbeats are answered 425 like the order routes (not
   * documented). `lapse` (default, the stricter): the timeout keeps running, so a chain live when
   * the restart begins lapses 10 s after its last beat and the user's orders are cancelled.
   * `suspend`: the timeout is held; the chain keeps its id and lapses only 10 s after the engine is
   * back if no beat comes.
   */
  restartHeartbeats: 'lapse' as RestartHeartbeatMode,
  /** Reads of open orders (`GET /data/orders`) are answered 425 during a restart too (stricter). */
  restartBlocksReads: true,
  /** The answer text of a 425 (the venue documents the status only). */
  restartText: 'the matching engine is restarting, try again later',
  /** The answer text when a non-post-only order arrives in the post-only phase after a restart. */
  postOnlyText: 'the matching engine is in post-only mode: only post-only orders are accepted',
  /** Open orders per page of `GET /data/orders` (the venue does not publish its page size). */
  openOrdersPageSize: 500,
  /** `DELETE /order` on an order that is not open: its id in `not_canceled` with this reason. */
  notCanceledReason: 'order not found or already canceled',
  /** FOK / FAK orders: the simulator has no counterparties, so they never fill and are killed. */
  unfillableText: "order couldn't be fully filled. FOK orders are fully filled or killed.",
} as const;

export type RestartHeartbeatMode = 'lapse' | 'suspend';
