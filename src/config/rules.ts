import { isIPv4, isIPv6 } from 'node:net';
import { NETWORK_URLS, type RawAccount, type RawShard, type RawSwitch, type RawVenue } from './schema.js';
import {
  DEADLINE_SAFETY_MARGIN_SECONDS,
  minDeadlineSeconds,
  minPreRearmHorizonSeconds,
  preRearmHorizonSeconds,
  rearmLeavesRetries,
  RETRIES_BEFORE_MIN_HORIZON,
  retrySlotSeconds,
} from '../plan/horizon.js';
import { VENUE_FACTS } from '../venue/facts.js';
import { AGENT_SLOTS, replicaAgentName } from './shard.js';
import { isClobAccount } from './names.js';

/**
 * Cross-field rules: each is a pure function of already-shape-checked sections and returns
 * problems with a path (as segments, so the loader can find the line). A rule runs only when the
 * sections it reads parsed, so one mistake does not cascade into several reports.
 */
export interface RuleProblem {
  segments: Array<string | number>;
  message: string;
}

type SwitchKey = keyof RawSwitch;

interface SwitchRuleFailure {
  /** Keys the rule reads; the first is the one the problem is reported at. */
  keys: SwitchKey[];
  message: string;
}

/**
 * The three timing rules of a switch block (top level, or one account's effective settings).
 * `sw` may be partial (the fields that passed their own checks when a sibling did not): a rule
 * runs only when every value it reads is there. `minLeadMs`: the venue's minimum lead
 * (VenueSwitchFacts.minLeadMs of the accounts' venue).
 */
export function switchRuleFailures(sw: Partial<RawSwitch>, requestTimeoutMs: number | undefined, minLeadMs: number): SwitchRuleFailure[] {
  const out: SwitchRuleFailure[] = [];
  const { deadline_seconds: deadline, rearm_every_seconds: rearm, min_horizon_seconds: minHorizon } = sw;
  if (deadline === undefined) return out;
  const minDeadline = minDeadlineSeconds(minLeadMs);
  if (deadline < minDeadline) {
    out.push({
      keys: ['deadline_seconds'],
      message:
        `is ${deadline}; must be at least ${minDeadline}: the venue refuses a cancel time less than ` +
        `${minLeadMs / 1000} s ahead, and ${DEADLINE_SAFETY_MARGIN_SECONDS} s more are kept for clock skew and latency`,
    });
  }
  // The rules below read deadline_seconds: when it is already refused, they would only repeat it.
  if (out.length > 0) return out;
  if (minHorizon === undefined) return out;
  if (minHorizon >= deadline) {
    out.push({
      keys: ['min_horizon_seconds', 'deadline_seconds'],
      message: `is ${minHorizon}; must be less than deadline_seconds (${deadline}): a fresh arm leaves at most deadline_seconds of horizon, so readiness could never pass`,
    });
  }
  // min_horizon >= deadline already implies the next rule fails: one report is enough.
  if (requestTimeoutMs !== undefined && rearm !== undefined && out.length === 0) {
    // The arithmetic is plan/horizon.ts's; this rule only words it.
    const timing = { deadlineSeconds: deadline, rearmEverySeconds: rearm, minHorizonSeconds: minHorizon };
    if (!rearmLeavesRetries(timing, requestTimeoutMs)) {
      const slot = retrySlotSeconds(requestTimeoutMs);
      const need = minPreRearmHorizonSeconds(minHorizon, requestTimeoutMs);
      const preRearm = preRearmHorizonSeconds(timing);
      const maxRearm = Math.floor(deadline - need);
      const fix =
        maxRearm >= 1
          ? `use rearm_every_seconds <= ${maxRearm}, or raise deadline_seconds`
          : `raise deadline_seconds to at least ${Math.ceil(need + rearm)}, or lower min_horizon_seconds or venue.request_timeout_ms`;
      out.push({
        keys: ['rearm_every_seconds', 'deadline_seconds', 'min_horizon_seconds'],
        message:
          `is ${rearm}; too long for deadline_seconds ${deadline} and min_horizon_seconds ${minHorizon}: just before a planned re-arm the horizon is ` +
          `${deadline} - ${rearm} = ${preRearm} s, which must leave room for ${RETRIES_BEFORE_MIN_HORIZON} retries of ${fmt(slot)} s ` +
          `(venue.request_timeout_ms / 1000 + 1) above min_horizon_seconds, i.e. at least ${fmt(need)} s; ${fix}`,
      });
    }
  }
  return out;
}

