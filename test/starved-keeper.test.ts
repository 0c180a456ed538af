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
 * The figures. 1,000 accounts, deadline 20 s, re-armed every 3 s, min horizon 10 s, requests timed
 * out after 2 s (the config rule: 20 - 3 = 17 >= 10 + 2 retries x 3 s); the venue's schedule-cancel
 * window 350 per second (21,000 a minute), so the plan (333 arms/s, 0.95 of it) keeps the
 * configured cadence. The keeper spends about 1.15 ms of CPU an arm at this scale (measured here
 * with the core to itself: 37% of a core at 320 arms/s), so the plan is a third of a core: what two
 * busy loops leave it. Starvation matters, and with the core to itself it does not (that control,
 * STARVED_BUSY_LOOPS=0: 325 arms/s at the venue, every horizon >= 15.9 s). What a starved keeper can carry would still keep
 * every horizon: 1,000 accounts at 250 arms/s is a re-arm every 4 s, far inside the 10 s between
 * the deadline and the minimum (a plan at that pace is tier `stretched`, every verdict
 * `keeps_min_horizon`). What breaks the minimum is a keeper that goes on planning more than its
 * CPU carries: its timers fire ever later and its re-arms come too late. The starved phase (40 s)
 * is longer than the pace's measure (30 s of arms waiting, achieved-pace.ts) and a plan's reaction.
 *
 * What it found when written (2026-11-28, a 2-core machine shared with other work, load 5 to 6):
 * the keeper does not hold. Starved, it sent 229 to 247 arms/s, 2,578 to 3,216 of its arms timed
 * out, re-arms went out up to 13 s late (nearly all of it timers firing late, not the budget), and
 * 677 to 693 accounts fell below 10 s (lowest 3.3 s); no achieved pace was put in force and the
 * plan stayed `configured`, every verdict `keeps_min_horizon`. The pace meter counts admissions
 * while arms wait for their scope's window; a keeper short of CPU holds its re-arms in late timers
 * and slow answers instead, so its scheduler is never pressed for the 30 s a measure needs.
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
const REARM_S = knob('REARM_SECONDS', 3);
const MIN_HORIZON_S = knob('MIN_HORIZON_SECONDS', 10);
const MIN_HORIZON_MS = MIN_HORIZON_S * 1000;
/** The venue's schedule-cancel window (and the keeper's configured one), per second. */
const ARMS_PER_S = knob('ARMS_PER_SECOND', 350);
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

describe('a starved keeper', () => {
  it('1,000 accounts, deadline 20 s, min horizon 10 s, 333 arms/s planned; two busy loops take its core :: every horizon >= 10 s at the venue, or the achieved pace in force and the degraded accounts reported, every other one >= 10 s', async ({ onTestFinished }) => {
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
    const achieved = logs.filter((l) => l.event === 'budget_limit_learned' && l.source === 'achieved');
    const plans = logs.filter((l) => l.event === 'cadence');
    const degradedPlans = plans.filter((l) => Number(l.over_budget) > 0 || Number(l.short_horizon) > 0);
    // Equal priorities: the plan protects in config order, so k accounts over_budget are the last k
    // (plan/cadence.ts planProtection); every account it still arms gets the same verdict.
    const overBudget = Math.max(0, status.cadence?.over_budget ?? 0, ...plans.map((l) => Number(l.over_budget)));
    const shortHorizon = (status.cadence?.short_horizon ?? 0) > 0 || plans.some((l) => Number(l.short_horizon) > 0);
    const overBudgetNames = new Set(rows.slice(N - overBudget).map((r) => r.name));
    const reported = new Set([...overBudgetNames, ...(shortHorizon ? rows.map((r) => r.name) : []), ...status.accounts.filter((a) => a.plan && a.plan.verdict !== 'keeps_min_horizon').map((a) => a.name)]);
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
      achieved: achieved.map((l) => ({ time: l.time, to: l.to })),
      plans: plans.map((l) => ({ time: l.time, tier: l.tier, stretch: l.stretch, arms_per_second: l.arms_per_second, short_horizon: l.short_horizon, over_budget: l.over_budget })),
      overBudget,
      shortHorizon,
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

    if (below.length > 0 || simLowestMs < MIN_HORIZON_MS) {
      // Below the minimum only with the degrade reported: the pace achieved in force, a plan that
      // says so, and each account below it among those the plan named.
      expect(achieved.length, `${below.length} accounts below ${MIN_HORIZON_S} s with no achieved pace in force: ${text}`).toBeGreaterThan(0);
      expect(degradedPlans.length, `${below.length} accounts below ${MIN_HORIZON_S} s with no degraded plan reported: ${text}`).toBeGreaterThan(0);
      expect(below.filter((r) => !reported.has(r.name)).map((r) => `${r.name}: ${r.lowestMs / 1000} s`), text).toEqual([]);
    }
    // A cancel fires only for an account the plan left over_budget (not armed, reported).
    expect(rows.filter((r) => r.fired > 0 && !overBudgetNames.has(r.name)).map((r) => r.name), text).toEqual([]);
    expect(keeper.child.exitCode, text).toBeNull();
  }, 240_000);
});
