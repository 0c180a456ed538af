/**
 * `npm run bench:venue -- [--scenario venue_only|service_outage|all] [--minutes N]
 * [--keeper-log-level debug|info]`: the venue as the keeper's read source (issue 20), measured
 * with BUILT PROCESSES: the compiled keeper
 * (`dist/src/main.js run --config ...`) against the compiled simulator (`dist/src/main.js simulate
 * --budget ip_weight_1200_per_60s`), each a child process on loopback, in real time. What
 * test/venue-source.test.ts proves in virtual time against the in-process simulator.
 *
 *  - venue_only: no `venue.base_url`, `watch.source: venue`, 20 accounts (19 main accounts and a
 *    subaccount of the first, given by the main account's master key and resolved by the venue's
 *    `userRole`), `switch.path: exchange`, orders read every 20 s and positions every 60 s, against a
 *    simulator serving only `/exchange`, `/info`, `/ws` (`POST /_sim/services {venueOnly: true}`)
 *    with the venue's 1,200-weight-per-minute IP budget. One account (`hidden`) arms only while it
 *    has open orders (`arm_when: orders_open`); half-way through, one more venue order is placed on
 *    another account. Runs N minutes from the keeper's start.
 *  - service_outage: `base_url` present, `watch.source: service_then_venue`, 20 main accounts on
 *    `switch.path: rest_then_exchange`; 1 minute with the service answering, then the service
 *    answering 503 for N minutes (`POST /_sim/faults {kind: status, status: 503, path: rest}`),
 *    then 75 s with it back. Service orders and positions (in the service's listing and on the
 *    venue) and venue-only orders and perp positions are seeded; `hidden` has only venue-only orders
 *    and `arm_when: orders_open`. During the outage one service order and one venue order are added.
 *
 * Measured from the simulator's side: every account's scheduled cancel (`/_sim/state?account=`,
 * every second: horizon, fired cancels), the arms it took and by which path (`/_sim/actions`), the
 * 429s and 503s it answered (its request log); from the keeper's: /status (phases, open orders,
 * positions, orders source) and /metrics (requests, 429s, reads shed, lapses). Counts are compared
 * with the venue's own `/info` (and the service's listing), read from 127.0.0.2 so that the checks
 * spend none of the keeper's per-IP budget. `check-config` is run on each config and its plan kept.
 *
 * Writes artifacts/venue-source.json (the latest run of each scenario, with the commit built and
 * the files under src/ that differed from it) and the check-config output beside it; prints a
 * summary; exits 1 when a bound below is missed. The keeper logs at debug by default: each shed
 * read is a debug line, which is how the sheds are counted by kind (orders, positions).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildCatalog } from '../src/sim/catalog/index.js';
import { demoAddress } from '../src/sim/venue/demo.js';
import { benchAddresses, benchKey } from './keys.js';
import { recordScenarios, runMain } from './results.js';
import {
  admin,
  checkConfig,
  freePort,
  getJson,
  getText,
  metricSum,
  Probe,
  requestsByEndpoint,
  ROOT,
  simAccount,
  simActions,
  sleep,
  startKeeperProcess,
  startSimProcess,
  writeKeys,
  type ActionEntry,
  type Counts,
  type KeeperProc,
  type SimProc,
} from './venue-procs.js';

export const SCENARIOS = ['venue_only', 'service_outage'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

const BUDGET = 'ip_weight_1200_per_60s';
const SWITCH = { deadlineS: 60, rearmS: 15, minHorizonS: 20 };
const SAMPLE_MS = 1_000;
/** The keeper's log level (`--keeper-log-level`): debug by default, which logs each shed read (counted by kind). */
let KEEPER_LOG_LEVEL = 'debug';
const STATUS_EVERY_MS = 5_000;
/**
 * service_outage: the service answering before and after its outage. Before: long enough for every
 * account's first positions read, which the keeper spreads over the 60 s positions period.
 */
const BEFORE_MS = 75_000;
const AFTER_MS = 75_000;

const secs = (ms: number | null | undefined): number | null => (ms === null || ms === undefined || !Number.isFinite(ms) ? null : Number((ms / 1000).toFixed(2)));

interface Bound {
  what: string;
  ok: boolean;
}

export interface ScenarioResult {
  scenario: ScenarioName;
  minutes: number;
  accounts: number;
  ok: boolean;
  bounds: Bound[];
  [k: string]: unknown;
}

/** One account of a scenario: its config entry and its seed in the simulator. */
interface Acct {
  name: string;
  address: string;
  keyFile: string;
  agentName?: string;
  armWhen?: 'orders_open';
  sub?: boolean;
  seed: Record<string, unknown>;
}

interface StatusAccount {
  name: string;
  address: string;
  account_type?: string;
  phase: string;
  should_be_armed: boolean;
  armed: boolean;
  horizon_seconds: number | null;
  open_orders: number | null;
  orders_source: 'service' | 'venue' | null;
  positions: null | { count: number };
  notifications: boolean;
  path: string;
  arm_when: string;
  last_arm: null | { path: string; result: string };
}

interface Status {
  ready?: boolean;
  budget_mode?: string;
  cadence?: Record<string, unknown> | null;
  budget_limits?: unknown;
  accounts: StatusAccount[];
}

async function status(k: KeeperProc): Promise<Status | undefined> {
  const s = (await getJson(`${k.ops}/status`)) as Status | undefined;
  return s && Array.isArray(s.accounts) ? s : undefined;
}

