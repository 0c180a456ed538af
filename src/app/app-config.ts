/**
 * The app's view of the validated config (mapped by `from-config.ts`): its own file, so the
 * composition root (app.ts) and what it composes (venue.ts) do not import each other.
 */
import type { KeeperOptions } from '../keeper/keeper.js';
import type { AccountCover, KeeperAccountSpec } from '../account/keeper-types.js';
import type { LogFormat } from '../obs/logger.js';
import type { InfoWeights } from '../venue/info.js';
import type { DemoBotConfig } from './demo-bots.js';

/** A fleet's settings, and how to build the spec of an account it gains. */
export interface FleetConfig {
  instance: string;
  leaseMs: number;
  /** How many instances own each account: 1 or 2. */
  replication: number;
  /** `rate_limits.shared.fallback_share` unset: it follows the membership, 1 / live instances. */
  fallbackShareFollows: boolean;
  /** Every account of the config, in file order: the ones the membership may give this instance. */
  candidates: ReadonlyArray<{ name: string; address: string }>;
  /** The account's spec as this instance covers it; undefined for a name not in the config. */
  specOf(name: string, cover: AccountCover): KeeperAccountSpec | undefined;
}

/** What the app needs from the validated config (mapped by `from-config.ts`). */
export interface AppConfig {
  venue: {
    simulator: boolean;
    network: 'testnet' | 'mainnet';
    baseUrl: string;
    exchangeUrl: string;
    wsUrl: string;
    requestTimeoutMs: number;
  };
  rateLimits: {
    global: { requests: number; perSeconds: number };
    scheduleCancel: { requests: number; perSeconds: number };
    /** POST {exchange_url}/exchange: approvals and exchange-path arms (`rate_limits.exchange`). */
    exchange: { requests: number; perSeconds: number };
    /** One budget with every instance of the same name, through Redis (budget/shared-budget.ts). */
    shared?: { redisUrl: string; name: string; fallbackShare: number; password?: () => Promise<string> };
    /** `rate_limits.info_weights`; absent: the venue's published weights. */
    infoWeights?: InfoWeights;
  };
  keeper: KeeperOptions;
  /** `venues:` of kind polymarket_clob, in file order ([]: none); `clobUrl` '' under `venue.simulator` (the embedded simulator's is used). */
  clobVenues: Array<{ name: string; clobUrl: string; requestTimeoutMs: number; rateLimit: { requests: number; perSeconds: number } }>;
  stateDir: string;
  listen: string;
  logLevel: string;
  /** `json` (default) for machines, `pretty` for people (log.format). */
  logFormat?: LogFormat;
  /**
   * `shard.fleet`: the membership in the shared budget's Redis decides which accounts this
   * instance arms (src/fleet/fleet.ts); `keeper.accounts` then starts empty.
   */
  fleet?: FleetConfig;
  /** `demo.bots` (simulator only): heartbeating bots for `npm start` (demo-bots.ts). */
  demoBots?: DemoBotConfig[];
}