export function topSwitchProblems(sw: Partial<RawSwitch>, requestTimeoutMs: number | undefined, minLeadMs: number): RuleProblem[] {
  return switchRuleFailures(sw, requestTimeoutMs, minLeadMs).map((f) => ({ segments: ['switch', f.keys[0] as string], message: f.message }));
}

/**
 * An account's effective settings are checked only for rules that read a key the account itself
 * sets: the others were already checked (and reported once) at the top level.
 */
export function accountSwitchProblems(
  index: number,
  top: Partial<RawSwitch>,
  own: Partial<RawSwitch>,
  requestTimeoutMs: number | undefined,
  minLeadMs: number,
): RuleProblem[] {
  const ownKeys = (Object.keys(own) as SwitchKey[]).filter((k) => own[k] !== undefined);
  if (ownKeys.length === 0) return [];
  const effective: Partial<RawSwitch> = { ...top, ...definedOnly(own) };
  const out: RuleProblem[] = [];
  for (const f of switchRuleFailures(effective, requestTimeoutMs, minLeadMs)) {
    const overridden = f.keys.filter((k) => ownKeys.includes(k));
    const at = overridden[0];
    if (at === undefined) continue;
    const primary = f.keys[0] as SwitchKey;
    const inherited = at === primary ? '' : ` (${primary} ${String(effective[primary])} is inherited from the top-level switch)`;
    out.push({ segments: ['accounts', index, 'switch', at], message: `${primary} ${f.message}${inherited}` });
  }
  return out;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (LOOPBACK_HOSTS.has(h) || h.endsWith('.localhost')) return true;
  return isIPv4(h) && h.startsWith('127.');
}

/**
 * One URL: the right scheme family, no credentials (secrets are never inline; URLs end up in logs
 * and error messages), and in production https/wss unless the host is loopback. Returns the URL
 * without a trailing slash (paths are appended to it), or a problem message. The value itself is
 * never echoed, since it may carry credentials.
 */
export function checkUrl(value: string, family: 'http' | 'ws', production: boolean): { url: string } | { problem: string } {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return { problem: `is not a URL (want ${family === 'http' ? 'https' : 'wss'}://host[:port][/path])` };
  }
  const secure = family === 'http' ? 'https:' : 'wss:';
  const plain = family === 'http' ? 'http:' : 'ws:';
  if (u.protocol !== secure && u.protocol !== plain) return { problem: `must be a ${secure.slice(0, -1)}:// URL` };
  if (u.username !== '' || u.password !== '') return { problem: 'must not carry credentials (user:password@): secrets are never written in the config' };
  if (u.search !== '' || u.hash !== '') return { problem: 'must not have a query or fragment' };
  if (production && u.protocol === plain && !isLoopbackHost(u.hostname)) {
    return { problem: `must use ${secure.slice(0, -1)}:// (${plain.slice(0, -1)}:// is allowed only for a loopback host)` };
  }
  return { url: u.href.replace(/\/+$/, '') };
}

export interface ResolvedUrls {
  baseUrl?: string;
  exchangeUrl?: string;
  wsUrl?: string;
}

/**
 * `base_url` required in production; URL checks; network defaults for exchange and ws. `v` may be
 * partial (`invalid`: the keys that failed their own checks): without a valid `simulator` the
 * production-only rules are skipped, and an invalid `base_url` is not also called missing.
 */
export function venueProblems(
  v: Partial<RawVenue>,
  invalid: ReadonlySet<string> = new Set(),
  watchSource: 'service' | 'venue' | 'service_then_venue' | undefined = 'service',
): { problems: RuleProblem[]; urls: ResolvedUrls } {
  const problems: RuleProblem[] = [];
  const production = v.simulator === false;
  const urls: ResolvedUrls = {};
  const one = (key: 'base_url' | 'exchange_url' | 'ws_url', family: 'http' | 'ws'): string | undefined => {
    const value = v[key];
    if (value === undefined) return undefined;
    const r = checkUrl(value, family, production);
    if ('problem' in r) {
      problems.push({ segments: ['venue', key], message: r.problem });
      return undefined;
    }
    return r.url;
  };
  urls.baseUrl = one('base_url', 'http');
  urls.exchangeUrl = one('exchange_url', 'http');
  urls.wsUrl = one('ws_url', 'ws');
  if (production) {
    // With reads from the venue alone no service is needed (noServiceProblems checks the arms).
    if (v.base_url === undefined && !invalid.has('base_url') && watchSource !== 'venue') {
      problems.push({ segments: ['venue', 'base_url'], message: 'is required unless venue.simulator is true or watch.source: venue (the REST service URL)' });
    }
    // Only when not given at all: a given-but-invalid URL is already reported and must not be
    // silently replaced by the network default.
    if (v.network !== undefined && v.exchange_url === undefined) urls.exchangeUrl = NETWORK_URLS[v.network].exchangeUrl;
    if (v.network !== undefined && v.ws_url === undefined) urls.wsUrl = NETWORK_URLS[v.network].wsUrl;
  }
  return { problems, urls };
}

