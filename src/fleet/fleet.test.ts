/**
 * A fleet's membership (shard.fleet) on a real Redis (Debian's redis-server on a loopback port,
 * started here), with stand-in keepers: each instance's Fleet shell, its Redis scripts and its state
 * file, on the real clock with a 3 s lease (a step a second), a few seconds each. What the whole
 * keeper does with it (arms, horizons, fires) is test/fleet-processes.test.ts's.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRedisServer, noRedisMessage, startRedis, type TestRedis } from '../../test/support/redis.js';
import { createMetrics } from '../obs/metrics.js';
import { systemClock } from '../time/clock.js';
import { FleetFile } from './fleet-file.js';
import type { AccountCover } from '../account/keeper-types.js';
import { Fleet } from './fleet.js';
import { redisFleetStore } from './fleet-redis.js';
import { newRedisClient } from '../app/shared-redis.js';

const binary = findRedisServer();
if (!binary) process.stderr.write(noRedisMessage());

const LEASE_MS = 3_000;
const candidates = Array.from({ length: 30 }, (_, i) => ({ name: `acct-${i}`, address: `0x${(i + 1).toString(16).padStart(40, '0')}` }));

let redis: TestRedis | undefined;
let dir: string | undefined;
const members: Member[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-'));
});

afterEach(async () => {
  await Promise.all(members.splice(0).map((m) => m.stop()));
  await redis?.stop();
  redis = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Member {
  name: string;
  fleet: Fleet;
  /** What the stand-in keeper holds now (the last apply). */
  held: () => ReadonlyMap<string, AccountCover>;
  /** Whether the stand-in keeper arms what it is given (false: its venue is cut off). */
  arming: { on: boolean };
  logs: Array<Record<string, unknown>>;
  metrics: ReturnType<typeof createMetrics>;
  stop(): Promise<void>;
}

async function member(name: string, url: string, opts: { start?: boolean; preferredSlot?: number } = {}): Promise<Member> {
  const client = newRedisClient(url);
  client.on('error', () => undefined);
  let held: ReadonlyMap<string, AccountCover> = new Map();
  const arming = { on: true };
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const metrics = createMetrics({ version: 'test' });
  const fleet = new Fleet(
    { instance: name, leaseMs: LEASE_MS, replication: 2, candidates },
    {
      clock: systemClock(),
      store: redisFleetStore(client, 'fleet-test'),
      file: new FleetFile(join(dir!, `${name}.json`)),
      logger,
      metrics,
      settled: () => (arming.on ? [...held.keys()] : []),
      apply: async (covers) => {
        held = covers;
      },
      ...(opts.preferredSlot !== undefined ? { preferredSlot: async () => opts.preferredSlot! } : {}),
    },
  );
  held = await fleet.restore();
  if (opts.start !== false) fleet.start();
  const m: Member = {
    name,
    fleet,
    held: () => held,
    arming,
    logs,
    metrics,
    stop: async () => {
      await fleet.stop();
      client.disconnect();
    },
  };
  members.push(m);
  return m;
}

