/**
 * Every answer text the simulated venue produces, in one place.
 *
 * Texts quoted in VENUE.md (or seen verbatim from the live venue in public SDK test suites) are the
 * venue's own; the keeper classifies answers by their prefixes, so those prefixes must not drift.
 * The rest are **(assumed)**: the venue publishes no wording for them, so we chose plausible text
 * that keeps the documented prefix family where one exists. Change them here when the real wording
 * is known.
 */
import { VENUE_FACTS } from '../../venue/facts.js';

export const VENUE_TEXTS = {
  // ---- documented (VENUE.md) ----
  unknownSigner: (signer: string): string => `User or API Wallet ${signer} does not exist.`,
  /** The venue's own text: `Must deposit before performing actions. User: 0x…`. */
  mustDeposit: (user: string): string => `Must deposit before performing actions. User: ${user}`,
  actionExpired: 'Action already expired',
  pendingAgentRemoval: 'User has pending agent removal',
  volumeGate: (tradedUsd: number): string =>
    `Cannot set scheduled cancel time until enough volume traded. Required: $${VENUE_FACTS.scheduleCancelVolumeGateUsd}. Traded: $${formatUsd(tradedUsd)}.`,
  /** Seen verbatim from the live venue (nktkas/hyperliquid SDK tests). */
  tooEarly: 'Scheduled cancel time too early, must be at least 5 seconds from now.',
  /** Shape as seen from the live venue: `(used > budget) for cumulative volume traded $X. …`. */
  addressBudget: (used: number, budget: number, tradedUsd: number): string =>
    `Too many cumulative requests sent (${used} > ${budget}) for cumulative volume traded $${formatUsd(tradedUsd)}. Place taker orders to free up 1 request per USDC traded.`,

  /**
   * A body the venue cannot read, on `POST /info` (an unknown `type`, no `user`) or `POST /exchange`
   * (no `hyperliquidChain`, an unknown action type, a field of the wrong type): the venue answers 422
   * with this plain text, one JSON extractor serving both (its detail after the colon, which names the
   * serde error, is left out). Not in the official SDK (which only passes a 4xx text on); seen from
   * the live venue in public issue reports (ccxt/ccxt#26071, NoFxAiOS/nofx#63).
   */
  undeserializable: 'Failed to deserialize the JSON body into the target type',
  /** Seen from the live venue (SDK tests): a cancel of an order that is not open. */
  cancelMissingOrder: (asset: number): string => `Order was never placed, already canceled, or filled. asset=${asset}`,
  /** Seen from the live venue (SDK tests): an Ioc order with nothing to match. */
  iocNoMatch: (asset: number): string => `Order could not immediately match against any resting orders. asset=${asset}`,

  // ---- (assumed): the venue's wording is not published ----
  /** A user-signed action signed for the other network (its `hyperliquidChain`). */
  wrongChain: (signedFor: string, venue: string): string => `Invalid hyperliquidChain: the action is for ${signedFor} but this is ${venue}`,
  /** A signature no signer can be recovered from (r or s zero, out of range). */
  signatureUnrecoverable: 'Invalid signature: no signer can be recovered',
  /** An order on an asset id the venue does not list (the simulator lists outcome assets only). */
  unknownAsset: (asset: number): string => `Invalid asset: ${asset}`,
  /** An order whose price is not a positive decimal below 1 (an outcome side trades in (0, 1)). */
  badPrice: (asset: number): string => `Order has invalid price. asset=${asset}`,
  /** An order whose size is not a positive decimal. */
  badSize: (asset: number): string => `Order has invalid size. asset=${asset}`,
  /** A trigger (TP/SL) order on an outcome side: the simulator rests limit orders only. */
  triggerUnsupported: (asset: number): string => `Trigger orders are not supported for this asset. asset=${asset}`,
  /** A reduce-only order on an outcome side: the simulator keeps no reduce-only accounting. */
  reduceOnlyUnsupported: (asset: number): string => `Reduce only orders are not supported for this asset. asset=${asset}`,
  /** An order worth less than the outcome's minimum notional (the catalog's `trading.min_notional`). */
  minValue: (minUsd: string, asset: number): string => `Order must have minimum value of $${minUsd}. asset=${asset}`,
  /** An order naming a builder the account has not approved for at least that fee. */
  builderFeeNotApproved: 'Builder fee has not been approved.',
  tooManyTriggers: 'Too many scheduled cancel triggers today',
  nonceDuplicate: (nonce: number): string => `Invalid nonce: duplicate nonce ${nonce}`,
  nonceTooLow: (nonce: number, smallestKept: number): string =>
    `Invalid nonce: ${nonce} is not above the smallest of the ${VENUE_FACTS.nonceSetSize} highest nonces already used (${smallestKept})`,
  nonceOutOfWindow: (nonce: number, lowExclusive: number, highExclusive: number): string =>
    `Invalid nonce: ${nonce} is outside the allowed window (${lowExclusive}, ${highExclusive})`,
  vaultNotRegistered: (vault: string): string => `Vault not registered: ${vault}`,
  agentNameTooLong: `Invalid agent name: at most ${VENUE_FACTS.agentNameMaxChars} characters before " valid_until"`,
  agentValidUntilInvalid: `Invalid agent valid_until: must be in the future and at most ${VENUE_FACTS.agentValidMaxDays} days ahead`,
  agentSlotsFull: (max: number): string => `Too many named agents: at most ${max} for this user`,
  agentAddressReused: 'Agent address was already used and cannot be approved again',
  agentAddressInUse: 'Agent address is already approved for another user or under another name',
  agentAddressIsUser: 'Agent address cannot be an existing user',
  builderFeeLimit: `Too many builder fee approvals: at most ${VENUE_FACTS.maxBuilderFeeApprovals}`,
  /**
   * A weight-budget refusal (`ip_weight_*` budgets) **(assumed)**: what the venue sends on its IP
   * weight 429 is not published, so the simulator answers as the service's 429 (the RESTError
   * envelope with a `rate_limit` detail, scope `global`) with this message.
   */
  ipWeightExceeded: (limit: number, windowSeconds: number): string => `rate limit exceeded (IP weight ${limit} per ${windowSeconds} s)`,
} as const;

/** Push text for a fired scheduled cancel **(assumed)**: the venue's vocabulary is unpublished. */
export function scheduledCancelNotification(cancelled: number): string {
  return `Scheduled cancel triggered: ${cancelled} open order${cancelled === 1 ? '' : 's'} cancelled.`;
}

/** Whole dollars print bare ("250000"), anything else with cents ("4643.50"). */
export function formatUsd(usd: number): string {
  return Number.isInteger(usd) ? String(usd) : usd.toFixed(2);
}
