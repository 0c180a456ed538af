import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import { weightUnits, type WindowSpec } from './admission.js';
import type { Clock, TimerHandle } from './clock.js';
import type { RequestKind } from './request-class.js';
import { ShedError } from './scheduler.js';
import {
  bucketWindow,
  budgetMoved,
  budgetShare,
  DEMAND_PUBLISH_PERIOD_MS,
  DEMAND_TTL_MS,
  demandKey,
  formatDemand,
  instanceSpecOf,
  modeStep,
  parseDemandTable,
  RESUME_RETRY_MS,
  SHARED_HEARTBEAT_MS,
  sharedChunk,
  sharedChunks,
  sharedReservoir,
  type BudgetMode,
  type Demand,
  type DemandView,
  type ModeEvent,
  type SharedReservoir,
} from './shared-share.js';
import type { TokenWait } from './request-class.js';

/**
 * One request budget for every instance with the same `rate_limits.shared.name` (shards behind one
 * egress IP: the venue counts the IP, not the process), through Bottleneck's Redis clustering. Each
 * shared scope is a clustered Bottleneck limiter whose token bucket lives in Redis
 * (shared-share.ts sizes it to the rolling window); a request admitted by this instance's own
 * budget (RequestScheduler) also takes its weight in tokens from every shared scope it spends (the
 * venue's IP weight: an info read 2, 20 or 60, an action 1), arms before approvals before reads
 * (Bottleneck's priorities).
 *
 * Why Bottleneck only for the buckets: see redisBuckets, below. Everything
 * else here runs on the injected clock; the mode decisions and the share are pure (shared-share.ts).
 *
 * Redis is never a single point of failure for the switch. Until Redis answers, and whenever it
 * stops (connection lost, a command failing), the keeper runs on its local budget cut to its share
 * (`fallback_share`, default 1 / shard count), and requests waiting for a token go at once. When
 * Redis is back, the shared budget resumes and the local budget is the whole one again.
 *
 * A saturated shared budget is not a reason to send: a request waits for its token as long as the
 * caller's TokenWait allows (request-class.ts tokenWait: an arm until its account would otherwise pass its
 * deadline, then it goes, a bypass; a request with no deadline up to a minute, a read its max wait,
 * then they are shed). Bottleneck cannot withdraw a queued job, so the token of a request that did
 * not wait for it is still taken when it comes: for a bypass that is the request the venue saw,
 * counted late; for a shed one a token spent on nothing, which only ever sends less.
 *
 * Shards planned by demand (shared-share.ts): each instance publishes its demand beside the bucket
 * (`publishDemand`) and reads the others' once a second in one Lua round trip, stamped with Redis's
 * clock, and `share()` is its part of the total for the planner.
 */
/** What SharedBudget itself calls on its Redis client (ioredis's, in production). */
export interface SharedRedisClient {
  /** `ready` once connected. */
  readonly status: string;
  on(event: 'error' | 'close' | 'ready', fn: () => void): unknown;
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  hdel(key: string, field: string): Promise<number>;
  disconnect(): void;
}

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

export interface SharedBudgetOptions {
  /**
   * Made by the caller, with commands that fail at once while disconnected (a request must never
   * wait for Redis to come back); SharedBudget owns it from here and disconnects it on stop().
   */
  redis: SharedRedisClient;
  /** The token buckets, on the same Redis (redisBuckets, below). */
  buckets: SharedBuckets;
  /** Every timer and time reading of this budget's own logic; only its monotonic time is read. */
  clock: Clock;
  name: string;
  /** The budgets to share, by scope key (the RequestScheduler's `global`, `schedule_cancel`, `exchange`). */
  specs: Record<string, WindowSpec>;
  /** Share of each budget this instance keeps to while Redis is unreachable, in (0, 1]. */
  fallbackShare: number;
  /** Sets this instance's local budget for a scope (full in shared mode, its share on fallback). */
  setLocalSpec: (scope: string, spec: WindowSpec) => void;
  /** Told each change of the budget in force, with the reason. */
  onModeChange?: (mode: BudgetMode, reason: string) => void;
  /** Bottleneck's heartbeat, which also refills the bucket: 100 to 200 ms. Default 150. */
  heartbeatMs?: number;
  /** Told each request whose token did not come in time: `bypass` (it went anyway) or `shed`. */
  onMiss?: (miss: 'bypass' | 'shed', cls: RequestKind) => void;
}

