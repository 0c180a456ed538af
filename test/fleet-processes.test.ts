/**
 * A fleet as built processes (`shard: { replication: 2, fleet: {...} }`; issue: a fleet that loses a
 * node loses no account's protection, and scales by one number): keeper processes on the simulator
 * and a real Redis (Debian's redis-server), 30 accounts, deadline 40 s, re-armed every 10 s, min
 * horizon 12 s, a 10 s lease (the first version ran 60 accounts at 60 / 20 / 20 s in 178 s; these
 * keep the config rules, 40 - 10 = 30 >= 12 + 2 retries x 3 s, and the fleet rule, 40 - 10 - 10 -
 * 10 / 3 = 16.7 >= 12, and the same 60 % of the venue's window). One timeline, the venue sampled
 * every second throughout (every account armed, no cancel fired, the lowest horizon kept):
 * 1. three instances start: every account armed by two;
 * 2. k0 cut off from the venue for 15 s (a re-arm period and a half): the other owner of each of its
 *    accounts keeps it armed;
 *    one SIGKILLed for 20 s (a lost pod or node): the others take its accounts once its lease
 *    ends (coverage back to two within a lease, a step and the first arms); restarted, it arms
 *    what it held again (its fleet.json) and takes its accounts back;
 * 3. scaled 3 -> 4 (a fourth started) and 4 -> 2 (two stopped at once): what each step moves;
 * 4. Redis killed for FLEET_REDIS_DOWN_SECONDS (20 s here, two leases; 120 s for the figures in the notes):
 *    every instance keeps the last membership and keeps arming; Redis back (empty), they re-register;
 * 5. a SIGHUP that renames an instance is refused, the old config staying in force.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses } from '../bench/keys.js';
import { getJson, startCli, type Proc } from './support/cli.js';
import { fleetMember, seedAccounts, startSim, venueView, waitArmed, type FleetStatus } from './support/keeper-process.js';
import { findRedisServer, noRedisMessage, startRedis, type TestRedis } from './support/redis.js';

const N = 30;
const ADDRESSES = benchAddresses(N);
const NAMES = ADDRESSES.map((_, i) => `a${i}`);
const DEADLINE_S = 40;
const MIN_HORIZON_S = 12;
const MIN_HORIZON_MS = MIN_HORIZON_S * 1000;
const LEASE_S = 10;
const REDIS_DOWN_S = Number(process.env['FLEET_REDIS_DOWN_SECONDS'] ?? 20);
/** k0's network to the venue cut for this long: more than a re-arm period, so it misses re-arms. */
const CUT_S = 15;
/** k1 dead for this long in all: past its lease, so its accounts move. */
const KILL_S = 20;
/**
 * 60 owner places re-armed every 10 s are 360 arms a minute, 60% of the simulator's one window of
 * 600: room for the handovers' extra arms and approvals, so the run measures the faults, not the
 * budget. (With 60 accounts at 15 s, 80%, the planner already stretched every period to keep within
 * the shared bucket and under the load of the whole suite one run dipped 0.9 s below min_horizon
 * during the handovers, no cancel fired; FLEET_REARM_SECONDS=8, 75 % here, comes near that setting.)
 */
const REARM_S = Number(process.env['FLEET_REARM_SECONDS'] ?? 10);

const binary = findRedisServer();
if (!binary) process.stderr.write(noRedisMessage());

const procs: Proc[] = [];
let redis: TestRedis | undefined;
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await redis?.stop();
});
const track = (p: Proc): Proc => {
  procs.push(p);
  return p;
};

interface Instance {
  name: string;
  file: string;
  creds: string;
  ops: string;
  proc: Proc;
}

