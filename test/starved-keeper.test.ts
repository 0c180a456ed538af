/**
 * A starved keeper (issue 36 item 4): the built keeper at 1,000 accounts with its CPU taken by two
 * busy loops beside it, judged from the venue's side. It must keep every account's horizon at or
 * above its minimum, or report the degrade of issue 36 item 1 (the pace it achieved in force as a
 * limit, `budget_limit_learned` with `source: achieved`, and a plan that says which accounts it can
 * no longer keep: `short_horizon` or `over_budget`) with every other account at or above it.
 *
 * How the CPU is taken: the keeper and two `node -e 'for(;;){}'` loops pinned to the last core
 * (taskset), the simulator on the others, so the keeper gets a third of one core and the venue is
 * not starved with it. Busy loops, not a cgroup CPU quota: they need no privileges (cgroup v1's cpu
 * hierarchy, or a v2 subtree, is root's unless delegated), and they are the cause issue 36 names, a
 * neighbour on the keeper's cores. Without taskset the loops and the keeper share every core.
 *
 * The simulator is the benchmark's (dist/bench/sim-process.js): it checks signatures with
 * libsecp256k1. `dms-keeper simulate` recovers them in JS (3 ms each): at these rates that was the
 * venue, not the keeper, that ran short (23 sweeps of the accounts in 183 s, cancels fired for want
 * of the venue's answers). Horizons are read from its admin API, `/_sim/state?account=`, every
 * account in each sweep (one every 1 to 2 s), and by the simulator's own sampler, every account
 * each second in its process (bench/sim-process.ts), which names no account. (A horizon inferred
 * from the deadlines, old deadline minus new deadline plus deadline_seconds, is not one: the keeper
 * does not always arm at its send time plus deadline_seconds, and under starvation that inference
 * read 1.2 s where both samplers read 6 s.)
 *
 * The figures. 1,000 accounts, deadline 20 s, re-armed every 2 s, min horizon 10 s, requests timed
 * out after 2 s (the config rule: 20 - 2 = 18 >= 10 + 2 retries x 3 s); the venue's schedule-cancel
 * window 430 per second (25,800 a minute), so the plan stretches the periods to 2.4 s (417 arms/s,
 * 0.97 of it, tier `stretched`, every verdict `keeps_min_horizon`). The keeper spends 0.9 to 1.15 ms
 * of CPU an arm at this scale (measured here with a core to itself: 37% of a core at 327 arms/s),
 * so that plan needs 40 to 48% of a core, and two busy loops leave it a third: starvation matters,
 * by a fifth or more. (At 333 arms/s, re-armed every 3 s, it was at the edge: starved, one run held,
 * 16.8 s, and two fell to 3.3 and 6.0 s; with the core free, 15.9 and 16.4 s.) What a starved keeper
 * can carry would still keep every horizon: 1,000 accounts at 250 arms/s is a re-arm every 4 s, far
 * inside the 10 s between the deadline and the minimum. What breaks the minimum is a keeper that
 * goes on planning more than its CPU carries: its timers fire ever later, its requests time out
 * and are sent again, and its re-arms come too late. The starved phase (40 s) is longer than the
 * pace's measure (30 s of arms waiting, achieved-pace.ts) and a plan's reaction.
 *
 * What it found when written (2026-11-28, a 2-core machine shared with other work, load 4 to 10):
 * the keeper does not hold. Starved at 417 arms/s planned (4 runs) it sent 21 to 308 arms/s, 1,786
 * to 4,514 arms timed out, re-arms went out up to 21 s late (nearly all of it timers firing late,
 * not the budget), 476 to 1,000 accounts fell below 10 s (lowest 0 to 6.9 s), and in three of the
 * runs 205 to 1,012 cancels fired; no achieved pace was put
 * in force and the plan stayed as it was. Why, as far as the figures show: the lag is timers firing
 * late (each late re-arm's timer_late_ms is nearly all of its lag_ms), and the pace meter counts
 * only while arms wait in the scheduler for their scope's window, so a keeper short of CPU may
 * never be pressed for the 30 s a measure needs. The control (STARVED_BUSY_LOOPS=0, the same
 * config with the core free) holds: 416.6 arms/s at the venue, every horizon >= 17.4 s, no timeout,
 * 41% of a core (load 4); at 333 arms/s, 15.9 and 16.4 s. Once, with the load at 9 (other work on
 * the keeper's core), it fell to 4.1 s the same way: any shortfall of CPU tips it over, not the
 * loops as such.
 *
 * The cold start runs with the whole machine (the loops start once every account is armed at the
 * venue and the plan is back from its cold-start periods), so the test measures starvation, not a
 * starved cold start, and stays near a minute and a half. Run alone (its own project in
 * vitest.config.ts, after every other file): a neighbour's CPU would starve the simulator and the
 * sampler too.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import type { SamplerReport } from '../bench/sim-process.js';
import { freePort, getJson, ROOT, tempDir, tracker, writeKey, type Proc } from './support/cli.js';
import { busyLoop, cpuPlan, cpuSeconds, pinSelf, startBenchSim, startPinnedCli, VenueHorizons } from './support/starved.js';

/** Overrides for a control run or a search of the limits (STARVED_BUSY_LOOPS=0: the keeper with its core to itself). */
const knob = (name: string, value: number): number => Number(process.env[`STARVED_${name}`] ?? value);
const N = 1000;
const DEADLINE_S = knob('DEADLINE_SECONDS', 20);
const REARM_S = knob('REARM_SECONDS', 2);
const MIN_HORIZON_S = knob('MIN_HORIZON_SECONDS', 10);
const MIN_HORIZON_MS = MIN_HORIZON_S * 1000;
/** The venue's schedule-cancel window (and the keeper's configured one), per second. */
const ARMS_PER_S = knob('ARMS_PER_SECOND', 430);
const REQUEST_TIMEOUT_MS = knob('REQUEST_TIMEOUT_MS', 2000);
const BUSY_LOOPS = knob('BUSY_LOOPS', 2);
const STARVED_S = 40;
/** The cold start's bound: with the machine to itself the keeper arms 1,000 accounts in 10 to 45 s. */
const COLD_START_LIMIT_MS = 90_000;

