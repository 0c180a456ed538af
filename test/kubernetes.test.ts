/**
 * The Kubernetes manifests (deploy/kubernetes/), without a cluster:
 *   - the base, base/core, the simulator overlay and the bot-sidecar example render (`kubectl
 *     kustomize`, Kustomize v5+) in current syntax with nothing on stderr (no deprecation warning),
 *     and every object is valid against the Kubernetes and Prometheus Operator schemas
 *     (kubernetes-models);
 *   - the keeper's pods spread over nodes (topologySpreadConstraints on kubernetes.io/hostname);
 *   - shard coverage: for 1, 2 and 5 replicas (scaled with the patch docs/operations.md shows),
 *     pods dms-keeper-0..N-1, each with the ConfigMap's config and exactly the environment the
 *     manifest gives it, cover every account twice (replication 2; once with a single pod), by the
 *     keeper's own shard function (the built CLI's check-config);
 *   - a keeper started with exactly what the StatefulSet gives pod 1 of 2 (image entrypoint and
 *     the container's args, its environment, the ConfigMap's file, the Secret's files as the init
 *     container copies them) protects its shard and, as second replica, the other one, against the
 *     venue simulator.
 * A pod's paths (mounts, the image's /app) are mapped onto temporary directories and the repo.
 */
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { benchKey } from '../bench/keys.js';
import { shardOf } from '../src/config/shard.js';
import { heapLimitMb } from '../src/config/memory.js';
import { freePort, getJson, MAIN, ROOT, startCli, type Proc } from './support/cli.js';
import { startSim } from './support/keeper-process.js';

const run = promisify(execFile);
const BASE = 'deploy/kubernetes/base';
const CORE = 'deploy/kubernetes/base/core';
const OVERLAY = 'deploy/kubernetes/overlays/simulator';
const SIDECAR = 'deploy/kubernetes/examples/bot-sidecar';

/** kubectl with Kustomize: $KUBECTL (CI: the one .ci/checks/kubernetes.sh checked), else PATH's. */
function findKubectl(): string | undefined {
  const candidates = [process.env.KUBECTL, ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'kubectl'))];
  return candidates.find((c): c is string => c !== undefined && c !== '' && existsSync(c));
}
const KUBECTL = findKubectl();
if (!KUBECTL) process.stderr.write('kubernetes.test.ts: no kubectl (set KUBECTL, or run .ci/checks/kubernetes.sh): rendering tests skipped\n');
// CI must render: there a missing kubectl fails the suite instead of skipping it.
const describeRender = KUBECTL || process.env.CI ? describe : describe.skip;

type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [k: string]: unknown };

/**
 * `kubectl kustomize dir`'s objects. Anything on stderr fails: Kustomize v5 warns there about
 * deprecated fields (`bases`, `patchesStrategicMerge`), as every `kubectl apply -k` would.
 */
