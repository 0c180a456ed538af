import type { Redis } from 'ioredis';
import { AGENT_SLOTS } from '../config/shard.js';

/**
 * A fleet's membership in Redis (`shard.fleet`, on the shared budget's server), every time on
 * Redis's clock (TIME inside the scripts), so the instances' own clocks never decide a lease:
 * - `dms-keeper:<name>:fleet:members`, a sorted set: instance -> the end of its lease (ms).
 * - `dms-keeper:<name>:fleet:settled:<instance>`, a set: the accounts that instance has settled,
 *   armed or judged not to be armed (Keeper.settledAccounts); expires three leases after its last renewal.
 * - `dms-keeper:<name>:fleet:slots:<account>`, a hash: agent slot -> the instance signing in it,
 *   so no two instances ever approve an agent under the same name (that would revoke the other's).
 */
export interface FleetStore {
  /** Renews this instance's lease: the live instances (this one included), and whether the lease was new (first, lapsed, or Redis lost it). */
  renew(me: string, leaseMs: number): Promise<{ members: string[]; fresh: boolean }>;
  /** Adds and removes accounts in this instance's settled set (`replace`: the set becomes `add`). */
  publishSettled(me: string, change: { add: readonly string[]; remove: readonly string[]; replace: boolean }, ttlMs: number): Promise<void>;
  /** For each (instance, account), whether that instance has published the account as settled. */
  settled(pairs: ReadonlyArray<readonly [string, string]>): Promise<boolean[]>;
  /**
   * An agent slot per account: the one this instance holds; else `preferred` when free; else a
   * free one; else one whose holder's lease has ended. -1: every slot held by a live instance.
   */
  claim(me: string, accounts: readonly string[], preferred: readonly number[]): Promise<number[]>;
  /** Gives up this instance's slots of these accounts. */
  release(me: string, accounts: readonly string[]): Promise<void>;
}

const NOW_MS = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const RENEW = `${NOW_MS}
local prev = redis.call('ZSCORE', KEYS[1], ARGV[1])
local fresh = 0
if (not prev) or tonumber(prev) < now then fresh = 1 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 86400000)
return {fresh, redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')}`;

const CLAIM = `${NOW_MS}
local me = ARGV[1]
local slots = tonumber(ARGV[2])
local out = {}
for i = 2, #KEYS do
  local h = redis.call('HGETALL', KEYS[i])
  local holder = {}
  for j = 1, #h, 2 do holder[tonumber(h[j])] = h[j + 1] end
  local got = -1
  for s = 0, slots - 1 do if holder[s] == me then got = s break end end
  local pref = tonumber(ARGV[i + 1])
  if got < 0 and pref >= 0 and pref < slots and holder[pref] == nil then got = pref end
  if got < 0 then for s = 0, slots - 1 do if holder[s] == nil then got = s break end end end
  if got < 0 then
    for s = 0, slots - 1 do
      local lease = redis.call('ZSCORE', KEYS[1], holder[s])
      if (not lease) or tonumber(lease) < now then got = s break end
    end
  end
  if got >= 0 then redis.call('HSET', KEYS[i], got, me) end
  out[#out + 1] = got
end
return out`;

const RELEASE = `for i = 1, #KEYS do
  local h = redis.call('HGETALL', KEYS[i])
  for j = 1, #h, 2 do if h[j + 1] == ARGV[1] then redis.call('HDEL', KEYS[i], h[j]) end end
end
return 0`;

/** Accounts per script call: one call holds Redis for well under a millisecond per hundred. */
const CHUNK = 500;

export function redisFleetStore(redis: Redis, sharedName: string): FleetStore {
  const prefix = `dms-keeper:${sharedName}:fleet`;
  const members = `${prefix}:members`;
  const settledKey = (instance: string) => `${prefix}:settled:${instance}`;
  const slotsKey = (account: string) => `${prefix}:slots:${account}`;
  const chunks = <T>(xs: readonly T[]): T[][] => Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));
  return {
    async renew(me, leaseMs) {
      const [fresh, live] = (await redis.eval(RENEW, 1, members, me, String(leaseMs))) as [number, string[]];
      return { members: live, fresh: fresh === 1 };
    },
    async publishSettled(me, change, ttlMs) {
      const key = settledKey(me);
      const m = redis.multi();
      if (change.replace) m.del(key);
      for (const part of chunks(change.add)) m.sadd(key, ...part);
      if (!change.replace) for (const part of chunks(change.remove)) m.srem(key, ...part);
      m.pexpire(key, ttlMs);
      await m.exec();
    },
    async settled(pairs) {
      if (pairs.length === 0) return [];
      const p = redis.pipeline();
      for (const [instance, account] of pairs) p.sismember(settledKey(instance), account);
      const res = (await p.exec()) ?? [];
      return res.map(([err, v]) => err === null && v === 1);
    },
    async claim(me, accounts, preferred) {
      const out: number[] = [];
      for (let i = 0; i < accounts.length; i += CHUNK) {
        const part = accounts.slice(i, i + CHUNK);
        const prefs = preferred.slice(i, i + CHUNK).map((p) => String(p ?? -1));
        const got = (await redis.eval(CLAIM, part.length + 1, members, ...part.map(slotsKey), me, String(AGENT_SLOTS), ...prefs)) as number[];
        out.push(...got);
      }
      return out;
    },
    async release(me, accounts) {
      for (const part of chunks(accounts)) await redis.eval(RELEASE, part.length, ...part.map(slotsKey), me);
    },
  };
}
