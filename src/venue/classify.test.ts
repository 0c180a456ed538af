import { describe, expect, it } from 'vitest';
import { classifyActionError } from './classify.js';

describe('classifyActionError (VENUE.md table)', () => {
  it.each([
    ['Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $12.5.', 'ineligible'],
    ['User or API Wallet 0x0000000000000000000000000000000000000001 does not exist.', 'unknown_signer'],
    ['Must deposit before performing actions. User: 0xabc', 'unfunded'],
    ['Invalid nonce: duplicate nonce', 'invalid_nonce'],
    ['Too many cumulative requests sent (12000 > 10000) for cumulative volume traded $0.', 'address_budget'],
    ['User has pending agent removal', 'pending_agent_removal'],
    ['Action already expired', 'expired'],
    ['Too many scheduled cancel triggers today', 'trigger_cap'],
    ['Something new the venue just invented', 'other'],
    ['User or API Wallet is weird', 'other'],
    ['', 'other'],
  ] as const)('%s -> %s', (text, want) => {
    expect(classifyActionError(text)).toBe(want);
  });
});
