/**
 * `dms-keeper heartbeat`, the built CLI in a child process, against a tiny HTTP server in this
 * test standing in for the keeper (and for the bot's health URL): what it sends, how it stops,
 * which answers end it (exit 2) and which it rides out. Real time, loopback only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, inBatches, runCli, startCli, tempDir, writeKey, type Proc } from './support/cli.js';

const TOKEN = 'bot-mm-token-0123456789abcdef';

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

/** Records every request; `answer` decides the reply and may be swapped while the test runs. */
async function fakeKeeper(port = 0) {
  const seen: Seen[] = [];
  const state = {
    answer: (req: Seen): [number, unknown] => (req.url === '/heartbeat' ? [200, { status: 'ok', accounts: JSON.parse(req.body).accounts, silence_seconds: 5 }] : [404, { error: 'not found' }]),
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const r: Seen = { method: req.method ?? '', url: req.url ?? '', body, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) };
      seen.push(r);
      const [status, json] = state.answer(r);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, state, beats: () => seen.filter((s) => s.method === 'POST' && s.url === '/heartbeat') };
}

// The tests run at once, each with its own servers and process: what is left is cleared at the end
// of the file (an afterEach would close a concurrent test's servers).
const servers: Server[] = [];
const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A credentials directory holding the token as `token`, mode 0600 (what LoadCredential= gives). */
async function creds(): Promise<string> {
  const dir = join(await tempDir('dmsk-hb-'), 'creds');
  await writeKey(dir, 'token', TOKEN);
  return dir;
}

/**
 * The heartbeat CLI with a 5 s request timeout, not the default 1 s: a child process starting on two
 * busy cores can take longer than a second over its first request, which it would log as a failing
 * heartbeat (a line these tests count) though nothing failed.
 */
function heartbeat(args: string[], env: Record<string, string> = {}): Proc {
  const p = startCli(['heartbeat', '--timeout-ms', '5000', ...args], { env });
  procs.push(p);
  return p;
}

const events = (p: Proc) => p.logs().map((l) => l.event);

