import { describe, expect, it } from 'vitest';
import { toAppConfig } from '../app/from-config.js';
import { BASE_ENV, minimal, parse, paths, problemsOf } from './test-support.js';

/** `minimal()`'s account with a `liveness:` block (lines indented as the account's keys). */
const withLiveness = (...lines: string[]): string => minimal(['    liveness:', ...lines.map((l) => `      ${l}`)].join('\n'));
const TOKEN_ENV = { BOT_TOKEN: 'a-heartbeat-token-of-32-chars-xx' };

describe('accounts[].liveness', () => {
  it('heartbeat: defaults silence 10 s and cancel_soon; the token is a source, read when the keeper starts', async () => {
    const c = await parse(withLiveness('heartbeat: { token: { env: BOT_TOKEN } }'), TOKEN_ENV);
    expect(c.accounts[0]!.liveness).toEqual({ silenceSeconds: 10, onSilence: 'cancel_soon', heartbeat: { token: { kind: 'env', name: 'BOT_TOKEN', yamlPath: 'accounts[0].liveness.heartbeat.token' } } });
    const app = toAppConfig(c, { ...BASE_ENV, ...TOKEN_ENV });
    const spec = app.keeper.accounts[0]!;
    expect(spec.switch.onSilence).toBe('cancel_soon');
    expect(spec.liveness!.silenceMs).toBe(10_000);
    expect(await spec.liveness!.heartbeat!.token()).toBe(TOKEN_ENV.BOT_TOKEN);
    expect(JSON.stringify(c)).not.toContain(TOKEN_ENV.BOT_TOKEN);
  });

  it('probe: url, every_seconds, timeout_ms, silence and stop_rearming', async () => {
    const c = await parse(withLiveness('probe: { url: "http://10.0.0.7:8080/healthz", every_seconds: 2, timeout_ms: 500 }', 'silence_seconds: 6', 'on_silence: stop_rearming'));
    expect(c.accounts[0]!.liveness).toEqual({ silenceSeconds: 6, onSilence: 'stop_rearming', probe: { url: 'http://10.0.0.7:8080/healthz', everySeconds: 2, timeoutMs: 500 } });
    expect(toAppConfig(c, BASE_ENV).keeper.accounts[0]!.liveness!.probe).toEqual({ url: 'http://10.0.0.7:8080/healthz', everyMs: 2_000, timeoutMs: 500 });
  });

  it('refuses neither or both ways, a short or missing token, a bad probe URL, a silence shorter than a probe', async () => {
    expect(paths(await problemsOf(withLiveness('silence_seconds: 5')))).toEqual(['accounts[0].liveness']);
    expect(paths(await problemsOf(withLiveness('heartbeat: { token: { env: BOT_TOKEN } }', 'probe: { url: "http://127.0.0.1:1/h" }'), TOKEN_ENV))).toEqual(['accounts[0].liveness']);
    const short = await problemsOf(withLiveness('heartbeat: { token: { env: BOT_TOKEN } }'), { BOT_TOKEN: 'short' });
    expect(short).toEqual([{ path: 'accounts[0].liveness.heartbeat.token.env', message: expect.stringContaining('shorter than 16'), line: expect.any(Number) }]);
    expect(JSON.stringify(short)).not.toContain('short"');
    expect(paths(await problemsOf(withLiveness('heartbeat: { token: { env: NOT_SET } }')))).toEqual(['accounts[0].liveness.heartbeat.token.env']);
    expect(paths(await problemsOf(withLiveness('heartbeat: { token: "inline-token-0123456789abc" }')))).toEqual(['accounts[0].liveness.heartbeat.token']);
    expect(paths(await problemsOf(withLiveness('probe: { url: "ftp://x/h" }')))).toEqual(['accounts[0].liveness.probe.url']);
    expect(paths(await problemsOf(withLiveness('probe: { url: "http://user:pw@x/h" }')))).toEqual(['accounts[0].liveness.probe.url']);
    expect(paths(await problemsOf(withLiveness('probe: { url: "http://x/h", every_seconds: 3, timeout_ms: 2000 }', 'silence_seconds: 5')))).toEqual(['accounts[0].liveness.silence_seconds']);
    expect(paths(await problemsOf(withLiveness('heartbeat: { token: { env: BOT_TOKEN } }', 'on_silence: explode'), TOKEN_ENV))).toEqual(['accounts[0].liveness.on_silence']);
    expect(paths(await problemsOf(withLiveness('heartbeat: { token: { env: BOT_TOKEN } }', 'silence: 5'), TOKEN_ENV))).toEqual(['accounts[0].liveness.silence']);
  });
});

