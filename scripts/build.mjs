// `npm run build` (and before `npm start`, `npm run check-config`, `npm test`, the benches): dist/
// from what runs, src/ and bench/ without their tests (tsconfig.build.json's `include`), by esbuild,
// in two parts.
// - Every module, file by file (no bundling), only the files changed since their output was
//   written: what the benches, the scripts and anything else importing one module load. As with
//   tsc, a file of ours they import from elsewhere is emitted too (bench/ imports test/support/).
// - The command, `dist/src/main.js` (the package's bin, what systemd, the image, `npm start` and
//   every process test run), bundled from src/main.ts with its dependencies into main.js and
//   dist/src/chunks/, rebuilt when any file of src/ changed. Node's module loader spent more CPU on
//   the 500 modules a keeper loaded than the keeper spent on its first arms: a check-config took
//   0.92 s of CPU from per-file modules, 0.48 s bundled. The shell stays behind a dynamic import, so
//   main.js still refuses an older Node.js before any dependency loads.
// Neither part checks types: that is `npm run typecheck` (CI runs it, and the image's build stage).
// tsconfig.json's `isolatedModules` makes the type check refuse what a file-by-file transpiler could
// get wrong. Why not `tsc -b`: a fresh clone's type-checked build took 16 to 20 s of one core before
// every `npm test`, which CI had just spent on `npm run typecheck`; this takes about 2 s (0.5 s
// when nothing changed). One line says what it did:
//   build: up to date
//   build: 3 files (src/app/app.ts, src/account/reports.ts, bench/run.ts), and the command
// A file that does not parse or resolve is printed as `file:line:col message` and the exit code is 1.
// Outputs whose source is gone are removed, so a deleted module cannot linger in dist/ and still load.
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const esbuild = createRequire(import.meta.url)('esbuild');

/** tsconfig.build.json's files: each `include` is a `dir/**\/*.ts` tree, less the tests. */
function sourceFiles() {
  const { include } = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'));
  return include.flatMap((pattern) => {
    const tree = /^([\w.-]+)\/\*\*\/\*\.ts$/.exec(pattern);
    if (!tree) {
      process.stderr.write(`tsconfig.build.json: include "${pattern}" is not a dir/**/*.ts tree, which scripts/build.mjs reads\n`);
      process.exit(1);
    }
    return tsFilesUnder(join(root, tree[1]));
  });
}

function tsFilesUnder(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // a tree that is not there has no files (as with tsc)
  }
  return entries.flatMap((e) =>
    e.isDirectory() ? tsFilesUnder(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );
}

/** What is built how: the config files and this script; a change to any rebuilds everything. */
const settingsMs = Math.max(...['tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.mjs'].map((f) => statSync(join(root, f)).mtimeMs));

const outOf = (source) => join(dist, relative(root, source).replace(/\.ts$/, '.js'));
const mtimeMs = (file) => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
};

/** What both parts share: ES modules for Node 20, with their source maps, our own tsconfig.json. */
const common = { format: 'esm', platform: 'node', target: 'node20', sourcemap: true, tsconfig: join(root, 'tsconfig.json'), logLevel: 'silent' };

