import { describe, expect, it } from 'vitest';
import { bearerToken, checkHeartbeat, countHeartbeat, HEARTBEAT_MAX_PER_SECOND, judge, parseHeartbeatBody, probeResultOf, silentAtMs, tokenDigest, tokenMatches, type HeartbeatTarget } from './liveness.js';

const spec = { silenceMs: 5_000 };

describe('judge', () => {
  it('a bot not heard from since the start is waiting for one silence period, then silent', () => {
    const rec = { lastSeenMonoMs: null, judgingSinceMonoMs: 1_000 };
    expect(judge(spec, rec, 1_000)).toBe('waiting');
    expect(judge(spec, rec, 5_999)).toBe('waiting');
    expect(judge(spec, rec, 6_000)).toBe('silent');
    expect(silentAtMs(spec, rec)).toBe(6_000);
  });

  it('alive until silence_seconds after the last sighting, silent from then on', () => {
    const rec = { lastSeenMonoMs: 10_000, judgingSinceMonoMs: 1_000 };
    expect(judge(spec, rec, 14_999)).toBe('alive');
    expect(judge(spec, rec, 15_000)).toBe('silent');
  });
});

describe('heartbeat requests', () => {
  const digest = tokenDigest('the-right-token-0123456789');
  const fresh = (): HeartbeatTarget => ({ digest, window: { startMs: -Infinity, count: 0 }, silenceMs: 5_000 });
  const targets: Record<string, HeartbeatTarget> = { a: fresh(), b: { ...fresh(), silenceMs: 3_000 }, c: { ...fresh(), digest: tokenDigest('another-token-0123456789') } };
  const lookup = (n: string) => targets[n];
  const ask = (names: unknown, auth = 'Bearer the-right-token-0123456789') => checkHeartbeat({ authorization: auth, body: JSON.stringify(names) }, lookup, 0);

  it('accepts a request naming accounts of its token, with the shortest silence', () => {
    expect(ask({ accounts: ['a', 'b'] })).toEqual({ ok: true, accounts: ['a', 'b'], silenceMs: 3_000 });
  });

  it('refuses, all or nothing: a wrong or missing token, an unknown name, a name of another token', () => {
    expect(ask({ accounts: ['a'] }, 'Bearer wrong')).toMatchObject({ ok: false, status: 401, reason: 'unauthorized' });
    expect(ask({ accounts: ['a'] }, 'Basic dXNlcjpwYXNz')).toMatchObject({ ok: false, status: 401 });
    expect(checkHeartbeat({ authorization: undefined, body: '{"accounts":["a"]}' }, lookup, 0)).toMatchObject({ ok: false, status: 401 });
    expect(ask({ accounts: ['a', 'c'] })).toMatchObject({ ok: false, status: 401 });
    expect(ask({ accounts: ['a', 'zz'] })).toMatchObject({ ok: false, status: 404, body: { error: 'unknown_account', accounts: ['zz'] } });
  });

  it('refuses malformed bodies with a message that does not echo them', () => {
    for (const body of ['', 'null', '[]', '{"accounts":[]}', '{"accounts":"a"}', '{"accounts":[1]}', '{"accounts":["a","a"]}', JSON.stringify({ accounts: Array.from({ length: 257 }, (_, i) => `x${i}`) })]) {
      const r = checkHeartbeat({ authorization: 'Bearer the-right-token-0123456789', body }, lookup, 0);
      expect(r).toMatchObject({ ok: false, status: 400, reason: 'malformed' });
    }
    expect(parseHeartbeatBody('{"accounts":["secret-looking"]')).toEqual({ problem: expect.not.stringContaining('secret') });
  });

  it('refuses more than the per-second rate of one account', () => {
    let w = { startMs: -Infinity, count: 0 };
    for (let i = 0; i < HEARTBEAT_MAX_PER_SECOND; i++) w = countHeartbeat(w, 100);
    const over = checkHeartbeat({ authorization: 'Bearer the-right-token-0123456789', body: '{"accounts":["a"]}' }, (n) => (n === 'a' ? { ...fresh(), window: w } : undefined), 500);
    expect(over).toMatchObject({ ok: false, status: 429, reason: 'rate_limited' });
    const nextSecond = checkHeartbeat({ authorization: 'Bearer the-right-token-0123456789', body: '{"accounts":["a"]}' }, (n) => (n === 'a' ? { ...fresh(), window: w } : undefined), 1_100);
    expect(nextSecond).toMatchObject({ ok: true });
  });

  it('bearer tokens and digests', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
    expect(tokenMatches(tokenDigest('x'), tokenDigest('x'))).toBe(true);
    expect(tokenMatches(tokenDigest('x'), tokenDigest('y'))).toBe(false);
    expect(tokenMatches(Buffer.alloc(3), tokenDigest('y'))).toBe(false);
  });

  it('a probe is alive on 2xx only', () => {
    expect([200, 204, 299, 301, 404, 500].map(probeResultOf)).toEqual(['ok', 'ok', 'ok', 'http_status', 'http_status', 'http_status']);
  });
});
