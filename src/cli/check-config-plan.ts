import { planBudget, planReads } from '../plan/budget-plan.js';
import type { ArmRoute } from '../venue/routes.js';
import { rearmsPerDay, type AccountVerdict, type ProtectionTier, type RouteBudgets } from '../plan/cadence.js';
import type { ColdStartOrder } from '../plan/cold-start.js';
import { instanceSpecOf } from '../budget/shared-share.js';
import { expectedLiveHeapMb, nodeOptionsFor } from '../config/memory.js';
import type { ConfigProblem } from '../config/errors.js';
import { isLoopbackHost } from '../config/rules.js';
import { horizonAfterOwnersLostSeconds, RETRIES_BEFORE_MIN_HORIZON, retriesThatFit, retrySlotSeconds } from '../plan/horizon.js';
import { accountsCovered } from '../config/shard.js';
import { DEFAULT_VENUE_NAME } from '../config/names.js';
import { clobVenuePlans, formatClobPlans, type ClobVenuePlan } from './check-config-clob.js';
import { switchInMs, type AccountConfig, type Config, type RateLimit, type SwitchConfig } from '../config/types.js';
import { HYPERLIQUID_SWITCH_FACTS, VENUE_FACTS } from '../venue/facts.js';
import { VENUE_CHAIN_FIELD, type ChainField } from '../venue/signing/user-signed.js';
import type { Network } from '../venue/types.js';
import { accountChecksWeightPerSecond, ADDRESS_BUDGET_READ_EVERY_MS, AGENT_CHECK_EVERY_MS, keeperReadDemand, MAX_READ_STRETCH, readWeightsOf, venueReadWeights, type PlanReadWeights } from '../plan/read-plan.js';

/**
 * The request plan `check-config` prints (DESIGN.md section 7): can this instance hold every
 * account's horizon within the client-side budget? Pure function of the config. Every figure the
 * keeper acts on (periods, routes, verdicts, tier, arms per scope, read stretch, the cold start's
 * order) comes from the keeper's own planner, plan/budget-plan.ts, fed from the config: the limits
 * configured, cut to `rate_limits.shared.fallback_share` when shards share one budget (the share
 * each plans on until their demands are known). This file adds the config's own warnings and text.
 *
 * Figures, per minute, for the accounts in this instance's shard:
 * - arms: sum over accounts of 60 / rearm_every_seconds. `arm_when: orders_open` accounts count
 *   in full: the plan must hold when every account has orders.
 * - reads: per account 60 / orders_every_seconds + 60 / positions_every_seconds, one page per
 *   poll (each further page of an account with many orders or positions costs one more).
 *   Notifications come over the WebSocket and cost no request budget.
 * - budgets: requests * 60 / per_seconds of `rate_limits.schedule_cancel`, `.global` and `.exchange`.
 *   The arms plan on the routes their accounts may use (schedule_cancel, the exchange endpoint, both
 *   for rest_then_exchange), never more than the global window both spend. The exchange endpoint
 *   is a quota of its own: the arms of `path: exchange` accounts, plus the approvals at start-up
 *   (one approveAgent per account without `agent.key`, one approveBuilderFee per `builder_fee`).
 *   The cold start counts those approvals and the first arms on every scope they spend, global
 *   included (a venue may count both in one window).
 * The keeper never refuses to protect over this arithmetic (plan/cadence.ts, planProtection): as
 * the accounts outgrow the budget, reads give way first (the plan shows the stretch they need; the
 * keeper's budget makes them wait behind arms and sheds them), then re-arm periods are stretched, then gives up the retry
 * reserve, then keeps every account armed with a horizon below its minimum, and only past that
 * protects the highest-priority accounts and reports the rest `over_budget`. The plan says which
 * of these it will be, per account; `check-config` exits 0 when every account keeps its minimum
 * horizon and 1 when some would not.
 */

/** Below this share of a budget left over, warn: retries after errors and 429s need room. */
export const LOW_HEADROOM_PERCENT = 20;
/** Warn when fewer than this many retries fit before an account's horizon reaches min_horizon. */
const FEW_RETRIES = RETRIES_BEFORE_MIN_HORIZON + 1;

