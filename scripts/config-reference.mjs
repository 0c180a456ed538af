// docs/configuration.md from the config schema (src/config/reference.ts), so it cannot drift.
//   node scripts/config-reference.mjs           exit 1 when docs/configuration.md is stale
//   node scripts/config-reference.mjs --write   regenerate it
// Reads the built code: run `npm run build` first (npm test and npm start build).
import { readFileSync, writeFileSync } from 'node:fs';
import { configReference, referenceProblems } from '../dist/src/config/reference.js';

const file = 'docs/configuration.md';
const problems = referenceProblems();
if (problems.length) {
  for (const p of problems) console.error(`FAIL: ${p}`);
  process.exit(1);
}
const want = configReference();
if (process.argv.includes('--write')) {
  writeFileSync(file, want);
  console.log(`${file}: written from the schema`);
} else if (readFileSync(file, 'utf8') !== want) {
  console.error(`FAIL: ${file} is stale: npm run build && node scripts/config-reference.mjs --write`);
  process.exit(1);
} else console.log(`${file} matches the schema`);
