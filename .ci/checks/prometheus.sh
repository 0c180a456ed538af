#!/usr/bin/env bash
# Prometheus artefacts, checked with the real tools:
#   1. promtool check rules / test rules on config/prometheus/alerts.yml (+ alerts.test.yml)
#   2. promtool check config on the example scrape config
#   3. promtool check metrics on a scrape of the running keeper (artifacts/metrics.txt, written by
#      test/metrics-scrape.test.ts during `npm test`, which CI runs before this script)
#   4. the dashboard: JSON, datasource, variables, every query's PromQL (through promtool)
#   5. every metric the alerts and the dashboard use is in that scrape; every alert has severity,
#      annotations, an absolute runbook link to its section of docs/runbook.md (one base URL for all:
#      scripts/runbook-links.mjs), and a firing and a quiet unit test
#   6. end to end: the packaged prometheus scrapes the built keeper (example config, embedded
#      simulator) with alerts.yml loaded; a healthy keeper raises exactly the expected alert
#      (small-desk is ineligible), and a killed keeper raises DmsKeeperDown
set -euo pipefail
cd "$(dirname "$0")/../.."

# ---- promtool and prometheus from Debian's package, unpacked, not installed ---------------------
# `apt-get download` + `dpkg -x` gives both binaries without installing or starting the service.
# Cached under the ignored artifacts/ directory and reused; PROMETHEUS_PKG_DIR overrides the place.
pkg="${PROMETHEUS_PKG_DIR:-artifacts/prometheus-pkg}"
promtool="$pkg/usr/bin/promtool"
prometheus="$pkg/usr/bin/prometheus"
if [ ! -x "$promtool" ] || [ ! -x "$prometheus" ]; then
  echo "fetching Debian's prometheus package into $pkg"
  dl=$(mktemp -d)
  (cd "$dl" && apt-get update -qq >/dev/null && apt-get download prometheus >/dev/null)
  mkdir -p "$pkg"
  dpkg -x "$dl"/prometheus_*.deb "$pkg"
  rm -rf "$dl"
fi
promtool=$(realpath "$promtool")
prometheus=$(realpath "$prometheus")
"$promtool" --version | head -n 1

# ---- 1, 2: rules, rule unit tests, example config ----------------------------------------------
"$promtool" check rules config/prometheus/alerts.yml
# rule_files in the test file are relative to it
(cd config/prometheus && "$promtool" test rules alerts.test.yml)
"$promtool" check config config/prometheus/prometheus.example.yml

# ---- 3: the scraped metrics ---------------------------------------------------------------------
scrape=artifacts/metrics.txt
if [ ! -s "$scrape" ]; then
  echo "FAIL: $scrape is missing: npm test writes it (test/metrics-scrape.test.ts); run npm test first" >&2
  exit 1
fi
# prom-client's default metrics include three gauges whose names end in _total
# (nodejs_active_handles_total, nodejs_active_requests_total, nodejs_active_resources_total);
# promtool's lint says gauges must not be named *_total. They are prom-client's names, not ours to
# change, so exactly those three families (HELP, TYPE and samples) are dropped and everything else,
# every dms_keeper_* family included, must lint clean.
grep -vE '^(# (HELP|TYPE) )?nodejs_active_(handles|requests|resources)_total[ {]' "$scrape" | "$promtool" check metrics
echo "promtool check metrics: clean (prom-client's three *_total gauges excluded)"

# ---- 4, 5: dashboard and cross-references -------------------------------------------------------
work=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

DASH_RULES="$work/dashboard-queries.rules.yml" node --input-type=module - <<'JS'
import { readFileSync, writeFileSync } from 'node:fs';
import YAML from 'yaml';

const problems = [];
const fail = (m) => problems.push(m);

