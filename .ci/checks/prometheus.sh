#!/usr/bin/env bash
# Prometheus artefacts: alert rules check and unit tests, the example scrape config, the scrape of a
# running keeper (written by test/metrics-scrape.test.ts during npm test), the Grafana dashboard.
set -euo pipefail
cd "$(dirname "$0")/../.."

# promtool from Debian's prometheus package, unpacked without installing the service (OPS.md).
cache=artifacts/prometheus-pkg
promtool="$cache/usr/bin/promtool"
if [ ! -x "$promtool" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get update -qq >/dev/null && apt-get download prometheus >/dev/null 2>&1)
  dpkg -x "$tmp"/prometheus_*.deb "$cache"
  rm -rf "$tmp"
fi
"$promtool" --version | head -n 1

"$promtool" check rules config/prometheus/alerts.yml
(cd config/prometheus && "../../$promtool" test rules alerts.test.yml)
"$promtool" check config config/prometheus/prometheus.example.yml

[ -s artifacts/metrics.txt ] || { echo "artifacts/metrics.txt is missing: npm test writes it (test/metrics-scrape.test.ts)"; exit 1; }
# prom-client's default metrics include three gauges named *_total that promtool flags; they are not
# ours to rename, so exactly those three are filtered out and everything else must be clean.
grep -vE '^(# (HELP|TYPE) )?nodejs_active_(handles|requests|resources)_total\b' artifacts/metrics.txt | "$promtool" check metrics
echo "metrics: promtool check metrics clean (prom-client's three *_total gauges excluded)"

# Every metric the alerts and the dashboard use must exist in a real scrape.
node - <<'JS'
const fs = require('node:fs');
const scraped = new Set(fs.readFileSync('artifacts/metrics.txt', 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(/[{ ]/)[0]));
const used = new Set();
const grab = (text) => { for (const m of text.matchAll(/\b((?:dms_keeper|process|nodejs)_[a-z0-9_]+)/g)) used.add(m[1]); };
grab(fs.readFileSync('config/prometheus/alerts.yml', 'utf8'));
const dash = JSON.parse(fs.readFileSync('config/grafana/dms-keeper.json', 'utf8'));
for (const p of dash.panels ?? []) for (const t of p.targets ?? []) grab(t.expr ?? '');
grab(JSON.stringify(dash.templating ?? {}));
const base = (n) => n.replace(/_(bucket|sum|count)$/, '');
const missing = [...used].filter((n) => !scraped.has(n) && !scraped.has(`${n}_bucket`) && !scraped.has(base(n) + '_bucket'));
if (missing.length) { console.error('used but never exported:', missing.join(', ')); process.exit(1); }
console.log(`alerts + dashboard use ${used.size} metric names, all exported`);
JS