async function instance(simUrl: string, redisUrl: string, name: string, venueUrl = simUrl): Promise<Instance> {
  const { dir, creds, listen, venueYaml, accountsYaml } = await fleetMember(venueUrl, ADDRESSES, 'dmsk-fleet-');
  // One schedule-cancel window for the fleet (the simulator's 600 a minute), shared on Redis.
  const yaml = `${venueYaml}
switch: { deadline_seconds: ${DEADLINE_S}, rearm_every_seconds: ${REARM_S}, min_horizon_seconds: ${MIN_HORIZON_S}, on_shutdown: keep }
watch: { orders_every_seconds: 300, positions_every_seconds: 600, notifications: false }
rate_limits:
  global: { requests: 1200, per_seconds: 60 }
  schedule_cancel: { requests: 600, per_seconds: 60 }
  exchange: { requests: 600, per_seconds: 60 }
  shared: { redis_url: "${redisUrl}", name: fleet }
shard: { replication: 2, fleet: { instance: ${name}, lease_seconds: ${LEASE_S} } }
accounts:
${accountsYaml}
state_dir: ${join(dir, 'state')}
server: { listen: "127.0.0.1:${listen}" }
log: { level: info }
`;
  const file = join(dir, 'keeper.yaml');
  await writeFile(file, yaml);
  const i = { name, file, creds, ops: `http://127.0.0.1:${listen}` };
  return { ...i, proc: launch(i) };
}

function launch(i: Omit<Instance, 'proc'>): Proc {
  return track(startCli(['run', '--config', i.file], { env: { CREDENTIALS_DIRECTORY: i.creds } }));
}

async function status(i: Instance): Promise<FleetStatus | undefined> {
  const r = await getJson(`${i.ops}/status`).catch(() => undefined);
  return r?.status === 200 ? (r.body as FleetStatus) : undefined;
}

/** Every account's owners as the instances show them, and whether the fleet is settled (two holders each, all armed, no handover). */
async function fleetState(live: readonly Instance[]): Promise<{ settled: boolean; owners: Map<string, string[]>; held: number[] }> {
  const owners = new Map<string, string[]>(NAMES.map((n) => [n, []]));
  const held: number[] = [];
  let settled = true;
  for (const i of live) {
    const s = await status(i);
    if (!s) return { settled: false, owners, held };
    held.push(s.accounts.length);
    if (s.fleet.handing_over > 0 || !s.fleet.connected || s.fleet.members.length !== live.length) settled = false;
    for (const a of s.accounts) {
      owners.get(a.name)?.push(i.name);
      if (!a.armed) settled = false;
    }
  }
  for (const o of owners.values()) if (o.length !== 2) settled = false;
  return { settled, owners, held };
}

/** Owner places moved between two views (each account has two), and accounts touched. */
function moved(before: Map<string, string[]>, after: Map<string, string[]>): { places: number; accounts: number } {
  let places = 0;
  let accounts = 0;
  for (const [name, o] of after) {
    const b = before.get(name) ?? [];
    const n = o.filter((x) => !b.includes(x)).length;
    places += n;
    if (n) accounts++;
  }
  return { places, accounts };
}

/**
 * A TCP relay to the simulator whose network can be cut: every open connection reset and every new
 * one closed at once, as a host cut off from the venue sees it.
 */
async function cuttableVenue(simUrl: string): Promise<{ url: string; cut(on: boolean): void; close(): void }> {
  const target = new URL(simUrl);
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    cut(on) {
      cut = on;
      if (on) for (const s of sockets) s.destroy();
    },
    close: () => server.close(),
  };
}

