import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import type { SharedReservoir } from './shared-share.js';

/**
 * The shared token buckets SharedBudget takes from, one per shared scope, each under its id in
 * Redis. An interface so that SharedBudget's own logic (modes, demand exchange, token waits) runs
 * in virtual time on a fake; `redisBuckets` is the real one.
 */
export interface SharedBuckets {
  /** One scope's bucket; `onError` is told each failure of its commands. */
  open(id: string, reservoir: SharedReservoir, heartbeatMs: number, onError: (e: unknown) => void): SharedBucket;
  /** `fn` is told each error of the connection itself. */
  onError(fn: () => void): void;
  /** Closes the connection (Redis's client included). */
  close(): Promise<void>;
}

export interface SharedBucket {
  /** Resolves when `tokens` came, priority 0 first; rejects when Redis fails the command. */
  take(priority: number, tokens: number): Promise<void>;
  /** Drops the jobs still waiting; its errors from here on are not told (its last heartbeats may still fail). */
  stop(): Promise<void>;
}

/**
 * Bottleneck's clustering on `client`: each bucket a clustered limiter whose reservoir lives in
 * Redis and is refilled by a Lua script at every heartbeat. This is the one place the shared budget
 * still runs on real time: Bottleneck reads the wall clock and sets its own timers for its heartbeat
 * and bucket, and cannot take our Clock. We keep it for what we would otherwise hand-write: the
 * atomic bucket several processes share through Redis. `RedisClass` is the client's class, which
 * Bottleneck would otherwise require by itself.
 */
export function redisBuckets(client: Redis, RedisClass: typeof Redis): SharedBuckets {
  const connection = new Bottleneck.IORedisConnection({ client, Redis: RedisClass });
  return {
    open(id, reservoir, heartbeatMs, onError) {
      const limiter = new Bottleneck({
        id,
        datastore: 'ioredis',
        connection,
        clearDatastore: false,
        maxConcurrent: null,
        minTime: 0,
        heartbeatInterval: heartbeatMs,
        ...reservoir,
      });
      limiter.on('error', onError);
      return {
        take: async (priority, tokens) => {
          await limiter.schedule({ priority, weight: tokens }, async () => undefined);
        },
        stop: async () => {
          limiter.removeAllListeners('error');
          limiter.on('error', () => undefined);
          await Promise.resolve().then(() => limiter.stop({ dropWaitingJobs: true }));
        },
      };
    },
    onError: (fn) => connection.on('error', fn),
    close: async () => {
      await Promise.resolve().then(() => connection.disconnect(false));
    },
  };
}
