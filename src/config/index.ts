/**
 * Configuration (DESIGN.md section 2): load and validate the YAML file, apply `DMS_KEEPER_*`
 * overrides, check key sources, shard the accounts (check-config's printout of the plan: src/cli/check-config-plan.ts).
 */
export { loadConfig, parseConfig, defaultStateDir, type LoadOptions, type ParseOptions } from './load.js';
export { ConfigError, formatProblem, formatProblems, type ConfigProblem } from './errors.js';
export { Secret, readKey, type KeySource, type KeyIo, type KeyFileStat } from './secret.js';
export { accountsForShard, shardOf } from './shard.js';
export { ENV_PREFIX, envVarFor, overridableScalars } from './env.js';
export {
  CONFIG_DEFAULTS,
  NETWORK_URLS,
  minDeadlineSeconds,
  DEADLINE_SAFETY_MARGIN_SECONDS,
  RETRIES_BEFORE_MIN_HORIZON,
  retrySlotSeconds,
  LOG_LEVELS,
} from './schema.js';
export type {
  Config,
  AccountConfig,
  SwitchConfig,
  VenueConfig,
  ProductionVenueConfig,
  SimulatorVenueConfig,
  RateLimit,
  Network,
  ArmWhen,
  OnShutdown,
  PathPolicy,
  LogLevel,
} from './types.js';
