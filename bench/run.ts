/**
 * `npm run bench [-- --accounts 10,100,1000,10000,50000] [--quick] [--no-baseline] [--profile NAME]
 *                  [--steady-seconds S] [--keeper-node-args="--cpu-prof --cpu-prof-dir=artifacts/prof"] [--sim-node-args=...]
 *                  [--heartbeat-accounts N] [--clob-accounts N] [--busy-loops N]
 * (the last three are for profiling runs: a shorter steady phase, node flags for the keeper or the simulator)
 * --busy-loops: N processes spinning beside the keeper and the simulator for the whole row (two on
 * two cores: a machine twice as slow). The row then also names the accounts the plan gave up
 * (over_budget, from /status at the end) and every account with a lapse sample; it fails when an
 * account it had not given up lapsed.
 * --heartbeat-accounts: the heartbeat row's account count (1,000 in a full run, none with --quick or
 * --accounts unless given; 0: none): the keeper's CPU per 1,000 bot heartbeats (runHeartbeats).
 * `--accounts "" --heartbeat-accounts 1000` runs that row alone.
 * --clob-accounts: the Polymarket CLOB row's account count (1,000 in a full run, none with --quick or
 * --accounts unless given; 0: none): accounts on a `polymarket_clob` venue heartbeating every 5 s
 * within the venue's limits, over --steady-seconds (60 s unless given); lapses, the largest gap
 * between accepted heartbeats, the keeper's CPU per heartbeat (bench/polymarket.ts).
 * `--accounts "" --clob-accounts 1000` runs that row alone.
 *
 * The venue is the simulator's `realistic` profile (every optional field the keeper does not act
 * on sent as null, unknown keys everywhere) and every account starts with an approveAgent signed
 * by its master: the keeper generates, approves and stores an agent per account, as in production.
 *
 * For each account count: the simulator (signature checks on) and the keeper run in separate
 * processes, then a naive keeper against a fresh simulator with the same budget. Writes
 * docs/benchmark-results.md (with --quick: artifacts/bench-quick.md) and exits 1 if the keeper had a lapse
 * on an account its plan had not given up (never on timings: those are reported, not enforced).
 *
 * Definitions:
 * - B: the schedule-cancel budget (arms per second), enforced by the simulator and configured in
 *   the keeper; margin = min_horizon_seconds; theoretical capacity = B x (deadline - margin).
 * - time to all armed: from the keeper's spawn until every account has a schedule at the venue.
 * - lag: the keeper's own dms_keeper_arm_lag_seconds (send time minus planned slot), steady state
 *   only (after all were armed); for the naive keeper, the gap between its arms minus its period.
 * - lapse: a 1 s venue-side sample where an armed account's horizon is below min_horizon (or its
 *   schedule fired), counted after all were armed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, open, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { StringDecoder } from 'node:string_decoder';
import { closeSync, createWriteStream, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { benchAddresses, benchKey } from './keys.js';
import type { SamplerReport } from './sim-process.js';
import { nodeOptionsFor } from '../src/config/memory.js';
import { runMain } from './results.js';
import { whatLimited, type LateShare } from './limited.js';
import { clobSection, clobSummary, runClob, type ClobFigures } from './polymarket.js';
import { busyPct, forkSim, freePort, machineCpu, procCpuSeconds, procCpuSplit, procPeakRssMb, stopChild } from './proc.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DIST = join(ROOT, 'dist/bench');

interface RunSpec {
  n: number;
  /** Simulator profile (src/sim/profiles.ts). */
  profile: string;
  budgetPerSecond: number;
  deadlineS: number;
  minHorizonS: number;
  rearmS: number;
  steadyS: number;
  baselineS: number;
}

interface Figures {
  who: 'keeper' | 'naive';
  timeToAllArmedS: number | null;
  /** From spawn to the first account armed: process start, config, first resolve and arm. */
  timeToFirstArmedS: number | null;
  /** Each account's time from spawn to its first arm, summed (once every account was armed). */
  unprotectedAccountSeconds: number | null;
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  /** p99 over each half of the steady phase. */
  earlyLagP99Ms: number | null;
  lateLagP99Ms: number | null;
  lagMaxMs: number | null;
  minHorizonS: number | null;
  lapses: number;
  requestsPerSecond: number;
  rateLimited: number;
  cpuSecondsPerArm: number | null;
  /** Keeper CPU over the steady phase divided by every request it sent in it (the keeper row only). */
  cpuSecondsPerRequest?: number | null;
  /** The keeper's requests in the steady phase by kind (its dms_keeper_venue_requests_total). */
  requestsInSteady?: RequestsByKind;
  cpuPercentOfCore: number | null;
  /** Share of that CPU spent in the kernel (stime over utime + stime). */
  cpuSystemShare: number | null;
  peakRssMb: number | null;
  /** V8 heap in use at the end of the steady phase (the keeper's own nodejs_heap_size_used_bytes). */
  heapUsedMb: number | null;
  /** The V8 heap right after the last full GC (dms_keeper_heap_live_bytes): what the keeper keeps. */
  heapLiveMb: number | null;
  /** approveAgent requests the venue received (one per account at start-up). */
  approvals: number;
  /** Re-arms that left over 1 s after their slot (the keeper's arm_late lines), slowest first. */
  lateArms: LateArm[];
  eventLoopP99Ms: number | null;
  /** What held each phase's sends back (limited.ts), one line per phase; empty for the naive keeper. */
  limited: string[];
  arms: number;
  stretch: number | null;
  capacityAccounts: number | null;
  /**
   * The keeper row: the accounts its plan had given up (over_budget) at the end, by name; the
   * accounts with a lapse sample after all were armed, by name (the sampler names an account the
   * first time only, so one that first lapsed in the cold start is not named again: the fail rule's
   * lapse count still catches it when none were given up); and those of them it had not given up.
   */
  givenUp?: string[];
  lapsedAccounts?: string[];
  lapsedKept?: string[];
}

interface LateArm {
  account: string;
  lagMs: number;
  timerLateMs: number;
  queuedMs: number;
  /** The budget's part of queuedMs, what held the request and how many of its kind went ahead. */
  budgetWaitMs: number | null;
  heldBy: string | null;
  wentAhead: number | null;
  atS: number;
}

function lateArmText(a: LateArm): string {
  const held = a.heldBy === null ? '' : `; held by ${a.heldBy}, ${a.wentAhead} of its kind went ahead`;
  return `${a.account} at t = ${a.atS.toFixed(0)} s: ${a.lagMs} ms (timer ${a.timerLateMs} ms, queued ${a.queuedMs} ms, of it the budget ${a.budgetWaitMs ?? 'n/a'} ms${held})`;
}

function quantile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Requests by what they were for: arms (schedule-cancel, either route), reads, and the rest. */
export interface RequestsByKind {
  total: number;
  arms: number;
  reads: number;
  other: number;
}

