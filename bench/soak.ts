/**
 * Soak: `npm run soak -- --minutes N [--accounts 20] [--restart-every-seconds 90]`.
 *
 * Runs the built keeper (a child process, as in production) against the simulator (in this
 * process, loopback only) for N minutes, injects random faults that stay within the switch's
 * margin, restarts the keeper now and then, and samples every second:
 *   - every account's venue-side horizon (the simulator's schedule minus venue now);
 *   - the keeper's RSS (/proc/PID/status VmRSS) and open file handles (/proc/PID/fd).
 *
 * A lapse is a sample where an account's venue-side horizon is below min_horizon_seconds. The
 * faults are chosen so that the keeper can always hold the horizon (each fault plus any
 * retry_after fits in deadline - rearm_every - min_horizon), restarts included, so the expected
 * number of lapses is zero. Exits 1 on any lapse or on memory growth beyond the threshold.
 * Writes artifacts/soak.json.
 *
 * `--scenario routes` (issue 19; not run in CI): 40 `rest_then_exchange` accounts (deadline 20 s,
 * min horizon 8 s, re-arm every 3 s), no restarts, and the fault cycle of src/sim/fault-cycle.ts
 * (ROUTES_CYCLE) every minute: a WebSocket drop and 10 s of REST 503, 5 s of a proxy's HTML at +20 s,
 * a 3 s storm of 429s on the REST schedule-cancel endpoint announcing 10 per 10 s at +35 s. Fails
 * on any fired cancel, any horizon below 8 s after the warm-up, or a recovery of REST after which
 * REST does not carry its share again within a minute (test/soak-routes.test.ts is the same in
 * virtual time). Writes artifacts/soak-routes.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { startSimulator, type Simulator } from '../src/sim/simulator.js';
import type { RequestFaultSpec } from '../src/sim/faults.js';
import { ROUTES_CYCLE, routeRecoveryLags, startFaultCycle, type RouteSecond } from '../src/sim/fault-cycle.js';
import { systemClock } from '../src/time/clock.js';
import { runMain } from './results.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DEADLINE_S = 30;
const REARM_S = 5;
const MIN_HORIZON_S = 10;
/** Memory growth (MB per 10 minutes, least-squares slope after warm-up) that fails the soak. */
const MAX_SLOPE_MB_PER_10MIN = 20;
/** Samples (seconds) a process segment needs before its memory slope is judged. */
const MIN_JUDGED_SAMPLES = 600;

interface Sample {
  tS: number;
  minHorizonS: number | null;
  rssMb: number | null;
  fds: number | null;
}

function keyOf(i: number): `0x${string}` {
  return keccak256(stringToBytes(`dms-keeper soak account ${i}`));
}

async function procStat(pid: number): Promise<{ rssMb: number | null; fds: number | null }> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
    const fds = (await readdir(`/proc/${pid}/fd`)).length;
    return { rssMb: Number.isFinite(kb) ? kb / 1024 : null, fds };
  } catch {
    return { rssMb: null, fds: null };
  }
}

function slopeMbPer10Min(points: Array<{ tS: number; rssMb: number }>): number {
  if (points.length < 10) return 0;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.tS, 0) / n;
  const my = points.reduce((s, p) => s + p.rssMb, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.tS - mx) * (p.rssMb - my);
    den += (p.tS - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 600;
}

