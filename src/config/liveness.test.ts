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
    expect(short).toEqual([{ path: 'accounts[0].liveness.heartbeat.token.env', message: expect.stringContaining('at least 16'), line: expect.any(Number) }]);
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
