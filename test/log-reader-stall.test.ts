/**
 * The keeper's log to stdout never waits for its reader and never holds more than it should
 * (obs/logger.ts stdoutLogDestination), in a child process writing to a pipe nobody reads. pino's
 * default already writes asynchronously, but holds without limit what the reader has not taken: a
 * reader that stopped (journald under load, a log driver) grew the keeper's heap toward its limit.
 * Built code (dist), a real pipe.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const LOGGER = join(ROOT, 'dist/src/obs/logger.js');

/** Writes `lines` log lines of ~1 KB through createLogger's stdout, then says on stderr how long that took and how many were dropped. */
function writer(lines: number): string {
  return `
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    let dropped = 0;
    const log = createLogger('info', undefined, undefined, 'json', () => dropped++);
    const pad = 'x'.repeat(1000);
    const t0 = performance.now();
    for (let i = 0; i < ${lines}; i++) log.info({ i, pad }, 'line');
    process.stderr.write(JSON.stringify({ writeMs: performance.now() - t0, dropped }) + '\\n');
  `;
}

/**
 * Runs the writer with stdout on a named pipe (64 KB in the kernel) that nobody reads until it
 * reports (or `waitMs` passes), then reads the pipe to the end. A named pipe, not a child's stdio
 * pipe: Node reads those into its own buffers whether or not the stream is paused, so they never filled.
 */
async function run(lines: number, waitMs: number): Promise<{ report: { writeMs: number; dropped: number } | null; linesOut: number; code: number | null }> {
  const fifo = join(await mkdtemp(join(tmpdir(), 'dmsk-log-')), 'stdout');
  execFileSync('mkfifo', [fifo]);
  const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(fifo, 'w');
  const child = spawn(process.execPath, ['--input-type=module', '-e', writer(lines)], { stdio: ['ignore', writeFd, 'pipe'] });
  closeSync(writeFd);
  let exitCode: number | null | undefined;
  child.on('exit', (c) => (exitCode = c));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const t0 = Date.now();
  while (!err.includes('\n') && Date.now() - t0 < waitMs && exitCode === undefined) await new Promise((r) => setTimeout(r, 20));
  const report = err.includes('\n') ? (JSON.parse(err.slice(0, err.indexOf('\n'))) as { writeMs: number; dropped: number }) : null;
  // Now read everything, the lines flushed at exit included, until the writer has gone and the pipe is empty.
  let out = '';
  const buf = Buffer.alloc(1 << 16);
  for (;;) {
    let n = -1;
    try {
      n = readSync(readFd, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
    if (n > 0) out += buf.toString('utf8', 0, n);
    else if (n === 0 && exitCode !== undefined) break;
    else await new Promise((r) => setTimeout(r, 5));
  }
  closeSync(readFd);
  return { report, linesOut: out.split('\n').filter((l) => l.startsWith('{')).length, code: exitCode ?? null };
}

describe('the log never stalls the keeper', () => {
  it('4,000 lines (4 MB) to a pipe nobody reads :: written from memory at once, none dropped, every line out at exit', async () => {
    // A named pipe holds 64 KB: the rest waits in the keeper's memory, not in write(2).
    const r = await run(4_000, 10_000);
    expect(r.report, 'the writer finished while its stdout was not read').not.toBeNull();
    expect(r.report!.dropped).toBe(0);
    expect(r.code).toBe(0);
    expect(r.linesOut).toBe(4_000);
  }, 30_000);

  it('12,000 lines (12 MB) to a pipe nobody reads :: past the 8 MiB it holds in memory, lines are dropped and counted, never waited for', async () => {
    const r = await run(12_000, 10_000);
    expect(r.report).not.toBeNull();
    expect(r.report!.dropped).toBeGreaterThan(0);
    // What was kept plus what was dropped is every line (the pipe's own buffer took a few before the drops).
    expect(r.linesOut + r.report!.dropped).toBe(12_000);
    expect(r.code).toBe(0);
  }, 30_000);
});