describe('demo', () => {
  const sim = (accounts: string, demo: string) =>
    ['venue:', '  simulator: true', 'accounts:', accounts, 'demo:', '  bots:', demo].join('\n');
  const acct = (name: string, token: string) =>
    [`  - name: ${name}`, '    address: "0x00000000000000000000000000000000000000A1"', '    master_key: { env: K1 }', `    agent: { name: ${name} }`, '    liveness:', `      heartbeat: { token: { env: ${token} } }`].join('\n');
  const env = { T1: 'token-one-0123456789abcdef', T2: 'token-two-0123456789abcdef' };

  it('bots of heartbeat accounts beside the simulator', async () => {
    const c = await parse(sim([acct('a1', 'T1'), acct('a2', 'T1')].join('\n'), '    - accounts: [a1, a2]\n      silent_after_seconds: 30'), env);
    expect(c.demo).toEqual({ bots: [{ accounts: ['a1', 'a2'], silentAfterSeconds: 30 }] });
    expect(toAppConfig(c, { ...BASE_ENV, ...env }).demoBots![0]!.silentAfterMs).toBe(30_000);
  });

  it('refused in production, for unknown or non-heartbeat accounts, for two tokens in one bot', async () => {
    expect(paths(await problemsOf(minimal('demo:\n  bots:\n    - accounts: [a1]')))).toEqual(expect.arrayContaining(['demo', 'demo.bots[0].accounts[0]']));
    expect(paths(await problemsOf(sim(acct('a1', 'T1'), '    - accounts: [zz]'), env))).toEqual(['demo.bots[0].accounts[0]']);
    expect(paths(await problemsOf(sim([acct('a1', 'T1'), acct('a2', 'T2')].join('\n'), '    - accounts: [a1, a2]'), env))).toEqual(['demo.bots[0].accounts[1]']);
    expect(paths(await problemsOf(sim(acct('a1', 'T1'), '    - accounts: [a1]\n    - accounts: [a1]'), env))).toEqual(['demo.bots[1].accounts[0]']);
  });
});

describe('the heartbeat relay (docs/liveness.md, "Fleets")', () => {
  // a1 hashes to shard 1 of 2, a2 and a3 to shard 0.
  const fleet = (shard: string, shared: boolean): string =>
    [
      minimal(['    liveness:', '      heartbeat: { token: { env: BOT_TOKEN } }', '      silence_seconds: 6'].join('\n')),
      '  - name: a2',
      '    address: "0x00000000000000000000000000000000000000A2"',
      '    master_key: { env: K2 }',
      '    liveness: { heartbeat: { token: { env: BOT_TOKEN_2 } } }',
      '  - name: a3',
      '    address: "0x00000000000000000000000000000000000000A3"',
      '    master_key: { env: K3 }',
      '    liveness: { probe: { url: "http://10.0.0.7:8080/healthz" } }',
      ...(shared ? ['rate_limits:', '  shared: { redis_url: "redis://127.0.0.1:6379", name: fleet }'] : []),
      shard,
    ].join('\n');
  const env = { ...TOKEN_ENV, BOT_TOKEN_2: 'another-heartbeat-token-of-32-ch', K3: '0x' + '11'.repeat(32) };

  it("with a shared Redis and two shards, the keeper knows the other shard's heartbeat accounts and reads their tokens like its own", async () => {
    const app0 = toAppConfig(await parse(fleet('shard: { index: 0, count: 2 }', true), env), { ...BASE_ENV, ...env });
    expect(app0.keeper.accounts.map((a) => a.name)).toEqual(['a2', 'a3']);
    expect(app0.keeper.foreignAccounts!.map((a) => [a.name, a.silenceMs])).toEqual([['a1', 6_000]]);
    expect(await app0.keeper.foreignAccounts![0]!.token()).toBe(TOKEN_ENV.BOT_TOKEN);
    const app1 = toAppConfig(await parse(fleet('shard: { index: 1, count: 2 }', true), env), { ...BASE_ENV, ...env });
    // a3 is probed, not heartbeated: nothing to relay.
    expect(app1.keeper.foreignAccounts!.map((a) => a.name)).toEqual(['a2']);
  });

  it('no relay without a shared Redis or with one shard: another shard\'s account stays unknown', async () => {
    expect(toAppConfig(await parse(fleet('shard: { index: 0, count: 2 }', false), env), { ...BASE_ENV, ...env }).keeper.foreignAccounts).toBeUndefined();
    expect(toAppConfig(await parse(fleet('shard: { index: 0, count: 1 }', true), env), { ...BASE_ENV, ...env }).keeper.foreignAccounts).toBeUndefined();
  });
});

describe('liveness with shard.replication 2', () => {
  it('the second replica approves its own agent, only stops re-arming on silence, and echoes heartbeats on the relay', async () => {
    const text = withLiveness('heartbeat: { token: { env: BOT_TOKEN } }') + '\nshard: { index: 0, count: 2, replication: 2 }\nrate_limits:\n  shared: { name: fleet, redis_url: "redis://127.0.0.1:6379" }';
    const config = await parse(text, TOKEN_ENV);
    const app = toAppConfig(config, { ...BASE_ENV, ...TOKEN_ENV });
    const a1 = app.keeper.accounts.find((a) => a.name === 'a1')!;
    const replica = a1.replica ?? 0;
    expect(a1.coveredBy).toHaveLength(2);
    expect(a1.agentName).toBe(replica === 0 ? 'dms-keeper' : 'dms-keeper-2');
    expect(a1.liveness?.onSilence).toBe(replica === 0 ? 'cancel_soon' : 'stop_rearming');
    expect(a1.switch.onSilence).toBe(a1.liveness?.onSilence);
    expect(a1.liveness?.echo).toBe(true);
  });
});
