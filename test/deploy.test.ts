/**
 * Deployment artefacts. There is no Docker engine here, so the image is exercised by running its
 * exact ENTRYPOINT + CMD and HEALTHCHECK outside a container, with the image's ENV and its paths
 * mapped onto this machine. The systemd units are checked for what the design requires (their
 * parse and exposure score are .ci/checks/deploy.sh's job: systemd-analyze).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { nodeOptionsFor } from '../src/config/memory.js';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, getJson, MAIN, ROOT, tempDir } from './support/cli.js';

// ---------------------------------------------------------------------------------------------
// A small Dockerfile reader: enough for this Dockerfile's syntax (no parser directives, no ARG).

interface Instruction {
  keyword: string;
  args: string;
}

function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue; // comment lines (also inside continuations)
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (full === '') continue;
    const m = /^(\S+)\s*(.*)$/s.exec(full)!;
    out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

/** Instructions of each build stage, in order; the last one is the image. */
function stages(text: string): Instruction[][] {
  const all: Instruction[][] = [];
  for (const i of instructions(text)) {
    if (i.keyword === 'FROM') all.push([]);
    all.at(-1)?.push(i);
  }
  return all;
}

function one(stage: Instruction[], keyword: string): string {
  const found = stage.filter((i) => i.keyword === keyword);
  if (found.length === 0) throw new Error(`no ${keyword} in the stage`);
  return found.at(-1)!.args; // the last one wins, as in Docker
}

/** Exec form only: a JSON array of strings (shell form would put `sh -c` between us and signals). */
function execForm(args: string): string[] {
  const v: unknown = JSON.parse(args);
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'string')) throw new Error(`not exec form: ${args}`);
  return v as string[];
}

/** `ENV K=V K2="V 2"` pairs of a stage (the `ENV K V` legacy form is refused). */
function envOf(stage: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of stage.filter((x) => x.keyword === 'ENV')) {
    for (const m of i.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
      const v = m[2]!;
      env[m[1]!] = v.startsWith('"') ? (JSON.parse(v) as string) : v;
    }
    if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(i.args)) throw new Error(`ENV without '=': ${i.args}`);
  }
  return env;
}

/** HEALTHCHECK [--options] CMD [...]: the exec-form command. */
function healthcheck(stage: Instruction[]): { options: string; cmd: string[] } {
  const m = /^(.*?)\bCMD\s+(\[.*\])$/s.exec(one(stage, 'HEALTHCHECK'));
  if (!m) throw new Error('HEALTHCHECK is not `CMD [exec form]`');
  return { options: m[1]!.trim(), cmd: execForm(m[2]!) };
}

// ---------------------------------------------------------------------------------------------

async function readDockerfile() {
  const text = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
  const all = stages(text);
  const image = all.at(-1)!;
  return { text, all, image, env: envOf(image), workdir: one(image, 'WORKDIR') };
}

