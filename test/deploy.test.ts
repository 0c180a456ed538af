/**
 * Deployment artefacts: the Dockerfile's exact ENTRYPOINT + CMD and HEALTHCHECK run outside a
 * container (no Docker engine here), and the systemd units carry what the design requires.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, getJson, ROOT, tempDir } from './support/cli.js';

function instruction(dockerfile: string, name: string): string {
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n');
  const found = lines.filter((l) => l.startsWith(`${name} `)).at(-1);
  if (!found) throw new Error(`no ${name} in the Dockerfile`);
  return found.slice(name.length + 1).trim();
}

function execForm(text: string): string[] {
  const v = JSON.parse(text) as unknown;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`not exec form: ${text}`);
  return v;
}

function runtimeEnv(dockerfile: string): Record<string, string> {
  const stage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const m of stage.replace(/\\\n\s*/g, ' ').matchAll(/^ENV (.+)$/gm)) {
    for (const kv of m[1]!.trim().split(/\s+/)) {
      const [k, v] = kv.split('=');
      env[k!] = v!;
    }
  }
  return env;
}

const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('Dockerfile', () => {
  it('its exact ENTRYPOINT + CMD starts a healthy keeper, its HEALTHCHECK passes, SIGTERM stops it with 0', async () => {
    const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    const argv = [...execForm(instruction(dockerfile, 'ENTRYPOINT')), ...execForm(instruction(dockerfile, 'CMD'))];
    const health = execForm(instruction(dockerfile, 'HEALTHCHECK').replace(/^.*?CMD\s+/, ''));
    const env = runtimeEnv(dockerfile);
    expect(argv.slice(0, 2)).toEqual(['node', 'dist/src/main.js']);
    expect(env.DMS_KEEPER_SERVER__LISTEN).toBe('0.0.0.0:9464');
    expect(health[0]).toBe('node');

    // The container's paths, mapped onto this machine: the config the image expects at
    // /etc/dms-keeper/dms-keeper.yaml is the example (embedded simulator); /run/secrets holds keys.
    const dir = await tempDir('dmsk-docker-');
    const secrets = join(dir, 'run-secrets');
    await mkdir(secrets);
    expect(spawnSync(process.execPath, ['scripts/demo-credentials.mjs', secrets], { cwd: ROOT }).status).toBe(0);
    const configPath = argv[argv.indexOf('--config') + 1]!;
    expect(configPath).toBe('/etc/dms-keeper/dms-keeper.yaml');
    const localConfig = join(dir, 'dms-keeper.yaml');
    await writeFile(localConfig, await readFile(join(ROOT, 'config/dms-keeper.example.yaml'), 'utf8'));
    const port = await freePort();
    const args = argv.slice(1).map((a) => (a === configPath ? localConfig : a));
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: {
        ...process.env,
        ...env,
        STATE_DIRECTORY: join(dir, 'state'),
        CREDENTIALS_DIRECTORY: secrets,
        // the image listens on 0.0.0.0:9464; here a free loopback port, same code path
        DMS_KEEPER_SERVER__LISTEN: `127.0.0.1:${port}`,
        NOTIFY_SOCKET: undefined,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));

    let ok = false;
    for (let i = 0; i < 100 && !ok; i++) {
      await new Promise((r) => setTimeout(r, 100));
      ok = await getJson(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
    }
    expect(ok, out.slice(-2000)).toBe(true);
    // the HEALTHCHECK command, with the port mapped
    const hc = spawnSync(health[0] === 'node' ? process.execPath : health[0]!, health.slice(1).map((a) => a.replace('127.0.0.1:9464', `127.0.0.1:${port}`)), { timeout: 10_000 });
    expect(hc.status).toBe(0);
    // state went to STATE_DIRECTORY, as the image's volume expects
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const hcDown = spawnSync(process.execPath, health.slice(1).map((a) => a.replace('127.0.0.1:9464', `127.0.0.1:${port}`)), { timeout: 10_000 });
    expect(hcDown.status).toBe(1);
  }, 40_000);

  it('runs as a non-root user, from an official Node slim image, with production deps only', async () => {
    const d = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    expect(d).toMatch(/^FROM node:20-[a-z]+-slim AS build$/m);
    expect(d).toMatch(/^USER node$/m);
    expect(d).toContain('npm ci --omit=dev');
    expect(d).not.toMatch(/curl|wget/);
  });
});

describe('systemd units', () => {
  it.each(['dms-keeper.service', 'dms-keeper@.service'])('%s has the required directives', async (unit) => {
    const text = await readFile(join(ROOT, 'systemd', unit), 'utf8');
    for (const line of [
      'Type=notify',
      'NotifyAccess=all',
      'WatchdogSec=',
      'LoadCredential=',
      'StateDirectory=dms-keeper',
      'DynamicUser=yes',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'PrivateDevices=yes',
      'NoNewPrivileges=yes',
      'CapabilityBoundingSet=\n',
      'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX',
      'ProcSubset=pid',
      'SystemCallFilter=@system-service',
      'SystemCallErrorNumber=EPERM',
      'UMask=0077',
      'ExecReload=/bin/kill -HUP $MAINPID',
    ]) {
      expect(text, line).toContain(line);
    }
    expect(text).not.toMatch(/^MemoryDenyWriteExecute=yes/m);
    if (unit.includes('@')) expect(text).toContain('DMS_KEEPER_SHARD__INDEX=%i');
  });
});
