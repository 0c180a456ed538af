/**
 * Issue 19's budget scenarios as built processes: the built keeper (`dist/src/main.js run`) as one
 * or two child processes against the simulator (in this process, loopback only) with the budget
 * `signed_window_100_per_5s` (one window of 100 per 5 s over every signed action on both
 * endpoints), every account given by its master key only (each needs an approveAgent), deadline
 * 20 s, min horizon 8 s, re-arm every 5 s, reads every 300 s. Measured from the simulator's side
 * every 250 ms: when every account is armed (from the keeper's start), the 429s the venue answered
 * (counted where its rate limiter decides, and the keepers' own `dms_keeper_venue_requests_total`),
 * every account's venue-side horizon.
 *
 * bench/budget.ts is the command line (`npm run bench:budget`); test/shared-budget-processes.test.ts
 * runs the two-shard scenario in a shorter form.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { shardOf } from '../src/config/shard.js';
import { startSimulator, type Simulator } from '../src/sim/simulator.js';
import { startRedis, type TestRedis } from '../test/support/redis.js';
import { freePort } from './venue-procs.js';
import { benchAddresses, benchKey } from './keys.js';
import { nativeRecovery } from './native-recovery.js';

/** The repository (this file runs from bench/ under vitest and from dist/bench/ when built). */
export const ROOT = existsSync(resolve(import.meta.dirname, '../package.json')) ? resolve(import.meta.dirname, '..') : resolve(import.meta.dirname, '../..');

export const SWITCH = { deadlineS: 20, rearmS: 5, minHorizonS: 8 };
/** The venue's window: 100 per 5 s, B = 20 per second. */
export const B_PER_SECOND = 20;
export const SAMPLE_MS = 250;
/** A burst of 429s: refusals no more than this apart. */
const BURST_GAP_MS = 2_000;

export type ScenarioName = 'n180' | 'n228' | 'n270' | 'told200' | 'shards';
export const SCENARIOS: readonly ScenarioName[] = ['n180', 'n228', 'n270', 'told200', 'shards'];


const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round = (ms: number | null): number | null => (ms === null || !Number.isFinite(ms) ? null : Math.round(ms));
const secs = (ms: number | null): number | null => (ms === null || !Number.isFinite(ms) ? null : Number((ms / 1000).toFixed(2)));

