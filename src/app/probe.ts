import { request, type Dispatcher } from 'undici';
import type { ProbeFn } from '../liveness/bot-liveness.js';

/**
 * `liveness.probe`: GET the bot's health URL on a connection pool of its own, so a bot that hangs
 * its health port can never hold a connection the venue's requests need. The timeout is the
 * caller's (`signal`, on the keeper's clock); the body is drained unread, bounded by the pool.
 */
export function httpProbe(dispatcher: Dispatcher): ProbeFn {
  return async (url, signal) => {
    const res = await request(url, { method: 'GET', dispatcher, signal, headers: { 'user-agent': 'dms-keeper-probe' } });
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    return res.statusCode;
  };
}
