import type { ChainField } from '../venue/signing/user-signed.js';
import type { PathPolicy } from '../plan/cadence.js';
import type { InfoWeights } from '../venue/info.js';
import type { KeySource } from './secret.js';
import type { LOG_FORMATS, LOG_LEVELS } from './schema.js';

/**
 * The validated, fully defaulted configuration. camelCase throughout; durations keep the unit the
 * YAML uses (seconds, or ms where the key says so) in their names. Plain data (deep-frozen): no
 * key material, no functions, so it can be logged, compared on reload, and cloned.
 */
export type Network = 'testnet' | 'mainnet';
export type ArmWhen = 'always' | 'orders_open';
export type OnShutdown = 'keep' | 'clear';
/** `switch.path`: declared with the route planning that reads it (plan/cadence.ts). */
export type { PathPolicy };
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface SwitchConfig {
  deadlineSeconds: number;
  rearmEverySeconds: number;
  minHorizonSeconds: number;
  armWhen: ArmWhen;
  onShutdown: OnShutdown;
  path: PathPolicy;
}

/** The same settings in milliseconds, as the keeper runs with them: one mapping for the app and the plan. */
export function switchInMs(sw: SwitchConfig): { deadlineMs: number; rearmEveryMs: number; minHorizonMs: number; armWhen: ArmWhen; onShutdown: OnShutdown; path: PathPolicy } {
  return {
    deadlineMs: sw.deadlineSeconds * 1000,
    rearmEveryMs: sw.rearmEverySeconds * 1000,
    minHorizonMs: sw.minHorizonSeconds * 1000,
    armWhen: sw.armWhen,
    onShutdown: sw.onShutdown,
    path: sw.path,
  };
}

interface VenueCommon {
  network: Network;
  requestTimeoutMs: number;
  /** The network field's name in user-signed actions (`venue.chain_field`; venue/signing/user-signed.ts). */
  chainField: ChainField;
}

/** Production: every URL is known (exchange/ws default from the network), https/wss or loopback. */
export interface ProductionVenueConfig extends VenueCommon {
  simulator: false;
  /** Absent only with `watch.source: venue` and every account on `switch.path: exchange`: no service. */
  baseUrl?: string;
  exchangeUrl: string;
  wsUrl: string;
}

/**
 * Embedded simulator: the daemon starts it and uses ITS urls. URLs given in the file are kept
 * (so a file can flip between simulator and production) but are not meant to be used.
 */
export interface SimulatorVenueConfig extends VenueCommon {
  simulator: true;
  baseUrl?: string;
  exchangeUrl?: string;
  wsUrl?: string;
}

export type VenueConfig = ProductionVenueConfig | SimulatorVenueConfig;

/**
 * A named venue of `venues:` (src/config/venues.ts): Polymarket's CLOB, whose switch is a heartbeat.
 * The default venue, `venue:` above, is named DEFAULT_VENUE_NAME.
 */
export interface PolymarketVenueConfig {
  name: string;
  kind: 'polymarket_clob';
  /** Absent only with `venue.simulator: true` (the embedded simulator serves the CLOB). */
  clobUrl?: string;
  heartbeatEverySeconds: number;
  minHorizonSeconds: number;
  requestTimeoutMs: number;
  rateLimit: RateLimit;
}

export interface RateLimit {
  requests: number;
  perSeconds: number;
}

/** `rate_limits.shared`: one budget for every instance with the same name, kept in Redis. */
export interface SharedBudgetConfig {
  redisUrl: string;
  name: string;
  password?: KeySource;
  /** This instance's share while Redis is unreachable; default 1 / shard.count. */
  fallbackShare: number;
}

/** `liveness:` (docs/liveness.md). The token is a source, read when the keeper starts or reloads. */
export interface LivenessConfig {
  silenceSeconds: number;
  onSilence: 'cancel_soon' | 'stop_rearming';
  heartbeat?: { token: KeySource };
  probe?: { url: string; everySeconds: number; timeoutMs: number };
}

export interface AccountConfig {
  name: string;
  /** Lower-case. */
  address: `0x${string}`;
  /** Absent only when `agent.key` is given. Read it with `readKey`; it is not held here. */
  masterKey?: KeySource;
  agent: {
    name: string;
    key?: KeySource;
    validDays: number;
  };
  builderFee?: { builder: `0x${string}`; maxFeeRate: string };
  /** Effective settings: the top-level `switch:` with this account's `switch:` block on top. */
  switch: SwitchConfig;
  /** Which switch keys this account's own block set (for the plan and for messages). */
  switchOverrides: Array<keyof SwitchConfig>;
  /** Protected first (higher first, then config order) when the budget cannot arm everyone. */
  priority: number;
  /** Absent: re-armed for as long as the keeper runs, whatever its bot does. */
  liveness?: LivenessConfig;
  /** Its venue's name: DEFAULT_VENUE_NAME (`venue:`), or one of `venues:`. */
  venue: string;
  /** A `polymarket_clob` account's L2 API credentials, as sources (read when the keeper starts). */
  clobCredentials?: { key: KeySource; secret: KeySource; passphrase: KeySource };
}

export interface Config {
  /** The config file, when loaded from one. */
  source?: string;
  venue: VenueConfig;
  /** `venues:`, in file order ([] without the key: every account on `venue:`). */
  venues: PolymarketVenueConfig[];
  /** The top-level defaults; each account carries its effective copy. */
  switch: SwitchConfig;
  /**
   * `source`: where orders and positions are read (account/watcher.ts WatchSourceMode). `perpDexes`:
   * builder-deployed perp dexes read on the venue besides the default listing (`perp_dexes`).
   */
  watch: {
    ordersEverySeconds: number;
    positionsEverySeconds: number;
    notifications: boolean;
    source: 'service' | 'venue' | 'service_then_venue';
    addressBudgetWarnShare: number;
    perpDexes: string[];
  };
  /** `exchange`: POST {exchange_url}/exchange (approvals, and arms by the exchange route), a quota of its own. */
  rateLimits: { global: RateLimit; scheduleCancel: RateLimit; exchange: RateLimit; shared?: SharedBudgetConfig; infoWeights: InfoWeights };
  /** Every account in the file, in file order; `accountsForShard` picks this instance's. */
  accounts: AccountConfig[];
  /**
   * `fleet`: the live instances come from the shared budget's Redis (src/fleet/fleet.ts); `index`
   * and `count` are then unused (0 and 1). `fallbackShareFollows`: no `fallback_share` was set, so
   * it follows the membership (1 / live instances).
   */
  shard: { index: number; count: number; replication: number; fleet?: { instance: string; leaseSeconds: number; fallbackShareFollows: boolean } };
  /** As written, or `$STATE_DIRECTORY`, or `./state`; a relative path is relative to the working directory. */
  stateDir: string;
  /** `listen` as written; `host` without IPv6 brackets, ready for `server.listen(port, host)`. */
  server: { listen: string; host: string; port: number };
  log: { level: LogLevel; format: LogFormat };
  /** `demo:` (simulator only): the bots `npm start` runs; each bot's accounts share one token. */
  demo?: { bots: Array<{ accounts: string[]; silentAfterSeconds?: number; silentForSeconds?: number }> };
}