/** Faults that the keeper can ride out within the margin (deadline - rearm - min_horizon = 15 s). */
function randomFault(rand: () => number): RequestFaultSpec | { kind: 'wsSilent'; on: boolean } | { kind: 'wsDrop'; everyMs: number | null } {
  const sc = 'POST /v1/trading/orders/schedule-cancel';
  const pick = Math.floor(rand() * 7);
  switch (pick) {
    case 0:
      return { kind: 'status', status: 503, endpoint: sc, reason: 'upstream_unavailable', forMs: 3_000 + rand() * 5_000 };
    case 1:
      return { kind: 'status', status: 429, endpoint: sc, scope: 'endpoint', retryAfterSeconds: 1 + Math.floor(rand() * 3), limit: 600, windowSeconds: 60, forMs: 2_000 + rand() * 4_000 };
    case 2:
      return { kind: 'status', status: 429, scope: 'global', retryAfterSeconds: 1 + Math.floor(rand() * 2), limit: 1200, windowSeconds: 60, forMs: 2_000 + rand() * 3_000 };
    case 3:
      return { kind: 'latency', ms: 200 + rand() * 600, forMs: 10_000 };
    case 4:
      return { kind: 'reset', endpoint: sc, count: 1 + Math.floor(rand() * 3) };
    case 5:
      return { kind: 'status', status: 500, endpoint: 'GET /v1/accounts/{address}/orders', forMs: 10_000 };
    default:
      return { kind: 'wsDrop', everyMs: 3_000 };
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '3' },
      accounts: { type: 'string', default: '20' },
      'restart-every-seconds': { type: 'string', default: '90' },
      seed: { type: 'string', default: '1' },
      scenario: { type: 'string', default: 'random' },
    },
  });
  if (values.scenario === 'routes') return routes(Number(values.minutes));
  if (values.scenario !== 'random') throw new Error('--scenario must be random (default) or routes');
  const minutes = Number(values.minutes);
  const n = Number(values.accounts);
  const restartEveryS = Number(values['restart-every-seconds']);
  if (!(minutes > 0 && minutes <= 24 * 60) || !(n > 0 && n <= 1000)) throw new Error('--minutes must be in (0, 1440] and --accounts in 1..1000');
  let seed = Number(values.seed) || 1;
  const rand = (): number => {
    // xorshift32: a reproducible fault schedule for a given --seed
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return ((seed >>> 0) % 1_000_000) / 1_000_000;
  };

  const keys = Array.from({ length: n }, (_, i) => keyOf(i));
  const addresses = keys.map((k) => privateKeyToAddress(k).toLowerCase());
  const sim: Simulator = await startSimulator({
    port: 0,
    accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 5_000_000 })),
    rateLimits: { global: { limit: 4_000, windowSeconds: 60 }, scheduleCancel: { limit: 2_000, windowSeconds: 60 } },
  });
  const { config, creds } = await writeConfig(sim, keys, addresses, [
    'switch:',
    `  deadline_seconds: ${DEADLINE_S}`,
    `  rearm_every_seconds: ${REARM_S}`,
    `  min_horizon_seconds: ${MIN_HORIZON_S}`,
    'watch:',
    '  orders_every_seconds: 10',
    '  positions_every_seconds: 30',
    'rate_limits:',
    '  global: { requests: 3000, per_seconds: 60 }',
    '  schedule_cancel: { requests: 1500, per_seconds: 60 }',
  ]);

  let keeper: ChildProcess | undefined;
  let keeperLog = '';
  const startKeeper = (): ChildProcess => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/src/main.js'), 'run', '--config', config], {
      env: { ...process.env, CREDENTIALS_DIRECTORY: creds, NOTIFY_SOCKET: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (keeperLog = (keeperLog + d.toString()).slice(-20_000)));
    child.stderr!.on('data', (d: Buffer) => (keeperLog = (keeperLog + d.toString()).slice(-20_000)));
    return child;
  };
  const stopKeeper = async (child: ChildProcess): Promise<number | null> =>
    new Promise((r) => {
      if (child.exitCode !== null) return r(child.exitCode);
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', (code) => {
        clearTimeout(t);
        r(code);
      });
      child.kill('SIGTERM');
    });

  keeper = startKeeper();
  const t0 = Date.now();
  const samples: Sample[] = [];
  const segments: Array<Array<{ tS: number; rssMb: number }>> = [[]];
  const lapses: Array<{ tS: number; account: string; horizonS: number | null }> = [];
  let restarts = 0;
  let faults = 0;
  let lastRestartS = 0;
  let nextFaultS = 20;
  const warmupS = 20;
  const endS = minutes * 60;

  try {
    for (;;) {
      await new Promise((r) => setTimeout(r, 1_000));
      const tS = (Date.now() - t0) / 1000;
      if (tS >= endS) break;
      const now = sim.clock.nowMs();
      let min: number | null = null;
      for (const a of addresses) {
        const t = sim.state.schedule(a).timeMs;
        const h = t === undefined ? null : (t - now) / 1000;
        if (tS > warmupS && (h === null || h < MIN_HORIZON_S)) lapses.push({ tS, account: a, horizonS: h });
        if (h !== null) min = min === null ? h : Math.min(min, h);
      }
      const st = keeper.pid ? await procStat(keeper.pid) : { rssMb: null, fds: null };
      samples.push({ tS, minHorizonS: min, rssMb: st.rssMb, fds: st.fds });
      if (tS > lastRestartS + warmupS && st.rssMb !== null) segments[segments.length - 1]!.push({ tS, rssMb: st.rssMb });

      if (tS >= nextFaultS) {
        sim.faults.reset();
        const f = randomFault(rand);
        sim.faults.add(f as never);
        if (f.kind === 'wsDrop') setTimeout(() => sim.faults.add({ kind: 'wsDrop', everyMs: null }), 10_000).unref();
        faults++;
        nextFaultS = tS + 15 + rand() * 15;
      }
      if (restartEveryS > 0 && tS - lastRestartS >= restartEveryS && endS - tS > 30) {
        const code = await stopKeeper(keeper);
        if (code !== 0) throw new Error(`keeper exited ${code} on SIGTERM during a restart\n${keeperLog.slice(-3000)}`);
        keeper = startKeeper();
        restarts++;
        lastRestartS = (Date.now() - t0) / 1000;
        segments.push([]);
      }
    }
  } finally {
    sim.faults.reset();
    const code = keeper ? await stopKeeper(keeper) : 0;
    if (code !== 0) console.error(`keeper exited ${code} at the end\n${keeperLog.slice(-3000)}`);
    await sim.stop();
  }

  const slopes = segments.filter((s) => s.length >= 60).map(slopeMbPer10Min);
  // A slope over a minute or two is the heap warming up, not a leak: only segments of at least
  // 10 minutes are judged (the others are reported).
  const judged = segments.filter((s) => s.length >= MIN_JUDGED_SAMPLES).map(slopeMbPer10Min);
  const maxSlope = judged.length ? Math.max(...judged) : 0;
  const rss = samples.map((s) => s.rssMb).filter((x): x is number => x !== null);
  const fds = samples.map((s) => s.fds).filter((x): x is number => x !== null);
  const minHorizon = samples.filter((s) => s.tS > warmupS).reduce((m, s) => (s.minHorizonS === null ? m : Math.min(m, s.minHorizonS)), Number.POSITIVE_INFINITY);
  const summary = {
    minutes,
    accounts: n,
    switch: { deadline_seconds: DEADLINE_S, rearm_every_seconds: REARM_S, min_horizon_seconds: MIN_HORIZON_S },
    lapse_definition: `a 1 s sample (after ${warmupS} s of warm-up) where an account's venue-side horizon is below min_horizon_seconds`,
    min_horizon_seconds: Number(minHorizon.toFixed(3)),
    lapses: lapses.length,
    lapse_samples: lapses.slice(0, 20),
    faults_injected: faults,
    restarts,
    rss_mb: { first: rss[0] ?? null, last: rss.at(-1) ?? null, max: rss.length ? Math.max(...rss) : null },
    rss_slope_mb_per_10min: slopes.map((s) => Number(s.toFixed(2))),
    rss_slope_judged_mb_per_10min: judged.map((s) => Number(s.toFixed(2))),
    open_fds: { min: fds.length ? Math.min(...fds) : null, max: fds.length ? Math.max(...fds) : null, last: fds.at(-1) ?? null },
    timeline: samples.filter((_, i) => i % 10 === 0),
  };
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  await writeFile(join(ROOT, 'artifacts/soak.json'), JSON.stringify(summary, null, 2));
  console.log(`soak: ${minutes} min, ${n} accounts, ${faults} faults, ${restarts} restarts`);
  console.log(`  minimum horizon      ${summary.min_horizon_seconds} s (min_horizon ${MIN_HORIZON_S} s)`);
  console.log(`  lapses               ${lapses.length} (${summary.lapse_definition})`);
  console.log(`  RSS                  first ${summary.rss_mb.first?.toFixed(1)} MB, last ${summary.rss_mb.last?.toFixed(1)} MB, max ${summary.rss_mb.max?.toFixed(1)} MB`);
  console.log(`  RSS slope            ${summary.rss_slope_mb_per_10min.join(', ') || 'n/a (segments too short)'} MB per 10 min (limit ${MAX_SLOPE_MB_PER_10MIN}, judged on segments of >= 10 min: ${judged.length ? judged.map((x) => x.toFixed(2)).join(', ') : 'none in this run'})`);
  console.log(`  open file handles    min ${summary.open_fds.min}, max ${summary.open_fds.max}, last ${summary.open_fds.last}`);
  console.log(`  artifacts/soak.json`);
  if (lapses.length > 0) {
    console.error(`FAIL: ${lapses.length} lapse samples, first: ${JSON.stringify(lapses[0])}`);
    return 1;
  }
  if (maxSlope > MAX_SLOPE_MB_PER_10MIN) {
    console.error(`FAIL: memory grows ${maxSlope.toFixed(1)} MB per 10 min`);
    return 1;
  }
  return 0;
}

