#!/usr/bin/env node
/**
 * The entry point. It refuses an older Node.js in one line, before loading any module that may
 * need a newer one (an older Node would otherwise die on some dependency with an obscure error),
 * then hands over to the shell (`cli/shell.ts`: argv, env, signals, exit codes).
 */
import { nodeVersionProblem } from './cli/node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== null) {
  process.stderr.write(`dms-keeper: ${problem}\n`);
  // 1: the command is fine; the runtime is not (see the exit-code table in README.md).
  process.exit(1);
}
await import('./cli/shell.js');
