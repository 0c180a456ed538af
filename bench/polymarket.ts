/**
 * The Polymarket CLOB row of `npm run bench` (issue 37): N accounts on a `polymarket_clob` venue,
 * each heartbeating every 5 s within the venue's limits (the keeper's default budget for the venue:
 * 9,000 requests per 10 s), no account on the outcome venue. The simulator (its CLOB under `/clob`)
 * and the built keeper run in separate processes, as in the other rows.
 *
 * Each bench address gets L2 credentials from the simulator's admin route (`POST
 * /_sim/clob/accounts`), written as credential files the keeper reads. Measured from the venue's
 * side (`GET /_sim/clob/heartbeats`, `GET /_sim/clob/fires`, the CLOB's requests counted where its
 * rate limiter decides):
 * - time to all beating: from the keeper's spawn until every account's first accepted heartbeat;
 * - lapses: fires (the venue cancelled an account's orders: no accepted heartbeat within 10 s),
 *   over the whole run, cold start included; the row fails on any;
 * - the largest gap between two accepted heartbeats of one account, over all accounts and the
 *   whole run (the timeout is 10,000 ms), and the accounts' median largest gap;
 * - refused (stale id) and accepted heartbeats over the steady phase, and the CLOB requests per
 *   second against the venue's 900/s;
 * - the keeper's CPU (user + system, every thread, /proc) over the steady phase divided by the
 *   heartbeats the venue accepted in it; its peak RSS (VmHWM, cold start included).
 * Reads of open orders are every 86,400 s (as the other rows' reads are rare): the CPU is the
 * heartbeats'.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { benchAddresses } from './keys.js';
import type { SamplerReport } from './sim-process.js';
import { busyPct, forkSim, freePort, machineCpu, procCpuSeconds, procCpuSplit, procPeakRssMb, stopChild } from './proc.js';
import { nodeOptionsFor } from '../src/config/memory.js';
import { HEARTBEAT_ENDPOINT } from '../src/venue/polymarket/heartbeat.js';
import type { HeartbeatStats } from '../src/sim/polymarket/heartbeats.js';

/** The CLOB's heartbeat timeout and general limit (src/sim/polymarket: the venue's published figures). */
export const CLOB_TIMEOUT_MS = 10_000;
export const CLOB_LIMIT_PER_SECOND = 9_000 / 10;

/** One account's figures as `GET /_sim/clob/heartbeats` gives them. */
export type VenueHeartbeats = HeartbeatStats;

export interface HeartbeatSummary {
  /** Accounts the venue has seen a beat of, and of them those with a live chain now. */
  accounts: number;
  live: number;
  /** Beats accepted and refused between the two snapshots, over all accounts. */
  accepted: number;
  refused: number;
  /** The largest gap between accepted beats of any one account since the venue started (ms), and the median account's. */
  maxGapMs: number;
  medianMaxGapMs: number;
}

/** What happened between two snapshots of the venue's heartbeat figures (an account absent before counts from 0). */
export function summariseHeartbeats(before: readonly VenueHeartbeats[], after: readonly VenueHeartbeats[]): HeartbeatSummary {
  const was = new Map(before.map((b) => [b.address, b]));
  let accepted = 0;
  let refused = 0;
  for (const a of after) {
    accepted += a.accepted - (was.get(a.address)?.accepted ?? 0);
    refused += a.refused - (was.get(a.address)?.refused ?? 0);
  }
  const gaps = after.map((a) => a.maxGapMs).sort((x, y) => x - y);
  return {
    accounts: after.length,
    live: after.filter((a) => a.live).length,
    accepted,
    refused,
    maxGapMs: gaps.at(-1) ?? 0,
    medianMaxGapMs: gaps.length === 0 ? 0 : gaps[Math.floor((gaps.length - 1) / 2)]!,
  };
}

/**
 * Each account's first accepted beat (venue time), from snapshots polled during the cold start. An
 * account first seen with one beat: its last beat is its first (exact); with more (the poll came
 * late): the poll's time, an upper bound.
 */