async function render(dir: string): Promise<Obj[]> {
  if (!KUBECTL) throw new Error('no kubectl to render with (CI checks its own: .ci/checks/kubernetes.sh)');
  const { stdout, stderr } = await run(KUBECTL, ['kustomize', dir], { cwd: ROOT, maxBuffer: 16 << 20 });
  expect(stderr, `${KUBECTL} kustomize ${dir} printed on stderr`).toBe('');
  return YAML.parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const MODELS: Record<string, new (o: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

function validate(o: Obj): string | undefined {
  const Model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!Model) return `no schema for ${o.apiVersion} ${o.kind}`;
  try {
    new Model(o as never).validate();
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

// ---- the pod a StatefulSet makes, run here ------------------------------------------------------

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface Mount {
  name: string;
  mountPath: string;
}
interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  volumeMounts?: Mount[];
  resources?: { limits?: { memory?: string } };
}
interface PodSpec {
  enableServiceLinks?: boolean;
  initContainers?: Container[];
  containers: Container[];
  volumes: Array<{ name: string; configMap?: { name: string }; projected?: { sources: Array<{ secret?: { name: string; items?: Array<{ key: string; path: string }> } }> } }>;
  terminationGracePeriodSeconds?: number;
  topologySpreadConstraints?: Array<{ topologyKey: string; maxSkew: number; whenUnsatisfiable: string; labelSelector?: { matchLabels?: Record<string, string> }; nodeTaintsPolicy?: string }>;
}
interface Sts extends Obj {
  spec: { replicas: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}

const statefulSet = (objs: Obj[], name = 'dms-keeper') => objs.find((o) => o.kind === 'StatefulSet' && o.metadata.name === name) as Sts;

/** The image's ENV (the last stage of the Dockerfile), which the container's env overrides. */
async function imageEnv(): Promise<Record<string, string>> {
  const text = (await readFile(join(ROOT, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ');
  const last = text.slice(text.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const line of last.split('\n').filter((l) => l.startsWith('ENV '))) {
    for (const m of line.slice(4).matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) env[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
  }
  return env;
}

/**
 * The environment Kubernetes gives container `c` of pod `ordinal`: the image's ENV, the service
 * links of every Service with a cluster IP (unless enableServiceLinks is false), then the
 * container's env with fieldRefs resolved and $(VAR) references expanded as the kubelet does.
 */
async function podEnv(objs: Obj[], spec: PodSpec, c: Container, ordinal: number): Promise<Record<string, string>> {
  const env: Record<string, string> = { ...(await imageEnv()), HOSTNAME: `dms-keeper-${ordinal}`, KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
  if (spec.enableServiceLinks !== false) {
    for (const s of objs.filter((o) => o.kind === 'Service') as Array<Obj & { spec: { clusterIP?: string; ports: Array<{ port: number }> } }>) {
      if (s.spec.clusterIP === 'None') continue;
      const n = s.metadata.name.toUpperCase().replace(/-/g, '_');
      env[`${n}_SERVICE_HOST`] = '10.96.0.10';
      env[`${n}_SERVICE_PORT`] = String(s.spec.ports[0]!.port);
      env[`${n}_PORT`] = `tcp://10.96.0.10:${s.spec.ports[0]!.port}`;
    }
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) {
      env[e.name] = e.value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string | undefined) => (v === undefined ? '$' : (env[v] ?? m)));
    } else if (e.valueFrom?.fieldRef) {
      const path = e.valueFrom.fieldRef.fieldPath;
      if (path === "metadata.labels['apps.kubernetes.io/pod-index']") env[e.name] = String(ordinal);
      else if (path === 'metadata.name') env[e.name] = `dms-keeper-${ordinal}`;
      else throw new Error(`this test does not know fieldRef ${path}: teach it`);
    } else {
      throw new Error(`this test does not know the env source of ${e.name}: teach it`);
    }
  }
  return env;
}

const dirs: string[] = [];
const procs: Proc[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
});
afterAll(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** The files of the Secrets the base names, as `kubectl create secret generic` would hold them. */
function secretFiles(objs: Obj[]): Record<string, string> {
  const cfg = YAML.parse(configText(objs)) as { accounts: Array<{ name: string; address: string; master_key?: { file?: string } }> };
  const files: Record<string, string> = { 'dms-keeper-redis/password': 'a-test-password\n' };
  for (const [i, a] of cfg.accounts.entries()) if (a.master_key?.file) files[`dms-keeper-keys/${a.master_key.file}`] = `${benchKey(i)}\n`;
  return files;
}

function configText(objs: Obj[]): string {
  const spec = statefulSet(objs).spec.template.spec;
  const name = spec.volumes.find((v) => v.configMap)!.configMap!.name;
  const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name) as Obj & { data: Record<string, string> };
  return cm.data['dms-keeper.yaml']!;
}

/**
 * A pod's volumes laid out in a temporary directory: the ConfigMap's files, the projected Secret
 * files (mode 0440, as with fsGroup), an empty credentials emptyDir, an empty state claim. Then the
 * init containers run, as the kubelet runs them, with the pod's environment. Returns `local`,
 * which maps a path of the pod onto this machine (the image's /app is the repo, built).
 */
async function layOutPod(objs: Obj[], ordinal: number, secrets: Record<string, string>) {
  const spec = statefulSet(objs).spec.template.spec;
  const dir = await mkdtemp(join(tmpdir(), `dmsk-pod${ordinal}-`));
  dirs.push(dir);
  const mounts = new Map<string, string>(); // mountPath -> local
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) for (const m of c.volumeMounts ?? []) mounts.set(m.mountPath, join(dir, m.name));
  const local = (s: string): string => {
    let out = s;
    for (const [from, to] of [...mounts, ['/app', ROOT] as [string, string]].sort((a, b) => b[0].length - a[0].length)) {
      out = out.replace(new RegExp(`${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=/|\\b|$)`, 'g'), to);
    }
    return out;
  };
  for (const v of spec.volumes) {
    const at = join(dir, v.name);
    await mkdir(at, { recursive: true, mode: 0o700 });
    if (v.configMap) {
      const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === v.configMap!.name) as Obj & { data: Record<string, string> };
      for (const [k, text] of Object.entries(cm.data)) await writeFile(join(at, k), text, { mode: 0o644 });
    }
    for (const s of v.projected?.sources ?? []) {
      if (!s.secret) continue;
      const keys = Object.keys(secrets).filter((k) => k.startsWith(`${s.secret!.name}/`));
      if (keys.length === 0) throw new Error(`the pod needs Secret ${s.secret.name}`);
      for (const k of keys) {
        const key = k.slice(s.secret.name.length + 1);
        const path = s.secret.items ? s.secret.items.find((i) => i.key === key)?.path : key;
        if (path === undefined) continue;
        await writeFile(join(at, path), secrets[k]!);
        await chmod(join(at, path), 0o440);
      }
    }
  }
  await mkdir(join(dir, 'state'), { mode: 0o700 });
  for (const c of spec.initContainers ?? []) {
    const env = await podEnv(objs, spec, c, ordinal);
    const argv = (c.command ?? []).map(local);
    await run(argv[0]!, argv.slice(1), { cwd: ROOT, env: { ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, local(v)])), PATH: process.env.PATH ?? '' } }).catch((e: Error & { stderr?: string }) => {
      throw new Error(`init container ${c.name} failed: ${e.message} ${e.stderr ?? ''}`);
    });
  }
  return { dir, local, spec };
}