interface Status {
  cadence: { tier: string; stretch: number; arms_per_second: number; over_budget: number; short_horizon: number } | null;
  budget_limits: Array<{ scope: string; source: string; per_second: number }>;
  accounts: Array<{ name: string; plan: { verdict: string } | null }>;
}

/** The last `cadence` line says the cold start's plan is over. */
function coldStartOver(logs: ReadonlyArray<Record<string, unknown>>): boolean {
  const last = logs.filter((l) => l.event === 'cadence').at(-1);
  return last !== undefined && last.cold_start === false;
}

/** One account as the venue showed it while the keeper was starved. */
interface VenueRow {
  name: string;
  /** Lowest horizon the admin API answered (ms; 0 or less: the cancel fired). */
  lowestMs: number;
  /** Scheduled cancels the venue fired for it. */
  fired: number;
}

/**
 * The property, pure: every horizon >= min_horizon; or the degrade of issue 36 item 1 reported (the
 * pace achieved in force, `budget_limit_learned` with `source: achieved`, and a `cadence` plan with
 * accounts `short_horizon` or `over_budget`) with each account below the minimum among those the plan
 * named, and every other one at or above it. A cancel fires only for an account left over_budget.
 * `rows` in config order; `simLowestMs`: the simulator's own sampler (names no account).
 */