/**
 * A keeper with no service (production, no `base_url`, `watch.source: venue`) arms only through
 * the exchange endpoint: every account's effective `switch.path` must be `exchange`. Named where
 * it is set: the top-level `switch.path` when some account inherits it, else each account's own.
 */
export function noServiceProblems(topPath: string | undefined, accountPaths: ReadonlyArray<string | undefined>): RuleProblem[] {
  const message = (path: string) => `is ${path}, but with no venue.base_url (watch.source: venue) arms can only go through the exchange endpoint: set path: exchange, or give venue.base_url`;
  const problems: RuleProblem[] = [];
  const top = topPath ?? 'rest';
  if (top !== 'exchange' && accountPaths.some((p) => p === undefined)) problems.push({ segments: ['switch', 'path'], message: message(top) });
  accountPaths.forEach((p, i) => {
    if (p !== undefined && p !== 'exchange') problems.push({ segments: ['accounts', i, 'switch', 'path'], message: message(p) });
  });
  return problems;
}

/**
 * `path: exchange | rest_then_exchange` posts to `{exchange_url}/exchange`. In production the
 * network default always supplies one, so this fires only when the given URL was invalid (already
 * reported) or in unusual states; it is kept as a rule so the dependency is written down.
 */
export function exchangePathProblem(segments: Array<string | number>, path: string, simulator: boolean, exchangeUrl: string | undefined): RuleProblem[] {
  if (simulator || path === 'rest' || exchangeUrl !== undefined) return [];
  return [{ segments, message: `path ${path} needs venue.exchange_url (or venue.simulator: true)` }];
}

export interface Listen {
  host: string;
  port: number;
}

/** `host:port`, an IPv6 host in brackets (`[::1]:9464`). Port 0 asks the OS for a free port (tests). */
export function parseListen(text: string): Listen | { problem: string } {
  const bad = { problem: 'must be host:port (an IPv6 host in brackets, e.g. 127.0.0.1:9464 or [::1]:9464)' };
  let host: string;
  let portText: string;
  const v6 = /^\[([^\]]+)\]:([0-9]+)$/.exec(text);
  if (v6) {
    host = v6[1] as string;
    portText = v6[2] as string;
    if (!isIPv6(host)) return { problem: 'has an invalid IPv6 address in brackets' };
  } else {
    const m = /^([^:[\]]+):([0-9]+)$/.exec(text);
    if (!m) return bad;
    host = m[1] as string;
    portText = m[2] as string;
    const hostname = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
    if (!isIPv4(host) && !hostname.test(host)) return bad;
  }
  const port = Number(portText);
  if (!Number.isInteger(port) || port > 65_535) return { problem: 'has a port outside 0..65535' };
  return { host, port };
}

export function shardProblems(s: Partial<RawShard>): RuleProblem[] {
  if (s.index === undefined || s.count === undefined || s.index < s.count) return [];
  return [{ segments: ['shard', 'index'], message: `is ${s.index}; must be less than shard.count (${s.count}): indexes run 0..${s.count - 1}` }];
}

/**
 * With `shard.replication: 2` two instances arm each account, each with its own agent (named by its
 * slot, see shard.ts replicaAgentName); with `shard.fleet` accounts also move between instances
 * and a handover holds a third slot for a while. A clean stop or a handover must not disarm what
 * another instance keeps armed, so `on_shutdown: clear` is refused; an instance that gains an
 * account approves an agent of its own, so the master key is needed; and the last slot's agent
 * name must fit the venue's limit.
 */
