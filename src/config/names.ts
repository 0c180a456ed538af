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
