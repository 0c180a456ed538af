import { createRequire } from 'node:module';
import { redisBuckets, type SharedBudgetOptions } from '../budget/shared-budget.js';

/**
 * The Redis client of `rate_limits.shared` and the token buckets on it, for SharedBudget; it
 * connects at once and SharedBudget's stop() disconnects it.
 */
export function connectSharedRedis(redisUrl: string, password?: string): Pick<SharedBudgetOptions, 'redis' | 'buckets'> {
  const { Redis } = loadIoredis();
  const client = newRedisClient(redisUrl, password);
  return { redis: client, buckets: redisBuckets(client, Redis) };
}

/** Required, not imported: only a shared budget (and its relay) needs ioredis, and loading it costs 60 ms of every start-up. */
function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}

/** A client of `rate_limits.shared.redis_url`, connecting at once. */
export function newRedisClient(redisUrl: string, password?: string): import('ioredis').Redis {
  const { Redis } = loadIoredis();
  return new Redis(redisUrl, {
    password,
    // Commands fail at once while disconnected instead of queueing: a request must never wait
    // for Redis to come back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: (times) => Math.min(2_000, 100 * times),
    lazyConnect: false,
  });
}