export interface PlanAccount {
  name: string;
  address: string;
  switch: SwitchConfig;
  armsPerMinute: number;
  readsPerMinute: number;
  /** Venue actions each re-arm spends from the address's budget, per day (VENUE.md rate limits). */
  actionsPerDay: number;
  /** Retry slots that fit between the pre-re-arm horizon and min_horizon_seconds. */
  retriesThatFit: number;
  priority: number;
  /** The period the keeper will use (s); null when the account is left over_budget. */
  effectivePeriodSeconds: number | null;
  verdict: AccountVerdict;
  /** The route the plan puts its arms on (`rest_then_exchange`: REST while it has room). */
  route: ArmRoute;
}

export interface BudgetUse {
  budgetPerMinute: number;
  neededPerMinute: number;
  headroomPerMinute: number;
  /** headroom / budget * 100; negative when over. */
  headroomPercent: number;
}

export interface Plan {
  /** The venue's network and the network field's name in approvals (`venue.chain_field`): what the keeper signs. */
  venue: { network: Network; chainField: ChainField };
  shard: { index: number; count: number; replication: number; fleet?: { instance: string; leaseSeconds: number } };
  accountsTotal: number;
  /** The accounts this instance protects, of every venue (`accounts` is the default venue's rows; a CLOB venue's are counted in `clobVenues`). */
  accountsHere: number;
  accounts: PlanAccount[];
  armsPerMinute: number;
  readsPerMinute: number;
  scheduleCancel: BudgetUse;
  /** needed = arms + reads. */
  global: BudgetUse;
  /** needed = arms of the `path: exchange` accounts (approvals are one-off: `startupApprovals`). */
  exchange: BudgetUse;
  /**
   * The venue's info reads (`watch.source` venue or service_then_venue), by weight per minute on the
   * exchange budget: open orders (20) every orders period, clearinghouseState and
   * spotClearinghouseState (2 + 2) every positions period, the open orders and clearinghouseState
   * once more per dex of `watch.perp_dexes` (plan/read-plan.ts venueReadWeights). `onlyWhileServiceFails`: they are spent
   * only while the service fails (service_then_venue), so not counted in `exchange.needed`. Null:
   * reads from the service alone.
   */
  venueReads: { weightPerMinute: number; perAccount: number; onlyWhileServiceFails: boolean } | null;
  /**
   * service_then_venue: the open-orders reads (20 each, times 1 + perp dexes) of the `arm_when: orders_open` accounts,
   * which count on the venue while the service answers too (account/watcher.ts readOrders), by
   * weight per minute; in `exchange.needed`, and their service orders reads leave `global`. Null else.
   */
  ordersOpenOnVenue: { accounts: number; weightPerMinute: number } | null;
  /** The heap this shard's accounts need and the Node.js options to run it with (memory.ts). */
  memory: { liveHeapMb: number; nodeOptions: string };
  /** Most approvals (approveAgent, approveBuilderFee) this shard sends at start-up, on the exchange budget. */
  startupApprovals: number;
  /** The share of `rate_limits.shared` this instance plans on (1 when not shared): every budget above is cut to it. */
  budgetShare: number;
  /** The cold start's order (plan/cold-start.ts): interleaved, or just in time when approvals and first arms share one window. */
  coldStartOrder: ColdStartOrder;
  /**
   * How long a cold start takes at most: every approval and every first arm once, each on every
   * scope it spends (a venue may count both in one window: the global one bounds them together).
   */
  coldStartSeconds: number;
  /** Every account keeps its min horizon (check-config exits 0; else 1). */
  canHoldEveryHorizon: boolean;
  /** Each CLOB venue's own plan (config `venues:`; check-config-clob.ts); [] without. */
  clobVenues: ClobVenuePlan[];
  /** Which tier of the never-refuse plan the budget allows (plan/cadence.ts). */
  tier: ProtectionTier;
  /**
   * Reads stretched by this factor to fit beside the arms (1 = as configured): the service's in the
   * global budget, the venue's weight in the exchange budget (plan/read-plan.ts). Infinite: no room.
   */
  readStretch: number;
  /** Each account's read periods as the keeper will run them (stretched, at most MAX_READ_STRETCH times). */
  readPeriods: { ordersEverySeconds: number; positionsEverySeconds: number };
  /** The venue read weights in force (`rate_limits.info_weights`), per request. */
  readWeights: PlanReadWeights;
  /** The builder-deployed perp dexes each venue read covers besides the default listing (`watch.perp_dexes`). */
  perpDexes: string[];
  /** Budget arithmetic never makes a config invalid: always empty (kept for the loader's contract). */
  problems: ConfigProblem[];
  warnings: string[];
  /** Arms per minute the configured cadence would need (before any stretch). */
  configuredArmsPerMinute: number;
  /** The adaptive cadence: stretch 1 = as configured. */
  cadence: { stretch: number; capacityAccounts: number };
}

