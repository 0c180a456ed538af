/**
 * `npm run bench:budget -- --scenario n180|n228|n270|told200|shards|all`: issue 19's budget
 * scenarios against the built keeper (bench/budget-scenarios.ts has what each runs and measures).
 * Prints one JSON line per scenario, writes artifacts/budget.json (the latest run of each scenario), exits 1 when a bound of the
 * issue's "Done when" is missed. Real time: a minute or two per scenario. `shards` needs a
 * redis-server ($REDIS_SERVER, on PATH, or `bash .ci/checks/redis.sh`).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, runShards, runSingle, SCENARIOS, type ScenarioName, type ScenarioResult } from './budget-scenarios.js';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { scenario: { type: 'string', default: 'all' } } });
  const wanted = values.scenario === 'all' ? [...SCENARIOS] : [values.scenario as ScenarioName];
  if (!wanted.every((s) => SCENARIOS.includes(s))) throw new Error(`--scenario must be one of ${SCENARIOS.join(', ')} or all`);
  const results: ScenarioResult[] = [];
  for (const s of wanted) {
    const r = s === 'shards' ? await runShards() : await runSingle(s);
    results.push(r);
    console.log(JSON.stringify(r));
    for (const b of r.bounds.filter((x) => !x.ok)) console.error(`FAIL ${s}: ${b.what}`);
  }
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  // One scenario at a time replaces its own entry: the file keeps the latest run of each.
  const file = join(ROOT, 'artifacts/budget.json');
  const before = await readFile(file, 'utf8').then((t) => (JSON.parse(t) as { results?: ScenarioResult[] }).results ?? [], () => []);
  const merged = SCENARIOS.flatMap((s) => results.filter((r) => r.scenario === s).concat(results.some((r) => r.scenario === s) ? [] : before.filter((r) => r.scenario === s)));
  await writeFile(file, JSON.stringify({ at: new Date().toISOString(), results: merged }, null, 2));
  console.error(`artifacts/budget.json: ${results.filter((r) => r.ok).length} of ${results.length} scenarios within their bounds`);
  return results.every((r) => r.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`bench:budget failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
