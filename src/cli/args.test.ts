import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COMMAND_HELP, parseCommand, UsageError } from './args.js';

describe('parseCommand', () => {
  it.each([
    [['--config', 'a.yaml'], { name: 'run', config: 'a.yaml' }],
    [['run', '-c', 'a.yaml'], { name: 'run', config: 'a.yaml' }],
    [['check-config', '--config', 'a.yaml'], { name: 'check-config', config: 'a.yaml' }],
    [['disarm', '--config', 'a.yaml', '--account', 'mm-main'], { name: 'disarm', config: 'a.yaml', account: 'mm-main' }],
    [['disarm', '--config', 'a.yaml'], { name: 'disarm', config: 'a.yaml' }],
    [['keygen', '--out', 'k'], { name: 'keygen', out: 'k', force: false }],
    [['keygen', '--out', 'k', '--force'], { name: 'keygen', out: 'k', force: true }],
    [['simulate'], { name: 'simulate', port: 8080, host: '127.0.0.1', profile: 'strict', budget: 'ip_window' }],
    [['simulate', '--budget', 'signed_window_100_per_5s'], { name: 'simulate', port: 8080, host: '127.0.0.1', profile: 'strict', budget: 'signed_window_100_per_5s' }],
    [['simulate', '--profile', 'random:7'], { name: 'simulate', port: 8080, host: '127.0.0.1', profile: 'random:7', budget: 'ip_window' }],
    [['simulate', '--port', '0'], { name: 'simulate', port: 0, host: '127.0.0.1', profile: 'strict', budget: 'ip_window' }],
    [['--help'], { name: 'help' }],
    [['run', '--help'], { name: 'help', topic: 'run' }],
    [['help', 'disarm'], { name: 'help', topic: 'disarm' }],
    [['--version'], { name: 'version' }],
    [
      ['heartbeat', '--url', 'http://127.0.0.1:9464', '--account', 'mm-main', '--account', 'mm-sub,arb-desk'],
      { name: 'heartbeat', urls: ['http://127.0.0.1:9464'], accounts: ['mm-main', 'mm-sub', 'arb-desk'], everyMs: 1000, timeoutMs: 1000 },
    ],
    [
      ['heartbeat', '--url', 'http://a:9464', '--url', 'http://b:9464', '--account', 'x', '--every-seconds', '0.5', '--timeout-ms', '400', '--check-url', 'http://127.0.0.1:8080/healthz', '--token-file', 'token'],
      { name: 'heartbeat', urls: ['http://a:9464', 'http://b:9464'], accounts: ['x'], everyMs: 500, timeoutMs: 400, checkUrl: 'http://127.0.0.1:8080/healthz', tokenFile: 'token' },
    ],
  ])('%j', (argv, want) => {
    expect(parseCommand(argv)).toEqual(want);
  });

  it.each([
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['run'], /needs --config/],
    [[], /needs --config/],
    [['keygen'], /needs --out/],
    [['simulate', '--port', 'abc'], /--port must be an integer/],
    [['simulate', '--profile', 'weird'], /unknown simulator profile 'weird'/],
    [['simulate', '--budget', 'lavish'], /unknown simulator budget 'lavish'/],
    [['simulate', '--port', '70000'], /--port must be an integer/],
    [['run', '--config', 'a', '--out', 'x'], /--out does not apply to 'run'/],
    [['run', '--config', 'a', 'extra'], /unexpected argument 'extra'/],
    [['run', '--bogus'], /bogus/],
    [['disarm', '--config', 'a', '--account', 'x', '--account', 'y'], /takes one --account/],
    [['heartbeat', '--account', 'x'], /needs --url/],
    [['heartbeat', '--url', '', '--account', 'x'], /needs --url/], // an unset variable in a unit's ExecStart=
    [['heartbeat', '--url', 'http://k:9464'], /needs --account/],
    [['heartbeat', '--url', 'http://k:9464/heartbeat', '--account', 'x'], /without \/heartbeat/],
    [['heartbeat', '--url', 'k:9464', '--account', 'x'], /http:\/\/ or https:\/\//],
    [['heartbeat', '--url', 'http://k:9464', '--account', 'Bad Name'], /not an account name/],
    [['heartbeat', '--url', 'http://k:9464', '--account', 'a,a'], /named twice/],
    [['heartbeat', '--url', 'http://k:9464', '--account', Array.from({ length: 257 }, (_, i) => `a${i}`).join(',')], /at most 256/],
    [['heartbeat', '--url', 'http://k:9464', '--account', 'x', '--every-seconds', '0'], /--every-seconds/],
    [['heartbeat', '--url', 'http://k:9464', '--account', 'x', '--timeout-ms', '1.5'], /--timeout-ms/],
    [['heartbeat', '--url', 'http://k:9464', '--account', 'x', '--check-url', 'nope'], /--check-url/],
    [['heartbeat', '--url', 'http://k:9464', '--account', 'x', '--config', 'a'], /--config does not apply to 'heartbeat'/],
  ])('%j is a usage error', (argv, msg) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(msg);
  });
});

describe('the heartbeat token is never taken from argv', () => {
  it.each([['--token', 's3cret-token-0123456789'], ['--token=s3cret-token-0123456789']])('%s', (...opt) => {
    const argv = ['heartbeat', '--url', 'http://k:9464', '--account', 'x', ...opt];
    expect(() => parseCommand(argv)).toThrow(/never taken from the command line/);
    try {
      parseCommand(argv);
    } catch (e) {
      expect((e as Error).message).not.toContain('s3cret');
    }
  });
});

describe('simulate --help', () => {
  it('says which network it is, how to add and fund an account, and where the admin API is documented', async () => {
    const help = COMMAND_HELP.simulate;
    expect(help).toMatch(/Network: testnet, always/);
    expect(help).toContain('POST http://127.0.0.1:8080/_sim/accounts');
    expect(help).toContain('"tradedVolumeUsd": 2000000');
    expect(help).toContain('POST /_sim/volume');
    expect(help).toContain('docs/simulator.md');
    const doc = await readFile(join(import.meta.dirname, '..', '..', 'docs', 'simulator.md'), 'utf8');
    // every admin route of src/sim/admin.ts is in the reference
    const routes = [...(await readFile(join(import.meta.dirname, '..', 'sim', 'admin.ts'), 'utf8')).matchAll(/pattern: '(\/_sim\/[a-z-]+)'/g)].map((m) => m[1]!);
    expect(routes.length).toBeGreaterThan(5);
    for (const route of routes) expect(doc, route).toContain(`${route}\``);
  });
});
