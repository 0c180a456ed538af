/**
 * Built processes for bench/venue-source.ts: the compiled simulator (`dist/src/main.js simulate`)
 * and the compiled keeper (`dist/src/main.js run`), each a child process on loopback, and what the
 * benchmark reads of them:
 *  - the simulator's request log (its stdout, one JSON line per request with its status): the 429s
 *    and 503s it answered, by path family, without touching its code;
 *  - its admin API (`/_sim/state?account=`, `/_sim/actions`, `/_sim/faults`, `/_sim/services`);
 *  - the venue's own view of an account (`POST /info` frontendOpenOrders, clearinghouseState,
 *    spotClearinghouseState) and the service's listing (`GET /v1/accounts/{a}/orders|positions`),
 *    read from ANOTHER loopback address (127.0.0.2 by default): the simulator's IP weight budget
 *    is per client IP, so these checks never spend the keeper's 1,200 a minute;
 *  - the keeper's /status and /metrics.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { join, resolve } from 'node:path';

/** The repository (this file runs from bench/ under vitest and from dist/bench/ when built). */
export const ROOT = existsSync(resolve(import.meta.dirname, '../package.json')) ? resolve(import.meta.dirname, '..') : resolve(import.meta.dirname, '../..');
export const MAIN = join(ROOT, 'dist/src/main.js');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The tests' free-port helper (bench already runs on test/support, built into dist/test/support). */
export { freePort } from '../test/support/cli.js';

