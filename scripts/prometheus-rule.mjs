// The alert rules as a Prometheus Operator PrometheusRule: one source (config/prometheus/alerts.yml,
// which promtool checks and unit-tests), two forms. The Kubernetes base ships the generated file.
//
//   node scripts/prometheus-rule.mjs           write deploy/kubernetes/base/prometheus-rule.yaml
//   node scripts/prometheus-rule.mjs --check   exit 1 if the committed file is not what alerts.yml gives (CI)
//
// Run it after every change to alerts.yml (also after scripts/runbook-links.mjs --base URL).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SOURCE = 'config/prometheus/alerts.yml';
export const TARGET = 'deploy/kubernetes/base/prometheus-rule.yaml';

/** The PrometheusRule for the text of alerts.yml: its groups, unchanged. */
export function prometheusRule(alertsText) {
  const doc = YAML.parse(alertsText);
  if (!doc || !Array.isArray(doc.groups) || doc.groups.length === 0) throw new Error(`${SOURCE}: no groups`);
  const keys = Object.keys(doc).filter((k) => k !== 'groups');
  if (keys.length > 0) throw new Error(`${SOURCE}: keys a PrometheusRule cannot carry: ${keys.join(', ')}`);
  const rule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'dms-keeper',
      labels: { 'app.kubernetes.io/name': 'dms-keeper', 'app.kubernetes.io/component': 'keeper' },
    },
    spec: { groups: doc.groups },
  };
  const header = [
    `# GENERATED from ${SOURCE} by scripts/prometheus-rule.mjs: do not edit; change alerts.yml and run`,
    '# `node scripts/prometheus-rule.mjs`. CI fails when the two differ.',
    "# Add the label your Prometheus' ruleSelector wants (kube-prometheus-stack: release: NAME) in your overlay.",
  ].join('\n');
  return `${header}\n${YAML.stringify(rule, { lineWidth: 0 })}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const want = prometheusRule(readFileSync(join(root, SOURCE), 'utf8'));
  const path = join(root, TARGET);
  if (process.argv.includes('--check')) {
    let have = '';
    try {
      have = readFileSync(path, 'utf8');
    } catch {
      // missing: reported below
    }
    if (have !== want) {
      console.error(`prometheus-rule: ${TARGET} is not what ${SOURCE} generates; run: node scripts/prometheus-rule.mjs`);
      process.exit(1);
    }
    const alerts = YAML.parse(want).spec.groups.flatMap((g) => g.rules).filter((r) => r.alert).length;
    console.log(`prometheus-rule: ${TARGET} matches ${SOURCE} (${alerts} alerts)`);
  } else {
    writeFileSync(path, want);
    console.log(`prometheus-rule: wrote ${TARGET} from ${SOURCE}`);
  }
}
