#!/usr/bin/env node
/**
 * The entry point. It refuses an older Node.js in one line, before loading any module that may
 * need a newer one (an older Node would otherwise die on some dependency with an obscure error),
 * then hands over to the shell (`cli/shell.ts`: argv, env, signals, exit codes).
 */
import { setFlagsFromString } from 'node:v8';
import { nodeVersionProblem } from './cli/node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== null) {
  process.stderr.write(`dms-keeper: ${problem}\n`);
  // 1: the command is fine; the runtime is not (see the exit-code table in README.md).
  process.exit(1);
}
// undici parses HTTP with llhttp compiled to WebAssembly. V8's optimizing compiler took about 35 MB
// for that one module at start-up (the peak RSS of a small keeper: 100 MB with it, 65 MB without);
// the baseline compiler's code parses a venue answer in microseconds all the same. Set before
// undici loads, since the flag is read when a module compiles.
setFlagsFromString('--liftoff-only');
await import('./cli/shell.js');
