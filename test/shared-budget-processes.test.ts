/**
 * Two keeper processes (the built CLI), different shards, one venue whose schedule-cancel window
 * (10 per 10 s) fits what both need in the steady state (16 accounts re-armed every 30 s: 0.53/s)
 * but not what each would send at once if it believed the whole budget was its own (each spaces
 * its 8 first arms at 1/s: 16 in 8 s). Real time, real Redis (Debian's redis-server, started here).
 * - with `rate_limits.shared` on one Redis: zero 429s, zero lapses;
 * - Redis killed mid-run: each falls back to its share, horizons stay within two arm slots of min_horizon;
 * - the control, without `shared`: the same start draws 429s.
 * Issue 19's two shards (bench/budget-scenarios.ts, `npm run bench:budget -- --scenario shards` is
 * the longer run): 180 accounts, each needing an approveAgent, on the simulator's one window of 100
 * per 5 s over every signed action, shards 0 and 1 planning on their share of the demand: zero 429s,
 * all armed within 1.2 x 19.8 s, every horizon >= 8 s for 30 s; Redis killed for 30 s: no deadline
 * passes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runShards } from '../bench/budget-scenarios.js';
import { benchAddresses } from '../bench/keys.js';
import { getJson, startCli, type Proc } from './support/cli.js';
import { fleetMember, seedAccounts, startSim } from './support/keeper-process.js';
import { findRedisServer, noRedisMessage, startRedis, type TestRedis } from './support/redis.js';

const N = 16;
const ADDRESSES = benchAddresses(N);
const binary = findRedisServer();
if (!binary) process.stderr.write(noRedisMessage());

const procs: Proc[] = [];
let redis: TestRedis | undefined;
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await redis?.stop();
  redis = undefined;
});
const track = (p: Proc): Proc => {
  procs.push(p);
  return p;
};

async function venue(): Promise<string> {
  const sim = await startSim(track);
  const post = (path: string, body: unknown) => fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(await seedAccounts(sim.url, ADDRESSES)).toEqual([]);
  expect((await post('/_sim/rate-limits', { scheduleCancel: { limit: 10, windowSeconds: 10 } })).status).toBe(200);
  return sim.url;
}

async function keeper(simUrl: string, shard: number, shared?: string): Promise<{ proc: Proc; ops: string }> {
  const { dir, creds, listen, venueYaml, accountsYaml: accounts } = await fleetMember(simUrl, ADDRESSES, 'dmsk-shared-');
  const yaml = `${venueYaml}
switch: { deadline_seconds: 60, rearm_every_seconds: 30, min_horizon_seconds: 20 }
watch: { orders_every_seconds: 300, positions_every_seconds: 600, notifications: false }
rate_limits:
  global: { requests: 1200, per_seconds: 60 }
  schedule_cancel: { requests: 10, per_seconds: 10 }
${shared ? `  shared: { redis_url: "${shared}", name: shard-pair }\n` : ''}shard: { index: ${shard}, count: 2 }
accounts:
${accounts}
state_dir: ${join(dir, 'state')}
server: { listen: "127.0.0.1:${listen}" }
log: { level: debug }
`;
  const file = join(dir, 'keeper.yaml');
  await writeFile(file, yaml);
  const proc = track(startCli(['run', '--config', file], { env: { CREDENTIALS_DIRECTORY: creds } }));
  return { proc, ops: `http://127.0.0.1:${listen}` };
}

interface Sample {
  minHorizonMs: number;
  unarmed: number;
}

/** Every account's horizon at the venue (null: none armed). */
async function horizons(simUrl: string): Promise<Sample> {
  let min = Number.POSITIVE_INFINITY;
  let unarmed = 0;
  for (const a of ADDRESSES) {
    const r = (await getJson(`${simUrl}/_sim/state?account=${a}`)).body as { account: { schedule: { timeMs: number | null } }; nowMs: number };
    const t = r.account.schedule.timeMs;
    if (t === null) unarmed++;
    else min = Math.min(min, t - r.nowMs);
  }
  return { minHorizonMs: min, unarmed };
}