runMain('soak', main);

/** Writes the accounts' keys and a config; returns the config path and the credentials directory. */
async function writeConfig(sim: Simulator, keys: readonly string[], addresses: readonly string[], lines: string[], logLevel = 'warn'): Promise<{ config: string; creds: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'dmsk-soak-'));
  const creds = join(dir, 'creds');
  await mkdir(creds, { recursive: true });
  for (let i = 0; i < keys.length; i++) {
    const f = join(creds, `a${i}.master`);
    await writeFile(f, `${keys[i]}\n`, { mode: 0o600 });
    await chmod(f, 0o600);
  }
  const config = join(dir, 'soak.yaml');
  await writeFile(
    config,
    [
      'venue:',
      `  base_url: ${sim.baseUrl}`,
      `  exchange_url: ${sim.exchangeUrl}`,
      `  ws_url: ${sim.wsUrl.replace('http', 'ws')}`,
      '  request_timeout_ms: 1000',
      ...lines,
      'accounts:',
      ...addresses.flatMap((a, i) => [`  - name: a${i}`, `    address: "${a}"`, `    master_key: { file: a${i}.master }`]),
      `state_dir: ${join(dir, 'state')}`,
      'server:',
      '  listen: 127.0.0.1:0',
      'log:',
      `  level: ${logLevel}`,
    ].join('\n'),
  );
  return { config, creds, dir };
}

