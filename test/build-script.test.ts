/**
 * scripts/build.mjs on a small project of its own (the repository's tsconfigs and package.json, two
 * source files): it emits each module and bundles the command, only what changed, removes what lost
 * its source, and fails naming the place when a file does not parse or resolve.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile, access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const run = promisify(execFile);
/** The small project's second file (a path of its own, not of this repository). */
const LIB = ['src', 'lib', 'add.ts'].join('/');
/** A file outside the build's trees that one of them imports (as bench/ imports the tests' support). */
const HELPER = ['test', 'support', 'three.ts'].join('/');

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dmsk-build-'));
  await mkdir(join(dir, 'scripts'));
  await mkdir(join(dir, 'src', 'lib'), { recursive: true });
  for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.mjs']) await cp(join(ROOT, f), join(dir, f));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  // A comment past Latin-1, as a dependency's may have (undici's "response’s"): the bundle must not keep it.
  await writeFile(join(dir, 'src', 'lib', 'add.ts'), 'export type Pair = [number, number];\nexport const add = ([a, b]: Pair): number => {\n  // the pair’s sum\n  return a + b;\n};\n');
  await writeFile(join(dir, 'src', 'main.ts'), "import { add, type Pair } from './lib/add.js';\nconst p: Pair = [2, 3];\nconsole.log(add(p));\n");
  await writeFile(join(dir, 'src', 'main.test.ts'), 'export {};\n');
  // A declaration file (as src/venue/signing/ has): types only, nothing to emit.
  await writeFile(join(dir, 'src', 'lib', 'ambient.d.ts'), "declare module 'no-such-package' { const x: number; export default x; }\n");
  return dir;
}

const build = async (dir: string) => {
  try {
    const { stdout, stderr } = await run(process.execPath, ['scripts/build.mjs'], { cwd: dir });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
};
const exists = (p: string) => access(p).then(() => true, () => false);

describe('scripts/build.mjs', () => {
  it('emits each module as an ES module with its map (not the tests) and bundles the command; then only what changed; removes what lost its source', async ({ onTestFinished }) => {
    const dir = await project();
    onTestFinished(() => rm(dir, { recursive: true, force: true }));

    const first = await build(dir);
    expect(first).toMatchObject({ code: 0, stdout: `build: 1 file (${LIB}), and the command\n` });
    expect(await exists(join(dir, 'dist/src/main.test.js'))).toBe(false);
    expect(await exists(join(dir, 'dist/src/lib/ambient.d.js'))).toBe(false);
    expect(await exists(join(dir, 'dist/src/lib/add.js.map'))).toBe(true);
    const lib = await readFile(join(dir, 'dist/src/lib/add.js'), 'utf8');
    expect(lib).toMatch(/^const add = \(\[a, b\]\) => \{$/m); // the type gone
    expect(lib).toMatch(/^export \{\s+add\s+\};$/m); // an ES module
    // The command is one bundle: the module it imports is inside it, not loaded beside it.
    const main = await readFile(join(dir, 'dist/src/main.js'), 'utf8');
    expect(main).toContain('a+b');
    // Without comments and indentation, and ASCII: V8 keeps a loaded script's source, at two bytes a
    // character when one of them is past Latin-1.
    expect([...main].every((ch) => ch.charCodeAt(0) < 0x80)).toBe(true);
    expect(main).not.toContain('sum');
    expect(main).not.toMatch(/from ['"]\.\/lib\/add\.js['"]/);
    expect((await run(process.execPath, ['dist/src/main.js'], { cwd: dir })).stdout).toBe('5\n');

    expect((await build(dir)).stdout).toBe('build: up to date\n');

    const later = new Date(Date.now() + 5_000);
    await utimes(join(dir, LIB), later, later);
    expect((await build(dir)).stdout).toBe(`build: 1 file (${LIB}), and the command\n`);

    await writeFile(join(dir, 'src', 'main.ts'), "console.log('alone');\n");
    await rm(join(dir, LIB));
    await writeFile(join(dir, 'dist/src/old.tsbuildinfo'), '{}');
    expect((await build(dir)).stdout).toBe('build: the command, 1 removed\n');
    expect(await exists(join(dir, 'dist/src/lib/add.js'))).toBe(false);
    expect(await exists(join(dir, 'dist/src/lib/add.js.map'))).toBe(false);
    expect(await exists(join(dir, 'dist/src/old.tsbuildinfo'))).toBe(false);
    expect((await run(process.execPath, ['dist/src/main.js'], { cwd: dir })).stdout).toBe('alone\n');
  }, 30_000);

  it('a module that does not parse: exit 1 naming file:line:col, the command not bundled', async ({ onTestFinished }) => {
    const dir = await project();
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, LIB), 'export const x = ;\n');
    const r = await build(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`${LIB}:1:18 Unexpected ";"\n`);
    expect(await exists(join(dir, 'dist/src/main.js'))).toBe(false);
  }, 30_000);

  it('a command that does not bundle (an import of nothing): exit 1 naming file:line:col', async ({ onTestFinished }) => {
    const dir = await project();
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'src', 'main.ts'), "import { gone } from './gone.js';\nconsole.log(gone);\n");
    const r = await build(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^src\/main\.ts:1:22 Could not resolve "\.\/gone\.js"$/m);
    expect(await exists(join(dir, 'dist/src/lib/add.js'))).toBe(false); // nothing written: the imports are resolved first
  }, 30_000);

  it('a file of ours outside src/ and bench/ that one of them imports is emitted too, as tsc did (bench/ imports test/support/)', async ({ onTestFinished }) => {
    const dir = await project();
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'bench'));
    await mkdir(join(dir, ...HELPER.split('/').slice(0, -1)), { recursive: true });
    await writeFile(join(dir, HELPER), 'export const three = 3;\n');
    await writeFile(join(dir, 'bench', 'run.ts'), `import { three } from '../${HELPER.replace(/\.ts$/, '.js')}';\nconsole.log(three);\n`);
    const r = await build(dir);
    expect(r).toMatchObject({ code: 0, stdout: `build: 3 files (bench/run.ts, ${LIB}, ${HELPER}), and the command\n` });
    expect((await run(process.execPath, ['dist/bench/run.js'], { cwd: dir })).stdout).toBe('3\n');
    expect((await build(dir)).stdout).toBe('build: up to date\n');
  }, 30_000);
});
