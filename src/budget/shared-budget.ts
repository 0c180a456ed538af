import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import { weightUnits, type WindowSpec } from './admission.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { RequestKind, TokenWait } from './request-class.js';
import { ShedError } from './scheduler.js';
import { bucketWindow, budgetMoved, budgetShare, DEMAND_PUBLISH_PERIOD_MS, DEMAND_TTL_MS, demandKey, formatDemand, instanceSpecOf, modeStep, parseDemandTable, RESUME_RETRY_MS, SHARED_HEARTBEAT_MS, sharedChunk, sharedChunks, sharedReservoir, type BudgetMode, type Demand, type DemandView, type ModeEvent, type SharedReservoir } from './shared-share.js';

/**
 * One request budget for every instance with the same `rate_limits.shared.name` (shards behind one
 * egress IP: the venue counts the IP, not the process). Each shared scope is a token bucket in
 * Redis, a clustered Bottleneck limiter; a request admitted by this instance's own budget
 * (RequestScheduler) also takes its weight in tokens (the venue's IP weight: an info read 2, 20 or
 * 60, an action 1) from every shared scope it spends, arms before approvals before reads. What to
 * do is decided purely in shared-share.ts; this file carries it out on the injected clock, except
 * Bottleneck's bucket (redisBuckets, below, says why).
 *
 * Redis is never a single point of failure for the switch: until Redis answers, and whenever it
 * stops, the keeper runs on its local budget cut to `fallback_share`, and requests waiting for a
 * token go at once.
 *
 * A saturated shared budget is not a reason to send: a request waits for its token as long as its
 * TokenWait allows (request-class.ts). Bottleneck cannot withdraw a queued job, so the token of a
 * request that did not wait for it is still taken when it comes: for a bypass that is the request
 * the venue saw, counted late; for a shed one a token spent on nothing, which only ever sends less.
 *
 * Shards planned by demand: each instance publishes its demand beside the bucket and reads the
 * others' once a second in one round trip (DEMAND_SCRIPT), and `share()` is its part for the planner.
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
 * The token buckets, one per shared scope under its id in Redis: an interface so that SharedBudget's
 * own logic runs in virtual time on fakes (shared-budget-virtual.test.ts); redisBuckets is the real one.
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
  /** On the same Redis. */
  buckets: SharedBuckets;
  /** Every timer and time reading of this budget's own logic; only its monotonic time is read. */
  clock: Clock;
  name: string;
  /** The budgets to share, by scope key (the RequestScheduler's `global`, `schedule_cancel`, `exchange`). */
  specs: Record<string, WindowSpec>;
  /** Share of each budget this instance keeps to while Redis is unreachable, in (0, 1]. */
  fallbackShare: number;
  /** Sets this instance's local budget for a scope: its share of what the scope's bucket lets out (applyLocal). */
  setLocalSpec: (scope: string, spec: WindowSpec) => void;
  /** Told each change of the budget in force, with the reason. */
  onModeChange?: (mode: BudgetMode, reason: string) => void;
  /** Default SHARED_HEARTBEAT_MS. */
  heartbeatMs?: number;
  /** Told each request whose token did not come in time: `bypass` (it went anyway) or `shed`. */
  onMiss?: (miss: 'bypass' | 'shed', cls: RequestKind) => void;
}

/** Bottleneck priorities of the request classes: 0 runs first. */
const SHARED_PRIORITY: Readonly<Record<RequestKind, number>> = { arm: 0, approval: 2, prepare: 3, read: 6 };

export class SharedBudget {
  private readonly client: SharedRedisClient;
  private readonly clock: Clock;
  private readonly buckets = new Map<string, SharedBucket>();
  private current: BudgetMode = 'local_fallback';
  private resumeTimer: TimerHandle | undefined;
  /** A limiter said its settings are gone from Redis: made again before the next resume. */
  private settingsLost = false;
  /** What each scope's bucket lets out, as a window (below the venue's: the price of no common clock). */
  private readonly bucketSpecs = new Map<string, WindowSpec>();
  /** Each scope's largest job in tokens (sharedChunk). */
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
      this.bucketSpecs.set(scope, bucketWindow(spec, this.heartbeatMs));
      this.chunks.set(scope, sharedChunk(sharedReservoir(spec, this.heartbeatMs)));
    }
    this.openBuckets();
    this.demandKey = demandKey(opts.name);
    this.demandTimer = this.clock.setTimeout(() => this.demandTick(), DEMAND_PUBLISH_PERIOD_MS);
    this.applyLocal('local_fallback', 'connecting to redis');
    // A client handed over already connected sends no more `ready`.
    if (this.client.status === 'ready') this.handle({ kind: 'ready' });
  }

  /** Every publish period while the instance lives, whether or not the last round trip ended. */
  private demandTick(): void {
    this.demandTimer = this.clock.setTimeout(() => this.demandTick(), DEMAND_PUBLISH_PERIOD_MS);
    void this.exchange();
  }

  /** What this instance will spend: the first demand goes out at once, later ones with the next round trip. */
  publishDemand(d: Demand): void {
    const first = this.own === undefined;
    this.own = { armsPerSecond: d.armsPerSecond, backlog: d.backlog };
    if (first) void this.exchange();
  }

  /** budgetShare of this instance's state; on fallback the local budget is already cut to it. */
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
   * Takes `weight` tokens from every shared scope among `scopes`, capped like admission.ts's
   * weightUnits at what the bucket lets out per window (a heavier request would wait forever), as
   * jobs of at most sharedChunk tokens queued at once: at one priority Bottleneck runs them in order,
   * so one request's jobs do not interleave with a later one's, while a later arm still goes ahead of
   * what is left of a read.
   *
   * Resolves when the tokens came, when the shared budget is not in force, or at `wait.waitMs` with
   * `send` (a bypass); rejects with ShedError at `wait.waitMs` with `shed`, and with RangeError for a
   * weight that is not a positive integer. Redis failing never fails a request.
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
      // Precise: the wait for the shared bucket's next token paces sends (time/clock.ts TIMER_SLACK_MS).
      timer = this.clock.setTimeout(() => res('timeout'), Math.max(0, wait.waitMs), { precise: true });
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

  /** Carries out modeStep's decision for an event. */
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
   * A fleet's fallback share follows its last membership (1 / live instances, src/fleet/fleet.ts),
   * so that while Redis is away the instances together still keep to one budget.
   */
  setFallbackShare(share: number): void {
    if (!(share > 0 && share <= 1) || share === this.fallbackShare) return;
    this.fallbackShare = share;
    this.applyShare();
  }

  /**
   * This instance's local budget: its share of what the shared bucket lets out, in both modes. In
   * shared mode the share is its demand's, so it plans and paces on what it will get instead of
   * queueing for tokens the others take: two shards each planning the whole bucket waited past their
   * deadlines and went anyway. On the fallback it is `fallback_share` of the same bucket, so the
   * instances together stay under the venue's window even as Redis goes away mid-window.
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
 * Redis, refilled by Bottleneck's Lua script at every heartbeat. The one place the shared budget runs
 * on real time (Bottleneck reads the wall clock and sets its own timers; it cannot take our Clock),
 * kept for what we would otherwise hand-write: an atomic bucket several processes share through
 * Redis. `RedisClass`: the client's class, which Bottleneck would otherwise require by itself.
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