/** The difference of dms_keeper_venue_requests_total between two scrapes, by kind of endpoint. */
export function requestsByKind(before: string, after: string): RequestsByKind {
  const byEndpoint = (text: string): Map<string, number> => {
    const m = new Map<string, number>();
    for (const x of text.matchAll(/^dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="[^"]*"\} (\S+)$/gm)) m.set(x[1]!, (m.get(x[1]!) ?? 0) + Number(x[2]));
    return m;
  };
  const b = byEndpoint(before);
  const out: RequestsByKind = { total: 0, arms: 0, reads: 0, other: 0 };
  for (const [endpoint, n] of byEndpoint(after)) {
    const d = n - (b.get(endpoint) ?? 0);
    out.total += d;
    if (/schedule-cancel|scheduleCancel/.test(endpoint)) out.arms += d;
    else if (endpoint.startsWith('GET ') || /\binfo\b/.test(endpoint)) out.reads += d;
    else out.other += d;
  }
  return out;
}

/** Late re-arms of a phase as limited.ts weighs them. */
function lateShare(arms: readonly LateArm[]): LateShare {
  const heldBy = new Map<string, number>();
  for (const a of arms) if (a.heldBy !== null) heldBy.set(a.heldBy, (heldBy.get(a.heldBy) ?? 0) + 1);
  return { count: arms.length, timerMs: arms.reduce((t, a) => t + Math.max(0, a.timerLateMs), 0), budgetMs: arms.reduce((t, a) => t + (a.budgetWaitMs ?? 0), 0), heldBy };
}

/** Mean of dms_keeper_arm_latency_seconds (path rest) between two scrapes (`before` empty: since start), ms; null without arms. */
function meanArmLatencyMs(before: string, after: string): number | null {
  const read = (text: string, part: 'sum' | 'count'): number => Number(new RegExp(`^dms_keeper_arm_latency_seconds_${part}\\{path="rest"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  const n = read(after, 'count') - read(before, 'count');
  return n > 0 ? ((read(after, 'sum') - read(before, 'sum')) * 1000) / n : null;
}

/** The window of the arms' scope (schedule_cancel) the bench configures: B x this many requests over this many seconds. */
const ARM_WINDOW_S = 60;

/** The arms' window (schedule_cancel, as configured) at the mean latency between two scrapes, for limited.ts. */
function armWindowOf(spec: RunSpec, before: string, after: string): { armWindow?: { limitPerS: number; windowMs: number; meanLatencyMs: number } } {
  const meanLatencyMs = meanArmLatencyMs(before, after);
  return meanLatencyMs === null ? {} : { armWindow: { limitPerS: spec.budgetPerSecond, windowMs: ARM_WINDOW_S * 1000, meanLatencyMs } };
}

/** Parses one histogram's cumulative buckets out of Prometheus text. */
function histogram(text: string, name: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm'))) out.push([m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  return out;
}

function histQuantile(delta: Array<[number, number]>, q: number): number | null {
  const total = delta.at(-1)?.[1] ?? 0;
  if (total === 0) return null;
  for (const [le, c] of delta) if (c >= q * total) return le;
  return Infinity;
}

/** Node flags for the simulator process (--sim-node-args, for profiling it). */
let simNodeArgs: string[] = [];
/** Busy loops beside the keeper and the simulator (--busy-loops): a machine that many cores short. */
let busyLoops = 0;

/** `n` processes that spin until stopped: the CPU they take is what a slower or shared machine lacks. */
function startBusyLoops(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

function startSim(spec: RunSpec, onReport: (r: SamplerReport) => void): ReturnType<typeof forkSim> {
  return forkSim(
    [
      '--accounts', String(spec.n),
      '--budget-per-minute', String(spec.budgetPerSecond * 60),
      '--global-per-minute', String(Math.max(12_000, spec.budgetPerSecond * 60 * 4)),
      '--deadline-seconds', String(spec.deadlineS),
      '--min-horizon-seconds', String(spec.minHorizonS),
      '--profile', spec.profile,
    ],
    simNodeArgs,
    onReport,
  );
}

/** Bot liveness for every account (the heartbeat row): bots of `botSize` accounts, one token each. */
interface LivenessLoad {
  botSize: number;
  silenceS: number;
}

/** The i-th bench account's name in the keeper's config (and in its logs and /status). */
const accountName = (i: number): string => `a${i}`;

/** Bot k's heartbeat token (bench only: it protects nothing). */
const heartbeatToken = (k: number): string => `bench-heartbeat-token-bot-${k}`;

async function keeperConfig(spec: RunSpec, baseUrl: string, wsUrl: string, port: number, liveness?: LivenessLoad): Promise<{ file: string; creds: string }> {
  const dir = await mkdtemp(join(tmpdir(), `dmsk-bench-${spec.n}-`));
  const creds = join(dir, 'creds');
  await mkdir(creds);
  const addresses = benchAddresses(spec.n);
  const lines = [
    'venue:',
    `  base_url: ${baseUrl}`,
    `  exchange_url: ${baseUrl}`,
    `  ws_url: ${wsUrl}`,
    '  request_timeout_ms: 5000',
    'switch:',
    `  deadline_seconds: ${spec.deadlineS}`,
    `  rearm_every_seconds: ${spec.rearmS}`,
    `  min_horizon_seconds: ${spec.minHorizonS}`,
    // The benchmark measures arming: reads are rare and notifications off (10 per IP anyway).
    'watch:',
    '  orders_every_seconds: 86400',
    '  positions_every_seconds: 86400',
    '  notifications: false',
    'rate_limits:',
    `  global: { requests: ${Math.max(12_000, spec.budgetPerSecond * 60 * 4)}, per_seconds: 60 }`,
    `  schedule_cancel: { requests: ${spec.budgetPerSecond * ARM_WINDOW_S}, per_seconds: ${ARM_WINDOW_S} }`,
    // approveAgent goes by the exchange endpoint: at the arms' rate (the simulator counts it in global).
    `  exchange: { requests: ${spec.budgetPerSecond * 60}, per_seconds: 60 }`,
    'accounts:',
  ];
  for (let i = 0; i < spec.n; i++) {
    const f = join(creds, `a${i}.key`);
    await writeFile(f, `${benchKey(i)}\n`, { mode: 0o600 });
    await chmod(f, 0o600);
    // The master key only: the keeper generates an agent, approves it (approveAgent) and stores it.
    lines.push(`  - name: ${accountName(i)}`, `    address: "${addresses[i]}"`, `    master_key: { file: a${i}.key }`);
    if (liveness) lines.push(`    liveness: { heartbeat: { token: { file: bot${Math.floor(i / liveness.botSize)}.token } }, silence_seconds: ${liveness.silenceS} }`);
  }
  if (liveness) {
    for (let k = 0; k * liveness.botSize < spec.n; k++) {
      const f = join(creds, `bot${k}.token`);
      await writeFile(f, `${heartbeatToken(k)}\n`, { mode: 0o600 });
      await chmod(f, 0o600);
    }
  }
  lines.push(`state_dir: ${join(dir, 'state')}`, 'server:', `  listen: 127.0.0.1:${port}`, 'log:', '  level: warn');
  const file = join(dir, 'bench.yaml');
  await writeFile(file, lines.join('\n'));
  return { file, creds };
}

async function scrape(port: number): Promise<string> {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`);
  return r.text();
}

async function runKeeper(spec: RunSpec, nodeArgs: string[] = []): Promise<Figures> {
  const loops = startBusyLoops(busyLoops);
  try {
    return await runKeeperBeside(spec, nodeArgs);
  } finally {
    for (const l of loops) l.kill('SIGKILL');
  }
}

/**
 * Reads a growing log file line by line, a poll behind its writer (every 100 ms): the writer never
 * waits for the reader. `drain` reads what is there now; `stop` drains and stops polling.
 */
class LogTail {
  private position = 0;
  private partial = '';
  /** A character split across two reads is joined, not garbled. */
  private readonly decoder = new StringDecoder('utf8');
  private reading: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  /** One handle for the whole run, and one buffer: a poll reads only what was added. */
  private readonly handle: ReturnType<typeof open>;
  private readonly buf = Buffer.alloc(1 << 20);

  constructor(
    file: string,
    private readonly onLine: (line: string) => void,
  ) {
    this.handle = open(file, 'r');
    this.handle.catch(() => undefined);
    this.timer = setInterval(() => void this.drain(), 100);
  }

  drain(): Promise<void> {
    this.reading = this.reading.then(() => this.readMore()).catch(() => undefined);
    return this.reading;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.drain();
    if (this.partial !== '') this.onLine(this.partial);
    this.partial = '';
    await (await this.handle.catch(() => undefined))?.close();
  }

  private async readMore(): Promise<void> {
    const fh = await this.handle;
    for (;;) {
      const { bytesRead } = await fh.read(this.buf, 0, this.buf.length, this.position);
      if (bytesRead === 0) return;
      this.position += bytesRead;
      const lines = (this.partial + this.decoder.write(this.buf.subarray(0, bytesRead))).split('\n');
      this.partial = lines.pop()!;
      for (const line of lines) this.onLine(line);
    }
  }
}

/** The accounts /status says the plan has given up (verdict over_budget), by name. */
async function givenUpByPlan(port: number): Promise<string[]> {
  const r = await fetch(`http://127.0.0.1:${port}/status`);
  const status = (await r.json()) as { accounts?: Array<{ name?: string; plan?: { verdict?: string } | null }> };
  return (status.accounts ?? []).filter((a) => a.plan?.verdict === 'over_budget').map((a) => String(a.name));
}

async function runKeeperBeside(spec: RunSpec, nodeArgs: string[]): Promise<Figures> {
  const reports: SamplerReport[] = [];
  const sim = await startSim(spec, (r) => reports.push(r));
  const port = await freePort();
  const cfg = await keeperConfig(spec, sim.baseUrl, sim.wsUrl, port);
  const simCpuStart = await procCpuSeconds(sim.child.pid!);
  const machineStart = await machineCpu();
  const t0 = Date.now();
  // The heap limits the product recommends for this many accounts (src/config/memory.ts), as the
  // systemd unit and the image set them; --keeper-node-args come after and may override them.
  const heapArgs = nodeOptionsFor(spec.n).split(' ');
  // The keeper writes its log to a file the bench reads behind it, not to a pipe the bench must
  // drain: on a starved machine the bench is busy for seconds (a 73 MB scrape at 50,000 accounts),
  // and what the keeper wrote meanwhile waited in the keeper's memory. Late re-arms are timed by
  // the keeper's own clock (the line's `time`), not by when the bench got round to reading them.
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  const rawLogFile = join(ROOT, `artifacts/bench-keeper-${spec.n}.out`);
  const rawLog = openSync(rawLogFile, 'w');
  const keeper = spawn(process.execPath, [...heapArgs, ...nodeArgs, join(ROOT, 'dist/src/main.js'), 'run', '--config', cfg.file], {
    env: { ...process.env, CREDENTIALS_DIRECTORY: cfg.creds, NOTIFY_SOCKET: undefined },
    stdio: ['ignore', rawLog, 'inherit'],
  });
  closeSync(rawLog);
  // The keeper logs at warn: every line is news. Late re-arms are kept with their breakdown.
  const lateArms: LateArm[] = [];
  const otherLines = new Map<string, number>();
  // Everything else the keeper said, for a look after the run.
  const keeperLog = createWriteStream(join(ROOT, `artifacts/bench-keeper-${spec.n}.log`));
  // Late re-arms are counted up to the end of the steady window, as lapses are: the bench's own
  // /status after it (tens of MB at 50,000 accounts) held the keeper and made hundreds more.
  let lateWindowOpen = true;
  /** Accounts the plan in force gives up (the keeper's last cadence line): the cold start is over once every other one is armed. */
  let overBudget = 0;
  const tail = new LogTail(rawLogFile, (line) => {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      keeperLog.write(line + '\n'); // not the keeper's JSON: V8's own output (--trace-gc and the like)
      return;
    }
    if (rec.event === 'arm_late' && lateWindowOpen) {
      const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
      lateArms.push({
        account: String(rec.account),
        lagMs: Number(rec.lag_ms),
        timerLateMs: Number(rec.timer_late_ms),
        queuedMs: Number(rec.queued_ms),
        budgetWaitMs: num(rec.budget_wait_ms),
        heldBy: typeof rec.held_by === 'string' ? rec.held_by : null,
        wentAhead: num(rec.went_ahead),
        // The keeper's own time of the line (the file is read behind it); the time read, without one.
        atS: ((typeof rec.time === 'string' && Number.isFinite(Date.parse(rec.time)) ? Date.parse(rec.time) : Date.now()) - t0) / 1000,
      });
    } else {
      if (rec.event === 'cadence' && typeof rec.over_budget === 'number') overBudget = rec.over_budget;
      const k = String(rec.event ?? rec.msg);
      otherLines.set(k, (otherLines.get(k) ?? 0) + 1);
      keeperLog.write(line + '\n');
    }
  });
  try {
    let allArmedAt: number | null = null;
    const limitMs = (spec.n / spec.budgetPerSecond) * 3_000 + 60_000;
    let lastRssLog = t0;
    while (allArmedAt === null && Date.now() - t0 < limitMs) {
      await new Promise((r) => setTimeout(r, 250));
      if (Date.now() - lastRssLog >= 10_000) {
        lastRssLog = Date.now();
        const st = await readFile(`/proc/${keeper.pid}/status`, 'utf8').catch(() => '');
        console.error(`  t=${((Date.now() - t0) / 1000).toFixed(0)} s: armed ${reports.at(-1)?.armed ?? 0}, keeper rss ${Number(/VmRSS:\s+(\d+)/.exec(st)?.[1] ?? 0) >> 10} MB (peak ${Number(/VmHWM:\s+(\d+)/.exec(st)?.[1] ?? 0) >> 10} MB)`);
      }
      const last = reports.at(-1);
      if (last && last.armed === spec.n) allArmedAt = last.allArmedMs ?? last.tMs;
      // Given up accounts are never armed (those armed before keep their schedule until it fires): by count, the names are checked at the end.
      else if (last && overBudget > 0 && last.armed >= spec.n - overBudget) allArmedAt = last.tMs;
      if (keeper.exitCode !== null) throw new Error(`keeper exited ${keeper.exitCode}`);
    }
    const armedIndex = reports.length;
    const coldWallS = (Date.now() - t0) / 1000;
    const machineCold = await machineCpu();
    const simCpuCold = await procCpuSeconds(sim.child.pid!);
    // Each scrape's time and size are printed: at 50,000 accounts /metrics is 72.9 MB and costs the keeper seconds of CPU.
    const timedScrape = async (what: string): Promise<string> => {
      const at = Date.now();
      const text = await scrape(port);
      console.error(`  t=${((Date.now() - t0) / 1000).toFixed(0)} s: /metrics (${what}) took ${Date.now() - at} ms, ${(text.length / 2 ** 20).toFixed(1)} MB`);
      return text;
    };
    const before = await timedScrape('steady start');
    const cpu0 = await procCpuSeconds(keeper.pid!);
    const split0 = await procCpuSplit(keeper.pid!);
    const tSteady = Date.now();
    await new Promise((r) => setTimeout(r, (spec.steadyS * 1000) / 2));
    const middle = await timedScrape('steady middle');
    await new Promise((r) => setTimeout(r, (spec.steadyS * 1000) / 2));
    const cpu1 = await procCpuSeconds(keeper.pid!);
    const split1 = await procCpuSplit(keeper.pid!);
    const simCpuEnd = await procCpuSeconds(sim.child.pid!);
    const machineEnd = await machineCpu();
    const wall = (Date.now() - tSteady) / 1000;
    const after = await timedScrape('steady end');
    const rejected = [...after.matchAll(/^dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="429"\} (\d+)$/gm)].filter((m) => m[2] !== '0');
    if (rejected.length > 0) console.error(`  429s by endpoint (keeper's count): ${rejected.map((m) => `${m[1]}: ${m[2]}`).join(', ')}`);
    const peak = await procPeakRssMb(keeper.pid!);
    const steady = reports.slice(armedIndex);
    const arms = steady.reduce((s, r) => s + r.gapsMs.length, 0);
    // Every request the keeper sent in the window, by what it was for: the CPU is the keeper's, not
    // only its arms' (each account's first reads are spread over its first minutes).
    const requestsIn = requestsByKind(before, after);
    const systemShare = split0 && split1 ? (split1.system - split0.system) / Math.max(0.01, split1.user - split0.user + split1.system - split0.system) : null;
    const h0 = histogram(before, 'dms_keeper_arm_lag_seconds');
    const h1 = histogram(after, 'dms_keeper_arm_lag_seconds');
    const delta = h1.map(([le, c], i) => [le, c - (h0[i]?.[1] ?? 0)] as [number, number]);
    const hMid = histogram(middle, 'dms_keeper_arm_lag_seconds');
    const lateDelta = h1.map(([le, c], i) => [le, c - (hMid[i]?.[1] ?? 0)] as [number, number]);
    const earlyDelta = hMid.map(([le, c], i) => [le, c - (h0[i]?.[1] ?? 0)] as [number, number]);
    const heapLive = Number(/^dms_keeper_heap_live_bytes (\S+)$/m.exec(after)?.[1]);
    if (otherLines.size > 0) console.error(`  keeper warnings and errors: ${[...otherLines].map(([k, c]) => `${k} x${c}`).join(', ')}`);
    await tail.drain();
    lateWindowOpen = false;
    lateArms.sort((a, b) => b.lagMs - a.lagMs);
    const loop = Number(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(after)?.[1]);
    const heap = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(after)?.[1]);
    const stretch = Number(/^dms_keeper_cadence_stretch (\S+)$/m.exec(after)?.[1]);
    const capacity = Number(/^dms_keeper_capacity_accounts (\S+)$/m.exec(after)?.[1]);
    const lagMaxCount = delta.filter(([, c]) => c > 0);
    const first = steady[0];
    const last = steady.at(-1);
    const coldLast = reports[armedIndex - 1];
    const steadySends = first && last ? (last.scheduleCancelRequests - first.scheduleCancelRequests) / ((last.tMs - first.tMs) / 1000) : 0;
    const utilisation = Number(/^dms_keeper_arm_budget_utilisation (\S+)$/m.exec(before)?.[1]);
    const pctOfCore = (a: number | null, b: number | null, s: number): number | null => (a !== null && b !== null && s > 0 ? ((b - a) / s) * 100 : null);
    const steadyStartS = (tSteady - t0) / 1000;
    const limited = [
      whatLimited({
        phase: 'cold start',
        wallS: coldWallS,
        keeperCpuPct: pctOfCore(0, cpu0, coldWallS),
        simCpuPct: pctOfCore(simCpuStart, simCpuCold, coldWallS),
        machineBusyPct: busyPct(machineStart, machineCold),
        cores: availableParallelism(),
        // approvals and first arms (not the early accounts' re-arms), against the pace of the all-armed bound (1.1 x (approvals + arms) / B)
        sendsPerS: coldLast ? (coldLast.exchangeRequests + coldLast.firstArms) / coldWallS : 0,
        plannedPerS: spec.budgetPerSecond / 1.1,
        // The sum above reads as twice the plan where approvals have a window of their own: the
        // first arms alone, from the first to the last, against the arms' budget (a cold start 12%
        // short of it read "sent 352.4/s of 181.8 planned").
        detail: firstArmsPace(reports, t0, allArmedAt === null ? coldWallS : (allArmedAt - t0) / 1000, spec.budgetPerSecond),
        late: lateShare(lateArms.filter((a) => a.atS <= coldWallS)),
        ...armWindowOf(spec, '', before),
      }).text,
      whatLimited({
        phase: 'steady',
        wallS: wall,
        keeperCpuPct: pctOfCore(cpu0, cpu1, wall),
        simCpuPct: pctOfCore(simCpuCold, simCpuEnd, wall),
        machineBusyPct: busyPct(machineCold, machineEnd),
        cores: availableParallelism(),
        // accounts over their mean re-arm gap: a window shorter than a period counts the cold start's order, not the pace
        sendsPerS: arms > 0 ? spec.n / (steady.reduce((t, r) => t + r.gapsMs.reduce((a, b) => a + b, 0), 0) / arms / 1000) : 0,
        plannedPerS: Number.isFinite(utilisation) && utilisation > 0 ? utilisation * spec.budgetPerSecond : spec.budgetPerSecond,
        late: lateShare(lateArms.filter((a) => a.atS >= steadyStartS)),
        ...armWindowOf(spec, before, after),
      }).text,
    ];
    const horizons = steady.map((r) => r.minHorizonS).filter((x): x is number => x !== null);
    // Last, once every figure is taken: at 50,000 accounts /status is tens of MB, and building it
    // held the keeper's timers long enough to lapse accounts inside the measured window.
    const lapsedAccounts = steady.flatMap((r) => r.newlyLapsed.map(accountName));
    const givenUp = lapsedAccounts.length > 0 || busyLoops > 0 ? await givenUpByPlan(port) : [];
    const givenUpSet = new Set(givenUp);
    return {
      who: 'keeper',
      timeToAllArmedS: allArmedAt === null ? null : (allArmedAt - t0) / 1000,
      timeToFirstArmedS: firstArmed(reports, t0),
      unprotectedAccountSeconds: unprotected(reports, t0),
      lagP50Ms: toMs(histQuantile(delta, 0.5)),
      lagP99Ms: toMs(histQuantile(delta, 0.99)),
      earlyLagP99Ms: toMs(histQuantile(earlyDelta, 0.99)),
      lateLagP99Ms: toMs(histQuantile(lateDelta, 0.99)),
      lagMaxMs: toMs(lagMaxCount.length ? lagMaxCount[lagMaxCount.findIndex(([, c]) => c === lagMaxCount.at(-1)![1])]![0] : null),
      minHorizonS: horizons.length ? Math.min(...horizons) : null,
      lapses: steady.reduce((s, r) => s + r.lapses, 0),
      requestsPerSecond: steadySends,
      rateLimited: last?.rateLimited ?? 0,
      cpuSecondsPerArm: cpu0 !== null && cpu1 !== null && arms > 0 ? (cpu1 - cpu0) / arms : null,
      cpuSecondsPerRequest: cpu0 !== null && cpu1 !== null && requestsIn.total > 0 ? (cpu1 - cpu0) / requestsIn.total : null,
      requestsInSteady: requestsIn,
      cpuPercentOfCore: cpu0 !== null && cpu1 !== null ? ((cpu1 - cpu0) / wall) * 100 : null,
      cpuSystemShare: systemShare,
      peakRssMb: peak,
      heapUsedMb: Number.isFinite(heap) ? heap / 2 ** 20 : null,
      heapLiveMb: Number.isFinite(heapLive) && heapLive > 0 ? heapLive / 2 ** 20 : null,
      approvals: last?.exchangeRequests ?? 0,
      lateArms,
      eventLoopP99Ms: Number.isFinite(loop) ? loop * 1000 : null,
      limited,
      arms,
      stretch: Number.isFinite(stretch) ? stretch : null,
      capacityAccounts: Number.isFinite(capacity) ? capacity : null,
      givenUp,
      lapsedAccounts,
      lapsedKept: lapsedAccounts.filter((a) => !givenUpSet.has(a)),
    };
  } finally {
    await stopChild(keeper);
    await stopChild(sim.child, true);
    await tail.stop();
    keeperLog.end();
    // Every late re-arm with its breakdown, for a look at who was late and when (the page lists the slowest).
    await writeFile(join(ROOT, `artifacts/bench-late-${spec.n}.json`), JSON.stringify(lateArms));
    // What the venue received second by second: where a backlog forms shows as sends below the budget with arms due.
    await writeFile(join(ROOT, `artifacts/bench-timeline-${spec.n}.csv`), timelineCsv(reports, t0));
  }
}