function configYaml(o: {
  sim: SimProc;
  withService: boolean;
  source: 'venue' | 'service_then_venue';
  path: 'exchange' | 'rest_then_exchange';
  ordersEveryS: number;
  positionsEveryS: number;
  accounts: Acct[];
  stateDir: string;
  opsPort: number;
}): string {
  return (
    [
      '# bench/venue-source.ts: generated for one run (keys are the benchmark\'s public throwaway keys)',
      'venue:',
      ...(o.withService ? [`  base_url: ${o.sim.baseUrl}`] : []),
      `  exchange_url: ${o.sim.baseUrl}`,
      `  ws_url: ${o.sim.wsUrl}`,
      '  network: testnet',
      `switch: { deadline_seconds: ${SWITCH.deadlineS}, rearm_every_seconds: ${SWITCH.rearmS}, min_horizon_seconds: ${SWITCH.minHorizonS}, on_shutdown: keep, path: ${o.path} }`,
      `watch: { source: ${o.source}, orders_every_seconds: ${o.ordersEveryS}, positions_every_seconds: ${o.positionsEveryS}, notifications: true }`,
      'accounts:',
      ...o.accounts.map((a) => {
        const parts = [`name: ${a.name}`, `address: "${a.address}"`, `master_key: { file: ${a.keyFile} }`];
        if (a.agentName) parts.push(`agent: { name: ${a.agentName} }`);
        if (a.armWhen) parts.push(`switch: { arm_when: ${a.armWhen} }`);
        return `  - { ${parts.join(', ')} }`;
      }),
      `state_dir: ${o.stateDir}`,
      `server: { listen: "127.0.0.1:${o.opsPort}" }`,
      // debug: every arm and every shed read is a line (the benchmark counts the sheds by kind)
      `log: { level: ${KEEPER_LOG_LEVEL} }`,
    ].join('\n') + '\n'
  );
}

/** The simulator's view every second, the keeper's every 5 s. */
class Observer {
  readonly samples: Array<{ tMs: number; low: number | null; lowAccount: string | null; armed: number }> = [];
  readonly statusTimeline: Array<{ t_s: number | null; phases: Record<string, number>; sources: Record<string, number>; ready: boolean | null }> = [];
  /** Sampled: when each address was first seen armed (ms from t0). */
  readonly firstSeenArmed = new Map<string, number>();
  /** Armed, then nothing scheduled at the next sample (a fired cancel or a clear). */
  unscheduledAfterArm = 0;
  triggers = 0;
  allArmedStatusMs: number | null = null;
  /** Venue clock minus epoch (0 with the strict profile; measured). */
  venueOffsetMs = 0;
  private readonly last = new Map<string, number | null>();
  private stopped = false;

  constructor(
    private readonly sim: SimProc,
    private readonly keeper: KeeperProc,
    private readonly addresses: string[],
    readonly t0: number,
  ) {}

  async sampleOnce(): Promise<void> {
    const tMs = Date.now() - this.t0;
    const views = await Promise.all(this.addresses.map((a) => simAccount(this.sim, a).catch(() => undefined)));
    let low: number | null = null;
    let lowAccount: string | null = null;
    let armed = 0;
    let triggers = 0;
    views.forEach((v, i) => {
      if (!v) return;
      const a = this.addresses[i]!;
      this.venueOffsetMs = v.nowMs - Date.now();
      triggers += v.triggersToday;
      const prev = this.last.get(a);
      if (v.timeMs === null) {
        if (prev !== undefined && prev !== null) this.unscheduledAfterArm++;
      } else {
        armed++;
        if (!this.firstSeenArmed.has(a)) this.firstSeenArmed.set(a, tMs);
        const h = v.timeMs - v.nowMs;
        if (low === null || h < low) {
          low = h;
          lowAccount = a;
        }
      }
      this.last.set(a, v.timeMs);
    });
    this.triggers = triggers;
    this.samples.push({ tMs, low, lowAccount, armed });
  }

  /** Per account: when /status first showed its open-order count and its positions (ms from t0). */
  readonly firstKnown = new Map<string, { orders?: number; positions?: number }>();
  /** A count /status had shown turning unknown (null) again, and known again: each change, with its time. */
  readonly knownChanges: Array<{ t_s: number | null; account: string; what: 'orders' | 'positions'; known: boolean; source: string | null }> = [];
  private readonly known = new Map<string, { orders: boolean; positions: boolean }>();

  private trackKnown(tMs: number, s: Status): void {
    for (const a of s.accounts) {
      const now = { orders: a.open_orders !== null, positions: a.positions !== null };
      const first = this.firstKnown.get(a.name) ?? {};
      if (now.orders && first.orders === undefined) first.orders = tMs;
      if (now.positions && first.positions === undefined) first.positions = tMs;
      this.firstKnown.set(a.name, first);
      const prev = this.known.get(a.name);
      for (const what of ['orders', 'positions'] as const) {
        if (prev && prev[what] !== now[what] && (first[what] ?? tMs) < tMs) this.knownChanges.push({ t_s: secs(tMs), account: a.name, what, known: now[what], source: a.orders_source });
      }
      this.known.set(a.name, now);
    }
  }

  async statusOnce(): Promise<void> {
    const tMs = Date.now() - this.t0;
    const s = await status(this.keeper);
    if (!s) {
      this.statusTimeline.push({ t_s: secs(tMs), phases: {}, sources: {}, ready: null });
      return;
    }
    this.trackKnown(tMs, s);
    const count = (xs: Array<string | null>) => xs.reduce<Record<string, number>>((m, x) => ((m[String(x)] = (m[String(x)] ?? 0) + 1), m), {});
    this.statusTimeline.push({ t_s: secs(tMs), phases: count(s.accounts.map((a) => a.phase)), sources: count(s.accounts.map((a) => a.orders_source)), ready: s.ready ?? null });
    if (this.allArmedStatusMs === null && s.accounts.every((a) => a.phase === 'armed')) this.allArmedStatusMs = tMs;
  }

  /** Samples until `untilMs` from t0 (sampling keeps its 1 s step even when a request is slow). */
  async run(untilMs: number): Promise<void> {
    let nextSample = 0;
    let nextStatus = 0;
    let busy: Promise<void> | undefined;
    let statusBusy: Promise<void> | undefined;
    while (!this.stopped) {
      const t = Date.now() - this.t0;
      if (t >= untilMs) break;
      if (t >= nextSample && !busy) {
        nextSample = t - (t % SAMPLE_MS) + SAMPLE_MS;
        busy = this.sampleOnce().finally(() => (busy = undefined));
      }
      if (t >= nextStatus && !statusBusy) {
        nextStatus = t - (t % STATUS_EVERY_MS) + STATUS_EVERY_MS;
        statusBusy = this.statusOnce().finally(() => (statusBusy = undefined));
      }
      await sleep(50);
    }
    await busy;
    await statusBusy;
  }

  lowest(fromMs: number, toMs = Number.POSITIVE_INFINITY): { ms: number | null; at_s: number | null; account: string | null } {
    let best: (typeof this.samples)[number] | undefined;
    for (const s of this.samples) if (s.tMs >= fromMs && s.tMs <= toMs && s.low !== null && (!best || s.low < best.low!)) best = s;
    return { ms: best?.low ?? null, at_s: secs(best?.tMs ?? null), account: best?.lowAccount ?? null };
  }
}