function judge(input: { rows: readonly VenueRow[]; simLowestMs: number; logs: ReadonlyArray<Record<string, unknown>>; status: Pick<Status, 'cadence' | 'accounts'>; minHorizonMs?: number }) {
  const minMs = input.minHorizonMs ?? MIN_HORIZON_MS;
  const { rows, logs, status } = input;
  const achieved = logs.filter((l) => l.event === 'budget_limit_learned' && l.source === 'achieved');
  const plans = logs.filter((l) => l.event === 'cadence');
  const degradedPlans = plans.filter((l) => Number(l.over_budget) > 0 || Number(l.short_horizon) > 0);
  // Equal priorities: the plan protects in config order, so k accounts over_budget are the last k
  // (plan/cadence.ts planProtection); every account it still arms gets the same verdict.
  const overBudget = Math.max(0, status.cadence?.over_budget ?? 0, ...plans.map((l) => Number(l.over_budget)));
  const shortHorizon = (status.cadence?.short_horizon ?? 0) > 0 || plans.some((l) => Number(l.short_horizon) > 0);
  const overBudgetNames = new Set(rows.slice(rows.length - overBudget).map((r) => r.name));
  const reported = new Set([...overBudgetNames, ...(shortHorizon ? rows.map((r) => r.name) : []), ...status.accounts.filter((a) => a.plan && a.plan.verdict !== 'keeps_min_horizon').map((a) => a.name)]);
  const below = rows.filter((r) => r.lowestMs < minMs);
  const failures: string[] = [];
  if (below.length > 0 || input.simLowestMs < minMs) {
    const what = `${below.length} accounts below ${minMs / 1000} s (lowest ${Math.min(input.simLowestMs, ...rows.map((r) => r.lowestMs)) / 1000} s)`;
    if (achieved.length === 0) failures.push(`${what} with no achieved pace in force`);
    if (degradedPlans.length === 0) failures.push(`${what} with no degraded plan reported`);
    const unreported = below.filter((r) => !reported.has(r.name));
    if (unreported.length > 0) failures.push(`${unreported.length} of them not among the accounts the plan named: ${unreported.slice(0, 5).map((r) => `${r.name} ${r.lowestMs / 1000} s`).join(', ')}`);
  }
  const firedArmed = rows.filter((r) => r.fired > 0 && !overBudgetNames.has(r.name));
  if (firedArmed.length > 0) failures.push(`a cancel fired for ${firedArmed.length} accounts the plan still armed: ${firedArmed.slice(0, 5).map((r) => r.name).join(', ')}`);
  return { failures, achieved, plans, overBudget, shortHorizon };
}

describe('what the starved keeper is judged by (judge, on made-up records)', () => {
  const rows = (lowestS: (i: number) => number, fired: (i: number) => number = () => 0): VenueRow[] => Array.from({ length: 10 }, (_, i) => ({ name: `a${i}`, lowestMs: lowestS(i) * 1000, fired: fired(i) }));
  const status = { cadence: null, accounts: [] };
  const achieved = { event: 'budget_limit_learned', source: 'achieved', scope: 'schedule_cancel' };
  const overBudget = (k: number) => ({ event: 'cadence', tier: 'over_budget', over_budget: k, short_horizon: 0 });
  it('every horizon >= min :: holds with nothing reported', () => {
    expect(judge({ rows: rows(() => 12), simLowestMs: 11_000, logs: [], status }).failures).toEqual([]);
  });
  it('an account below min, nothing reported :: fails (this is what the keeper did, 2026-11-28)', () => {
    expect(judge({ rows: rows((i) => (i === 3 ? 9.9 : 12)), simLowestMs: 9_900, logs: [], status }).failures).toHaveLength(3);
    // the simulator's sampler alone saw it (between the admin API's sweeps): the same
    expect(judge({ rows: rows(() => 12), simLowestMs: 9_000, logs: [], status }).failures).toHaveLength(2);
  });
  it('the achieved pace in force, the last 3 over_budget (their cancels fired), every other >= min :: holds', () => {
    const r = rows((i) => (i >= 7 ? 0 : 11), (i) => (i >= 7 ? 1 : 0));
    expect(judge({ rows: r, simLowestMs: 0, logs: [achieved, overBudget(3)], status }).failures).toEqual([]);
  });
  it('the same, but an account the plan still arms below min, or its cancel fired :: fails', () => {
    expect(judge({ rows: rows((i) => (i >= 7 || i === 2 ? 0 : 11), (i) => (i >= 7 || i === 2 ? 1 : 0)), simLowestMs: 0, logs: [achieved, overBudget(3)], status }).failures).toHaveLength(2);
    expect(judge({ rows: rows(() => 11, (i) => (i === 0 ? 1 : 0)), simLowestMs: 11_000, logs: [achieved, overBudget(3)], status }).failures).toHaveLength(1);
  });
  it('a degraded plan without the achieved pace (the budget, not the CPU) :: fails: the degrade must be the pace achieved', () => {
    expect(judge({ rows: rows((i) => (i >= 7 ? 0 : 11), (i) => (i >= 7 ? 1 : 0)), simLowestMs: 0, logs: [overBudget(3)], status }).failures).toHaveLength(1);
  });
  it('tier short_horizon (every account armed, horizons below min, reported) with the achieved pace :: holds while no cancel fires', () => {
    const logs = [achieved, { event: 'cadence', tier: 'short_horizon', over_budget: 0, short_horizon: 10 }];
    expect(judge({ rows: rows(() => 6), simLowestMs: 6_000, logs, status }).failures).toEqual([]);
    expect(judge({ rows: rows(() => 6, (i) => (i === 5 ? 1 : 0)), simLowestMs: 0, logs, status }).failures).toHaveLength(1);
  });
});