/** The simulator's reports as one line each: seconds from spawn, accounts armed, lowest horizon, lapse samples, and since the last line first arms, re-arms and requests received. */
function timelineCsv(reports: readonly SamplerReport[], t0: number): string {
  const lines = ['t_s,armed,min_horizon_s,lapse_samples,first_arms,rearms,schedule_cancel,exchange,requests'];
  let prev: SamplerReport | undefined;
  for (const r of reports) {
    const d = (k: 'firstArms' | 'scheduleCancelRequests' | 'exchangeRequests' | 'requests'): number => r[k] - (prev?.[k] ?? 0);
    lines.push([((r.tMs - t0) / 1000).toFixed(1), r.armed, r.minHorizonS ?? '', r.lapses, d('firstArms'), r.gapsMs.length, d('scheduleCancelRequests'), d('exchangeRequests'), d('requests')].join(','));
    prev = r;
  }
  return lines.join('\n') + '\n';
}

/** The account-seconds from spawn to each account's first arm, once all were armed. */
function unprotected(reports: readonly SamplerReport[], t0: number): number | null {
  const r = allFirstArmed(reports);
  return r ? (r.firstArmsSumMs - r.firstArms * t0) / 1000 : null;
}

/** The first report with every account's first arm in. */
function allFirstArmed(reports: readonly SamplerReport[]): SamplerReport | undefined {
  return reports.find((x) => x.firstArms === x.accounts);
}