/** The environment of a child: no DMS_KEEPER_* override, no systemd variables, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('DMS_KEEPER_') && !['NOTIFY_SOCKET', 'STATE_DIRECTORY', 'CREDENTIALS_DIRECTORY'].includes(k)) env[k] = v;
  return { ...env, ...extra };
}

/** Splits a child's stdout into lines, appending every chunk to `logFile`. */
function lineReader(child: ChildProcess, logFile: string, onLine: (line: string) => void): void {
  let partial = '';
  let writes = Promise.resolve();
  child.stdout!.on('data', (d: Buffer) => {
    const text = d.toString();
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    const kept: string[] = [];
    for (const line of lines) {
      // The benchmark's own admin polling (many a second) is left out of the file.
      if (!line.includes('"url":"/_sim/')) kept.push(line);
      onLine(line);
    }
    if (kept.length) writes = writes.then(() => appendFile(logFile, kept.join('\n') + '\n')).catch(() => undefined);
  });
  child.stderr!.on('data', (d: Buffer) => void appendFile(logFile, d.toString()).catch(() => undefined));
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

// ---- the simulator process ----

export type PathFamily = 'info' | 'exchange' | 'rest' | 'ws';

export interface SimAnswer {
  /** Epoch ms (the simulator's log time). */
  atMs: number;
  family: PathFamily;
  status: number;
}

export interface SimProc {
  child: ChildProcess;
  baseUrl: string;
  wsUrl: string;
  logFile: string;
  /** Every answer the simulator logged to a venue or service path (the admin API left out). */
  answers: SimAnswer[];
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

const familyOf = (url: string): PathFamily | undefined =>
  url === '/info' ? 'info' : url === '/exchange' ? 'exchange' : url.startsWith('/ws') ? 'ws' : url.startsWith('/v1') ? 'rest' : undefined;

/** `dms-keeper simulate --port 0 --budget <budget>`, its request log read as it goes. */
export async function startSimProcess(dir: string, budget: string): Promise<SimProc> {
  await mkdir(dir, { recursive: true });
  const logFile = join(dir, 'simulator.log');
  const child = spawn(process.execPath, [MAIN, 'simulate', '--port', '0', '--budget', budget], {
    cwd: ROOT,
    // info: one line per request with its status (how the 429s are counted)
    env: childEnv({ DMS_KEEPER_LOG__LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const answers: SimAnswer[] = [];
  let baseUrl: string | undefined;
  lineReader(child, logFile, (line) => {
    const m = /^venue simulator on (http:\/\/[^\s]+)/.exec(line);
    if (m) baseUrl = m[1];
    if (!line.startsWith('{') || !line.includes('"msg":"request"')) return;
    try {
      const j = JSON.parse(line) as { time?: string; url?: string; status?: number };
      const family = familyOf(String(j.url ?? '').split('?')[0]!);
      if (family && typeof j.status === 'number') answers.push({ atMs: Date.parse(String(j.time)), family, status: j.status });
    } catch {
      // not JSON
    }
  });
  const t0 = Date.now();
  while (baseUrl === undefined) {
    if (child.exitCode !== null) throw new Error(`the simulator exited (${child.exitCode}); see ${logFile}`);
    if (Date.now() - t0 > 30_000) throw new Error(`the simulator did not start in 30 s; see ${logFile}`);
    await sleep(50);
  }
  const url = baseUrl;
  return { child, baseUrl: url, wsUrl: url.replace(/^http/, 'ws'), logFile, answers, exited, stop: () => stopChild(child, exited) };
}

/**
 * One HTTP request (node:http, which binds `localAddress`: undici's `connect.localAddress` does not),
 * its status and its body parsed as JSON when it is JSON.
 */
function json(method: string, url: string, body?: unknown, via?: { agent: http.Agent; localAddress: string }): Promise<{ status: number; body: unknown }> {
  return new Promise((res, rej) => {
    const u = new URL(url);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        method,
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        timeout: 10_000,
        ...(via ? { agent: via.agent, localAddress: via.localAddress } : {}),
      },
      (m) => {
        let text = '';
        m.setEncoding('utf8');
        m.on('data', (d: string) => (text += d));
        m.on('error', rej);
        m.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // a text body
          }
          res({ status: m.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timed out`)));
    req.on('error', rej);
    req.end(payload);
  });
}

/** One admin call; throws unless 2xx. */
export async function admin(sim: { baseUrl: string }, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const r = await json(method, `${sim.baseUrl}/_sim/${path}`, body);
  if (r.status < 200 || r.status >= 300) throw new Error(`${method} /_sim/${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export interface SimAccountView {
  nowMs: number;
  timeMs: number | null;
  triggersToday: number;
  /** The service's listing (not the venue-only orders). */
  serviceOrders: number;
}

export async function simAccount(sim: { baseUrl: string }, address: string): Promise<SimAccountView> {
  const b = (await admin(sim, 'GET', `state?account=${address}`)) as { nowMs: number; account: { schedule: { timeMs: number | null; triggersToday: number }; openOrders: number } };
  return { nowMs: b.nowMs, timeMs: b.account.schedule.timeMs, triggersToday: b.account.schedule.triggersToday, serviceOrders: b.account.openOrders };
}

export interface ActionEntry {
  atMs: number;
  via: 'rest' | 'exchange';
  type: string;
  account?: string;
  result: string;
}

export async function simActions(sim: { baseUrl: string }): Promise<ActionEntry[]> {
  return ((await admin(sim, 'GET', 'actions')) as { actions: ActionEntry[] }).actions;
}

/** Counts as the keeper should have them: open orders, and positions (perp size not 0, spot tokens held other than USDC). */
export interface Counts {
  orders: number;
  positions: number;
}

/**
 * Reads the venue's and the service's views from another loopback address than the keeper's, so
 * the checks spend none of the keeper's per-IP budget (its 429s stay the keeper's).
 */
export class Probe {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  /** 429s this probe got (it should get none: its reads are spaced a minute apart). */
  refused = 0;
  /** Weight this probe spent on /info. */
  weight = 0;
  /** Requests this probe sent, by path family (the simulator's request log counts them too). */
  readonly requests = { info: 0, rest: 0 };

  constructor(
    private readonly baseUrl: string,
    readonly localAddress = '127.0.0.2',
  ) {}

  private async post(body: Record<string, unknown>, weight: number): Promise<unknown> {
    this.weight += weight;
    this.requests.info++;
    const r = await json('POST', `${this.baseUrl}/info`, body, { agent: this.agent, localAddress: this.localAddress });
    if (r.status === 429) this.refused++;
    if (r.status !== 200) throw new Error(`probe /info ${String(body.type)}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** What the venue's /info shows: every open order the scheduled cancel hits, and the positions. */
  async venue(address: string): Promise<Counts & { orderCoins: string[] }> {
    const orders = (await this.post({ type: 'frontendOpenOrders', user: address }, 20)) as Array<{ coin: string }>;
    const ch = (await this.post({ type: 'clearinghouseState', user: address }, 2)) as { assetPositions: Array<{ position: { szi: string } }> };
    const spot = (await this.post({ type: 'spotClearinghouseState', user: address }, 2)) as { balances: Array<{ coin: string; total: string }> };
    const perp = ch.assetPositions.filter((p) => Number(p.position.szi) !== 0).length;
    const tokens = spot.balances.filter((b) => b.coin !== 'USDC' && Number(b.total) !== 0).length;
    return { orders: orders.length, positions: perp + tokens, orderCoins: orders.map((o) => o.coin) };
  }

  /** What the service lists (REST: not counted in the venue's IP weight). */
  async service(address: string): Promise<Counts> {
    const count = async (what: 'orders' | 'positions'): Promise<number> => {
      this.requests.rest++;
      const r = await json('GET', `${this.baseUrl}/v1/accounts/${address}/${what}?limit=100`, undefined, { agent: this.agent, localAddress: this.localAddress });
      if (r.status !== 200) throw new Error(`probe GET ${what}: ${r.status}`);
      const data = (r.body as { data: Array<{ quantity?: string }> }).data;
      return what === 'positions' ? data.filter((p) => Number(p.quantity ?? '1') !== 0).length : data.length;
    };
    return { orders: await count('orders'), positions: await count('positions') };
  }

  close(): void {
    this.agent.destroy();
  }
}

// ---- the keeper process ----

/** Keeper log events kept whole (the rest are only counted, and in the log file). */
const KEPT = new Set(['start_complete', 'cadence', 'budget_mode', 'read_failed', 'read_shed', 'cancel_fired', 'arm_late', 'rate_limited', 'error', 'http_error', 'provision_warning', 'below_volume_gate', 'clock_skew', 'notifications_unavailable']);

export interface KeeperProc {
  child: ChildProcess;
  ops: string;
  logFile: string;
  /** Every log line's `event`, counted; `level>=50` lines counted as `level:error`. */
  eventCounts: Map<string, number>;
  events: Array<Record<string, unknown>>;
  /** Every `read_shed` line (debug level): when (epoch ms), which account, which read. */
  sheds: Array<{ atMs: number; account: string; what: string }>;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface KeeperDir {
  dir: string;
  creds: string;
}

/** Writes keys (mode 0600) into `dir/creds`: the benchmark's public, throwaway keys. Never committed (a temp dir). */
export async function writeKeys(dir: string, keys: Record<string, string>): Promise<KeeperDir> {
  const creds = join(dir, 'creds');
  await mkdir(creds, { recursive: true });
  for (const [name, key] of Object.entries(keys)) {
    const f = join(creds, name);
    await writeFile(f, `${key}\n`, { mode: 0o600 });
    await chmod(f, 0o600);
  }
  return { dir, creds };
}

export async function startKeeperProcess(d: KeeperDir, config: string, opsPort: number): Promise<KeeperProc> {
  const logFile = join(d.dir, 'keeper.log');
  const child = spawn(process.execPath, [MAIN, 'run', '--config', config], {
    cwd: ROOT,
    env: childEnv({ CREDENTIALS_DIRECTORY: d.creds }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const eventCounts = new Map<string, number>();
  const events: Array<Record<string, unknown>> = [];
  const sheds: KeeperProc['sheds'] = [];
  lineReader(child, logFile, (line) => {
    if (!line.startsWith('{')) return;
    try {
      const j = JSON.parse(line) as Record<string, unknown>;
      const ev = typeof j.event === 'string' ? j.event : undefined;
      if (ev) eventCounts.set(ev, (eventCounts.get(ev) ?? 0) + 1);
      if (typeof j.level === 'number' && j.level >= 50) eventCounts.set('level:error', (eventCounts.get('level:error') ?? 0) + 1);
      if (ev && KEPT.has(ev) && ev !== 'read_shed' && events.length < 400) events.push(j);
      if (ev === 'read_shed') sheds.push({ atMs: Date.parse(String(j.time)), account: String(j.account), what: String(j.what) });
    } catch {
      // not JSON
    }
  });
  return { child, ops: `http://127.0.0.1:${opsPort}`, logFile, eventCounts, events, sheds, exited, stop: () => stopChild(child, exited, 20_000) };
}

export async function getJson(url: string): Promise<unknown> {
  try {
    const r = await json('GET', url);
    return r.body;
  } catch {
    return undefined;
  }
}

export async function getText(url: string): Promise<string | undefined> {
  try {
    const r = await json('GET', url);
    return typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
  } catch {
    return undefined;
  }
}

/** Sum of a metric's samples whose labels match every `labels` entry (a regex each). */
export function metricSum(text: string, name: string, labels: Record<string, RegExp> = {}): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? ([0-9.eE+-]+)$`, 'gm'))) {
    const ls = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, re]) => re.test(ls[k] ?? ''))) sum += Number(m[2]);
  }
  return sum;
}

/** `dms_keeper_venue_requests_total` by endpoint and code. */
export function requestsByEndpoint(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const m of text.matchAll(/^dms_keeper_venue_requests_total\{endpoint="([^"]+)",code="([^"]+)"\} (\d+)/gm)) {
    (out[m[1]!] ??= {})[m[2]!] = Number(m[3]);
  }
  return out;
}

/** `dms-keeper check-config --config FILE`: its exit code and output (the plan). */
export async function checkConfig(d: KeeperDir, config: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, 'check-config', '--config', config], { cwd: ROOT, env: childEnv({ CREDENTIALS_DIRECTORY: d.creds }), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