/** Runs `tasks` at their times (ms from t0), one after the other. */
async function runTasks(t0: number, tasks: Array<{ atMs: number; run: () => Promise<void> }>): Promise<void> {
  for (const t of [...tasks].sort((a, b) => a.atMs - b.atMs)) {
    const wait = t0 + t.atMs - Date.now();
    if (wait > 0) await sleep(wait);
    await t.run();
  }
}

interface Comparison {
  at_s: number | null;
  /** Accounts whose /status open orders, positions or source differ from what was expected. */
  mismatches: Array<{ name: string; keeper: { orders: number | null; positions: number | null; source: string | null }; expected: Counts & { source: string } }>;
  checked: number;
  total_orders: number;
  total_positions: number;
}

/**
 * Compares each account of /status with the venue's view (source `venue`) or the service's
 * (source `service`), as `expect(account)` says.
 */
async function compare(
  t0: number,
  keeper: KeeperProc,
  probe: Probe,
  accounts: Acct[],
  expect: (a: Acct) => 'venue' | 'service',
): Promise<Comparison> {
  const s = await status(keeper);
  const at = Date.now() - t0;
  const out: Comparison = { at_s: secs(at), mismatches: [], checked: 0, total_orders: 0, total_positions: 0 };
  for (const a of accounts) {
    const source = expect(a);
    const truth = source === 'venue' ? await probe.venue(a.address) : await probe.service(a.address);
    const k = s?.accounts.find((x) => x.name === a.name);
    const keeperView = { orders: k?.open_orders ?? null, positions: k?.positions?.count ?? null, source: k?.orders_source ?? null };
    out.checked++;
    out.total_orders += truth.orders;
    out.total_positions += truth.positions;
    if (keeperView.orders !== truth.orders || keeperView.positions !== truth.positions || keeperView.source !== source) {
      out.mismatches.push({ name: a.name, keeper: keeperView, expected: { orders: truth.orders, positions: truth.positions, source } });
    }
  }
  return out;
}

/** The arms the simulator took (scheduleCancel answered ok), by path, between two epoch times. */
function armsByPath(actions: ActionEntry[], offsetMs: number, fromEpoch: number, toEpoch: number, byAccount = false): { rest: number; exchange: number; accounts_via_exchange?: number } {
  const xs = actions.filter((x) => x.type === 'scheduleCancel' && x.result === 'ok' && x.atMs - offsetMs >= fromEpoch && x.atMs - offsetMs < toEpoch);
  const r: { rest: number; exchange: number; accounts_via_exchange?: number } = { rest: xs.filter((x) => x.via === 'rest').length, exchange: xs.filter((x) => x.via === 'exchange').length };
  if (byAccount) r.accounts_via_exchange = new Set(xs.filter((x) => x.via === 'exchange').map((x) => x.account)).size;
  return r;
}

/** When each account's first arm reached the simulator (ms from t0), from its action log. */
function firstArms(actions: ActionEntry[], offsetMs: number, t0: number, addresses: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of actions) {
    if (x.type !== 'scheduleCancel' || x.result !== 'ok' || x.account === undefined) continue;
    const a = x.account.toLowerCase();
    if (addresses.includes(a) && !m.has(a)) m.set(a, x.atMs - offsetMs - t0);
  }
  return m;
}

function simAnswers(sim: SimProc, fromEpoch = Number.NEGATIVE_INFINITY, toEpoch = Number.POSITIVE_INFINITY): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const a of sim.answers) {
    if (a.atMs < fromEpoch || a.atMs >= toEpoch) continue;
    (out[a.family] ??= {})[String(a.status)] = (out[a.family]![String(a.status)] ?? 0) + 1;
  }
  return out;
}

const sim429 = (sim: SimProc, fromEpoch = Number.NEGATIVE_INFINITY, toEpoch = Number.POSITIVE_INFINITY): number => sim.answers.filter((a) => a.status === 429 && a.atMs >= fromEpoch && a.atMs < toEpoch).length;

/** Spans (from the status polls, 5 s apart) where a count /status had shown was unknown again, per account and kind. */
function unknownSpans(obs: Observer, fromMs: number, toMs: number): { spans: number; accounts: string[]; longest_s: number | null; by_what: Record<string, number> } {
  const open = new Map<string, number>();
  const spans: Array<{ account: string; what: string; fromS: number; toS: number }> = [];
  for (const c of obs.knownChanges) {
    const key = `${c.account}|${c.what}`;
    const t = c.t_s ?? 0;
    if (!c.known) open.set(key, t);
    else if (open.has(key)) {
      spans.push({ account: c.account, what: c.what, fromS: open.get(key)!, toS: t });
      open.delete(key);
    }
  }
  for (const [key, t] of open) spans.push({ account: key.split('|')[0]!, what: key.split('|')[1]!, fromS: t, toS: toMs / 1000 });
  const xs = spans.filter((x) => x.toS * 1000 > fromMs && x.fromS * 1000 < toMs);
  return {
    spans: xs.length,
    accounts: [...new Set(xs.map((x) => x.account))],
    // a span is at least one poll; its length is to the poll that saw the count again
    longest_s: xs.length ? Math.max(...xs.map((x) => Number((x.toS - x.fromS).toFixed(1)))) : null,
    by_what: xs.reduce<Record<string, number>>((m, x) => ((m[x.what] = (m[x.what] ?? 0) + 1), m), {}),
  };
}

/** The reads the keeper's budget shed (its debug lines), by kind, between two epoch times. */
function shedsBy(k: KeeperProc, fromEpoch = Number.NEGATIVE_INFINITY, toEpoch = Number.POSITIVE_INFINITY): Record<string, number> {
  return k.sheds.filter((x) => x.atMs >= fromEpoch && x.atMs < toEpoch).reduce<Record<string, number>>((m, x) => ((m[x.what] = (m[x.what] ?? 0) + 1), m), {});
}

