// Compares the keeper's virtual-time timelines across runs of the suite, to the millisecond:
//   DMSK_TIMELINE_DIGESTS=artifacts/digests-1.jsonl npm test      (and again, -2, -3 ...)
//   node scripts/timeline-digests.mjs artifacts/digests-1.jsonl artifacts/digests-2.jsonl ...
// Each line is one harness run (test/support/harness.ts): a digest of every signed action at the
// simulated venue (virtual time, account, route, result) and of the keeper's request counts. Exits 1
// when a timeline differs between runs, or ran in one and not another. A run under a profile drawn
// at random (a property test's seed, named in brackets) compares only with runs of the same seed,
// by its distinct timelines: fast-check may draw one seed once in a run and twice in the next.
import { readFileSync } from 'node:fs';

const files = process.argv.slice(2);
if (files.length < 2) {
  console.error('usage: node scripts/timeline-digests.mjs RUN1.jsonl RUN2.jsonl [...]');
  process.exit(2);
}
/** test -> its harness runs' digests, in order */
const runs = files.map((f) => {
  const byTest = new Map();
  for (const line of readFileSync(f, 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    const list = byTest.get(r.test) ?? [];
    list.push(`${r.transport} end=${r.endMonoMs} actions=${r.actions} ${r.digest}`);
    byTest.set(r.test, list);
  }
  return byTest;
});
const tests = [...new Set(runs.flatMap((m) => [...m.keys()]))].sort();
let differ = 0;
let seeded = 0;
for (const t of tests) {
  const random = / \[random:\d+\]$/.test(t);
  const seen = runs.map((m) => {
    const list = m.get(t);
    return JSON.stringify(list && random ? [...new Set(list)].sort() : (list ?? null));
  });
  if (random && seen.includes('null')) {
    seeded++;
    continue;
  }
  if (new Set(seen).size !== 1) {
    differ++;
    console.log(`DIFFERS: ${t}`);
    seen.forEach((s, i) => console.log(`  ${files[i]}: ${s}`));
  }
}
const harnessRuns = runs[0] ? [...runs[0].values()].reduce((n, l) => n + l.length, 0) : 0;
console.log(
  `${tests.length - seeded} timelines (${harnessRuns} harness runs in the first) over ${files.length} runs: ${differ === 0 ? 'identical in every run' : `${differ} differ`}` +
    (seeded > 0 ? ` (${seeded} random-profile seeds drawn in only some runs not compared)` : ''),
);
process.exit(differ === 0 ? 0 : 1);
