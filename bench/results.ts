import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

/**
 * Writes a bench's results to its artifact `file`, keeping the last run of each scenario: a run of
 * one scenario replaces its own entry and leaves the others' as they were. Says how many were
 * within their bounds; returns the exit code (0 when all were).
 */
export async function recordScenarios<S extends string, R extends { scenario: S; ok: boolean }>(file: string, scenarios: readonly S[], results: readonly R[]): Promise<number> {
  const before = await readFile(file, 'utf8').then((t) => (JSON.parse(t) as { results?: R[] }).results ?? [], () => []);
  const merged = scenarios.flatMap((s) => results.filter((r) => r.scenario === s).concat(results.some((r) => r.scenario === s) ? [] : before.filter((r) => r.scenario === s)));
  await writeFile(file, JSON.stringify({ at: new Date().toISOString(), results: merged }, null, 2));
  console.error(`${basename(dirname(file))}/${basename(file)}: ${results.filter((r) => r.ok).length} of ${results.length} scenarios within their bounds`);
  return results.every((r) => r.ok) ? 0 : 1;
}

/** Runs a bench's `main` and exits with its code; a crash exits 1 with its stack, named `name`. */
export function runMain(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(`${name} failed: ${(e as Error).stack ?? e}`);
      process.exit(1);
    },
  );
}
