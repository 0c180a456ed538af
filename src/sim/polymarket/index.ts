/** The simulated Polymarket CLOB (mounted by ../simulator.ts under `/clob`). */
export { ClobVenue, CLOB_PREFIX, CLOB_ADMIN_PREFIX, END_CURSOR, INITIAL_CURSOR, CLOB_GENERAL_LIMIT, CLOB_CANCEL_ALL_LIMIT } from './clob.js';
export type { ClobVenueOptions, ClobRequest, ClobAccountCreds, ClobRateLimits } from './clob.js';
export type { HeartbeatFire } from './heartbeats.js';
export type { OpenOrder } from './orders.js';
export type { EnginePhase, RestartWindow } from './maintenance.js';
export { CLOB_PROFILES, parseClobProfile, UnknownClobProfileError } from './profiles.js';
export { ASSUMPTIONS as CLOB_ASSUMPTIONS, CLOB_TEXTS, type RestartHeartbeatMode } from './texts.js';
export { polyHmac } from './auth.js';