function perMinute(l: RateLimit): number {
  return (l.requests * 60) / l.perSeconds;
}

function use(budget: number, needed: number): BudgetUse {
  const headroom = budget - needed;
  return { budgetPerMinute: budget, neededPerMinute: needed, headroomPerMinute: headroom, headroomPercent: (headroom / budget) * 100 };
}

export function buildPlan(config: Config): Plan {
  return buildPlanWith(config);
}

/**
 * The planner's inputs as check-config knows them: the configured limits (per second), cut to the
 * planning share of a shared budget; the keeper's are the scheduler's, cut the same way.
 */
export function configuredLimits(config: Config): { limits: RouteBudgets; share: number } {
  const shared = config.rateLimits.shared;
  const share = shared ? shared.fallbackShare : 1;
  const rate = (l: RateLimit): number => {
    if (!shared) return perMinute(l) / 60;
    // What the shared bucket lets out, this instance's share of it (as its scheduler runs).
    const spec = instanceSpecOf({ limit: l.requests, windowMs: l.perSeconds * 1000 }, share);
    return (spec.limit * 1000) / spec.windowMs;
  };
  return { limits: { global: rate(config.rateLimits.global), rest: rate(config.rateLimits.scheduleCancel), exchange: rate(config.rateLimits.exchange) }, share };
}

