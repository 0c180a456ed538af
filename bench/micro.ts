/**
 * `npm run bench:micro [-- --only scrape,sign,budget-save,arm,plan,settings,wake]`: the keeper's hot paths one at a
 * time, in this process, for claims about one of them (the whole keeper's CPU per arm is
 * `npm run bench`'s). Each prints its CPU per operation (user + system over the repetitions, after
 * a warm-up), so a change to one path is measured on that path alone, without the noise of a
 * two-process run. Nothing here is judged: it exits 0 unless a path throws.
 *
 * - scrape: a /metrics body at 10,000 accounts with every per-account series set
 *   (KeeperRegistry.metricsPieces, the body http-server.ts writes);
 * - sign: a scheduleCancel signed by an agent (actions.ts buildScheduleCancel, libsecp256k1 when it loads);
 * - budget-save: the budget log of a 10,000-account keeper's windows (about 14,550 admissions),
 *   counted and written as the keeper does every 2 s (state/budget-log.ts);
 * - arm: one arm's decode of the venue's answer in the `realistic` profile's shape (nulls, extra keys);
 * - plan: the budget plan (plan/budget-plan.ts planBudget) of the 50,000-account bench row, steady and
 *   in its cold start: the keeper makes it on its one thread at start-up and when the cold start ends;
 * - settings: a new period handed to 50,000 armed runners (switch/account-runner.ts updateSettings) in
 *   one loop: what a re-plan hands out (account/cadence-control.ts handOut, HAND_OUT_SLICE a turn);
 * - wake: what the machine charges for the event loop waking from idle: a timer alone, then an arm's
 *   request (venue/http.ts HttpTransport, to a server in a child process that answers as the venue
 *   does) sent one at a time 10 ms apart, against ten at a time 100 ms apart (the same pace). Each
 *   lone request costs two wake-ups (its timer, its answer); the difference is the floor under
 *   `npm run bench`'s CPU per arm on that machine, whatever the keeper does per arm. Last, the same
 *   request's bytes written by hand on one kept-alive socket, alone every 10 ms: the same wake-ups
 *   without an HTTP client, so what is left between it and the lone request is the client's (undici
 *   and HttpTransport) on that machine.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createMetrics } from '../src/obs/metrics.js';
import { AccountFamily, KeeperRegistry } from '../src/obs/account-series.js';
import { buildScheduleCancel } from '../src/venue/actions.js';
import { loadSigningCurve } from '../src/venue/signing/curve.js';
import { signerFromPrivateKey } from '../src/venue/signing/signer.js';
import { newScope, recentCounts } from '../src/budget/admission.js';
import { BudgetLog, type RecentCounts } from '../src/state/budget-log.js';
import { decodeActionResponse } from '../src/venue/decode.js';
import { planBudget, type PlanAccount } from '../src/plan/budget-plan.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../src/venue/facts.js';
import { AccountRunner } from '../src/switch/account-runner.js';
import type { SwitchSettings } from '../src/switch/switch-machine.js';
import { systemClock } from '../src/time/clock.js';
import { VenueClock } from '../src/time/venue-clock.js';
import { HttpTransport } from '../src/venue/http.js';
import { runMain } from './results.js';

/** CPU (user + system) of `reps` calls of `fn`, after `warm` calls: ms each. */
async function cpuPerCall(reps: number, warm: number, fn: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < warm; i++) await fn(i);
  const c0 = process.cpuUsage();
  for (let i = 0; i < reps; i++) await fn(i);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / reps;
}

async function scrape(): Promise<string> {
  const registry = new KeeperRegistry();
  const m = createMetrics({ version: 'bench', defaultMetrics: false, registry });
  const families = Object.values(m).filter((v): v is AccountFamily<string> => v instanceof AccountFamily);
  for (let i = 0; i < 10_000; i++) {
    for (const f of families) {
      // Every series of every family: the largest body the keeper can serve at 10,000 accounts.
      const labels = { account: `acct-${i}`, result: 'ok', source: 'service' };
      if (f.type === 'counter') f.inc(labels, i % 7);
      else f.set(labels, i * 1.5 + 0.25);
    }
  }
  let bytes = 0;
  const ms = await cpuPerCall(10, 3, async () => {
    bytes = 0;
    for await (const p of registry.metricsPieces()) bytes += p.length;
  });
  return `scrape: ${ms.toFixed(1)} ms CPU a scrape of ${(bytes / 1e6).toFixed(1)} MB (10,000 accounts, ${families.length} per-account families)`;
}

