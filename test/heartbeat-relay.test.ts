/**
 * The heartbeat relay on a real Redis (docs/liveness.md, "Fleets"): two instances, shards 0 and 1
 * of 2, each its BotLiveness and relay on the bus the daemon builds (app/heartbeat-bus.ts), share
 * one redis-server. Liveness runs in virtual time (one FakeClock); Redis delivers in real time, so
 * each step waits for the delivery before virtual time moves on. Skips, loudly, without a
 * redis-server (CI never does: `REDIS_SERVER=$(bash .ci/checks/redis.sh | tail -n1)`).
 */
import { pino } from 'pino';
import { slotsByName } from '../src/liveness/test-support.js';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHeartbeatBus } from '../src/app/heartbeat-bus.js';
import { newRedisClient } from '../src/app/shared-redis.js';
import { BotLiveness } from '../src/liveness/bot-liveness.js';
import { HeartbeatRelay } from '../src/liveness/heartbeat-relay.js';
import { relayChannel } from '../src/liveness/relay.js';
import { createMetrics, type KeeperMetrics } from '../src/obs/metrics.js';
import { FakeClock } from '../src/time/fake-clock.js';
import { findRedisServer, noRedisMessage, startRedis, type TestRedis } from './support/redis.js';

const binary = findRedisServer();
if (!binary) process.stderr.write(noRedisMessage());

const TOKEN_A = 'bot-a-token-0123456789';
const TOKEN_B = 'bot-b-token-0123456789';
const SILENCE_MS = 5_000;
const CHANNEL = relayChannel('relay-test');
const quiet = pino({ level: 'silent' });

let redis: TestRedis | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
  await redis?.stop();
  redis = undefined;
});