// What the keeper really exports (artifacts/metrics.txt): family names from the TYPE lines.
const families = new Map();
for (const m of readFileSync('artifacts/metrics.txt', 'utf8').matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(m[1], m[2]);
const exported = (name) => {
  if (families.has(name)) return true;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return base !== name && ['histogram', 'summary'].includes(families.get(base));
};
// Metric names in PromQL: ours and prom-client's (up, and Prometheus' own series, are not exported).
const metricNames = (expr) => [...expr.matchAll(/\b((?:dms_keeper|process|nodejs)_[a-zA-Z0-9_]+)/g)].map((m) => m[1]);

// ---- alerts ----
const alerts = YAML.parse(readFileSync('config/prometheus/alerts.yml', 'utf8')).groups.flatMap((g) => g.rules);
const tests = YAML.parse(readFileSync('config/prometheus/alerts.test.yml', 'utf8')).tests;
const used = new Map();
const use = (expr, where) => { for (const n of metricNames(expr)) used.set(n, used.get(n) ?? where); };
for (const r of alerts) {
  if (!r.alert) { fail(`a rule without alert name: ${r.record ?? JSON.stringify(r)}`); continue; }
  use(r.expr, `alert ${r.alert}`);
  if (!['critical', 'warning'].includes(r.labels?.severity)) fail(`${r.alert}: severity label must be critical or warning`);
  for (const a of ['summary', 'description', 'runbook', 'runbook_url']) if (!r.annotations?.[a]) fail(`${r.alert}: no ${a} annotation`);
  // runbook_url (one absolute base, an existing section of docs/runbook.md): scripts/runbook-links.mjs, below
  const cases = tests.flatMap((t) => (t.alert_rule_test ?? []).filter((c) => c.alertname === r.alert));
  if (!cases.some((c) => (c.exp_alerts ?? []).length > 0)) fail(`${r.alert}: alerts.test.yml has no case where it fires`);
  if (!cases.some((c) => (c.exp_alerts ?? []).length === 0)) fail(`${r.alert}: alerts.test.yml has no case where it stays quiet`);
}
for (const t of tests) for (const c of t.alert_rule_test ?? []) if (!alerts.some((r) => r.alert === c.alertname)) fail(`alerts.test.yml tests an alert that does not exist: ${c.alertname}`);

// ---- dashboard ----
let dash;
try {
  dash = JSON.parse(readFileSync('config/grafana/dms-keeper.json', 'utf8'));
} catch (e) {
  console.error(`FAIL: config/grafana/dms-keeper.json is not JSON: ${e.message}`);
  process.exit(1);
}
if (!(dash.schemaVersion >= 36)) fail(`dashboard: schemaVersion ${dash.schemaVersion} is too old`);
if (!dash.__inputs?.some((i) => i.name === 'DS_PROMETHEUS' && i.pluginId === 'prometheus')) fail('dashboard: no DS_PROMETHEUS input');
const vars = new Map((dash.templating?.list ?? []).map((v) => [v.name, v]));
if (vars.get('DS_PROMETHEUS')?.type !== 'datasource') fail('dashboard: no DS_PROMETHEUS datasource variable (needed when the file is provisioned, not imported)');
const accountQuery = vars.get('account')?.definition ?? '';
if (!/^label_values\(dms_keeper_armed\b.*,\s*account\)$/.test(accountQuery)) fail(`dashboard: the account variable must be label_values(dms_keeper_armed..., account), is "${accountQuery}"`);
const allPanels = (dash.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
const ids = new Set();
const queries = []; // [where, promql]
for (const p of allPanels) {
  if (ids.has(p.id)) fail(`dashboard: duplicate panel id ${p.id}`);
  ids.add(p.id);
  const g = p.gridPos;
  if (!g || g.x < 0 || g.w < 1 || g.x + g.w > 24 || g.h < 1) fail(`dashboard: panel "${p.title}" has a bad gridPos`);
  if (p.type === 'row') continue;
  if (p.datasource?.uid !== '${DS_PROMETHEUS}') fail(`dashboard: panel "${p.title}" does not use \${DS_PROMETHEUS}`);
  if (!p.targets?.length) fail(`dashboard: panel "${p.title}" has no query`);
  for (const t of p.targets ?? []) {
    if (t.datasource?.uid !== '${DS_PROMETHEUS}') fail(`dashboard: a query of "${p.title}" does not use \${DS_PROMETHEUS}`);
    if (!t.expr) fail(`dashboard: a query of "${p.title}" has no expr`);
    else queries.push([`panel "${p.title}" ${t.refId}`, t.expr]);
  }
}
for (const a of dash.annotations?.list ?? []) if (a.expr) queries.push([`annotation "${a.name}"`, a.expr]);
for (const v of vars.values()) {
  if (v.type !== 'query') continue;
  const m = /^label_values\((.*),\s*\w+\)$/.exec(v.definition ?? '');
  if (!m) fail(`dashboard: variable ${v.name} is not label_values(selector, label)`);
  else queries.push([`variable ${v.name}`, m[1]]);
}
for (const [where, q] of queries) use(q, `dashboard ${where}`);
for (const name of ['dms_keeper_horizon_seconds', 'dms_keeper_armed', 'dms_keeper_arm_requests_total', 'dms_keeper_arm_latency_seconds_bucket', 'dms_keeper_rate_limited_total', 'dms_keeper_open_orders', 'dms_keeper_positions', 'dms_keeper_position_value_usdc', 'dms_keeper_triggers_today', 'dms_keeper_cancels_fired_total', 'dms_keeper_clock_skew_seconds', 'dms_keeper_ws_connected', 'dms_keeper_venue_requests_total', 'process_cpu_seconds_total', 'process_resident_memory_bytes']) {
  if (!queries.some(([, q]) => metricNames(q).includes(name))) fail(`dashboard: no panel shows ${name}`);
}
// Every dashboard query, template variables filled in, as a recording rule: promtool parses them.
const fill = (q) => q.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$job/g, 'dms-keeper').replace(/\$(instance|account)/g, '.*');
writeFileSync(process.env.DASH_RULES, YAML.stringify({ groups: [{ name: 'dashboard-queries', rules: queries.map(([, q], i) => ({ record: `dashboard:query_${i}`, expr: fill(q) })) }] }));

// ---- cross-reference ----
for (const [name, where] of used) if (!exported(name)) fail(`${where} uses ${name}, which the keeper does not export (not in artifacts/metrics.txt)`);

if (problems.length) {
  for (const p of problems) console.error(`FAIL: ${p}`);
  process.exit(1);
}
console.log(`alerts: ${alerts.length} rules, each with severity, annotations, firing and quiet tests`);
console.log(`dashboard: ${allPanels.length} panels, ${queries.length} queries; alerts and dashboard use ${used.size} metric names, all exported`);
JS
node scripts/runbook-links.mjs
"$promtool" check rules "$work/dashboard-queries.rules.yml" >/dev/null
echo "dashboard: every query is valid PromQL (promtool check rules)"

# ---- 6: end to end: a real Prometheus, the real keeper, alerts.yml --------------------------------
if [ ! -f dist/src/main.js ]; then
  echo "FAIL: dist/src/main.js is missing: npm run build (npm test builds it)" >&2
  exit 1
fi
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
keeper_port=$(free_port)
prom_port=$(free_port)
node scripts/demo-credentials.mjs "$work/creds" >/dev/null 2>&1
mkdir -p "$work/state" "$work/prom"
cp config/prometheus/alerts.yml "$work/prom/alerts.yml"
# The example scrape config with the ports of this run and a 1 s cadence.
sed -e "s/127\.0\.0\.1:9464/127.0.0.1:$keeper_port/" -e 's/\(scrape_interval\|evaluation_interval\|scrape_timeout\): [0-9a-z]*/\1: 1s/' \
  config/prometheus/prometheus.example.yml > "$work/prom/prometheus.yml"
grep -q "127.0.0.1:$keeper_port" "$work/prom/prometheus.yml"

env -u NOTIFY_SOCKET -u STATE_DIRECTORY CREDENTIALS_DIRECTORY="$work/creds" DMS_KEEPER_STATE_DIR="$work/state" \
  DMS_KEEPER_SERVER__LISTEN="127.0.0.1:$keeper_port" DMS_KEEPER_LOG__LEVEL=warn \
  node dist/src/main.js run --config config/dms-keeper.example.yaml >"$work/keeper.log" 2>&1 &
keeper_pid=$!
disown "$keeper_pid" # it is SIGKILLed on purpose below: no job notice
pids+=("$keeper_pid")
"$prometheus" --config.file="$work/prom/prometheus.yml" --storage.tsdb.path="$work/prom/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!
pids+=("$prom_pid")

RULES=$(grep -cE '^\s*- alert:' config/prometheus/alerts.yml) KEEPER_PID=$keeper_pid PROM_PID=$prom_pid PROM="http://127.0.0.1:$prom_port" WORK="$work" node --input-type=module - <<'JS'
const prom = process.env.PROM;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const api = async (path) => {
  const r = await fetch(`${prom}${path}`);
  const body = await r.json();
  if (body.status !== 'success') throw new Error(`${path}: ${JSON.stringify(body)}`);
  return body.data;
};
const query = async (q) => (await api(`/api/v1/query?query=${encodeURIComponent(q)}`)).result;
const active = async () => (await api('/api/v1/alerts')).alerts.map((a) => `${a.labels.alertname}${a.labels.account ? `{account=${a.labels.account}}` : ''}`).sort();
async function until(what, pred, ms) {
  const t0 = Date.now();
  let last;
  for (;;) {
    try {
      process.kill(Number(process.env.PROM_PID), 0); // throws once prometheus has exited
    } catch {
      throw new Error(`prometheus exited while waiting for ${what}`);
    }
    try {
      last = await pred();
      if (last === true) return;
    } catch (e) {
      last = e.message;
    }
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await sleep(250);
  }
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
try {
  await until('the rules to load', async () => (await api('/api/v1/rules')).groups.flatMap((g) => g.rules).length === Number(process.env.RULES) || 'not yet', 15_000);
  await until('the keeper to be scraped, ready', async () => {
    const up = await query('up{job="dms-keeper"} == 1 and on(job, instance) dms_keeper_up == 1');
    const armed = await query('count(dms_keeper_armed == 1)');
    return (up.length === 1 && armed[0]?.value[1] === '5') || { up: up.length, armed: armed[0]?.value[1] };
  }, 20_000);
  // A few evaluations, then: a healthy keeper raises exactly one alert (pending: for 1m), for the
  // account the venue refuses to protect; nothing else is even pending.
  await sleep(4_000);
  const expected = ['DmsKeeperAccountIneligible{account=small-desk}'];
  await until(`exactly ${expected} active`, async () => same(await active(), expected) || (await active()), 10_000);
  console.log(`e2e: healthy keeper scraped by prometheus; active alerts: ${expected.join(', ')}`);

  process.kill(Number(process.env.KEEPER_PID), 'SIGKILL');
  await until('DmsKeeperDown pending after the keeper was killed', async () => (await active()).includes('DmsKeeperDown') || (await active()), 15_000);
  console.log('e2e: keeper killed; DmsKeeperDown raised');
} catch (e) {
  const { readFileSync } = await import('node:fs');
  console.error(`FAIL: end-to-end: ${e.message}`);
  for (const f of ['keeper.log', 'prometheus.log']) console.error(`--- ${f}\n${readFileSync(`${process.env.WORK}/${f}`, 'utf8').slice(-3000)}`);
  process.exit(1);
}
JS
echo "prometheus checks: all passed"
