/**
 * For test/starved-keeper.test.ts: built processes placed on the machine's cores (taskset), busy
 * loops to take a keeper's CPU, and a venue-side record of every account's horizon.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { SamplerReport } from '../../bench/sim-process.js';
import { ROOT, startCli, type Proc } from './cli.js';

/**
 * Where the processes run. `pinned`: the keeper and the busy loops share the last core (taskset),
 * the simulator and the test keep the others, so the keeper gets a third of one core whatever the
 * machine's size and the venue is not starved with it. `shared`: no taskset (or one core): every
 * process on every core, the keeper's share then depends on the core count.
 */
export interface CpuPlan {
  mode: 'pinned' | 'shared';
  /** taskset's CPU list for the keeper and the loops, and for the simulator; null: not pinned. */
  starved: string | null;
  others: string | null;
  cores: number;
}

export function cpuPlan(): CpuPlan {
  const mine = affinity(process.pid);
  const cores = mine?.length ?? availableParallelism();
  const taskset = spawnSync('taskset', ['-c', String(mine?.[0] ?? 0), process.execPath, '-e', '0'], { stdio: 'ignore' });
  if (!mine || cores < 2 || taskset.error || taskset.status !== 0) return { mode: 'shared', starved: null, others: null, cores };
  return { mode: 'pinned', starved: String(mine.at(-1)), others: mine.slice(0, -1).join(','), cores };
}

/** The CPUs a process may run on (taskset's list, expanded); null without taskset. */
function affinity(pid: number): number[] | null {
  const r = spawnSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' });
  const list = r.status === 0 ? /:\s*([\d,-]+)\s*$/.exec(r.stdout)?.[1] : undefined;
  if (!list) return null;
  return list.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number);
    return b === undefined ? [a!] : Array.from({ length: b - a! + 1 }, (_, i) => a! + i);
  });
}

/**
 * Moves this process (every thread) to `cpus`; returns what puts it back where it was. Nothing to
 * do when not pinned.
 */
export function pinSelf(cpus: string | null): () => void {
  const before = affinity(process.pid);
  if (cpus === null || !before) return () => undefined;
  spawnSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
  return () => void spawnSync('taskset', ['-a', '-p', '-c', before.join(','), String(process.pid)], { stdio: 'ignore' });
}

/** The built CLI in a child process (startCli, cli.ts), on `cpus` when given. */
export function startPinnedCli(args: string[], cpus: string | null, env: Record<string, string | undefined> = {}, nodeArgs: string[] = []): Proc {
  return startCli(args, { env, nodeArgs, ...(cpus === null ? {} : { under: ['taskset', '-c', cpus] }) });
}

/**
 * The benchmark's simulator process (dist/bench/sim-process.js: N bench accounts seeded, signatures
 * checked by libsecp256k1, the admin API, a venue-side sampler reporting every second over IPC), on
 * `cpus` when given. Resolves once it listens.
 */
export async function startBenchSim(
  args: string[],
  cpus: string | null,
  onReport: (r: SamplerReport) => void,
): Promise<{ child: ChildProcess; baseUrl: string }> {
  const argv = [join(ROOT, 'dist/bench/sim-process.js'), ...args];
  const opts = { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] as ['ignore', 'inherit', 'inherit', 'ipc'] };
  const child = cpus === null ? spawn(process.execPath, argv, opts) : spawn('taskset', ['-c', cpus, process.execPath, ...argv], opts);
  return new Promise((resolve, reject) => {
    child.on('message', (m: unknown) => {
      const msg = m as { type: string; baseUrl?: string };
      if (msg.type === 'ready') resolve({ child, baseUrl: msg.baseUrl! });
      else if (msg.type === 'report') onReport(m as SamplerReport);
    });
    child.once('exit', (code) => reject(new Error(`simulator exited ${code}`)));
  });
}

/** A process that spins on one core until killed: the CPU a busy neighbour takes. */
export function busyLoop(cpus: string | null): ChildProcess {
  const args = ['-e', 'for (;;) {}'];
  return cpus === null ? spawn(process.execPath, args, { stdio: 'ignore' }) : spawn('taskset', ['-c', cpus, process.execPath, ...args], { stdio: 'ignore' });
}

/** CPU seconds (user + system) a process has used so far; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in USER_HZ (100)
  } catch {
    return null;
  }
}

/** One account as the venue showed it over the run. */
export interface AccountRecord {
  /** The deadline last seen (venue ms); null: never armed. */
  deadlineMs: number | null;
  /** Venue time of the sample that first saw it armed. */
  firstArmedMs: number | null;
  /** Lowest `deadline - now` the venue answered once armed (ms; 0 or less: the cancel fired). */
  lowestSampledMs: number;
  /** Scheduled cancels the venue fired for it (its triggersToday). */
  fired: number;
  /** `fired` when resetLowest last ran. */
  firedAtReset: number;
  rearms: number;
}

interface StateBody {
  nowMs: number;
  account: { schedule: { timeMs: number | null; triggersToday: number } };
}

/**
 * Reads every account's scheduled cancel from the simulator's admin API (`/_sim/state?account=`),
 * sweep after sweep, a few requests at a time on kept-alive connections, and keeps each account's
 * record. The admin routes are not rate limited: this costs the venue's budget nothing.
 */
export class VenueHorizons {
  readonly records = new Map<string, AccountRecord>();
  sweeps = 0;
  private readonly pool: Pool;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    simUrl: string,
    private readonly addresses: readonly string[],
    private readonly concurrency = 6,
  ) {
    this.pool = new Pool(simUrl, { connections: concurrency });
    for (const a of addresses) this.records.set(a, { deadlineMs: null, firstArmedMs: null, lowestSampledMs: Number.POSITIVE_INFINITY, fired: 0, firedAtReset: 0, rearms: 0 });
  }

  /** One sweep over every account. */
  async sweep(): Promise<void> {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < this.addresses.length) {
        const a = this.addresses[next++]!;
        const r = await this.pool.request({ method: 'GET', path: `/_sim/state?account=${a}` });
        const body = (await r.body.json()) as StateBody;
        this.note(a, body);
      }
    };
    await Promise.all(Array.from({ length: this.concurrency }, lane));
    this.sweeps++;
  }

  private note(a: string, b: StateBody): void {
    const rec = this.records.get(a)!;
    const t = b.account.schedule.timeMs;
    rec.fired = b.account.schedule.triggersToday;
    if (t !== null && t !== rec.deadlineMs) {
      if (rec.deadlineMs !== null) rec.rearms++;
      else rec.firstArmedMs = b.nowMs;
      rec.deadlineMs = t;
    }
    if (rec.firstArmedMs !== null) rec.lowestSampledMs = Math.min(rec.lowestSampledMs, t === null ? 0 : t - b.nowMs);
  }

  /** Sweeps until stopped, `pauseMs` between sweeps. */
  start(pauseMs: number): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          await this.sweep();
        } catch (e) {
          // The simulator gone: the test's own checks say so; the sweeps end here.
          this.error = e as Error;
          this.running = false;
        }
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
  }

  /** Why the sweeps ended early, if they did. */
  error: Error | null = null;

  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.running = false;
    await this.loop;
    await this.pool.close();
  }

  private closed = false;

  /** Forgets the lowest horizons seen so far (each account's deadline is kept): the record starts again from here. */
  resetLowest(): void {
    for (const r of this.records.values()) {
      r.lowestSampledMs = Number.POSITIVE_INFINITY;
      r.firedAtReset = r.fired;
    }
  }

  armed(): number {
    let n = 0;
    for (const r of this.records.values()) if (r.firstArmedMs !== null) n++;
    return n;
  }
}