/** The first arms a second from the first account armed to the last, against the arms' budget; null before both. */
function firstArmsPace(reports: readonly SamplerReport[], t0: number, allArmedS: number, budgetPerSecond: number): string | undefined {
  const firstS = firstArmed(reports, t0);
  const last = allFirstArmed(reports);
  if (firstS === null || !last || !(allArmedS > firstS)) return undefined;
  return `first arms ${((last.firstArms - 1) / (allArmedS - firstS)).toFixed(1)}/s from the first to the last (B = ${budgetPerSecond})`;
}

/** From spawn to the venue receiving the first arm (exact: from the arm's deadline), seconds. */
function firstArmed(reports: readonly SamplerReport[], t0: number): number | null {
  const r = reports.find((x) => x.firstArmMs !== null);
  return r ? (r.firstArmMs! - t0) / 1000 : null;
}

function toMs(s: number | null): number | null {
  return s === null ? null : s === Infinity ? Infinity : s * 1000;
}

async function runNaive(spec: RunSpec): Promise<Figures> {
  const reports: SamplerReport[] = [];
  const sim = await startSim(spec, (r) => reports.push(r));
  const t0 = Date.now();
  const naive = spawn(process.execPath, [join(DIST, 'naive-keeper.js'), '--url', sim.baseUrl, '--accounts', String(spec.n), '--period-seconds', String(spec.rearmS), '--deadline-seconds', String(spec.deadlineS)], { stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    const cpu0 = await procCpuSeconds(naive.pid!);
    await new Promise((r) => setTimeout(r, spec.baselineS * 1000));
    const cpu1 = await procCpuSeconds(naive.pid!);
    const peak = await procPeakRssMb(naive.pid!);
    const allArmed = reports.find((r) => r.armed === spec.n);
    const idx = allArmed ? reports.indexOf(allArmed) : reports.length;
    const steady = reports.slice(idx);
    const lags = steady.flatMap((r) => r.gapsMs.map((g) => g - spec.rearmS * 1000)).sort((a, b) => a - b);
    const horizons = steady.map((r) => r.minHorizonS).filter((x): x is number => x !== null);
    const arms = reports.reduce((s, r) => s + r.gapsMs.length, 0);
    const first = reports[0];
    const last = reports.at(-1);
    return {
      who: 'naive',
      timeToAllArmedS: allArmed ? ((allArmed.allArmedMs ?? allArmed.tMs) - t0) / 1000 : null,
      timeToFirstArmedS: firstArmed(reports, t0),
      unprotectedAccountSeconds: unprotected(reports, t0),
      lagP50Ms: quantile(lags, 0.5),
      lagP99Ms: quantile(lags, 0.99),
      earlyLagP99Ms: null,
      lateLagP99Ms: null,
      lagMaxMs: lags.at(-1) ?? null,
      minHorizonS: horizons.length ? Math.min(...horizons) : null,
      lapses: (allArmed ? steady : reports).reduce((s, r) => s + r.lapses, 0),
      requestsPerSecond: first && last ? (last.scheduleCancelRequests - first.scheduleCancelRequests) / ((last.tMs - first.tMs) / 1000) : 0,
      rateLimited: last?.rateLimited ?? 0,
      cpuSecondsPerArm: cpu0 !== null && cpu1 !== null && arms > 0 ? (cpu1 - cpu0) / arms : null,
      cpuPercentOfCore: cpu0 !== null && cpu1 !== null ? ((cpu1 - cpu0) / spec.baselineS) * 100 : null,
      cpuSystemShare: null,
      peakRssMb: peak,
      heapUsedMb: null,
      heapLiveMb: null,
      approvals: 0,
      lateArms: [],
      eventLoopP99Ms: null,
      limited: [],
      arms,
      stretch: null,
      capacityAccounts: null,
    };
  } finally {
    await stopChild(naive);
    await stopChild(sim.child, true);
  }
}

/** How the heartbeats of the heartbeat row arrive: one request per account, or one per bot naming its accounts. */
type HeartbeatShape = 'single' | 'bot';

interface HeartbeatFigures {
  shape: HeartbeatShape;
  phases: number;
  /** Seconds under load and quiet, summed over the phases of this shape (and the quiet ones). */
  loadedS: number;
  quietS: number;
  requestsPerSecond: number;
  /** Account heartbeats the keeper accepted (200), per second under load. */
  heartbeatsPerSecond: number;
  heartbeats: number;
  /** Answers other than 200 (and errors), by code. */
  refused: Record<string, number>;
  cpuQuietPercent: number;
  cpuLoadedPercent: number;
  /** Keeper CPU (user + system) for 1,000 account heartbeats: loaded minus quiet, per heartbeat. */
  cpuMsPer1000: number;
  cpuMsPerRequest: number;
  lagP99QuietMs: number | null;
  lagP99LoadedMs: number | null;
}

/**
 * Heartbeats from this process, every account once a second, spread evenly over the second, over
 * keep-alive connections: `single`, one request per account naming it; `bot`, one request per bot
 * naming its `botSize` accounts. Counts the accounts accepted (answers 200) and the other answers.
 */
class HeartbeatLoad {
  private readonly pool: Pool;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private idle: (() => void) | undefined;
  requests = 0;
  accepted = 0;
  readonly other: Record<string, number> = {};

  constructor(origin: string, private readonly n: number, private readonly botSize: number, private readonly shape: HeartbeatShape) {
    this.pool = new Pool(origin, { connections: 16, pipelining: 1 });
  }

  start(): void {
    const perSecond = this.shape === 'single' ? this.n : Math.ceil(this.n / this.botSize);
    const t0 = performance.now();
    let slot = 0;
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - t0) / 1000) * perSecond);
      for (; slot < due; slot++) this.send(slot % perSecond);
    }, 2);
  }

  private send(i: number): void {
    const [bot, accounts] = this.shape === 'single' ? [Math.floor(i / this.botSize), [`a${i}`]] : [i, Array.from({ length: Math.min(this.botSize, this.n - i * this.botSize) }, (_, j) => `a${i * this.botSize + j}`)];
    this.inFlight++;
    this.requests++;
    this.pool
      .request({ path: '/heartbeat', method: 'POST', headers: { authorization: `Bearer ${heartbeatToken(bot)}`, 'content-type': 'application/json' }, body: JSON.stringify({ accounts }) })
      .then(async (r) => {
        await r.body.dump();
        if (r.statusCode === 200) this.accepted += accounts.length;
        else this.other[r.statusCode] = (this.other[r.statusCode] ?? 0) + 1;
      })
      .catch((e: unknown) => {
        const k = (e as { code?: string }).code ?? 'error';
        this.other[k] = (this.other[k] ?? 0) + 1;
      })
      .finally(() => {
        if (--this.inFlight === 0) this.idle?.();
      });
  }

  /** Stops sending and waits for the answers in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.inFlight > 0) await new Promise<void>((r) => (this.idle = r));
    this.idle = undefined;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/**
 * The heartbeat row: one keeper with `spec.n` accounts, each with heartbeat liveness (bots of
 * `botSize` accounts, a silence long enough that the quiet phases never make a bot silent), the
 * same re-arm load as the table's rows. After all are armed and one re-arm period has passed,
 * phases of `phaseS` alternate: quiet, every account's heartbeat as one request (single), quiet, as
 * one request per bot naming its accounts (bot), and so on for `rounds`, ending quiet. For each
 * loaded phase, the keeper's CPU (/proc, every thread) per second minus the mean of the quiet
 * phases just before and after it, times its length: the heartbeats' CPU, the re-arms (the same in
 * every phase) and any drift cancelling out. Divided by the account heartbeats accepted.
 */
