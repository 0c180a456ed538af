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
   * `POST /info` with a body the venue cannot read (an unknown `type`, no `user`): the venue answers
   * 422 with this plain text. Not in the official SDK (which only passes a 4xx text on); seen from
   * the live venue in public issue reports (ccxt/ccxt#26071, NoFxAiOS/nofx#63).
   */
  infoUndeserializable: 'Failed to deserialize the JSON body into the target type',

  // ---- (assumed): the venue's wording is not published ----
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
