import type { VenueSwitchFacts } from '../switch-facts.js';

/**
 * Polymarket's CLOB switch as the core sees it (venue/switch-facts.ts): a heartbeat. "If heartbeats
 * are started and one isn't sent within 10s, all orders will be cancelled" (the venue's own clients:
 * clob-client `postHeartbeat`, py-clob-client `post_heartbeat`). No minimum lead (there is no
 * deadline to ask for), no published daily limit on fires, no agents.
 */
export const POLYMARKET_HEARTBEAT_TIMEOUT_MS = 10_000;

export const POLYMARKET_SWITCH_FACTS: VenueSwitchFacts = {
  kind: 'heartbeat',
  minLeadMs: 0,
  // No published limit: the trigger warning never fires on this venue.
  maxTriggersPerUtcDay: Number.MAX_SAFE_INTEGER,
  addressBudgetExhaustedIntervalMs: 0,
  pendingAgentRemovalMs: 0,
  timeoutMs: POLYMARKET_HEARTBEAT_TIMEOUT_MS,
};