async function runHeartbeats(spec: RunSpec, botSize: number, phaseS: number, rounds: number): Promise<HeartbeatFigures[]> {
  const sim = await startSim(spec, () => undefined);
  const port = await freePort();
  const silenceS = 300;
  const cfg = await keeperConfig(spec, sim.baseUrl, sim.wsUrl, port, { botSize, silenceS });
  const heapArgs = nodeOptionsFor(spec.n).split(' ');
  const keeper = spawn(process.execPath, [...heapArgs, join(ROOT, 'dist/src/main.js'), 'run', '--config', cfg.file], {
    env: { ...process.env, CREDENTIALS_DIRECTORY: cfg.creds, NOTIFY_SOCKET: undefined },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const t0 = Date.now();
  try {
    // every account armed (the keeper's own count), then a few seconds to settle
    for (;;) {
      if (keeper.exitCode !== null) throw new Error(`keeper exited ${keeper.exitCode}`);
      if (Date.now() - t0 > (spec.n / spec.budgetPerSecond) * 3_000 + 60_000) throw new Error('not every account armed in time');
      const text = await scrape(port).catch(() => '');
      const armed = [...text.matchAll(/^dms_keeper_armed\{account="[^"]+"\} 1$/gm)].length;
      if (armed === spec.n) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    // one re-arm period: the first round of re-arms after the cold start is over before the first phase
    await new Promise((r) => setTimeout(r, spec.rearmS * 1000));
    if ((Date.now() - t0) / 1000 > silenceS / 2) throw new Error(`the cold start took ${((Date.now() - t0) / 1000).toFixed(0)} s: too close to the silence of ${silenceS} s`);
    const origin = `http://127.0.0.1:${port}`;
    interface Phase {
      shape: HeartbeatShape | null;
      wall: number;
      cpu: number;
      requests: number;
      accepted: number;
      other: Record<string, number>;
      lag: Array<[number, number]>;
    }
    const phases: Phase[] = [];
    const phase = async (shape: HeartbeatShape | null): Promise<void> => {
      const load = shape === null ? null : new HeartbeatLoad(origin, spec.n, botSize, shape);
      const h0 = histogram(await scrape(port), 'dms_keeper_arm_lag_seconds');
      const cpu0 = await procCpuSeconds(keeper.pid!);
      const w0 = performance.now();
      load?.start();
      await new Promise((r) => setTimeout(r, phaseS * 1000));
      await load?.stop();
      const cpu1 = await procCpuSeconds(keeper.pid!);
      const wall = (performance.now() - w0) / 1000;
      const h1 = histogram(await scrape(port), 'dms_keeper_arm_lag_seconds');
      await load?.close();
      if (cpu0 === null || cpu1 === null) throw new Error('cannot read the keeper\'s CPU');
      const lag = h1.map(([le, c], i) => [le, c - (h0[i]?.[1] ?? 0)] as [number, number]);
      phases.push({ shape, wall, cpu: cpu1 - cpu0, requests: load?.requests ?? 0, accepted: load?.accepted ?? 0, other: { ...(load?.other ?? {}) }, lag });
      console.error(`  phase ${shape ?? 'quiet'}: ${wall.toFixed(1)} s, keeper CPU ${(((cpu1 - cpu0) / wall) * 100).toFixed(1)}% of a core, ${load ? `${load.accepted} heartbeats accepted, ` : ''}re-arms ${lag.at(-1)?.[1] ?? 0}, lag p99 <= ${f(toMs(histQuantile(lag, 0.99)), 0)} ms`);
    };
    // quiet, single, quiet, bot, ..., quiet: every loaded phase between two quiet ones
    for (let r = 0; r < rounds; r++) {
      await phase(null);
      await phase('single');
      await phase(null);
      await phase('bot');
    }
    await phase(null);
    const sumHist = (hs: Array<Array<[number, number]>>): Array<[number, number]> => hs.reduce((acc, h) => h.map(([le, c], i) => [le, c + (acc[i]?.[1] ?? 0)] as [number, number]), [] as Array<[number, number]>);
    const rate = (p: Phase): number => p.cpu / p.wall;
    const quiet = phases.filter((p) => p.shape === null);
    return (['single', 'bot'] as const).map((shape) => {
      const mine = phases.map((p, i) => ({ p, i })).filter(({ p }) => p.shape === shape);
      // each loaded phase against the mean of the quiet phases just before and after it (drift cancels)
      const extra = mine.reduce((sum, { p, i }) => sum + (rate(p) - (rate(phases[i - 1]!) + rate(phases[i + 1]!)) / 2) * p.wall, 0);
      const loadedS = mine.reduce((a, { p }) => a + p.wall, 0);
      const accepted = mine.reduce((a, { p }) => a + p.accepted, 0);
      const requests = mine.reduce((a, { p }) => a + p.requests, 0);
      const other: Record<string, number> = {};
      for (const { p } of mine) for (const [k, v] of Object.entries(p.other)) other[k] = (other[k] ?? 0) + v;
      const around = [...new Set(mine.flatMap(({ i }) => [i - 1, i + 1]))].map((i) => phases[i]!);
      return {
        shape,
        phases: mine.length,
        loadedS,
        quietS: around.reduce((a, p) => a + p.wall, 0),
        requestsPerSecond: requests / loadedS,
        heartbeatsPerSecond: accepted / loadedS,
        heartbeats: accepted,
        refused: other,
        cpuQuietPercent: (around.reduce((a, p) => a + p.cpu, 0) / around.reduce((a, p) => a + p.wall, 0)) * 100,
        cpuLoadedPercent: (mine.reduce((a, { p }) => a + p.cpu, 0) / loadedS) * 100,
        cpuMsPer1000: accepted > 0 ? (extra / accepted) * 1000 * 1000 : NaN,
        cpuMsPerRequest: requests > 0 ? (extra / requests) * 1000 : NaN,
        lagP99QuietMs: toMs(histQuantile(sumHist(quiet.map((p) => p.lag)), 0.99)),
        lagP99LoadedMs: toMs(histQuantile(sumHist(mine.map(({ p }) => p.lag)), 0.99)),
      };
    });
  } finally {
    await stopChild(keeper);
    await stopChild(sim.child, true);
  }
}

function specFor(n: number, quick: boolean, profile: string): RunSpec {
  if (quick) return { n, profile, budgetPerSecond: 10, deadlineS: 60, minHorizonS: 20, rearmS: 15, steadyS: 35, baselineS: 35 };
  if (n <= 100) return { n, profile, budgetPerSecond: 10, deadlineS: 60, minHorizonS: 20, rearmS: 15, steadyS: 60, baselineS: 60 };
  if (n <= 1_000) return { n, profile, budgetPerSecond: 100, deadlineS: 60, minHorizonS: 20, rearmS: 15, steadyS: 60, baselineS: 60 };
  // At the ceiling: the shortest deadline whose capacity, 0.97 x B x (deadline - min_horizon - 1 s),
  // still covers n (10,000 accounts at B = 100/s: 125 s, i.e. n / (B x (deadline - min_horizon)) = 0.952).
  // Past 10,000 the budget grows with n (B = n / 250: 200/s at 50,000) and the deadline with it,
  // so one run stays within a two-core machine (approvals and arms at 200/s each during the cold
  // start) and about ten minutes; the steady phase covers at least one full re-arm period (2.2 of
  // them up to 10,000 accounts).
  const budgetPerSecond = n <= 10_000 ? 100 : Math.round(n / 250);
  const deadlineS = Math.ceil(n / (0.97 * budgetPerSecond)) + 20 + 1;
  const periods = n <= 10_000 ? 2.2 : 1.2;
  return { n, profile, budgetPerSecond, deadlineS, minHorizonS: 20, rearmS: 15, steadyS: Math.ceil(periods * (deadlineS - 21)), baselineS: 90 };
}

const f = (x: number | null, d = 1): string => (x === null ? 'n/a' : x === Infinity ? '>30 s' : x.toFixed(d));

/** Names, the first few and how many more. */
const someNames = (names: readonly string[], k = 12): string => (names.length <= k ? names.join(', ') : `${names.slice(0, k).join(', ')} and ${names.length - k} more`);

/** The plan's given-up accounts and the lapsed ones, by name: what a starved keeper must report, and that only those lapsed. */
function givenUpText(k: Figures): string {
  const givenUp = k.givenUp ?? [];
  const lapsed = k.lapsedAccounts ?? [];
  const kept = k.lapsedKept ?? [];
  return `given up by the plan at the end: ${givenUp.length}${givenUp.length > 0 ? ` (${someNames(givenUp)})` : ''}; accounts with a lapse sample: ${lapsed.length}, of them not given up: ${kept.length}${kept.length > 0 ? ` (${someNames(kept)})` : ''}`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { accounts: { type: 'string' }, quick: { type: 'boolean' }, 'no-baseline': { type: 'boolean' }, 'steady-seconds': { type: 'string' }, 'keeper-node-args': { type: 'string' }, 'sim-node-args': { type: 'string' }, 'busy-loops': { type: 'string' }, profile: { type: 'string' }, 'heartbeat-accounts': { type: 'string' }, 'clob-accounts': { type: 'string' } } });
  simNodeArgs = values['sim-node-args']?.split(' ').filter(Boolean) ?? [];
  busyLoops = Number(values['busy-loops'] ?? 0);
  if (!Number.isInteger(busyLoops) || busyLoops < 0) throw new Error('--busy-loops must be a whole number');
  const quick = values.quick === true;
  const profile = values.profile ?? 'realistic';
  const ns = (values.accounts ?? (quick ? '10,100' : '10,100,1000,10000,50000')).split(',').filter(Boolean).map(Number);
  // The heartbeat row: in a full run only, unless asked for (`--heartbeat-accounts 1000`; 0: none).
  const heartbeatN = Number(values['heartbeat-accounts'] ?? (quick || values.accounts !== undefined ? 0 : 1000));
  // The Polymarket CLOB row: likewise (`--clob-accounts 1000`; 0: none).
  const clobN = Number(values['clob-accounts'] ?? (quick || values.accounts !== undefined ? 0 : 1000));
  const rows: Array<{ spec: RunSpec; keeper: Figures; naive?: Figures }> = [];
  const failed: Array<{ n: number; message: string }> = [];
  for (const n of ns) {
    const spec = specFor(n, quick, profile);
    if (values['steady-seconds'] !== undefined) spec.steadyS = Number(values['steady-seconds']);
    console.error(`bench: ${n} accounts, B = ${spec.budgetPerSecond}/s, deadline ${spec.deadlineS} s, profile ${spec.profile}${busyLoops > 0 ? `, ${busyLoops} busy loops beside` : ''} ...`);
    let keeper: Figures;
    try {
      keeper = await runKeeper(spec, values['keeper-node-args']?.split(' ').filter(Boolean));
    } catch (e) {
      // One row that cannot run (the keeper exited, say) is reported, and the others still are.
      failed.push({ n, message: String((e as Error).message ?? e) });
      console.error(`  keeper: FAILED: ${(e as Error).message}`);
      continue;
    }
    // The naive keeper has nothing to say past 10,000 accounts but 429s: it is not run there.
    const naive = values['no-baseline'] || n > 10_000 ? undefined : await runNaive(spec);
    rows.push({ spec, keeper, naive });
    console.error(`  keeper: all armed ${f(keeper.timeToAllArmedS)} s, lapses ${keeper.lapses}, 429s ${keeper.rateLimited}, lag p99 <= ${f(keeper.lagP99Ms, 0)} ms (halves ${f(keeper.earlyLagP99Ms, 0)} / ${f(keeper.lateLagP99Ms, 0)} ms), late arms ${keeper.lateArms.length}, cpu ${f(keeper.cpuSecondsPerArm === null ? null : keeper.cpuSecondsPerArm * 1000, 2)} ms/arm (kernel ${f(keeper.cpuSystemShare === null ? null : keeper.cpuSystemShare * 100, 0)}%), ${f(keeper.cpuSecondsPerRequest == null ? null : keeper.cpuSecondsPerRequest * 1000, 2)} ms/request (steady requests: ${keeper.requestsInSteady ? `${keeper.requestsInSteady.arms} arms, ${keeper.requestsInSteady.reads} reads, ${keeper.requestsInSteady.other} other` : 'n/a'}), rss ${f(keeper.peakRssMb)} MB, live heap ${f(keeper.heapLiveMb)} MB`);
    for (const a of keeper.lateArms.slice(0, 5)) console.error(`    late: ${lateArmText(a)}`);
    console.error(`  ${givenUpText(keeper)}`);
    for (const l of keeper.limited) console.error(`  ${l}`);
    if (naive) console.error(`  naive:  all armed ${f(naive.timeToAllArmedS)} s, lapses ${naive.lapses}, 429s ${naive.rateLimited}`);
  }

  let heartbeats: { spec: RunSpec; botSize: number; figures: HeartbeatFigures[] } | undefined;
  if (heartbeatN > 0) {
    const spec = specFor(heartbeatN, false, profile);
    const botSize = 10;
    console.error(`bench: heartbeats, ${heartbeatN} accounts with liveness (bots of ${botSize}), B = ${spec.budgetPerSecond}/s, deadline ${spec.deadlineS} s ...`);
    try {
      heartbeats = { spec, botSize, figures: await runHeartbeats(spec, botSize, 15, 2) };
      for (const h of heartbeats.figures) {
        console.error(`  ${h.shape === 'single' ? 'single-account requests' : `bots of ${botSize}`}: ${h.heartbeatsPerSecond.toFixed(0)} heartbeats/s (${h.requestsPerSecond.toFixed(0)} requests/s), keeper CPU ${h.cpuQuietPercent.toFixed(1)}% quiet, ${h.cpuLoadedPercent.toFixed(1)}% loaded: ${h.cpuMsPer1000.toFixed(1)} ms per 1,000 heartbeats (${h.cpuMsPerRequest.toFixed(3)} ms per request)`);
      }
    } catch (e) {
      failed.push({ n: heartbeatN, message: `heartbeat row: ${String((e as Error).message ?? e)}` });
      console.error(`  heartbeats: FAILED: ${(e as Error).message}`);
    }
  }

  let clob: ClobFigures | undefined;
  if (clobN > 0) {
    const steadyS = values['steady-seconds'] !== undefined ? Number(values['steady-seconds']) : 60;
    console.error(`bench: Polymarket CLOB, ${clobN} accounts heartbeating every 5 s, steady ${steadyS} s ...`);
    try {
      clob = await runClob({ n: clobN, steadyS, root: ROOT, simNodeArgs, keeperNodeArgs: values['keeper-node-args']?.split(' ').filter(Boolean) ?? [] });
      console.error(`  clob: ${clobSummary(clob)}`);
    } catch (e) {
      failed.push({ n: clobN, message: `Polymarket CLOB row: ${String((e as Error).message ?? e)}` });
      console.error(`  clob: FAILED: ${(e as Error).message}`);
    }
  }

  const cpuModel = cpus()[0]?.model ?? (await readFile('/proc/cpuinfo', 'utf8').then((t) => /model name\s*:\s*(.+)/.exec(t)?.[1] ?? 'unknown', () => 'unknown'));
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const lines = [
    quick ? '# Benchmark (quick run)' : '# Benchmarks',
    '',
    `Produced by \`npm run bench${quick ? ' -- --quick' : ''}\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)}.`,
    `Machine: ${availableParallelism()} cores (${cpuModel}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; dms-keeper ${pkg.version};`,
    `undici ${pkg.dependencies.undici}, viem ${pkg.dependencies.viem}, @msgpack/msgpack ${pkg.dependencies['@msgpack/msgpack']}, prom-client ${pkg.dependencies['prom-client']}, pino ${pkg.dependencies.pino}, secp256k1 ${pkg.dependencies.secp256k1}.`,
    `Simulator and keeper in separate processes on loopback, signature checks on, venue profile \`${profile}\` (optional fields null, unknown keys added); every account starts with an approveAgent signed by its master. The naive keeper runs against a fresh simulator with the same budget, up to 10,000 accounts.`,
    '',
    'B = schedule-cancel budget (arms/s), enforced by the simulator; approvals go by the exchange endpoint at the same rate. Capacity efficiency = accounts held / (B x (deadline - min_horizon)).',
    'First armed: from spawn to the first account armed (process start, config, approval, first arm). All armed: from spawn to every account armed; the bound is 1.1 x (approvals + arms) / B. Unprotected: each account\'s time from spawn to its first arm, summed (account-seconds; the cold start\'s order is chosen to make it small).',
    "Lag: the keeper's own send time minus planned slot (histogram bucket bound, buckets 10 ms apart up to 100 ms), steady state (from all armed), whole and per half; naive: gap between its arms minus its period. Late: re-arms that left over 1 s after their slot.",
    'CPU per arm: keeper CPU (user + system, every thread) over the steady phase divided by the arms the venue received; in brackets the kernel\'s share. Peak RSS: the keeper\'s VmHWM, cold start included. Live heap: dms_keeper_heap_live_bytes (V8 heap after the last full GC) at the end.',
    'The keeper runs with the heap limits `dms-keeper check-config` recommends for its account count (src/config/memory.ts: `--max-old-space-size` 1.5 x the expected live heap, `--max-semi-space-size=4`), as the systemd unit and the image set them.',
    'Lapses: 1 s venue-side samples where an armed account is below min_horizon (or fired), after all accounts were armed.',
    '',
    '| accounts | B/s | deadline s | who | approvals | first armed s | all armed s (bound) | unprotected account-s | lag p50 / p99 / max ms | lag p99 1st / 2nd half ms | late | min horizon s | lapses | sends/s vs B | 429s | CPU ms/arm (kernel share) | CPU % core | peak RSS MB | live heap MB | loop p99 ms | stretch | efficiency |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { spec, keeper, naive } of rows) {
    const bound = (1.1 * (keeper.approvals + spec.n)) / spec.budgetPerSecond;
    const eff = spec.n / (spec.budgetPerSecond * (spec.deadlineS - spec.minHorizonS));
    for (const x of naive ? [keeper, naive] : [keeper]) {
      const k = x.who === 'keeper';
      lines.push(
        `| ${spec.n} | ${spec.budgetPerSecond} | ${spec.deadlineS} | ${x.who} | ${k ? x.approvals : 'n/a'} | ${f(x.timeToFirstArmedS)} | ${f(x.timeToAllArmedS)} (${k ? bound.toFixed(1) : 'n/a'}) | ${f(x.unprotectedAccountSeconds, 0)} | ${f(x.lagP50Ms, 0)} / ${f(x.lagP99Ms, 0)} / ${f(x.lagMaxMs, 0)} | ${f(x.earlyLagP99Ms, 0)} / ${f(x.lateLagP99Ms, 0)} | ${k ? x.lateArms.length : 'n/a'} | ${f(x.minHorizonS)} | ${x.lapses} | ${f(x.requestsPerSecond)} vs ${spec.budgetPerSecond} | ${x.rateLimited} | ${x.cpuSecondsPerArm === null ? 'n/a' : (x.cpuSecondsPerArm * 1000).toFixed(2)}${x.cpuSystemShare === null ? '' : ` (${(x.cpuSystemShare * 100).toFixed(0)}%)`} | ${f(x.cpuPercentOfCore)} | ${f(x.peakRssMb)} | ${f(x.heapLiveMb)} | ${f(x.eventLoopP99Ms)} | ${f(x.stretch, 2)} | ${k && x.lapses === 0 ? eff.toFixed(3) : 'n/a'} |`,
      );
    }
  }
  // What one more account costs, measured: live heap differences against the smallest row.
  const measured = rows.filter((r) => r.keeper.heapLiveMb !== null).sort((a, b) => a.spec.n - b.spec.n);
  if (measured.length >= 2) {
    const base = measured[0]!;
    lines.push('', `## Memory per account`, '', `Live heap of each row minus the ${base.spec.n}-account row's (${f(base.keeper.heapLiveMb)} MB), per account added.`, '', '| accounts | live heap MB | per account KB | peak RSS MB |', '|---|---|---|---|');
    for (const r of measured.slice(1)) {
      const perKb = ((r.keeper.heapLiveMb! - base.keeper.heapLiveMb!) * 1024) / (r.spec.n - base.spec.n);
      lines.push(`| ${r.spec.n} | ${f(r.keeper.heapLiveMb)} | ${perKb.toFixed(2)} | ${f(r.keeper.peakRssMb)} |`);
    }
  }
  lines.push(
    '',
    '## What limited the sends',
    '',
    "Per phase (cold start: spawn to all armed; steady), from the keeper's and the simulator's CPU (% of one core: each runs its JavaScript on one thread), the machine's busy cores, and the late re-arms' waits (bench/limited.ts decides). Sent and planned: in the cold start, approvals and first arms per second against the all-armed bound's pace (B / 1.1), then the first arms alone from the first to the last against B; after, the accounts over their mean gap between re-arms (a window shorter than one period would count the cold start's order) against the plan's arms per second (dms_keeper_arm_budget_utilisation x B).",
    '',
  );
  for (const r of rows) for (const l of r.keeper.limited) lines.push(`- ${r.spec.n} accounts, ${l}`);
  const late = rows.filter((r) => r.keeper.lateArms.length > 0);
  lines.push('', '## Re-arms later than 1 s', '');
  if (late.length === 0) lines.push('None in any row.');
  for (const r of late) {
    const byCause = new Map<string, number>();
    for (const a of r.keeper.lateArms) byCause.set(a.heldBy ?? 'not held', (byCause.get(a.heldBy ?? 'not held') ?? 0) + 1);
    const when = r.keeper.lateArms.map((a) => a.atS);
    lines.push(
      `${r.spec.n} accounts: ${r.keeper.lateArms.length}, from t = ${Math.min(...when).toFixed(0)} to ${Math.max(...when).toFixed(0)} s; held by ${[...byCause].map(([k, c]) => `${k} x${c}`).join(', ')}. The slowest (timer: the event loop woke late; queued: the request budget or the signer's turn):`,
      '',
    );
    for (const a of r.keeper.lateArms.slice(0, 5)) lines.push(`- ${lateArmText(a)}`);
    lines.push('');
  }
  if (heartbeats) {
    const { spec, botSize, figures } = heartbeats;
    lines.push(
      '',
      '## Heartbeats',
      '',
      `${spec.n} accounts, each with heartbeat liveness (bots of ${botSize} accounts, one token each; silence ${300} s, so that no bot falls silent in a quiet phase), B = ${spec.budgetPerSecond}/s, deadline ${spec.deadlineS} s: the re-arm load of the ${spec.n}-account row. After all are armed and one re-arm period, ${figures[0]!.phases * 4 + 1} phases of 15 s: quiet, every account's heartbeat once a second as one request each (single), quiet, as one request per bot naming its ${botSize} accounts (bot), ..., quiet. Heartbeats from the bench process over 16 keep-alive connections, spread evenly over each second.`,
      "CPU per 1,000 heartbeats: for each loaded phase, the keeper's CPU (user + system, every thread, /proc) per second minus the mean of the quiet phases just before and after it, times its seconds; summed, over the account heartbeats accepted (answered 200), times 1,000. Quiet: those neighbouring phases. Lag: the re-arms' p99 (dms_keeper_arm_lag_seconds) in all quiet phases and in the loaded ones.",
      '',
      '| accounts | shape | requests/s | heartbeats/s accepted | refused | keeper CPU % core quiet / loaded | CPU ms per 1,000 heartbeats | CPU ms per request | lag p99 quiet / loaded ms |',
      '|---|---|---|---|---|---|---|---|---|',
      ...figures.map(
        (h) =>
          `| ${spec.n} | ${h.shape === 'single' ? 'single (1 account a request)' : `bot (${botSize} accounts a request)`} | ${h.requestsPerSecond.toFixed(0)} | ${h.heartbeatsPerSecond.toFixed(0)} | ${Object.entries(h.refused).map(([k, v]) => `${k} x${v}`).join(', ') || '0'} | ${h.cpuQuietPercent.toFixed(1)} / ${h.cpuLoadedPercent.toFixed(1)} | ${h.cpuMsPer1000.toFixed(1)} | ${h.cpuMsPerRequest.toFixed(3)} | ${f(h.lagP99QuietMs, 0)} / ${f(h.lagP99LoadedMs, 0)} |`,
      ),
    );
  }
  if (clob) lines.push(...clobSection(clob));
  if (failed.length > 0) lines.push('', '## Rows that did not run', '', ...failed.map((x) => `- ${x.n} accounts: ${x.message}`));
  lines.push('', '## Baseline ratios (naive / keeper)', '', '| accounts | 429s | lapses | all armed time | CPU s per arm |', '|---|---|---|---|---|');
  for (const { spec, keeper, naive } of rows) {
    if (!naive) continue;
    const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? (a !== null && a > 0 && b === 0 ? `${a} vs 0` : 'n/a') : (a / b).toFixed(2));
    lines.push(`| ${spec.n} | ${ratio(naive.rateLimited, keeper.rateLimited)} | ${ratio(naive.lapses, keeper.lapses)} | ${ratio(naive.timeToAllArmedS, keeper.timeToAllArmedS)} | ${ratio(naive.cpuSecondsPerArm, keeper.cpuSecondsPerArm)} |`);
  }
  const out = quick ? join(ROOT, 'artifacts/bench-quick.md') : values.accounts !== undefined || values['steady-seconds'] !== undefined ? join(ROOT, 'artifacts/bench-partial.md') : join(ROOT, 'docs/benchmark-results.md');
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  await writeFile(out, lines.join('\n') + '\n');
  console.log(lines.join('\n'));
  // A lapse is a failure unless the plan gave that account up (a keeper short of CPU or budget
  // reports whom it cannot protect, and only those may lapse); so is a cold start that never armed
  // every account, unless some were given up.
  const lapsed = rows.filter((r) => (r.keeper.lapsedKept ?? []).length > 0 || (r.keeper.lapses > 0 && (r.keeper.givenUp ?? []).length === 0) || (r.keeper.timeToAllArmedS === null && (r.keeper.givenUp ?? []).length === 0));
  if (failed.length > 0) console.error(`FAIL: no keeper run at ${failed.map((x) => x.n).join(', ')} accounts`);
  if (clob && clob.lapses > 0) console.error(`FAIL: the keeper's Polymarket CLOB accounts lapsed ${clob.lapses} times at ${clob.n} accounts`);
  if (lapsed.length > 0 || failed.length > 0 || (clob !== undefined && clob.lapses > 0)) {
    if (lapsed.length > 0) console.error(`FAIL: the keeper lapsed on accounts it had not given up (or never armed every account) at ${lapsed.map((r) => r.spec.n).join(', ')} accounts`);
    return 1;
  }
  return 0;
}

runMain('bench', main);