describe.skipIf(!binary)('a fleet on Redis: three instances, replication 2, 30 accounts', () => {
  it('lose one, scale 3 -> 4 -> 2, lose Redis: every account armed at every sample, no cancel fired, every horizon >= min', async () => {
    redis = await startRedis({ binary: binary! });
    const sim = await startSim(track);
    expect(await seedAccounts(sim.url, ADDRESSES)).toEqual([]);

    // The venue, sampled every second from the first arm to the end.
    let worst = Number.POSITIVE_INFINITY;
    const worstByPhase = new Map<string, number>();
    let sampling = false;
    const faults: string[] = [];
    let phase = 'start';
    const sampler = (async () => {
      while (!sampling) await sleep(200);
      while (sampling) {
        const v = await venueView(sim.url, ADDRESSES);
        worst = Math.min(worst, v.minHorizonMs);
        worstByPhase.set(phase, Math.min(worstByPhase.get(phase) ?? Infinity, v.minHorizonMs));
        if (v.unarmed > 0 || v.fired > 0) faults.push(`${phase}: ${v.unarmed} unarmed, ${v.fired} fired`);
        await sleep(1_000);
      }
    })();
    const notes: string[] = [];
    const settle = async (live: Instance[], withinMs: number, what: string): Promise<{ ms: number; owners: Map<string, string[]>; held: number[] }> => {
      const t0 = Date.now();
      for (;;) {
        const s = await fleetState(live);
        if (s.settled) return { ms: Date.now() - t0, owners: s.owners, held: s.held };
        if (Date.now() - t0 > withinMs) throw new Error(`${what}: not settled in ${withinMs} ms: ${JSON.stringify([...s.owners].filter(([, o]) => o.length !== 2).slice(0, 5))} held ${s.held}`);
        await sleep(500);
      }
    };

    // 1. Three instances; k0 reaches the venue through a relay whose network can be cut.
    const k0Venue = await cuttableVenue(sim.url);
    const k = await Promise.all(['k0', 'k1', 'k2'].map((n) => instance(sim.url, redis!.url, n, n === 'k0' ? k0Venue.url : sim.url)));
    let live = [...k];
    expect(await waitArmed(sim.url, ADDRESSES, 90_000)).toBe(0);
    sampling = true;
    let view = await settle(live, 60_000, 'three instances');
    notes.push(`three instances: held ${view.held.join(' / ')} (${2 * N} owner places)`);

    // 2a. k0's network to the venue cut for CUT_S: its accounts' other owners keep them armed.
    phase = 'k0 cut off from the venue';
    const worstBeforeCut = worst;
    k0Venue.cut(true);
    await sleep(CUT_S * 1000);
    k0Venue.cut(false);
    phase = 'k0 reconnected';
    view = await settle(live, 60_000, 'k0 reconnected');
    notes.push(`k0 cut off from the venue for ${CUT_S} s: lowest horizon ${(Math.min(worst, worstBeforeCut) / 1000).toFixed(1)} s; back, settled in ${(view.ms / 1000).toFixed(1)} s`);

    // 2b. One SIGKILLed for KILL_S, then restarted on its state directory.
    phase = 'k1 killed';
    k[1]!.proc.child.kill('SIGKILL');
    live = [k[0]!, k[2]!];
    const lost = await settle(live, 45_000, 'k1 lost');
    notes.push(`k1 SIGKILLed: coverage back to two (k0 and k2 arm every account) after ${(lost.ms / 1000).toFixed(1)} s (lease ${LEASE_S} s)`);
    // One lease for k1's to end, a step (lease / 3) to notice, then the approvals and first arms.
    expect(lost.ms).toBeLessThan((LEASE_S + LEASE_S / 3 + 10) * 1000);
    await sleep(Math.max(0, KILL_S * 1000 - lost.ms));
    phase = 'k1 back';
    k[1] = { ...k[1]!, proc: launch(k[1]!) };
    const back = Date.now();
    // Its fleet.json: what it held is armed again at once, before its lease is read (paced by the
    // one schedule-cancel window its two peers, still arming every account, are using too).
    let armedBack = -1;
    for (; Date.now() - back < 30_000; await sleep(250)) {
      const s = await status(k[1]!);
      if (s && s.accounts.length > 0 && s.accounts.every((a) => a.armed)) {
        armedBack = Date.now() - back;
        break;
      }
    }
    if (armedBack < 0) process.stdout.write(`k1: ${JSON.stringify((await status(k[1]!))?.accounts.slice(0, 3))}\n${k[1]!.proc.stdout().slice(-6000)}\n`);
    expect(armedBack, 'k1 arms what it held').toBeGreaterThanOrEqual(0);
    live = [...k];
    const coverage = await settle(live, 60_000, 'k1 back');
    notes.push(`k1 restarted: its accounts armed in ${(armedBack / 1000).toFixed(1)} s, the fleet settled at three in ${((Date.now() - back) / 1000).toFixed(1)} s`);
    view = coverage;

    // 3. Scale 3 -> 4 -> 2.
    phase = 'scale 3 -> 4';
    const k3 = await instance(sim.url, redis.url, 'k3');
    live = [...k, k3];
    const four = await settle(live, 90_000, 'four instances');
    const m34 = moved(view.owners, four.owners);
    notes.push(`3 -> 4: ${m34.places} of ${2 * N} owner places moved (1/4 = ${N / 2}), ${m34.accounts} of ${N} accounts touched, settled in ${(four.ms / 1000).toFixed(1)} s`);
    // At most 3/8 of the places (45 of 120 with 60 accounts): a quarter, and half as much again.
    expect(m34.places).toBeLessThanOrEqual(Math.floor((3 / 8) * 2 * N));
    phase = 'scale 4 -> 2';
    const stopped = [k[2]!, k3];
    for (const i of stopped) i.proc.child.kill('SIGTERM');
    await Promise.all(stopped.map((i) => i.proc.exited));
    live = [k[0]!, k[1]!];
    const two = await settle(live, 90_000, 'two instances');
    const m42 = moved(four.owners, two.owners);
    // No more than the two leavers held: about half the places (60 of 120 with 60 accounts; with
    // 30 one run's leavers held 31 of 60, so the bound is what they held, not N).
    const leaversHeld = four.held[2]! + four.held[3]!;
    notes.push(`4 -> 2: ${m42.places} of ${2 * N} owner places moved (the two leavers held ${leaversHeld}), ${m42.accounts} of ${N} accounts touched, settled in ${(two.ms / 1000).toFixed(1)} s`);
    expect(m42.places).toBeLessThanOrEqual(leaversHeld);

    // 4. Redis killed, then back empty.
    phase = `redis down ${REDIS_DOWN_S} s`;
    await redis.kill();
    await sleep(REDIS_DOWN_S * 1000);
    const downView = await fleetState(live);
    expect(downView.held).toEqual([N, N]);
    phase = 'redis back';
    await redis.restart();
    const again = await settle(live, 60_000, 'redis back');
    notes.push(`Redis down ${REDIS_DOWN_S} s: both kept their ${N}; back, settled in ${(again.ms / 1000).toFixed(1)} s`);

    // 5. A reload may not rename an instance (its lease and agent slots are held under its name).
    const { readFile } = await import('node:fs/promises');
    const k0 = k[0]!;
    await writeFile(k0.file, (await readFile(k0.file, 'utf8')).replace('instance: k0', 'instance: k9'));
    k0.proc.child.kill('SIGHUP');
    await k0.proc.waitFor(() => k0.proc.logs().some((l) => l.event === 'config_reload' && l.result === 'error'), 10_000, 'reload refused');
    expect(String(k0.proc.logs().find((l) => l.event === 'config_reload' && l.result === 'error')?.problems)).toMatch(/shard.fleet.instance cannot change by a reload \(k0 -> k9\)/);
    expect((await status(k0))?.fleet.instance).toBe('k0');

    sampling = false;
    await sampler;
    k0Venue.close();
    const actions = (await getJson(`${sim.url}/_sim/actions`)).body as { actions: Array<{ type: string; result: string }> };
    const approvals = actions.actions.filter((x) => x.type === 'approveAgent' && x.result === 'ok').length;
    notes.push(`lowest horizon over the run: ${(worst / 1000).toFixed(1)} s (by phase: ${[...worstByPhase].map(([p, ms]) => `${p} ${(ms / 1000).toFixed(1)}`).join(', ')}); faults: ${faults.length}; agents approved over the run: ${approvals}`);
    process.stdout.write(`fleet:\n  ${notes.join('\n  ')}\n`);
    expect(faults).toEqual([]);
    expect(worst).toBeGreaterThanOrEqual(MIN_HORIZON_MS);
  }, 600_000);
});

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}


