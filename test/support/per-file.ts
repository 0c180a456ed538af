/**
 * What each test file starts from and leaves behind, run before every file (vitest.config.ts
 * `setupFiles`). Files share their worker's modules (`isolate: false`), so module-level state that
 * a file's figures depend on is started afresh here rather than by a new module per file: the
 * harness's agent-key counter (a timeline's agent addresses, hence its digest, must not depend on
 * which files ran before it in the same worker), and its state directories, removed after the file
 * (a test may reopen one after close()).
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll } from 'vitest';

interface PerFile {
  /** Agent keys the harness has generated in this file. */
  agentKeySeq: number;
  /** State directories the harness made in this file. */
  madeDirs: string[];
}

// One object per worker, on globalThis: the setup file is evaluated again for every test file, the
// harness only once per worker, and both must see the same state.
const global = globalThis as typeof globalThis & { __dmskPerFile?: PerFile };
export const perFile: PerFile = (global.__dmskPerFile ??= { agentKeySeq: 0, madeDirs: [] });

beforeAll(() => {
  perFile.agentKeySeq = 0;
});

afterAll(async () => {
  for (const d of perFile.madeDirs.splice(0)) await rm(d, { recursive: true, force: true });
});
