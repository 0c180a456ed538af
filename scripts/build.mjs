// `npm run build` (and before `npm start`, `npm run check-config`, `npm test`, the benches): dist/
// from what runs, src/ and bench/ (tsconfig.build.json's files), each file by TypeScript's own
// transpiler (`ts.transpileModule`, the compiler's emit without its type check), and only the files
// changed since their output was written. The types are `npm run typecheck`'s (CI runs it, and the
// image's build stage); tsconfig.json's `isolatedModules` makes it refuse what a file-by-file emit
// could get wrong, so this emit and `tsc`'s are the same bytes (checked on all 204 files, maps too).
// Why not `tsc -b`: a fresh clone's type-checked build took 16 to 20 s of one core before every
// `npm test`, which CI had just spent on `npm run typecheck`; this takes about 4 s, and 0.2 s when
// nothing changed. One line says what it did:
//   build: up to date
//   build: 3 files (src/app/app.ts, src/account/reports.ts, bench/run.ts)
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

const sources = parsed.fileNames;
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

// Outputs of sources that no longer exist (a module deleted or renamed), and the old `tsc -b` build info.
const wanted = new Set(sources.map(outOf));
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
    else if (e.name.endsWith('.tsbuildinfo') || (e.name.endsWith('.js') && !wanted.has(path)) || (e.name.endsWith('.js.map') && !wanted.has(path.slice(0, -4)))) {
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
if (names.length === 0) process.stdout.write(gone > 0 ? `build: up to date, ${gone} removed\n` : 'build: up to date\n');
else process.stdout.write(`build: ${names.length} file${names.length === 1 ? '' : 's'} (${shown})${gone > 0 ? `, ${gone} removed` : ''}\n`);
