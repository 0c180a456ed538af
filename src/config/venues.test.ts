import { describe, expect, it } from 'vitest';
import { BASE_ENV, parse, paths, problemsOf } from './test-support.js';
import { toAppConfig } from '../app/from-config.js';

const CREDS = { PM_KEY: '2f7c1d9e-1111-4a4a-9b9b-0123456789ab', PM_SECRET: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=', PM_PASS: 'a'.repeat(64) };

/** One account on the default venue and one on a CLOB venue named `pm`; `venueLines` replaces the venue's keys. */
function twoVenues(opts: { venueLines?: string[]; pmAccount?: string[] } = {}): string {
  return [
    'venue:',
    '  base_url: https://svc.example.com',
    'venues:',
    '  pm:',
    ...(opts.venueLines ?? ['    kind: polymarket_clob', '    clob_url: https://clob.example.com']),
    'accounts:',
    '  - name: a1',
    '    address: "0x00000000000000000000000000000000000000A1"',
    '    master_key: { env: K1 }',
    '  - name: p1',
    '    address: "0x00000000000000000000000000000000000000A1"',
    ...(opts.pmAccount ?? ['    venue: pm', '    clob_credentials: { key: { env: PM_KEY }, secret: { env: PM_SECRET }, passphrase: { env: PM_PASS } }']),
  ].join('\n');
}

describe('venues and accounts[].venue', () => {
  it('a config without them: every account on the default venue, no named venues', async () => {
    const c = await parse(['venue:', '  base_url: https://svc.example.com', 'accounts:', '  - name: a1', '    address: "0x00000000000000000000000000000000000000A1"', '    master_key: { env: K1 }'].join('\n'));
    expect(c.venues).toEqual([]);
    expect(c.accounts[0]!.venue).toBe('hyperliquid');
    expect(c.accounts[0]!.clobCredentials).toBeUndefined();
  });

  it('a CLOB account: its switch is the heartbeat (D = the 10 s timeout, the venue period and minimum), its credentials are sources, never values', async () => {
    const c = await parse(twoVenues(), CREDS);
    expect(c.venues).toEqual([{ name: 'pm', kind: 'polymarket_clob', clobUrl: 'https://clob.example.com', heartbeatEverySeconds: 5, minHorizonSeconds: 2, requestTimeoutMs: 1000, rateLimit: { requests: 9000, perSeconds: 10 } }]);
    const p = c.accounts[1]!;
    expect(p.venue).toBe('pm');
    expect(p.switch).toEqual({ deadlineSeconds: 10, rearmEverySeconds: 5, minHorizonSeconds: 2, armWhen: 'always', onShutdown: 'keep', path: 'rest' });
    expect(p.masterKey).toBeUndefined();
    expect(p.clobCredentials?.secret).toMatchObject({ kind: 'env', name: 'PM_SECRET' });
    const text = JSON.stringify(c);
    for (const v of Object.values(CREDS)) expect(text).not.toContain(v);
    // The same address on both venues is two accounts, not one agent slot taken twice.
    expect(c.accounts[0]!.address).toBe(p.address);
  });

  it('refuses an unknown venue, missing credentials, the default venue\'s keys on a CLOB account, and credentials on the default venue', async () => {
    expect(paths(await problemsOf(twoVenues({ pmAccount: ['    venue: nowhere'] }), CREDS))).toEqual(['accounts[1].venue']);
    expect(paths(await problemsOf(twoVenues({ pmAccount: ['    venue: pm'] }), CREDS))).toEqual(['accounts[1].clob_credentials']);
    expect(
      paths(
        await problemsOf(
          twoVenues({ pmAccount: ['    venue: pm', '    master_key: { env: K2 }', '    switch: { deadline_seconds: 30 }', '    clob_credentials: { key: { env: PM_KEY }, secret: { env: PM_SECRET }, passphrase: { env: PM_PASS } }'] }),
          CREDS,
        ),
      ).sort(),
    ).toEqual(['accounts[1].master_key', 'accounts[1].switch']);
    expect(paths(await problemsOf(twoVenues({ pmAccount: ['    master_key: { env: K2 }', '    agent: { name: other }', '    clob_credentials: { key: { env: PM_KEY }, secret: { env: PM_SECRET }, passphrase: { env: PM_PASS } }'] }), CREDS))).toEqual([
      'accounts[1].clob_credentials',
    ]);
  });

  it('refuses a credential that is not one line of printable ASCII, naming the source and never the value', async () => {
    const problems = await problemsOf(twoVenues(), { ...CREDS, PM_PASS: 'two words' });
    expect(paths(problems)).toEqual(['accounts[1].clob_credentials.passphrase.env']);
    expect(JSON.stringify(problems)).not.toContain('two words');
  });

  it('a CLOB venue: the URL outside the simulator, the name hyperliquid taken, and the heartbeat rule (one retry above the minimum)', async () => {
    expect(paths(await problemsOf(twoVenues({ venueLines: ['    kind: polymarket_clob'] }), CREDS))).toEqual(['venues.pm.clob_url']);
    expect(paths(await problemsOf(twoVenues({ venueLines: ['    kind: polymarket_clob', '    clob_url: http://clob.example.com'] }), CREDS))).toEqual(['venues.pm.clob_url']);
    expect(paths(await problemsOf(twoVenues({ venueLines: ['    kind: perps', '    clob_url: https://clob.example.com'] }), CREDS))).toEqual(['venues.pm.kind']);
    // 10 - 6 = 4 < 2 + (1000 / 1000 + 1) = 4? No: 4 >= 4 holds; 7 s does not.
    await expect(parse(twoVenues({ venueLines: ['    kind: polymarket_clob', '    clob_url: https://clob.example.com', '    heartbeat_every_seconds: 6'] }), CREDS)).resolves.toBeDefined();
    const slow = await problemsOf(twoVenues({ venueLines: ['    kind: polymarket_clob', '    clob_url: https://clob.example.com', '    heartbeat_every_seconds: 7'] }), CREDS);
    expect(slow).toEqual([{ path: 'venues.pm.heartbeat_every_seconds', message: expect.stringContaining('at least min_horizon_seconds + one retry'), line: expect.any(Number) }]);
    const renamed = twoVenues().replace('  pm:', '  hyperliquid:').replace('venue: pm', 'venue: hyperliquid');
    expect(paths(await problemsOf(renamed, CREDS))).toContain('venues.hyperliquid');
  });
});

describe('venues with replication', () => {
  it('a CLOB account needs no master key with shard.replication 2 (every instance heartbeats with its credentials)', async () => {
    const text = twoVenues() + '\nshard: { count: 2, replication: 2 }';
    const c = await parse(text, CREDS);
    expect(c.accounts.map((a) => a.venue)).toEqual(['hyperliquid', 'pm']);
  });
});

describe('a CLOB account in the keeper', () => {
  it("a silent bot's cancel_soon is to stop heartbeating, for the switch and the liveness judge alike", async () => {
    const text = twoVenues({ pmAccount: ['    venue: pm', '    clob_credentials: { key: { env: PM_KEY }, secret: { env: PM_SECRET }, passphrase: { env: PM_PASS } }', '    liveness: { heartbeat: { token: { env: BOT_TOKEN } }, on_silence: cancel_soon }'] });
    const env = { ...CREDS, BOT_TOKEN: 'a-heartbeat-token-of-32-chars-xx' };
    const spec = toAppConfig(await parse(text, env), { ...BASE_ENV, ...env }).keeper.accounts.find((a) => a.name === 'p1')!;
    expect(spec.switch.onSilence).toBe('stop_rearming');
    expect(spec.liveness!.onSilence).toBe('stop_rearming');
    expect(spec.clob?.venue).toBe('pm');
    expect(await spec.clob!.credentials.secret()).toBe(CREDS.PM_SECRET);
  });
});
