/**
 * The heartbeat relay between two instances (shards 0 and 1 of a fleet) over an in-memory bus, in
 * virtual time: a heartbeat reaching the wrong instance keeps the right one's bot alive; a wrong
 * token, an unknown account and a bus that is down answer as docs/liveness.md says. The same over a
 * real Redis: test/heartbeat-relay.test.ts.
 */
import { pino } from 'pino';
import { slotsByName } from './test-support.js';
import { describe, expect, it } from 'vitest';
import { createMetrics, type KeeperMetrics } from '../obs/metrics.js';
import { FakeClock } from '../time/fake-clock.js';
import { BotLiveness } from './bot-liveness.js';
import { HeartbeatRelay, type ForeignAccountSpec, type HeartbeatBus } from './heartbeat-relay.js';
import type { LivenessSpec } from './liveness.js';
import { formatRelayed } from './relay.js';

const TOKEN_A = 'bot-a-token-0123456789';
const TOKEN_B = 'bot-b-token-0123456789';
const SILENCE_MS = 5_000;
const quiet = pino({ level: 'silent' });

/** One channel: every started instance hears every message, synchronously. */
function memoryNet() {
  const handlers: Array<Parameters<HeartbeatBus['start']>[0]> = [];
  const net = {
    up: true,
    published: [] as string[],
    setUp(up: boolean) {
      net.up = up;
      for (const h of handlers) h.onState(up, up ? 'ready' : 'connection lost');
    },
    bus(): HeartbeatBus {
      return {
        up: () => net.up,
        publish: (m) => {
          if (!net.up) return;
          net.published.push(m);
          for (const h of handlers) h.onMessage(m);
        },
        start: (h) => handlers.push(h),
      };
    },
  };
  return net;
}

const spec = (token: string): LivenessSpec => ({ silenceMs: SILENCE_MS, onSilence: 'cancel_soon', heartbeat: { token: async () => token } });
const foreignSpec = (name: string, token: string): ForeignAccountSpec => ({ name, silenceMs: SILENCE_MS, token: async () => token });

interface Instance {
  bots: BotLiveness;
  relay?: HeartbeatRelay;
  metrics: KeeperMetrics;
  logs: Array<Record<string, unknown>>;
  beat(names: string[], token: string): ReturnType<BotLiveness['heartbeat']>;
}

/** One instance: its own accounts, the other shard's (relayed), on a bus or without one. */
async function instance(clock: FakeClock, own: Record<string, string>, foreign: Record<string, string>, bus?: HeartbeatBus): Promise<Instance> {
  const metrics = createMetrics({ version: 't', defaultMetrics: false });
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  // eslint-disable-next-line prefer-const -- the relay and the liveness refer to each other
  let bots: BotLiveness;
  const relay = bus
    ? new HeartbeatRelay({ bus, clock, metrics, logger, clockAllowanceMs: () => 2_000, silenceOf: (a) => bots.heartbeatSilenceMs(a), apply: (a, ago) => bots.relayedHeartbeat(a, ago) })
    : undefined;
  bots = new BotLiveness({ slot: slotsByName(), clock, metrics, logger, ...(relay ? { foreign: relay } : {}) });
  for (const [name, token] of Object.entries(own)) await bots.configure(name, spec(token), quiet);
  await relay?.configure(Object.entries(foreign).map(([n, t]) => foreignSpec(n, t)));
  relay?.start();
  return { bots, ...(relay ? { relay } : {}), metrics, logs, beat: (names, token) => bots.heartbeat({ authorization: `Bearer ${token}`, body: JSON.stringify({ accounts: names }) }) };
}