/** 429s the keepers saw (they count every venue refusal by scope). */
async function venue429s(ops: string[]): Promise<number> {
  let n = 0;
  for (const url of ops) {
    const text = (await getJson(`${url}/metrics`)).text;
    for (const m of text.matchAll(/^dms_keeper_rate_limited_total\{scope="[^"]+"\} (\d+)/gm)) n += Number(m[1]);
  }
  return n;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

describe.skipIf(!binary && !process.env.CI)('two keeper processes, one venue budget', () => {
  it('with rate_limits.shared on one Redis :: zero 429s, zero lapses; Redis killed mid-run :: no deadline near, horizons within two arm slots of min_horizon', async () => {
    redis = await startRedis(binary ? { binary } : {});
    const simUrl = await venue();
    const ks = [await keeper(simUrl, 0, redis.url), await keeper(simUrl, 1, redis.url)];
    // The cold start: 16 approvals and 16 first arms through one 1-per-second arm budget.
    const t0 = Date.now();
    let s = await horizons(simUrl);
    while (s.unarmed > 0 && Date.now() - t0 < 40_000) {
      await sleep(1_000);
      s = await horizons(simUrl);
    }
    expect(s.unarmed).toBe(0);
    const modes = await Promise.all(ks.map(async (k) => ((await getJson(`${k.ops}/status`)).body as { budget_mode: string }).budget_mode));
    expect(modes).toEqual(['shared', 'shared']);
    let worstShared = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 10; i++) {
      await sleep(1_000);
      worstShared = Math.min(worstShared, (await horizons(simUrl)).minHorizonMs);
    }
    expect(worstShared).toBeGreaterThanOrEqual(20_000);
    await redis.kill();
    let worstFallback = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 25; i++) {
      await sleep(1_000);
      const h = await horizons(simUrl);
      expect(h.unarmed).toBe(0);
      worstFallback = Math.min(worstFallback, h.minHorizonMs);
    }
    const after = await Promise.all(ks.map(async (k) => ((await getJson(`${k.ops}/status`)).body as { budget_mode: string }).budget_mode));
    expect(after).toEqual(['local_fallback', 'local_fallback']);
    // Redis gone, each shard keeps half of what the bucket let out: 0.39 arms/s, and the shard
    // holding 10 of the 16 accounts needs 0.33 (85 %). Re-arms queued on the shared pace drift
    // behind the slower one for a cycle: measured 18.9 to 20.0 s at the bottom over five runs,
    // then back above 23 s. The planner's lag allowance is two arm slots (2 x 2.5 s), so the bound
    // is min_horizon less that: no deadline comes near, and a slide past it fails.
    console.log(`shared phase lowest horizon ${worstShared} ms, Redis killed ${worstFallback} ms`);
    expect(worstFallback).toBeGreaterThanOrEqual(20_000 - 2 * 2_540);
    expect(await venue429s(ks.map((k) => k.ops))).toBe(0);
  }, 120_000);

  it('issue 19, shards of 180 on one window of 100 per 5 s :: zero 429s, all armed within 23.76 s, horizons >= 8 s; Redis killed 30 s :: no deadline passes', async () => {
    const r = await runShards({ n: 180, observeMs: 30_000, killMs: 30_000, afterRestartMs: 0, maxArmMs: 40_000, ...(binary ? { redisBinary: binary } : {}) });
    const context = JSON.stringify({ ...r, keeper_events: undefined });
    expect(r.venue_429s_by_phase, context).toMatchObject({ redis_up: 0, redis_killed: 0 });
    expect(r.all_armed_s, context).not.toBeNull();
    expect(r.all_armed_s!, context).toBeLessThanOrEqual(1.2 * 19.8);
    expect(r.lowest_horizon_redis_up_s!, context).toBeGreaterThanOrEqual(8);
    expect(r.lowest_horizon_redis_killed_s!, context).toBeGreaterThan(0);
    expect(r.fired, context).toBe(0);
    // Both planned on a share while Redis answered, and fell back when it was killed.
    const modes = r.budget_modes as Array<{ modes: Array<string | null>; shares: Array<number | null> }>;
    expect(modes.some((m) => m.modes.every((x) => x === 'shared')), context).toBe(true);
    expect(modes.at(-1)!.modes, context).toEqual(['local_fallback', 'local_fallback']);
  }, 150_000);

  it('the control, without shared :: the same cold start draws 429s', async () => {
    const simUrl = await venue();
    const ks = [await keeper(simUrl, 0), await keeper(simUrl, 1)];
    const ops = ks.map((k) => k.ops);
    // Watched until the first 429 (no need to wait for every account to be armed once one is
    // seen), or until the cold start is over: all armed, or the shared run's 40 s bound.
    const t0 = Date.now();
    let s = await horizons(simUrl);
    let seen = await venue429s(ops).catch(() => 0);
    while (s.unarmed > 0 && seen === 0 && Date.now() - t0 < 40_000) {
      await sleep(1_000);
      s = await horizons(simUrl);
      seen = await venue429s(ops).catch(() => 0);
    }
    expect(await venue429s(ops)).toBeGreaterThan(0);
  }, 60_000);
});
