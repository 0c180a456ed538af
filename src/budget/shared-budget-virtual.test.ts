/**
 * SharedBudget's own logic in virtual time: the demand exchange's period, the demand view going
 * stale, the fallback on a Redis error and the resume retried RESUME_RETRY_MS later, token waits
 * timing out. A FakeClock, a fake Redis client with just what SharedBudget calls, and fake buckets
 * in place of Bottleneck's (whose bucket runs on real time against a real Redis:
 * shared-budget.test.ts).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WindowSpec } from './admission.js';
import { FakeClock } from '../time/fake-clock.js';
import { ShedError } from './scheduler.js';
import { SharedBudget, type SharedBucket, type SharedBuckets, type SharedRedisClient } from './shared-budget.js';
import { bucketWindow, DEMAND_PUBLISH_PERIOD_MS, DEMAND_TTL_MS, RESUME_RETRY_MS, shareOf, type BudgetMode } from './shared-share.js';

/** The demand hash as the exchange script keeps it, on a Redis clock that is the fake clock's wall time. */
class FakeRedis extends EventEmitter implements SharedRedisClient {
  status = 'ready';
  /** The exchange's eval fails while set (Redis slow or failing, the connection still up). */
  failing = false;
  readonly demands = new Map<string, string>();
  evals = 0;
  constructor(private readonly clock: FakeClock) {
    super();
  }
  async eval(_script: string, _keys: number, _key: string, id: string, demand: string, ttlMs: string): Promise<unknown> {
    this.evals++;
    if (this.failing) throw new Error('Command timed out');
    const now = this.clock.nowMs();
    this.demands.set(id, `${now} ${demand}`);
    const live = [...this.demands].filter(([, v]) => now - Number(v.split(' ')[0]) <= Number(ttlMs));
    return [String(now), ...live.flat()];
  }
  async hdel(_key: string, field: string): Promise<number> {
    return this.demands.delete(field) ? 1 : 0;
  }
  disconnect(): void {
    this.status = 'end';
  }
}

/** Buckets that give every token at once, or none while `starved`. */
class FakeBuckets implements SharedBuckets {
  starved = false;
  opened: string[] = [];
  stopped = 0;
  errors: Array<(e: unknown) => void> = [];
  open(id: string, _r: unknown, _h: number, onError: (e: unknown) => void): SharedBucket {
    this.opened.push(id);
    this.errors.push(onError);
    return {
      take: () => (this.starved ? new Promise<void>(() => undefined) : Promise.resolve()),
      stop: async () => {
        this.stopped++;
      },
    };
  }
  onError(): void {}
  async close(): Promise<void> {}
}

const SPEC: WindowSpec = { limit: 40, windowMs: 2_000 };

function instance(opts: { connected?: boolean } = {}) {
  const clock = new FakeClock();
  const redis = new FakeRedis(clock);
  redis.status = opts.connected === false ? 'connecting' : 'ready';
  const buckets = new FakeBuckets();
  const local: WindowSpec[] = [];
  const modes: Array<[BudgetMode, string]> = [];
  const misses: Array<[string, string]> = [];
  const b = new SharedBudget({
    redis,
    buckets,
    clock,
    name: 'virtual',
    specs: { global: SPEC },
    fallbackShare: 0.5,
    setLocalSpec: (_s, spec) => local.push(spec),
    onModeChange: (m, reason) => modes.push([m, reason]),
    onMiss: (miss, cls) => misses.push([miss, cls]),
  });
  return { b, clock, redis, buckets, local, modes, misses };
}

