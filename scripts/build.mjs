// `npm run build` (and before `npm start`, `npm run check-config`, `npm test`, the benches): TypeScript's
// own incremental build, `tsc -b --incremental`, of what runs: src/ and bench/ (tsconfig.build.json),
// not the tests, which vitest runs from source and `npm run typecheck` checks (a fresh clone's build
// took 30 s with them, 18 s without). dist/tsconfig.build.tsbuildinfo records what dist/ was
// built from: when nothing changed nothing is compiled (upToDateWithoutTsc below: 0.2 s; a full
// `tsc -p` takes 20 to 50 s on 2 cores), and after a change tsc re-checks from its recorded
// signatures. One line says which:
//   build: up to date
//   building… (changed: src/app/app.ts, src/account/reports.ts)
// Compiler errors are printed as tsc prints them, and its exit code is this script's.
// `rm -rf dist` forces a full build (dist/ is only ever this script's output).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PROJECT = 'tsconfig.build.json';
const buildInfo = join(root, 'dist', 'tsconfig.build.tsbuildinfo');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The last build's record: its build info and when it was written; null when there is none usable (tsc says why). */
function lastBuild() {
  try {
    return { builtMs: statSync(buildInfo).mtimeMs, info: JSON.parse(readFileSync(buildInfo, 'utf8')) };
  } catch {
    return null;
  }
}

/** The inputs of the last build (the build info's file list, our own files only, the tsconfigs, package.json) changed since it was written. */
function changedSince(last) {
  const names = [...(Array.isArray(last.info.fileNames) ? last.info.fileNames : []), '../tsconfig.json', `../${PROJECT}`, '../package.json'];
  const changed = [];
  for (const name of names) {
    if (typeof name !== 'string' || name.includes('node_modules/')) continue;
    const file = join(dirname(buildInfo), name);
    try {
      if (statSync(file).mtimeMs > last.builtMs) changed.push(relative(root, file));
    } catch {
      changed.push(`${relative(root, file)} (deleted)`);
    }
  }
  return changed;
}

/** tsc's own reason, shortened: "output 'dist/…' is older than input 'src/app/app.ts'" -> "src/app/app.ts". */
function reasonOf(text) {
  const input = /is older than input '([^']+)'/.exec(text);
  if (input) return input[1];
  if (/output file '[^']*tsbuildinfo' does not exist/.test(text)) return 'no previous build in dist/';
  return text.replace(/^.*? is out of date because /, '');
}

function changedList(changed, tscReason) {
  if (!changed || changed.length === 0) return reasonOf(tscReason);
  const shown = changed.slice(0, 5).join(', ');
  return changed.length > 5 ? `${shown} and ${changed.length - 5} more` : shown;
}

/**
 * True when tsc -b would find nothing to do, decided without starting tsc (about 1 s of `npm start`
 * on a busy machine): the build info is of this TypeScript, records a clean build (no pending errors
 * or emits: only the keys of one), and is newer than the tsconfigs, package.json and every input it
 * lists, and every file the build's `include` matches (less its `*.test.ts` exclude) is one of those
 * inputs (none added). Anything
 * else, or anything it cannot read, is left to tsc, which decides.
 */
function upToDateWithoutTsc(last) {
  if (last === null) return false;
  try {
    const { info } = last;
    const clean = new Set(['fileNames', 'fileIdsList', 'fileInfos', 'root', 'options', 'referencedMap', 'version']);
    if (!Object.keys(info).every((k) => clean.has(k))) return false;
    if (info.version !== createRequire(import.meta.url)('typescript/package.json').version) return false;
    if (changedSince(last).length > 0) return false;
    const inputs = new Set(info.fileNames.map((f) => join(dirname(buildInfo), f)));
    const { include } = JSON.parse(readFileSync(join(root, PROJECT), 'utf8'));
    for (const pattern of include) {
      const tree = /^([\w.-]+)\/\*\*\/\*\.ts$/.exec(pattern);
      if (tree) {
        for (const file of tsFilesUnder(join(root, tree[1]))) if (!inputs.has(file)) return false;
      } else if (!/[*?]/.test(pattern)) {
        if (!inputs.has(join(root, pattern))) return false;
      } else return false; // a pattern this check does not read
    }
    return true;
  } catch {
    return false;
  }
}

function tsFilesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFilesUnder(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

const last = lastBuild();
if (upToDateWithoutTsc(last)) {
  process.stdout.write('build: up to date\n');
  process.exit(0);
}

const changed = last === null ? null : changedSince(last);
const pretty = process.stdout.isTTY ? [] : ['--pretty', 'false'];
const child = spawn(process.execPath, [tsc, '-b', PROJECT, '--incremental', '--verbose', ...pretty], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });

// --verbose interleaves tsc's progress messages (each "<time> - <message>", then a blank line) with
// the diagnostics: the status messages become the one line above, everything else passes through.
// eslint-disable-next-line no-control-regex -- tsc colours its messages on a terminal
const ansi = /\u001b\[[0-9;]*m/g;
let pending = '';
let said = false;
/** The lines that belong to the last status message: its project list and the blank line after it. */
let inStatus = false;
function line(raw) {
  const text = raw.replace(ansi, '');
  if (inStatus && (/^\s+\* \S+$/.test(text) || text.trim() === '')) return;
  inStatus = false;
  const status = / - (Projects in this build:|Project '[^']*' is (up to date|out of date because .*)|Building project |Updating (unchanged )?output timestamps|Skipping build)/.exec(text);
  if (status) {
    inStatus = true;
    if (status[2]?.startsWith('up to date') && !said) {
      process.stdout.write('build: up to date\n');
      said = true;
    } else if (status[2]?.startsWith('out of date') && !said) {
      process.stdout.write(`building… (changed: ${changedList(changed, status[2])})\n`);
      said = true;
    }
    return;
  }
  process.stdout.write(`${raw}\n`);
}
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const l of lines) line(l);
});
child.on('close', (code, signal) => {
  if (pending) line(pending);
  process.exitCode = code ?? (signal ? 1 : 0);
});
