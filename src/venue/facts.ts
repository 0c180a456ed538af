/**
 * Venue facts published by Hyperliquid (docs and official SDKs), as collected in VENUE.md. Each
 * one the keeper relies on is pinned by a test. The things we merely assume live in
 * `assumptions.ts`, not here.
 */
import type { VenueSwitchFacts } from './switch-facts.js';

export const VENUE_FACTS = {
  /** scheduleCancel `time` must be at least this far after venue now. */
  scheduleCancelMinLeadMs: 5_000,
  /** Fired scheduled cancels allowed per account per UTC day (reset 00:00 UTC). */
  maxTriggersPerUtcDay: 10,
  /** Volume an account must have traded before scheduleCancel is accepted. */
  scheduleCancelVolumeGateUsd: 1_000_000,
  /** EIP-712 chain id of the L1 (phantom agent) domain. */
  l1ChainId: 1337,
  /** `signatureChainId` for user-signed actions, as the official SDK sends it. */
  userSignedChainId: '0x66eee' as const,
  /** Agent name length before the ` valid_until <ms>` suffix. */
  agentNameMaxChars: 16,
  /** Longest approval an agent may carry. */
  agentValidMaxDays: 180,
  /** How long `User has pending agent removal` lasts after a replacement. */
  pendingAgentRemovalMs: 5_000,
  namedAgentsPerMaster: 3,
  extraNamedAgentsPerSubaccount: 2,
  maxBuilderFeeApprovals: 10,
  /** Nonces: the venue keeps the 100 highest per signer. */
  nonceSetSize: 100,
  /** A nonce must lie in (T - 2 days, T + 1 day) of venue time. */
  nonceMaxAgeMs: 2 * 24 * 3600 * 1000,
  nonceMaxAheadMs: 24 * 3600 * 1000,
  /** The WebSocket server closes a connection silent this long; ping well before. */
  wsIdleCloseMs: 60_000,
  wsPingEveryMaxMs: 50_000,
  wsMaxConnectionsPerIp: 10,
  wsMaxUsersPerIp: 10,
  wsGreeting: 'Websocket connection established.',
  /** IP weight budget: 1200 per minute, an action weighs 1. */
  ipWeightPerMinute: 1200,
  /** Once the per-address action budget is spent: 1 action per 10 s. */
  addressBudgetExhaustedIntervalMs: 10_000,
  /**
   * Request weights against `ipWeightPerMinute` (1,200 per minute per IP, shared by `/info` and
   * `/exchange`), as the venue publishes them by default: an exchange action 1 (unbatched),
   * `clearinghouseState` and `spotClearinghouseState` 2, `userRole` 60, most other info requests
   * (`openOrders`, `frontendOpenOrders`, `userRateLimit`, `extraAgents`) 20. Defaults, not a
   * contract: the venue may change them, and a budget built on them should let config override.
   */
  infoWeights: {
    /** One unbatched `/exchange` action (a batch of n weighs 1 + floor(n / 40); we send none). */
    exchangeAction: 1,
    /** An info request whose type is not in `byType`. */
    other: 20,
    /** The info request types published with another weight (the keeper sends the first three). */
    byType: {
      clearinghouseState: 2,
      spotClearinghouseState: 2,
      userRole: 60,
      l2Book: 2,
      allMids: 2,
      orderStatus: 2,
      exchangeStatus: 2,
    } as Readonly<Record<string, number>>,
  },
} as const;

/** Hyperliquid's switch as the core sees it (switch-facts.ts): handed out by the port, never imported by the core. */
export const HYPERLIQUID_SWITCH_FACTS: VenueSwitchFacts = {
  kind: 'scheduled_cancel',
  minLeadMs: VENUE_FACTS.scheduleCancelMinLeadMs,
  maxTriggersPerUtcDay: VENUE_FACTS.maxTriggersPerUtcDay,
  addressBudgetExhaustedIntervalMs: VENUE_FACTS.addressBudgetExhaustedIntervalMs,
  pendingAgentRemovalMs: VENUE_FACTS.pendingAgentRemovalMs,
};
