import { readCredential, readKey, readPassword, readToken, type KeySource } from '../config/secret.js';
import { POLYMARKET_SWITCH_FACTS } from '../venue/polymarket/switch-facts.js';
import type { VenueSwitchFacts } from '../venue/switch-facts.js';
import { accountsCovered, replicaAgentName } from '../config/shard.js';
import { switchInMs, type AccountConfig, type Config, type LivenessConfig, type SharedBudgetConfig } from '../config/types.js';
import { replicaOnSilence, type LivenessSpec } from '../liveness/liveness.js';
import type { ForeignAccountSpec } from '../liveness/heartbeat-relay.js';
import type { AccountCover, KeeperAccountSpec } from '../account/keeper-types.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';
import type { AppConfig } from './app-config.js';
import type { DemoBotConfig } from './demo-bots.js';

/** A skew (local minus venue) beyond this is a loud error. Deadlines use venue time regardless. */
export const MAX_CLOCK_SKEW_MS = 2_000;

function describe(source: KeySource | undefined): string {
  if (!source) return '-';
  return source.kind === 'file' ? `file:${source.path}` : `env:${source.name}`;
}

/**
 * The app's view of a validated config: this shard's accounts, durations in ms, and key loaders
 * that read a key only when called (so the master key is not held between approvals).
 */
export function toAppConfig(config: Config, env: Readonly<Record<string, string | undefined>>): AppConfig {
  const relays = relaysHeartbeats(config);
  const specOf = (a: AccountConfig, cover: AccountCover): KeeperAccountSpec => accountSpec(a, cover, env, relays);
  const fleet = config.shard.fleet;
  // Static sharding: every account this instance covers, its shard's and with replication the
  // previous shard's too, each replica in the agent slot of its number. A fleet starts with none:
  // src/fleet/fleet.ts adds what the membership gives it (and what it held before a restart).
  const accounts: KeeperAccountSpec[] = fleet
    ? []
    : accountsCovered(config.accounts, config.shard).map(({ account, replica, shards }) =>
        // A lone instance (one shard) names no coverage.
        specOf(account, { replica, slot: replica, coveredBy: config.shard.count > 1 ? shards.map((s) => `shard-${s}`) : [] }),
      );
  const v = config.venue;
  const foreignAccounts = relays ? foreignHeartbeatAccounts(config, env, new Set(accounts.map((a) => a.name))) : undefined;
  const byName = new Map(config.accounts.map((a) => [a.name, a]));
  return {
    venue: {
      simulator: v.simulator,
      network: v.network,
      baseUrl: v.baseUrl ?? '',
      exchangeUrl: v.exchangeUrl ?? '',
      wsUrl: v.wsUrl ?? '',
      requestTimeoutMs: v.requestTimeoutMs,
    },
    rateLimits: {
      global: config.rateLimits.global,
      scheduleCancel: config.rateLimits.scheduleCancel,
      exchange: config.rateLimits.exchange,
      infoWeights: config.rateLimits.infoWeights,
      ...(config.rateLimits.shared ? { shared: sharedOf(config.rateLimits.shared, env) } : {}),
    },
    clobVenues: config.venues.map((cv) => ({ name: cv.name, clobUrl: cv.clobUrl ?? '', requestTimeoutMs: cv.requestTimeoutMs, rateLimit: cv.rateLimit })),
    keeper: {
      network: v.network,
      chainField: v.chainField,
      accounts,
      watch: {
        ordersEveryMs: config.watch.ordersEverySeconds * 1000,
        positionsEveryMs: config.watch.positionsEverySeconds * 1000,
        notifications: config.watch.notifications,
        source: config.watch.source,
        addressBudgetWarnShare: config.watch.addressBudgetWarnShare,
        perpDexes: [...config.watch.perpDexes],
      },
      maxClockSkewMs: MAX_CLOCK_SKEW_MS,
      triggerWarnAt: HYPERLIQUID_SWITCH_FACTS.maxTriggersPerUtcDay - 2,
      armBudgetPerSecond: config.rateLimits.scheduleCancel.requests / config.rateLimits.scheduleCancel.perSeconds,
      infoWeights: config.rateLimits.infoWeights,
      ...(foreignAccounts ? { foreignAccounts } : {}),
    },
    stateDir: config.stateDir,
    ...(fleet
      ? {
          fleet: {
            instance: fleet.instance,
            leaseMs: fleet.leaseSeconds * 1000,
            replication: config.shard.replication,
            fallbackShareFollows: fleet.fallbackShareFollows,
            candidates: config.accounts.map((a) => ({ name: a.name, address: a.address })),
            specOf: (name: string, cover: AccountCover) => {
              const a = byName.get(name);
              return a ? specOf(a, cover) : undefined;
            },
          },
        }
      : {}),
    ...(config.demo ? { demoBots: demoBotsOf(config, env) } : {}),
    listen: config.server.listen,
    logLevel: config.log.level,
    logFormat: config.log.format,
  };
}

/**
 * One account's keeper spec as this instance covers it: its agent in `cover.slot` (a configured
 * agent key is slot 0's; another slot generates and approves its own), and a silent bot's deadline
 * brought near by replica 0 only (liveness/liveness.ts replicaOnSilence).
 */
