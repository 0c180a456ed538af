/**
 * Bot liveness, the pure part (docs/liveness.md): whether an account's bot counts as alive, and
 * what a heartbeat request is worth. Times are local monotonic ms: liveness is about when we heard
 * from the bot, not about the venue's clock. The shell around it (timers, probes, metrics, logs)
 * is bot-liveness.ts; the switch's answer to a silent bot is switch-machine.ts (`bot` events).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OnSilence } from '../switch/switch-machine.js';
import { isHeartbeatSwitch, type VenueSwitchFacts } from '../venue/switch-facts.js';
import type { HttpAnswer } from '../obs/http-server.js';
import type { HeartbeatRefusal } from '../obs/metrics.js';
export type { HeartbeatRefusal, HttpAnswer };

export interface LivenessSpec {
  /** No heartbeat (or passing probe) for this long: the bot counts as dead. */
  silenceMs: number;
  onSilence: OnSilence;
  /** The bot POSTs /heartbeat with this token (read when the keeper starts or reloads). */
  heartbeat?: { token: () => Promise<string> };
  /** The keeper GETs the bot's health URL: 2xx within `timeoutMs` is alive. */
  probe?: { url: string; everyMs: number; timeoutMs: number };
  /**
   * Another instance arms this account too (`shard.replication`): heartbeats heard here are also
   * published on the fleet's relay, so both replicas judge the bot on the same heartbeats.
   */
  echo?: boolean;
}

/**
 * What a replica does when the account's bot falls silent. Only the account's own shard's instance
 * (replica 0) brings the deadline near; another replica only stops re-arming. Two replicas that
 * both sent cancel-soon would agree while they hear the same heartbeats, but if one of them stops
 * hearing (the relay down, a bot reaching only one pod) its 6 s deadline could land after the
 * other's normal re-arm and cancel a live bot's orders. Stopping is safe either way: the replica
 * that still hears the bot keeps it armed, and a bot nobody hears is cancelled at the last deadline
 * (at once by replica 0, if it is alive). Pure.
 */
export function replicaOnSilence(onSilence: OnSilence, replica: number, venue?: Pick<VenueSwitchFacts, 'kind'>): OnSilence {
  // On a heartbeat venue stopping IS the cancel-soon: the venue cancels one timeout (10 s) after the
  // last beat by itself, and there is no nearer deadline to ask for.
  if (venue !== undefined && isHeartbeatSwitch(venue)) return 'stop_rearming';
  return replica === 0 ? onSilence : 'stop_rearming';
}

/** The day's fired cancels the venue still allows an account: what a silent bot's cancel would spend. */
export function triggersLeft(triggersToday: number, venue: Pick<VenueSwitchFacts, 'maxTriggersPerUtcDay'>): number {
  return Math.max(0, venue.maxTriggersPerUtcDay - triggersToday);
}

/** `waiting`: not heard from since the keeper (re)started, still inside the silence period it grants. */
export type BotState = 'waiting' | 'alive' | 'silent';

export interface BotRecord {
  /** Last heartbeat or passing probe; null: none since the keeper started. */
  lastSeenMonoMs: number | null;
  /** When this keeper began judging the bot (its start, or the account's arrival by reload). */
  judgingSinceMonoMs: number;
}

/** When the bot falls silent unless heard from before (monotonic ms). */
export function silentAtMs(spec: Pick<LivenessSpec, 'silenceMs'>, rec: BotRecord): number {
  return (rec.lastSeenMonoMs ?? rec.judgingSinceMonoMs) + spec.silenceMs;
}

/**
 * The verdict now. A (re)started keeper gives every bot one silence period before judging it, so a
 * restart never cancels a live bot: `waiting` counts as alive.
 */
export function judge(spec: Pick<LivenessSpec, 'silenceMs'>, rec: BotRecord, nowMonoMs: number): BotState {
  if (nowMonoMs < silentAtMs(spec, rec)) return rec.lastSeenMonoMs === null ? 'waiting' : 'alive';
  return 'silent';
}

export function isAlive(state: BotState): boolean {
  return state !== 'silent';
}

// ---- heartbeats ----

/** Names one heartbeat may carry: a bot of many accounts splits them. */
export const HEARTBEAT_MAX_ACCOUNTS = 256;
/**
 * Heartbeats accepted per account and second; more are refused (429). A bot sends one a second:
 * this only bounds what a flood (a loop gone wrong, a hostile peer with the token) can make us do.
 */