async function until(cond: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function counter(m: KeeperMetrics, series: string): Promise<number> {
  const line = (await m.registry.metrics()).split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

/** One instance of the fleet, as the keeper composes it (keeper.ts), on its own two Redis connections. */
async function instance(url: string, clock: FakeClock, own: Record<string, string>, foreign: Record<string, string>) {
  const metrics = createMetrics({ version: 't', defaultMetrics: false });
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const bus = connectHeartbeatBus(url, undefined, CHANNEL);
  // eslint-disable-next-line prefer-const -- the relay and the liveness refer to each other
  let bots: BotLiveness;
  const relay = new HeartbeatRelay({ bus, clock, metrics, logger, clockAllowanceMs: () => 2_000, silenceOf: (a) => bots.heartbeatSilenceMs(a), apply: (a, ago) => bots.relayedHeartbeat(a, ago) });
  bots = new BotLiveness({ slot: slotsByName(), clock, metrics, logger, foreign: relay });
  for (const [name, token] of Object.entries(own)) await bots.configure(name, { silenceMs: SILENCE_MS, onSilence: 'cancel_soon', heartbeat: { token: async () => token } }, quiet);
  await relay.configure(Object.entries(foreign).map(([name, token]) => ({ name, silenceMs: SILENCE_MS, token: async () => token })));
  relay.start();
  cleanups.push(() => {
    relay.stop();
    bots.stop();
    bus.close();
  });
  const beat = (names: string[], token: string) => bots.heartbeat({ authorization: `Bearer ${token}`, body: JSON.stringify({ accounts: names }) });
  return { bots, bus, metrics, logs, beat };
}

describe.skipIf(!binary && !process.env.CI)('the heartbeat relay on a real Redis', () => {
  it("shard 1's bot heartbeating only to shard 0 stays alive past its silence; silent once it stops", async () => {
    redis = await startRedis(binary ? { binary } : {});
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
    const i0 = await instance(redis.url, clock, { a0: TOKEN_A }, { b1: TOKEN_B });
    const i1 = await instance(redis.url, clock, { b1: TOKEN_B }, { a0: TOKEN_A });
    await until(() => i0.bus.up() && i1.bus.up());

    for (let t = 1; t <= 12; t++) {
      expect(i0.beat(['b1'], TOKEN_B)).toMatchObject({ status: 200, body: { relayed: ['b1'] } });
      await until(async () => (await counter(i1.metrics, 'dms_keeper_heartbeats_relayed_total{direction="in"}')) === t);
      await clock.advance(1_000);
    }
    // 12 s of virtual time, more than twice the silence: alive on the heartbeats shard 0 relayed.
    expect(i1.bots.view('b1')).toMatchObject({ state: 'alive' });
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_relayed_total{direction="out"}')).toBe(12);
    expect(i0.bots.view('b1')).toBeNull();
    // Connecting at start is not an outage.
    expect([...i0.logs, ...i1.logs].filter((l) => l.event === 'heartbeat_relay_down')).toEqual([]);
    await clock.advance(SILENCE_MS);
    expect(i1.bots.alive('b1')).toBe(false);
  });

  it('a wrong token is refused by shard 0 and nothing reaches the channel', async () => {
    redis = await startRedis(binary ? { binary } : {});
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
    const i0 = await instance(redis.url, clock, { a0: TOKEN_A }, { b1: TOKEN_B });
    const i1 = await instance(redis.url, clock, { b1: TOKEN_B }, { a0: TOKEN_A });
    // A listener of its own on the channel: it hears whatever is published.
    const spy = newRedisClient(redis.url);
    cleanups.push(() => spy.disconnect());
    const heard: string[] = [];
    spy.on('message', (_ch: string, m: string) => heard.push(m));
    await until(() => spy.status === 'ready');
    await spy.subscribe(CHANNEL);
    await until(() => i0.bus.up() && i1.bus.up());

    expect(i0.beat(['b1'], TOKEN_A)).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(i0.beat(['a0', 'b1'], TOKEN_A).status).toBe(401);
    // A valid one afterwards is heard: had the refused ones been published, they would have come first.
    expect(i0.beat(['b1'], TOKEN_B).status).toBe(200);
    await until(() => heard.length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toHaveLength(1);
    expect(JSON.parse(heard[0]!)).toEqual({ account: 'b1', heard_at: clock.nowMs() });
    expect(heard[0]).not.toContain(TOKEN_B);
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_refused_total{reason="unauthorized"}')).toBe(2);
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_relayed_total{direction="out"}')).toBe(1);
    expect(i0.bots.view('a0')!.last_seen).toBeNull();
  });

  it('Redis killed: foreign heartbeats get 503 relay_unavailable, local ones count, one log line; Redis back: relayed again', async () => {
    redis = await startRedis(binary ? { binary } : {});
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
    const i0 = await instance(redis.url, clock, { a0: TOKEN_A }, { b1: TOKEN_B });
    const i1 = await instance(redis.url, clock, { b1: TOKEN_B }, { a0: TOKEN_A });
    await until(() => i0.bus.up() && i1.bus.up());

    await redis.kill();
    await until(() => !i0.bus.up());
    for (let t = 0; t < 3; t++) {
      expect(i0.beat(['b1'], TOKEN_B)).toMatchObject({ status: 503, body: { error: 'relay_unavailable', accounts: ['b1'] } });
      expect(i0.beat(['a0'], TOKEN_A).status).toBe(200);
      await new Promise((r) => setTimeout(r, 150)); // reconnection attempts come and fail meanwhile
    }
    expect(i0.logs.filter((l) => l.event === 'heartbeat_relay_down')).toHaveLength(1);
    expect(await counter(i0.metrics, 'dms_keeper_heartbeats_refused_total{reason="relay_unavailable"}')).toBe(3);

    await redis.restart();
    await until(() => i0.bus.up() && i1.bus.up(), 10_000);
    expect(i0.logs.filter((l) => l.event === 'heartbeat_relay_up')).toHaveLength(1);
    expect(i0.beat(['b1'], TOKEN_B).status).toBe(200);
    // The subscriber subscribed again after the restart: the heartbeat arrives.
    await until(async () => (await counter(i1.metrics, 'dms_keeper_heartbeats_relayed_total{direction="in"}')) === 1);
    expect(i1.bots.view('b1')).toMatchObject({ state: 'alive' });
  }, 30_000);
});