export class FirstBeats {
  private readonly first = new Map<string, number>();

  constructor(private readonly addresses: readonly string[]) {}

  observe(venueTimeMs: number, stats: readonly VenueHeartbeats[]): void {
    for (const s of stats) if (s.accepted > 0 && !this.first.has(s.address)) this.first.set(s.address, s.accepted === 1 ? s.lastBeatMs : venueTimeMs);
  }

  /** When the last of the addresses had its first beat (venue time), or null while one has none. */
  allAtMs(): number | null {
    let last = Number.NEGATIVE_INFINITY;
    for (const a of this.addresses) {
      const t = this.first.get(a);
      if (t === undefined) return null;
      last = Math.max(last, t);
    }
    return last;
  }

  get count(): number {
    return this.first.size;
  }
}

/**
 * The largest gap between accepted beats over a phase, from snapshots polled more often than the
 * period: an account whose count rose by one since the last snapshot has one new gap, exact (its
 * last beat minus the one before); by more (the poll came late, or retries), the span is an upper
 * bound of each gap in it, and is counted as one.
 */
export class GapTracker {
  private readonly last = new Map<string, { accepted: number; lastBeatMs: number }>();
  maxGapMs = 0;
  /** Spans counted whole because more than one beat fell in them. */
  spans = 0;

  observe(stats: readonly VenueHeartbeats[]): void {
    for (const s of stats) {
      const was = this.last.get(s.address);
      if (was && s.accepted > was.accepted) {
        this.maxGapMs = Math.max(this.maxGapMs, s.lastBeatMs - was.lastBeatMs);
        if (s.accepted > was.accepted + 1) this.spans++;
      }
      this.last.set(s.address, { accepted: s.accepted, lastBeatMs: s.lastBeatMs });
    }
  }
}

export interface ClobFigures {
  n: number;
  heartbeatEveryS: number;
  steadyS: number;
  /** From the keeper's spawn to every account's first accepted beat, s (null: not within the wait). */
  allBeatingS: number | null;
  /** Fires over the whole run (the venue cancelled an account's orders). */
  lapses: number;
  maxGapMs: number;
  medianMaxGapMs: number;
  /** The largest gap between accepted beats within the steady phase (GapTracker), and the spans it had to count whole. */
  steadyMaxGapMs: number;
  steadySpans: number;
  /** Over the steady phase. */
  accepted: number;
  refused: number;
  acceptedPerSecond: number;
  requestsPerSecond: number;
  /** The most in one of the simulator's 1 s reports over the steady phase (the heartbeats' bunching). */
  peakRequestsPerSecond: number;
  /** 429s the CLOB answered over the whole run. */
  rateLimited: number;
  keeperCpuMsPerBeat: number | null;
  keeperCpuPercent: number | null;
  keeperSystemShare: number | null;
  simCpuPercent: number | null;
  machineBusyPercent: number | null;
  peakRssMb: number | null;
  eventLoopP99Ms: number | null;
  /** The keeper's own answers for its heartbeats over the run, and over the steady phase, by code (its metrics; `error`: no answer). */
  keeperHeartbeatCodes: Record<string, number>;
  keeperHeartbeatCodesSteady: Record<string, number>;
  /** The keeper's requests over the steady phase by endpoint (its metrics). */
  keeperRequestsSteady: Record<string, number>;
  /** What the keeper logged (at warn and above), by its message, before the steady phase and in it. */
  keeperWarnings: Record<string, number>;
  keeperWarningsSteady: Record<string, number>;
}

export interface ClobRunOptions {
  n: number;
  steadyS: number;
  /** The repository root (dist/ and artifacts/ under it). */
  root: string;
  simNodeArgs?: string[];
  keeperNodeArgs?: string[];
}

const HEARTBEAT_EVERY_S = 5;

interface ClobCounters {
  tMs: number;
  clobRequests: number;
  clobRateLimited: number;
}

