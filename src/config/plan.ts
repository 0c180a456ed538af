import { planCadence } from '../sched/cadence.js';
import type { ConfigProblem } from './errors.js';
import { retriesThatFit } from './rules.js';
import { isLoopbackHost } from './rules.js';
import { RETRIES_BEFORE_MIN_HORIZON, retrySlotSeconds } from './schema.js';
import { accountsForShard } from './shard.js';
import type { AccountConfig, Config, RateLimit, SwitchConfig } from './types.js';
import { VENUE_FACTS } from '../venue/facts.js';

/**
 * The request plan `check-config` prints (DESIGN.md section 7): can this instance hold every
 * account's horizon within the client-side budget? Pure function of the config.
 *
 * Figures, per minute, for the accounts in this instance's shard:
 * - arms: sum over accounts of 60 / rearm_every_seconds. `arm_when: orders_open` accounts count
 *   in full: the plan must hold when every account has orders.
 * - reads: per account 60 / orders_every_seconds + 60 / positions_every_seconds, one page per
 *   poll (each further page of an account with many orders or positions costs one more).
 *   Notifications come over the WebSocket and cost no request budget.
 * - budgets: requests * 60 / per_seconds of `rate_limits.schedule_cancel` and `.global`.
 * The plan holds when arms <= schedule_cancel budget and arms + reads <= global budget. Otherwise
 * `problems` names the limit (the loader turns them into config problems).
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
}

export interface BudgetUse {
  budgetPerMinute: number;
  neededPerMinute: number;
  headroomPerMinute: number;
  /** headroom / budget * 100; negative when over. */
  headroomPercent: number;
}

