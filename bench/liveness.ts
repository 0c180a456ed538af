/**
 * `npm run bench:liveness [-- --scenario a,b,c,d,e]`: bot liveness (docs/liveness.md) with built
 * processes on loopback, the figures of test/liveness.test.ts in real time.
 *
 * Processes: `dms-keeper simulate` (a child; its admin API `/_sim/` is read, never rate limited) and
 * the built keeper (`node dist/src/main.js run`), with the simulator's demo accounts alice
 * (mm-main), alice-sub (mm-sub, armed by alice's master with an agent of its own name) and bob
 * (arb-desk): deadline 60 s, re-arm 15 s, min horizon 20 s, silence 5 s. Two bots: bot-mm trades
 * mm-main and mm-sub, bot-arb trades arb-desk. The heartbeats come from this process (one request a
 * second per bot naming its accounts), so it knows when the last one went; the probes' health URLs
 * are served by this process too. The simulator's state is sampled every 100 ms.
 *
 * Scenarios (each a fresh simulator and keeper), each exits 1 when a bound is missed:
 *  a  cancel_soon: bot-arb stops. The scheduled time's lead 1 s after the silence (<= 5 s + 2 s),
 *     its last heartbeat to its orders gone (<= 13 s), the other accounts' lowest horizon
 *     (>= 20 s), the bot back: until the lead is back >= 58 s (<= 2 s).
 *  b  stop_rearming: the venue cancels at the deadline it had at the silence, within 200 ms and
 *     never before; no scheduleCancel of arb-desk after the silence.
 *  c  probe: bot-arb's health URL answers 500 (c500), or never answers (chang), for the silence:
 *     the bounds of a, from its last 2xx.
 *  d  SIGKILL of the keeper while every bot heartbeats, the same keeper (config, state dir) again
 *     2 s later, 60 s: no account cancelled (orders never 0, horizon never below 20 s), no
 *     bot_silent from the new keeper.
 *  e  hostile heartbeats: a wrong token 401, an unknown account 404, a 1 MB body 413, each
 *     changing nothing on /status; then 60 s quiet and 60 s of a flood (5,000 a second from 50
 *     keep-alive connections, for arb-desk with its token, from a worker thread): no re-arm over
 *     1 s late, the keeper's RSS within 50 MB of the quiet run's.
 * Prints a Markdown table and writes it to artifacts/liveness-bench.md; every child is stopped on
 * exit, failure included. About 6 minutes for all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { runMain } from './results.js';
import { freePort, MAIN, metricSum, ROOT, sleep, writeKeys } from './venue-procs.js';

const ADDR = { 'mm-main': demoAddress('alice'), 'mm-sub': demoAddress('alice-sub'), 'arb-desk': demoAddress('bob') } as const;
type AccountName = keyof typeof ADDR;
const NAMES = Object.keys(ADDR) as AccountName[];
const BOTS = { 'bot-mm': ['mm-main', 'mm-sub'], 'bot-arb': ['arb-desk'] } as const satisfies Record<string, AccountName[]>;
type BotName = keyof typeof BOTS;
const TOKENS: Record<BotName, string> = { 'bot-mm': 'bench-bot-mm-token-0123456789abcdef', 'bot-arb': 'bench-bot-arb-token-0123456789abcdef' };

const DEADLINE_S = 60;
const REARM_S = 15;
const MIN_HORIZON_MS = 20_000;
const SILENCE_MS = 5_000;
/** The venue's minimum lead for a scheduled cancel (VENUE.md): the cancel-soon lead is this plus 1 s. */
const MIN_LEAD_MS = 5_000;
/** Before a bot falls silent: every account armed, every bot alive, for this long. */
const WARM_UP_MS = 5_000;

// ---- children: stopped on exit, whatever the way out ----

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(t);
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('DMS_KEEPER_') && !['NOTIFY_SOCKET', 'STATE_DIRECTORY', 'CREDENTIALS_DIRECTORY'].includes(k)) env[k] = v;
  return { ...env, ...extra };
}

// ---- the simulator ----

interface Sim {
  child: ChildProcess;
  url: string;
}

