/**
 * Shards planned by demand: each instance of one shared budget (`rate_limits.shared`) publishes what
 * it will spend beside the shared bucket in Redis, reads what the others publish, and plans against
 * the shared budget times its share of the total. This file is the arithmetic and the wire format,
 * pure; the Redis round trip is SharedBudget's (shared-budget.ts), one Lua script a second.
 *
 * A demand is requests per second: the arms its accounts need at their longest safe periods, plus
 * its provisioning backlog (approvals, first arms, resolves still to send) spread over
 * PLAN_HORIZON_S. Each instance's share is its demand over the sum of the live instances' demands:
 * when the sum fits the budget every instance's share of it covers its own demand
 * (share * B = d * B / D >= d exactly when D <= B); when it does not, every instance is cut by the
 * same factor, so no shard plans the whole budget for itself (the measured 36 arms/s on a 20/s
 * window of two shards that each did).
 */

/** What one instance will spend. */
export interface Demand {
  /** Arms per second at its accounts' longest safe periods. */
  armsPerSecond: number;
  /** Provisioning requests still to send: approvals, first arms, resolves. */
  backlog: number;
}

/** One instance's published demand as read back, stamped with Redis's clock when it was written. */
export interface DemandEntry extends Demand {
  id: string;
  /** Redis server time (ms) of the publish. */
  atMs: number;
}

/**
 * The backlog counts as backlog / PLAN_HORIZON_S requests per second: the rate that clears it within
 * 20 s. 20 s because that is the order of a deadline (the shortest the config allows is 10 s, the
 * examples and the cold start use 20 s) and of the cold start the plan aims at (180
 * approvals and 180 first arms in 18 s on a 20/s window): shorter, and a shard's cold start would
 * claim most of the budget and force a steady shard's re-arms below their minimum horizon (a
 * backlog of 360 over 5 s is 72/s against the other's 9/s); longer, and a backlog would leave
 * accounts unprotected for longer than one deadline while steady shards keep slack they do not need.
 */
export const PLAN_HORIZON_S = 20;

/** How often an instance publishes its demand and reads the others' (one Redis round trip). */
export const DEMAND_PUBLISH_PERIOD_MS = 1_000;

/** A demand not refreshed for this long is an instance gone (3 publish periods: one lost round trip is not a death). */
export const DEMAND_TTL_MS = 3 * DEMAND_PUBLISH_PERIOD_MS;

/**
 * The least share an instance that publishes reports: it keeps a share in (0, 1] even with no
 * demand of its own while others have some, so the budget it plans against is never zero (a first
 * arm added between two publishes still has room until its demand is known, a second later).
 */
export const MIN_SHARE = 0.01;

/**
 * A budget (or a share of one) that moved by less than this fraction is the same budget: a demand
 * share moves a little every second, and re-cutting the local budget or re-planning the cadence on
 * each wobble would churn both for nothing.
 */
export const BUDGET_CHANGE_TOLERANCE = 0.02;

/**
 * Whether `next` is another budget than the one `applied` (none applied yet: it is): it moved by
 * more than BUDGET_CHANGE_TOLERANCE of it. The shared share, the planned arm budget and the read
 * stretch are each re-applied only then (shared-mode.ts, keeper/cadence-control.ts).
 */
export function budgetMoved(applied: number | undefined, next: number): boolean {
  return applied === undefined || Math.abs(next - applied) > applied * BUDGET_CHANGE_TOLERANCE;
}

/** The hash (one per shared budget name) that holds every instance's demand, beside its limiters' keys. */
export function demandKey(name: string): string {
  return `dms-keeper:${name}:demand`;
}

/** A count that must be a finite number >= 0 (anything else, a planner's bug, counts as 0). */
function nonNegative(x: number): number {
  return Number.isFinite(x) && x > 0 ? x : 0;
}

/** Requests per second a demand asks for. */
export function demandRate(d: Demand): number {
  return nonNegative(d.armsPerSecond) + nonNegative(d.backlog) / PLAN_HORIZON_S;
}

/** The field value written to Redis (Redis stamps the time; see SharedBudget's script). */
export function formatDemand(d: Demand): string {
  return `${nonNegative(d.armsPerSecond)} ${nonNegative(d.backlog)}`;
}

/**
 * Parses what the exchange script returns: Redis's time in ms, then field/value pairs of the demand
 * hash (value: `<atMs> <armsPerSecond> <backlog>`). Malformed entries are left out.
 */
export function parseDemandTable(reply: unknown): { nowMs: number; entries: DemandEntry[] } | undefined {
  if (!Array.isArray(reply) || reply.length < 1) return undefined;
  const nowMs = Number(reply[0]);
  if (!Number.isFinite(nowMs)) return undefined;
  const entries: DemandEntry[] = [];
  for (let i = 1; i + 1 < reply.length; i += 2) {
    const id = String(reply[i]);
    const parts = String(reply[i + 1]).split(' ').map(Number);
    if (parts.length !== 3 || !parts.every(Number.isFinite)) continue;
    entries.push({ id, atMs: parts[0]!, armsPerSecond: parts[1]!, backlog: parts[2]! });
  }
  return { nowMs, entries };
}

export interface ShareInput {
  /** This instance's latest demand; undefined: none known yet. */
  own: Demand | undefined;
  /** The other instances' entries as last read (this instance's own entry left out). */
  others: readonly DemandEntry[];
  /** Redis time of that read. */
  nowMs: number;
  fallbackShare: number;
  /**
   * False while this instance has read the table only once since it (re)joined: an instance that
   * started at the same moment may not have published yet, so the share is at most fallbackShare.
   */
  settled: boolean;
}

/**
 * This instance's share of the shared budget, in (0, 1]: its demand over the total of the live
 * instances' (entries older than the TTL are gone instances, ignored), or `fallbackShare` when no
 * demand of its own is known or the total is zero.
 */
export function demandShare(input: ShareInput): number {
  const { own, fallbackShare } = input;
  if (own === undefined) return fallbackShare;
  const mine = demandRate(own);
  let total = mine;
  for (const e of input.others) if (input.nowMs - e.atMs <= DEMAND_TTL_MS) total += demandRate(e);
  if (!(total > 0)) return fallbackShare;
  const share = Math.min(1, Math.max(MIN_SHARE, mine / total));
  return input.settled ? share : Math.min(share, fallbackShare);
}