/** The keeper container's argv (the image's ENTRYPOINT + the container's args) and environment. */
async function keeperProcess(objs: Obj[], ordinal: number, secrets: Record<string, string>) {
  const { local, spec } = await layOutPod(objs, ordinal, secrets);
  const c = spec.containers.find((x) => x.name === 'keeper')!;
  expect(c.command, 'the keeper container runs the image ENTRYPOINT (node dist/src/main.js)').toBeUndefined();
  const entry = /^ENTRYPOINT\s+(\[.*\])$/m.exec(await readFile(join(ROOT, 'Dockerfile'), 'utf8'))![1]!;
  const argv = [...(JSON.parse(entry) as string[]), ...(c.args ?? [])].map(local);
  expect(argv.slice(0, 2)).toEqual(['node', 'dist/src/main.js']);
  const env = Object.fromEntries(Object.entries(await podEnv(objs, spec, c, ordinal)).map(([k, v]) => [k, local(v)]));
  return { args: argv.slice(2), env, container: c };
}

/** A temporary overlay of `base` scaled to n shards with the patch docs/operations.md shows. */
async function scaled(base: string, n: number): Promise<string> {
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  const dir = await mkdtemp(join(ROOT, 'artifacts', 'k8s-scale-'));
  dirs.push(dir);
  const ops = await readFile(join(ROOT, 'docs/operations.md'), 'utf8');
  const patch = /```yaml\n(# shards\.yaml[^]*?)```/.exec(ops)?.[1];
  expect(patch, 'docs/operations.md shows the scaling patch (a ```yaml block starting "# shards.yaml")').toBeDefined();
  await writeFile(join(dir, 'shards.yaml'), patch!.replace(/replicas: \d+/, `replicas: ${n}`).replace(/value: "\d+"/, `value: "${n}"`));
  await writeFile(join(dir, 'kustomization.yaml'), `resources:\n  - ../../${base}\npatches:\n  - path: shards.yaml\n`);
  return dir;
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT, env: { ...env, PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, out }));
  });
}