export function replicationProblems(topOnShutdown: string | undefined, accounts: ReadonlyArray<RawAccount | undefined>, fleet = false): RuleProblem[] {
  const out: RuleProblem[] = [];
  const what = fleet ? 'with shard.fleet accounts move between instances' : 'with shard.replication 2 another instance keeps this account armed';
  const why = `${what}; a clean stop or a handover must not disarm it: use keep`;
  const lastSlot = fleet ? AGENT_SLOTS - 1 : 1;
  if (topOnShutdown === 'clear') out.push({ segments: ['switch', 'on_shutdown'], message: `is clear; ${why}` });
  accounts.forEach((a, i) => {
    if (a?.switch?.on_shutdown === 'clear') out.push({ segments: ['accounts', i, 'switch', 'on_shutdown'], message: `is clear; ${why}` });
    // A CLOB account (src/config/venues.ts) has no agent: every instance heartbeats with its credentials.
    if (a !== undefined && isClobAccount(a)) return;
    if (a !== undefined && a.master_key === undefined) {
      out.push({ segments: ['accounts', i, 'master_key'], message: `is missing; ${fleet ? 'with shard.fleet an instance that gains the account' : 'with shard.replication 2 the second instance'} approves an agent of its own, which only the master key can sign` });
    }
    const name = a?.agent?.name;
    if (name !== undefined && replicaAgentName(name, lastSlot).length > VENUE_FACTS.agentNameMaxChars) {
      out.push({ segments: ['accounts', i, 'agent', 'name'], message: `is ${name.length} characters; ${fleet ? 'with shard.fleet' : 'with shard.replication 2'} an instance's agent may be named "${replicaAgentName(name, lastSlot)}", over the venue's ${VENUE_FACTS.agentNameMaxChars}: shorten it` });
    }
  });
  return out;
}

/**
 * `shard.fleet` keeps the membership in the shared budget's Redis, and the live instances decide
 * who arms what: a fixed index or count beside it would be a second, contradicting answer.
 */
export function fleetProblems(s: Partial<RawShard>, hasShared: boolean): RuleProblem[] {
  if (s.fleet === undefined) return [];
  const out: RuleProblem[] = [];
  if (!hasShared) out.push({ segments: ['shard', 'fleet'], message: 'needs rate_limits.shared: the fleet\'s membership is kept in the shared budget\'s Redis' });
  if ((s.count ?? 1) > 1) out.push({ segments: ['shard', 'count'], message: `is ${s.count}; with shard.fleet the live instances decide who arms what: leave shard.count and shard.index unset` });
  else if ((s.index ?? 0) > 0) out.push({ segments: ['shard', 'index'], message: `is ${s.index}; with shard.fleet the live instances decide who arms what: leave shard.index unset` });
  return out;
}

/** What identifies an account for the uniqueness rules; taken from the raw item when its shape failed. */
export interface AccountIdentity {
  name?: string;
  address?: string;
  agentName?: string;
}

/**
 * Across accounts: unique names, unique (address, agent name) pairs, one agent name per master
 * key, a master key unless an agent key is given, and a master key for a builder fee.
 * `accounts[i]` is undefined when its own shape failed: it then takes part only in the uniqueness
 * rules, through whatever of `identities[i]` is valid (so a typo in one account does not hide a
 * duplicate name in another).
 */
export function accountProblems(accounts: ReadonlyArray<RawAccount | undefined>, identities: ReadonlyArray<AccountIdentity> = []): RuleProblem[] {
  // An account on a CLOB venue (src/config/venues.ts) has no agent slot and no master key: only the name rule applies to it.
  const out: RuleProblem[] = [];
  const byName = new Map<string, number>();
  const byAgentSlot = new Map<string, number>();
  const byMasterSlot = new Map<string, number>();
  const n = Math.max(accounts.length, identities.length);
  for (let i = 0; i < n; i++) {
    const a = accounts[i];
    const id: AccountIdentity = a ? (isClobAccount(a) ? { name: a.name } : { name: a.name, address: a.address, agentName: a.agent.name }) : (identities[i] ?? {});
    if (id.name !== undefined) {
      const prevName = byName.get(id.name);
      if (prevName !== undefined) {
        out.push({ segments: ['accounts', i, 'name'], message: `duplicate: accounts[${prevName}] is already named ${id.name} (names are metric labels and must be unique)` });
      } else byName.set(id.name, i);
    }

    let prevSlot: number | undefined;
    if (id.address !== undefined && id.agentName !== undefined) {
      const slot = `${id.address} ${id.agentName}`;
      prevSlot = byAgentSlot.get(slot);
      if (prevSlot !== undefined) {
        out.push({
          segments: ['accounts', i, 'address'],
          message:
            `same address and agent name (${id.agentName}) as accounts[${prevSlot}]: both would approve the same agent slot, each rotating the ` +
            `other's agent out, and share one nonce sequence; remove the duplicate or give one a different agent.name`,
        });
      } else byAgentSlot.set(slot, i);
    }
    if (a === undefined || isClobAccount(a)) continue;

    // Agent slots belong to the MASTER account: a subaccount's agent is approved by its main
    // account's master key. Two accounts approving fresh agents with one master key and one agent
    // name would keep rotating each other's agent out. (Same key source = same master.)
    if (prevSlot === undefined && a.master_key !== undefined && a.agent.key === undefined) {
      const master = a.master_key.file !== undefined ? `file ${a.master_key.file}` : `env ${a.master_key.env ?? ''}`;
      const masterSlot = `${master}\n${a.agent.name}`;
      const prev = byMasterSlot.get(masterSlot);
      if (prev !== undefined) {
        out.push({
          segments: ['accounts', i, 'agent', 'name'],
          message:
            `accounts[${prev}] approves an agent named ${a.agent.name} with the same master key (${master}): agent names are per master ` +
            "account (a subaccount's agent belongs to its master), so each approval would rotate the other's agent out; give each account its own agent.name",
        });
      } else byMasterSlot.set(masterSlot, i);
    }

    if (a.master_key === undefined && a.agent.key === undefined) {
      out.push({
        segments: ['accounts', i, 'master_key'],
        message: 'is required unless agent.key is given: the master key signs approveAgent for the fresh agent generated at start',
      });
    }
    if (a.builder_fee !== undefined && a.master_key === undefined) {
      out.push({ segments: ['accounts', i, 'builder_fee'], message: 'needs master_key: only the master key may sign approveBuilderFee' });
    }
  }
  return out;
}

