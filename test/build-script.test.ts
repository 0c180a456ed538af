/**
 * scripts/build.mjs on a small project of its own (the repository's tsconfigs and package.json, two
 * source files): it emits what tsc emits, only what changed, removes what lost its source, and
 * fails naming the place when a file does not parse.
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

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dmsk-build-'));
  await mkdir(join(dir, 'scripts'));
  await mkdir(join(dir, 'src', 'lib'), { recursive: true });
  for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.mjs']) await cp(join(ROOT, f), join(dir, f));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  await writeFile(join(dir, 'src', 'lib', 'add.ts'), 'export type Pair = [number, number];\nexport const add = ([a, b]: Pair): number => a + b;\n');
  await writeFile(join(dir, 'src', 'main.ts'), "import { add, type Pair } from './lib/add.js';\nconst p: Pair = [2, 3];\nconsole.log(add(p));\n");
  await writeFile(join(dir, 'src', 'main.test.ts'), 'export {};\n');
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
  it('emits runnable ES modules and maps, not the tests; then only what changed; removes what lost its source', async ({ onTestFinished }) => {
    const dir = await project();
    onTestFinished(() => rm(dir, { recursive: true, force: true }));

    const first = await build(dir);
    expect(first).toMatchObject({ code: 0, stdout: `build: 2 files (${LIB}, src/main.ts)\n` });
    expect(await exists(join(dir, 'dist/src/main.test.js'))).toBe(false);
    expect(await exists(join(dir, 'dist/src/lib/add.js.map'))).toBe(true);
    const js = await readFile(join(dir, 'dist/src/main.js'), 'utf8');
    expect(js).toMatch(/^import \{ add \} from '\.\/lib\/add\.js';$/m); // ESM, the type-only name elided
    expect((await run(process.execPath, ['dist/src/main.js'], { cwd: dir })).stdout).toBe('5\n');

    expect((await build(dir)).stdout).toBe('build: up to date\n');

    const later = new Date(Date.now() + 5_000);
    await utimes(join(dir, LIB), later, later);
    expect((await build(dir)).stdout).toBe(`build: 1 file (${LIB})\n`);

    await rm(join(dir, LIB));
    await writeFile(join(dir, 'dist/src/old.tsbuildinfo'), '{}');
    expect((await build(dir)).stdout).toBe('build: up to date, 1 removed\n');
    expect(await exists(join(dir, 'dist/src/lib/add.js'))).toBe(false);
    expect(await exists(join(dir, 'dist/src/lib/add.js.map'))).toBe(false);
    expect(await exists(join(dir, 'dist/src/old.tsbuildinfo'))).toBe(false);
  }, 30_000);

  it('a file that does not parse: exit 1 naming file:line:col, the others still built', async ({ onTestFinished }) => {
    const dir = await project();
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'src', 'main.ts'), 'const x = ;\n');
    const r = await build(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^src\/main\.ts:1:11 Expression expected\.$/m);
    expect(await exists(join(dir, 'dist/src/lib/add.js'))).toBe(true);
    expect(await exists(join(dir, 'dist/src/main.js'))).toBe(false);
  }, 30_000);
});
