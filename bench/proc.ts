/** The benchmark's process plumbing: its simulator process, free ports, a child's CPU and peak RSS from /proc, the machine's busy cores, stopping a child. */
import { fork, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SamplerReport } from './sim-process.js';

/**
 * The bench's simulator (sim-process.ts, beside this file in dist/bench) in its own process, with
 * `args`: resolves once it listens with its URLs, and hands each sampler report to `onReport`.
 */
export function forkSim(args: string[], execArgv: string[], onReport: (r: SamplerReport) => void): Promise<{ child: ChildProcess; baseUrl: string; wsUrl: string; clobUrl: string }> {
  const child = fork(join(import.meta.dirname, 'sim-process.js'), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  return new Promise((res, rej) => {
    child.on('message', (m: unknown) => {
      const msg = m as { type: string; baseUrl?: string; wsUrl?: string; clobUrl?: string };
      if (msg.type === 'ready') res({ child, baseUrl: msg.baseUrl!, wsUrl: msg.wsUrl!, clobUrl: msg.clobUrl! });
      else if (msg.type === 'report') onReport(m as SamplerReport);
    });
    child.once('exit', (code) => rej(new Error(`simulator exited ${code}`)));
  });
}

/** The tests' free port (below the kernel's ephemeral range, so the simulator's port-0 bind cannot take it first). */
export { freePort } from '../test/support/cli.js';

/** The machine's CPU: busy and total jiffies over all cores (/proc/stat's first line; idle and iowait are not busy). */
export async function machineCpu(): Promise<{ busy: number; total: number } | null> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - (v[3] ?? 0) - (v[4] ?? 0), total };
  } catch {
    return null;
  }
}

/** A phase's share of the machine's cores that were busy, %. */
export function busyPct(a: { busy: number; total: number } | null, b: { busy: number; total: number } | null): number | null {
  return a && b && b.total > a.total ? ((b.busy - a.busy) / (b.total - a.total)) * 100 : null;
}

/** User and system CPU seconds of a process (utime, stime). */
export async function procCpuSplit(pid: number): Promise<{ user: number; system: number } | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return null;
  }
}

export async function procCpuSeconds(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ (100)
  } catch {
    return null;
  }
}

export async function procPeakRssMb(pid: number): Promise<number | null> {
  try {
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}

export async function stopChild(child: ChildProcess, viaIpc = false): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((res) => {
    // Two minutes: a 50,000-account keeper run with --cpu-prof was killed at 20 s, before it had written its profile.
    const t = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('exit', () => {
      clearTimeout(t);
      res();
    });
    if (viaIpc) child.send({ type: 'stop' });
    else child.kill('SIGTERM');
  });
}
