/**
 * A real Redis server for tests (Debian's redis-server, 7.0 here), started by the test on a free
 * loopback port, with nothing saved to disk. `.ci/checks/redis.sh` provides the binary in CI and
 * prints its path (exported as REDIS_SERVER); locally it is found on PATH or where that script
 * caches it. Tests that need it skip, loudly, only when none exists on this machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './cli.js';
import { delimiter, join, resolve } from 'node:path';

/** The redis-server to run: $REDIS_SERVER, else on PATH, else the cache of .ci/checks/redis.sh. */
export function findRedisServer(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const candidates = [
    env.REDIS_SERVER,
    ...(env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, 'redis-server')),
    resolve('artifacts/redis-pkg/redis-server'),
  ];
  for (const c of candidates) {
    if (!c) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  return undefined;
}

/** The message a skipped Redis test prints: CI must never skip these. */
export function noRedisMessage(): string {
  return (
    '\n!!! SKIPPED: no redis-server on this machine, so the shared-budget tests did not run.\n' +
    '!!! Run `export REDIS_SERVER=$(bash .ci/checks/redis.sh | tail -n 1)` and run them again.\n'
  );
}

export interface TestRedis {
  port: number;
  url: string;
  /** Kills the server at once (SIGKILL): what a crash or an OOM kill looks like to clients. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      res(true);
    });
    s.once('error', () => res(false));
  });
}

export async function startRedis(opts: { binary?: string; password?: string } = {}): Promise<TestRedis> {
  const binary = opts.binary ?? findRedisServer();
  if (!binary) throw new Error('no redis-server found (set REDIS_SERVER)');
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'];
    if (opts.password) args.push('--requirepass', opts.password);
    child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${output.slice(-500)}`);
      if (await accepts(port)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`redis-server did not listen on ${port} within 10 s: ${output.slice(-500)}`);
  };

  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((res) => {
      c.once('exit', () => res());
      c.kill('SIGKILL');
    });
  };

  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: launch,
    stop: kill,
  };
}
