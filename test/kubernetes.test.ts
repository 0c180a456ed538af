/**
 * The Kubernetes manifests (deploy/kubernetes/), without a cluster:
 *   - the base, base/core, the simulator overlay and the bot-sidecar example render (`kubectl
 *     kustomize`, Kustomize v5+) in current syntax with nothing on stderr (no deprecation warning),
 *     and every object is valid against the Kubernetes and Prometheus Operator schemas
 *     (kubernetes-models);
 *   - the keeper's pods spread over nodes (topologySpreadConstraints on kubernetes.io/hostname);
 *   - the keepers are a fleet (shard.fleet, replication 2) on the base's Redis, named by their pod:
 *     scaling is `replicas` alone (Kustomize's `replicas:`, as docs/operations.md shows; nothing
 *     else in the rendered StatefulSet changes), and each pod's check-config passes with the heap
 *     its accounts need;
 *   - the fleet as built processes, each started with exactly what the StatefulSet gives its pod
 *     (image entrypoint and the container's args, its environment, the ConfigMap's file, the
 *     Secrets' files as the init container copies them), on a real redis-server with the Secret's
 *     password and the venue simulator: scaled 1 -> 2 -> 3 -> 2, every account is armed by min(2, N)
 *     pods, each pod's /status names the N pods as members and each account's owners as its
 *     coverage; a pod stops within its grace period on SIGTERM with every arm kept; the simulator
 *     overlay's two pods both protect every demo account.
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
import { heapLimitMb } from '../src/config/memory.js';
import { freePort, getJson, MAIN, ROOT, startCli, type Proc } from './support/cli.js';
import { seedAccounts, startSim, type FleetStatus } from './support/keeper-process.js';
import { findRedisServer, noRedisMessage, startRedis, type TestRedis } from './support/redis.js';

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

/**
 * A temporary overlay of `base` at n keepers, scaled as docs/operations.md shows: Kustomize's
 * `replicas:` (what `kubectl scale` sets on the live object), nothing else.
 */