function run(argv: string[], opts: { cwd: string; env: Record<string, string> }) {
  const child = spawn(process.execPath, argv, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { child, exited, output: () => out };
}

async function until(pred: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (await pred()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('Dockerfile', () => {
  it("its exact ENTRYPOINT + CMD runs the keeper with the image's ENV; HEALTHCHECK passes; SIGTERM exits 0", async () => {
    const { image, env, workdir } = await readDockerfile();
    const argv = [...execForm(one(image, 'ENTRYPOINT')), ...execForm(one(image, 'CMD'))];
    const hc = healthcheck(image);
    expect(argv[0]).toBe('node');
    expect(hc.cmd[0]).toBe('node');
    expect(env.DMS_KEEPER_SERVER__LISTEN).toBe('0.0.0.0:9464');
    const configIn = argv[argv.indexOf('--config') + 1]!;
    expect(argv.slice(2)).toEqual(['run', '--config', configIn]);

    // The image's paths mapped onto this machine. WORKDIR holds the release: the repo root (built).
    const dir = await tempDir('dmsk-deploy-');
    dirs.push(dir);
    const paths: Array<[string, string]> = [
      [workdir, ROOT],
      [env.STATE_DIRECTORY!, join(dir, 'state')],
      [env.CREDENTIALS_DIRECTORY!, join(dir, 'secrets')],
      [configIn, join(dir, 'dms-keeper.yaml')],
    ];
    const local = (s: string) => {
      for (const [from, to] of paths) if (s === from || s.startsWith(`${from}/`)) return to + s.slice(from.length);
      return s;
    };
    // The mounted volume (node-owned, 0700), the mounted secrets, and the mounted config: the
    // shipped example (venue.simulator: true, so it runs offline; it even names state_dir: ./state,
    // which the image's ENV must override, or state would not land on the volume).
    await mkdir(local(env.STATE_DIRECTORY!), { mode: 0o700 });
    const secrets = local(env.CREDENTIALS_DIRECTORY!);
    const demo = run(['scripts/demo-credentials.mjs', secrets], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } });
    expect((await demo.exited).code, demo.output()).toBe(0);
    await copyFile(join(ROOT, 'config/dms-keeper.example.yaml'), local(configIn));

    // The script the image runs is the package's bin.
    expect(resolve(local(workdir), argv[1]!)).toBe(MAIN);
    const port = await freePort();
    const containerEnv: Record<string, string> = { PATH: process.env.PATH ?? '' };
    for (const [k, v] of Object.entries(env)) containerEnv[k] = local(v);
    // In the container: 0.0.0.0:9464 in its own network namespace. Here: a free loopback port.
    containerEnv.DMS_KEEPER_SERVER__LISTEN = `127.0.0.1:${port}`;

    const keeper = run(argv.slice(1).map(local), { cwd: local(workdir), env: containerEnv });
    children.push(keeper.child);
    const healthy = await until(async () => {
      if (keeper.child.exitCode !== null) return true; // stop waiting: asserted just below
      return getJson(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
    }, 15_000);
    expect(keeper.child.exitCode, keeper.output().slice(-3000)).toBeNull();
    expect(healthy, keeper.output().slice(-3000)).toBe(true);

    // The HEALTHCHECK command, verbatim, with the container's environment.
    const check = () => {
      const p = run(hc.cmd.slice(1), { cwd: local(workdir), env: containerEnv });
      children.push(p.child);
      return p.exited.then((r) => r.code);
    };
    expect(await check()).toBe(0);

    // Provisioning used the keys from CREDENTIALS_DIRECTORY and kept the agents on the volume (in
    // the embedded venue's part of it: the example runs the simulator, src/app/embedded-venue-state.ts).
    const agents = join(local(env.STATE_DIRECTORY!), 'embedded-venue', 'agents');
    const persisted = await until(() => readdir(agents).then((f) => f.filter((n) => n.endsWith('.json')).length === 4, () => false), 10_000);
    expect(persisted, keeper.output().slice(-3000)).toBe(true);

    keeper.child.kill('SIGTERM');
    const exit = await Promise.race([keeper.exited, new Promise((r) => setTimeout(() => r('timeout'), 18_000))]);
    expect(exit, keeper.output().slice(-3000)).toEqual({ code: 0, signal: null });
    expect(keeper.output()).toContain('"event":"stopped"');
    // Nothing answers any more: the HEALTHCHECK fails.
    expect(await check()).toBe(1);
  }, 45_000);

  it('two stages on an official Node LTS slim image; production dependencies only; non-root; exec form', async () => {
    const { all, image, env, text } = await readDockerfile();
    expect(all.length).toBe(2);
    const [build] = all;
    for (const s of all) expect(one(s, 'FROM')).toMatch(/^node:(20|22|24)(\.\d+)*-(bookworm|trixie)-slim\b/);
    expect(one(build!, 'FROM')).toMatch(/ AS build$/i);
    const runs = (s: Instruction[]) => s.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs(build!).some((r) => /\bnpm ci\b/.test(r))).toBe(true);
    expect(runs(build!).some((r) => /\bnpm run build\b/.test(r))).toBe(true);
    expect(runs(image).some((r) => /\bnpm ci\b.*--omit=dev/.test(r))).toBe(true);
    const copies = image.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copies).toContain('--from=build /app/dist/src ./dist/src');
    expect(copies.some((c) => /^config\s/.test(c))).toBe(true);
    expect(one(image, 'USER')).toBe('node');
    expect(env).toMatchObject({
      NODE_ENV: 'production',
      STATE_DIRECTORY: '/var/lib/dms-keeper',
      DMS_KEEPER_STATE_DIR: '/var/lib/dms-keeper',
      CREDENTIALS_DIRECTORY: '/run/secrets',
      DMS_KEEPER_SERVER__LISTEN: '0.0.0.0:9464',
    });
    expect(one(image, 'EXPOSE')).toBe('9464');
    expect(execForm(one(image, 'VOLUME'))).toEqual(['/var/lib/dms-keeper']);
    expect(healthcheck(image).options).toMatch(/--timeout=\d+s/);
    // no curl/wget (not in the slim image; node does the HEALTHCHECK)
    expect(instructions(text).map((i) => i.args).join('\n')).not.toMatch(/\b(curl|wget)\b/);
  });

  it('.dockerignore keeps dependencies, build output, state and secrets out of the build context', async () => {
    const lines = (await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim());
    for (const p of ['node_modules', 'dist', 'state', '.git', 'artifacts', '**/credentials', '**/*.master', '**/*.agent', '**/*.key', '.env']) {
      expect(lines, p).toContain(p);
    }
  });
});