/**
 * `accounts[i].liveness`: exactly one way of telling (heartbeat or probe); a probe URL that is a
 * plain http(s) URL without credentials; a silence longer than one probe period and its timeout,
 * so one slow answer is never a silence by itself.
 */
export function livenessProblems(i: number, l: NonNullable<RawAccount['liveness']>): RuleProblem[] {
  const at = (...rest: string[]): Array<string | number> => ['accounts', i, 'liveness', ...rest];
  const out: RuleProblem[] = [];
  if ((l.heartbeat === undefined) === (l.probe === undefined)) {
    out.push({ segments: at(), message: 'give exactly one of heartbeat: { token: ... } (the bot POSTs /heartbeat) or probe: { url: ... } (the keeper GETs the bot\'s health URL)' });
  }
  if (l.probe) {
    const u = checkUrl(l.probe.url, 'http', false);
    if ('problem' in u) out.push({ segments: at('probe', 'url'), message: u.problem });
    const periodMs = l.probe.every_seconds * 1000 + l.probe.timeout_ms;
    if (l.silence_seconds * 1000 <= periodMs) {
      out.push({
        segments: at('silence_seconds'),
        message: `must be more than probe.every_seconds + probe.timeout_ms (${fmt(periodMs / 1000)} s): otherwise one slow probe alone would count the bot as dead`,
      });
    }
  }
  return out;
}

/**
 * `demo:`: only beside the embedded simulator (a demo bot in production would keep a real account's
 * switch alive for nothing); each bot names accounts with heartbeat liveness, all of one token
 * (one bot, one token), and no account belongs to two bots.
 */
export function demoProblems(demo: { bots: ReadonlyArray<{ accounts: readonly string[] }> }, simulator: boolean | undefined, accounts: ReadonlyArray<RawAccount | undefined>): RuleProblem[] {
  const out: RuleProblem[] = [];
  if (simulator === false) out.push({ segments: ['demo'], message: 'demo bots run only with venue.simulator: true (they would keep a real account\'s switch alive whatever its bot does)' });
  const byName = new Map(accounts.filter((a): a is RawAccount => a !== undefined).map((a) => [a.name, a]));
  const owner = new Map<string, number>();
  demo.bots.forEach((bot, b) => {
    let token: string | undefined;
    bot.accounts.forEach((name, j) => {
      const at = ['demo', 'bots', b, 'accounts', j];
      const a = byName.get(name);
      const t = a?.liveness?.heartbeat?.token;
      if (!a) return void out.push({ segments: at, message: `names no account of this config (${safeName(name)})` });
      if (!t) return void out.push({ segments: at, message: `${name} has no liveness.heartbeat: a demo bot only heartbeats` });
      const key = t.file !== undefined ? `file ${t.file}` : `env ${t.env ?? ''}`;
      if (token !== undefined && key !== token) out.push({ segments: at, message: `${name}'s heartbeat token is not the one of the bot's other accounts: one bot, one token` });
      token ??= key;
      const prev = owner.get(name);
      if (prev !== undefined && prev !== b) out.push({ segments: at, message: `${name} is already the account of demo.bots[${prev}]` });
      owner.set(name, b);
    });
  });
  return out;
}

function safeName(name: string): string {
  return /^[a-z0-9][a-z0-9_.-]{0,63}$/.test(name) ? name : 'an invalid name';
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '');
}
