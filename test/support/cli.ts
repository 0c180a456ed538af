/** Runs the built CLI (`dist/src/main.js`) in a child process, as operators and systemd do. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile, chmod, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const MAIN = join(ROOT, 'dist/src/main.js');

export interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Lines of stdout parsed as JSON (pino), non-JSON skipped. */
  logs: () => Array<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitFor: (pred: () => boolean, timeoutMs?: number, what?: string) => Promise<void>;
}

export function startCli(
  args: string[],
  opts: {
    env?: Record<string, string | undefined>;
    cwd?: string;
    /** A command node runs under, e.g. `['taskset', '-c', '1']` (it execs node, so the pid is node's). */
    under?: string[];
    /** Options for node itself, before the script. */
    nodeArgs?: string[];
  } = {},
): Proc {
  const argv = [...(opts.nodeArgs ?? []), MAIN, ...args];
  const [cmd, ...pre] = opts.under?.length ? [...opts.under, process.execPath] : [process.execPath];
  const child = spawn(cmd!, [...pre, ...argv], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, NOTIFY_SOCKET: undefined, CREDENTIALS_DIRECTORY: undefined, STATE_DIRECTORY: undefined, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  // Parsed once per line, as complete lines arrive: waitFor predicates call logs() every 50 ms, and
  // re-parsing a debug-level keeper's whole stdout each time was CPU the processes under test need.
  const parsed: Array<Record<string, unknown>> = [];
  let parsedTo = 0;
  const logs = () => {
    const end = out.lastIndexOf('\n') + 1;
    if (end > parsedTo) {
      for (const l of out.slice(parsedTo, end).split('\n')) {
        if (!l.startsWith('{')) continue;
        try {
          parsed.push(JSON.parse(l) as Record<string, unknown>);
        } catch {
          // not a log line
        }
      }
      parsedTo = end;
    }
    return parsed.slice();
  };
  const waitFor = async (pred: () => boolean, timeoutMs = 15_000, what = 'condition') => {
    const t0 = Date.now();
    while (!pred()) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}\nstdout:\n${out.slice(-3000)}\nstderr:\n${err.slice(-3000)}`);
      if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode}) while waiting for ${what}\nstdout:\n${out.slice(-3000)}\nstderr:\n${err.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, stdout: () => out, stderr: () => err, logs, exited, waitFor };
}

export async function runCli(args: string[], opts: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {}) {
  const p = startCli(args, opts);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
  const r = await p.exited;
  clearTimeout(timer);
  return { ...r, stdout: p.stdout(), stderr: p.stderr() };
}

export async function tempDir(prefix = 'dmsk-cli-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function writeKey(dir: string, name: string, key: string, mode = 0o600): Promise<string> {
  await mkdir(dir, { recursive: true });
  const p = join(dir, name);
  await writeFile(p, `${key}\n`, { mode });
  await chmod(p, mode);
  return p;
}

export async function getJson(url: string): Promise<{ status: number; body: unknown; text: string }> {
  const r = await fetch(url);
  const text = await r.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: r.status, body, text };
}

/**
 * A free loopback port for a process to listen on, from below the kernel's ephemeral range. A port
 * the kernel handed out for `bind(0)` and we closed again can be handed to the next `bind(0)` (a
 * simulator started on port 0, or any outgoing connection's local port) before our process binds
 * it: a keeper once failed to start with EADDRINUSE that way, beside concurrent process tests. Below
 * the range only our own picks can meet, and a pick is bound once to check it is free.
 */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const { readFile } = await import('node:fs/promises');
  const ephemeralFrom = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .then((t) => Number(t.trim().split(/\s+/)[0]))
    .catch(() => NaN);
  const free = (port: number) =>
    new Promise<number>((resolvePort, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        const a = s.address();
        const bound = typeof a === 'object' && a ? a.port : 0;
        s.close(() => resolvePort(bound));
      });
    });
  const low = 10_000;
  if (Number.isFinite(ephemeralFrom) && ephemeralFrom > low + 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = low + Math.floor(Math.random() * (ephemeralFrom - low));
      const got = await free(port).catch(() => undefined);
      if (got !== undefined) return got;
    }
  }
  return free(0);
}

/**
 * A `track` for one test: every process it is given is SIGKILLed (if still running) when that test
 * finishes. Per test rather than a file's afterEach, so tests of a `describe.concurrent` do not kill
 * each other's processes. Pass the test context's `onTestFinished`.
 */
export function tracker(onTestFinished: (fn: () => Promise<void>) => void): (p: Proc) => Proc {
  const mine: Proc[] = [];
  onTestFinished(async () => {
    for (const p of mine.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) {
        p.child.kill('SIGKILL');
        await p.exited;
      }
    }
  });
  return (p) => {
    mine.push(p);
    return p;
  };
}

/**
 * Runs `jobs` with at most `atOnce` of them running: independent CLI starts overlap their waits,
 * without starting so many Node processes at once that two cores thrash (each start is about half
 * a second of CPU).
 */
export async function inBatches<const J extends ReadonlyArray<() => Promise<unknown>>>(jobs: J, atOnce = 4): Promise<{ -readonly [K in keyof J]: Awaited<ReturnType<J[K]>> }> {
  const results: unknown[] = new Array<unknown>(jobs.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, jobs.length) }, lane));
  return results as { -readonly [K in keyof J]: Awaited<ReturnType<J[K]>> };
}