/** Each account's holders across the live members. */
function holders(ms: readonly Member[]): Map<string, string[]> {
  const out = new Map<string, string[]>(candidates.map((c) => [c.name, []]));
  for (const m of ms) for (const name of m.held().keys()) out.get(name)!.push(m.name);
  return out;
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

/** Samples every 100 ms until `cond`; the fewest holders any account had at any sample. */
async function watchCoverage(ms: () => readonly Member[], cond: () => boolean, limitMs: number): Promise<number> {
  let fewest = Infinity;
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    for (const h of holders(ms()).values()) fewest = Math.min(fewest, h.length);
    if (cond()) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return fewest;
}

const settled = (ms: readonly Member[]) => [...holders(ms).values()].every((h) => h.length === 2) && ms.every((m) => m.fleet.view().handing_over === 0);

describe.skipIf(!binary)('fleet membership on Redis', () => {
  it('three instances: every account held by two, each in an agent slot of its own', async () => {
    redis = await startRedis({ binary: binary! });
    const ms = await Promise.all(['k0', 'k1', 'k2'].map((n) => member(n, redis!.url)));
    await until(() => settled(ms), 10_000);
    expect(settled(ms)).toBe(true);
    for (const c of candidates) {
      const slots = ms.flatMap((m) => (m.held().has(c.name) ? [m.held().get(c.name)!.slot] : []));
      expect(new Set(slots).size).toBe(2);
      const covers = ms.flatMap((m) => (m.held().has(c.name) ? [m.held().get(c.name)!] : []));
      // Both holders agree who covers it, and one is replica 0, the other replica 1.
      expect(covers.map((x) => x.replica).sort()).toEqual([0, 1]);
      expect(covers[0]!.coveredBy).toEqual(covers[1]!.coveredBy);
    }
    expect(ms[0]!.fleet.view().members).toEqual(['k0', 'k1', 'k2']);
  }, 30_000);

  it('an instance with a usable agent in a slot gains the account in that slot when it is free (no approval)', async () => {
    redis = await startRedis({ binary: binary! });
    const k0 = await member('k0', redis.url, { preferredSlot: 2 });
    const others = await Promise.all(['k1', 'k2'].map((n) => member(n, redis!.url)));
    const ms = [k0, ...others];
    await until(() => settled(ms), 10_000);
    expect(k0.held().size).toBeGreaterThan(0);
    for (const c of k0.held().values()) expect(c.slot).toBe(2);
    for (const m of others) for (const c of m.held().values()) expect(c.slot).not.toBe(2);
  }, 30_000);

  it('a fourth joins: the old owner lets go only after the new one has armed; no account ever below two', async () => {
    redis = await startRedis({ binary: binary! });
    const ms = await Promise.all(['k0', 'k1', 'k2'].map((n) => member(n, redis!.url)));
    await until(() => settled(ms), 10_000);
    const k3 = await member('k3', redis.url);
    k3.arming.on = false; // its venue is away: it holds what it gains but arms nothing
    const all = [...ms, k3];
    await until(() => k3.held().size > 0, 10_000);
    // Two more steps: nobody lets go of an account k3 has not armed.
    await new Promise((r) => setTimeout(r, 2_500));
    const gained = [...k3.held().keys()];
    expect(gained.length).toBeGreaterThan(5);
    for (const name of gained) expect(holders(all).get(name)!.length).toBe(3);
    expect(ms.reduce((n, m) => n + m.fleet.view().handing_over, 0)).toBe(gained.length);
    k3.arming.on = true;
    const fewest = await watchCoverage(() => all, () => settled(all), 10_000);
    expect(settled(all)).toBe(true);
    expect(fewest).toBeGreaterThanOrEqual(2);
    // 30 accounts x 2 owners over 4 instances: k3 ends with about 15, and moved only those.
    expect(k3.held().size).toBe(gained.length);
  }, 40_000);

  it('Redis killed: every instance keeps what it holds; back empty, the same slots are claimed again', async () => {
    redis = await startRedis({ binary: binary! });
    const ms = await Promise.all(['k0', 'k1', 'k2'].map((n) => member(n, redis!.url)));
    await until(() => settled(ms), 10_000);
    const before = ms.map((m) => new Map([...m.held()].map(([n, c]) => [n, c.slot])));
    await redis.kill();
    // Three leases without Redis: nothing moves.
    const fewest = await watchCoverage(() => ms, () => false, 3 * LEASE_MS);
    expect(fewest).toBe(2);
    expect(ms.map((m) => m.fleet.view().connected)).toEqual([false, false, false]);
    await redis.restart();
    await until(() => ms.every((m) => m.fleet.view().connected) && settled(ms), 10_000);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(settled(ms)).toBe(true);
    ms.forEach((m, i) => expect(new Map([...m.held()].map(([n, c]) => [n, c.slot]))).toEqual(before[i]));
  }, 40_000);

  it('a lost instance: its accounts move to the next best once its lease ends, and back when it returns', async () => {
    redis = await startRedis({ binary: binary! });
    const ms = await Promise.all(['k0', 'k1', 'k2'].map((n) => member(n, redis!.url)));
    await until(() => settled(ms), 10_000);
    const lost = ms[2]!;
    const heldBefore = new Map([...lost.held()].map(([n, c]) => [n, c.slot]));
    await lost.stop();
    members.splice(members.indexOf(lost), 1);
    const alive = ms.slice(0, 2);
    // With two instances left, each holds every account.
    await until(() => alive.every((m) => m.held().size === candidates.length), 4 * LEASE_MS);
    expect(alive.every((m) => m.held().size === candidates.length)).toBe(true);
    // It returns under its name: what it held is armed again at once (fleet.json), in the same slots.
    const back = await member('k2', redis.url);
    expect(new Map([...back.held()].map(([n, c]) => [n, c.slot]))).toEqual(heldBefore);
    const all = [...alive, back];
    const fewest = await watchCoverage(() => all, () => settled(all), 4 * LEASE_MS);
    expect(settled(all)).toBe(true);
    expect(fewest).toBeGreaterThanOrEqual(2);
  }, 40_000);

  it('a reload that removes accounts drops them at once; one that adds accounts gains its share of them', async () => {
    redis = await startRedis({ binary: binary! });
    const ms = await Promise.all(['k0', 'k1'].map((n) => member(n, redis!.url)));
    await until(() => settled(ms), 10_000);
    // Two instances, replication 2: each holds all 30.
    expect(ms.map((m) => m.held().size)).toEqual([30, 30]);
    await ms[0]!.fleet.reconfigure({ instance: 'k0', leaseMs: LEASE_MS, replication: 2, candidates: candidates.slice(0, 10) });
    expect([...ms[0]!.held().keys()].sort()).toEqual(candidates.slice(0, 10).map((c) => c.name).sort());
    await ms[0]!.fleet.reconfigure({ instance: 'k0', leaseMs: LEASE_MS, replication: 2, candidates });
    await until(() => ms[0]!.held().size === 30, 5_000);
    expect(ms[0]!.held().size).toBe(30);
  }, 30_000);

  it('a fleet.json that cannot be written is counted with the other state files, and the instance goes on', async () => {
    redis = await startRedis({ binary: binary! });
    // Its state file would go under a regular file: every write fails (ENOTDIR).
    await writeFile(join(dir!, 'blocked'), 'not a directory');
    const m = await member('blocked/k0', redis.url);
    await until(() => m.held().size === candidates.length, 10_000);
    expect(m.held().size).toBe(candidates.length);
    expect(m.logs.some((l) => l['event'] === 'state_write_failed' && l['file'] === 'fleet')).toBe(true);
    expect(await m.metrics.registry.getSingleMetricAsString('dms_keeper_state_write_errors_total')).toMatch(/reason="io"\} [1-9]/);
  }, 30_000);

  it('an unreadable fleet.json is named in a warning and a metric; the instance starts holding nothing', async () => {
    redis = await startRedis({ binary: binary! });
    await writeFile(join(dir!, 'k0.json'), '{"instance": "k0", "held": ');
    const m = await member('k0', redis.url, { start: false });
    expect(m.held().size).toBe(0);
    const warning = m.logs.find((l) => l['event'] === 'state_unreadable');
    expect(warning).toMatchObject({ file: 'fleet', problem: expect.stringContaining('k0.json: not JSON') });
    expect((await m.metrics.registry.getSingleMetricAsString('dms_keeper_state_unreadable_total')).includes('file="fleet"} 1')).toBe(true);
    m.fleet.start();
    await until(() => m.held().size === candidates.length, 10_000);
    expect(JSON.parse(await readFile(join(dir!, 'k0.json'), 'utf8'))).toMatchObject({ instance: 'k0', members: ['k0'] });
  }, 30_000);
});