async function scaled(base: string, n: number): Promise<string> {
  await mkdir(join(ROOT, 'artifacts'), { recursive: true });
  const dir = await mkdtemp(join(ROOT, 'artifacts', 'k8s-scale-'));
  dirs.push(dir);
  const ops = await readFile(join(ROOT, 'docs/operations.md'), 'utf8');
  const snippet = /```yaml\n(# in my-keeper\/kustomization\.yaml[^]*?)```/.exec(ops)?.[1];
  expect(snippet, 'docs/operations.md shows the scaling (a ```yaml block starting "# in my-keeper/kustomization.yaml")').toBeDefined();
  expect(snippet).toMatch(/^replicas:\n {2}- name: dms-keeper\n {4}count: \d+\n$/m);
  await writeFile(join(dir, 'kustomization.yaml'), `resources:\n  - ../../${base}\n${snippet!.replace(/count: \d+/, `count: ${n}`)}`);
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

  it.each([BASE, OVERLAY])('%s: the pods are a fleet on the shared Redis, named by the pod; they stop within their grace period and never clear an arm', async (dir) => {
    const objs = await render(dir);
    const sts = statefulSet(objs);
    const keeper = sts.spec.template.spec.containers.find((c) => c.name === 'keeper')!;
    // Nothing counts the pods but replicas: no shard index, count or replication in the environment.
    expect((keeper.env ?? []).map((e) => e.name).filter((n) => n.startsWith('DMS_KEEPER_SHARD__'))).toEqual(['DMS_KEEPER_SHARD__FLEET__INSTANCE']);
    expect(keeper.env?.find((e) => e.name === 'DMS_KEEPER_SHARD__FLEET__INSTANCE')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(sts.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(15); // the keeper's stop bound
    expect((sts.spec as Record<string, unknown>).podManagementPolicy).toBe('Parallel');
    const pdb = objs.find((o) => o.kind === 'PodDisruptionBudget') as Obj & { spec: { maxUnavailable: number } };
    expect(pdb.spec.maxUnavailable).toBe(1);
    type Cfg = { switch: { on_shutdown: string }; accounts: Array<{ master_key?: unknown; switch?: { on_shutdown?: string } }>; shard?: unknown; rate_limits: { shared?: { redis_url: string; password?: unknown } } };
    const cfg = YAML.parse(configText(objs)) as Cfg;
    expect(cfg.shard, 'a fleet of two owners per account; the instance comes from the pod').toEqual({ replication: 2, fleet: { lease_seconds: 10 } });
    expect(cfg.switch.on_shutdown).toBe('keep');
    for (const a of cfg.accounts) expect(a.switch?.on_shutdown ?? 'keep').toBe('keep');
    for (const a of cfg.accounts) expect(a.master_key, 'a pod that gains an account approves an agent of its own').toBeDefined();
    // The membership lives in the base's Redis, with the password the pods get from its Secret.
    const redisService = objs.find((o) => o.kind === 'Service' && o.metadata.name === 'dms-keeper-redis') as Obj & { spec: { ports: Array<{ port: number }> } };
    expect(cfg.rate_limits.shared?.redis_url).toBe(`redis://${redisService.metadata.name}:${redisService.spec.ports[0]!.port}`);
    expect(cfg.rate_limits.shared?.password).toEqual({ file: 'redis.password' });
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

  it.each([
    [BASE, 8],
    [OVERLAY, 4],
  ])('%s: scaling is replicas and nothing else; check-config passes as each pod sees it, and the heap holds every account (the last pod standing holds them all)', async (base, accounts) => {
    const at = async (n: number) => render(await scaled(base, n).then((d) => d.slice(ROOT.length + 1)));
    // The renders are independent: at once (each is a kubectl start).
    const [objs, twoObjs, ...scales] = await Promise.all([render(base), render(base), ...[1, 3, 5].map(at)]);
    const two = statefulSet(twoObjs);
    for (const [k, n] of [1, 3, 5].entries()) {
      const sts = statefulSet(scales[k]!);
      expect(sts.spec.replicas).toBe(n);
      // The same pods at any scale: one number changes, no config, no environment.
      expect({ ...sts, spec: { ...sts.spec, replicas: 2 } }).toEqual(two);
    }
    const cfg = YAML.parse(configText(objs)) as { accounts: Array<{ address: string }> };
    expect(cfg.accounts.length).toBe(accounts);
    const heapFlag = (s: string) => Number(/--max-old-space-size=(\d+)/.exec(s)?.[1]);
    // Each pod's check-config, both at once.
    const pods = await Promise.all(
      [0, 1].map(async (i) => {
        const { args, env, container } = await keeperProcess(objs, i, secretFiles(objs));
        return { env, container, r: await cli(['check-config', '--config', args[args.indexOf('--config') + 1]!], env) };
      }),
    );
    for (const { env, container, r } of pods) {
      expect(r.code, r.out).toBe(0);
      // A fleet member plans every account of the config: what it holds alone when the others are gone.
      expect(/^.*?(\d+) of (\d+) accounts protected here\b/m.exec(r.out)?.slice(1).map(Number), r.out).toEqual([accounts, accounts]);
      const recommended = heapFlag(/NODE_OPTIONS="([^"]+)"/.exec(r.out)![1]!);
      expect(recommended).toBe(heapLimitMb(accounts));
      expect(heapFlag(env.NODE_OPTIONS!)).toBeGreaterThanOrEqual(recommended);
      const limitMi = Number(/^(\d+)Mi$/.exec(container.resources?.limits?.memory ?? '')?.[1]);
      expect(limitMi).toBeGreaterThanOrEqual(heapFlag(env.NODE_OPTIONS!) + 100); // RSS runs ~100 MB above the heap limit
    }
  }, 60_000);

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
});

// ---- the fleet: the pods as built processes, on a real Redis ------------------------------------

const redisBinary = findRedisServer();
if (KUBECTL && !redisBinary) process.stderr.write(noRedisMessage());

interface Pod {
  name: string;
  ops: string;
  proc: Proc;
}

/**
 * Pod `i` of the StatefulSet as a built keeper process: its container's argv and environment (the
 * instance is its name, dms-keeper-i), its volumes laid out, the init container run. What differs
 * from the pod: the ops port is a free loopback port instead of 0.0.0.0:9464 in the pod's own
 * network namespace, Redis is this test's (the Service's name resolves only in a cluster), and
 * `over` (the venue).
 */
async function startPod(objs: Obj[], i: number, redisUrl: string, over: Record<string, string> = {}): Promise<Pod> {
  const { args, env } = await keeperProcess(objs, i, secretFiles(objs));
  expect(env.DMS_KEEPER_SERVER__LISTEN).toBe('0.0.0.0:9464');
  expect(env.DMS_KEEPER_SHARD__FLEET__INSTANCE).toBe(`dms-keeper-${i}`);
  const port = await freePort();
  const proc = startCli(args, { env: { ...env, ...over, DMS_KEEPER_SERVER__LISTEN: `127.0.0.1:${port}`, DMS_KEEPER_RATE_LIMITS__SHARED__REDIS_URL: redisUrl } });
  procs.push(proc);
  return { name: `dms-keeper-${i}`, ops: `http://127.0.0.1:${port}`, proc };
}

async function fleetStatus(pod: Pod): Promise<FleetStatus | undefined> {
  const r = await getJson(`${pod.ops}/status`).catch(() => undefined);
  return r?.status === 200 ? (r.body as FleetStatus) : undefined;
}

/**
 * Waits until the fleet of `pods` has settled: each pod sees exactly these members, connected, with
 * no handover pending, every account of `names` held by min(2, pods) of them, each holder's
 * coverage naming those holders, and every account `armable` armed. Returns each account's holders.
 */
async function settled(pods: readonly Pod[], names: readonly string[], armable: (name: string) => boolean, withinMs: number, what: string): Promise<Map<string, string[]>> {
  const members = pods.map((p) => p.name).sort();
  const want = Math.min(2, pods.length);
  const t0 = Date.now();
  let last = '';
  for (;;) {
    const holders = new Map<string, string[]>(names.map((n) => [n, []]));
    const problems: string[] = [];
    for (const pod of pods) {
      if (pod.proc.child.exitCode !== null) throw new Error(`${pod.name} exited (${pod.proc.child.exitCode}): ${pod.proc.stdout().slice(-3000)}${pod.proc.stderr().slice(-2000)}`);
      const s = await fleetStatus(pod);
      if (!s) {
        problems.push(`${pod.name}: no /status`);
        continue;
      }
      if (!s.fleet.connected) problems.push(`${pod.name}: not connected`);
      if (JSON.stringify([...s.fleet.members].sort()) !== JSON.stringify(members)) problems.push(`${pod.name}: members ${s.fleet.members}`);
      if (s.fleet.handing_over > 0) problems.push(`${pod.name}: handing over ${s.fleet.handing_over}`);
      if (s.fleet.instance !== pod.name) problems.push(`${pod.name}: instance ${s.fleet.instance}`);
      for (const a of s.accounts) {
        holders.get(a.name)?.push(pod.name);
        if (armable(a.name) && !a.armed) problems.push(`${pod.name}: ${a.name} not armed`);
      }
    }
    // Coverage as each holder reports it: exactly the pods that hold the account.
    for (const pod of pods) {
      const s = await fleetStatus(pod);
      for (const a of s?.accounts ?? []) {
        const h = holders.get(a.name) ?? [];
        if (JSON.stringify([...(a.coverage?.instances ?? [])].sort()) !== JSON.stringify([...h].sort())) problems.push(`${pod.name}: ${a.name} covered by ${a.coverage?.instances}, held by ${h}`);
      }
    }
    for (const [n, h] of holders) if (h.length !== want) problems.push(`${n} held by ${h.length}`);
    if (problems.length === 0) return holders;
    last = problems.slice(0, 8).join('; ');
    if (Date.now() - t0 > withinMs) throw new Error(`${what}: not settled in ${withinMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describeRender('the fleet as the StatefulSet runs it (built processes, a real Redis)', () => {
  let redis: TestRedis | undefined;
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });
  // The password the pods copy from the Secret dms-keeper-redis (secretFiles), as the base's Redis requires it.
  const redisForPods = async (objs: Obj[]) => startRedis({ binary: redisBinary!, password: secretFiles(objs)['dms-keeper-redis/password']!.trim() });

  it.skipIf(!redisBinary)(`${BASE}: scaled 1 -> 2 -> 3 -> 2, every account is armed by min(2, N) pods and the members are the pods; a pod stops in its grace period with every arm kept`, async () => {
    const objs = await render(BASE);
    const sts = statefulSet(objs);
    const cfg = YAML.parse(configText(objs)) as { accounts: Array<{ name: string; address: string }> };
    const names = cfg.accounts.map((a) => a.name);
    redis = await redisForPods(objs);
    const sim = await startSim((p) => {
      procs.push(p);
      return p;
    });
    expect(await seedAccounts(sim.url, cfg.accounts.map((a) => a.address))).toEqual([]);
    const venue = { DMS_KEEPER_VENUE__BASE_URL: sim.url, DMS_KEEPER_VENUE__EXCHANGE_URL: sim.url, DMS_KEEPER_VENUE__WS_URL: sim.url.replace('http', 'ws'), DMS_KEEPER_VENUE__NETWORK: 'testnet' };
    const venueSchedule = async (address: string) =>
      ((await getJson(`${sim.url}/_sim/state?account=${address}`)).body as { account: { schedule: { timeMs: number | null } } }).account.schedule.timeMs;
    const all = () => true;
    const t0 = Date.now();
    const timings: string[] = [];

    // 1 pod: it holds every account alone.
    const pods = [await startPod(objs, 0, redis.url, venue)];
    let holders = await settled(pods, names, all, 30_000, '1 pod');
    timings.push(`1 pod ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const n of names) expect(holders.get(n)).toEqual(['dms-keeper-0']);

    // kubectl scale --replicas=2, then 3: each join moves at most one of an account's two owners.
    for (const n of [2, 3]) {
      const t = Date.now();
      pods.push(await startPod(objs, n - 1, redis.url, venue));
      const before = holders;
      holders = await settled(pods, names, all, 40_000, `${n} pods`);
      timings.push(`${n} pods ${((Date.now() - t) / 1000).toFixed(1)} s`);
      for (const name of names) expect(holders.get(name)!.filter((p) => before.get(name)!.includes(p)).length, name).toBeGreaterThanOrEqual(Math.min(1, before.get(name)!.length));
    }
    // Three pods, two owners each: the new pod has its share, and no pod has them all.
    const held = pods.map((p) => names.filter((n) => holders.get(n)!.includes(p.name)).length);
    expect(held.every((h) => h > 0 && h < names.length), `held ${held}`).toBe(true);
    for (const a of cfg.accounts) expect(await venueSchedule(a.address), a.name).not.toBeNull();

    // kubectl scale --replicas=2: the highest ordinal gets SIGTERM, as the kubelet sends it. A clean
    // stop well inside terminationGracePeriodSeconds, and every arm it held still in place
    // (on_shutdown: keep); its accounts move once its lease ends.
    const leaving = pods.pop()!;
    const itsAccounts = names.filter((n) => holders.get(n)!.includes(leaving.name));
    const grace = sts.spec.template.spec.terminationGracePeriodSeconds!;
    const stopAt = Date.now();
    leaving.proc.child.kill('SIGTERM');
    const exit = await Promise.race([leaving.proc.exited, new Promise((r) => setTimeout(() => r('timeout'), grace * 1000))]);
    expect(exit, leaving.proc.stdout().slice(-2000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - stopAt).toBeLessThan(15_000);
    for (const a of cfg.accounts.filter((x) => itsAccounts.includes(x.name))) expect(await venueSchedule(a.address), a.name).not.toBeNull();
    const t = Date.now();
    holders = await settled(pods, names, all, 40_000, 'back to 2 pods');
    timings.push(`3 -> 2 pods ${((Date.now() - t) / 1000).toFixed(1)} s (lease 10 s)`);
    for (const n of names) expect(holders.get(n)!.sort()).toEqual(['dms-keeper-0', 'dms-keeper-1']);
    process.stdout.write(`kubernetes fleet: settled at ${timings.join(', ')}\n`);
  }, 120_000);

  it.skipIf(!redisBinary)(`${OVERLAY}: two pods, each on its own embedded simulator, both protect every demo account`, async () => {
    const objs = await render(OVERLAY);
    const cfg = YAML.parse(configText(objs)) as { accounts: Array<{ name: string }> };
    redis = await redisForPods(objs);
    const pods = await Promise.all([0, 1].map((i) => startPod(objs, i, redis!.url)));
    // small-desk trades below the venue's volume gate: held and reported ineligible, never armed.
    const holders = await settled(pods, cfg.accounts.map((a) => a.name), (n) => n !== 'small-desk', 40_000, 'the overlay\'s 2 pods');
    for (const [, h] of holders) expect(h.sort()).toEqual(['dms-keeper-0', 'dms-keeper-1']);
    for (const pod of pods) expect((await fleetStatus(pod))?.accounts.find((a) => a.name === 'small-desk')?.phase, pod.name).toBe('ineligible');
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