// ---------------------------------------------------------------------------------------------

type Unit = Record<string, Record<string, string[]>>;

function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const s = /^\[(.+)\]$/.exec(line);
    if (s) {
      section = s[1]!;
      unit[section] ??= {};
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0 || section === '') throw new Error(`not a unit line: ${line}`);
    (unit[section]![line.slice(0, eq)] ??= []).push(line.slice(eq + 1));
  }
  return unit;
}

const seconds = (v: string) => {
  const m = /^(\d+)(s|min)?$/.exec(v);
  if (!m) throw new Error(`not a duration this test knows: ${v}`);
  return Number(m[1]) * (m[2] === 'min' ? 60 : 1);
};

async function readUnit(name: string): Promise<Unit> {
  return parseUnit(await readFile(join(ROOT, 'systemd', name), 'utf8'));
}

/** Keys that legitimately differ between the single unit and the per-shard template. */
const PER_INSTANCE = new Set(['Description', 'StateDirectory', 'Environment', 'User']);

describe('heap limits', () => {
  it('the units and the image run Node with the heap limits check-config recommends for 10,000 accounts', async () => {
    const want = nodeOptionsFor(10_000);
    for (const name of ['dms-keeper.service', 'dms-keeper@.service']) {
      // systemd takes a quoted assignment whole (the value holds a space)
      expect((await readUnit(name)).Service!.Environment?.map((e) => e.replace(/^"(.*)"$/, '$1'))).toContain(`NODE_OPTIONS=${want}`);
    }
    expect((await readDockerfile()).env.NODE_OPTIONS?.replace(/^"(.*)"$/, '$1')).toBe(want);
  });
});

