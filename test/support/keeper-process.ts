/** A keeper process and a simulator process, for the CLI and process-fault tests. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { benchKey } from '../../bench/keys.js';
import { demoAddress, demoMasterKey } from '../../src/sim/venue/demo.js';
import { freePort, getJson, startCli, tempDir, writeKey, type Proc } from './cli.js';

const BOB = demoAddress('bob');

export async function startSim(track: (p: Proc) => Proc = (p) => p, env: Record<string, string> = {}): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const proc = track(startCli(['simulate', '--port', String(port)], { env: { DMS_KEEPER_LOG__LEVEL: 'warn', ...env } }));
  // Generous: a wait on the line, so it costs nothing when the start is quick, and several tests of
  // a file may start their simulators at once on two busy cores.
  await proc.waitFor(() => proc.stdout().includes('venue simulator on'), 30_000, 'simulator');
  return { proc, url: `http://127.0.0.1:${port}` };
}

export async function keeperConfig(
  simUrl: string,
  over: { onShutdown?: 'keep' | 'clear'; deadline?: number; rearm?: number; minHorizon?: number; stateDir?: string; scheduleCancelPerMinute?: number; scheduleCancelWindowSeconds?: number } = {},
) {
  const dir = await tempDir();
  const creds = join(dir, 'creds');
  await writeKey(creds, 'bob.master', demoMasterKey('bob'));
  const listenPort = await freePort();
  const yaml = `
venue:
  base_url: ${simUrl}
  exchange_url: ${simUrl}
  ws_url: ${simUrl.replace('http', 'ws')}
  network: testnet
  request_timeout_ms: 1000
switch:
  deadline_seconds: ${over.deadline ?? 12}
  rearm_every_seconds: ${over.rearm ?? 2}
  min_horizon_seconds: ${over.minHorizon ?? 6}
  on_shutdown: ${over.onShutdown ?? 'keep'}
watch:
  orders_every_seconds: 2
  positions_every_seconds: 5
accounts:
  - name: arb-desk
    address: "${BOB}"
    master_key: { file: bob.master }
rate_limits:
  global: { requests: 1200, per_seconds: 60 }
  schedule_cancel: { requests: ${over.scheduleCancelPerMinute ?? 600}, per_seconds: ${over.scheduleCancelWindowSeconds ?? 60} }
state_dir: ${over.stateDir ?? join(dir, 'state')}
server:
  listen: 127.0.0.1:${listenPort}
log:
  level: debug
`;
  const file = join(dir, 'keeper.yaml');
  await writeFile(file, yaml);
  return { dir, file, yaml, creds, ops: `http://127.0.0.1:${listenPort}` };
}

export async function simAccount(simUrl: string, address: string): Promise<{ schedule: { timeMs: number | null; triggersToday: number }; openOrders: number; nowMs: number }> {
  const r = await getJson(`${simUrl}/_sim/state?account=${address}`);
  const body = r.body as { account: { schedule: { timeMs: number | null; triggersToday: number }; openOrders: number }; nowMs: number };
  return { ...body.account, nowMs: body.nowMs };
}


/**
 * One keeper of a fleet on the simulator, for the multi-process tests: a temp dir, each bench
 * account's master key in `creds`, a free ops port, and the config's venue section and accounts
 * list (the caller writes the rest).
 */
export async function fleetMember(simUrl: string, addresses: readonly string[], prefix: string): Promise<{ dir: string; creds: string; listen: number; venueYaml: string; accountsYaml: string }> {
  const dir = await tempDir(prefix);
  const creds = join(dir, 'creds');
  for (let i = 0; i < addresses.length; i++) await writeKey(creds, `a${i}.master`, benchKey(i));
  const listen = await freePort();
  const accountsYaml = addresses.map((a, i) => `  - { name: a${i}, address: "${a}", master_key: { file: a${i}.master } }`).join('\n');
  return { dir, creds, listen, venueYaml: simVenueYaml(simUrl), accountsYaml };
}

/** The `venue:` block of a keeper on the simulator process at `simUrl` (its REST, exchange and WebSocket), requests timed out after 2 s. */
export function simVenueYaml(simUrl: string): string {
  return `venue:
  base_url: ${simUrl}
  exchange_url: ${simUrl}
  ws_url: ${simUrl.replace('http', 'ws')}
  request_timeout_ms: 2000`;
}

/**
 * The venue's view of a fleet's accounts: the lowest horizon, how many are unarmed (no schedule,
 * or one already past), how many cancels fired today.
 */
export async function venueView(simUrl: string, addresses: readonly string[]): Promise<{ minHorizonMs: number; unarmed: number; fired: number }> {
  let min = Number.POSITIVE_INFINITY;
  let unarmed = 0;
  let fired = 0;
  for (const a of addresses) {
    const r = (await getJson(`${simUrl}/_sim/state?account=${a}`)).body as { account: { schedule: { timeMs: number | null; triggersToday: number } }; nowMs: number };
    const t = r.account.schedule.timeMs;
    fired += r.account.schedule.triggersToday;
    if (t === null || t <= r.nowMs) unarmed++;
    else min = Math.min(min, t - r.nowMs);
  }
  return { minHorizonMs: min, unarmed, fired };
}

/** Waits up to `withinMs` for every account to be armed on the venue; how many are still unarmed. */
export async function waitArmed(simUrl: string, addresses: readonly string[], withinMs: number): Promise<number> {
  const t0 = Date.now();
  let unarmed = (await venueView(simUrl, addresses)).unarmed;
  while (unarmed > 0 && Date.now() - t0 < withinMs) {
    await new Promise((r) => setTimeout(r, 1_000));
    unarmed = (await venueView(simUrl, addresses)).unarmed;
  }
  return unarmed;
}

/** What a fleet instance's /status says of the fleet and of each account's coverage (`shard.fleet`). */
export interface FleetStatus {
  fleet: { instance: string; members: string[]; connected: boolean; held: number; handing_over: number };
  accounts: Array<{ name: string; armed: boolean; phase?: string; coverage: { instances: string[]; replica: number } | null }>;
}

/**
 * Makes each address an account of the simulator, past the venue's volume gate (so it may arm);
 * the addresses it refused (none, normally: the caller expects an empty list).
 */
export async function seedAccounts(simUrl: string, addresses: readonly string[]): Promise<string[]> {
  const refused: string[] = [];
  for (const address of addresses) {
    const r = await fetch(`${simUrl}/_sim/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address, tradedVolumeUsd: 50_000_000 }) });
    if (r.status !== 200) refused.push(`${address}: ${r.status}`);
  }
  return refused;
}
