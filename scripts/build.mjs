// `npm run build` (and before `npm start`, `npm run check-config`, `npm test`, the benches): dist/
// from what runs, src/ and bench/ (tsconfig.build.json's files), in two parts.
// - Every module file by file, by TypeScript's own transpiler (`ts.transpileModule`, the compiler's
//   emit without its type check), only the files changed since their output was written: what the
//   benches, the scripts and anything else importing one module load. tsconfig.json's
//   `isolatedModules` makes the type check refuse what a file-by-file emit could get wrong, so this
//   emit and `tsc`'s are the same bytes (checked on all 204 files, maps too).
// - The command, `dist/src/main.js` (the package's bin, what systemd, the image and every process
//   test run), bundled by esbuild from src/main.ts with our code, viem and zod in a few files
//   (dist/src/chunks/), the other dependencies left in node_modules. Node's module loader spent more
//   CPU on the 500 modules a keeper loaded than the keeper spent on its first arms: a keeper's
//   start took 1.0 s of CPU, a check-config 0.9 s. The shell stays behind a dynamic import, so
//   main.js still refuses an older Node.js before any dependency loads.
// The types are `npm run typecheck`'s (CI runs it, and the image's build stage). Why not `tsc -b`: a
// fresh clone's type-checked build took 16 to 20 s of one core before every `npm test`, which CI had
// just spent on `npm run typecheck`; this takes about 4 s, and 0.2 s when nothing changed. One line
// says what it did:
//   build: up to date
//   build: 3 files (src/app/app.ts, src/account/reports.ts, bench/run.ts), and the command
// A file TypeScript cannot parse is printed as `file:line:col message` and the exit code is 1.
// Outputs whose source is gone are removed, so a deleted module cannot linger in dist/ and still load.
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const ts = createRequire(import.meta.url)('typescript');

const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    process.stderr.write(`${ts.flattenDiagnosticMessageText(d.messageText, '\n')}\n`);
    process.exit(1);
  },
});
// package.json says "type": "module", so tsc's NodeNext emits every .ts file as an ES module; a lone
// file has no package.json to look at, so it is told.
const options = { ...parsed.options, module: ts.ModuleKind.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler };

/** What is built when: the config files and this script; a change to any rebuilds everything. */
const settingsMs = Math.max(...['tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.mjs'].map((f) => statSync(join(root, f)).mtimeMs));

const outOf = (source) => join(dist, relative(root, source).replace(/\.ts$/, '.js'));
const mtimeMs = (file) => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
};

/** The command's entry: bundled (below), not emitted on its own (nothing imports it). */
const ENTRY = join(root, 'src', 'main.ts');
const MAIN_OUT = join(dist, 'src', 'main.js');
const CHUNKS = join(dist, 'src', 'chunks');
const sources = parsed.fileNames.filter((f) => f !== ENTRY);
const stale = sources.filter((source) => {
  const builtMs = mtimeMs(outOf(source));
  return builtMs < 0 || builtMs < mtimeMs(source) || builtMs < settingsMs;
});

let failed = false;
for (const source of stale) {
  const out = outOf(source);
  const result = ts.transpileModule(readFileSync(source, 'utf8'), { compilerOptions: options, fileName: source, reportDiagnostics: true });
  const syntax = (result.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (syntax.length > 0) {
    for (const d of syntax) {
      const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const where = at ? `${relative(root, source)}:${at.line + 1}:${at.character + 1}` : relative(root, source);
      process.stderr.write(`${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}\n`);
    }
    failed = true;
    continue;
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, result.outputText);
  if (result.sourceMapText !== undefined) writeFileSync(`${out}.map`, result.sourceMapText);
}

// The command's bundle, when any source of src/ (or a setting) is newer than it.
const bundleMs = mtimeMs(MAIN_OUT);
const srcDir = join(root, 'src') + '/';
const bundleStale = bundleMs < 0 || bundleMs < settingsMs || parsed.fileNames.some((f) => f.startsWith(srcDir) && mtimeMs(f) > bundleMs);
const bundled = new Set();
if (bundleStale && !failed) {
  // Left in node_modules: what is loaded by path at run time (secp256k1's native addon, pino-pretty
  // and ioredis, each through createRequire when a config asks for it) and ws's optional native
  // helpers. Everything else is in the bundle: its CommonJS packages (undici, pino, prom-client,
  // yaml, ...) then cost no module-lexer pass and no resolution either.
  const external = ['secp256k1', 'pino-pretty', 'ioredis', 'bufferutil', 'utf-8-validate'];
  rmSync(CHUNKS, { recursive: true, force: true });
  const esbuild = createRequire(import.meta.url)('esbuild');
  try {
    const result = await esbuild.build({
      entryPoints: [ENTRY],
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: join(dist, 'src'),
      entryNames: '[name]',
      chunkNames: 'chunks/[name]-[hash]',
      sourcemap: true,
      external,
      // The CommonJS inside calls require() for Node's own modules; an ES module has none of its own.
      banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
      metafile: true,
      logLevel: 'silent',
    });
    for (const out of Object.keys(result.metafile.outputs)) bundled.add(join(root, out));
  } catch (e) {
    for (const m of e.errors ?? [{ text: String(e) }]) {
      const where = m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}` : 'src/main.ts';
      process.stderr.write(`${where} ${m.text}\n`);
    }
    failed = true;
  }
}

// Outputs of sources that no longer exist (a module deleted or renamed), and the old `tsc -b` build info.
const wanted = new Set([...sources.map(outOf), MAIN_OUT]);
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
    else if (isChunk(path) ? bundleStale && !bundled.has(path) : e.name.endsWith('.tsbuildinfo') || (e.name.endsWith('.js') && !wanted.has(path)) || (e.name.endsWith('.js.map') && !wanted.has(path.slice(0, -4)))) {
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