async function startSim(log: WriteStream): Promise<Sim> {
  const child = track(spawn(process.execPath, [MAIN, 'simulate', '--port', '0'], { cwd: ROOT, env: childEnv({ DMS_KEEPER_LOG__LEVEL: 'warn' }), stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    log.write(d);
  });
  child.stderr!.on('data', (d: Buffer) => log.write(d));
  const t0 = Date.now();
  for (;;) {
    const m = /venue simulator on (http:\/\/\S+)/.exec(out);
    if (m) return { child, url: m[1]! };
    if (child.exitCode !== null) throw new Error(`the simulator exited (${child.exitCode})`);
    if (Date.now() - t0 > 30_000) throw new Error('the simulator did not start in 30 s');
    await sleep(50);
  }
}

async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url}: ${r.status}`);
  return (await r.json()) as T;
}

interface VenueView {
  /** Local time when the answer came (an upper bound of when the state was read). */
  t: number;
  /** The venue's clock when it read the state. */
  nowMs: number;
  timeMs: number | null;
  orders: number;
}

async function venueView(sim: Sim, address: string): Promise<VenueView> {
  const b = await getJson<{ nowMs: number; account: { schedule: { timeMs: number | null }; openOrders: number } }>(`${sim.url}/_sim/state?account=${address}`);
  return { t: Date.now(), nowMs: b.nowMs, timeMs: b.account.schedule.timeMs, orders: b.account.openOrders };
}

interface ActionEntry {
  atMs: number;
  type: string;
  account?: string;
  result: string;
}

async function armsAccepted(sim: Sim, address: string): Promise<number[]> {
  const { actions } = await getJson<{ actions: ActionEntry[] }>(`${sim.url}/_sim/actions`);
  return actions.filter((a) => a.type === 'scheduleCancel' && a.account === address && a.result === 'ok').map((a) => a.atMs);
}

/** Every account's venue view every 100 ms (a tick still waiting for its answers skips the next). */
class Sampler {
  readonly samples: Array<Record<AccountName, VenueView>> = [];
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  errors = 0;

  constructor(private readonly sim: Sim) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      Promise.all(NAMES.map((n) => venueView(this.sim, ADDR[n])))
        .then((views) => this.samples.push(Object.fromEntries(NAMES.map((n, i) => [n, views[i]!])) as Record<AccountName, VenueView>))
        .catch(() => this.errors++)
        .finally(() => (this.busy = false));
    }, 100);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  since(t: number, until = Infinity): Array<Record<AccountName, VenueView>> {
    return this.samples.filter((s) => s['mm-main'].t >= t && s['mm-main'].t <= until);
  }
}

const lead = (v: VenueView): number | null => (v.timeMs === null ? null : v.timeMs - v.nowMs);

// ---- the keeper ----

type Liveness = { kind: 'heartbeat'; onSilence: 'cancel_soon' | 'stop_rearming' } | { kind: 'probe'; urls: Record<BotName, string> };

interface KeeperFiles {
  dir: string;
  creds: string;
  config: string;
  ops: string;
}

async function keeperFiles(sim: Sim, liveness: Liveness): Promise<KeeperFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'dmsk-liveness-'));
  const { creds } = await writeKeys(dir, { 'alice.master': demoMasterKey('alice'), 'bob.master': demoMasterKey('bob'), 'bot-mm.token': TOKENS['bot-mm'], 'bot-arb.token': TOKENS['bot-arb'] });
  const port = await freePort();
  const botOf = (name: AccountName): BotName => (Object.entries(BOTS) as Array<[BotName, readonly AccountName[]]>).find(([, a]) => a.includes(name))![0];
  const livenessLine = (name: AccountName): string =>
    liveness.kind === 'heartbeat'
      ? `    liveness: { heartbeat: { token: { file: ${botOf(name)}.token } }, silence_seconds: ${SILENCE_MS / 1000}, on_silence: ${liveness.onSilence} }`
      : `    liveness: { probe: { url: "${liveness.urls[botOf(name)]}", every_seconds: 1, timeout_ms: 1000 }, silence_seconds: ${SILENCE_MS / 1000}, on_silence: cancel_soon }`;
  const yaml = `venue:
  base_url: ${sim.url}
  exchange_url: ${sim.url}
  ws_url: ${sim.url.replace(/^http/, 'ws')}
  network: testnet
switch:
  deadline_seconds: ${DEADLINE_S}
  rearm_every_seconds: ${REARM_S}
  min_horizon_seconds: ${MIN_HORIZON_MS / 1000}
accounts:
  - name: mm-main
    address: "${ADDR['mm-main']}"
    master_key: { file: alice.master }
${livenessLine('mm-main')}
  - name: mm-sub
    address: "${ADDR['mm-sub']}"
    master_key: { file: alice.master }
    agent: { name: dms-keeper-sub }
${livenessLine('mm-sub')}
  - name: arb-desk
    address: "${ADDR['arb-desk']}"
    master_key: { file: bob.master }
${livenessLine('arb-desk')}
state_dir: ${join(dir, 'state')}
server:
  listen: 127.0.0.1:${port}
log:
  level: info
`;
  const config = join(dir, 'keeper.yaml');
  await writeFile(config, yaml);
  return { dir, creds, config, ops: `http://127.0.0.1:${port}` };
}

interface LogLine {
  /** Local time the line was read. */
  at: number;
  rec: Record<string, unknown>;
}

interface Keeper {
  child: ChildProcess;
  lines: LogLine[];
}

