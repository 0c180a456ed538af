// The reliability table of docs/reliability.md, produced by the suite itself:
//   npm test                                     (writes artifacts/vitest.json, see vitest.config.ts)
//   node scripts/reliability-table.mjs [--write]     (--write splices it into docs/reliability.md)
// Test titles read "<scenario> :: <invariant>". Without --write it exits 1 when the table is stale.
import { readFileSync, writeFileSync } from 'node:fs';

const SUITES = ['test/reliability.test.ts', 'test/process-faults.test.ts', 'test/hostile-input.test.ts'];
const report = JSON.parse(readFileSync('artifacts/vitest.json', 'utf8'));
const rows = [];
const files = report.testResults.filter((f) => SUITES.some((s) => f.name.endsWith(s)));
if (files.length !== SUITES.length) throw new Error(`artifacts/vitest.json lacks ${SUITES.join(' or ')}: run npm test first`);
files.sort((a, b) => SUITES.findIndex((s) => a.name.endsWith(s)) - SUITES.findIndex((s) => b.name.endsWith(s)));
for (const file of files) {
  for (const t of file.assertionResults) {
    const [scenario, invariant] = t.title.includes(' :: ') ? t.title.split(' :: ') : [t.title, t.ancestorTitles.at(-1) ?? ''];
    rows.push(`| ${scenario.replace(/\|/g, '\\|')} | ${invariant.replace(/\|/g, '\\|')} | ${t.status === 'passed' ? 'pass' : t.status.toUpperCase()} |`);
  }
}
const table = ['| scenario | invariant | result |', '|---|---|---|', ...rows].join('\n');
const begin = '<!-- reliability-table:begin -->';
const end = '<!-- reliability-table:end -->';
const DOC = 'docs/reliability.md';
const readme = readFileSync(DOC, 'utf8');
const i = readme.indexOf(begin);
const j = readme.indexOf(end);
if (i < 0 || j < 0) throw new Error(`${DOC} has no reliability-table markers`);
const next = `${readme.slice(0, i + begin.length)}\n${table}\n${readme.slice(j)}`;
if (process.argv.includes('--write')) {
  writeFileSync(DOC, next);
  console.log(`${DOC}: ${rows.length} rows`);
} else if (next !== readme) {
  console.error(`${DOC}: the reliability table is stale: run the suite, then node scripts/reliability-table.mjs --write`);
  process.exit(1);
} else {
  console.log(`${DOC}: the reliability table is current (${rows.length} rows, ${rows.filter((r) => r.endsWith('| pass |')).length} pass)`);
}
if (rows.some((r) => !r.endsWith('| pass |'))) process.exit(1);