// ---------------------------------------------------------------------------------------------

describeRender('Kubernetes manifests (kubectl kustomize, no cluster)', () => {
  it('the kubectl bundles Kustomize v5 or newer (kubectl 1.27+), which the manifests are written for', async () => {
    const { stdout } = await run(KUBECTL!, ['version', '--client'], { cwd: ROOT });
    expect(Number(/^Kustomize Version: v(\d+)\./m.exec(stdout)?.[1]), stdout).toBeGreaterThanOrEqual(5);
  });

  it.each([BASE, CORE, OVERLAY, SIDECAR])('%s is in current Kustomize syntax and renders without a warning', async (dir) => {
    const kustomization = YAML.parse(await readFile(join(ROOT, dir, 'kustomization.yaml'), 'utf8')) as Record<string, unknown>;
    for (const old of ['bases', 'patchesStrategicMerge', 'patchesJson6902', 'commonLabels', 'vars']) expect(kustomization[old], old).toBeUndefined();
    expect((await render(dir)).length).toBeGreaterThan(0); // render() fails on any stderr
  });

  it.each([BASE, CORE, OVERLAY])('%s renders, and every object is valid against the Kubernetes schemas', async (dir) => {
    const objs = await render(dir);
    const problems = objs.map((o) => [`${o.kind}/${o.metadata.name}`, validate(o)]).filter(([, p]) => p !== undefined);
    expect(problems).toEqual([]);
    const kinds = objs.map((o) => o.kind).sort();
    const want = ['ConfigMap', 'NetworkPolicy', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'Service', 'Service', 'StatefulSet', 'StatefulSet'];
    expect(kinds).toEqual(dir === BASE ? [...want, 'PrometheusRule', 'ServiceMonitor'].sort() : want);
  });

  it('the validation fails on what the API server would refuse (it is not a pass-through)', async () => {
    const sts = structuredClone(statefulSet(await render(BASE)));
    (sts.spec as Record<string, unknown>).replicas = '2';
    expect(validate(sts)).toMatch(/replicas/);
    expect(validate({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toMatch(/no schema/);
  });

  it.each([BASE, OVERLAY])('%s: the shard count is the replicas; the pods stop within their grace period and never clear an arm', async (dir) => {
    const objs = await render(dir);
    const sts = statefulSet(objs);
    const keeper = sts.spec.template.spec.containers.find((c) => c.name === 'keeper')!;
    expect(keeper.env?.find((e) => e.name === 'DMS_KEEPER_SHARD__COUNT')?.value).toBe(String(sts.spec.replicas));
    expect(sts.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(15); // the keeper's stop bound
    expect((sts.spec as Record<string, unknown>).podManagementPolicy).toBe('Parallel');
    const pdb = objs.find((o) => o.kind === 'PodDisruptionBudget') as Obj & { spec: { maxUnavailable: number } };
    expect(pdb.spec.maxUnavailable).toBe(1);
    const cfg = YAML.parse(configText(objs)) as { switch: { on_shutdown: string }; accounts: Array<{ switch?: { on_shutdown?: string } }>; shard?: unknown };
    expect(cfg.switch.on_shutdown).toBe('keep');
    for (const a of cfg.accounts) expect(a.switch?.on_shutdown ?? 'keep').toBe('keep');
    expect(cfg.shard, 'the StatefulSet sets the shard, not the config').toBeUndefined();
  });

  it.each([
    [BASE, 'DoNotSchedule'],
    [CORE, 'DoNotSchedule'],
    [OVERLAY, 'ScheduleAnyway'],
  ])('%s: the keeper pods spread over nodes, one per node (%s), and a disruption takes one at a time', async (dir, when) => {
    const objs = await render(dir);
    const sts = statefulSet(objs);
    const spread = sts.spec.template.spec.topologySpreadConstraints ?? [];
    expect(spread).toEqual([{ topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: when, nodeTaintsPolicy: 'Honor', labelSelector: { matchLabels: sts.spec.selector.matchLabels } }]);
    // The selector counts exactly the keeper's pods: every one of them, and not Redis.
    expect(sts.spec.template.metadata.labels).toMatchObject(sts.spec.selector.matchLabels);
    expect(statefulSet(objs, 'dms-keeper-redis').spec.template.metadata.labels).not.toMatchObject(sts.spec.selector.matchLabels);
    const pdb = objs.find((o) => o.kind === 'PodDisruptionBudget') as Obj & { spec: { maxUnavailable: number; selector: unknown } };
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: sts.spec.selector });
  });

  it('the PrometheusRule is what scripts/prometheus-rule.mjs generates from config/prometheus/alerts.yml', async () => {
    const committed = await readFile(join(ROOT, BASE, 'prometheus-rule.yaml'), 'utf8');
    const { stdout } = await run(process.execPath, ['-e', "import('./scripts/prometheus-rule.mjs').then(async (m) => process.stdout.write(m.prometheusRule(await import('node:fs').then((fs) => fs.readFileSync('config/prometheus/alerts.yml', 'utf8')))))"], { cwd: ROOT });
    expect(committed).toBe(stdout);
    const alerts = YAML.parse(await readFile(join(ROOT, 'config/prometheus/alerts.yml'), 'utf8')) as { groups: unknown };
    expect((YAML.parse(committed) as { spec: { groups: unknown } }).spec.groups).toEqual(alerts.groups);
    const rule = (await render(BASE)).find((o) => o.kind === 'PrometheusRule') as Obj & { spec: { groups: unknown } };
    expect(rule.spec.groups).toEqual(alerts.groups);
  });

  describe.each([
    [BASE, 8],
    [OVERLAY, 4],
  ])('%s: shard coverage by the built CLI', (base, accounts) => {
    it.each([1, 2, 5])('%i pods cover every account twice (replication 2; once with one pod); each has the heap its accounts need', async (n) => {
      const objs = await render(await scaled(base, n).then((d) => d.slice(ROOT.length + 1)));
      const sts = statefulSet(objs);
      expect(sts.spec.replicas).toBe(n);
      const cfg = YAML.parse(configText(objs)) as { accounts: Array<{ address: string }> };
      const all = cfg.accounts.map((a) => a.address.toLowerCase());
      expect(all.length).toBe(accounts);
      const seen: string[] = [];
      const heapFlag = (s: string) => Number(/--max-old-space-size=(\d+)/.exec(s)?.[1]);
      const pods = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const { args, env, container } = await keeperProcess(objs, i, secretFiles(objs));
          const config = args[args.indexOf('--config') + 1]!;
          const r = await cli(['check-config', '--config', config], env);
          return { i, r, env, container };
        }),
      );
      for (const { i, r, env, container } of pods) {
        expect(r.code, r.out).toBe(0);
        const head = /^Shard (\d+) of (\d+): (\d+) of (\d+) accounts protected here\b/m.exec(r.out);
        expect(head?.slice(1).map(Number), r.out).toEqual([i, n, expect.any(Number), accounts]);
        const mine = [...r.out.matchAll(/^ {2}\S+\s+(0x[0-9a-f]{40})\s/gm)].map((m) => m[1]!);
        expect(mine.length).toBe(Number(head![3]));
        seen.push(...mine);
        // check-config's figure for this shard's account count fits the pod's heap flag and memory.
        const recommended = heapFlag(/NODE_OPTIONS="([^"]+)"/.exec(r.out)![1]!);
        expect(recommended).toBe(heapLimitMb(mine.length));
        expect(heapFlag(env.NODE_OPTIONS!)).toBeGreaterThanOrEqual(recommended);
        const limitMi = Number(/^(\d+)Mi$/.exec(container.resources?.limits?.memory ?? '')?.[1]);
        expect(limitMi).toBeGreaterThanOrEqual(heapFlag(env.NODE_OPTIONS!) + 100); // RSS runs ~100 MB above the heap limit
      }
      // Every account on exactly min(2, n) pods, never twice on one (the base runs replication 2).
      const replicas = Math.min(2, n);
      expect(seen.sort()).toEqual(Array.from({ length: replicas }, () => all).flat().sort());
      for (const pod of pods) {
        const listed = [...pod.r.out.matchAll(/^ {2}\S+\s+(0x[0-9a-f]{40})\s/gm)].map((m) => m[1]!);
        expect(new Set(listed).size).toBe(listed.length);
      }
      if (n > 1) expect(new Set(seen.map((a) => shardOf(a, n))).size).toBeGreaterThan(1);
    }, 60_000);
  });

  it('without enableServiceLinks: false the services would put DMS_KEEPER_* variables into the pod, and the keeper refuses them', async () => {
    const objs = await render(BASE);
    const spec = structuredClone(statefulSet(objs).spec.template.spec);
    expect(spec.enableServiceLinks).toBe(false);
    delete spec.enableServiceLinks;
    const env = await podEnv(objs, spec, spec.containers[0]!, 0);
    expect(Object.keys(env).filter((k) => k.startsWith('DMS_KEEPER_REDIS_'))).not.toEqual([]);
    const r = await cli(['check-config', '--config', join(ROOT, 'config/dms-keeper.example.yaml')], { ...env, CREDENTIALS_DIRECTORY: '', STATE_DIRECTORY: '', DMS_KEEPER_STATE_DIR: '' });
    expect(r.code).toBe(2);
    expect(r.out).toContain('DMS_KEEPER_REDIS_SERVICE_HOST');
  });

  it("a keeper started as the StatefulSet starts pod 1 of 2 protects shard 1 and, as its second replica, shard 0, and stops in its grace period with every arm kept", async () => {
    const objs = await render(BASE);
    const sts = statefulSet(objs);
    expect(sts.spec.replicas).toBe(2);
    const cfg = YAML.parse(configText(objs)) as { accounts: Array<{ name: string; address: string }> };
    const sim = await startSim((p) => {
      procs.push(p);
      return p;
    });
    for (const a of cfg.accounts) {
      const r = await fetch(`${sim.url}/_sim/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address: a.address, tradedVolumeUsd: 50_000_000 }) });
      expect(r.status).toBe(200);
    }
    const { args, env } = await keeperProcess(objs, 1, secretFiles(objs));
    const port = await freePort();
    // What differs from the pod: the venue is the simulator (loopback, testnet), and the ops port is
    // a free loopback port instead of 0.0.0.0:9464 in the pod's own network namespace.
    expect(env.DMS_KEEPER_SERVER__LISTEN).toBe('0.0.0.0:9464');
    const venue = { DMS_KEEPER_VENUE__BASE_URL: sim.url, DMS_KEEPER_VENUE__EXCHANGE_URL: sim.url, DMS_KEEPER_VENUE__WS_URL: sim.url.replace('http', 'ws'), DMS_KEEPER_VENUE__NETWORK: 'testnet' };
    const keeper = startCli(args, { env: { ...env, ...venue, DMS_KEEPER_SERVER__LISTEN: `127.0.0.1:${port}` } });
    procs.push(keeper);
    const mine = cfg.accounts.filter((a) => shardOf(a.address, 2) === 1);
    const theirs = cfg.accounts.filter((a) => shardOf(a.address, 2) === 0);
    expect(mine.length).toBeGreaterThan(0);
    expect(theirs.length).toBeGreaterThan(0);

    type Status = { accounts: Array<{ name: string; armed?: boolean; state?: string; phase?: string }> };
    const t0 = Date.now();
    for (;;) {
      const r = await getJson(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      if (r?.status === 200) break;
      if (keeper.child.exitCode !== null || Date.now() - t0 > 30_000) throw new Error(`not ready: ${r?.text}\n${keeper.stdout().slice(-3000)}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    const status = (await getJson(`http://127.0.0.1:${port}/status`)).body as Status;
    // replication 2 on two pods: every account, shard 1's as replica 0 and shard 0's as replica 1.
    expect(status.accounts.map((a) => a.name).sort()).toEqual([...mine, ...theirs].map((a) => a.name).sort());
    const replicaOf = new Map((status.accounts as Array<{ name: string; coverage: { replica: number; instances: string[] } | null }>).map((a) => [a.name, a.coverage]));
    for (const a of mine) expect(replicaOf.get(a.name)).toEqual({ replica: 0, instances: ['shard-1', 'shard-0'] });
    for (const a of theirs) expect(replicaOf.get(a.name)).toEqual({ replica: 1, instances: ['shard-0', 'shard-1'] });
    const venueSchedule = async (address: string) =>
      ((await getJson(`${sim.url}/_sim/state?account=${address}`)).body as { account: { schedule: { timeMs: number | null } } }).account.schedule.timeMs;
    for (const a of [...mine, ...theirs]) expect(await venueSchedule(a.address), a.name).not.toBeNull();

    // SIGTERM, as the kubelet sends it: a clean stop well inside terminationGracePeriodSeconds,
    // and every arm still in place (on_shutdown: keep).
    const grace = sts.spec.template.spec.terminationGracePeriodSeconds!;
    const stopAt = Date.now();
    keeper.child.kill('SIGTERM');
    const exit = await Promise.race([keeper.exited, new Promise((r) => setTimeout(() => r('timeout'), grace * 1000))]);
    expect(exit, keeper.stdout().slice(-2000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - stopAt).toBeLessThan(15_000);
    for (const a of mine) expect(await venueSchedule(a.address), a.name).not.toBeNull();
  }, 60_000);
});

// ---- the bot with a heartbeat sidecar (deploy/kubernetes/examples/bot-sidecar) ----------------

describeRender(`${SIDECAR} (kubectl kustomize)`, () => {
  type Pod = { initContainers: Array<Container & { restartPolicy?: string; image: string }>; containers: Array<Container & { image: string }>; volumes: Array<{ name: string; secret?: { secretName: string } }> };
  const podOf = (objs: Obj[]) => (objs.find((o) => o.kind === 'Deployment') as Obj & { spec: { template: { spec: Pod } } }).spec.template.spec;

  it('renders in current Kustomize syntax, and every object is valid against the Kubernetes schemas', async () => {
    const kustomization = YAML.parse(await readFile(join(ROOT, SIDECAR, 'kustomization.yaml'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(kustomization)).toEqual(expect.arrayContaining(['resources', 'patches']));
    for (const old of ['bases', 'patchesStrategicMerge', 'patchesJson6902']) expect(kustomization[old], old).toBeUndefined();
    const objs = await render(SIDECAR);
    expect(objs.map((o) => o.kind)).toEqual(['Deployment']);
    expect(objs.map((o) => [`${o.kind}/${o.metadata.name}`, validate(o)]).filter(([, p]) => p !== undefined)).toEqual([]);
  });

  it('the heartbeat is a native sidecar naming the accounts, the bot\'s health URL and the token file, never the token', async () => {
    const pod = podOf(await render(SIDECAR));
    const sidecar = pod.initContainers.find((c) => c.name === 'heartbeat')!;
    expect(sidecar.restartPolicy).toBe('Always');
    expect(sidecar.command, 'the image ENTRYPOINT (node dist/src/main.js)').toBeUndefined();
    const args = sidecar.args!;
    const opt = (name: string) => args[args.indexOf(name) + 1];
    expect(args[0]).toBe('heartbeat');
    // The fleet's one heartbeat address (heartbeat-service.yaml), not a pod: the keepers relay.
    expect(opt('--url')).toMatch(/^http:\/\/dms-keeper-heartbeat\.[a-z0-9-]+\.svc:9464$/);
    expect(opt('--check-url')).toMatch(/^http:\/\/127\.0\.0\.1:(\d+)\/healthz$/);
    const botPort = pod.containers[0] as Container & { ports?: Array<{ containerPort: number }> };
    expect(botPort.ports?.map((p) => p.containerPort)).toContain(Number(/:(\d+)\//.exec(opt('--check-url')!)![1]));
    expect(args.some((a) => a.startsWith('--token') && a !== '--token-file')).toBe(false);
    const tokenFile = opt('--token-file')!;
    expect(sidecar.volumeMounts!.some((m) => tokenFile.startsWith(`${m.mountPath}/`))).toBe(true);
    // The copy runs first, so the file is there when the sidecar starts.
    expect(pod.initContainers.map((c) => c.name)).toEqual(['heartbeat-token', 'heartbeat']);
    expect(pod.volumes.find((v) => v.secret)?.secret?.secretName).toBe('bot-mm-heartbeat');
    const notes = await readFile(join(ROOT, SIDECAR, 'heartbeat-sidecar.yaml'), 'utf8');
    expect(notes).toMatch(/Why --check-url: the sidecar lives as long as the POD/);
  });

  it('run as the pod runs them, the init container\'s copy and the sidecar\'s argv send heartbeats only while the bot is healthy', async () => {
    const { createServer } = await import('node:http');
    const beats: string[] = [];
    let botHealthy = false;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (req.url === '/heartbeat') {
          beats.push(`${req.headers.authorization} ${body}`);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","silence_seconds":5}');
        } else res.writeHead(botHealthy ? 200 : 503).end();
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as { port: number }).port;
    try {
      const pod = podOf(await render(SIDECAR));
      const dir = await mkdtemp(join(tmpdir(), 'dmsk-botpod-'));
      dirs.push(dir);
      const token = 'bot-mm-token-0123456789abcdef';
      // The pod's volumes here: the Secret as Kubernetes writes it (root's, 0444 here), an emptyDir.
      const mounts = new Map<string, string>();
      for (const c of pod.initContainers) for (const m of c.volumeMounts ?? []) mounts.set(m.mountPath, join(dir, m.name));
      for (const v of pod.volumes) await mkdir(join(dir, v.name), { recursive: true, mode: 0o700 });
      await writeFile(join(dir, 'heartbeat-secret', 'token'), `${token}\n`, { mode: 0o444 });
      const local = (s: string) => [...mounts].reduce((out, [from, to]) => out.replaceAll(from, to), s);
      const copy = pod.initContainers.find((c) => c.name === 'heartbeat-token')!;
      await run(copy.command![0]!, copy.command!.slice(1).map(local), { cwd: ROOT });
      // The keeper and the bot: this test's server stands in for both.
      const sidecar = pod.initContainers.find((c) => c.name === 'heartbeat')!;
      const args = sidecar.args!.map(local).map((a) => a.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${port}`));
      const p = startCli([...args, '--every-seconds', '0.2'], { env: { PATH: process.env.PATH ?? '' } });
      procs.push(p);
      await p.waitFor(() => p.logs().some((l) => l.event === 'heartbeat_bot_unhealthy'), 10_000, 'the bot is not healthy yet');
      expect(beats).toEqual([]);
      botHealthy = true;
      await p.waitFor(() => beats.length > 0, 10_000, 'a heartbeat once the bot is healthy');
      expect(beats[0]).toBe(`Bearer ${token} {"accounts":["mm-main","mm-sub"]}`);
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 30_000);
});
