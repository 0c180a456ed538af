/**
 * Replication as built processes (issue: a fleet that loses a node loses no account's
 * protection): three keeper processes, `shard: { count: 3, replication: 2 }`, 60 accounts on the
 * simulator, deadline 60 s, min horizon 20 s.
 * - every account is armed by two instances, each with its own agent;
 * - one instance SIGKILLed (a lost pod or node): for 75 s, longer than a deadline, no account's
 *   horizon drops below its minimum and no cancel fires; restarted on its state directory, it arms
 *   its accounts again (coverage back to two);
 * - the control, replication 1: the same kill leaves its shard's accounts to run down to their
 *   deadline (a false cancel for every account of the lost shard).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses } from '../bench/keys.js';
import { getJson, startCli, type Proc } from './support/cli.js';
import { fleetMember, seedAccounts, startSim, venueView, waitArmed } from './support/keeper-process.js';

const N = 60;
const COUNT = 3;
const ADDRESSES = benchAddresses(N);
const MIN_HORIZON_MS = 20_000;

const procs: Proc[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});
const track = (p: Proc): Proc => {
  procs.push(p);
  return p;
};

async function venue(): Promise<string> {
  const sim = await startSim(track);
  expect(await seedAccounts(sim.url, ADDRESSES)).toEqual([]);
  return sim.url;
}

interface Instance {
  file: string;
  creds: string;
  ops: string;
  proc: Proc;
}

async function instance(simUrl: string, index: number, replication: number): Promise<Instance> {
  const { dir, creds, listen, venueYaml, accountsYaml: accounts } = await fleetMember(simUrl, ADDRESSES, 'dmsk-replica-');
  // The three share the simulator's one schedule-cancel window (600 a minute): a third each.
  const yaml = `${venueYaml}
switch: { deadline_seconds: 60, rearm_every_seconds: 15, min_horizon_seconds: 20, on_shutdown: keep }
watch: { orders_every_seconds: 300, positions_every_seconds: 600, notifications: false }
rate_limits:
  global: { requests: 400, per_seconds: 60 }
  schedule_cancel: { requests: 200, per_seconds: 60 }
  exchange: { requests: 200, per_seconds: 60 }
shard: { index: ${index}, count: ${COUNT}, replication: ${replication} }
accounts:
${accounts}
state_dir: ${join(dir, 'state')}
server: { listen: "127.0.0.1:${listen}" }
log: { level: info }
`;
  const file = join(dir, 'keeper.yaml');
  await writeFile(file, yaml);
  const ops = `http://127.0.0.1:${listen}`;
  return { file, creds, ops, proc: track(startCli(['run', '--config', file], { env: { CREDENTIALS_DIRECTORY: creds } })) };
}

function restart(i: Instance): Instance {
  return { ...i, proc: track(startCli(['run', '--config', i.file], { env: { CREDENTIALS_DIRECTORY: i.creds } })) };
}


async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}


/** How many accounts an instance shows armed in /status, of how many it covers. */
async function armedHere(i: Instance): Promise<{ armed: number; of: number; replicas: number[] }> {
  const s = (await getJson(`${i.ops}/status`)).body as { accounts: Array<{ armed: boolean; coverage: { instances: string[] } | null }> };
  return { armed: s.accounts.filter((a) => a.armed).length, of: s.accounts.length, replicas: s.accounts.map((a) => a.coverage?.instances.length ?? 1) };
}

describe('replication: three instances, each account armed by two', () => {
  it('replication 2 :: one instance SIGKILLed for 75 s: every horizon >= min_horizon, no cancel fired; restarted: its accounts armed again', async () => {
    const simUrl = await venue();
    const fleet = await Promise.all([0, 1, 2].map((i) => instance(simUrl, i, 2)));
    expect(await waitArmed(simUrl, ADDRESSES, 60_000)).toBe(0);
    // Each instance covers two shards' accounts: 40 of the 60 on average, each account twice.
    const covered = await Promise.all(fleet.map(armedHere));
    expect(covered.reduce((s, c) => s + c.of, 0)).toBe(2 * N);
    for (const c of covered) expect(c.replicas.every((r) => r === 2)).toBe(true);
    // Two agents arm each account: the venue saw arms of every account from two signers.
    await sleep(20_000);
    const actions = (await getJson(`${simUrl}/_sim/actions`)).body as { actions: Array<{ type: string; account?: string; signer?: string; result: string }> };
    const signers = new Map<string, Set<string>>();
    for (const x of actions.actions) {
      if (x.type !== 'scheduleCancel' || x.result !== 'ok' || !x.account || !x.signer) continue;
      signers.set(x.account.toLowerCase(), (signers.get(x.account.toLowerCase()) ?? new Set()).add(x.signer.toLowerCase()));
    }
    for (const a of ADDRESSES) expect(signers.get(a.toLowerCase())?.size, a).toBe(2);

    fleet[1]!.proc.child.kill('SIGKILL');
    let worst = Number.POSITIVE_INFINITY;
    for (let t = 0; t < 75; t++) {
      await sleep(1_000);
      const v = await venueView(simUrl, ADDRESSES);
      worst = Math.min(worst, v.minHorizonMs);
      expect(v.unarmed, `t = ${t} s`).toBe(0);
      expect(v.fired, `t = ${t} s`).toBe(0);
    }
    expect(worst).toBeGreaterThanOrEqual(MIN_HORIZON_MS);

    const back = restart(fleet[1]!);
    const t0 = Date.now();
    let here = { armed: 0, of: 1, replicas: [] as number[] };
    while (Date.now() - t0 < 30_000) {
      await sleep(1_000);
      here = await armedHere(back).catch(() => here);
      if (here.of > 0 && here.armed === here.of) break;
    }
    expect(here.armed).toBe(here.of);
    process.stdout.write(`replication 2: lowest horizon with one instance of three killed for 75 s: ${(worst / 1000).toFixed(1)} s; restarted, ${here.armed} of ${here.of} armed again in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  }, 300_000);

  it('the control, replication 1 :: the same kill leaves the lost shard\'s accounts to run down towards their deadline', async () => {
    const simUrl = await venue();
    const fleet = await Promise.all([0, 1, 2].map((i) => instance(simUrl, i, 1)));
    expect(await waitArmed(simUrl, ADDRESSES, 60_000)).toBe(0);
    fleet[1]!.proc.child.kill('SIGKILL');
    let worst = Number.POSITIVE_INFINITY;
    for (let t = 0; t < 45 && worst >= MIN_HORIZON_MS; t++) {
      await sleep(1_000);
      worst = Math.min(worst, (await venueView(simUrl, ADDRESSES)).minHorizonMs);
    }
    expect(worst).toBeLessThan(MIN_HORIZON_MS);
  }, 200_000);
});
