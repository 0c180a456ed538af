// Validates rendered Kubernetes manifests (`kubectl kustomize DIR` output) offline, against the
// Kubernetes API schemas of the npm package kubernetes-models and the Prometheus Operator's of
// @kubernetes-models/prometheus-operator. CI: .ci/checks/kubernetes.sh.
//
//   node scripts/kubernetes-validate.mjs RENDERED.yaml [SAME-FROM-ANOTHER-KUSTOMIZE.yaml ...]
//
// Every object must be of a kind these packages model (an unknown kind is an error, not a pass).
// Further files are renders of the same kustomization by other Kustomize versions: they must hold
// the same objects (ConfigMap name hashes aside: each version hashes differently).
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';

/** The model class of an object's apiVersion and kind, or undefined when no package models it. */
export async function modelOf(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const pkg = group === 'monitoring.coreos.com' ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models';
  const path = `${pkg}/${group === '' ? '' : `${group}/`}${version}/${kind}`;
  try {
    return (await import(path))[kind];
  } catch {
    return undefined;
  }
}

/** Problems of one rendered stream: schema errors and unmodelled kinds. */
export async function validateObjects(objects) {
  const problems = [];
  for (const o of objects) {
    const what = `${o?.kind ?? '?'}/${o?.metadata?.name ?? '?'}`;
    const Model = typeof o?.apiVersion === 'string' && typeof o?.kind === 'string' ? await modelOf(o.apiVersion, o.kind) : undefined;
    if (!Model) {
      problems.push(`${what}: no schema for ${o?.apiVersion} ${o?.kind}`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (e) {
      problems.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return problems;
}

export function parseStream(text) {
  return YAML.parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(d.errors.map((e) => e.message).join('; '));
      return d.toJS();
    })
    .filter((o) => o !== null);
}

/**
 * The objects in a form two Kustomize versions agree on for the same input: generated name hashes
 * removed (each version hashes differently), empty metadata maps dropped (v2 writes `labels: {}`),
 * and lists keyed by `name` (volumes, containers, ports, ...) in name order (v5 puts a patched
 * volume first, v2 leaves it in place; the API merges such lists by name).
 */
export function normalized(objects) {
  const text = JSON.stringify(objects).replace(/"(dms-keeper-config)-[a-z0-9]{10}"/g, '"$1"');
  const walk = (v) => {
    if (Array.isArray(v)) {
      const items = v.map(walk);
      const named = items.length > 0 && items.every((i) => i !== null && typeof i === 'object' && typeof i.name === 'string');
      return named ? items.sort((a, b) => a.name.localeCompare(b.name)) : items;
    }
    if (v === null || typeof v !== 'object') return v;
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      if ((k === 'labels' || k === 'annotations') && x !== null && typeof x === 'object' && Object.keys(x).length === 0) continue;
      out[k] = walk(x);
    }
    return out;
  };
  const key = (o) => `${o.apiVersion} ${o.kind} ${o.metadata?.name}`;
  return walk(JSON.parse(text)).sort((a, b) => key(a).localeCompare(key(b)));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node scripts/kubernetes-validate.mjs RENDERED.yaml [OTHER-RENDER.yaml ...]');
    process.exit(2);
  }
  const [first, ...others] = files.map((f) => ({ file: f, objects: parseStream(readFileSync(f, 'utf8')) }));
  const problems = await validateObjects(first.objects);
  for (const o of others) {
    if (!isDeepStrictEqual(normalized(o.objects), normalized(first.objects))) problems.push(`${o.file} renders other objects than ${first.file}`);
  }
  for (const p of problems) console.error(`FAIL ${p}`);
  const kinds = first.objects.map((o) => o.kind).join(', ');
  console.log(`${problems.length === 0 ? 'ok' : 'FAILED'}: ${first.objects.length} objects valid against the schemas (${kinds})${others.length ? `; ${others.length + 1} Kustomize versions agree` : ''}`);
  process.exit(problems.length === 0 ? 0 : 1);
}
