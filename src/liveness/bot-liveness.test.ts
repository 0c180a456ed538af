import { pino } from 'pino';
import { slotsByName } from './test-support.js';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../obs/metrics.js';
import { FakeClock } from '../time/fake-clock.js';
import { BotLiveness, type ProbeFn } from './bot-liveness.js';
import type { LivenessSpec } from './liveness.js';

const TOKEN = 'a-bot-token-0123456789';
const log = pino({ level: 'silent' });

function setup(probe?: ProbeFn) {
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
  const metrics = createMetrics({ version: 't', defaultMetrics: false });
  const changes: Array<[string, boolean, number]> = [];
  const bots = new BotLiveness({ slot: slotsByName((a, alive) => changes.push([a, alive, clock.monoMs()])), clock, metrics, logger: log, ...(probe ? { probe } : {}) });
  const beat = (names: string[]) => bots.heartbeat({ authorization: `Bearer ${TOKEN}`, body: JSON.stringify({ accounts: names }) });
  return { clock, metrics, bots, changes, beat, t0: clock.monoMs() };
}

const heartbeat = (silenceMs = 5_000): LivenessSpec => ({ silenceMs, onSilence: 'cancel_soon', heartbeat: { token: async () => TOKEN } });

describe('BotLiveness', () => {
  it('a replicated account (echo): its heartbeats are applied here and published for the other replica; without echo, not published', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
    const published: string[][] = [];
    const bots = new BotLiveness({ slot: slotsByName(),
      clock,
      metrics: createMetrics({ version: 't', defaultMetrics: false }),
      logger: log,
      foreign: { target: () => undefined, counted: () => undefined, relay: (accounts) => (published.push([...accounts]), true) },
    });
    await bots.configure('r', { ...heartbeat(), echo: true }, log);
    await bots.configure('p', heartbeat(), log);
    const beat = (names: string[]) => bots.heartbeat({ authorization: `Bearer ${TOKEN}`, body: JSON.stringify({ accounts: names }) });
    expect(beat(['r', 'p']).status).toBe(200);
    expect(published).toEqual([['r']]);
    expect(bots.view('r')!.state).toBe('alive');
    bots.stop();
  });

  it('a bot falls silent exactly silence_ms after its last heartbeat, however many heartbeats came before; back on the next one', async () => {
    const s = setup();
    await s.bots.configure('a', heartbeat(), log);
    for (let i = 0; i < 20; i++) {
      expect(s.beat(['a']).status).toBe(200);
      await s.clock.advance(300);
    }
    const last = s.clock.monoMs() - 300;
    await s.clock.advance(4_000);
    expect(s.bots.alive('a')).toBe(true);
    await s.clock.advance(1_000);
    expect(s.changes).toEqual([['a', false, last + 5_000]]);
    expect(s.bots.view('a')!.state).toBe('silent');
    s.beat(['a']);
    expect(s.changes.at(-1)).toEqual(['a', true, s.clock.monoMs()]);
    expect(s.bots.view('a')!.state).toBe('alive');
    s.bots.stop();
  });

  it('a bot never heard from is waiting for one silence period, then silent', async () => {
    const s = setup();
    await s.bots.configure('a', heartbeat(), log);
    expect(s.bots.view('a')).toMatchObject({ state: 'waiting', last_seen: null, liveness: 'heartbeat', silence_seconds: 5, on_silence: 'cancel_soon' });
    await s.clock.advance(4_999);
    expect(s.bots.alive('a')).toBe(true);
    await s.clock.advance(1);
    expect(s.bots.alive('a')).toBe(false);
    s.bots.stop();
  });

  it('a reload keeps what was seen of a bot; forget drops it and its series', async () => {
    const s = setup();
    await s.bots.configure('a', heartbeat(), log);
    s.beat(['a']);
    await s.clock.advance(3_000);
    await s.bots.configure('a', heartbeat(10_000), log); // the silence grows on reload
    await s.clock.advance(5_000);
    expect(s.bots.alive('a')).toBe(true); // 8 s since the heartbeat: within the new 10 s
    await s.clock.advance(2_000);
    expect(s.bots.alive('a')).toBe(false);
    s.bots.forget('a');
    expect(s.bots.view('a')).toBeNull();
    expect(s.bots.alive('a')).toBe(true); // no liveness: never judged
    expect(await s.metrics.registry.metrics()).not.toContain('dms_keeper_bot_alive{account="a"}');
    s.bots.stop();
  });

  it('one probe per URL and period for every account naming it; 2xx is alive, anything else and a hang are not', async () => {
    let answer: 'ok' | 'fail' | 'hang' = 'ok';
    const urls: string[] = [];
    const s = setup((url, signal) => {
      urls.push(url);
      if (answer === 'ok') return Promise.resolve(204);
      if (answer === 'fail') return Promise.resolve(503);
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    });
    const probe: LivenessSpec = { silenceMs: 3_500, onSilence: 'stop_rearming', probe: { url: 'http://bot/healthz', everyMs: 1_000, timeoutMs: 500 } };
    await s.bots.configure('a', probe, log);
    await s.bots.configure('b', probe, log);
    await s.clock.advance(10_000);
    expect(urls.length).toBeGreaterThanOrEqual(10);
    expect(urls.length).toBeLessThanOrEqual(11); // one a second, not one per account
    expect(s.bots.view('a')!.state).toBe('alive');
    answer = 'fail';
    await s.clock.advance(4_000);
    expect(s.changes.map(([a, alive]) => [a, alive])).toEqual([
      ['a', false],
      ['b', false],
    ]);
    answer = 'ok';
    await s.clock.advance(1_000);
    expect(s.bots.alive('a') && s.bots.alive('b')).toBe(true);
    answer = 'hang';
    await s.clock.advance(4_000);
    expect(s.bots.alive('a')).toBe(false);
    const text = await s.metrics.registry.metrics();
    expect(text).toMatch(/dms_keeper_bot_probes_total\{account="a",result="timeout"\} [3-9]/);
    expect(text).toMatch(/dms_keeper_bot_probes_total\{account="a",result="http_status"\} [3-9]/);
    s.bots.stop();
  });

  it('a token that cannot be read refuses every heartbeat for its account, loudly, and the keeper goes on', async () => {
    const s = setup();
    await s.bots.configure('a', { silenceMs: 5_000, onSilence: 'cancel_soon', heartbeat: { token: async () => Promise.reject(new Error('gone')) } }, log);
    expect(s.beat(['a'])).toMatchObject({ status: 401 });
    expect(s.bots.heartbeat({ authorization: 'Bearer ', body: '{"accounts":["a"]}' })).toMatchObject({ status: 401 });
    s.bots.stop();
  });
});