function buildPlanWith(config: Config): Plan {
  // Every account this instance arms: with replication its shard's and the previous shard's.
  // The default venue's accounts: a CLOB venue's are planned on their own budget (check-config-clob.ts).
  const everyVenue = accountsCovered(config.accounts, config.shard);
  const covered = everyVenue.filter((c) => c.account.venue === DEFAULT_VENUE_NAME);
  const clobVenues = clobVenuePlans(config, everyVenue.map((c) => c.account));
  const mine = covered.map((c) => c.account);
  const readsEach = 60 / config.watch.ordersEverySeconds + 60 / config.watch.positionsEverySeconds;
  const timeoutMs = config.venue.requestTimeoutMs;
  const { limits, share } = configuredLimits(config);
  // A second replica always approves an agent of its own (src/config/shard.ts replicaAgentName).
  const startupApprovals = covered.reduce((n, c) => n + (c.account.agent.key && c.replica === 0 ? 0 : 1) + (c.account.builderFee ? 1 : 0), 0);
  // Each account's venue's switch facts: the configured venue is Hyperliquid's, the value the port hands the keeper.
  const inputs = mine.map((a) => ({ ...switchInMs(a.switch), path: a.switch.path, priority: a.priority, venue: HYPERLIQUID_SWITCH_FACTS }));
  // What the keeper runs once every account is armed, and the cold start before it. The configured
  // limits are always known, so both plans come back.
  const steady = planBudget({ accounts: inputs, limits, provisioning: null })!;
  const coldStart = planBudget({ accounts: inputs, limits, provisioning: mine.length > 0 ? { approvalsLeft: startupApprovals, firstArmsLeft: mine.length } : null })!.coldStart;
  const accounts: PlanAccount[] = covered.map(({ account: a, shards }, i) => {
    const period = steady.periodsMs[i] ?? null;
    return {
      name: a.name,
      address: a.address,
      switch: a.switch,
      armsPerMinute: period === null ? 0 : 60_000 / period,
      readsPerMinute: readsEach,
      // Every replica's re-arms spend the same address budget.
      actionsPerDay: period === null ? 0 : rearmsPerDay(period, config.shard.fleet ? config.shard.replication : shards.length),
      retriesThatFit: retriesThatFit(a.switch, timeoutMs),
      priority: a.priority,
      effectivePeriodSeconds: period === null ? null : period / 1000,
      verdict: steady.verdicts[i]!,
      route: steady.routes[i]!,
    };
  });
  const configuredArms = mine.reduce((s, a) => s + 60 / a.switch.rearmEverySeconds, 0);
  // Reads from the venue spend the exchange budget by weight, not the service's global window
  // (plan/read-plan.ts, which the keeper plans its read periods with too).
  const source = config.watch.source;
  const readWeights = readWeightsOf(config.rateLimits.infoWeights);
  const periods = { ordersEveryMs: config.watch.ordersEverySeconds * 1000, positionsEveryMs: config.watch.positionsEverySeconds * 1000 };
  const perpDexes = config.watch.perpDexes.length;
  const ordersOpenOnVenue = source === 'service_then_venue' ? mine.filter((a) => a.switch.armWhen === 'orders_open').length : 0;
  const mix = { accounts: mine.length, ordersOnVenue: ordersOpenOnVenue, fallenBack: 0 };
  const demand = keeperReadDemand(source, readWeights, mix, periods, perpDexes);
  // Per account: (1 + perp dexes) open-orders reads every orders period, (1 + perp dexes)
  // clearinghouseState reads and one spotClearinghouseState every positions period.
  const perRead = venueReadWeights(readWeights, perpDexes);
  const ordersOpenVenueWeightPerMinute = ordersOpenOnVenue * perRead.orders * (60 / config.watch.ordersEverySeconds);
  const configuredReads = demand.globalPerSecond * 60;
  const checkReadsEach = accountChecksWeightPerSecond(readWeights) * 60;
  const venueReadsEach = (60 / config.watch.ordersEverySeconds) * perRead.orders + (60 / config.watch.positionsEverySeconds) * perRead.positions + checkReadsEach;
  const venueReads = source === 'service' ? null : { weightPerMinute: venueReadsEach * mine.length, perAccount: venueReadsEach, onlyWhileServiceFails: source === 'service_then_venue' };
  // Reads take what the arms leave (of the global budget for the service's, of the exchange budget
  // for the venue's weight): every read period stretched by one factor, before any arm is.
  const readStretch = planReads(steady, limits, { source, weights: readWeights, mix, periods, perpDexes });
  const fits = (x: number): number => (Number.isFinite(readStretch) ? x / readStretch : 0);
  for (const a of accounts) a.readsPerMinute /= Math.min(MAX_READ_STRETCH, readStretch);
  const arms = steady.armsPerSecond * 60;
  const reads = fits(configuredReads);
  const scheduleCancel = use((limits.rest ?? 0) * 60, steady.armsByScope.rest * 60);
  const global = use((limits.global ?? 0) * 60, arms + reads);
  const exchange = use((limits.exchange ?? 0) * 60, steady.armsByScope.exchange * 60 + fits(demand.exchangeWeightPerSecond * 60));
  return {
    venue: { network: config.venue.network, chainField: config.venue.chainField },
    shard: { index: config.shard.index, count: config.shard.count, replication: config.shard.replication, ...(config.shard.fleet ? { fleet: { instance: config.shard.fleet.instance, leaseSeconds: config.shard.fleet.leaseSeconds } } : {}) },
    accountsTotal: config.accounts.length,
    accountsHere: everyVenue.length,
    accounts,
    armsPerMinute: arms,
    configuredArmsPerMinute: configuredArms,
    cadence: { stretch: steady.stretch, capacityAccounts: steady.capacityAccounts },
    readsPerMinute: reads,
    scheduleCancel,
    global,
    exchange,
    venueReads,
    ordersOpenOnVenue: ordersOpenOnVenue > 0 ? { accounts: ordersOpenOnVenue, weightPerMinute: ordersOpenVenueWeightPerMinute } : null,
    startupApprovals,
    budgetShare: share,
    coldStartOrder: coldStart.order,
    coldStartSeconds: coldStart.estimateSeconds,
    memory: { liveHeapMb: Math.ceil(expectedLiveHeapMb(accounts.length)), nodeOptions: nodeOptionsFor(accounts.length) },
    canHoldEveryHorizon: steady.verdicts.every((v) => v === 'keeps_min_horizon') && clobVenues.every((v) => v.holds),
    clobVenues,
    tier: steady.tier,
    readStretch,
    readPeriods: readPeriodsOf(config, readStretch),
    readWeights,
    perpDexes: [...config.watch.perpDexes],
    problems: [],
    warnings: [...planWarnings(config, everyVenue.length, mine, accounts, scheduleCancel, global, exchange), ...venueReadWarnings(venueReads, exchangeArmsPerMinute(accounts, venueReads?.onlyWhileServiceFails ?? false), exchange.budgetPerMinute)],
  };
}

/**
 * Arms a minute on the exchange endpoint: those the plan routes there (`path: exchange`, and the
 * `rest_then_exchange` ones REST has no room for), and while the service fails (`serviceDown`) every
 * `rest_then_exchange` one (its REST route is the service's).
 */
function exchangeArmsPerMinute(accounts: readonly PlanAccount[], serviceDown: boolean): number {
  return accounts.filter((a) => a.route === 'exchange' || (serviceDown && a.switch.path === 'rest_then_exchange')).reduce((s, a) => s + a.armsPerMinute, 0);
}

