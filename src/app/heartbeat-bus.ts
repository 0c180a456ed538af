import type { HeartbeatBus } from '../liveness/heartbeat-relay.js';
import { newRedisClient } from './shared-redis.js';

/** What the bus calls on an ioredis client (a fake in tests). */
export interface PubSubClient {
  readonly status: string;
  on(event: 'ready' | 'close' | 'end', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  on(event: 'message', fn: (channel: string, message: string) => void): unknown;
  publish(channel: string, message: string): Promise<number>;
  subscribe(channel: string): Promise<unknown>;
  disconnect(): void;
}

/**
 * The heartbeat relay's bus on Redis pub/sub (docs/liveness.md, "Fleets"): one connection
 * publishes, another (a subscribed connection can do nothing else) listens. Both fail at once
 * while Redis is out of reach (no offline queue) and reconnect by themselves; `up()` is both
 * ready and subscribed. Pub/sub keeps nothing: a heartbeat published while an instance is
 * disconnected is lost to it, as a heartbeat sent to a pod that is down would be.
 */
export function redisHeartbeatBus(pub: PubSubClient, sub: PubSubClient, channel: string): HeartbeatBus & { close(): void } {
  let subscribed = false;
  let lastError = '';
  let handlers: Parameters<HeartbeatBus['start']>[0] | undefined;
  const up = (): boolean => pub.status === 'ready' && sub.status === 'ready' && subscribed;
  const report = (): void => handlers?.onState(up(), up() ? 'ready' : lastError || `publisher ${pub.status}, subscriber ${sub.status}`);
  const subscribe = (): void => {
    sub.subscribe(channel).then(
      () => {
        subscribed = true;
        // Subscribed before the publisher is ready is not an outage either (it raced the start's
        // check 1 run in 3): the whole coming up is reported, by whichever side is ready last.
        if (up()) report();
      },
      (err: unknown) => {
        lastError = (err as Error).message;
        report();
      },
    );
  };
  return {
    up,
    publish: (message) => {
      pub.publish(channel, message).catch((err: unknown) => {
        lastError = (err as Error).message;
        report();
      });
    },
    start: (h) => {
      handlers = h;
      sub.on('message', (ch, message) => {
        if (ch === channel) h.onMessage(message);
      });
      sub.on('ready', subscribe);
      for (const c of [pub, sub]) {
        c.on('error', (err) => {
          lastError = err.message;
        });
        c.on('close', () => {
          if (c === sub) subscribed = false;
          report();
        });
      }
      // The publisher ready before the subscriber is not an outage: only the whole coming up is reported.
      pub.on('ready', () => up() && report());
      // Nothing reported before a first connection attempt ends: a start is not an outage.
      if (sub.status === 'ready') subscribe();
    },
    close: () => {
      pub.disconnect();
      sub.disconnect();
    },
  };
}

/** The bus on `rate_limits.shared.redis_url`: two connections of its own, connecting at once. */
export function connectHeartbeatBus(redisUrl: string, password: string | undefined, channel: string): HeartbeatBus & { close(): void } {
  const pub = newRedisClient(redisUrl, password);
  return redisHeartbeatBus(pub, pub.duplicate(), channel);
}