/** The simulator process's CLOB request counters now (asked over IPC). */
async function counters(child: ChildProcess): Promise<ClobCounters> {
  return new Promise((res) => {
    const on = (m: unknown): void => {
      if ((m as { type?: string }).type !== 'counters') return;
      child.off('message', on);
      res(m as ClobCounters);
    };
    child.on('message', on);
    child.send({ type: 'counters' });
  });
}

/** The most requests the venue received in one of the sampler's 1 s reports. */
export function peakPerReport(reports: ReadonlyArray<Pick<SamplerReport, 'tMs' | 'clobRequests'>>): number {
  let peak = 0;
  for (let i = 1; i < reports.length; i++) peak = Math.max(peak, (reports[i]!.clobRequests - reports[i - 1]!.clobRequests) / Math.max(0.001, (reports[i]!.tMs - reports[i - 1]!.tMs) / 1000));
  return peak;
}

function startSim(execArgv: string[], onReport: (r: SamplerReport) => void): ReturnType<typeof forkSim> {
  // No outcome-venue accounts; its limits as the small rows'.
  return forkSim(['--accounts', '0', '--budget-per-minute', '600', '--global-per-minute', '12000', '--deadline-seconds', '60', '--min-horizon-seconds', '20', '--profile', 'realistic'], execArgv, onReport);
}