describe('systemd units', () => {
  it.each(['dms-keeper.service', 'dms-keeper@.service'])('%s: notify + watchdog, credentials, state, hardening', async (name) => {
    const u = await readUnit(name);
    const svc = u.Service!;
    const last = (k: string) => svc[k]?.at(-1);
    expect(last('Type')).toBe('notify');
    expect(last('NotifyAccess')).toBe('all');
    expect(seconds(last('WatchdogSec')!)).toBeGreaterThanOrEqual(10);
    // Never a distribution's node (Debian 12's is 18): the Node.js the install steps link.
    expect(last('ExecStart')).toMatch(/^\/opt\/dms-keeper\/bin\/node \/opt\/dms-keeper\/dist\/src\/main\.js run --config \/etc\/dms-keeper\/\S+\.yaml$/);
    expect(last('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(svc.LoadCredential?.length).toBeGreaterThan(0);
    for (const c of svc.LoadCredential!) expect(c).toMatch(/^[^:/]+:\/etc\/dms-keeper\/credentials\/\S+$/);
    expect(last('StateDirectory')).toMatch(/^dms-keeper/);
    expect(last('Restart')).toBe('on-failure');
    expect(seconds(last('TimeoutStopSec')!)).toBeGreaterThan(15); // the keeper's own stop bound
    expect(u.Unit!.StartLimitIntervalSec).toBeDefined();
    expect(u.Unit!.StartLimitBurst).toBeDefined();
    expect(u.Install!.WantedBy).toEqual(['multi-user.target']);

    const required: Record<string, string> = {
      DynamicUser: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      NoNewPrivileges: 'yes',
      CapabilityBoundingSet: '',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      ProcSubset: 'pid',
      SystemCallErrorNumber: 'EPERM',
      UMask: '0077',
      SystemCallArchitectures: 'native',
      LockPersonality: 'yes',
      RestrictNamespaces: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectControlGroups: 'yes',
    };
    for (const [k, v] of Object.entries(required)) expect(last(k), k).toBe(v);
    expect(svc.SystemCallFilter?.[0]).toBe('@system-service');
    // V8's JIT needs writable+executable memory: =yes kills Node at start.
    expect(svc.MemoryDenyWriteExecute ?? []).not.toContain('yes');
  });

  it('the template runs one shard per instance: %i is the shard index, with its own state, user and port', async () => {
    const t = (await readUnit('dms-keeper@.service')).Service!;
    expect(t.Environment).toContain('DMS_KEEPER_SHARD__INDEX=%i');
    expect(t.Environment?.some((e) => /^DMS_KEEPER_SERVER__LISTEN=127\.0\.0\.1:\d*%i$/.test(e))).toBe(true);
    expect(t.Environment?.some((e) => /^DMS_KEEPER_STATE_DIR=%S\/\S*%i$/.test(e))).toBe(true);
    expect(t.StateDirectory?.at(-1)).toContain('%i');
    expect(t.User?.at(-1)).toContain('%i');
  });

  it('the template carries exactly the hardening of the single unit', async () => {
    const single = await readUnit('dms-keeper.service');
    const template = await readUnit('dms-keeper@.service');
    const shared = (u: Unit) =>
      Object.fromEntries(Object.entries(u).map(([s, kv]) => [s, Object.fromEntries(Object.entries(kv).filter(([k]) => !PER_INSTANCE.has(k)))]));
    expect(shared(template)).toEqual(shared(single));
  });

  it("what Documentation= names is installed by docs/operations.md's steps, and the steps link the unit's node", async () => {
    const ops = await readFile(join(ROOT, 'docs/operations.md'), 'utf8');
    // The install step: `sudo cp -r ITEMS /opt/dms-keeper/`.
    const cp = /^sudo cp -r (.+) \/opt\/dms-keeper\/$/m.exec(ops);
    expect(cp, 'docs/operations.md has a `sudo cp -r ... /opt/dms-keeper/` step').not.toBeNull();
    const installed = cp![1]!.split(/\s+/);
    for (const name of ['dms-keeper.service', 'dms-keeper@.service', 'dms-keeper-heartbeat@.service']) {
      const docs = (await readUnit(name)).Unit!.Documentation!.join(' ').split(/\s+/);
      expect(docs.length).toBeGreaterThan(0);
      for (const d of docs) {
        const m = /^file:\/\/\/opt\/dms-keeper\/(.+)$/.exec(d);
        expect(m, `${name}: ${d} is a file under /opt/dms-keeper`).not.toBeNull();
        expect(installed, `${name}: ${d} is copied by the install step`).toContain(m![1]!.split('/')[0]);
        await readFile(join(ROOT, m![1]!)); // and exists in the release
      }
    }
    expect(ops).toMatch(/^sudo ln -sf "\$\(command -v node\)" \/opt\/dms-keeper\/bin\/node$/m);
    expect(ops).toContain('Node.js 20.19 or newer');
  });

  it('systemd, the image and the docs agree on the stop timeout and on credentials', async () => {
    const unitStop = seconds((await readUnit('dms-keeper.service')).Service!.TimeoutStopSec!.at(-1)!);
    const { text, env } = await readDockerfile();
    const ops = await readFile(join(ROOT, 'docs/operations.md'), 'utf8');
    const runs = [text, ops].flatMap((t) => [...t.matchAll(/docker run -d [^\n]*--stop-timeout (\d+)/g)].map((m) => Number(m[1])));
    expect(runs.length).toBe(2); // the Dockerfile's example and the docs'
    for (const s of runs) expect(s).toBe(unitStop);
    expect(ops).toContain(`stop_grace_period: ${unitStop}s`);
    expect(ops).toContain(`terminationGracePeriodSeconds: ${unitStop}`);
    expect(unitStop).toBeGreaterThan(15); // the keeper's own bound
    // credentials: the image reads /run/secrets as uid 1000; the docs' docker run mounts there and chowns to 1000
    expect(env.CREDENTIALS_DIRECTORY).toBe('/run/secrets');
    expect(ops).toContain('-v /etc/dms-keeper/credentials:/run/secrets:ro');
    expect(ops).toMatch(/chown 1000:1000 \/etc\/dms-keeper\/credentials\/\* && sudo chmod 0400/);
    expect(text).toContain('chown 1000:1000 FILE && chmod 0400 FILE');
  });

  it('the unit, the image and package.json start the same script', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const bin = pkg.bin['dms-keeper']!.replace(/^\.\//, '');
    const unit = await readUnit('dms-keeper.service');
    expect(unit.Service!.ExecStart!.at(-1)!.split(' ')[1]).toBe(`/opt/dms-keeper/${bin}`);
    const { image } = await readDockerfile();
    expect(execForm(one(image, 'ENTRYPOINT'))[1]).toBe(bin);
  });
});

// ---------------------------------------------------------------------------------------------

/** The directives under "# Hardening" in the keeper's unit, which the heartbeat unit must carry alike. */
const HARDENING = [
  'DynamicUser', 'UMask', 'NoNewPrivileges', 'CapabilityBoundingSet', 'AmbientCapabilities', 'ProtectSystem', 'ProtectHome', 'PrivateTmp',
  'PrivateDevices', 'DevicePolicy', 'PrivateMounts', 'PrivateIPC', 'PrivateUsers', 'ProtectHostname', 'ProtectClock', 'ProtectKernelTunables',
  'ProtectKernelModules', 'ProtectKernelLogs', 'ProtectControlGroups', 'ProtectProc', 'ProcSubset', 'RestrictAddressFamilies', 'RestrictNamespaces',
  'RestrictRealtime', 'RestrictSUIDSGID', 'LockPersonality', 'RemoveIPC', 'KeyringMode', 'SystemCallArchitectures', 'SystemCallFilter',
  'SystemCallErrorNumber', 'MemoryDenyWriteExecute', 'LimitCORE',
];

/** ExecStart= as systemd expands it: %i, then ${VAR} as one word (empty if unset), $VAR as words split on spaces. */
function expandExec(line: string, instance: string, env: Record<string, string>): string[] {
  return line
    .replaceAll('%i', instance)
    .split(/\s+/)
    .flatMap((word) => {
      const whole = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(word);
      if (whole) return [env[whole[1]!] ?? ''];
      const split = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
      if (split) return (env[split[1]!] ?? '').split(/\s+/).filter((w) => w !== '');
      if (word.includes('$')) throw new Error(`this test does not expand ${word}: teach it`);
      return [word];
    });
}

/** The env file the unit's header documents (`#   DMS_KEEPER_HEARTBEAT_X=value   # comment`). */
function documentedEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/^#\s+(DMS_KEEPER_HEARTBEAT_[A-Z_]+)=(.*?)(?:\s+#.*)?$/gm)) env[m[1]!] = m[2]!.trim();
  return env;
}

describe('systemd/dms-keeper-heartbeat@.service', () => {
  it("runs exactly while the bot's unit runs: bound to %i.service, started after it, stopped and restarted with it, wanted by it", async () => {
    const u = await readUnit('dms-keeper-heartbeat@.service');
    for (const k of ['BindsTo', 'After', 'PartOf']) expect(u.Unit![k], k).toEqual(['%i.service']);
    expect(u.Install!.WantedBy).toEqual(['%i.service']);
    expect(u.Service!.EnvironmentFile).toEqual(['/etc/dms-keeper/heartbeat-%i.env']);
    expect(u.Service!.LoadCredential).toEqual(['token:/etc/dms-keeper/heartbeat-%i.token']);
    const exec = u.Service!.ExecStart!.at(-1)!;
    expect(exec).toMatch(/^\/opt\/dms-keeper\/bin\/node \/opt\/dms-keeper\/dist\/src\/main\.js heartbeat /);
    expect(exec).toContain('--token-file token');
    expect(exec).not.toMatch(/--token[ =](?!file)/);
    expect(u.Service!.Restart).toEqual(['always']);
  });

  it("carries the keeper unit's hardening, directive for directive", async () => {
    const keeper = (await readUnit('dms-keeper.service')).Service!;
    const hb = (await readUnit('dms-keeper-heartbeat@.service')).Service!;
    for (const k of HARDENING) expect(hb[k], k).toEqual(keeper[k]);
  });

  it('its ExecStart, expanded by systemd from the documented env file, sends heartbeats with the LoadCredential= token; an unset URL exits 2', async () => {
    const { createServer } = await import('node:http');
    const beats: Array<{ auth?: string; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (req.url === '/heartbeat') beats.push({ body, ...(req.headers.authorization ? { auth: req.headers.authorization } : {}) });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', silence_seconds: 5 }));
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as { port: number }).port;
    try {
      const text = await readFile(join(ROOT, 'systemd/dms-keeper-heartbeat@.service'), 'utf8');
      const documented = documentedEnv(text);
      expect(Object.keys(documented).sort()).toEqual(['DMS_KEEPER_HEARTBEAT_ACCOUNTS', 'DMS_KEEPER_HEARTBEAT_OPTIONS', 'DMS_KEEPER_HEARTBEAT_URL']);
      // The keeper and the bot's health URL here: this test's server stands in for both.
      const env = { ...documented, DMS_KEEPER_HEARTBEAT_URL: `http://127.0.0.1:${port}`, DMS_KEEPER_HEARTBEAT_OPTIONS: documented.DMS_KEEPER_HEARTBEAT_OPTIONS!.replace(/http:\/\/127\.0\.0\.1:\d+/, `http://127.0.0.1:${port}`) };
      const argv = expandExec((await readUnit('dms-keeper-heartbeat@.service')).Service!.ExecStart!.at(-1)!, 'mm-bot', env);
      expect(argv.slice(0, 2)).toEqual(['/opt/dms-keeper/bin/node', '/opt/dms-keeper/dist/src/main.js']);
      const dir = await tempDir('dmsk-hb-unit-');
      dirs.push(dir);
      const token = 'bot-mm-token-0123456789abcdef';
      await writeFile(join(dir, 'token'), `${token}\n`, { mode: 0o400 }); // as LoadCredential= leaves it
      const p = run([MAIN, ...argv.slice(2), '--every-seconds', '0.2'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', CREDENTIALS_DIRECTORY: dir } });
      children.push(p.child);
      expect(await until(async () => beats.length >= 2 || p.child.exitCode !== null, 10_000), p.output()).toBe(true);
      expect(beats[0]).toEqual({ auth: `Bearer ${token}`, body: JSON.stringify({ accounts: documented.DMS_KEEPER_HEARTBEAT_ACCOUNTS!.split(',') }) });
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);

      // An env file without the URL: ${DMS_KEEPER_HEARTBEAT_URL} is an empty argument, refused by name.
      const bare = expandExec((await readUnit('dms-keeper-heartbeat@.service')).Service!.ExecStart!.at(-1)!, 'mm-bot', { DMS_KEEPER_HEARTBEAT_ACCOUNTS: 'mm-main' });
      const q = run([MAIN, ...bare.slice(2)], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', CREDENTIALS_DIRECTORY: dir } });
      children.push(q.child);
      expect((await q.exited).code).toBe(2);
      expect(q.output()).toContain('needs --url');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 30_000);
});
