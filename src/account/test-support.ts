import type { Logger } from 'pino';
import type { AccountState } from './keeper-types.js';

/**
 * For unit tests of the parts: a bare account record as the keeper holds one (account.ts), with
 * nothing provisioned or started; `over` sets the fields a test needs.
 */
export function bareAccount(spec: Partial<AccountState['spec']>, log: Logger, over: Partial<AccountState> = {}): AccountState {
  return {
    spec: spec as AccountState['spec'],
    log,
    provisionAttempts: 0,
    subscribed: false,
    removed: false,
    addressActions: { reading: false },
    everArmed: false,
    agentReady: () => undefined,
    ...over,
  };
}