async function sign(): Promise<string> {
  const { curve } = loadSigningCurve();
  const signer = signerFromPrivateKey(`0x${'11'.repeat(32)}`, 'bench', curve);
  const t0 = 1_764_600_000_000;
  const ms = await cpuPerCall(20_000, 2_000, (i) => buildScheduleCancel({ signer, network: 'mainnet', nonce: t0 + i, timeMs: t0 + 60_000 + i, ...(i % 2 ? { vaultAddress: `0x${'ab'.repeat(20)}` } : {}) }));
  return `sign: ${(ms * 1000).toFixed(1)} µs CPU a signed scheduleCancel (${curve.name})`;
}

async function budgetSave(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dmsk-micro-'));
  const log = new BudgetLog(BudgetLog.fileIn(dir));
  const now = Date.now();
  const scope = (n: number, limit: number) => {
    const s = newScope({ limit, windowMs: 60_000 });
    s.log = Array.from({ length: n }, (_, i) => now - 60_000 + (i * 60_000) / n);
    return s;
  };
  const scopes = { global: scope(7_300, 24_000), schedule_cancel: scope(5_600, 6_000), exchange: scope(1_650, 6_000) };
  const ms = await cpuPerCall(50, 5, async () => {
    const counts: RecentCounts = {};
    for (const [k, s] of Object.entries(scopes)) counts[k] = recentCounts(s, now).map(([t, c]): [number, number] => [t + 1, c]);
    await log.save(counts, now);
  });
  return `budget-save: ${ms.toFixed(2)} ms CPU a save (14,550 admissions in three windows)`;
}

async function arm(): Promise<string> {
  // The answer to an arm as the `realistic` profile writes it: every optional field null, keys the spec does not name.
  const body = Buffer.from(JSON.stringify({ status: 'ok', response: { type: 'default', data: null, extra_field: { nested: [1, 2, 3] } }, request_id: null, served_by: 'sim-1', latency_ms: null }));
  const res = { status: 200, headers: { 'content-type': 'application/json' }, body, latencyMs: 1, sentMonoMs: 0, recvMonoMs: 1 };
  const ms = await cpuPerCall(50_000, 5_000, () => decodeActionResponse('POST /v1/trading/orders/schedule-cancel', res));
  return `arm: ${(ms * 1000).toFixed(1)} µs CPU to decode an arm's answer`;
}

async function plan(): Promise<string> {
  const accounts: PlanAccount[] = Array.from({ length: 50_000 }, () => ({ deadlineMs: 279_000, rearmEveryMs: 15_000, minHorizonMs: 20_000, path: 'rest', venue: HYPERLIQUID_SWITCH_FACTS, priority: 0 }));
  const limits = { global: 800, rest: 200, exchange: 200 };
  const steady = await cpuPerCall(10, 3, () => planBudget({ accounts, limits, provisioning: null }));
  const cold = await cpuPerCall(10, 3, () => planBudget({ accounts, limits, provisioning: { approvalsLeft: 25_000, firstArmsLeft: 25_000 } }));
  return `plan: ${steady.toFixed(1)} ms CPU a steady plan, ${cold.toFixed(1)} ms in the cold start (50,000 accounts, B = 200/s)`;
}

async function settings(): Promise<string> {
  const n = 50_000;
  const base: SwitchSettings = { venue: HYPERLIQUID_SWITCH_FACTS, deadlineMs: 279_000, rearmEveryMs: 258_000, minHorizonMs: 20_000, armWhen: 'always', onShutdown: 'keep', path: 'rest' };
  const clock = new VenueClock(systemClock());
  const runners = Array.from({ length: n }, (_, i) => new AccountRunner(`a${i}`, base, { clock, sender: { send: async ({ timeMs }) => void timeMs() }, reprovision: async () => true, report: () => {} }));
  for (const r of runners) r.start();
  // Every first arm answered (the sender resolves at once): each runner waits on its re-arm timer.
  while (runners.some((r) => r.snapshot().phase !== 'armed')) await new Promise((resolve) => setTimeout(resolve, 100));
  const ms = await cpuPerCall(5, 2, (i) => {
    const next = { ...base, rearmEveryMs: base.rearmEveryMs - 100 * (i + 1) };
    for (const r of runners) r.updateSettings(next);
  });
  for (const r of runners) r.abortNow();
  return `settings: ${ms.toFixed(1)} ms CPU to hand 50,000 armed runners a new period`;
}