// Waits are on events (30 s at most, nothing when they come quickly): six processes starting at once
// on two cores that other work also loads may take a while to reach their first requests.
describe.concurrent('dms-keeper heartbeat (built CLI)', { timeout: 60_000 }, () => {
  it('has its help, like every command', async () => {
    const r = await runCli(['heartbeat', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: dms-keeper heartbeat --url URL --account NAME/);
    expect(r.stdout).toContain('Exit codes:');
  });

  it('posts the accounts with the bearer token every period, logs only changes, and stops on SIGTERM with exit 0', async () => {
    const keeper = await fakeKeeper();
    const p = heartbeat(['--url', keeper.url, '--account', 'mm-main', '--account', 'mm-sub', '--every-seconds', '0.2', '--token-file', 'token'], { CREDENTIALS_DIRECTORY: await creds() });
    await p.waitFor(() => keeper.beats().length >= 5, 30_000, 'five heartbeats');
    for (const b of keeper.beats()) {
      expect(b.authorization).toBe(`Bearer ${TOKEN}`);
      expect(JSON.parse(b.body)).toEqual({ accounts: ['mm-main', 'mm-sub'] });
    }
    expect(keeper.seen.every((s) => s.url === '/heartbeat' && s.method === 'POST')).toBe(true);
    p.child.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 0, signal: null });
    // One line at start, one when accepted, one at the stop: not one per heartbeat.
    expect(events(p)).toEqual(['heartbeat_start', 'heartbeat_ok', 'heartbeat_stop']);
    expect(p.logs()[1]).toMatchObject({ level: 30, accounts: ['mm-main', 'mm-sub'], silence_seconds: 5 });
    expect(p.stdout() + p.stderr()).not.toContain(TOKEN);
  });

  it('exits 2 when the keeper answers 401, with the keeper\'s error in the log', async () => {
    const keeper = await fakeKeeper();
    keeper.state.answer = () => [401, { error: 'unauthorized' }];
    const p = heartbeat(['--url', keeper.url, '--account', 'mm-main'], { DMS_KEEPER_HEARTBEAT_TOKEN: TOKEN });
    expect((await p.exited).code).toBe(2);
    expect(keeper.beats()).toHaveLength(1); // retrying the same request cannot help: it did not
    expect(p.logs().find((l) => l.event === 'heartbeat_refused')).toMatchObject({ level: 50, status: 401, keeper_error: 'unauthorized' });
    expect(p.stdout() + p.stderr()).not.toContain(TOKEN);
  });

  it('exits 2 without a token, and refuses one on the command line without echoing it', async () => {
    const keeper = await fakeKeeper();
    const loose = join(await tempDir('dmsk-hb-'), 'loose');
    await writeKey(loose, 'token', TOKEN, 0o644);
    const [none, argv, open] = await inBatches([
      () => runCli(['heartbeat', '--url', keeper.url, '--account', 'mm-main']),
      () => runCli(['heartbeat', '--url', keeper.url, '--account', 'mm-main', `--token=${TOKEN}`]),
      () => runCli(['heartbeat', '--url', keeper.url, '--account', 'mm-main', '--token-file', join(loose, 'token')]),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no token: give --token-file FILE or set DMS_KEEPER_HEARTBEAT_TOKEN');
    expect(argv.code).toBe(2);
    expect(argv.stderr).toContain('never taken from the command line');
    expect(argv.stderr).not.toContain(TOKEN);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('mode 0644');
    expect(keeper.seen).toEqual([]);
  });

  it('keeps going while the keeper refuses connections, and says so once; then recovers when it is back', async () => {
    const port = await freePort();
    const p = heartbeat(['--url', `http://127.0.0.1:${port}`, '--account', 'mm-main', '--every-seconds', '0.2', '--token-file', 'token'], { CREDENTIALS_DIRECTORY: await creds() });
    await p.waitFor(() => events(p).includes('heartbeat_failing'), 30_000, 'heartbeat_failing');
    await new Promise((r) => setTimeout(r, 1_500)); // about seven more refused periods
    expect(p.child.exitCode).toBeNull();
    expect(events(p)).toEqual(['heartbeat_start', 'heartbeat_failing']);
    expect(p.logs()[1]).toMatchObject({ level: 40, reason: 'unreachable', detail: 'ECONNREFUSED' });
    const keeper = await fakeKeeper(port); // the keeper is back
    await p.waitFor(() => events(p).includes('heartbeat_ok'), 30_000, 'heartbeat_ok');
    expect(keeper.beats().length).toBeGreaterThan(0);
    expect(p.logs().find((l) => l.event === 'heartbeat_ok')!.failed_periods).toBeGreaterThanOrEqual(5);
    p.child.kill('SIGINT');
    expect((await p.exited).code).toBe(0);
  });

  it('with --check-url answering 500 sends no heartbeat at all (the keeper must see silence)', async () => {
    const keeper = await fakeKeeper();
    const bot = await fakeKeeper();
    bot.state.answer = () => [500, { error: 'trading loop stalled' }];
    const p = heartbeat(['--url', keeper.url, '--account', 'mm-main', '--every-seconds', '0.2', '--check-url', `${bot.url}/healthz`], { DMS_KEEPER_HEARTBEAT_TOKEN: TOKEN });
    await p.waitFor(() => bot.seen.length >= 5, 30_000, 'five health checks');
    expect(keeper.seen).toEqual([]);
    expect(bot.seen.every((s) => s.method === 'GET' && s.url === '/healthz' && s.authorization === undefined)).toBe(true);
    expect(events(p)).toEqual(['heartbeat_start', 'heartbeat_bot_unhealthy']);
    // healthy again: heartbeats resume
    bot.state.answer = () => [200, { ok: true }];
    await p.waitFor(() => keeper.beats().length > 0, 30_000, 'a heartbeat after the bot recovered');
    p.child.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
  });
});
