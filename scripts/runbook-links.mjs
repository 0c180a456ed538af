// Runbook links of the alert rules: every alert's runbook_url is BASE#<alert name in lower case>,
// one section of docs/runbook.md, with one BASE for every alert (an absolute URL: Alertmanager,
// chat and pager messages cannot resolve a relative one).
//
//   node scripts/runbook-links.mjs                 check (CI): one absolute base, every anchor exists
//   node scripts/runbook-links.mjs --base URL      point every link at URL (alerts.yml and its tests)
//
// URL is where your copy of docs/runbook.md is rendered, e.g.
//   https://github.com/YOUR-ORG/dms-keeper/blob/main/docs/runbook.md
//   https://gitlab.example.com/desk/dms-keeper/-/blob/main/docs/runbook.md
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ALERTS = join(root, 'config/prometheus/alerts.yml');
const TESTS = join(root, 'config/prometheus/alerts.test.yml');
const RUNBOOK = join(root, 'docs/runbook.md');
const LINE = /^(\s*runbook_url:\s*)"?([^"#\s]*)#([a-z0-9-]+)"?\s*$/gm;

const args = process.argv.slice(2);
const at = args.indexOf('--base');
if (at >= 0) {
  const base = args[at + 1];
  if (!base || !/^https?:\/\/[^\s#"]+$/.test(base)) {
    console.error('runbook-links: --base needs an absolute http(s) URL without #, e.g. https://github.com/YOUR-ORG/dms-keeper/blob/main/docs/runbook.md');
    process.exit(2);
  }
  for (const file of [ALERTS, TESTS]) {
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(LINE, (_m, head, _old, anchor) => `${head}"${base}#${anchor.replace(/^runbook-/, "")}"`));
  }
  console.log(`runbook links now start with ${base}`);
}

const problems = [];
const alerts = YAML.parse(readFileSync(ALERTS, 'utf8')).groups.flatMap((g) => g.rules).filter((r) => r.alert);
const runbook = readFileSync(RUNBOOK, 'utf8');
const bases = new Set();
for (const r of alerts) {
  const url = r.annotations?.runbook_url ?? '';
  const anchor = r.alert.toLowerCase();
  const m = /^(https?:\/\/[^\s#]+)#([a-z0-9-]+)$/.exec(url);
  if (!m) {
    problems.push(`${r.alert}: runbook_url "${url}" is not an absolute URL with an anchor`);
    continue;
  }
  bases.add(m[1]);
  if (m[2] !== anchor) problems.push(`${r.alert}: runbook_url ends in #${m[2]}, expected #${anchor}`);
  // GitHub and GitLab make "## DmsKeeperDown" the anchor #dmskeeperdown.
  if (!new RegExp(`^## ${r.alert}\\s*$`, 'm').test(runbook)) problems.push(`${r.alert}: docs/runbook.md has no "## ${r.alert}" section (its link would be dead)`);
}
if (bases.size > 1) problems.push(`runbook_url uses ${bases.size} different bases (${[...bases].join(', ')}): set one with --base URL`);
for (const m of readFileSync(TESTS, 'utf8').matchAll(LINE)) {
  if (!bases.has(m[2])) problems.push(`alerts.test.yml expects a runbook_url with base "${m[2]}", not the rules' base: run --base again`);
}
for (const h of runbook.matchAll(/^## (DmsKeeper\w+)\s*$/gm)) {
  if (!alerts.some((r) => r.alert === h[1])) problems.push(`docs/runbook.md has a section for ${h[1]}, which is not an alert of alerts.yml`);
}
if (problems.length) {
  for (const p of problems) console.error(`FAIL: ${p}`);
  process.exit(1);
}
console.log(`runbook links: ${alerts.length} alerts, one base (${[...bases][0]}), every anchor a section of docs/runbook.md`);