export const HEARTBEAT_MAX_PER_SECOND = 20;
export function refusal(reason: HeartbeatRefusal, extra: Record<string, unknown> = {}): HttpAnswer & { reason: HeartbeatRefusal } {
  const status = { malformed: 400, unauthorized: 401, unknown_account: 404, too_large: 413, rate_limited: 429, relay_unavailable: 503 }[reason];
  const headers: Record<string, string> = reason === 'unauthorized' ? { 'www-authenticate': 'Bearer' } : reason === 'rate_limited' || reason === 'relay_unavailable' ? { 'retry-after': '1' } : {};
  return { status, reason, body: { error: reason, ...extra }, headers };
}

/** SHA-256 of a token: what the keeper keeps and compares (equal lengths, so constant time). */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time: the time taken says nothing about how much of the token was right. */
export function tokenMatches(presented: Buffer, expected: Buffer): boolean {
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** The bearer token of an `Authorization` header; undefined when there is none of that form. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return m?.[1];
}

/** The account names of a heartbeat body, or what is wrong with it (never echoing the body). */
export function parseHeartbeatBody(text: string): { accounts: string[] } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'the body is not JSON: want {"accounts": ["name", ...]}' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'want a JSON object {"accounts": ["name", ...]}' };
  const accounts = (value as { accounts?: unknown }).accounts;
  if (!Array.isArray(accounts) || accounts.length === 0) return { problem: '"accounts" must be a non-empty list of account names' };
  if (accounts.length > HEARTBEAT_MAX_ACCOUNTS) return { problem: `at most ${HEARTBEAT_MAX_ACCOUNTS} accounts per heartbeat` };
  if (!accounts.every((a): a is string => typeof a === 'string' && a.length > 0 && a.length <= 64)) return { problem: '"accounts" must hold account names (strings of 1 to 64 characters)' };
  if (new Set(accounts).size !== accounts.length) return { problem: '"accounts" names an account twice' };
  return { accounts };
}

/** What the heartbeat check needs to know of an account. */
export interface HeartbeatTarget {
  digest: Buffer;
  /** Heartbeats accepted in the current one-second window, and when it began (monotonic ms). */
  window: { startMs: number; count: number };
  silenceMs: number;
}

/**
 * Whether a heartbeat is accepted, all or nothing: every name must be a heartbeat account, the
 * token must match each, and none may be over its rate. A refused heartbeat changes nothing, so a
 * token never revives an account it does not belong to, even named beside one it does.
 */
export function checkHeartbeat(
  input: { authorization: string | undefined; body: string },
  targets: (name: string) => HeartbeatTarget | undefined,
  nowMonoMs: number,
): { ok: true; accounts: string[]; silenceMs: number } | (HttpAnswer & { ok: false; reason: HeartbeatRefusal }) {
  const parsed = parseHeartbeatBody(input.body);
  if ('problem' in parsed) return { ok: false, ...refusal('malformed', { message: parsed.problem }) };
  const found = parsed.accounts.map((name) => [name, targets(name)] as const);
  const unknown = found.filter(([, t]) => t === undefined).map(([name]) => name);
  if (unknown.length > 0) return { ok: false, ...refusal('unknown_account', { accounts: unknown.slice(0, 16) }) };
  const token = bearerToken(input.authorization);
  const presented = tokenDigest(token ?? '');
  // Every comparison runs (no early exit), so the time says nothing about which name failed.
  let allMatch = token !== undefined;
  for (const [, t] of found) allMatch = tokenMatches(presented, t!.digest) && allMatch;
  if (!allMatch) return { ok: false, ...refusal('unauthorized') };
  if (found.some(([, t]) => overRate(t!.window, nowMonoMs))) return { ok: false, ...refusal('rate_limited', { retry_after_seconds: 1 }) };
  return { ok: true, accounts: parsed.accounts, silenceMs: Math.min(...found.map(([, t]) => t!.silenceMs)) };
}

function overRate(w: HeartbeatTarget['window'], nowMonoMs: number): boolean {
  return nowMonoMs - w.startMs < 1_000 && w.count >= HEARTBEAT_MAX_PER_SECOND;
}

/** Counts one accepted heartbeat in the account's one-second window. */
export function countHeartbeat(w: HeartbeatTarget['window'], nowMonoMs: number): HeartbeatTarget['window'] {
  return nowMonoMs - w.startMs >= 1_000 ? { startMs: nowMonoMs, count: 1 } : { startMs: w.startMs, count: w.count + 1 };
}

// ---- probes ----

export type { ProbeResult } from '../obs/metrics.js';
import type { ProbeResult } from '../obs/metrics.js';

/** A probe's answer as a verdict: only a 2xx counts as alive. */
export function probeResultOf(status: number): ProbeResult {
  return status >= 200 && status < 300 ? 'ok' : 'http_status';
}
