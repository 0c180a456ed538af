import { ASSUMED } from './assumptions.js';
import type { ActionReason } from './errors.js';

/**
 * HTTP-200 `{"status":"err","response":"<text>"}` answers, classified by prefix (VENUE.md).
 * Order matters only for readability: the prefixes are disjoint.
 */
const ACTION_ERROR_PREFIXES: ReadonlyArray<readonly [prefix: string, reason: ActionReason]> = [
  ['Cannot set scheduled cancel time', 'ineligible'],
  ['User or API Wallet', 'unknown_signer'],
  ['Must deposit before performing actions', 'unfunded'],
  ['Invalid nonce', 'invalid_nonce'],
  ['Too many cumulative requests sent', 'address_budget'],
  ['User has pending agent removal', 'pending_agent_removal'],
  ['Action already expired', 'expired'],
  [ASSUMED.triggerCapErrorPrefix, 'trigger_cap'],
];

export function classifyActionError(text: string): ActionReason {
  const t = text.trimStart();
  for (const [prefix, reason] of ACTION_ERROR_PREFIXES) {
    if (t.startsWith(prefix)) {
      // "User or API Wallet 0x… does not exist." is the unknown-signer case; other texts that
      // merely start alike stay unclassified rather than triggering a re-provision.
      if (reason === 'unknown_signer' && !t.includes('does not exist')) return 'other';
      return reason;
    }
  }
  return 'other';
}
