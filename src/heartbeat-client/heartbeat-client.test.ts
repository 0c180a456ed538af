import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { runHeartbeats, type HeartbeatClientEvent, type HttpCall, type HttpRequest } from './heartbeat-client.js';

const TOKEN = 'tok-0123456789abcdef';

/** A keeper (and a bot health URL) in memory: answers by URL from a script that tests change as they go. */
function fakeNet() {
  const calls: Array<HttpCall & { atMs: number }> = [];
  let clock: FakeClock | undefined;
  const routes = {
    heartbeat: (): Promise<{ status: number; body: string }> | 'hang' | Error => Promise.resolve({ status: 200, body: JSON.stringify({ status: 'ok', silence_seconds: 5 }) }),
    check: (): Promise<{ status: number; body: string }> | 'hang' | Error => Promise.resolve({ status: 200, body: 'ok' }),
  };
  const request: HttpRequest = (call) => {
    calls.push({ ...call, atMs: clock?.monoMs() ?? 0 });
    const r = call.url.endsWith('/heartbeat') ? routes.heartbeat() : routes.check();
    if (r === 'hang') {
      // Honours the abort, as undici does.
      return new Promise((_, reject) => call.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
    }
    if (r instanceof Error) return Promise.reject(r);
    return r;
  };
  return { calls, routes, request, bind: (c: FakeClock) => (clock = c) };
}

function start(net: ReturnType<typeof fakeNet>, extra: { checkUrl?: string; everyMs?: number; timeoutMs?: number } = {}) {
  const clock = new FakeClock();
  net.bind(clock);
  const events: HeartbeatClientEvent[] = [];
  const run = runHeartbeats({
    url: 'http://127.0.0.1:9464',
    accounts: ['mm-main', 'mm-sub'],
    token: TOKEN,
    everyMs: extra.everyMs ?? 1000,
    timeoutMs: extra.timeoutMs ?? 1000,
    ...(extra.checkUrl ? { checkUrl: extra.checkUrl } : {}),
    clock,
    request: net.request,
    onEvent: (e) => events.push(e),
  });
  return { clock, events, run };
}

const refused = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:9464`), { code });

describe('runHeartbeats', () => {
  it('sends one POST a period naming every account, with the bearer token, and says so once', async () => {
    const net = fakeNet();
    const { clock, events, run } = start(net);
    await clock.advance(4_500);
    const posts = net.calls.filter((c) => c.method === 'POST');
    expect(posts.map((c) => c.atMs - posts[0]!.atMs)).toEqual([0, 1000, 2000, 3000, 4000]);
    for (const p of posts) {
      expect(p.url).toBe('http://127.0.0.1:9464/heartbeat');
      expect(p.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(JSON.parse(p.body!)).toEqual({ accounts: ['mm-main', 'mm-sub'] });
    }
    expect(events).toEqual([{ type: 'ok', url: 'http://127.0.0.1:9464/', accounts: ['mm-main', 'mm-sub'], silenceSeconds: 5, failedPeriods: 0, downMs: 0 }]);
    await run.stop();
    await expect(run.done).resolves.toEqual({ reason: 'stopped' });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps going through a keeper outage (refused, then 503s), with one line down and one line back', async () => {
    const net = fakeNet();
    const { clock, events, run } = start(net);
    await clock.advance(1_500);
    net.routes.heartbeat = () => refused('ECONNREFUSED');
    await clock.advance(3_000);
    net.routes.heartbeat = () => Promise.resolve({ status: 503, body: '' });
    await clock.advance(2_000);
    net.routes.heartbeat = () => Promise.resolve({ status: 200, body: '{"status":"ok","silence_seconds":5}' });
    await clock.advance(1_000);
    expect(events.map((e) => e.type)).toEqual(['ok', 'failing', 'ok']);
    expect(events[1]).toEqual({ type: 'failing', url: 'http://127.0.0.1:9464/', reason: 'unreachable', detail: 'ECONNREFUSED' });
    expect(events[2]).toMatchObject({ type: 'ok', failedPeriods: 5, downMs: 5000 });
    expect(net.calls.length).toBe(8); // t=0..7000: one a period, outage or not
    await run.stop();
  });

  it('a keeper that does not answer: the request is abandoned at the timeout, and periods missed meanwhile are skipped, not caught up', async () => {
    const net = fakeNet();
    net.routes.heartbeat = () => 'hang';
    const { clock, events, run } = start(net, { everyMs: 1000, timeoutMs: 2500 });
    await clock.advance(6_100);
    expect(events).toEqual([{ type: 'failing', url: 'http://127.0.0.1:9464/', reason: 'timeout', detail: 'no answer within the timeout' }]);
    // t=0 (times out at 2500), t=3000 (at 5500), t=6000
    expect(net.calls.map((c) => c.atMs - net.calls[0]!.atMs)).toEqual([0, 3000, 6000]);
    await run.stop();
  });

  it('a refusal (401) is reported with the keeper\'s error and ends the loop', async () => {
    const net = fakeNet();
    net.routes.heartbeat = () => Promise.resolve({ status: 401, body: '{"error":"unauthorized"}' });
    const { clock, events, run } = start(net);
    await clock.advance(3_000);
    expect(events).toEqual([{ type: 'refused', url: 'http://127.0.0.1:9464/', status: 401, error: 'unauthorized' }]);
    await expect(run.done).resolves.toEqual({ reason: 'refused', status: 401, error: 'unauthorized' });
    expect(net.calls.length).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
    await run.stop(); // still fine after the loop ended by itself
  });

  it('404 names the accounts the keeper does not watch', async () => {
    const net = fakeNet();
    net.routes.heartbeat = () => Promise.resolve({ status: 404, body: '{"error":"unknown_account","accounts":["mm-sub"]}' });
    const { clock, run } = start(net);
    await clock.advance(10);
    await expect(run.done).resolves.toEqual({ reason: 'refused', status: 404, error: 'unknown_account', accounts: ['mm-sub'] });
  });

  it('with a check URL: GET it first; no heartbeat while it fails (the keeper must see silence), and back when it passes', async () => {
    const net = fakeNet();
    const { clock, events, run } = start(net, { checkUrl: 'http://127.0.0.1:8080/healthz' });
    await clock.advance(1_500); // two healthy periods
    net.routes.check = () => Promise.resolve({ status: 500, body: 'sick' });
    await clock.advance(3_000);
    net.routes.check = () => 'hang'; // a hung bot: still no heartbeat
    await clock.advance(2_000);
    net.routes.check = () => Promise.resolve({ status: 200, body: '' });
    await clock.advance(1_000);
    const kinds = net.calls.map((c) => (c.method === 'GET' ? 'check' : 'beat'));
    // The hung check (t=5000) times out at t=6000, so that period's slot passes: the next is t=7000.
    expect(kinds).toEqual(['check', 'beat', 'check', 'beat', 'check', 'check', 'check', 'check', 'check', 'beat']);
    expect(net.calls.find((c) => c.method === 'GET')!.headers.authorization).toBeUndefined(); // the token goes to the keeper only
    expect(events.map((e) => e.type)).toEqual(['ok', 'bot_unhealthy', 'ok']);
    expect(events[1]).toEqual({ type: 'bot_unhealthy', checkUrl: 'http://127.0.0.1:8080/healthz', reason: 'http_status', status: 500, detail: 'HTTP 500' });
    await run.stop();
  });

  it('says once when the period is too long for the keeper\'s silence', async () => {
    const net = fakeNet();
    const { clock, events, run } = start(net, { everyMs: 3000 });
    await clock.advance(9_000);
    expect(events.filter((e) => e.type === 'period_too_long')).toEqual([{ type: 'period_too_long', url: 'http://127.0.0.1:9464/', everyMs: 3000, silenceSeconds: 5 }]);
    await run.stop();
  });

  it('stop() aborts a request in flight, reports nothing more and leaves no timer', async () => {
    const net = fakeNet();
    net.routes.heartbeat = () => 'hang';
    const { clock, events, run } = start(net, { timeoutMs: 60_000 });
    await clock.advance(100);
    const stopped = run.stop();
    expect(run.stop()).toBe(stopped);
    await stopped;
    await clock.advance(120_000);
    expect(events).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('never puts the token in an event, a URL\'s credentials neither', async () => {
    const net = fakeNet();
    const clock = new FakeClock();
    net.bind(clock);
    const events: HeartbeatClientEvent[] = [];
    net.routes.heartbeat = () => refused('ECONNRESET');
    const run = runHeartbeats({ url: 'https://bot:pw-secret@proxy.example.com/k', accounts: ['a'], token: { reveal: () => TOKEN }, everyMs: 1000, timeoutMs: 500, clock, request: net.request, onEvent: (e) => events.push(e) });
    await clock.advance(10);
    await run.stop();
    const text = JSON.stringify(events);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('pw-secret');
    expect(net.calls[0]!.url).toBe('https://bot:pw-secret@proxy.example.com/k/heartbeat');
  });

  it('refuses options it cannot run with', () => {
    const base = { url: 'http://127.0.0.1:9464', token: TOKEN, everyMs: 1000, timeoutMs: 1000, clock: new FakeClock(), onEvent: () => undefined };
    expect(() => runHeartbeats({ ...base, accounts: [] })).toThrow(/at least one account/);
    expect(() => runHeartbeats({ ...base, accounts: ['a'], everyMs: 0 })).toThrow(/positive/);
    expect(() => runHeartbeats({ ...base, accounts: ['a'], url: 'http://x/heartbeat' })).toThrow(/without \/heartbeat/);
  });
});
