/**
 * The app's view of the validated config (mapped by `from-config.ts`): its own file, so the
 * composition root (app.ts) and what it composes (venue.ts) do not import each other.
 */
import type { KeeperOptions } from '../keeper/keeper.js';
import type { LogFormat } from '../obs/logger.js';
import type { InfoWeights } from '../venue/info.js';
import type { DemoBotConfig } from './demo-bots.js';

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
    /** One budget with every instance of the same name, through Redis (sched/shared-budget.ts). */
    shared?: { redisUrl: string; name: string; fallbackShare: number; password?: () => Promise<string> };
    /** `rate_limits.info_weights`; absent: the venue's published weights. */
    infoWeights?: InfoWeights;
  };
  keeper: KeeperOptions;
  stateDir: string;
  listen: string;
  logLevel: string;
  /** `json` (default) for machines, `pretty` for people (log.format). */
  logFormat?: LogFormat;
  /** `demo.bots` (simulator only): heartbeating bots for `npm start` (demo-bots.ts). */
  demoBots?: DemoBotConfig[];
}