describe('a starved keeper', () => {
  it('1,000 accounts, deadline 20 s, min horizon 10 s, 417 arms/s planned; two busy loops take its core :: every horizon >= 10 s at the venue, or the achieved pace in force and the degraded accounts reported, every other one >= 10 s', async ({ onTestFinished }) => {
    const t0 = Date.now();
    const cpus = cpuPlan();
    const track = tracker(onTestFinished);
    // This process reads the venue: off the starved core too (its sweeps are the measure).
    onTestFinished(pinSelf(cpus.others));
    const loops: Array<ReturnType<typeof busyLoop>> = [];
    let venue: VenueHorizons | undefined;
    onTestFinished(async () => {
      for (const l of loops) l.kill('SIGKILL');
      await venue?.stop();
    });

    const reports: SamplerReport[] = [];
    const sim = await startBenchSim(
      ['--accounts', String(N), '--budget-per-minute', String(ARMS_PER_S * 60), '--global-per-minute', '1000000', '--deadline-seconds', String(DEADLINE_S), '--min-horizon-seconds', String(MIN_HORIZON_S)],
      cpus.others,
      (r) => reports.push(r),
    );
    onTestFinished(() => {
      sim.child.kill('SIGKILL');
    });
    const addresses = benchAddresses(N);

    const dir = await tempDir('dmsk-starved-');
    const creds = join(dir, 'creds');
    for (let i = 0; i < N; i++) await writeKey(creds, `a${i}.master`, benchKey(i));
    const listen = await freePort();
    const ops = `http://127.0.0.1:${listen}`;
    const file = join(dir, 'keeper.yaml');
    await writeFile(
      file,
      `venue:
  base_url: ${sim.baseUrl}
  exchange_url: ${sim.baseUrl}
  ws_url: ${sim.baseUrl.replace('http', 'ws')}
  request_timeout_ms: ${REQUEST_TIMEOUT_MS}
switch: { deadline_seconds: ${DEADLINE_S}, rearm_every_seconds: ${REARM_S}, min_horizon_seconds: ${MIN_HORIZON_S}, on_shutdown: keep }
watch: { orders_every_seconds: 86400, positions_every_seconds: 86400, notifications: false }
rate_limits:
  global: { requests: 1000000, per_seconds: 60 }
  schedule_cancel: { requests: ${ARMS_PER_S * 60}, per_seconds: 60 }
  exchange: { requests: ${ARMS_PER_S * 60}, per_seconds: 60 }
accounts:
${addresses.map((a, i) => `  - { name: a${i}, address: "${a}", master_key: { file: a${i}.master } }`).join('\n')}
state_dir: ${join(dir, 'state')}
server: { listen: "127.0.0.1:${listen}" }
log: { level: info }
`,
    );

    venue = new VenueHorizons(sim.baseUrl, addresses);
    const keeper: Proc = track(startPinnedCli(['run', '--config', file], cpus.starved, { CREDENTIALS_DIRECTORY: creds }));
    const tKeeper = Date.now();
    venue.start(1000);
    while (venue.armed() < N && Date.now() - tKeeper < COLD_START_LIMIT_MS) {
      await new Promise((r) => setTimeout(r, 250));
      if (keeper.child.exitCode !== null) throw new Error(`keeper exited ${keeper.child.exitCode}: ${keeper.stderr()}`);
    }
    const coldStartS = (Date.now() - tKeeper) / 1000;
    expect(venue.armed(), `armed at the venue ${coldStartS} s after the keeper's start`).toBe(N);
    // The cold start's plan arms the first accounts at their longest safe periods (horizons down to
    // min + 1 s by design): starved from when the plan is back to the configured cadence and every
    // account has been re-armed on it, so the record is of starvation, not of the cold start's margin.
    await keeper.waitFor(() => coldStartOver(keeper.logs()), 30_000, 'the plan back to the configured cadence');
    await new Promise((r) => setTimeout(r, (DEADLINE_S - MIN_HORIZON_S) * 1000));

    // Starved from here on: the two loops beside the keeper, the record of horizons anew.
    for (let i = 0; i < BUSY_LOOPS; i++) loops.push(busyLoop(cpus.starved));
    venue.resetLowest();
    const logsFrom = keeper.logs().length;
    const reportsFrom = reports.length;
    const keeperCpu0 = cpuSeconds(keeper.child.pid!);
    const simCpu0 = cpuSeconds(sim.child.pid!);
    const tStarved = Date.now();
    await new Promise((r) => setTimeout(r, STARVED_S * 1000));
    const starvedS = (Date.now() - tStarved) / 1000;
    const keeperCpuPct = (((cpuSeconds(keeper.child.pid!) ?? NaN) - (keeperCpu0 ?? NaN)) / starvedS) * 100;
    const simCpuPct = (((cpuSeconds(sim.child.pid!) ?? NaN) - (simCpu0 ?? NaN)) / starvedS) * 100;
    await venue.stop();
    expect(venue.error).toBeNull();
    const sweeps = venue.sweeps;
    const records = venue.records;
    venue = undefined;
    // The plan as the starved phase left it (the loops gone first: a starved keeper answers a
    // 1,000-account /status slowly, and the plan does not move for it).
    for (const l of loops.splice(0)) l.kill('SIGKILL');
    const status = (await getJson(`${ops}/status`)).body as Status;

    // ---- what the venue saw, each account ----
    const rows = addresses.map((a, i) => {
      const r = records.get(a)!;
      return { name: `a${i}`, lowestMs: r.lowestSampledMs, fired: r.fired - r.firedAtReset };
    });
    const below = rows.filter((r) => r.lowestMs < MIN_HORIZON_MS);
    const samples = reports.slice(reportsFrom);
    const simLowestMs = Math.min(...samples.map((r) => (r.minHorizonS ?? Infinity) * 1000));

    // ---- what the keeper reported while starved ----
    const logs = keeper.logs().slice(logsFrom);
    const verdict = judge({ rows, simLowestMs, logs, status });
    const late = logs.filter((l) => l.event === 'arm_late');
    const warnings: Record<string, number> = {};
    for (const l of logs) {
      if (Number(l.level) < 40 || l.event === 'arm_late') continue;
      const k = [l.event ?? l.msg, l.result, l.reason].filter((x) => x !== undefined).join('/');
      warnings[k] = (warnings[k] ?? 0) + 1;
    }

    const lowest = rows.reduce((m, r) => (r.lowestMs < m.lowestMs ? r : m));
    const figures = {
      cpu: `${cpus.mode} (${cpus.cores} cores; keeper and loops on ${cpus.starved ?? 'any'}, simulator on ${cpus.others ?? 'any'})`,
      wallS: (Date.now() - t0) / 1000,
      coldStartS,
      starvedS,
      keeperCpuPct: Math.round(keeperCpuPct),
      simCpuPct: Math.round(simCpuPct),
      sweeps,
      lowest: { name: lowest.name, s: lowest.lowestMs / 1000 },
      belowMin: below.length,
      fired: rows.reduce((t, r) => t + r.fired, 0),
      sampler: { lowestS: simLowestMs / 1000, lapses: samples.reduce((t, r) => t + r.lapses, 0), armsPerS: samples.length > 1 ? (samples.at(-1)!.scheduleCancelRequests - samples[0]!.scheduleCancelRequests) / ((samples.at(-1)!.tMs - samples[0]!.tMs) / 1000) : null },
      achieved: verdict.achieved.map((l) => ({ time: l.time, to: l.to })),
      plans: verdict.plans.map((l) => ({ time: l.time, tier: l.tier, stretch: l.stretch, arms_per_second: l.arms_per_second, short_horizon: l.short_horizon, over_budget: l.over_budget })),
      overBudget: verdict.overBudget,
      shortHorizon: verdict.shortHorizon,
      cadence: status.cadence,
      limits: status.budget_limits.map((l) => `${l.scope}: ${l.per_second}/s (${l.source})`),
      warnings,
      late: { count: late.length, maxLagMs: Math.max(0, ...late.map((l) => Number(l.lag_ms))), maxTimerLateMs: Math.max(0, ...late.map((l) => Number(l.timer_late_ms))) },
    };
    const text = JSON.stringify(figures);
    console.log(`starved keeper: ${JSON.stringify(figures, null, 1)}`);
    // Kept for a look after the run (artifacts/ is not committed).
    await mkdir(join(ROOT, 'artifacts'), { recursive: true });
    await writeFile(join(ROOT, 'artifacts/starved-keeper.json'), `${JSON.stringify(figures, null, 1)}\n`);

    expect(verdict.failures, text).toEqual([]);
    expect(keeper.child.exitCode, text).toBeNull();
  }, 240_000);
});