/** Venue reads that, with the exchange arms, outgrow the exchange budget: their periods are stretched. */
function venueReadWarnings(reads: Plan['venueReads'], exchangeArms: number, budget: number): string[] {
  if (!reads || reads.weightPerMinute + exchangeArms <= budget) return [];
  return [
    `venue reads need ${num(reads.weightPerMinute)} weight a minute${reads.onlyWhileServiceFails ? ' while the service fails' : ''} beside ${num(exchangeArms)} exchange arms, over the exchange budget of ${num(budget)}: ` +
      `the keeper stretches every read period to fit (at most x${MAX_READ_STRETCH}, then reads wait behind arms and the rest are shed); lengthen watch.orders_every_seconds to choose the period yourself`,
  ];
}

/** A per-dex request's weight as one read spends it: `20`, or `20 x 3` with two perp dexes. */
function perDex(plan: Plan, weight: number): string {
  return plan.perpDexes.length === 0 ? `${weight}` : `${weight} x ${1 + plan.perpDexes.length}`;
}

/** Which dexes the `x n` of perDex counts. */
function dexesNote(plan: Plan): string {
  return plan.perpDexes.length === 0 ? '' : `; x ${1 + plan.perpDexes.length}: the first perp dex and ${plan.perpDexes.join(', ')}`;
}

function readPeriodsOf(config: Config, stretch: number): Plan['readPeriods'] {
  const k = Math.min(MAX_READ_STRETCH, stretch);
  return { ordersEverySeconds: config.watch.ordersEverySeconds * k, positionsEverySeconds: config.watch.positionsEverySeconds * k };
}