/** Bottleneck priorities of the request classes: 0 runs first. */
export const SHARED_PRIORITY: Readonly<Record<RequestKind, number>> = { arm: 0, approval: 2, prepare: 3, read: 6 };

export class SharedBudget {
  private readonly client: SharedRedisClient;
  private readonly clock: Clock;
  private readonly buckets = new Map<string, SharedBucket>();
  private current: BudgetMode = 'local_fallback';
  private resumeTimer: TimerHandle | undefined;
  /** A limiter said its settings are gone from Redis: made again before the next resume. */
  private settingsLost = false;
  /** Each shared scope's bucket as a window (what it lets out per window). */
  private readonly bucketSpecs = new Map<string, WindowSpec>();
  /** Each shared scope's largest job, in tokens (shared-share.ts, sharedChunk). */
  private readonly chunks = new Map<string, number>();
  /** The share the local budget was last cut to. */
  private appliedShare: number | undefined;
  private stopped = false;
  /** Requests waiting for a token: told to go at once when Redis stops answering. */
  private readonly waiters = new Set<() => void>();
  /** This process among the instances (its demand's field): host, pid and 6 random bytes. */
  readonly instanceId = `${hostname()}-${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly demandKey: string;
  private own: Demand | undefined;
  private view: DemandView | undefined;
  /** Redis time of the first read since this instance (re)joined (see demandShare's `settled`). */
  private firstReadRedisMs: number | undefined;
  private exchanging = false;
  private demandTimer: TimerHandle;
  private fallbackShare: number;
  private readonly heartbeatMs: number;

  constructor(private readonly opts: SharedBudgetOptions) {
    this.fallbackShare = opts.fallbackShare;
    this.client = opts.redis;
    this.clock = opts.clock;
    this.client.on('error', () => this.handle({ kind: 'failed', reason: 'redis error' }));
    this.client.on('close', () => this.handle({ kind: 'failed', reason: 'redis connection closed' }));
    this.client.on('ready', () => this.handle({ kind: 'ready' }));
    opts.buckets.onError(() => this.handle({ kind: 'failed', reason: 'redis error' }));
    this.heartbeatMs = opts.heartbeatMs ?? SHARED_HEARTBEAT_MS;
    for (const [scope, spec] of Object.entries(opts.specs)) {
      // What the bucket really lets out (below the window: the price of no common clock), as a window.
      this.bucketSpecs.set(scope, bucketWindow(spec, this.heartbeatMs));
      this.chunks.set(scope, sharedChunk(sharedReservoir(spec, this.heartbeatMs)));
    }
    this.openBuckets();
    this.demandKey = demandKey(opts.name);
    this.demandTimer = this.clock.setTimeout(() => this.demandTick(), DEMAND_PUBLISH_PERIOD_MS);
    // Until Redis answers, this instance keeps to its share.
    this.applyLocal('local_fallback', 'connecting to redis');
    // A client handed over already connected sends no more `ready`.
    if (this.client.status === 'ready') this.handle({ kind: 'ready' });
  }

  /** Every publish period while the instance lives, whether or not the last round trip ended. */
  private demandTick(): void {
    this.demandTimer = this.clock.setTimeout(() => this.demandTick(), DEMAND_PUBLISH_PERIOD_MS);
    void this.exchange();
  }

  /**
   * What this instance will spend (the planner calls it at most once a second): published with the
   * next round trip, at most a second away, and again every second while the instance lives.
   */
  publishDemand(d: Demand): void {
    const first = this.own === undefined;
    this.own = { armsPerSecond: d.armsPerSecond, backlog: d.backlog };
    if (first) void this.exchange();
  }

  /**
   * This instance's share of the shared budget in (0, 1]: shared-share.ts budgetShare says when it is
   * the demand's and when `fallbackShare`. On fallback the local budget is already cut to it.
   */
  share(): number {
    const state = { mode: this.current, stopped: this.stopped, fallbackShare: this.fallbackShare, own: this.own, view: this.view, firstReadRedisMs: this.firstReadRedisMs };
    return budgetShare(state, this.clock.monoMs());
  }

  /** Publishes this instance's demand and reads every live one: one round trip. */
  private async exchange(): Promise<void> {
    if (this.exchanging || this.stopped || this.current !== 'shared' || this.own === undefined) return;
    this.exchanging = true;
    try {
      const reply = await this.client.eval(DEMAND_SCRIPT, 1, this.demandKey, this.instanceId, formatDemand(this.own), String(DEMAND_TTL_MS));
      const table = parseDemandTable(reply);
      if (!table || this.current !== 'shared') return;
      this.firstReadRedisMs ??= table.nowMs;
      this.view = { redisNowMs: table.nowMs, others: table.entries.filter((e) => e.id !== this.instanceId), readAtMonoMs: this.clock.monoMs() };
      this.applyShare();
    } catch {
      // Not answering: share() falls back once the last read is older than the TTL.
    } finally {
      this.exchanging = false;
    }
  }

  mode(): BudgetMode {
    return this.current;
  }

  /**
   * Takes `weight` tokens (the request's venue weight, a positive integer) from every shared scope
   * among `scopes`, capped at what the scope's bucket lets out per window, as admission.ts's weightUnits
   * caps at the limit: a request heavier than the whole window counts as the whole window instead of
   * waiting forever. The bucket holds only a few tokens (shared-share.ts), so the weight goes as
   * several Bottleneck jobs of at most sharedChunk tokens, all queued at once: at one priority this
   * instance runs them in order, so one request's jobs are not interleaved with a later one's, while
   * a later arm still goes ahead of what is left of a read.
   *
   * Resolves when all of them came, when the shared budget is not in force (the local share applies;
   * Redis stopping answering releases every waiting request at once), or when `wait.waitMs` passed
   * and `wait.onTimeout` is `send` (a bypass, told to onMiss once per request). Rejects with ShedError only
   * when `wait.waitMs` passed and `wait.onTimeout` is `shed` (told to onMiss once), and with RangeError for
   * a weight that is not a positive integer: Redis failing never fails a request. The tokens of a
   * request that did not wait for them are still taken as they come (the class comment), all of them.
   */
  async take(scopes: readonly string[], cls: RequestKind, wait: TokenWait, weight = 1): Promise<void> {
    if (!Number.isSafeInteger(weight) || weight < 1) throw new RangeError(`request weight must be a positive integer, got ${weight}`);
    if (this.current !== 'shared' || this.stopped) return;
    const mine: Array<{ bucket: SharedBucket; jobs: number[] }> = [];
    for (const scope of scopes) {
      const bucket = this.buckets.get(scope);
      if (!bucket) continue;
      const units = weightUnits(weight, this.bucketSpecs.get(scope)!.limit);
      mine.push({ bucket, jobs: sharedChunks(units, this.chunks.get(scope)!) });
    }
    if (mine.length === 0) return;
    const priority = SHARED_PRIORITY[cls];
    let timer: TimerHandle | undefined;
    let release: (() => void) | undefined;
    const released = new Promise<'released'>((res) => {
      release = () => res('released');
      this.waiters.add(release);
    });
    const timeout = new Promise<'timeout'>((res) => {
      timer = this.clock.setTimeout(() => res('timeout'), Math.max(0, wait.waitMs));
    });
    let got: 'ok' | 'timeout' | 'released';
    try {
      const tokens = mine.flatMap(({ bucket, jobs }) => jobs.map((w) => bucket.take(priority, w)));
      got = await Promise.race([Promise.all(tokens).then(() => 'ok' as const), timeout, released]);
    } catch {
      this.handle({ kind: 'failed', reason: 'a shared token could not be taken' });
      return;
    } finally {
      if (timer) this.clock.clearTimeout(timer);
      if (release) this.waiters.delete(release);
    }
    if (got !== 'timeout') return;
    if (wait.onTimeout === 'send') {
      this.opts.onMiss?.('bypass', cls);
      return;
    }
    this.opts.onMiss?.('shed', cls);
    throw new ShedError(`shed: no token of the shared budget within ${wait.waitMs} ms`);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    const wasShared = this.current === 'shared';
    this.stopped = true;
    this.clock.clearTimeout(this.demandTimer);
    if (this.resumeTimer) this.clock.clearTimeout(this.resumeTimer);
    this.releaseWaiters();
    // Withdraws this instance's demand so the others take its share at once, not after the TTL.
    if (wasShared && this.own !== undefined) {
      let giveUp: TimerHandle | undefined;
      await Promise.race([this.client.hdel(this.demandKey, this.instanceId).catch(() => undefined), new Promise((r) => (giveUp = this.clock.setTimeout(() => r(undefined), 500)))]);
      if (giveUp) this.clock.clearTimeout(giveUp);
    }
    await Promise.all([...this.buckets.values()].map((b) => b.stop().catch(() => undefined)));
    await this.opts.buckets.close().catch(() => undefined);
    this.client.disconnect();
  }

  /**
   * One bucket per shared scope. Opened again when Redis lost their settings (a restart without
   * persistence): Bottleneck re-creates them itself only on the exact reply
   * `SETTINGS_KEY_NOT_FOUND`, and Redis 7 prefixes a script's error with `ERR `, so every heartbeat
   * failed and the instances never left the fallback (measured, Debian's redis-server 7.0).
   */
  private openBuckets(): void {
    // The old ones' last heartbeats still fail until they have stopped: stop() keeps them from
    // counting against the new ones.
    for (const b of this.buckets.values()) void b.stop().catch(() => undefined);
    this.buckets.clear();
    for (const [scope, spec] of Object.entries(this.opts.specs)) {
      const bucket = this.opts.buckets.open(`dms-keeper:${this.opts.name}:${scope}`, sharedReservoir(spec, this.heartbeatMs), this.heartbeatMs, (e: unknown) => {
        if (/SETTINGS_KEY_NOT_FOUND/.test(String((e as Error | undefined)?.message))) this.settingsLost = true;
        this.handle({ kind: 'failed', reason: 'redis error' });
      });
      this.buckets.set(scope, bucket);
    }
  }

  /** Carries out what shared-share.ts decides for an event. */
  private handle(event: ModeEvent): void {
    const step = modeStep({ mode: this.current, stopped: this.stopped }, event);
    if (step.to?.mode === 'shared') {
      if (this.settingsLost) {
        this.settingsLost = false;
        this.openBuckets();
      }
      this.applyLocal('shared', step.to.reason);
    } else if (step.to?.mode === 'local_fallback') {
      this.view = undefined;
      this.firstReadRedisMs = undefined;
      this.applyLocal('local_fallback', step.to.reason);
      this.releaseWaiters();
    }
    if (step.retryResume && !this.resumeTimer) {
      this.resumeTimer = this.clock.setTimeout(() => {
        this.resumeTimer = undefined;
        this.handle({ kind: 'resume_due', connectionReady: this.client.status === 'ready' });
      }, RESUME_RETRY_MS);
    }
  }

  private releaseWaiters(): void {
    for (const release of [...this.waiters]) release();
    this.waiters.clear();
  }

  /**
   * A fleet's fallback share follows its last membership (1 / live instances, src/app/fleet.ts),
   * so that while Redis is away the instances together still keep to one budget.
   */
  setFallbackShare(share: number): void {
    if (!(share > 0 && share <= 1) || share === this.fallbackShare) return;
    this.fallbackShare = share;
    this.applyShare();
  }

  /**
   * This instance's local budget: its share of what the shared bucket lets out, in both modes. In
   * shared mode the share is its demand's (re-applied past BUDGET_CHANGE_TOLERANCE), so it plans and
   * paces on what it will get instead of queueing for tokens the others take: two shards each
   * planning the whole bucket waited past their deadlines and went anyway. On the fallback it is
   * `fallback_share` of the same bucket, so the instances together stay under the venue's window
   * even as Redis goes away mid-window.
   */
  private applyLocal(mode: BudgetMode, reason: string): void {
    this.current = mode;
    this.appliedShare = undefined;
    this.applyShare();
    this.opts.onModeChange?.(mode, reason);
  }

  private applyShare(): void {
    const share = this.share();
    if (!budgetMoved(this.appliedShare, share)) return;
    this.appliedShare = share;
    for (const [scope, spec] of Object.entries(this.opts.specs)) this.opts.setLocalSpec(scope, instanceSpecOf(spec, share, this.heartbeatMs));
  }
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

/**
 * One round trip a second: writes this instance's demand stamped with Redis's clock (one clock for
 * every instance, whatever their hosts' skew), drops entries older than the TTL, returns Redis's
 * time and the live entries. KEYS[1]: the demand hash; ARGV: instance id, `<arms/s> <backlog>`, TTL ms.
 * The hash itself expires when no instance has written it for ten TTLs.
 */
const DEMAND_SCRIPT = `
local t = redis.call('TIME')
local now = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], now .. ' ' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl * 10)
local all = redis.call('HGETALL', KEYS[1])
local out = { now }
for i = 1, #all, 2 do
  local at = tonumber(string.match(all[i + 1], '^(%d+)'))
  if at == nil or tonumber(now) - at > ttl then
    redis.call('HDEL', KEYS[1], all[i])
  else
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
  end
end
return out
`;