describe('SharedBudget in virtual time', () => {
  it('publishes once per period; the demand view goes stale DEMAND_TTL_MS after the last read, and share() falls back', async () => {
    const { b, clock, redis } = instance();
    expect(b.mode()).toBe('shared'); // handed over connected
    redis.demands.set('b', `${clock.nowMs()} 1 0`); // another instance, a third of our demand
    b.publishDemand({ armsPerSecond: 3, backlog: 0 }); // the first publish goes at once
    await clock.advance(0);
    expect(redis.evals).toBe(1);
    expect(b.share()).toBe(0.5); // one read only: not settled
    redis.demands.set('b', `${clock.nowMs() + DEMAND_PUBLISH_PERIOD_MS} 1 0`);
    await clock.advance(DEMAND_PUBLISH_PERIOD_MS);
    expect(redis.evals).toBe(2);
    expect(b.share()).toBeCloseTo(0.75, 12);

    // Redis stops answering the exchange, the connection up: the last read holds for the TTL.
    redis.failing = true;
    await clock.advance(DEMAND_TTL_MS);
    expect(redis.evals).toBe(2 + DEMAND_TTL_MS / DEMAND_PUBLISH_PERIOD_MS);
    expect(b.mode()).toBe('shared');
    expect(b.share()).toBeCloseTo(0.75, 12);
    await clock.advance(1);
    expect(b.share()).toBe(0.5);

    // Answering again: the next period's read is fresh.
    redis.failing = false;
    redis.demands.set('b', `${clock.nowMs() + DEMAND_PUBLISH_PERIOD_MS} 1 0`);
    await clock.advance(DEMAND_PUBLISH_PERIOD_MS);
    expect(b.share()).toBeCloseTo(0.75, 12);
    await b.stop();
    expect(redis.demands.has(b.instanceId)).toBe(false); // withdrawn
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a connection error: the fallback share at once; the resume is retried after RESUME_RETRY_MS of virtual time', async () => {
    const { b, clock, redis, local, modes } = instance();
    const fallbackSpec = shareOf(bucketWindow(SPEC, 150), 0.5);
    redis.emit('error', new Error('ECONNRESET'));
    expect(b.mode()).toBe('local_fallback');
    expect(local.at(-1)).toEqual(fallbackSpec);
    redis.emit('error', new Error('ECONNRESET')); // once on the fallback: nothing more
    expect(modes).toEqual([
      ['local_fallback', 'connecting to redis'],
      ['shared', 'redis answers'],
      ['local_fallback', 'redis error'],
    ]);

    await clock.advance(RESUME_RETRY_MS - 1);
    expect(b.mode()).toBe('local_fallback');
    await clock.advance(1);
    expect(b.mode()).toBe('shared'); // the connection stayed up: no `ready` needed
    expect(modes.at(-1)).toEqual(['shared', 'redis answers']);
    await b.stop();
  });

  it('the connection down when the retry falls due: tried again a period later, until it is up', async () => {
    const { b, clock, redis } = instance();
    redis.status = 'reconnecting';
    redis.emit('close');
    expect(b.mode()).toBe('local_fallback');
    await clock.advance(RESUME_RETRY_MS);
    expect(b.mode()).toBe('local_fallback');
    redis.status = 'ready'; // up, its `ready` missed: the next retry finds it
    await clock.advance(RESUME_RETRY_MS - 1);
    expect(b.mode()).toBe('local_fallback');
    await clock.advance(1);
    expect(b.mode()).toBe('shared');
    await b.stop();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('connecting: on the fallback share until `ready`', async () => {
    const { b, clock, redis, local } = instance({ connected: false });
    expect(b.mode()).toBe('local_fallback');
    expect(local).toEqual([shareOf(bucketWindow(SPEC, 150), 0.5)]);
    await clock.advance(10 * RESUME_RETRY_MS);
    expect(b.mode()).toBe('local_fallback'); // no failure yet, so no retry either: `ready` resumes
    redis.status = 'ready';
    redis.emit('ready');
    expect(b.mode()).toBe('shared');
    await b.stop();
  });

  it('token waits run on the clock: an arm goes at its deadline, a read is shed at its wait', async () => {
    const { b, clock, buckets, misses } = instance();
    buckets.starved = true;
    let armed = false;
    const arm = b.take(['global'], 'arm', { waitMs: 400, onTimeout: 'send' }).then(() => (armed = true));
    const read = b.take(['global'], 'read', { waitMs: 200, onTimeout: 'shed' });
    const readDone = read.catch((e: unknown) => e);
    await clock.advance(199);
    expect(armed).toBe(false);
    await clock.advance(1);
    expect(await readDone).toBeInstanceOf(ShedError);
    await clock.advance(199);
    expect(armed).toBe(false);
    await clock.advance(1);
    await arm;
    expect(misses).toEqual([
      ['shed', 'read'],
      ['bypass', 'arm'],
    ]);
    await b.stop();
  });

  it('a Redis error releases every waiting request at once; a bucket whose settings are lost is opened again on resume', async () => {
    const { b, clock, buckets, misses } = instance();
    buckets.starved = true;
    let went = false;
    const waiting = b.take(['global'], 'arm', { waitMs: 60_000, onTimeout: 'shed' }).then(() => (went = true));
    await clock.advance(100);
    expect(went).toBe(false);
    buckets.errors.at(-1)!(new Error('ERR SETTINGS_KEY_NOT_FOUND'));
    await waiting;
    expect(b.mode()).toBe('local_fallback');
    expect(misses).toEqual([]);
    expect(buckets.opened).toEqual(['dms-keeper:virtual:global']);

    await clock.advance(RESUME_RETRY_MS);
    expect(b.mode()).toBe('shared');
    expect(buckets.opened).toEqual(['dms-keeper:virtual:global', 'dms-keeper:virtual:global']);
    expect(buckets.stopped).toBe(1); // the old one
    await b.stop();
  });
});