function planWarnings(config: Config, accountsHere: number, mine: AccountConfig[], accounts: PlanAccount[], sc: BudgetUse, gl: BudgetUse, ex: BudgetUse): string[] {
  const w: string[] = [];
  const names = (list: Array<{ name: string }>): string => list.map((a) => a.name).join(', ');

  const fleet = config.shard.fleet;
  if (fleet) {
    // Both owners of an account lost at once (or replication 1): its arms stand while the lease
    // ends and the next step gives it new owners, who still have to approve and arm.
    const short = mine.filter((a) => horizonAfterOwnersLostSeconds(a.switch, fleet.leaseSeconds) < a.switch.minHorizonSeconds);
    if (short.length > 0) {
      w.push(
        `shard.fleet.lease_seconds ${fleet.leaseSeconds}: for ${names(short)} deadline - rearm_every - lease - lease / 3 is below min_horizon, so an account whose owners are all lost at once ` +
          '(replication 1, or two instances stopped together) falls below its minimum horizon before a new owner can arm it. Shorten the lease or lengthen deadline_seconds',
      );
    }
  } else if (config.shard.replication > config.shard.count) {
    w.push(`shard.replication is ${config.shard.replication} but shard.count is ${config.shard.count}: with fewer instances than replicas each account is armed by ${config.shard.count} (losing this instance leaves its accounts to their last deadline)`);
  }
  if (!fleet && config.accounts.length > 0 && accountsHere === 0) {
    w.push(`shard ${config.shard.index} of ${config.shard.count} holds none of the ${config.accounts.length} accounts: this instance protects nothing`);
  }
  const clear = mine.filter((a) => a.switch.onShutdown === 'clear');
  if (clear.length > 0) {
    // Whether another instance protects the same account cannot be seen from one config file.
    w.push(
      `on_shutdown: clear for ${names(clear)}: a clean stop of this instance disarms them; if another instance protects the same ` +
        'account (active-active), that disarms its peer too. Use keep for any account another instance may share',
    );
  }
  if (config.watch.perpDexes.length > 0 && config.watch.source === 'service') {
    w.push(
      `watch.perp_dexes (${config.watch.perpDexes.join(', ')}) is read on the venue only: with watch.source service the keeper never reads it, ` +
        'and orders on those dexes are not counted; use venue or service_then_venue',
    );
  }
  const tight = accounts.filter((a) => a.retriesThatFit < FEW_RETRIES);
  if (tight.length > 0) {
    const slot = retrySlotSeconds(config.venue.requestTimeoutMs);
    w.push(
      `rearm_every_seconds is close to the limit for ${tight.map((a) => `${a.name} (${a.retriesThatFit} retries)`).join(', ')}: ` +
        `only that many retries of ${num(slot)} s fit before the horizon falls to min_horizon_seconds`,
    );
  }
  for (const [label, u] of [
    ['rate_limits.schedule_cancel', sc],
    ['rate_limits.global', gl],
    ['rate_limits.exchange', ex],
  ] as const) {
    // Reads stretched to fit leave exactly LOW_HEADROOM_PERCENT (read-plan.ts READ_UTILISATION), give or take rounding.
    if (u.headroomPerMinute >= 0 && u.headroomPercent < LOW_HEADROOM_PERCENT - 1e-6) {
      w.push(`${label}: only ${num(u.headroomPercent)}% headroom; retries after errors and 429s need spare budget`);
    }
  }
  if (gl.budgetPerMinute > VENUE_FACTS.ipWeightPerMinute) {
    w.push(
      `rate_limits.global allows ${num(gl.budgetPerMinute)} requests per minute, above the venue's ${VENUE_FACTS.ipWeightPerMinute} weight per minute per IP ` +
        '(exchange endpoint); the venue will answer 429',
    );
  }
  if (ex.budgetPerMinute > VENUE_FACTS.ipWeightPerMinute) {
    w.push(
      `rate_limits.exchange allows ${num(ex.budgetPerMinute)} requests per minute, above the venue's published ${VENUE_FACTS.ipWeightPerMinute} weight per minute per IP: ` +
        'right only when your venue tier grants more; otherwise the venue will answer 429',
    );
  }
  const envKeys = mine.flatMap((a) =>
    [a.masterKey, a.agent.key].flatMap((k) => (k?.kind === 'env' ? [`${a.name} (${k.name})`] : [])),
  );
  if (envKeys.length > 0) {
    w.push(`keys from environment variables for ${envKeys.join(', ')}: prefer files (systemd LoadCredential=); the environment leaks to child processes and /proc`);
  }
  const agentFiles = new Map<string, string[]>();
  for (const a of mine) {
    if (a.agent.key?.kind === 'file') agentFiles.set(a.agent.key.path, [...(agentFiles.get(a.agent.key.path) ?? []), a.name]);
  }
  for (const [, users] of agentFiles) {
    if (users.length > 1) w.push(`accounts ${users.join(', ')} share one agent key file: nonces are per signer, give each account its own agent`);
  }
  if (!isLoopbackHost(config.server.host)) {
    w.push(`server.listen ${config.server.listen} is not loopback: /status and / have no authentication; expose only /metrics, behind a firewall`);
  }
  if (config.venue.chainField !== VENUE_CHAIN_FIELD) {
    w.push(
      `venue.chain_field is ${config.venue.chainField}: approvals name the network the way the outcome service's spec does; ` +
        `the venue's own exchange endpoint refuses them (it signs and reads ${VENUE_CHAIN_FIELD}): use it only for a service that speaks that dialect`,
    );
  }
  if (config.venue.simulator && (config.venue.baseUrl ?? config.venue.exchangeUrl ?? config.venue.wsUrl) !== undefined) {
    w.push("venue.simulator is true: base_url, exchange_url and ws_url are ignored; the embedded simulator's URLs are used");
  }
  return w;
}