function accountSpec(a: AccountConfig, cover: AccountCover, env: Readonly<Record<string, string | undefined>>, relays: boolean): KeeperAccountSpec {
  if (a.clobCredentials) return clobAccountSpec(a, a.clobCredentials, cover, env, relays);
  const loader = (source: KeySource | undefined) => (source ? async () => (await readKey(source, { env })).reveal() : undefined);
  const { replica, slot } = cover;
  const agentName = replicaAgentName(a.agent.name, slot);
  return {
    name: a.name,
    address: a.address,
    agentName,
    validDays: a.agent.validDays,
    masterKey: loader(a.masterKey),
    agentKey: slot === 0 ? loader(a.agent.key) : undefined,
    builderFee: a.builderFee,
    priority: a.priority,
    replica,
    ...(cover.coveredBy.length > 0 ? { coveredBy: cover.coveredBy } : {}),
    identity: [a.address, agentName, describe(a.masterKey), slot === 0 ? describe(a.agent.key) : '-'].join('|'),
    switch: { ...switchInMs(a.switch), ...(a.liveness ? { onSilence: replicaOnSilence(a.liveness.onSilence, replica) } : {}) },
    ...(a.liveness ? { liveness: livenessOf(a.liveness, env, replica, relays && cover.coveredBy.length > 1) } : {}),
  };
}

/**
 * An account on a CLOB venue (src/config/venues.ts): its credentials read when its session opens, its
 * identity the credentials' sources (a rotated key is a new identity: the session is reopened), a
 * silent bot's heartbeats simply stopped (replicaOnSilence).
 */
function clobAccountSpec(
  a: AccountConfig,
  creds: NonNullable<AccountConfig['clobCredentials']>,
  cover: AccountCover,
  env: Readonly<Record<string, string | undefined>>,
  relays: boolean,
): KeeperAccountSpec {
  const read = (source: KeySource) => async () => (await readCredential(source, { env })).reveal();
  const { replica } = cover;
  const venue = POLYMARKET_SWITCH_FACTS;
  return {
    name: a.name,
    address: a.address,
    agentName: '-',
    validDays: a.agent.validDays,
    priority: a.priority,
    replica,
    ...(cover.coveredBy.length > 0 ? { coveredBy: cover.coveredBy } : {}),
    identity: [a.address, `clob:${a.venue}`, describe(creds.key), describe(creds.secret), describe(creds.passphrase)].join('|'),
    switch: { ...switchInMs(a.switch), ...(a.liveness ? { onSilence: replicaOnSilence(a.liveness.onSilence, replica, venue) } : {}) },
    ...(a.liveness ? { liveness: livenessOf(a.liveness, env, replica, relays && cover.coveredBy.length > 1, venue) } : {}),
    clob: { venue: a.venue, credentials: { key: read(creds.key), secret: read(creds.secret), passphrase: read(creds.passphrase) } },
  };
}

/**
 * The heartbeat relay (docs/liveness.md, "Fleets") runs when the instances share a Redis
 * (`rate_limits.shared`) and there is more than one shard: otherwise there is no other instance to
 * relay to, and a heartbeat for an account not held here stays unknown (404).
 */
export function relaysHeartbeats(config: Pick<Config, 'rateLimits' | 'shard'>): boolean {
  return config.rateLimits.shared !== undefined && (config.shard.count > 1 || config.shard.fleet !== undefined);
}

/**
 * The heartbeat accounts other instances hold: their tokens read like this instance's (when the
 * keeper starts or reloads, kept as digests). A fleet starts with every account here and narrows
 * the list as it gains accounts (src/fleet/fleet.ts).
 */
function foreignHeartbeatAccounts(config: Config, env: Readonly<Record<string, string | undefined>>, here: ReadonlySet<string>): ForeignAccountSpec[] {
  return config.accounts.flatMap((a) => {
    const source = a.liveness?.heartbeat?.token;
    if (here.has(a.name) || !a.liveness || !source) return [];
    return [{ name: a.name, silenceMs: a.liveness.silenceSeconds * 1000, token: tokenLoader(source, env) }];
  });
}

/** A heartbeat token, read each time it is asked for (a reload reads a rotated token). */
function tokenLoader(source: KeySource, env: Readonly<Record<string, string | undefined>>): () => Promise<string> {
  return async () => (await readToken(source, { env })).reveal();
}

/** An account's liveness in ms, with the heartbeat token read when the keeper starts or reloads (never held in the config). */
function livenessOf(l: LivenessConfig, env: Readonly<Record<string, string | undefined>>, replica = 0, echo = false, venue?: VenueSwitchFacts): LivenessSpec {
  const source = l.heartbeat?.token;
  return {
    silenceMs: l.silenceSeconds * 1000,
    onSilence: replicaOnSilence(l.onSilence, replica, venue),
    ...(echo ? { echo } : {}),
    ...(source ? { heartbeat: { token: tokenLoader(source, env) } } : {}),
    ...(l.probe ? { probe: { url: l.probe.url, everyMs: l.probe.everySeconds * 1000, timeoutMs: l.probe.timeoutMs } } : {}),
  };
}

/** `demo.bots`: each bot heartbeats with its accounts' token (one per bot: rules.ts demoProblems). */
function demoBotsOf(config: Config, env: Readonly<Record<string, string | undefined>>): DemoBotConfig[] {
  return config.demo!.bots.map((b) => {
    const source = config.accounts.find((a) => a.name === b.accounts[0])!.liveness!.heartbeat!.token;
    return {
      accounts: [...b.accounts],
      token: tokenLoader(source, env),
      ...(b.silentAfterSeconds !== undefined ? { silentAfterMs: b.silentAfterSeconds * 1000 } : {}),
      ...(b.silentForSeconds !== undefined ? { silentForMs: b.silentForSeconds * 1000 } : {}),
    };
  });
}

/** The shared budget's settings, with the password read only when the keeper starts. */
function sharedOf(shared: SharedBudgetConfig, env: Readonly<Record<string, string | undefined>>): NonNullable<AppConfig['rateLimits']['shared']> {
  const source = shared.password;
  return {
    redisUrl: shared.redisUrl,
    name: shared.name,
    fallbackShare: shared.fallbackShare,
    ...(source ? { password: async () => (await readPassword(source, { env })).reveal() } : {}),
  };
}
