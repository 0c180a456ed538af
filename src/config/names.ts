/**
 * Account names, without zod: the command line checks them too (`dms-keeper heartbeat --account`),
 * and a heartbeat sidecar should not load the config's schema library to do it.
 */

/** A metric label value: lower-case, starts with a letter or digit. */
export const ACCOUNT_NAME_RE = /^[a-z0-9][a-z0-9_.-]*$/;
export const ACCOUNT_NAME_MAX = 64;

/** `dms-keeper heartbeat`'s token: under the keeper's env prefix, but no config key (never an override). */
export const HEARTBEAT_TOKEN_ENV = 'DMS_KEEPER_HEARTBEAT_TOKEN';

/** The name of the top-level `venue:` (an account without `venue:` is on it; src/config/venues.ts). */
export { DEFAULT_VENUE_NAME } from '../venue/switch-facts.js';
import { DEFAULT_VENUE_NAME } from '../venue/switch-facts.js';

/** The venue an account names (its `venue:`), defaulted. */
export function venueNameOf(a: { venue?: string | undefined }): string {
  return a.venue ?? DEFAULT_VENUE_NAME;
}

/**
 * Whether an account is on a CLOB venue (`venues:`): it has no agent and no master key, so the
 * default venue's key, agent-slot and replication rules pass it by (rules.ts, venues.ts).
 */
export function isClobAccount(a: { venue?: string | undefined }): boolean {
  return venueNameOf(a) !== DEFAULT_VENUE_NAME;
}