function startKeeper(f: KeeperFiles, log: WriteStream): Keeper {
  const child = track(spawn(process.execPath, [MAIN, 'run', '--config', f.config], { cwd: ROOT, env: childEnv({ CREDENTIALS_DIRECTORY: f.creds }), stdio: ['ignore', 'pipe', 'pipe'] }));
  const lines: LogLine[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    log.write(d);
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (!line.startsWith('{')) continue;
      try {
        lines.push({ at: Date.now(), rec: JSON.parse(line) as Record<string, unknown> });
      } catch {
        // not JSON
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => log.write(d));
  return { child, lines };
}

interface StatusAccount {
  name: string;
  armed: boolean;
  phase: string;
  bot: null | { state: string; last_seen: string | null; silent_since: string | null; cancel_soon_deadline: string | null };
}

async function status(ops: string): Promise<StatusAccount[]> {
  return (await getJson<{ accounts: StatusAccount[] }>(`${ops}/status`)).accounts;
}

async function metrics(ops: string): Promise<string> {
  const r = await fetch(`${ops}/metrics`);
  return r.text();
}

// ---- the bots ----

/** One bot: a heartbeat a second naming its accounts, with its token, from this process. */
class Bot {
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  /** Local time the last heartbeat answered 200 was sent. */
  lastOkSentAt: number | null = null;
  readonly codes = new Map<string, number>();

  constructor(
    readonly name: BotName,
    private readonly ops: string,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops and waits for the heartbeat in flight: `lastOkSentAt` is then the last one. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const sentAt = Date.now();
      let code: string;
      try {
        const r = await fetch(`${this.ops}/heartbeat`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKENS[this.name]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ accounts: BOTS[this.name] }),
          signal: AbortSignal.timeout(900),
        });
        await r.arrayBuffer();
        code = String(r.status);
        if (r.status === 200) this.lastOkSentAt = sentAt;
      } catch (e) {
        code = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
      }
      this.codes.set(code, (this.codes.get(code) ?? 0) + 1);
      const wait = sentAt + 1_000 - Date.now();
      // stop() is awaited: wake every 50 ms to see it
      for (let left = wait; left > 0 && this.running; left -= 50) await sleep(Math.min(50, left));
    }
  }
}

// ---- the health URLs (probe scenarios) ----

type Health = 'ok' | '500' | 'hang';

class HealthServer {
  readonly state: Record<BotName, Health> = { 'bot-mm': 'ok', 'bot-arb': 'ok' };
  readonly lastOkAt: Record<BotName, number | null> = { 'bot-mm': null, 'bot-arb': null };
  readonly answered = new Map<string, number>();
  private readonly hanging = new Set<http.ServerResponse>();
  private server: http.Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const bot = (Object.keys(BOTS) as BotName[]).find((b) => req.url === `/${b}/healthz`);
      if (!bot) return void res.writeHead(404).end();
      const s = this.state[bot];
      this.answered.set(`${bot} ${s}`, (this.answered.get(`${bot} ${s}`) ?? 0) + 1);
      if (s === 'hang') {
        this.hanging.add(res);
        res.once('close', () => this.hanging.delete(res));
        return;
      }
      if (s === 'ok') this.lastOkAt[bot] = Date.now();
      res.writeHead(s === 'ok' ? 200 : 500, { 'content-type': 'text/plain' }).end(s === 'ok' ? 'ok\n' : 'unhealthy\n');
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  url(bot: BotName): string {
    return `http://127.0.0.1:${this.port}/${bot}/healthz`;
  }

  set(bot: BotName, s: Health): void {
    this.state[bot] = s;
    if (s !== 'hang') for (const r of this.hanging) r.destroy();
  }