export interface Plan {
  shard: { index: number; count: number };
  accountsTotal: number;
  accounts: PlanAccount[];
  armsPerMinute: number;
  readsPerMinute: number;
  scheduleCancel: BudgetUse;
  /** needed = arms + reads. */
  global: BudgetUse;
  canHoldEveryHorizon: boolean;
  /** Why not, at `rate_limits.schedule_cancel` / `rate_limits.global`; empty when it can. */
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

function buildPlanWith(config: Config): Plan {
  const mine = accountsForShard(config.accounts, config.shard);
  const readsEach = 60 / config.watch.ordersEverySeconds + 60 / config.watch.positionsEverySeconds;
  const timeoutMs = config.venue.requestTimeoutMs;
  const accounts: PlanAccount[] = mine.map((a) => ({
    name: a.name,
    address: a.address,
    switch: a.switch,
    armsPerMinute: 60 / a.switch.rearmEverySeconds,
    readsPerMinute: readsEach,
    actionsPerDay: Math.ceil(86_400 / a.switch.rearmEverySeconds),
    retriesThatFit: retriesThatFit(a.switch, timeoutMs),
  }));
  const configuredArms = accounts.reduce((s, a) => s + a.armsPerMinute, 0);
  const reads = accounts.reduce((s, a) => s + a.readsPerMinute, 0);
  // The keeper stretches re-arm periods within each account's margin when the configured cadence
  // would exceed the arm budget (sched/cadence.ts); the plan is judged on what it will really send.
  const cad = planCadence(
    mine.map((a) => ({ rearmEveryMs: a.switch.rearmEverySeconds * 1000, deadlineMs: a.switch.deadlineSeconds * 1000, minHorizonMs: a.switch.minHorizonSeconds * 1000 })),
    perMinute(config.rateLimits.scheduleCancel) / 60,
  );
  const arms = cad.holds && cad.stretch > 1 ? cad.armsPerSecond * 60 : configuredArms;
  const scheduleCancel = use(perMinute(config.rateLimits.scheduleCancel), arms);
  const global = use(perMinute(config.rateLimits.global), arms + reads);

  const problems: ConfigProblem[] = [];
  if (!cad.holds) {
    problems.push({
      path: 'rate_limits.schedule_cancel',
      message:
        `cannot hold every horizon: ${accounts.length} accounts need ${num(cad.armsPerSecond * 60)} arms per minute even at the longest periods their margins allow, the usable budget is ${num(cad.usablePerSecond * 60)}; ` +
        `this budget holds about ${cad.capacityAccounts} such accounts; raise the limit (only as far as the venue allows), lengthen deadline_seconds, or split the accounts over more shards`,
    });
  }
  if (global.headroomPerMinute < 0) {
    problems.push({
      path: 'rate_limits.global',
      message:
        `cannot hold every horizon: ${num(arms)} arms + ${num(reads)} reads = ${num(arms + reads)} requests per minute, the budget is ${num(global.budgetPerMinute)}; ` +
        'lengthen watch.orders_every_seconds / positions_every_seconds or rearm_every_seconds, or split the accounts over more shards',
    });
  }
  return {
    shard: { ...config.shard },
    accountsTotal: config.accounts.length,
    accounts,
    armsPerMinute: arms,
    configuredArmsPerMinute: configuredArms,
    cadence: { stretch: cad.stretch, capacityAccounts: cad.capacityAccounts },
    readsPerMinute: reads,
    scheduleCancel,
    global,
    canHoldEveryHorizon: problems.length === 0,
    problems,
    warnings: planWarnings(config, mine, accounts, scheduleCancel, global),
  };
}

function planWarnings(config: Config, mine: AccountConfig[], accounts: PlanAccount[], sc: BudgetUse, gl: BudgetUse): string[] {
  const w: string[] = [];
  const names = (list: Array<{ name: string }>): string => list.map((a) => a.name).join(', ');

  if (config.accounts.length > 0 && mine.length === 0) {
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
  ] as const) {
    if (u.headroomPerMinute >= 0 && u.headroomPercent < LOW_HEADROOM_PERCENT) {
      w.push(`${label}: only ${num(u.headroomPercent)}% headroom; retries after errors and 429s need spare budget`);
    }
  }
  if (gl.budgetPerMinute > VENUE_FACTS.ipWeightPerMinute) {
    w.push(
      `rate_limits.global allows ${num(gl.budgetPerMinute)} requests per minute, above the venue's ${VENUE_FACTS.ipWeightPerMinute} weight per minute per IP ` +
        '(exchange endpoint); the venue will answer 429',
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
  if (config.venue.simulator && (config.venue.baseUrl ?? config.venue.exchangeUrl ?? config.venue.wsUrl) !== undefined) {
    w.push("venue.simulator is true: base_url, exchange_url and ws_url are ignored; the embedded simulator's URLs are used");
  }
  return w;
}

/** Human text for `check-config`. */
export function formatPlan(plan: Plan): string {
  const lines: string[] = [];
  lines.push(
    `Shard ${plan.shard.index} of ${plan.shard.count}: ${plan.accounts.length} of ${plan.accountsTotal} account${plan.accountsTotal === 1 ? '' : 's'} protected here.`,
  );
  if (plan.accounts.length > 0) {
    const header = ['account', 'address', 'rearm', 'deadline', 'min horizon', 'retries', 'path', 'arm when', 'on shutdown', 'arms/min', 'reads/min'];
    const rows = plan.accounts.map((a) => [
      a.name,
      a.address,
      `${a.switch.rearmEverySeconds} s`,
      `${a.switch.deadlineSeconds} s`,
      `${a.switch.minHorizonSeconds} s`,
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
    'Request budget per minute (client side; the venue\'s 429 details always win):',
    `  schedule_cancel  need ${num(plan.armsPerMinute)} arms of ${num(plan.scheduleCancel.budgetPerMinute)}: headroom ${headroom(plan.scheduleCancel)}`,
    `  global           need ${num(plan.armsPerMinute)} arms + ${num(plan.readsPerMinute)} reads = ${num(plan.global.neededPerMinute)} of ${num(plan.global.budgetPerMinute)}: headroom ${headroom(plan.global)}`,
    '  (reads: one page per orders and positions poll; each further page costs one more)',
  );
  if (plan.cadence.stretch > 1 && plan.canHoldEveryHorizon) {
    lines.push(
      `  adaptive cadence: the configured periods need ${num(plan.configuredArmsPerMinute)} arms per minute; the keeper will stretch every period x${num(plan.cadence.stretch)} (within each account's margin) to fit`,
    );
  }
  lines.push(`  capacity: about ${plan.cadence.capacityAccounts} accounts of the median shape at the longest periods their margins allow (${plan.accounts.length} configured)`);
  const perDay = plan.accounts.reduce((m, a) => Math.max(m, a.actionsPerDay), 0);
  if (perDay > 0) lines.push(`  venue actions per address: up to ${perDay} per day (one per re-arm)`);
  lines.push('');
  if (plan.canHoldEveryHorizon) lines.push('OK: the budget holds every horizon.');
  else lines.push('CANNOT hold every horizon:', ...plan.problems.map((f) => `  - ${f.path}: ${f.message}`));
  if (plan.warnings.length > 0) lines.push('', 'Warnings:', ...plan.warnings.map((x) => `  - ${x}`));
  return lines.join('\n') + '\n';
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