/** Per account, when /status first showed its orders and positions (s from the keeper's start). */
function firstKnownView(obs: Observer): { orders_all_known_s: number | null; positions_all_known_s: number | null; positions_never_known: string[]; by_account: Record<string, { orders: number | null; positions: number | null }> } {
  const by: Record<string, { orders: number | null; positions: number | null }> = {};
  for (const [name, f] of obs.firstKnown) by[name] = { orders: secs(f.orders ?? null), positions: secs(f.positions ?? null) };
  const vals = Object.values(by);
  const all = (k: 'orders' | 'positions') => (vals.length && vals.every((v) => v[k] !== null) ? Math.max(...vals.map((v) => v[k]!)) : null);
  return { orders_all_known_s: all('orders'), positions_all_known_s: all('positions'), positions_never_known: Object.entries(by).filter(([, v]) => v.positions === null).map(([n]) => n), by_account: by };
}

/** What the keeper's /metrics says: its requests, 429s, reads shed, lapses, and the info weight it spent. */
function keeperMetrics(text: string | undefined): Record<string, unknown> {
  if (!text) return { unavailable: true };
  const WEIGHTS: Record<string, number> = { frontendOpenOrders: 20, openOrders: 20, clearinghouseState: 2, spotClearinghouseState: 2, userRole: 60, userRateLimit: 20, extraAgents: 20 };
  const byEndpoint = requestsByEndpoint(text);
  let infoWeight = 0;
  let exchangeWeight = 0;
  for (const [endpoint, codes] of Object.entries(byEndpoint)) {
    const n = Object.values(codes).reduce((s, x) => s + x, 0);
    if (endpoint.startsWith('info:')) infoWeight += n * (WEIGHTS[endpoint.slice(5)] ?? 20);
    if (endpoint.startsWith('exchange:')) exchangeWeight += n;
  }
  return {
    reads_shed: metricSum(text, 'dms_keeper_reads_shed_total'),
    keeper_429s: metricSum(text, 'dms_keeper_venue_requests_total', { code: /^429$/ }),
    lapses: metricSum(text, 'dms_keeper_lapses_total'),
    cancels_fired: metricSum(text, 'dms_keeper_cancels_fired_total'),
    ws_connected: metricSum(text, 'dms_keeper_ws_connected'),
    venue_weight_sent: infoWeight + exchangeWeight,
    info_weight_sent: infoWeight,
    exchange_actions_sent: exchangeWeight,
    requests: byEndpoint,
  };
}

/** Seeds the simulator, writes the keys and the config, and runs check-config on it (its output kept in artifacts/). */
async function prepare(
  sim: Parameters<typeof configYaml>[0]['sim'],
  dir: string,
  artifacts: string,
  scenario: string,
  accounts: Parameters<typeof seed>[1],
  opts: Omit<Parameters<typeof configYaml>[0], 'sim' | 'accounts' | 'stateDir' | 'opsPort'>,
) {
  await seed(sim, accounts);
  const d = await keysFor(dir, accounts);
  const opsPort = await freePort();
  const config = join(dir, 'keeper.yaml');
  await writeFile(config, configYaml({ sim, ...opts, accounts, stateDir: join(dir, 'state'), opsPort }));
  const plan = await checkConfig(d, config);
  await writeFile(join(artifacts, `venue-source.check-config.${scenario}.txt`), plan.stdout + (plan.stderr ? `\n--- stderr ---\n${plan.stderr}` : ''));
  return { addresses: accounts.map((a) => a.address), d, opsPort, config, plan };
}

/** What every scenario's result records of the run: the keeper's end state and log, check-config, the probe, the files. */
function runRecord(r: { final: Status | undefined; keeper: KeeperProc; t0: number; plan: { code: number | null; stdout: string; stderr: string }; probe: Probe; files: Record<string, unknown> }): Record<string, unknown> {
  const { final, keeper, probe, plan } = r;
  return {
    keeper_status_at_end: final ? { ready: final.ready, budget_mode: final.budget_mode, cadence: final.cadence, budget_limits: final.budget_limits } : null,
    keeper_events: Object.fromEntries(keeper.eventCounts),
    keeper_log_digest: digest(keeper, r.t0),
    check_config: { exit_code: plan.code, output: plan.stdout, stderr: plan.stderr || undefined },
    probe: { address: probe.localAddress, info_weight: probe.weight, refused: probe.refused, requests: probe.requests, note: 'simulator_answers include these (its request log names no client)' },
    files: r.files,
  };
}

function digest(k: KeeperProc, t0: number): Array<Record<string, unknown>> {
  return k.events.slice(0, 60).map((e) => {
    const { time, level, pid, hostname, service, ...rest } = e;
    void level;
    void pid;
    void hostname;
    void service;
    const at = typeof time === 'string' ? Date.parse(time) : typeof time === 'number' ? time : Number.NaN;
    return { t_s: secs(at - t0), ...rest };
  });
}

// ---- seeds ----

const usdc = { coin: 'USDC', token: 0, total: '1000' };

function venueOnlyAccounts(): Acct[] {
  const mains = benchAddresses(19);
  const sub = demoAddress('venue-only-sub');
  const accts: Acct[] = mains.map((address, i) => ({
    name: i === 3 ? 'hidden' : `acct-${i}`,
    address,
    keyFile: `a${i}.master`,
    ...(i === 3 ? { armWhen: 'orders_open' as const } : {}),
    seed: {
      address,
      tradedVolumeUsd: 50_000_000,
      venueOrders: Array.from({ length: i % 4 }, (_, k) => ({ coin: k % 2 ? 'ETH' : '@107', side: k % 2 ? 'A' : 'B', limitPx: '100.5', sz: '1.25' })),
      perpPositions: i % 3 === 0 ? [{ coin: 'BTC', szi: '0.5', entryPx: '60000', markPx: '61000' }] : [],
      spotBalances: [usdc, ...(i % 5 === 0 ? [{ coin: 'PURR', token: 1, total: '12' }] : [])],
    },
  }));
  accts.push({
    name: 'acct-sub',
    address: sub,
    keyFile: 'a0.master',
    agentName: 'dms-keeper-sub',
    sub: true,
    seed: { address: sub, parent: mains[0]!, tradedVolumeUsd: 50_000_000, venueOrders: [{ coin: 'SOL', side: 'B', limitPx: '150', sz: '3' }], spotBalances: [usdc, { coin: 'HYPE', token: 150, total: '4' }] },
  });
  return accts;
}

const HIDDEN_OUTAGE = 7;