async function admin<T>(baseUrl: string, path: string, body?: unknown): Promise<T> {
  const r = await fetch(`${baseUrl}/_sim/clob${path}`, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`simulator ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

interface Creds {
  key: string;
  secret: string;
  passphrase: string;
}

/** Credentials from the simulator for every address (16 at a time), written as the keeper's credential files, and its config. */
async function keeperConfig(n: number, sim: { baseUrl: string; wsUrl: string; clobUrl: string }, port: number): Promise<{ file: string; creds: string }> {
  const dir = await mkdtemp(join(tmpdir(), `dmsk-bench-clob-${n}-`));
  const creds = join(dir, 'creds');
  await mkdir(creds);
  const addresses = benchAddresses(n);
  const write = async (name: string, value: string): Promise<void> => {
    const f = join(creds, name);
    await writeFile(f, `${value}\n`, { mode: 0o600 });
    await chmod(f, 0o600);
  };
  for (let i = 0; i < n; i += 16) {
    await Promise.all(
      addresses.slice(i, i + 16).map(async (address, j) => {
        const c = await admin<Creds>(sim.baseUrl, '/accounts', { address });
        await Promise.all([write(`p${i + j}.key`, c.key), write(`p${i + j}.secret`, c.secret), write(`p${i + j}.passphrase`, c.passphrase)]);
      }),
    );
  }
  const lines = [
    // The outcome venue is the simulator's too, though no account is on it.
    'venue:',
    `  base_url: ${sim.baseUrl}`,
    `  exchange_url: ${sim.baseUrl}`,
    `  ws_url: ${sim.wsUrl}`,
    'venues:',
    // The venue's default limits (9,000 per 10 s) and timings; only the period is said, as the issue states it.
    `  pm: { kind: polymarket_clob, clob_url: ${sim.clobUrl}, heartbeat_every_seconds: ${HEARTBEAT_EVERY_S} }`,
    'watch:',
    '  orders_every_seconds: 86400',
    '  positions_every_seconds: 86400',
    '  notifications: false',
    'accounts:',
  ];
  for (let i = 0; i < n; i++) {
    lines.push(`  - name: p${i}`, '    venue: pm', `    address: "${addresses[i]}"`, `    clob_credentials: { key: { file: p${i}.key }, secret: { file: p${i}.secret }, passphrase: { file: p${i}.passphrase } }`);
  }
  lines.push(`state_dir: ${join(dir, 'state')}`, 'server:', `  listen: 127.0.0.1:${port}`, 'log:', '  level: warn');
  const file = join(dir, 'bench.yaml');
  await writeFile(file, lines.join('\n'));
  return { file, creds };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The keeper's own count of its heartbeat answers by code (dms_keeper_venue_requests_total). */
function heartbeatCodes(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="([^"]+)"\} (\d+)$/gm)) if (m[1] === HEARTBEAT_ENDPOINT) out[m[2]!] = Number(m[3]);
  return out;
}

/** The keeper's requests by endpoint, every code summed (dms_keeper_venue_requests_total). */
export function requestsByEndpoint(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="[^"]+"\} (\d+)$/gm)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  return out;
}

/** Counts by key between two snapshots of counters (a key absent before counts from 0; zeros left out). */
export function codesBetween(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) !== 0) out[k] = v - (before[k] ?? 0);
  return out;
}

export async function runClob(opts: ClobRunOptions): Promise<ClobFigures> {
  const { n, steadyS, root } = opts;
  const reports: SamplerReport[] = [];
  const sim = await startSim(opts.simNodeArgs ?? [], (r) => reports.push(r));
  let keeper: ChildProcess | undefined;
  await mkdir(join(root, 'artifacts'), { recursive: true });
  const keeperLog = createWriteStream(join(root, `artifacts/bench-keeper-clob-${n}.log`));
  try {
    const port = await freePort();
    const cfg = await keeperConfig(n, sim, port);
    const addresses = benchAddresses(n);
    const first = new FirstBeats(addresses);
    const t0 = Date.now();
    keeper = spawn(process.execPath, [...nodeOptionsFor(n).split(' '), ...(opts.keeperNodeArgs ?? []), join(root, 'dist/src/main.js'), 'run', '--config', cfg.file], {
      env: { ...process.env, CREDENTIALS_DIRECTORY: cfg.creds, NOTIFY_SOCKET: undefined },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const warnings: Record<string, number> = {};
    const warningsSteady: Record<string, number> = {};
    let inSteady = false;
    createInterface({ input: keeper.stdout! }).on('line', (line) => {
      keeperLog.write(line + '\n');
      try {
        const rec = JSON.parse(line) as { msg?: string; reason?: string };
        const k = `${rec.msg ?? 'unknown'}${rec.reason ? ` (${rec.reason})` : ''}`;
        const into = inSteady ? warningsSteady : warnings;
        into[k] = (into[k] ?? 0) + 1;
      } catch {
        // not the keeper's JSON (V8's own output): in the log only
      }
    });
    // Cold start: every account's first accepted beat, polled from the venue.
    let allAtHostMs: number | null = null;
    const waitMs = 120_000 + n * 20;
    while (allAtHostMs === null) {
      if (keeper.exitCode !== null) throw new Error(`keeper exited ${keeper.exitCode}`);
      if (Date.now() - t0 > waitMs) throw new Error(`${first.count} of ${n} accounts had a heartbeat accepted ${waitMs / 1000} s after the keeper's spawn`);
      await sleep(250);
      const s = await admin<{ venueTimeMs: number; heartbeats: VenueHeartbeats[] }>(sim.baseUrl, '/heartbeats');
      first.observe(s.venueTimeMs, s.heartbeats);
      const all = first.allAtMs();
      // venue time to host time: the simulator's profile sets no clock offset, but this keeps it honest
      if (all !== null) allAtHostMs = all - (s.venueTimeMs - Date.now());
    }
    console.error(`  all ${n} accounts beating ${((allAtHostMs - t0) / 1000).toFixed(1)} s after spawn`);
    // One period for the cold start's order to settle, then the steady phase.
    await sleep(HEARTBEAT_EVERY_S * 1000);
    const before = await admin<{ heartbeats: VenueHeartbeats[] }>(sim.baseUrl, '/heartbeats');
    const reportIndex = reports.length;
    const cpu0 = await procCpuSeconds(keeper.pid!);
    const split0 = await procCpuSplit(keeper.pid!);
    const simCpu0 = await procCpuSeconds(sim.child.pid!);
    const machine0 = await machineCpu();
    const count0 = await counters(sim.child);
    const metrics0 = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
    const w0 = Date.now();
    inSteady = true;
    // The steady phase's own gaps: the venue's figures every 2 s (under half the period).
    const gaps = new GapTracker();
    gaps.observe(before.heartbeats);
    while (Date.now() - w0 < steadyS * 1000) {
      await sleep(Math.min(2_000, Math.max(0, steadyS * 1000 - (Date.now() - w0))));
      gaps.observe((await admin<{ heartbeats: VenueHeartbeats[] }>(sim.baseUrl, '/heartbeats')).heartbeats);
    }
    const cpu1 = await procCpuSeconds(keeper.pid!);
    const split1 = await procCpuSplit(keeper.pid!);
    const simCpu1 = await procCpuSeconds(sim.child.pid!);
    const machine1 = await machineCpu();
    const count1 = await counters(sim.child);
    const wallS = (Date.now() - w0) / 1000;
    const after = await admin<{ heartbeats: VenueHeartbeats[] }>(sim.baseUrl, '/heartbeats');
    gaps.observe(after.heartbeats);
    const fires = await admin<{ fires: unknown[] }>(sim.baseUrl, '/fires');
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
    const peak = await procPeakRssMb(keeper.pid!);
    const sum = summariseHeartbeats(before.heartbeats, after.heartbeats);
    const requestsPerSecond = (count1.clobRequests - count0.clobRequests) / ((count1.tMs - count0.tMs) / 1000);
    const keeperCpu = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
    const loop = Number(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(metrics)?.[1]);
    return {
      n,
      heartbeatEveryS: HEARTBEAT_EVERY_S,
      steadyS: wallS,
      allBeatingS: (allAtHostMs - t0) / 1000,
      lapses: fires.fires.length,
      maxGapMs: sum.maxGapMs,
      medianMaxGapMs: sum.medianMaxGapMs,
      steadyMaxGapMs: gaps.maxGapMs,
      steadySpans: gaps.spans,
      accepted: sum.accepted,
      refused: sum.refused,
      acceptedPerSecond: sum.accepted / wallS,
      requestsPerSecond,
      peakRequestsPerSecond: peakPerReport(reports.slice(reportIndex)),
      rateLimited: count1.clobRateLimited,
      keeperCpuMsPerBeat: keeperCpu !== null && sum.accepted > 0 ? (keeperCpu / sum.accepted) * 1000 : null,
      keeperCpuPercent: keeperCpu !== null ? (keeperCpu / wallS) * 100 : null,
      keeperSystemShare: split0 && split1 ? (split1.system - split0.system) / Math.max(0.01, split1.user - split0.user + split1.system - split0.system) : null,
      simCpuPercent: simCpu0 !== null && simCpu1 !== null ? ((simCpu1 - simCpu0) / wallS) * 100 : null,
      machineBusyPercent: busyPct(machine0, machine1),
      peakRssMb: peak,
      eventLoopP99Ms: Number.isFinite(loop) ? loop * 1000 : null,
      keeperHeartbeatCodes: heartbeatCodes(metrics),
      keeperHeartbeatCodesSteady: codesBetween(heartbeatCodes(metrics0), heartbeatCodes(metrics)),
      keeperRequestsSteady: codesBetween(requestsByEndpoint(metrics0), requestsByEndpoint(metrics)),
      keeperWarnings: warnings,
      keeperWarningsSteady: warningsSteady,
    };
  } finally {
    if (keeper) await stopChild(keeper);
    await stopChild(sim.child, true);
    keeperLog.end();
  }
}