/** One esbuild run, its errors printed as `file:line:col message`; its metafile, or null. */
async function esbuildRun(options) {
  try {
    return (await esbuild.build({ ...common, ...options, metafile: true })).metafile;
  } catch (e) {
    for (const m of e.errors ?? [{ text: String(e) }]) {
      const where = m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}` : 'scripts/build.mjs';
      process.stderr.write(`${where} ${m.text}\n`);
    }
    return null;
  }
}

/** One esbuild build that writes: the files it wrote, or null. */
async function run(options) {
  const meta = await esbuildRun(options);
  return meta === null ? null : Object.keys(meta.outputs).map((out) => join(root, out));
}

/**
 * What tsc emitted: the include's files and every file of ours they import (bench/ imports
 * test/support/cli.ts and redis.ts), found by esbuild's own resolver, writing nothing.
 */
async function programFiles(includes) {
  const meta = await esbuildRun({ entryPoints: includes, bundle: true, splitting: true, packages: 'external', write: false, outdir: dist, sourcemap: false });
  if (meta === null) process.exit(1);
  return Object.keys(meta.inputs)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('node_modules/'))
    .map((f) => join(root, f));
}

/** The command's entry: bundled, not emitted on its own (nothing imports it). */
const ENTRY = join(root, 'src', 'main.ts');
const MAIN_OUT = join(dist, 'src', 'main.js');
const CHUNKS = join(dist, 'src', 'chunks');
const all = await programFiles(sourceFiles());
const sources = all.filter((f) => f !== ENTRY);
const stale = sources.filter((source) => {
  const builtMs = mtimeMs(outOf(source));
  return builtMs < 0 || builtMs < mtimeMs(source) || builtMs < settingsMs;
});
const bundleMs = mtimeMs(MAIN_OUT);
const srcDir = join(root, 'src') + '/';
const bundleStale = bundleMs < 0 || bundleMs < settingsMs || all.some((f) => f.startsWith(srcDir) && mtimeMs(f) > bundleMs);

const modules = stale.length === 0 ? [] : await run({ entryPoints: stale, outdir: dist, outbase: root });
let bundled = [];
if (bundleStale && modules !== null) {
  rmSync(CHUNKS, { recursive: true, force: true });
  bundled = await run({
    entryPoints: [ENTRY],
    bundle: true,
    splitting: true,
    outdir: join(dist, 'src'),
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    // Left in node_modules: what is loaded by path at run time (secp256k1's native addon, pino-pretty
    // and ioredis, each through createRequire when a config asks for it) and ws's optional native
    // helpers. Everything else is in the bundle: its CommonJS packages (undici, pino, prom-client,
    // yaml, ...) then cost no module-lexer pass and no resolution either.
    external: ['secp256k1', 'pino-pretty', 'ioredis', 'bufferutil', 'utf-8-validate'],
    // V8 keeps every loaded script's source for as long as the process runs, and a script with one
    // character past Latin-1 (a dependency's comment: undici's "response’s") is kept at two bytes a
    // character: the keeper held 5.3 MB of sources, 3.7 MB of it two chunks. Without comments and
    // indentation (names and syntax untouched, so a stack trace still names its functions; the
    // source maps beside map a position back) the output is ASCII: esbuild escapes the rest.
    minifyWhitespace: true,
    // The CommonJS inside calls require() for Node's own modules; an ES module has none of its own.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  });
}
const failed = modules === null || bundled === null;

// Outputs of sources that no longer exist (a module deleted or renamed), and the old `tsc -b` build info.
const wanted = new Set([...sources.map(outOf), MAIN_OUT]);
const fresh = new Set(bundled ?? []);
/** The bundle's chunks are its own: kept unless it was rebuilt, and then only those it wrote. */
const isChunk = (path) => path.startsWith(CHUNKS + '/');
const removed = [];
const sweep = (dir) => {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) sweep(path);
    else if (isChunk(path) ? bundleStale && !failed && !fresh.has(path) : e.name.endsWith('.tsbuildinfo') || (e.name.endsWith('.js') && !wanted.has(path)) || (e.name.endsWith('.js.map') && !wanted.has(path.slice(0, -4)))) {
      rmSync(path);
      removed.push(relative(root, path));
    }
  }
};
sweep(dist);

if (failed) process.exit(1);
const names = stale.map((s) => relative(root, s)).sort();
const shown = names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
const gone = removed.filter((r) => r.endsWith('.js')).length;
const removedNote = gone > 0 ? `, ${gone} removed` : '';
if (names.length === 0 && !bundleStale) process.stdout.write(`build: up to date${removedNote}\n`);
else if (names.length === 0) process.stdout.write(`build: the command${removedNote}\n`);
else process.stdout.write(`build: ${names.length} file${names.length === 1 ? '' : 's'} (${shown})${bundleStale ? ', and the command' : ''}${removedNote}\n`);