function outageAccounts(): Acct[] {
  const outcomes = buildCatalog({ nowMs: Date.now() }).tradableOutcomeIds();
  const mains = benchAddresses(20);
  return mains.map((address, i) => {
    const hidden = i === HIDDEN_OUTAGE;
    const oc = (k: number) => outcomes[(i + k) % outcomes.length]!;
    return {
      name: hidden ? 'hidden' : `acct-${i}`,
      address,
      keyFile: `a${i}.master`,
      ...(hidden ? { armWhen: 'orders_open' as const } : {}),
      seed: {
        address,
        tradedVolumeUsd: 50_000_000,
        // in the service's listing (and on the venue as `#` outcome coins)
        orders: hidden ? [] : Array.from({ length: i % 3 }, (_, k) => ({ outcome_id: oc(k), side: 0, direction: 'buy', price: '0.4', quantity: '5' })),
        positions: !hidden && i % 4 === 0 ? [{ outcome_id: oc(5), side: 0, quantity: '10', average_entry_price: '0.35', mark_price: '0.41' }] : [],
        // only on the venue
        venueOrders: hidden
          ? [
              { coin: 'BTC', side: 'B', limitPx: '50000', sz: '0.1' },
              { coin: '@107', side: 'A', limitPx: '2', sz: '10' },
            ]
          : i % 5 === 2
            ? [{ coin: 'ETH', side: 'A', limitPx: '3500', sz: '0.2' }]
            : [],
        perpPositions: !hidden && i % 6 === 1 ? [{ coin: 'BTC', szi: '-0.25', entryPx: '60000', markPx: '59000' }] : [],
        spotBalances: [usdc],
      },
    };
  });
}

async function seed(sim: SimProc, accounts: Acct[]): Promise<void> {
  // main accounts before their subaccounts
  for (const a of [...accounts.filter((x) => !x.sub), ...accounts.filter((x) => x.sub)]) await admin(sim, 'POST', 'accounts', a.seed);
}

async function keysFor(dir: string, accounts: Acct[]) {
  const keys: Record<string, string> = {};
  for (const a of accounts) {
    const i = Number(/^a(\d+)\.master$/.exec(a.keyFile)![1]);
    keys[a.keyFile] = benchKey(i);
  }
  return writeKeys(dir, keys);
}

/**
 * Runs a scenario with its own temp dir, simulator process and probe, and stops them (and the
 * keeper, once `started` was told of it) whatever happens.
 */
async function inScenario(
  prefix: string,
  run: (s: { dir: string; sim: SimProc; probe: Probe; started: (k: KeeperProc) => KeeperProc }) => Promise<ScenarioResult>,
): Promise<ScenarioResult> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const sim = await startSimProcess(dir, BUDGET);
  const probe = new Probe(sim.baseUrl);
  let keeper: KeeperProc | undefined;
  try {
    return await run({ dir, sim, probe, started: (k) => (keeper = k) });
  } finally {
    await keeper?.stop();
    probe.close();
    await sim.stop();
  }
}

// ---- scenario 1: venue_only ----

export function runVenueOnly(minutes: number, artifacts: string): Promise<ScenarioResult> {
  return inScenario('dmsk-venue-only-', async ({ dir, sim, probe, started }) => {
    const services = await admin(sim, 'POST', 'services', { venueOnly: true, restStatus: 404 });
    const accounts = venueOnlyAccounts();
    const { addresses, d, opsPort, config, plan } = await prepare(sim, dir, artifacts, 'venue_only', accounts, { withService: false, source: 'venue', path: 'exchange', ordersEveryS: 20, positionsEveryS: 60 });
    const serviceProbe = await getText(`${sim.baseUrl}/v1/health`).then((t) => (t ?? '').slice(0, 120));

    const t0 = Date.now();
    const keeper = started(await startKeeperProcess(d, config, opsPort));
    const obs = new Observer(sim, keeper, addresses, t0);
    const runMs = minutes * 60_000;
    const extra = accounts.find((a) => a.name === 'acct-1')!;
    let extraOrderAt: number | null = null;
    await Promise.all([
      obs.run(runMs),
      runTasks(t0, [
        {
          atMs: runMs / 2,
          run: async () => {
            await admin(sim, 'POST', 'venue-orders', { address: extra.address, order: { coin: 'ETH', side: 'B', limitPx: '3000', sz: '0.5' } });
            extraOrderAt = Date.now() - t0;
          },
        },
      ]),
    ]);
    const endEpoch = Date.now();
    const final = await status(keeper);
    const metricsText = await getText(`${keeper.ops}/metrics`);
    const actions = await simActions(sim);
    const end = await compare(t0, keeper, probe, accounts, () => 'venue');
    const first = firstArms(actions, obs.venueOffsetMs, t0, addresses);
    const allArmedMs = first.size === addresses.length ? Math.max(...first.values()) : null;
    const after = allArmedMs === null ? { ms: null, at_s: null, account: null } : obs.lowest(allArmedMs + SAMPLE_MS);
    const km = keeperMetrics(metricsText);
    const venue429 = sim429(sim, t0, endEpoch) - probe.refused;
    const hidden = final?.accounts.find((a) => a.name === 'hidden');
    const sub = final?.accounts.find((a) => a.name === 'acct-sub');
    const nameOf = (a: string | null) => accounts.find((x) => x.address === a)?.name ?? a;
    const r: ScenarioResult = {
      scenario: 'venue_only',
      minutes,
      accounts: accounts.length,
      ok: false,
      bounds: [],
      simulator: { budget: BUDGET, services, rest_answer_to_a_service_read: serviceProbe },
      config: { watch: { source: 'venue', orders_every_seconds: 20, positions_every_seconds: 60, notifications: true }, switch: { ...SWITCH, path: 'exchange' }, base_url: null, rate_limits: 'defaults (global 1200/60 s, schedule_cancel 600/60 s, exchange 1200/60 s)' },
      all_armed_s: secs(allArmedMs),
      all_armed_sampled_s: secs(obs.firstSeenArmed.size === addresses.length ? Math.max(...obs.firstSeenArmed.values()) : null),
      all_phase_armed_in_status_s: secs(obs.allArmedStatusMs),
      first_arm_by_account_s: Object.fromEntries([...first].map(([a, t]) => [nameOf(a), secs(t)])),
      lowest_horizon_after_all_armed_s: secs(after.ms),
      lowest_horizon_after_all_armed_at_s: after.at_s,
      lowest_horizon_account: nameOf(after.account),
      venue_429s: venue429,
      simulator_answers: simAnswers(sim, t0, endEpoch),
      deadlines_passed: { fired_cancels: obs.triggers, unscheduled_after_arm: obs.unscheduledAfterArm },
      counts_equal_at_end: end.mismatches.length === 0,
      end_comparison: end,
      extra_venue_order: { account: extra.name, placed_at_s: secs(extraOrderAt) },
      hidden: hidden ? { phase: hidden.phase, should_be_armed: hidden.should_be_armed, open_orders: hidden.open_orders, orders_source: hidden.orders_source, armed: hidden.armed } : null,
      subaccount: sub ? { account_type: sub.account_type, phase: sub.phase, open_orders: sub.open_orders, orders_source: sub.orders_source } : null,
      notifications_subscribed: final?.accounts.filter((a) => a.notifications).length ?? null,
      reads_shed_by_kind: shedsBy(keeper, t0, endEpoch),
      reads_shed_per_minute: Array.from({ length: Math.ceil(minutes) }, (_, i) => Object.values(shedsBy(keeper, t0 + i * 60_000, t0 + (i + 1) * 60_000)).reduce((x, y) => x + y, 0)),
      first_known: firstKnownView(obs),
      counts_unknown_again: unknownSpans(obs, 0, endEpoch - t0),
      known_changes: obs.knownChanges.slice(0, 100),
      keeper: km,
      status_timeline: obs.statusTimeline.filter((_, i) => i % 6 === 0),
      ...runRecord({ final, keeper, t0, plan, probe, files: { dir, keeper_log: keeper.logFile, simulator_log: sim.logFile, config } }),
    };
    const b = r.bounds;
    b.push({ what: 'every account armed (the simulator took a scheduleCancel of each)', ok: allArmedMs !== null });
    b.push({ what: `no deadline passed (no fired cancel, nothing unscheduled after an arm)`, ok: obs.triggers === 0 && obs.unscheduledAfterArm === 0 });
    b.push({ what: `lowest horizon after all armed >= min_horizon ${SWITCH.minHorizonS} s`, ok: after.ms !== null && after.ms >= SWITCH.minHorizonS * 1000 });
    b.push({ what: 'zero 429s answered by the simulator', ok: venue429 === 0 });
    b.push({ what: "every account's open orders and positions in /status equal the venue's at the end (source venue)", ok: end.mismatches.length === 0 });
    b.push({ what: 'the subaccount resolved as a subaccount (userRole) and armed', ok: sub?.account_type === 'subaccount' && sub.phase === 'armed' });
    b.push({ what: 'hidden (arm_when orders_open, venue-only orders) armed', ok: hidden?.phase === 'armed' && hidden.should_be_armed && first.has(accounts.find((a) => a.name === 'hidden')!.address) });
    b.push({ what: 'no REST service request answered 200 (the keeper never reads the service)', ok: !(r.simulator_answers as Record<string, Record<string, number>>).rest?.['200'] });
    b.push({ what: 'check-config exits 0 (every account keeps its min horizon in the plan)', ok: plan.code === 0 });
    r.ok = b.every((x) => x.ok);
    return r;
  });
}