async function counter(m: KeeperMetrics, series: string): Promise<number | undefined> {
  const text = await m.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

/** Shard 0 holds `a0` (bot A), shard 1 holds `b1` (bot B) and `a1` (bot A). */
async function fleet() {
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
  const net = memoryNet();
  const i0 = await instance(clock, { a0: TOKEN_A }, { b1: TOKEN_B, a1: TOKEN_A }, net.bus());
  const i1 = await instance(clock, { b1: TOKEN_B, a1: TOKEN_A }, { a0: TOKEN_A }, net.bus());
  return { clock, net, i0, i1 };
}

describe('HeartbeatRelay', () => {
  it("a heartbeat for shard 1's account sent to shard 0 keeps shard 1's bot alive past its silence", async () => {
    const { clock, net, i0, i1 } = await fleet();
    for (let t = 0; t < 12; t++) {
      const r = i0.beat(['b1'], TOKEN_B);
      expect(r).toMatchObject({ status: 200, body: { status: 'ok', accounts: ['b1'], relayed: ['b1'], silence_seconds: 5 } });
      await clock.advance(1_000);
    }
    expect(i1.bots.view('b1')!.state).toBe('alive');
    expect(net.published.map((m) => JSON.parse(m) as unknown)[0]).toEqual({ account: 'b1', heard_at: expect.any(Number) as number });
    expect(net.published.every((m) => !m.includes(TOKEN_B))).toBe(true);
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_relayed_total{direction="out"}')).toBe(12);
    expect(await counter(i1.metrics, 'dms_keeper_heartbeats_relayed_total{direction="in"}')).toBe(12);
    expect(await counter(i1.metrics, 'dms_keeper_heartbeats_total{account="b1"}')).toBe(12);
    // Silent from the last one: the relay keeps exactly the local silence timer.
    await clock.advance(SILENCE_MS - 1_000 - 1);
    expect(i1.bots.alive('b1')).toBe(true);
    await clock.advance(1);
    expect(i1.bots.alive('b1')).toBe(false);
    i0.bots.stop();
    i1.bots.stop();
  });

  it('a heartbeat naming accounts of both shards is applied here and relayed there', async () => {
    const { clock, i0, i1 } = await fleet();
    await clock.advance(4_000);
    expect(i0.beat(['a0', 'a1'], TOKEN_A)).toMatchObject({ status: 200, body: { accounts: ['a0', 'a1'], relayed: ['a1'] } });
    await clock.advance(4_000); // 8 s after the start: past the start-up grace
    expect(i0.bots.view('a0')!.state).toBe('alive');
    expect(i1.bots.view('a1')!.state).toBe('alive');
    expect(i1.bots.alive('b1')).toBe(false);
    i0.bots.stop();
    i1.bots.stop();
  });

  it('a wrong token is refused by the receiving instance and nothing is published', async () => {
    const { net, i0 } = await fleet();
    expect(i0.beat(['b1'], TOKEN_A)).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    // All or nothing: a token good for one named account revives none when wrong for another.
    expect(i0.beat(['a0', 'b1'], TOKEN_A).status).toBe(401);
    expect(net.published).toEqual([]);
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_refused_total{reason="unauthorized"}')).toBe(2);
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_relayed_total{direction="out"}')).toBe(0);
    expect(i0.bots.view('a0')!.last_seen).toBeNull();
    i0.bots.stop();
  });

  it('an account no shard holds is still unknown (404)', async () => {
    const { net, i0 } = await fleet();
    expect(i0.beat(['b1', 'nobody'], TOKEN_B)).toMatchObject({ status: 404, body: { error: 'unknown_account', accounts: ['nobody'] } });
    expect(net.published).toEqual([]);
    i0.bots.stop();
  });

  it('without a relay another shard\'s account is unknown, as before', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
    const i0 = await instance(clock, { a0: TOKEN_A }, {});
    expect(i0.beat(['b1'], TOKEN_B)).toMatchObject({ status: 404, body: { error: 'unknown_account', accounts: ['b1'] } });
    i0.bots.stop();
  });

  it('Redis down: foreign heartbeats get a retryable 503, this shard\'s still count, one log line per outage', async () => {
    const { clock, net, i0 } = await fleet();
    net.setUp(false);
    for (let t = 0; t < 5; t++) {
      const r = i0.beat(['a0', 'a1'], TOKEN_A);
      expect(r).toMatchObject({ status: 503, body: { error: 'relay_unavailable', accounts: ['a1'], applied: ['a0'], retry_after_seconds: 1 }, headers: { 'retry-after': '1' } });
      await clock.advance(1_000);
    }
    expect(i0.beat(['a0'], TOKEN_A).status).toBe(200);
    await clock.advance(3_000);
    expect(i0.bots.view('a0')!.state).toBe('alive');
    expect(net.published).toEqual([]);
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_refused_total{reason="relay_unavailable"}')).toBe(5);
    expect(i0.logs.filter((l) => l.event === 'heartbeat_relay_down')).toHaveLength(1);
    net.setUp(true);
    expect(i0.beat(['a1'], TOKEN_A).status).toBe(200);
    expect(i0.logs.filter((l) => l.event === 'heartbeat_relay_up')).toHaveLength(1);
    net.setUp(false);
    expect(i0.logs.filter((l) => l.event === 'heartbeat_relay_down')).toHaveLength(2);
    i0.bots.stop();
  });

  it('a relayed heartbeat a silence period old never revives a silent bot; a fresher one counts from when it was heard', async () => {
    const { clock, net, i1 } = await fleet();
    await clock.advance(SILENCE_MS);
    expect(i1.bots.alive('b1')).toBe(false);
    const publish = (heardAtMs: number) => net.bus().publish(formatRelayed({ account: 'b1', heardAtMs }));
    publish(clock.nowMs() - SILENCE_MS);
    expect(i1.bots.alive('b1')).toBe(false);
    expect(i1.logs.filter((l) => l.event === 'relayed_heartbeat_ignored')).toMatchObject([{ why: 'stale', account: 'b1' }]);
    // Heard 3 s ago by the other instance: alive, and silent 2 s from now.
    publish(clock.nowMs() - 3_000);
    expect(i1.bots.alive('b1')).toBe(true);
    await clock.advance(1_999);
    expect(i1.bots.alive('b1')).toBe(true);
    await clock.advance(1);
    expect(i1.bots.alive('b1')).toBe(false);
    // Stamped further ahead than the clocks may differ: not applied.
    publish(clock.nowMs() + 10_000);
    expect(i1.bots.alive('b1')).toBe(false);
    i1.bots.stop();
  });

  it("relayed heartbeats for accounts this instance does not hold, and garbage, are ignored", async () => {
    const { clock, net, i0 } = await fleet();
    net.bus().publish(formatRelayed({ account: 'b1', heardAtMs: clock.nowMs() }));
    net.bus().publish('not json');
    expect(i0.bots.view('b1')).toBeNull();
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_relayed_total{direction="in"}')).toBe(0);
    i0.bots.stop();
  });

  it("a foreign account's rate limit is kept where the heartbeat lands", async () => {
    const { net, i0 } = await fleet();
    for (let i = 0; i < 20; i++) expect(i0.beat(['b1'], TOKEN_B).status).toBe(200);
    expect(i0.beat(['b1'], TOKEN_B).status).toBe(429);
    expect(net.published).toHaveLength(20);
    i0.bots.stop();
  });
});