/** `--scenario routes`: the route soak of issue 19 against the built keeper, in real time. */
async function routes(minutes: number): Promise<number> {
  if (!(minutes > 0 && minutes <= 24 * 60)) throw new Error('--minutes must be in (0, 1440]');
  const n = 40;
  const sw = { deadlineS: 20, rearmS: 3, minHorizonS: 8 };
  const warmupS = 20;
  const keys = Array.from({ length: n }, (_, i) => keyOf(i));
  const addresses = keys.map((k) => privateKeyToAddress(k).toLowerCase());
  const clock = systemClock();
  const sim: Simulator = await startSimulator({
    port: 0,
    clock,
    accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
    rateLimits: { global: { limit: 6_000, windowSeconds: 60 }, scheduleCancel: { limit: 1_200, windowSeconds: 60 }, endpoints: { 'POST /exchange': { limit: 1_200, windowSeconds: 60 } } },
  });
  const { config, creds } = await writeConfig(sim, keys, addresses, [
    'switch:',
    `  deadline_seconds: ${sw.deadlineS}`,
    `  rearm_every_seconds: ${sw.rearmS}`,
    `  min_horizon_seconds: ${sw.minHorizonS}`,
    '  path: rest_then_exchange',
    'watch:',
    '  orders_every_seconds: 30',
    '  positions_every_seconds: 60',
    'rate_limits:',
    '  global: { requests: 2400, per_seconds: 60 }',
    '  schedule_cancel: { requests: 1200, per_seconds: 60 }',
    '  exchange: { requests: 1200, per_seconds: 60 }',
  ], 'info');
  let keeperLog = '';
  const keeper = spawn(process.execPath, [join(ROOT, 'dist/src/main.js'), 'run', '--config', config], {
    env: { ...process.env, CREDENTIALS_DIRECTORY: creds, NOTIFY_SOCKET: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  keeper.stdout!.on('data', (d: Buffer) => (keeperLog = (keeperLog + d.toString()).slice(-200_000)));
  keeper.stderr!.on('data', (d: Buffer) => (keeperLog = (keeperLog + d.toString()).slice(-200_000)));

  await new Promise((r) => setTimeout(r, warmupS * 1000));
  const cycle = startFaultCycle(sim.faults, clock, ROUTES_CYCLE);
  const startVenue = sim.clock.nowMs();
  const seconds: RouteSecond[] = [];
  let worst = { horizonS: Number.POSITIVE_INFINITY, account: '', tS: 0 };
  let cut = startVenue;
  // The keeper's REST limit in force, as its log says (budget_limit_* lines), per second.
  let restLimit = 20;
  let logSeen = 0;
  try {
    for (let t = 1; t <= minutes * 60; t++) {
      await new Promise((r) => setTimeout(r, startVenue + t * 1000 - sim.clock.nowMs()));
      const now = sim.clock.nowMs();
      for (const [i, a] of addresses.entries()) {
        const at = sim.state.schedule(a).timeMs;
        const h = at === undefined ? Number.NEGATIVE_INFINITY : (at - now) / 1000;
        if (h < worst.horizonS) worst = { horizonS: h, account: `a${i}`, tS: (now - startVenue) / 1000 };
      }
      for (const line of keeperLog.slice(logSeen).split('\n')) {
        if (!line.includes('"budget_limit_') || !line.includes('"schedule_cancel"')) continue;
        try {
          restLimit = (JSON.parse(line) as { per_second: number }).per_second;
        } catch {
          // a line cut at the buffer's start
        }
      }
      logSeen = keeperLog.length;
      const arms = sim.state.actionLog().filter((x) => x.type === 'scheduleCancel' && x.result === 'ok' && x.atMs > cut && x.atMs <= now);
      seconds.push({ tMs: now - startVenue, rest: arms.filter((x) => x.via === 'rest').length, exchange: arms.filter((x) => x.via === 'exchange').length, restLimitPerSecond: restLimit });
      cut = now;
    }
  } finally {
    cycle.stop();
    sim.faults.reset();
    await new Promise<void>((r) => {
      const k = setTimeout(() => keeper.kill('SIGKILL'), 20_000);
      keeper.once('exit', () => {
        clearTimeout(k);
        r();
      });
      keeper.kill('SIGTERM');
    });
    await sim.stop();
  }
  const fired = addresses.reduce((sum, a) => sum + sim.state.schedule(a).triggersToday, 0);
  const lags = routeRecoveryLags(seconds, ROUTES_CYCLE, minutes * 60_000);
  const known = lags.flatMap((l) => (l.lagS === null ? [] : [l.lagS]));
  const total = seconds.reduce((a, x) => ({ rest: a.rest + x.rest, exchange: a.exchange + x.exchange }), { rest: 0, exchange: 0 });
  const summary = {
    scenario: 'routes',
    minutes,
    accounts: n,
    switch: { deadline_seconds: sw.deadlineS, rearm_every_seconds: sw.rearmS, min_horizon_seconds: sw.minHorizonS, path: 'rest_then_exchange' },
    fired,
    worst_horizon: worst,
    arms: { ...total, per_second: Number(((total.rest + total.exchange) / seconds.length).toFixed(2)) },
    recoveries: lags.length,
    not_back_within_a_minute: lags.filter((l) => l.lagS === null),
    back_on_rest_lag_seconds: { max: known.length ? Math.max(...known) : null, mean: known.length ? Number((known.reduce((a, b) => a + b, 0) / known.length).toFixed(2)) : null },
    per_minute: Array.from({ length: minutes }, (_, m) => {
      const w = seconds.slice(m * 60, m * 60 + 60);
      return { minute: m + 1, rest: w.reduce((a, x) => a + x.rest, 0), exchange: w.reduce((a, x) => a + x.exchange, 0), rest_limit_per_second_at_end: w.at(-1)?.restLimitPerSecond ?? null };
    }),
  };
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  await writeFile(join(ROOT, 'artifacts/soak-routes.json'), JSON.stringify(summary, null, 2));
  console.log(`soak (routes): ${minutes} min, ${n} accounts, ${ROUTES_CYCLE.steps.length} faults a minute`);
  console.log(`  fired cancels        ${fired}`);
  console.log(`  worst horizon        ${worst.horizonS.toFixed(3)} s (${worst.account} at +${worst.tS} s; min_horizon ${sw.minHorizonS} s)`);
  console.log(`  arms                 ${total.rest} by REST, ${total.exchange} by exchange (${summary.arms.per_second}/s)`);
  console.log(`  back on REST         ${lags.length - summary.not_back_within_a_minute.length} of ${lags.length} recoveries within a minute (lag max ${summary.back_on_rest_lag_seconds.max} s, mean ${summary.back_on_rest_lag_seconds.mean} s)`);
  console.log('  artifacts/soak-routes.json');
  if (fired > 0 || worst.horizonS < sw.minHorizonS || summary.not_back_within_a_minute.length > 0) {
    console.error(`FAIL: ${fired} fired, worst horizon ${worst.horizonS.toFixed(3)} s, ${summary.not_back_within_a_minute.length} recoveries not back on REST\n${keeperLog.slice(-3000)}`);
    return 1;
  }
  return 0;
}
