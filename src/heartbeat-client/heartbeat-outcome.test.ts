import { describe, expect, it } from 'vitest';
import { checkOutcome, heartbeatOutcome, isNews, periodTooLong, type Exchange } from './heartbeat-outcome.js';
import { heartbeatEndpoint, HeartbeatUrlError, parseHttpUrl, redactUrl } from './heartbeat-url.js';

const answer = (status: number, body: unknown = ''): Exchange => ({ kind: 'answer', status, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('heartbeatOutcome: what an answer to POST /heartbeat means (docs/liveness.md)', () => {
  it.each([
    ['200 with the silence', answer(200, { status: 'ok', accounts: ['a'], silence_seconds: 5 }), { kind: 'ok', silenceSeconds: 5 }],
    ['200 without a body it understands', answer(200, 'OK'), { kind: 'ok' }],
    ['400 malformed', answer(400, { error: 'malformed', message: 'x' }), { kind: 'refused', status: 400, error: 'malformed' }],
    ['401 unauthorized', answer(401, { error: 'unauthorized' }), { kind: 'refused', status: 401, error: 'unauthorized' }],
    ['404 unknown account, naming it', answer(404, { error: 'unknown_account', accounts: ['nope', 7] }), { kind: 'refused', status: 404, error: 'unknown_account', accounts: ['nope'] }],
    ['404 from something that is not a keeper', answer(404, '<html>'), { kind: 'refused', status: 404, error: 'http_404' }],
    ['405 (no /heartbeat on that listener)', answer(405, { error: 'method not allowed' }), { kind: 'refused', status: 405, error: 'method not allowed' }],
    ['413 too large', answer(413, { error: 'too_large' }), { kind: 'refused', status: 413, error: 'too_large' }],
    ['429 rate limited', answer(429, { error: 'rate_limited', retry_after_seconds: 1 }), { kind: 'failing', reason: 'rate_limited', status: 429 }],
    ['503 (a keeper stopping)', answer(503, ''), { kind: 'failing', reason: 'http_status', status: 503, detail: 'HTTP 503' }],
    ['502 from a proxy', answer(502, { error: 'bad gateway' }), { kind: 'failing', reason: 'http_status', status: 502, detail: 'bad gateway' }],
    ['a 403 from a proxy: retried, not refused', answer(403, ''), { kind: 'failing', reason: 'http_status', status: 403 }],
    ['no answer in time', { kind: 'timeout' } as Exchange, { kind: 'failing', reason: 'timeout' }],
    ['connection refused', { kind: 'network', code: 'ECONNREFUSED' } as Exchange, { kind: 'failing', reason: 'unreachable', detail: 'ECONNREFUSED' }],
  ])('%s', (_, x, want) => {
    expect(heartbeatOutcome(x)).toMatchObject(want);
  });

  it('a silence it cannot use is left out rather than trusted', () => {
    for (const s of [0, -1, 'five', null]) expect(heartbeatOutcome(answer(200, { silence_seconds: s }))).toEqual({ kind: 'ok' });
  });
});

describe('checkOutcome: the bot\'s own health URL', () => {
  it('only a 2xx in time is healthy', () => {
    expect(checkOutcome(answer(204))).toEqual({ healthy: true });
    expect(checkOutcome(answer(500))).toMatchObject({ healthy: false, reason: 'http_status', status: 500 });
    expect(checkOutcome(answer(301))).toMatchObject({ healthy: false, reason: 'http_status' });
    expect(checkOutcome({ kind: 'timeout' })).toMatchObject({ healthy: false, reason: 'timeout' });
    expect(checkOutcome({ kind: 'network', code: 'ECONNREFUSED' })).toMatchObject({ healthy: false, reason: 'unreachable', detail: 'ECONNREFUSED' });
  });
});

describe('isNews: a log line per change of state, not per heartbeat', () => {
  const ok = { heartbeat: { kind: 'ok' as const } };
  const down = { heartbeat: { kind: 'failing' as const, reason: 'unreachable' as const, detail: 'ECONNREFUSED' } };
  const down503 = { heartbeat: { kind: 'failing' as const, reason: 'http_status' as const, status: 503, detail: 'HTTP 503' } };
  const sick = { check: { healthy: false as const, reason: 'http_status' as const, status: 500, detail: 'HTTP 500' } };
  it('ok -> failing -> ok are news; more of the same is not, whatever the reason', () => {
    expect(isNews('starting', ok)).toBe(true);
    expect(isNews('ok', ok)).toBe(false);
    expect(isNews('ok', down)).toBe(true);
    expect(isNews('failing', down503)).toBe(false);
    expect(isNews('failing', ok)).toBe(true);
    expect(isNews('ok', sick)).toBe(true);
    expect(isNews('bot_unhealthy', sick)).toBe(false);
    expect(isNews('bot_unhealthy', down)).toBe(true);
  });
});

describe('periodTooLong: at least two heartbeats per silence', () => {
  it.each([
    [1000, 5, false],
    [2500, 5, false],
    [2501, 5, true],
    [5000, 5, true],
  ])('every %i ms, silence %i s: %s', (everyMs, silence, want) => {
    expect(periodTooLong(everyMs, silence)).toBe(want);
  });
});

describe('heartbeat URLs', () => {
  it('posts to /heartbeat under the base URL, path prefixes included', () => {
    expect(heartbeatEndpoint('http://127.0.0.1:9464')).toBe('http://127.0.0.1:9464/heartbeat');
    expect(heartbeatEndpoint('http://dms-keeper.trading.svc:9464/')).toBe('http://dms-keeper.trading.svc:9464/heartbeat');
    expect(heartbeatEndpoint('https://ops.example.com/keeper/')).toBe('https://ops.example.com/keeper/heartbeat');
  });

  it('refuses what would post to the wrong place', () => {
    for (const bad of ['127.0.0.1:9464', 'ftp://x/', 'http://x:9464/heartbeat', 'http://x:9464/heartbeat/', 'http://x/?a=1', 'http://x/#f', 'not a url']) {
      expect(() => heartbeatEndpoint(bad), bad).toThrow(HeartbeatUrlError);
    }
    expect(() => parseHttpUrl('http://127.0.0.1:8080/healthz', '--check-url')).not.toThrow();
  });

  it('never shows credentials in a URL', () => {
    expect(redactUrl('https://bot:hunter2@proxy.example.com/k')).toBe('https://redacted@proxy.example.com/k');
    expect(redactUrl('http://127.0.0.1:9464')).toBe('http://127.0.0.1:9464/');
    expect(redactUrl('bot:hunter2@nonsense')).not.toContain('hunter2');
    try {
      heartbeatEndpoint('bot:hunter2@ nonsense');
    } catch (e) {
      expect((e as Error).message).not.toContain('hunter2');
    }
  });
});