// ---- scenario 2: service_outage ----

export function runServiceOutage(minutes: number, artifacts: string): Promise<ScenarioResult> {
  return inScenario('dmsk-service-outage-', async ({ dir, sim, probe, started }) => {
    const accounts = outageAccounts();
    const { addresses, d, opsPort, config, plan } = await prepare(sim, dir, artifacts, 'service_outage', accounts, { withService: true, source: 'service_then_venue', path: 'rest_then_exchange', ordersEveryS: 30, positionsEveryS: 60 });

    const t0 = Date.now();
    const keeper = started(await startKeeperProcess(d, config, opsPort));
    const obs = new Observer(sim, keeper, addresses, t0);
    const outageMs = minutes * 60_000;
    const outageFrom = BEFORE_MS;
    const outageTo = BEFORE_MS + outageMs;
    const endMs = outageTo + AFTER_MS;
    const k = keeper;
    const isHidden = (a: Acct) => a.armWhen === 'orders_open';
    const comparisons: Array<Comparison & { phase: string }> = [];
    let outageFault: unknown;
    let outageAt: { from: number; to: number } | null = null;
    let metricsAtOutageStart: string | undefined;
    const added: Array<{ what: string; account: string; at_s: number | null }> = [];
    const checkAt = (atMs: number, phase: string, expect: (a: Acct) => 'venue' | 'service') => ({
      atMs,
      run: async () => {
        comparisons.push({ phase, ...(await compare(t0, k, probe, accounts, expect)) });
      },
    });
    // During the outage: from 75 s in (the first fallback read needs an orders period), every 60 s,
    // and 5 s before it ends; the probe spends 480 weight each (its own IP), at most two a minute.
    const during: number[] = [];
    for (let t = outageFrom + 75_000; t < outageTo - 30_000; t += 60_000) during.push(t);
    during.push(outageTo - 5_000);
    await Promise.all([
      obs.run(endMs),
      runTasks(t0, [
        checkAt(outageFrom - 5_000, 'before', (a) => (isHidden(a) ? 'venue' : 'service')),
        {
          atMs: outageFrom,
          run: async () => {
            metricsAtOutageStart = await getText(`${k.ops}/metrics`);
            const from = Date.now();
            outageFault = await admin(sim, 'POST', 'faults', { kind: 'status', status: 503, path: 'rest', forMs: outageMs });
            outageAt = { from, to: from + outageMs };
          },
        },
        {
          atMs: outageFrom + 30_000,
          run: async () => {
            const a2 = accounts[2]!;
            const a4 = accounts[4]!;
            const outcome = buildCatalog({ nowMs: Date.now() }).tradableOutcomeIds()[11]!;
            await admin(sim, 'POST', 'orders', { address: a2.address, order: { outcome_id: outcome, side: 1, direction: 'buy', price: '0.3', quantity: '7' } });
            added.push({ what: 'service order', account: a2.name, at_s: secs(Date.now() - t0) });
            await admin(sim, 'POST', 'venue-orders', { address: a4.address, order: { coin: 'SOL', side: 'B', limitPx: '140', sz: '2' } });
            added.push({ what: 'venue-only order', account: a4.name, at_s: secs(Date.now() - t0) });
          },
        },
        ...during.map((t) => checkAt(t, 'outage', () => 'venue')),
        checkAt(endMs - 2_000, 'after', (a) => (isHidden(a) ? 'venue' : 'service')),
      ]),
    ]);
    const endEpoch = Date.now();
    const final = await status(keeper);
    const metricsText = await getText(`${keeper.ops}/metrics`);
    const actions = await simActions(sim);
    const off = obs.venueOffsetMs;
    const oa = outageAt as { from: number; to: number } | null;
    const oFrom = oa?.from ?? t0 + outageFrom;
    const oTo = oa?.to ?? t0 + outageTo;
    const first = firstArms(actions, off, t0, addresses);
    const allArmedMs = first.size === addresses.length ? Math.max(...first.values()) : null;
    const lowBefore = obs.lowest(allArmedMs === null ? 0 : allArmedMs + SAMPLE_MS, oFrom - t0);
    const lowOutage = obs.lowest(oFrom - t0, oTo - t0);
    const lowAfter = obs.lowest(oTo - t0, endMs);
    const lowAll = obs.lowest(allArmedMs === null ? 0 : allArmedMs + SAMPLE_MS);
    const outageArms = armsByPath(actions, off, oFrom, oTo, true);
    const nameOf = (a: string | null) => accounts.find((x) => x.address === a)?.name ?? a;
    const venue429 = sim429(sim, t0, endEpoch) - probe.refused;
    const during503 = sim.answers.filter((x) => x.family === 'rest' && x.status === 503 && x.atMs >= oFrom && x.atMs < oTo);
    const km = keeperMetrics(metricsText);
    const kmStart = keeperMetrics(metricsAtOutageStart);
    const hiddenAcct = accounts.find(isHidden)!;
    const hiddenStatus = final?.accounts.find((a) => a.name === hiddenAcct.name);
    // The sources /status showed while the service was down, after the first orders period of the outage.
    const outageSources = obs.statusTimeline.filter((s) => s.t_s !== null && s.t_s * 1000 >= oFrom - t0 + 45_000 && s.t_s * 1000 < oTo - t0);
    const firstAllVenue = obs.statusTimeline.find((s) => s.t_s !== null && s.t_s * 1000 >= oFrom - t0 && s.sources.venue === accounts.length);
    const unknownDuring = unknownSpans(obs, oFrom - t0, oTo - t0);
    const backOnService = obs.statusTimeline.find((s) => s.t_s !== null && s.t_s * 1000 >= oTo - t0 && s.sources.service === accounts.length - 1);
    const r: ScenarioResult = {
      scenario: 'service_outage',
      minutes,
      accounts: accounts.length,
      ok: false,
      bounds: [],
      simulator: { budget: BUDGET, outage_fault: outageFault },
      config: { watch: { source: 'service_then_venue', orders_every_seconds: 30, positions_every_seconds: 60, notifications: true }, switch: { ...SWITCH, path: 'rest_then_exchange' }, base_url: sim.baseUrl, rate_limits: 'defaults' },
      phases_s: { outage_from: secs(oFrom - t0), outage_to: secs(oTo - t0), end: secs(endEpoch - t0) },
      all_armed_s: secs(allArmedMs),
      all_phase_armed_in_status_s: secs(obs.allArmedStatusMs),
      lowest_horizon_s: { before_outage: secs(lowBefore.ms), during_outage: secs(lowOutage.ms), after_outage: secs(lowAfter.ms), whole_run_after_all_armed: secs(lowAll.ms), at_s: lowAll.at_s, account: nameOf(lowAll.account) },
      arms_by_path: {
        before_outage: armsByPath(actions, off, t0, oFrom),
        during_outage: outageArms,
        after_outage: armsByPath(actions, off, oTo, endEpoch + 1),
      },
      rest_503s_during_outage: during503.length,
      first_rest_503_s: secs(during503[0] ? during503[0].atMs - t0 : null),
      venue_429s: venue429,
      simulator_answers: { before: simAnswers(sim, t0, oFrom), during: simAnswers(sim, oFrom, oTo), after: simAnswers(sim, oTo, endEpoch) },
      deadlines_passed: { fired_cancels: obs.triggers, unscheduled_after_arm: obs.unscheduledAfterArm },
      comparisons,
      orders_source_during_outage: {
        first_all_venue_s: firstAllVenue?.t_s ?? null,
        samples_from_45s_in: outageSources.length,
        samples_all_venue: outageSources.filter((s) => s.sources.venue === accounts.length).length,
      },
      back_on_service_s: backOnService?.t_s ?? null,
      added_orders: added,
      reads_shed_by_kind: { before: shedsBy(keeper, t0, oFrom), during: shedsBy(keeper, oFrom, oTo), after: shedsBy(keeper, oTo, endEpoch) },
      counts_unknown_during_outage: unknownDuring,
      first_known: firstKnownView(obs),
      known_changes: obs.knownChanges.slice(0, 200),
      hidden: hiddenStatus ? { name: hiddenStatus.name, phase: hiddenStatus.phase, should_be_armed: hiddenStatus.should_be_armed, open_orders: hiddenStatus.open_orders, orders_source: hiddenStatus.orders_source, first_arm_s: secs(first.get(hiddenAcct.address) ?? null) } : null,
      keeper: km,
      keeper_at_outage_start: kmStart,
      status_timeline: obs.statusTimeline.filter((_, i) => i % 3 === 0),
      ...runRecord({ final, keeper, t0, plan, probe, files: { dir, keeper_log: keeper.logFile, simulator_log: sim.logFile, config } }),
    };
    const b = r.bounds;
    const by = (phase: string) => comparisons.filter((c) => c.phase === phase);
    b.push({ what: 'every account armed before the outage', ok: allArmedMs !== null && allArmedMs < oFrom - t0 });
    b.push({ what: 'before the outage: /status counts equal the service listing (hidden: the venue), sources as expected', ok: by('before').every((c) => c.mismatches.length === 0) });
    b.push({ what: 'the service answered 503 during the outage', ok: during503.length > 0 });
    b.push({ what: 'during the outage (every check from 75 s in): every account orders_source venue, open orders and positions equal the venue\'s', ok: by('outage').length > 0 && by('outage').every((c) => c.mismatches.length === 0) });
    b.push({ what: 'orders and positions stay known during the outage (no /status poll, every 5 s, shows a count it had turn unknown)', ok: unknownDuring.spans === 0 });
    b.push({ what: 'during the outage: arms went through the exchange endpoint for every account, none by REST', ok: outageArms.rest === 0 && (outageArms.accounts_via_exchange ?? 0) === accounts.length });
    b.push({ what: 'no deadline passed (no fired cancel, nothing unscheduled after an arm; lowest horizon > 0)', ok: obs.triggers === 0 && obs.unscheduledAfterArm === 0 && lowAll.ms !== null && lowAll.ms > 0 });
    b.push({ what: `lowest horizon during the outage >= min_horizon ${SWITCH.minHorizonS} s`, ok: lowOutage.ms !== null && lowOutage.ms >= SWITCH.minHorizonS * 1000 });
    b.push({ what: 'zero 429s answered by the simulator', ok: venue429 === 0 });
    b.push({ what: 'hidden (arm_when orders_open, venue-only orders) armed, counted on the venue', ok: hiddenStatus?.phase === 'armed' && hiddenStatus.orders_source === 'venue' && first.has(hiddenAcct.address) });
    b.push({ what: 'after the outage: back on the service, counts equal', ok: by('after').every((c) => c.mismatches.length === 0) });
    r.ok = b.every((x) => x.ok);
    return r;
  });
}