/** cpuPerCall per item of `rounds` rounds of `perRound` items at once, the loop idle `everyMs` after each round. */
async function cpuPerPaced(rounds: number, everyMs: number, perRound: number, fn: () => Promise<unknown>): Promise<number> {
  const round = async (): Promise<void> => {
    await Promise.all(Array.from({ length: perRound }, fn));
    await new Promise((r) => setTimeout(r, everyMs));
  };
  return (await cpuPerCall(rounds, 0, round)) / perRound;
}

async function wake(): Promise<string> {
  const timerMs = await cpuPerPaced(300, 10, 1, async () => undefined);
  // The venue's stand-in in its own process, so that only the keeper's side is counted here.
  const server = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:http').createServer((q, a) => { q.resume(); q.on('end', () => { a.setHeader('content-type', 'application/json'); a.end('{"status":"ok","response":{"type":"default"}}'); }); });
       s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const [line] = (await once(server.stdout!, 'data')) as [Buffer];
    const url = `http://127.0.0.1:${Number(line.toString().trim())}/exchange`;
    const transport = new HttpTransport({ requestTimeoutMs: 5_000 });
    const t0 = 1_764_600_000_000;
    const json = { action: { type: 'scheduleCancel', time: t0 + 60_000 }, nonce: t0, signature: { r: `0x${'ab'.repeat(32)}`, s: `0x${'cd'.repeat(32)}`, v: 27 } };
    const send = () => transport.request({ endpoint: 'POST /exchange', method: 'POST', url, json });
    await cpuPerPaced(200, 0, 10, send); // warm-up: connections and code
    const alone = await cpuPerPaced(500, 10, 1, send);
    const together = await cpuPerPaced(50, 100, 10, send);
    await transport.close();
    const bare = await bareRequests(url, JSON.stringify(json));
    try {
      await cpuPerPaced(50, 10, 1, bare.send); // warm-up
      const bareMs = await cpuPerPaced(500, 10, 1, bare.send);
      return `wake: ${(timerMs * 1000).toFixed(0)} µs CPU a timer's wake-up from idle; an arm's request ${(alone * 1000).toFixed(0)} µs CPU sent alone every 10 ms, ${(together * 1000).toFixed(0)} µs each sent ten together every 100 ms; its bytes by hand on a socket, alone every 10 ms, ${(bareMs * 1000).toFixed(0)} µs`;
    } finally {
      bare.close();
    }
  } finally {
    server.kill();
  }
}

/**
 * The request HttpTransport sends, written by hand on one kept-alive connection: `send` resolves
 * when the whole answer (its headers and `content-length` bytes) is in. A measuring stick, not a
 * client: it knows only the answer the wake path's server writes.
 */
async function bareRequests(url: string, body: string): Promise<{ send: () => Promise<void>; close: () => void }> {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.setNoDelay(true);
  const request = `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\naccept: application/json\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  let got = '';
  let pending: { resolve: () => void; reject: (e: Error) => void } | undefined;
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    got += chunk;
    const headEnd = got.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(got.slice(0, headEnd))?.[1] ?? NaN);
    if (!(got.length >= headEnd + 4 + length)) return;
    got = '';
    pending?.resolve();
  });
  // The server closing the connection (its keep-alive ends after 5 s idle) fails the send waiting on
  // it, rather than leaving the bench waiting for ever.
  socket.on('error', () => {}).on('close', () => pending?.reject(new Error('bare request: the server closed the connection')));
  const send = (): Promise<void> =>
    new Promise((resolve, reject) => {
      pending = { resolve, reject };
      socket.write(request);
    });
  return { send, close: () => socket.destroy() };
}

const PATHS = { scrape, sign, 'budget-save': budgetSave, arm, plan, settings, wake } as const;

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const wanted = values.only ? values.only.split(',') : Object.keys(PATHS);
  for (const w of wanted) {
    const run = PATHS[w as keyof typeof PATHS];
    if (!run) throw new Error(`--only: ${w} is not one of ${Object.keys(PATHS).join(', ')}`);
    console.log(await run());
  }
  return 0;
}

runMain('bench:micro', main);
