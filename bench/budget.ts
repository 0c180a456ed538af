/**
 * `npm run bench:budget -- --scenario n180|n228|n270|told200|shards|all`: issue 19's budget
 * scenarios against the built keeper (bench/budget-scenarios.ts has what each runs and measures).
 * Prints one JSON line per scenario, writes artifacts/budget.json (the latest run of each scenario), exits 1 when a bound of the
 * issue's "Done when" is missed. Real time: a minute or two per scenario. `shards` needs a
 * redis-server ($REDIS_SERVER, on PATH, or `bash .ci/checks/redis.sh`).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { recordScenarios, runMain } from './results.js';
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
  return recordScenarios(join(ROOT, 'artifacts/budget.json'), SCENARIOS, results);
}

runMain('bench:budget', main);