// ---- the command line ----

function summary(r: ScenarioResult): string {
  const lines = [`== ${r.scenario} (${r.minutes} min, ${r.accounts} accounts): ${r.ok ? 'within bounds' : 'BOUNDS MISSED'}`];
  const k = r.keeper as Record<string, unknown>;
  const dp = r.deadlines_passed as { fired_cancels: number; unscheduled_after_arm: number };
  lines.push(`  all armed ${r.all_armed_s ?? 'never'} s after the keeper's start; /status all 'armed' at ${r.all_phase_armed_in_status_s ?? 'never'} s`);
  if (r.scenario === 'venue_only') {
    lines.push(`  lowest horizon after all armed ${r.lowest_horizon_after_all_armed_s} s (${r.lowest_horizon_account}, at ${r.lowest_horizon_after_all_armed_at_s} s)`);
    const e = r.end_comparison as Comparison;
    lines.push(`  counts at the end: ${e.checked - e.mismatches.length}/${e.checked} accounts equal the venue's (${e.total_orders} orders, ${e.total_positions} positions)${e.mismatches.length ? ': ' + JSON.stringify(e.mismatches) : ''}`);
    lines.push(`  subaccount ${JSON.stringify(r.subaccount)}; hidden ${JSON.stringify(r.hidden)}`);
    const fk = r.first_known as ReturnType<typeof firstKnownView>;
    lines.push(`  /status knew every account's orders at ${fk.orders_all_known_s} s, positions at ${fk.positions_all_known_s} s${fk.positions_never_known.length ? ` (never: ${fk.positions_never_known.join(', ')})` : ''}; reads shed by kind ${JSON.stringify(r.reads_shed_by_kind)}, per minute ${JSON.stringify(r.reads_shed_per_minute)}; counts turned unknown again ${JSON.stringify(r.counts_unknown_again)}`);
  } else {
    lines.push(`  outage ${JSON.stringify(r.phases_s)}; lowest horizon ${JSON.stringify(r.lowest_horizon_s)}`);
    lines.push(`  arms by path ${JSON.stringify(r.arms_by_path)}; REST 503s during the outage ${r.rest_503s_during_outage}`);
    for (const c of r.comparisons as Array<Comparison & { phase: string }>) {
      lines.push(`  check ${c.phase} at ${c.at_s} s: ${c.checked - c.mismatches.length}/${c.checked} equal (${c.total_orders} orders, ${c.total_positions} positions)${c.mismatches.length ? ': ' + JSON.stringify(c.mismatches) : ''}`);
    }
    lines.push(`  counts unknown during the outage ${JSON.stringify(r.counts_unknown_during_outage)}; reads shed ${JSON.stringify(r.reads_shed_by_kind)}`);
    lines.push(`  orders source: all venue from ${JSON.stringify(r.orders_source_during_outage)}, back on service at ${r.back_on_service_s} s; hidden ${JSON.stringify(r.hidden)}`);
  }
  lines.push(`  429s answered by the simulator ${r.venue_429s} (keeper counted ${k.keeper_429s}); reads shed ${k.reads_shed}; fired cancels ${dp.fired_cancels}, unscheduled after an arm ${dp.unscheduled_after_arm}; keeper lapses ${k.lapses}`);
  lines.push(`  keeper sent ${k.info_weight_sent} info weight + ${k.exchange_actions_sent} exchange actions; check-config exit ${(r.check_config as { exit_code: number | null }).exit_code}`);
  for (const b of r.bounds) lines.push(`  [${b.ok ? 'ok' : 'FAIL'}] ${b.what}`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { scenario: { type: 'string', default: 'all' }, minutes: { type: 'string', default: '5' }, 'keeper-log-level': { type: 'string', default: 'debug' } } });
  KEEPER_LOG_LEVEL = values['keeper-log-level'];
  const wanted = values.scenario === 'all' ? [...SCENARIOS] : [values.scenario as ScenarioName];
  if (!wanted.every((s) => SCENARIOS.includes(s))) throw new Error(`--scenario must be one of ${SCENARIOS.join(', ')} or all`);
  const minutes = Number(values.minutes);
  if (!Number.isFinite(minutes) || minutes <= 0) throw new Error('--minutes must be a positive number');
  // What was built: the commit, and the files under src/ that differ from it (dist/ is the working tree's).
  const git = (args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  const build = { head: git(['rev-parse', 'HEAD']) || null, src_changed_since_head: git(['status', '--porcelain', '--', 'src']).split('\n').filter(Boolean) };
  const artifacts = join(ROOT, 'artifacts');
  await mkdir(artifacts, { recursive: true });
  const results: ScenarioResult[] = [];
  for (const s of wanted) {
    console.error(`bench:venue: ${s}, ${minutes} min${s === 'service_outage' ? ` (+${(BEFORE_MS + AFTER_MS) / 1000} s before and after the outage)` : ''} ...`);
    const r = s === 'venue_only' ? await runVenueOnly(minutes, artifacts) : await runServiceOutage(minutes, artifacts);
    r.build = build;
    results.push(r);
    console.log(summary(r));
  }
  return recordScenarios(join(artifacts, 'venue-source.json'), SCENARIOS, results);
}

runMain('bench:venue', main);