const f = (x: number | null, d = 1): string => (x === null ? 'n/a' : x.toFixed(d));

/** The row's one-line summary for the console. */
export function clobSummary(c: ClobFigures): string {
  return `all beating ${f(c.allBeatingS)} s, lapses ${c.lapses}, max gap ${c.maxGapMs} ms whole run (median account ${c.medianMaxGapMs} ms), ${c.steadyMaxGapMs} ms steady, ${c.acceptedPerSecond.toFixed(1)} accepted/s, refused ${c.refused}, ${c.requestsPerSecond.toFixed(1)} requests/s (peak 1 s ${c.peakRequestsPerSecond.toFixed(0)}) of ${CLOB_LIMIT_PER_SECOND}, 429s ${c.rateLimited}, keeper CPU ${f(c.keeperCpuMsPerBeat, 3)} ms/heartbeat (${f(c.keeperCpuPercent)}% of a core), simulator ${f(c.simCpuPercent)}%, rss ${f(c.peakRssMb)} MB`;
}

const counts = (r: Readonly<Record<string, number>>): string => Object.entries(r).map(([k, v]) => `${k} x${v}`).join(', ') || 'none';

/** The results file's section for the row. */
export function clobSection(c: ClobFigures): string[] {
  return [
    '',
    '## Polymarket CLOB heartbeats',
    '',
    `${c.n} accounts on a \`polymarket_clob\` venue (none on the outcome venue), heartbeat every ${c.heartbeatEveryS} s, the venue's default limit (9,000 requests per 10 s, i.e. ${CLOB_LIMIT_PER_SECOND}/s) in the keeper's budget and enforced by the simulator; the venue's other defaults (request timeout 1,000 ms, min horizon 2 s); open orders read every 86,400 s (the CPU is the heartbeats'). Simulator (its CLOB under \`/clob\`, credentials per account from its admin route) and keeper in separate processes.`,
    "All beating: from the keeper's spawn to every account's first accepted heartbeat (venue side). Lapses: the venue's fires (no accepted heartbeat within 10 s: every order cancelled), whole run. Max gap, whole run: the longest time between two accepted heartbeats of one account since the start, cold start included, the largest over the accounts and the median account's; steady: the largest within the steady phase (the venue's figures every 2 s). The timeout is 10,000 ms. Steady phase: from one period after all were beating, for the seconds stated: accepted and refused (stale id) heartbeats, the CLOB requests per second against the limit (and the most in one of the simulator's 1 s samples), the keeper's CPU (user + system, every thread) over it per accepted heartbeat (in brackets the kernel's share) and in % of a core, the simulator's CPU, the machine's busy share of its cores. Peak RSS: the keeper's VmHWM.",
    '',
    '| accounts | every s | steady s | all beating s | lapses | max gap ms whole run (median account) | max gap ms steady | accepted/s | refused | requests/s (peak 1 s) vs limit | 429s | keeper CPU ms/heartbeat (kernel share) | keeper CPU % core | simulator CPU % core | machine busy % | peak RSS MB | loop p99 ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    `| ${c.n} | ${c.heartbeatEveryS} | ${c.steadyS.toFixed(0)} | ${f(c.allBeatingS)} | ${c.lapses} | ${c.maxGapMs} (${c.medianMaxGapMs}) | ${c.steadyMaxGapMs}${c.steadySpans > 0 ? ` (${c.steadySpans} spans)` : ''} | ${c.acceptedPerSecond.toFixed(1)} | ${c.refused} | ${c.requestsPerSecond.toFixed(1)} (${c.peakRequestsPerSecond.toFixed(0)}) vs ${CLOB_LIMIT_PER_SECOND} | ${c.rateLimited} | ${f(c.keeperCpuMsPerBeat, 3)}${c.keeperSystemShare === null ? '' : ` (${(c.keeperSystemShare * 100).toFixed(0)}%)`} | ${f(c.keeperCpuPercent)} | ${f(c.simCpuPercent)} | ${f(c.machineBusyPercent, 0)} of ${cpus().length} cores | ${f(c.peakRssMb)} | ${f(c.eventLoopP99Ms)} |`,
    '',
    `The keeper's heartbeat answers (its metrics; error: no answer within the request timeout): whole run ${counts(c.keeperHeartbeatCodes)}; steady ${counts(c.keeperHeartbeatCodesSteady)}. Its requests over the steady phase by endpoint: ${counts(c.keeperRequestsSteady)}. What it logged at warn and above: before the steady phase ${counts(c.keeperWarnings)}; in it ${counts(c.keeperWarningsSteady)}.`,
  ];
}