/** One keeper process: its ops URL and its log lines (pino JSON), kept whole in a file beside its config. */
export interface KeeperProc {
  child: ChildProcess;
  ops: string;
  logFile: string;
  /** Parsed JSON log lines with these `event`s (the rest is only in the file). */
  events: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const KEPT_EVENTS = new Set(['listening', 'start_complete', 'cadence', 'budget_limit_learned', 'budget_limit_probe', 'budget_limit_restored', 'budget_mode', 'rate_limited', 'shared_token_bypass']);

async function startKeeper(sim: Simulator, n: number, told: number, opts: { dir?: string; shard?: { index: number; count: number }; redisUrl?: string; logLevel?: string } = {}): Promise<KeeperProc> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'dmsk-budget-')));
  const creds = join(dir, 'creds');
  await mkdir(creds, { recursive: true });
  const addresses = benchAddresses(n);
  for (let i = 0; i < n; i++) {
    const f = join(creds, `a${i}.master`);
    await writeFile(f, `${benchKey(i)}\n`, { mode: 0o600 });
    await chmod(f, 0o600);
  }
  const port = await freePort();
  const config = join(dir, 'keeper.yaml');
  await writeFile(
    config,
    [
      'venue:',
      `  base_url: ${sim.baseUrl}`,
      `  exchange_url: ${sim.exchangeUrl}`,
      `  ws_url: ${sim.wsUrl.replace('http', 'ws')}`,
      '  request_timeout_ms: 2000',
      `switch: { deadline_seconds: ${SWITCH.deadlineS}, rearm_every_seconds: ${SWITCH.rearmS}, min_horizon_seconds: ${SWITCH.minHorizonS}, on_shutdown: keep }`,
      'watch: { orders_every_seconds: 300, positions_every_seconds: 300, notifications: false }',
      'rate_limits:',
      `  global: { requests: ${told}, per_seconds: 5 }`,
      `  schedule_cancel: { requests: ${told}, per_seconds: 5 }`,
      ...(opts.redisUrl ? [`  shared: { redis_url: "${opts.redisUrl}", name: budget-pair }`] : []),
      ...(opts.shard ? [`shard: { index: ${opts.shard.index}, count: ${opts.shard.count} }`] : []),
      'accounts:',
      ...addresses.map((a, i) => `  - { name: a${i}, address: "${a}", master_key: { file: a${i}.master } }`),
      `state_dir: ${join(dir, 'state')}`,
      `server: { listen: "127.0.0.1:${port}" }`,
      `log: { level: ${opts.logLevel ?? 'info'} }`,
    ].join('\n') + '\n',
  );
  const logFile = join(dir, 'keeper.log');
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/main.js'), 'run', '--config', config], {
    cwd: ROOT,
    env: { ...process.env, CREDENTIALS_DIRECTORY: creds, NOTIFY_SOCKET: undefined, STATE_DIRECTORY: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: Array<Record<string, unknown>> = [];
  let partial = '';
  let writes = Promise.resolve();
  const onData = (d: Buffer): void => {
    const text = d.toString();
    writes = writes.then(() => appendFile(logFile, text)).catch(() => undefined);
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{') || !line.includes('"event"')) continue;
      try {
        const j = JSON.parse(line) as Record<string, unknown>;
        if (KEPT_EVENTS.has(String(j.event))) events.push(j);
      } catch {
        // not JSON
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', (d: Buffer) => void appendFile(logFile, d.toString()).catch(() => undefined));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, ops: `http://127.0.0.1:${port}`, logFile, events, exited };
}

async function stopKeeper(k: KeeperProc): Promise<void> {
  if (k.child.exitCode !== null || k.child.signalCode !== null) return;
  const t = setTimeout(() => k.child.kill('SIGKILL'), 20_000);
  k.child.kill('SIGTERM');
  await k.exited;
  clearTimeout(t);
}

async function getJson(url: string): Promise<unknown> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return await r.json();
  } catch {
    return undefined;
  }
}

/** The keeper's shared-budget misses (`dms_keeper_shared_budget_{bypass,shed}_total`, every class). */
async function keeperMisses(k: KeeperProc): Promise<{ bypass: number; shed: number } | null> {
  try {
    const text = await (await fetch(`${k.ops}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    const sum = (name: string) => [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'gm'))].reduce((s, m) => s + Number(m[1]), 0);
    return { bypass: sum('dms_keeper_shared_budget_bypass_total'), shed: sum('dms_keeper_shared_budget_shed_total') };
  } catch {
    return null;
  }
}

/**
 * Per second from the keeper's start, what the venue took: approvals, arms and 429s, by shard when
 * `shards` is given (`[shard0, shard1]` each), up to `toMs`.
 */
function timeline(sim: Simulator, refusals: readonly number[], t0Epoch: number, toMs: number, shards?: number): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const log = sim.state.actionLog();
  const venueMinusEpoch = sim.clock.nowMs() - Date.now();
  for (let s = 0; s * 1000 < toMs; s++) {
    const inSecond = (x: { atMs: number }) => x.atMs - venueMinusEpoch - t0Epoch >= s * 1000 && x.atMs - venueMinusEpoch - t0Epoch < (s + 1) * 1000;
    const xs = log.filter(inSecond);
    const count = (type: string) => {
      const of = xs.filter((x) => x.type === type && x.result === 'ok');
      if (!shards) return of.length;
      return Array.from({ length: shards }, (_, i) => of.filter((x) => x.account !== undefined && shardOf(x.account, shards) === i).length);
    };
    out.push({ t: s, approvals: count('approveAgent'), arms: count('scheduleCancel'), r429: refusals.filter((t) => t >= s * 1000 && t < (s + 1) * 1000).length });
  }
  return out;
}

/** 429s the keeper counted (`dms_keeper_venue_requests_total{code="429"}`, every endpoint). */
async function keeper429s(k: KeeperProc): Promise<number | null> {
  try {
    const text = await (await fetch(`${k.ops}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    return [...text.matchAll(/^dms_keeper_venue_requests_total\{[^}]*code="429"[^}]*\} (\d+)/gm)].reduce((s, m) => s + Number(m[1]), 0);
  } catch {
    return null;
  }
}

interface StatusView {
  budget_mode?: string;
  cadence?: { budget_per_second?: number; budget_share?: number; tier?: string; stretch?: number; cold_start?: boolean } | null;
}

/** The simulator seeded with the accounts (enough traded volume for approveAgent), the budget, 429s recorded. */
export async function startVenue(n: number): Promise<{ sim: Simulator; addresses: string[]; refusals: number[]; clock0: { set(t0: number): void } }> {
  const addresses = benchAddresses(n);
  const sim = await startSimulator({
    port: 0,
    verifySignatures: true,
    recoverSigner: nativeRecovery,
    budget: 'signed_window_100_per_5s',
    accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
  });
  const refusals: number[] = [];
  let t0 = performance.now();
  const check = sim.rateLimiter.check.bind(sim.rateLimiter);
  sim.rateLimiter.check = (ip, endpoint, cls) => {
    const d = check(ip, endpoint, cls);
    if (!d.ok) refusals.push(performance.now() - t0);
    return d;
  };
  return { sim, addresses, refusals, clock0: { set: (t) => (t0 = t) } };
}

/** Every account's venue-side horizon (ms; null: nothing scheduled). */
function horizons(sim: Simulator, addresses: readonly string[]): Array<number | null> {
  const now = sim.clock.nowMs();
  return addresses.map((a) => {
    const t = sim.state.schedule(a).timeMs;
    return t === undefined ? null : t - now;
  });
}

function bursts(refusals: readonly number[]): number[] {
  const out: number[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (const t of refusals) {
    if (t - last > BURST_GAP_MS) out.push(t);
    last = t;
  }
  return out;
}

export interface Bound {
  what: string;
  ok: boolean;
}

export interface ScenarioResult {
  scenario: ScenarioName;
  accounts: number;
  told_per_5s: number;
  /** Every figure in seconds from the keeper's start unless named _ms. */
  all_armed_s: number | null;
  venue_429s: number;
  keeper_429s: number | null;
  lowest_horizon_after_all_armed_s: number | null;
  lowest_horizon_ever_s: number | null;
  fired: number;
  bounds: Bound[];
  ok: boolean;
  [k: string]: unknown;
}

interface Sample {
  tMs: number;
  /** Lowest horizon of the armed accounts (ms), +inf when none is armed. */
  low: number;
}

/** Samples every 250 ms until `until(tMs, allArmedMs)` says stop or `maxMs` passed. */
async function sampleRun(
  sim: Simulator,
  addresses: readonly string[],
  t0: number,
  maxMs: number,
  until: (tMs: number, allArmedMs: number | null) => boolean,
  each?: (tMs: number) => Promise<void> | void,
): Promise<{ samples: Sample[]; allArmedMs: number | null }> {
  const samples: Sample[] = [];
  let allArmedMs: number | null = null;
  for (let i = 1; ; i++) {
    const wait = t0 + i * SAMPLE_MS - performance.now();
    if (wait > 0) await sleep(wait);
    const tMs = performance.now() - t0;
    const hs = horizons(sim, addresses);
    if (allArmedMs === null && hs.every((h) => h !== null && h > 0)) allArmedMs = tMs;
    const armed = hs.filter((h): h is number => h !== null);
    samples.push({ tMs, low: armed.length ? Math.min(...armed) : Number.POSITIVE_INFINITY });
    await each?.(tMs);
    if (until(tMs, allArmedMs) || tMs >= maxMs) break;
  }
  return { samples, allArmedMs };
}

/** When the lowest horizon of the run was seen (s from the keeper's start). */
const lowestAt = (samples: readonly Sample[]): number | null => {
  let best: Sample | undefined;
  for (const s of samples) if (Number.isFinite(s.low) && (!best || s.low < best.low)) best = s;
  return best ? secs(best.tMs) : null;
};

const lowest = (samples: readonly Sample[], fromMs: number, toMs = Number.POSITIVE_INFINITY): number | null => {
  const xs = samples.filter((s) => s.tMs >= fromMs && s.tMs <= toMs && Number.isFinite(s.low)).map((s) => s.low);
  return xs.length ? Math.min(...xs) : null;
};

function fired(sim: Simulator, addresses: readonly string[]): number {
  return addresses.reduce((s, a) => s + sim.state.schedule(a).triggersToday, 0);
}

/** A log line's time (pino's ISO string, or epoch ms), epoch ms. */
function timeOf(e: Record<string, unknown> | undefined): number | null {
  const t = e?.time;
  const ms = typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : Number.NaN;
  return Number.isFinite(ms) ? ms : null;
}

/** The keeper's log lines worth reading beside the figures (cadence, learned limits, budget mode), times from t0. */
function logDigest(k: KeeperProc, t0Epoch: number): Array<Record<string, unknown>> {
  return k.events
    .filter((e) => e.event !== 'rate_limited')
    .slice(0, 40)
    .map((e) => {
      const { time, level, pid, hostname, ...rest } = e;
      void level;
      void pid;
      void hostname;
      const at = timeOf({ time });
      return { t_s: at === null ? null : secs(at - t0Epoch), ...rest };
    });
}

/** n180, n228, n270, told200: one keeper of `n` accounts told `told` per 5 s. */
export async function runSingle(scenario: Exclude<ScenarioName, 'shards'>, opts: { observeMs?: number; maxArmMs?: number } = {}): Promise<ScenarioResult> {
  const n = scenario === 'n228' ? 228 : scenario === 'n270' ? 270 : 180;
  const told = scenario === 'told200' ? 200 : 100;
  const observeMs = opts.observeMs ?? 60_000;
  const venue = await startVenue(n);
  const { sim, addresses, refusals } = venue;
  const t0Epoch = Date.now();
  const t0 = performance.now();
  venue.clock0.set(t0);
  const k = await startKeeper(sim, n, told);
  let replanStatusMs: number | null = null;
  let statusBusy = false;
  try {
    const { samples, allArmedMs } = await sampleRun(
      sim,
      addresses,
      t0,
      (opts.maxArmMs ?? 90_000) + observeMs,
      (tMs, armedMs) => {
        if (armedMs === null) return false;
        const first = refusals[0];
        const judgeFrom = scenario === 'told200' && first !== undefined ? Math.max(armedMs, first + 30_000) : armedMs;
        return tMs >= judgeFrom + observeMs;
      },
      scenario === 'told200'
        ? (tMs) => {
            if (replanStatusMs !== null || statusBusy) return;
            statusBusy = true;
            // Not awaited: a slow /status must not stretch the 250 ms sampling.
            void getJson(`${k.ops}/status`).then((s) => {
              statusBusy = false;
              const b = (s as StatusView | undefined)?.cadence?.budget_per_second;
              if (replanStatusMs === null && b !== undefined && b <= B_PER_SECOND + 1e-6) replanStatusMs = tMs;
            });
          }
        : undefined,
    );
    const keeper429 = await keeper429s(k);
    const readiness = scenario === 'n270' ? await getJson(`${k.ops}/readyz`) : undefined;
    const status = (await getJson(`${k.ops}/status`)) as StatusView | undefined;
    const firstMs = refusals[0] ?? null;
    const after = allArmedMs === null ? null : lowest(samples, allArmedMs);
    const ever = lowest(samples, 0);
    const r: ScenarioResult = {
      scenario,
      accounts: n,
      told_per_5s: told,
      all_armed_s: secs(allArmedMs),
      venue_429s: refusals.length,
      keeper_429s: keeper429,
      lowest_horizon_after_all_armed_s: secs(after),
      lowest_horizon_ever_s: secs(ever),
      lowest_horizon_ever_at_s: lowestAt(samples),
      fired: fired(sim, addresses),
      observed_s: secs(samples.at(-1)?.tMs ?? null),
      cadence_at_end: status?.cadence ?? null,
      cold_start_per_second: timeline(sim, refusals, t0Epoch, (allArmedMs ?? 90_000) + 3_000),
      bounds: [],
      ok: false,
    };
    const armedS = r.all_armed_s ?? Number.POSITIVE_INFINITY;
    if (scenario === 'n180') {
      r.bounds.push({ what: 'all armed <= 19.8 s', ok: armedS <= 19.8 });
      r.bounds.push({ what: 'zero 429s', ok: r.venue_429s === 0 });
      r.bounds.push({ what: 'every horizon >= 8 s after all armed', ok: after !== null && after >= SWITCH.minHorizonS * 1000 });
    } else if (scenario === 'n228') {
      r.bounds.push({ what: 'all armed <= 1.1 x 22.8 s = 25.08 s', ok: armedS <= 25.08 });
      r.bounds.push({ what: 'every horizon >= 8 s after all armed', ok: after !== null && after >= SWITCH.minHorizonS * 1000 });
      r.zero_429s = r.venue_429s === 0;
    } else if (scenario === 'n270') {
      r.bounds.push({ what: 'all armed', ok: allArmedMs !== null });
      r.bounds.push({ what: 'no venue deadline passes (lowest ever > 0, none fired)', ok: ever !== null && ever > 0 && r.fired === 0 });
      // /readyz: {status: 'ready'} or {status: 'not ready', accounts: [{problem, ...}]}.
      const rz = readiness as { status?: string; accounts?: Array<{ problem?: string }> } | undefined;
      const faults = (rz?.accounts ?? []).map((f) => f.problem ?? '');
      r.readiness = { status: rz?.status ?? null, short_horizon_faults: faults.filter((p) => /horizon/.test(p)).length, first: faults[0] ?? null };
    } else {
      const bs = bursts(refusals);
      const learned = k.events.find((e) => e.event === 'budget_limit_learned');
      const t = (e: Record<string, unknown> | undefined): number | null => {
        const at = timeOf(e);
        return at === null ? null : at - t0Epoch;
      };
      const replanLog = k.events.find((e) => e.event === 'cadence' && typeof e.budget_per_second === 'number' && e.budget_per_second <= B_PER_SECOND + 1e-6);
      const from30 = firstMs === null ? null : lowest(samples, firstMs + 30_000);
      Object.assign(r, {
        first_429_s: secs(firstMs),
        bursts: bs.length,
        burst_starts_s: bs.map(secs),
        last_429_s: secs(refusals.at(-1) ?? null),
        budget_limit_learned_s: secs(t(learned)),
        replanned_status_s: secs(replanStatusMs),
        replanned_log_s: secs(t(replanLog)),
        replan_after_first_429_ms: { status: firstMs === null || replanStatusMs === null ? null : round(replanStatusMs - firstMs), log: firstMs === null || t(replanLog) === null ? null : round(t(replanLog)! - firstMs) },
        lowest_horizon_from_30s_after_first_429_s: secs(from30),
      });
      const viaStatus = firstMs !== null && replanStatusMs !== null && replanStatusMs - firstMs <= 1_000 + SAMPLE_MS;
      const viaLog = firstMs !== null && t(replanLog) !== null && t(replanLog)! - firstMs <= 1_000;
      r.bounds.push({ what: 'at most one burst of 429s', ok: bs.length <= 1 });
      r.bounds.push({ what: 'plan re-made within 1 s of the first 429 (cadence log line, or /status sampled every 250 ms)', ok: viaLog || viaStatus });
      r.bounds.push({ what: 'no venue deadline passes (lowest ever > 0, none fired)', ok: ever !== null && ever > 0 && r.fired === 0 });
      r.bounds.push({ what: 'every horizon >= 8 s from 30 s after the first 429', ok: firstMs === null || (from30 !== null && from30 >= SWITCH.minHorizonS * 1000) });
      r.bounds.push({ what: 'all armed <= 36 s', ok: armedS <= 36 });
    }
    r.ok = r.bounds.every((b) => b.ok);
    r.keeper_log = k.logFile;
    r.keeper_events = logDigest(k, t0Epoch);
    return r;
  } finally {
    await stopKeeper(k);
    await sim.stop();
  }
}

export interface ShardsOptions {
  n?: number;
  /** Observed with Redis up once every account is armed. */
  observeMs?: number;
  /** Redis killed for this long. */
  killMs?: number;
  /** Started again after the kill and observed this long (0: not restarted). */
  afterRestartMs?: number;
  maxArmMs?: number;
  redisBinary?: string;
}

/**
 * Two keepers, shards 0 and 1 of the same accounts, `rate_limits.shared` on one real redis-server
 * (127.0.0.1, a free port): zero 429s, all armed within 1.2 x 19.8 s, every horizon >= 8 s after;
 * then Redis killed (SIGKILL) for `killMs`: no venue deadline passes.
 */
export async function runShards(opts: ShardsOptions = {}): Promise<ScenarioResult> {
  const n = opts.n ?? 180;
  const observeMs = opts.observeMs ?? 45_000;
  const killMs = opts.killMs ?? 30_000;
  const afterRestartMs = opts.afterRestartMs ?? 20_000;
  const redis: TestRedis = await startRedis(opts.redisBinary ? { binary: opts.redisBinary } : {});
  const venue = await startVenue(n);
  const { sim, addresses, refusals } = venue;
  const t0Epoch = Date.now();
  const t0 = performance.now();
  venue.clock0.set(t0);
  const ks = await Promise.all([0, 1].map((index) => startKeeper(sim, n, 100, { shard: { index, count: 2 }, redisUrl: redis.url })));
  const modes: Array<{ t_s: number | null; modes: Array<string | null>; shares: Array<number | null>; budget_per_second: Array<number | null> }> = [];
  let statusBusy = false;
  const poll = (tMs: number, every: number) => {
    if (statusBusy || Math.round(tMs / SAMPLE_MS) % every !== 0) return;
    statusBusy = true;
    void Promise.all(ks.map((k) => getJson(`${k.ops}/status`) as Promise<StatusView | undefined>)).then((ss) => {
      statusBusy = false;
      modes.push({ t_s: secs(tMs), modes: ss.map((s) => s?.budget_mode ?? null), shares: ss.map((s) => s?.cadence?.budget_share ?? null), budget_per_second: ss.map((s) => (s?.cadence?.budget_per_second === undefined ? null : Number(s.cadence.budget_per_second.toFixed(2)))) });
    });
  };
  try {
    // Cold start, then every account armed and observed with Redis up.
    const up = await sampleRun(sim, addresses, t0, (opts.maxArmMs ?? 90_000) + observeMs, (tMs, armed) => armed !== null && tMs >= armed + observeMs, (tMs) => poll(tMs, 4));
    const allArmedMs = up.allArmedMs;
    const refusedUp = refusals.length;
    const keeper429Up = await Promise.all(ks.map(keeper429s));
    const killAtMs = performance.now() - t0;
    await redis.kill();
    const down = await sampleRun(sim, addresses, t0, killAtMs + killMs, () => false, (tMs) => poll(tMs, 4));
    const refusedDown = refusals.length - refusedUp;
    let restart: Sample[] = [];
    let restartAtMs: number | null = null;
    if (afterRestartMs > 0) {
      restartAtMs = performance.now() - t0;
      await redis.restart();
      restart = (await sampleRun(sim, addresses, t0, restartAtMs + afterRestartMs, () => false, (tMs) => poll(tMs, 4))).samples;
    }
    const refusedRestart = refusals.length - refusedUp - refusedDown;
    const keeper429 = await Promise.all(ks.map(keeper429s));
    const misses = await Promise.all(ks.map(keeperMisses));
    const samples = [...up.samples, ...down.samples, ...restart];
    const after = allArmedMs === null ? null : lowest(up.samples, allArmedMs);
    const duringKill = lowest(down.samples, 0);
    const r: ScenarioResult = {
      scenario: 'shards',
      accounts: n,
      told_per_5s: 100,
      all_armed_s: secs(allArmedMs),
      venue_429s: refusals.length,
      keeper_429s: keeper429.every((x) => x !== null) ? keeper429.reduce((s, x) => s! + x!, 0) : null,
      lowest_horizon_after_all_armed_s: secs(after),
      lowest_horizon_ever_s: secs(lowest(samples, 0)),
      lowest_horizon_ever_at_s: lowestAt(samples),
      fired: fired(sim, addresses),
      venue_429s_by_phase: { redis_up: refusedUp, redis_killed: refusedDown, redis_restarted: refusedRestart },
      keeper_429s_redis_up: keeper429Up,
      redis_killed_s: [secs(killAtMs), secs(killAtMs + killMs)],
      lowest_horizon_redis_up_s: secs(after),
      lowest_horizon_redis_killed_s: secs(duringKill),
      lowest_horizon_after_restart_s: secs(restartAtMs === null ? null : lowest(restart, restartAtMs)),
      // Each change of either instance's mode, or of its share by more than 0.05.
      shared_budget_misses: misses,
      cold_start_per_second: timeline(sim, refusals, t0Epoch, (allArmedMs ?? killAtMs) + 3_000, 2),
      budget_modes: modes.filter((m, i) => {
        const prev = modes[i - 1];
        return !prev || JSON.stringify(m.modes) !== JSON.stringify(prev.modes) || m.shares.some((s, j) => Math.abs((s ?? 0) - (prev.shares[j] ?? 0)) > 0.05);
      }),
      bounds: [],
      ok: false,
    };
    const armedS = r.all_armed_s ?? Number.POSITIVE_INFINITY;
    r.bounds.push({ what: 'zero 429s with Redis up', ok: refusedUp === 0 });
    r.bounds.push({ what: 'zero 429s while Redis is killed', ok: refusedDown === 0 });
    r.bounds.push({ what: 'all armed <= 1.2 x 19.8 s = 23.76 s', ok: armedS <= 23.76 });
    r.bounds.push({ what: 'every horizon >= 8 s after all armed (Redis up)', ok: after !== null && after >= SWITCH.minHorizonS * 1000 });
    r.bounds.push({ what: 'no venue deadline passes while Redis is killed (lowest > 0, none fired)', ok: duringKill !== null && duringKill > 0 && r.fired === 0 });
    r.ok = r.bounds.every((b) => b.ok);
    r.keeper_logs = ks.map((k) => k.logFile);
    r.keeper_events = ks.map((k) => logDigest(k, t0Epoch));
    return r;
  } finally {
    await Promise.all(ks.map(stopKeeper));
    await sim.stop();
    await redis.stop();
  }
}