/** Human text for `check-config`. */
export function formatPlan(plan: Plan): string {
  const lines: string[] = [];
  const fleet = plan.shard.fleet;
  if (fleet) {
    lines.push(
      `Fleet instance ${fleet.instance} (shard.fleet, lease ${fleet.leaseSeconds} s): ${plan.accountsHere} of ${plan.accountsTotal} account${plan.accountsTotal === 1 ? '' : 's'} protected here as the last instance standing; ` +
        `the live instances share them, each account armed by ${plan.shard.replication} of them, so with N instances each holds about ${plan.shard.replication} / N. ` +
        'The figures below are for the last instance standing (the fleet down to one, or a first start without Redis).',
    );
  } else {
    lines.push(
      `Shard ${plan.shard.index} of ${plan.shard.count}: ${plan.accountsHere} of ${plan.accountsTotal} account${plan.accountsTotal === 1 ? '' : 's'} protected here` +
        (plan.shard.replication > 1 ? ` (replication ${plan.shard.replication}: shard ${plan.shard.index}'s and shard ${(plan.shard.index - 1 + plan.shard.count) % plan.shard.count}'s, each also armed by one other instance).` : '.'),
    );
  }
  const { network, chainField } = plan.venue;
  lines.push(
    `Venue ${network}: approvals (approveAgent, approveBuilderFee) carry and sign the network as ${chainField}` +
      (chainField === VENUE_CHAIN_FIELD ? " (the venue's own name; venue.chain_field)." : " (the spec's dialect, venue.chain_field; the venue itself refuses it)."),
  );
  if (plan.accounts.length > 0) {
    const header = ['account', 'address', 'rearm', 'effective', 'deadline', 'min horizon', 'priority', 'verdict', 'retries', 'path', 'arm when', 'on shutdown', 'arms/min', 'reads/min'];
    const rows = plan.accounts.map((a) => [
      a.name,
      a.address,
      `${a.switch.rearmEverySeconds} s`,
      a.effectivePeriodSeconds === null ? '-' : `${num(a.effectivePeriodSeconds)} s`,
      `${a.switch.deadlineSeconds} s`,
      `${a.switch.minHorizonSeconds} s`,
      String(a.priority),
      a.verdict,
      String(a.retriesThatFit),
      a.switch.path,
      a.switch.armWhen,
      a.switch.onShutdown,
      num(a.armsPerMinute),
      num(a.readsPerMinute),
    ]);
    lines.push('', ...table([header, ...rows]).map((l) => `  ${l}`));
  }
  lines.push(
    '',
    plan.budgetShare < 1
      ? `Request budget per minute, this instance's share ${num(plan.budgetShare)} of rate_limits.shared (client side; the venue's 429 details always win):`
      : 'Request budget per minute (client side; the venue\'s 429 details always win):',
    `  schedule_cancel  need ${num(plan.scheduleCancel.neededPerMinute)} arms of ${num(plan.scheduleCancel.budgetPerMinute)}: headroom ${headroom(plan.scheduleCancel)}`,
    `  global           need ${num(plan.armsPerMinute)} arms + ${num(plan.readsPerMinute)} reads = ${num(plan.global.neededPerMinute)} of ${num(plan.global.budgetPerMinute)}: headroom ${headroom(plan.global)}`,
    '  (reads: one page per orders and positions poll; each further page costs one more)',
    `  exchange         need ${num(plan.exchange.neededPerMinute)} ${plan.venueReads && (!plan.venueReads.onlyWhileServiceFails || plan.ordersOpenOnVenue) ? 'weight (arms routed there, venue reads)' : 'arms (routed there)'} of ${num(plan.exchange.budgetPerMinute)}: headroom ${headroom(plan.exchange)}`,
  );
  const vr = plan.venueReads;
  if (vr) {
    const exchangeArms = exchangeArmsPerMinute(plan.accounts, vr.onlyWhileServiceFails);
    const total = vr.weightPerMinute + exchangeArms;
    const left = use(plan.exchange.budgetPerMinute, total);
    lines.push(
      vr.onlyWhileServiceFails
        ? `  while the service fails: venue reads ${num(vr.weightPerMinute)} weight + ${num(exchangeArms)} arms = ${num(total)} of the exchange budget ${num(plan.exchange.budgetPerMinute)}: headroom ${headroom(left)}`
        : `  venue reads      ${num(vr.weightPerMinute)} weight (${num(vr.perAccount)} per account: open orders ${perDex(plan, plan.readWeights.openOrders)} per read, positions ${perDex(plan, plan.readWeights.clearinghouseState)} + ${plan.readWeights.spotClearinghouseState}, address budget ${plan.readWeights.userRateLimit} every ${ADDRESS_BUDGET_READ_EVERY_MS / 60_000} min, agent check ${plan.readWeights.extraAgents} every ${AGENT_CHECK_EVERY_MS / 3_600_000} h${dexesNote(plan)}) + ${num(exchangeArms)} arms = ${num(total)} of the exchange budget ${num(plan.exchange.budgetPerMinute)}: headroom ${headroom(left)}`,
    );
  }
  const oo = plan.ordersOpenOnVenue;
  if (oo) {
    lines.push(
      `  orders_open counts on the venue: ${num(oo.weightPerMinute)} weight a minute (${oo.accounts} account${oo.accounts === 1 ? '' : 's'}, open orders ${perDex(plan, plan.readWeights.openOrders)} per read${dexesNote(plan)}), also while the service answers`,
    );
  }
  if (plan.startupApprovals > 0) {
    const seconds = (plan.startupApprovals / plan.exchange.budgetPerMinute) * 60;
    lines.push(`  approvals at start-up: up to ${plan.startupApprovals} on the exchange budget, about ${duration(seconds)} (fewer when stored agents are still valid)`);
  }
  if (plan.accounts.length > 0) {
    lines.push(
      `  cold start: ${plan.startupApprovals} approvals and ${plan.accounts.length} first arms, all armed in about ${duration(plan.coldStartSeconds)}, ` +
        (plan.coldStartOrder === 'interleaved'
          ? 'each account armed as soon as it is approved'
          : 'first arms held until the rest fits in one period (approvals and arms share one window; just in time)'),
    );
  }
  const rp = plan.readPeriods;
  if (plan.readStretch > 1) {
    const periods = `orders every ${num(rp.ordersEverySeconds)} s, positions every ${num(rp.positionsEverySeconds)} s per account`;
    lines.push(
      plan.readStretch <= MAX_READ_STRETCH
        ? `  reads: stretched x${num(plan.readStretch)} to fit beside the arms: ${periods}`
        : Number.isFinite(plan.readStretch)
          ? `  reads: only 1/${num(plan.readStretch)} of the configured polls fit beside the arms; the keeper stretches them x${MAX_READ_STRETCH} (${periods}) and sheds the rest`
          : `  reads: the arms need the whole budget; the keeper stretches reads x${MAX_READ_STRETCH} (${periods}) and reads only when room is left`,
    );
  } else if (plan.accounts.length > 0) {
    lines.push(`  reads: as configured, ${`orders every ${num(rp.ordersEverySeconds)} s, positions every ${num(rp.positionsEverySeconds)} s per account`}`);
  }
  if (plan.cadence.stretch > 1) {
    lines.push(`  adaptive cadence: the configured periods need ${num(plan.configuredArmsPerMinute)} arms per minute; the keeper stretches them up to x${num(plan.cadence.stretch)} to fit (${TIER_TEXT[plan.tier]})`);
  }
  lines.push(`  capacity: about ${plan.cadence.capacityAccounts} accounts of the median shape at the longest periods their margins allow (${plan.accounts.length} configured)`);
  lines.push(`  memory: about ${plan.memory.liveHeapMb} MB of live heap for ${plan.accounts.length} accounts; run Node with NODE_OPTIONS="${plan.memory.nodeOptions}"`);
  const perDay = plan.accounts.reduce((m, a) => Math.max(m, a.actionsPerDay), 0);
  if (perDay > 0) lines.push(`  venue actions per address: up to ${perDay} per day (one per re-arm${plan.shard.replication > 1 ? ', of every replica' : ''})`);
  lines.push(...formatClobPlans(plan.clobVenues));
  lines.push('');
  if (plan.canHoldEveryHorizon) lines.push('OK: the budget holds every horizon.');
  else {
    const short = plan.accounts.filter((a) => a.verdict === 'short_horizon').map((a) => a.name);
    const over = plan.accounts.filter((a) => a.verdict === 'over_budget').map((a) => a.name);
    lines.push(`NOT EVERY HORIZON HOLDS (${TIER_TEXT[plan.tier]}); the keeper still runs and protects what the budget allows:`);
    if (short.length > 0) lines.push(`  - armed with a horizon below min_horizon_seconds: ${list(short)}`);
    if (over.length > 0) lines.push(`  - over_budget, not armed (lowest priority): ${list(over)}`);
    lines.push('  raise rate_limits (only as far as the venue allows), lengthen deadline_seconds, or split the accounts over more shards');
  }
  if (plan.warnings.length > 0) lines.push('', 'Warnings:', ...plan.warnings.map((x) => `  - ${x}`));
  return lines.join('\n') + '\n';
}

const TIER_TEXT: Record<ProtectionTier, string> = {
  configured: 'as configured',
  stretched: 'periods stretched within each margin',
  reserve: 'periods stretched, retry reserve given up',
  short_horizon: 'every account armed, horizons below their minimum',
  over_budget: 'only the highest-priority accounts can be armed',
};

function duration(seconds: number): string {
  return seconds < 120 ? `${num(seconds)} s` : `${num(seconds / 60)} min`;
}

/** Names, at most 10, then a count. */
function list(names: string[]): string {
  return names.length <= 10 ? names.join(', ') : `${names.slice(0, 10).join(', ')} and ${names.length - 10} more`;
}

function headroom(u: BudgetUse): string {
  return `${num(u.headroomPerMinute)} (${num(u.headroomPercent)}%)`;
}

/** Two decimals at most, trailing zeros dropped: 4, 8.57, 98.5. */
function num(n: number): string {
  return String(Math.round(n * 100) / 100);
}

function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}