  async close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

// ---- results ----

interface Row {
  scenario: string;
  figure: string;
  value: string;
  bound: string;
  /** null: reported, no bound. */
  ok: boolean | null;
}

const rows: Row[] = [];

function row(scenario: string, figure: string, value: string, bound = '', ok: boolean | null = null): void {
  rows.push({ scenario, figure, value, bound, ok });
  console.error(`  ${scenario}: ${figure}: ${value}${bound ? ` (bound ${bound}: ${ok ? 'ok' : 'MISSED'})` : ''}`);
}

const s1 = (ms: number | null | undefined): string => (ms === null || ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(2)} s`);

// ---- one scenario's set-up ----

interface Rig {
  sim: Sim;
  files: KeeperFiles;
  keeper: Keeper;
  sampler: Sampler;
  bots: Record<BotName, Bot>;
  simLog: WriteStream;
  keeperLog: WriteStream;
  /** When every account was armed and every bot alive. */
  readyAt: number;
  close(): Promise<void>;
}

async function rig(name: string, liveness: Liveness | ((sim: Sim) => Liveness), heartbeats = true): Promise<Rig> {
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  const simLog = createWriteStream(join(ROOT, `artifacts/liveness-bench-${name}-sim.log`));
  const keeperLog = createWriteStream(join(ROOT, `artifacts/liveness-bench-${name}-keeper.log`));
  const sim = await startSim(simLog);
  const files = await keeperFiles(sim, typeof liveness === 'function' ? liveness(sim) : liveness);
  const keeper = startKeeper(files, keeperLog);
  const bots = { 'bot-mm': new Bot('bot-mm', files.ops), 'bot-arb': new Bot('bot-arb', files.ops) };
  const sampler = new Sampler(sim);
  const r: Rig = {
    sim,
    files,
    keeper,
    sampler,
    bots,
    simLog,
    keeperLog,
    readyAt: 0,
    close: async () => {
      sampler.stop();
      await Promise.all(Object.values(bots).map((b) => b.stop()));
      await stop(r.keeper.child);
      await stop(sim.child);
      simLog.end();
      keeperLog.end();
    },
  };
  try {
    // the keeper's listener: the bots start as soon as it answers (503 while it starts is retried)
    const t0 = Date.now();
    while (!(await fetch(`${files.ops}/healthz`).then(() => true, () => false))) {
      if (keeper.child.exitCode !== null) throw new Error(`the keeper exited (${keeper.child.exitCode}); see artifacts/liveness-bench-${name}-keeper.log`);
      if (Date.now() - t0 > 30_000) throw new Error('the keeper did not listen in 30 s');
      await sleep(50);
    }
    if (heartbeats) for (const b of Object.values(bots)) b.start();
    sampler.start();
    for (;;) {
      const st = await status(files.ops).catch(() => []);
      if (st.length === NAMES.length && st.every((a) => a.armed && a.bot?.state === 'alive')) break;
      if (Date.now() - t0 > 60_000) throw new Error(`not every account armed with its bot alive in 60 s: ${JSON.stringify(st.map((a) => [a.name, a.phase, a.bot?.state]))}`);
      await sleep(100);
    }
    r.readyAt = Date.now();
    console.error(`  ${name}: every account armed, every bot alive ${s1(r.readyAt - t0)} after the keeper listened`);
    await sleep(WARM_UP_MS);
    return r;
  } catch (e) {
    await r.close();
    throw e;
  }
}

/** The bounds of a and c, from `lastSeen` (the last heartbeat sent, or the last 2xx probe). */
async function silentAndBack(id: string, r: Rig, lastSeen: number, resume: () => void): Promise<void> {
  const silenceAt = lastSeen + SILENCE_MS;
  while (Date.now() < lastSeen + 20_000) await sleep(100);
  const backAt = Date.now();
  resume();
  await sleep(5_000);
  const silent = r.sampler.since(lastSeen, backAt);
  const at1s = silent.find((s) => s['arb-desk'].t >= silenceAt + 1_000);
  const l = at1s ? lead(at1s['arb-desk']) : null;
  row(id, 'arb-desk lead (scheduled time - venue now) 1 s after the silence', s1(l), `<= ${s1(MIN_LEAD_MS + 2_000)}`, l !== null && l <= MIN_LEAD_MS + 2_000);
  const gone = silent.find((s) => s['arb-desk'].orders === 0);
  const goneAfter = gone ? gone['arb-desk'].t - lastSeen : null;
  row(id, 'arb-desk: last heartbeat (or 2xx probe) to its orders at 0 (sampled every 100 ms)', s1(goneAfter), '<= 13.00 s', goneAfter !== null && goneAfter <= 13_000);
  const all = r.sampler.since(r.readyAt);
  const others = all.flatMap((s) => [lead(s['mm-main']), lead(s['mm-sub'])]).filter((x): x is number => x !== null);
  const lowest = others.length ? Math.min(...others) : null;
  row(id, 'mm-main and mm-sub lowest horizon, from all armed to the end', s1(lowest), '>= 20.00 s', lowest !== null && lowest >= MIN_HORIZON_MS && others.length === all.length * 2);
  const back = r.sampler.since(backAt).find((s) => (lead(s['arb-desk']) ?? 0) >= 58_000);
  const backIn = back ? back['arb-desk'].t - backAt : null;
  row(id, 'bot back: until arb-desk lead >= 58 s', s1(backIn), '<= 2.00 s', backIn !== null && backIn <= 2_000);
  // what the keeper said, relative to the last heartbeat
  const said = r.keeper.lines.filter((x) => x.rec.account === 'arb-desk' && ['bot_silent', 'cancel_soon_sent', 'cancel_fired', 'bot_alive'].includes(String(x.rec.event)) && x.at >= lastSeen);
  row(id, 'arb-desk log lines (read at, from the last heartbeat)', said.map((x) => `${String(x.rec.event)} +${((x.at - lastSeen) / 1000).toFixed(2)} s`).join(', ') || 'none');
}

// ---- scenarios ----

async function scenarioA(): Promise<void> {
  const r = await rig('a', { kind: 'heartbeat', onSilence: 'cancel_soon' });
  try {
    await r.bots['bot-arb'].stop();
    const lastBeat = r.bots['bot-arb'].lastOkSentAt!;
    await silentAndBack('a cancel_soon', r, lastBeat, () => r.bots['bot-arb'].start());
    const text = await metrics(r.files.ops);
    row('a cancel_soon', 'arb-desk cancel-soon arms / fired cancels / lapses (metrics)', `${metricSum(text, 'dms_keeper_cancel_soon_total', { account: /^arb-desk$/ })} / ${metricSum(text, 'dms_keeper_cancels_fired_total', { account: /^arb-desk$/ })} / ${metricSum(text, 'dms_keeper_lapses_total', { account: /^arb-desk$/ })}`);
  } finally {
    await r.close();
  }
}

async function scenarioB(): Promise<void> {
  const r = await rig('b', { kind: 'heartbeat', onSilence: 'stop_rearming' });
  try {
    await r.bots['bot-arb'].stop();
    const lastBeat = r.bots['bot-arb'].lastOkSentAt!;
    const silenceAt = lastBeat + SILENCE_MS;
    // a re-arm in flight at the silence lands within the request timeout: read the deadline after it
    while (Date.now() < silenceAt + 500) await sleep(50);
    const atSilence = await venueView(r.sim, ADDR['arb-desk']);
    const deadline = atSilence.timeMs;
    if (deadline === null) throw new Error('b: arb-desk had no scheduled cancel at the silence');
    while (Date.now() < deadline + 3_000 && (r.sampler.samples.at(-1)?.['arb-desk'].orders ?? 1) > 0) await sleep(100);
    await sleep(500);
    const after = r.sampler.since(silenceAt + 500);
    const firstZero = after.find((s) => s['arb-desk'].orders === 0)?.['arb-desk'];
    const lastNonZero = after.filter((s) => s['arb-desk'].orders > 0).at(-1)?.['arb-desk'];
    row('b stop_rearming', 'deadline at the silence - last heartbeat (the last re-arm while alive + 60 s)', s1(deadline - lastBeat));
    const d0 = firstZero ? firstZero.nowMs - deadline : null;
    row('b stop_rearming', 'first sample with orders at 0, venue time - that deadline', d0 === null ? 'never' : `${d0} ms`, '0 to 200 ms', d0 !== null && d0 >= 0 && d0 <= 200);
    row('b stop_rearming', 'last sample with orders, venue time - that deadline', lastNonZero ? `${lastNonZero.nowMs - deadline} ms` : 'n/a');
    const moved = after.filter((s) => s['arb-desk'].timeMs !== null && s['arb-desk'].timeMs !== deadline).length;
    const arms = (await armsAccepted(r.sim, ADDR['arb-desk'])).filter((t) => t > silenceAt);
    row('b stop_rearming', 'scheduled time changed after the silence (samples) / scheduleCancel accepted after it (sim action log)', `${moved} / ${arms.length}`, '0 / 0', moved === 0 && arms.length === 0);
    const st = (await status(r.files.ops)).find((a) => a.name === 'arb-desk')!;
    row('b stop_rearming', '/status arb-desk phase, bot.cancel_soon_deadline', `${st.phase}, ${st.bot?.cancel_soon_deadline ?? 'null'} (venue deadline ${new Date(deadline).toISOString()})`);
  } finally {
    await r.close();
  }
}

async function scenarioC(failure: '500' | 'hang'): Promise<void> {
  const health = new HealthServer();
  await health.start();
  const id = `c probe ${failure === '500' ? '500' : 'hanging'}`;
  try {
    const r = await rig(`c${failure}`, { kind: 'probe', urls: { 'bot-mm': health.url('bot-mm'), 'bot-arb': health.url('bot-arb') } }, false);
    try {
      health.set('bot-arb', failure);
      const lastGood = health.lastOkAt['bot-arb']!;
      await silentAndBack(id, r, lastGood, () => health.set('bot-arb', 'ok'));
      const text = await metrics(r.files.ops);
      const probes = ['ok', 'http_status', 'timeout', 'error'].map((res) => `${res} ${metricSum(text, 'dms_keeper_bot_probes_total', { account: /^arb-desk$/, result: new RegExp(`^${res}$`) })}`);
      row(id, 'arb-desk probes by result (metrics)', probes.join(', '));
      row(id, 'health URL answers', [...health.answered].map(([k, v]) => `${k} ${v}`).join(', '));
    } finally {
      await r.close();
    }
  } finally {
    await health.close();
  }
}

async function scenarioD(): Promise<void> {
  const r = await rig('d', { kind: 'heartbeat', onSilence: 'cancel_soon' });
  try {
    const killedAt = Date.now();
    await stop(r.keeper.child, 'SIGKILL');
    await sleep(2_000);
    const restartAt = Date.now();
    r.keeper = startKeeper(r.files, r.keeperLog);
    await sleep(60_000);
    const all = r.sampler.since(r.readyAt);
    const minOrders = Object.fromEntries(NAMES.map((n) => [n, Math.min(...all.map((s) => s[n].orders))]));
    row('d restart', 'samples from all armed (kill at +' + ((killedAt - r.readyAt) / 1000).toFixed(1) + ' s, restart 2 s later, 60 s after)', String(all.length));
    row('d restart', 'lowest open orders per account', NAMES.map((n) => `${n} ${minOrders[n]}`).join(', '), '> 0 each', NAMES.every((n) => minOrders[n]! > 0));
    const leads = all.flatMap((s) => NAMES.map((n) => lead(s[n])));
    const lowest = leads.some((x) => x === null) ? null : Math.min(...(leads as number[]));
    row('d restart', 'lowest horizon of any account', s1(lowest), '>= 20.00 s', lowest !== null && lowest >= MIN_HORIZON_MS);
    const silentLines = r.keeper.lines.filter((x) => x.rec.event === 'bot_silent' || x.rec.event === 'cancel_soon_sent');
    row('d restart', "new keeper's bot_silent / cancel_soon_sent lines", String(silentLines.length), '0', silentLines.length === 0);
    const firstArm = await Promise.all(NAMES.map(async (n) => (await armsAccepted(r.sim, ADDR[n])).find((t) => t > restartAt)));
    row('d restart', 'restart to the first arm accepted, per account', NAMES.map((n, i) => `${n} ${s1(firstArm[i] === undefined ? null : firstArm[i]! - restartAt)}`).join(', '));
    row('d restart', 'heartbeat answers (bot-mm; bot-arb)', ['bot-mm', 'bot-arb'].map((b) => [...r.bots[b as BotName].codes].map(([k, v]) => `${k} x${v}`).join(' ')).join('; '));
  } finally {
    await r.close();
  }
}

interface FloodSpec {
  origin: string;
  token: string;
  account: string;
  rate: number;
  seconds: number;
  connections: number;
}

interface FloodResult {
  sent: number;
  completed: number;
  seconds: number;
  codes: Record<string, number>;
  /** Slots given up because 2 x connections were already in flight. */
  skipped: number;
  perSecond: number[];
}

/** The flood, in a worker thread: a paced loop over an undici Pool (keep-alive, no pipelining). */
async function flood(spec: FloodSpec): Promise<FloodResult> {
  const pool = new Pool(spec.origin, { connections: spec.connections, pipelining: 1 });
  const body = JSON.stringify({ accounts: [spec.account] });
  const headers = { authorization: `Bearer ${spec.token}`, 'content-type': 'application/json' };
  const codes: Record<string, number> = {};
  const perSecond: number[] = [];
  const maxInFlight = 2 * spec.connections;
  let slot = 0;
  let sent = 0;
  let completed = 0;
  let inFlight = 0;
  let skipped = 0;
  const t0 = performance.now();
  const end = t0 + spec.seconds * 1000;
  const one = (): void => {
    inFlight++;
    sent++;
    pool
      .request({ path: '/heartbeat', method: 'POST', headers, body })
      .then(async (r) => {
        await r.body.dump();
        codes[r.statusCode] = (codes[r.statusCode] ?? 0) + 1;
      })
      .catch((e: unknown) => {
        const k = (e as { code?: string }).code ?? 'error';
        codes[k] = (codes[k] ?? 0) + 1;
      })
      .finally(() => {
        inFlight--;
        completed++;
        const sec = Math.floor((performance.now() - t0) / 1000);
        perSecond[sec] = (perSecond[sec] ?? 0) + 1;
      });
  };
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      if (now >= end) {
        if (inFlight === 0) return resolve();
        return void setTimeout(tick, 5);
      }
      const due = Math.floor(((now - t0) / 1000) * spec.rate);
      while (slot < due && inFlight < maxInFlight) {
        slot++;
        one();
      }
      // behind by more than 100 ms of the rate: those slots are given up (and counted), not bunched
      if (due - slot > spec.rate / 10) {
        skipped += due - slot;
        slot = due;
      }
      setTimeout(tick, 1);
    };
    tick();
  });
  await pool.close();
  return { sent, completed, seconds: (performance.now() - t0) / 1000, codes, skipped, perSecond: perSecond.slice(0, spec.seconds) };
}

function runFloodWorker(spec: FloodSpec): Promise<FloodResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: spec });
    w.once('message', (m: FloodResult) => resolve(m));
    w.once('error', reject);
    w.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`flood worker exited ${code}`))));
  });
}

/** A raw request (node:http): a 1 MB body with a declared length, whatever the server does with it. */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number | string; body: string }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = http.request({ method: 'POST', host: u.hostname, port: u.port, path: u.pathname, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: e.code ?? 'error', body: '' }));
    req.end(body);
  });
}

interface MemSample {
  t: number;
  rss: number;
}

async function sampleRss(ops: string, ms: number): Promise<MemSample[]> {
  const out: MemSample[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const t = Date.now();
    const text = await metrics(ops).catch(() => '');
    const rss = metricSum(text, 'process_resident_memory_bytes');
    if (rss > 0) out.push({ t, rss });
    await sleep(Math.max(0, t + 1_000 - Date.now()));
  }
  return out;
}

function lagOver(before: string, after: string): { count: number; over1s: number; p99: string } {
  const hist = (text: string): Array<[number, number]> =>
    [...text.matchAll(/^dms_keeper_arm_lag_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)].map((m) => [m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  const b = hist(before);
  const d = hist(after).map(([le, c], i) => [le, c - (b[i]?.[1] ?? 0)] as [number, number]);
  const count = d.at(-1)?.[1] ?? 0;
  const le1 = d.find(([le]) => le === 1)?.[1] ?? 0;
  const p99 = count === 0 ? 'n/a' : `<= ${d.find(([, c]) => c >= 0.99 * count)![0] * 1000} ms`;
  return { count, over1s: count - le1, p99 };
}

/** User + system CPU seconds of a process, every thread (/proc/PID/stat, in USER_HZ = 100). */
async function procCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MB`;

async function scenarioE(): Promise<void> {
  const r = await rig('e', { kind: 'heartbeat', onSilence: 'cancel_soon' });
  const id = 'e hostile';
  try {
    // the refusals, with the bots paused so that /status stands still
    await Promise.all(Object.values(r.bots).map((b) => b.stop()));
    const before = await status(r.files.ops);
    const m0 = await metrics(r.files.ops);
    const post = (token: string, body: string) => rawPost(`${r.files.ops}/heartbeat`, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body);
    const wrong = await post('wrong-token-0123456789abcdef', JSON.stringify({ accounts: ['arb-desk'] }));
    const unknown = await post(TOKENS['bot-mm'], JSON.stringify({ accounts: ['nobody'] }));
    const huge = await post(TOKENS['bot-arb'], JSON.stringify({ accounts: ['arb-desk'], pad: 'x'.repeat(2 ** 20) }));
    const after = await status(r.files.ops);
    const m1 = await metrics(r.files.ops);
    for (const b of Object.values(r.bots)) b.start();
    const bots = (st: StatusAccount[]) => JSON.stringify(st.map((a) => ({ name: a.name, phase: a.phase, armed: a.armed, bot: a.bot })));
    const unchanged = bots(before) === bots(after);
    const refused = (reason: string) => metricSum(m1, 'dms_keeper_heartbeats_refused_total', { reason: new RegExp(`^${reason}$`) }) - metricSum(m0, 'dms_keeper_heartbeats_refused_total', { reason: new RegExp(`^${reason}$`) });
    const accepted = metricSum(m1, 'dms_keeper_heartbeats_total') - metricSum(m0, 'dms_keeper_heartbeats_total');
    row(id, 'wrong token', `${wrong.status} ${wrong.body.trim()}`, '401', wrong.status === 401);
    row(id, 'unknown account', `${unknown.status} ${unknown.body.trim()}`, '404', unknown.status === 404);
    row(id, '1 MB body', `${huge.status} ${huge.body.trim()}`, '413', huge.status === 413);
    row(id, "/status accounts' phase, armed and bot unchanged; heartbeats accepted meanwhile", `${unchanged ? 'unchanged' : 'CHANGED'}; ${accepted}`, 'unchanged; 0', unchanged && accepted === 0);
    row(id, 'refusals counted (unauthorized, unknown_account, too_large)', `${refused('unauthorized')}, ${refused('unknown_account')}, ${refused('too_large')}`);

    // 60 s quiet, then 60 s of flood
    const q0 = await metrics(r.files.ops);
    const quietFrom = Date.now();
    const cpuQ0 = await procCpuSeconds(r.keeper.child.pid!);
    const quiet = await sampleRss(r.files.ops, 60_000);
    const q1 = await metrics(r.files.ops);
    const cpuQ1 = await procCpuSeconds(r.keeper.child.pid!);
    const lateQuiet = r.keeper.lines.filter((x) => x.rec.event === 'arm_late' && x.at >= quietFrom).length;
    const floodFrom = Date.now();
    const spec: FloodSpec = { origin: r.files.ops, token: TOKENS['bot-arb'], account: 'arb-desk', rate: 5_000, seconds: 60, connections: 50 };
    const [res, loud] = await Promise.all([runFloodWorker(spec), sampleRss(r.files.ops, 60_000)]);
    const floodTo = Date.now();
    const cpuF1 = await procCpuSeconds(r.keeper.child.pid!);
    const f1 = await metrics(r.files.ops);
    const lq = lagOver(q0, q1);
    const lf = lagOver(q1, f1);
    const lateFlood = r.keeper.lines.filter((x) => x.rec.event === 'arm_late' && x.at >= floodFrom && x.at <= floodTo + 2_000);
    row(id, 'flood: achieved rate (answers / s), sent, slots given up', `${(res.completed / res.seconds).toFixed(0)}/s of ${spec.rate}/s (${res.completed} in ${res.seconds.toFixed(1)} s; per second min ${Math.min(...res.perSecond)}, max ${Math.max(...res.perSecond)}), ${res.sent} sent, ${res.skipped} given up`);
    row(id, 'flood: status mix', Object.entries(res.codes).map(([k, v]) => `${k} ${v} (${((v / res.completed) * 100).toFixed(1)}%)`).join(', '));
    row(id, 'quiet 60 s: re-arms (histogram) / over 1 s late / p99 / arm_late lines', `${lq.count} / ${lq.over1s} / ${lq.p99} / ${lateQuiet}`);
    row(id, 'flood 60 s: re-arms (histogram) / over 1 s late / p99 / arm_late lines', `${lf.count} / ${lf.over1s} / ${lf.p99} / ${lateFlood.length}`, '0 over 1 s, 0 arm_late', lf.over1s === 0 && lateFlood.length === 0);
    // the venue's view: gaps between accepted arms of each account during the flood
    const gaps: string[] = [];
    let worst = 0;
    for (const n of NAMES) {
      const arms = (await armsAccepted(r.sim, ADDR[n])).filter((t) => t >= floodFrom - REARM_S * 1000 && t <= floodTo);
      const g = arms.slice(1).map((t, i) => t - arms[i]!);
      const max = g.length ? Math.max(...g) : null;
      if (max !== null) worst = Math.max(worst, max);
      gaps.push(`${n} ${g.length} gaps, max ${s1(max)}`);
    }
    row(id, 'flood: gaps between accepted arms at the venue (period 15 s)', gaps.join('; '), `<= ${REARM_S + 1}.00 s`, worst <= (REARM_S + 1) * 1000);
    const peak = (xs: MemSample[]) => Math.max(...xs.map((x) => x.rss));
    const mean = (xs: MemSample[]) => xs.reduce((s, x) => s + x.rss, 0) / xs.length;
    const grew = peak(loud) - mean(quiet);
    row(id, 'RSS quiet: mean / peak; flood: mean / peak (1 s samples of process_resident_memory_bytes)', `${mb(mean(quiet))} / ${mb(peak(quiet))}; ${mb(mean(loud))} / ${mb(peak(loud))}`);
    row(id, 'RSS flood peak - quiet mean', mb(grew), '<= 50 MB', grew <= 50 * 2 ** 20);
    row(id, 'keeper CPU, % of a core (/proc): quiet / flood', `${(((cpuQ1 - cpuQ0) / ((floodFrom - quietFrom) / 1000)) * 100).toFixed(1)} / ${(((cpuF1 - cpuQ1) / ((floodTo - floodFrom) / 1000)) * 100).toFixed(1)}`);
    const silent = r.keeper.lines.filter((x) => x.rec.event === 'bot_silent' && x.at >= quietFrom).length;
    row(id, 'bot_silent lines during quiet and flood; regular heartbeats (bot-mm; bot-arb)', `${silent}; ${['bot-mm', 'bot-arb'].map((b) => [...r.bots[b as BotName].codes].map(([k, v]) => `${k} x${v}`).join(' ')).join('; ')}`);
  } finally {
    await r.close();
  }
}

// ---- main ----

const SCENARIOS = { a: scenarioA, b: scenarioB, c500: () => scenarioC('500'), chang: () => scenarioC('hang'), d: scenarioD, e: scenarioE } as const;
type ScenarioId = keyof typeof SCENARIOS;

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { scenario: { type: 'string' } } });
  const want = (values.scenario ?? 'a,b,c,d,e').split(',').flatMap((s) => (s === 'c' ? ['c500', 'chang'] : [s]));
  const unknown = want.filter((s) => !(s in SCENARIOS));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}: choose from a, b, c (c500, chang), d, e`);
  const t0 = Date.now();
  const crashed: string[] = [];
  for (const id of want as ScenarioId[]) {
    console.error(`bench:liveness: scenario ${id} ...`);
    try {
      await SCENARIOS[id]();
    } catch (e) {
      crashed.push(id);
      row(id, 'did not run to its end', (e as Error).message, 'runs', false);
    }
  }
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const lines = [
    '# Bot liveness, built processes (npm run bench:liveness)',
    '',
    `Run on ${new Date().toISOString()} (${((Date.now() - t0) / 60_000).toFixed(1)} min), scenarios ${want.join(', ')}; ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}); Node ${process.version}; dms-keeper ${pkg.version}.`,
    `\`dms-keeper simulate\` and \`dms-keeper run\` as child processes on loopback; mm-main, mm-sub (bot-mm) and arb-desk (bot-arb); deadline ${DEADLINE_S} s, re-arm ${REARM_S} s, min horizon ${MIN_HORIZON_MS / 1000} s, silence ${SILENCE_MS / 1000} s. Heartbeats from the bench, one a second per bot; the venue sampled every 100 ms (times are when the sample's answer came).`,
    '',
    '| scenario | figure | measured | bound | within |',
    '|---|---|---|---|---|',
    ...rows.map((x) => `| ${x.scenario} | ${x.figure} | ${x.value.replace(/\|/g, '\\|')} | ${x.bound || '-'} | ${x.ok === null ? '-' : x.ok ? 'yes' : '**no**'} |`),
  ];
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  await writeFile(join(ROOT, 'artifacts/liveness-bench.md'), lines.join('\n') + '\n');
  console.log(lines.join('\n'));
  const missed = rows.filter((x) => x.ok === false);
  if (missed.length) console.error(`FAIL: ${missed.length} bound(s) missed: ${missed.map((x) => `${x.scenario}: ${x.figure}`).join('; ')}`);
  return missed.length === 0 && crashed.length === 0 ? 0 : 1;
}

if (isMainThread) runMain('bench:liveness', main);
else
  void flood(workerData as FloodSpec).then(
    (r) => parentPort!.postMessage(r),
    (e: unknown) => {
      throw e;
    },
  );
