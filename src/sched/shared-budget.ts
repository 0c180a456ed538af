import Bottleneck from 'bottleneck';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { weightUnits, type WindowSpec } from './admission.js';
import type { RequestKind } from './request-class.js';
import { ShedError } from './scheduler.js';
import { BUDGET_CHANGE_TOLERANCE, DEMAND_PUBLISH_PERIOD_MS, DEMAND_TTL_MS, demandKey, demandShare, formatDemand, parseDemandTable, type Demand, type DemandEntry } from './shared-demand.js';
import { bucketWindow, shareOf, sharedChunk, sharedChunks, sharedReservoir } from './shared-reservoir.js';
import type { TokenWait } from './shared-wait.js';

/**
 * One request budget for every instance with the same `rate_limits.shared.name` (shards behind one
 * egress IP: the venue counts the IP, not the process), through Bottleneck's Redis clustering. Each
 * shared scope is a clustered Bottleneck limiter whose token bucket lives in Redis
 * (shared-reservoir.ts sizes it to the rolling window); a request admitted by this instance's own
 * budget (RequestScheduler) also takes its weight in tokens from every shared scope it spends (the
 * venue's IP weight: an info read 2, 20 or 60, an action 1), arms before approvals before reads
 * (Bottleneck's priorities).
 *
 * Why Bottleneck only here: it reads the wall clock and sets real timers, so it cannot be this
 * instance's admission in virtual time; what it does that we would otherwise write ourselves is
 * the atomic, Lua-scripted bucket several processes share through Redis.
 *
 * Redis is never a single point of failure for the switch. Until Redis answers, and whenever it
 * stops (connection lost, a command failing), the keeper runs on its local budget cut to its share
 * (`fallback_share`, default 1 / shard count), and requests waiting for a token go at once. When
 * Redis is back, the shared budget resumes and the local budget is the whole one again.
 *
 * A saturated shared budget is not a reason to send: a request waits for its token as long as the
 * caller's TokenWait allows (shared-wait.ts: an arm until its account would otherwise pass its
 * deadline, then it goes, a bypass; a request with no deadline up to a minute, a read its max wait,
 * then they are shed). Bottleneck cannot withdraw a queued job, so the token of a request that did
 * not wait for it is still taken when it comes: for a bypass that is the request the venue saw,
 * counted late; for a shed one a token spent on nothing, which only ever sends less.
 *
 * Shards planned by demand (shared-demand.ts): each instance publishes its demand beside the bucket
 * (`publishDemand`) and reads the others' once a second in one Lua round trip, stamped with Redis's
 * clock, and `share()` is its part of the total for the planner.
 */
/** After a fallback with the connection still up, the shared budget is tried again this much later. */
const RESUME_RETRY_MS = 2_000;

export const BUDGET_MODES = ['local', 'shared', 'local_fallback'] as const;
export type BudgetMode = (typeof BUDGET_MODES)[number];

export interface SharedBudgetOptions {
  redisUrl: string;
  name: string;
  password?: string;
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
  /** This process among the instances (its demand's field); default host, pid and 6 random bytes. */
  instanceId?: string;
}

/** Bottleneck priorities of the request classes: 0 runs first. */
export const SHARED_PRIORITY: Readonly<Record<RequestKind, number>> = { arm: 0, approval: 2, prepare: 3, read: 6 };

export class SharedBudget {
  private readonly client: Redis;
  private readonly connection: Bottleneck.IORedisConnection;
  private readonly limiters = new Map<string, Bottleneck>();
  private current: BudgetMode = 'local_fallback';
  private resumeTimer: NodeJS.Timeout | undefined;
  /** A limiter said its settings are gone from Redis: made again before the next resume. */
  private settingsLost = false;
  /** Each shared scope's bucket as a window (what it lets out per window). */
  private readonly bucketSpecs = new Map<string, WindowSpec>();
  /** Each shared scope's largest job, in tokens (shared-reservoir.ts, sharedChunk). */
  private readonly chunks = new Map<string, number>();
  /** The share the local budget was last cut to. */
  private appliedShare: number | undefined;
  private stopped = false;
  /** Tokens that did not come in time (bypassed or shed). */
  timeouts = 0;
  /** Requests that went without their token because their account would otherwise pass its deadline. */
  bypasses = 0;
  /** Requests waiting for a token: told to go at once when Redis stops answering. */
  private readonly waiters = new Set<() => void>();
  readonly instanceId: string;
  private readonly demandKey: string;
  private own: Demand | undefined;
  /** The others' demands as last read; `readAt`: performance.now() of the read. */
  private view: { nowMs: number; others: DemandEntry[]; readAt: number } | undefined;
  /** Redis time of the first read since this instance (re)joined (see demandShare's `settled`). */
  private firstReadNowMs: number | undefined;
  private exchanging = false;
  private readonly demandTimer: NodeJS.Timeout;

  constructor(private readonly opts: SharedBudgetOptions) {
    // Required here, not imported: only a shared budget needs ioredis, and loading it costs 60 ms of
    // every start-up.
    const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    this.client = new Redis(opts.redisUrl, {
      password: opts.password,
      // Commands fail at once while disconnected instead of queueing: a request must never wait
      // for Redis to come back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      retryStrategy: (times) => Math.min(2_000, 100 * times),
      lazyConnect: false,
    });
    this.client.on('error', () => this.fallback('redis error'));
    this.client.on('close', () => this.fallback('redis connection closed'));
    this.client.on('ready', () => this.resume());
    this.connection = new Bottleneck.IORedisConnection({ client: this.client, Redis });
    this.connection.on('error', () => this.fallback('redis error'));
    const heartbeat = opts.heartbeatMs ?? 150;
    for (const [scope, spec] of Object.entries(opts.specs)) {
      // What the bucket really lets out (below the window: the price of no common clock), as a window.
      this.bucketSpecs.set(scope, bucketWindow(spec, heartbeat));
      this.chunks.set(scope, sharedChunk(sharedReservoir(spec, heartbeat)));
    }
    this.createLimiters();
    this.instanceId = opts.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(6).toString('hex')}`;
    this.demandKey = demandKey(opts.name);
    this.demandTimer = setInterval(() => void this.exchange(), DEMAND_PUBLISH_PERIOD_MS);
    this.demandTimer.unref();
    // Until Redis answers, this instance keeps to its share.
    this.applyLocal('local_fallback', 'connecting to redis');
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
   * This instance's share of the shared budget in (0, 1] (shared-demand.ts, demandShare): its demand
   * over the live instances' total, or `fallbackShare` while Redis is not answering, the last read
   * is older than the TTL, or no demand of its own is known yet. The planner multiplies the whole
   * configured budget by it (on fallback the local budget is already cut to the same fraction).
   */
  share(): number {
    const fallback = this.opts.fallbackShare;
    const v = this.view;
    if (this.current !== 'shared' || this.stopped || !v || performance.now() - v.readAt > DEMAND_TTL_MS) return fallback;
    const settled = this.firstReadNowMs !== undefined && v.nowMs - this.firstReadNowMs >= DEMAND_PUBLISH_PERIOD_MS;
    return demandShare({ own: this.own, others: v.others, nowMs: v.nowMs, fallbackShare: fallback, settled });
  }

  /** Publishes this instance's demand and reads every live one: one round trip. */
  private async exchange(): Promise<void> {
    if (this.exchanging || this.stopped || this.current !== 'shared' || this.own === undefined) return;
    this.exchanging = true;
    try {
      const reply = await this.client.eval(DEMAND_SCRIPT, 1, this.demandKey, this.instanceId, formatDemand(this.own), String(DEMAND_TTL_MS));
      const table = parseDemandTable(reply);
      if (!table || this.current !== 'shared') return;
      this.firstReadNowMs ??= table.nowMs;
      this.view = { nowMs: table.nowMs, others: table.entries.filter((e) => e.id !== this.instanceId), readAt: performance.now() };
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
   * waiting forever. The bucket holds only a few tokens (shared-reservoir.ts), so the weight goes as
   * several Bottleneck jobs of at most sharedChunk tokens, all queued at once: at one priority this
   * instance runs them in order, so one request's jobs are not interleaved with a later one's, while
   * a later arm still goes ahead of what is left of a read.
   *
   * Resolves when all of them came, when the shared budget is not in force (the local share applies;
   * Redis stopping answering releases every waiting request at once), or when `wait.waitMs` passed
   * and `wait.onTimeout` is `send` (a bypass, counted once per request). Rejects with ShedError only
   * when `wait.waitMs` passed and `wait.onTimeout` is `shed` (counted once), and with RangeError for
   * a weight that is not a positive integer: Redis failing never fails a request. The tokens of a
   * request that did not wait for them are still taken as they come (the class comment), all of them.
   */
  async take(scopes: readonly string[], cls: RequestKind, wait: TokenWait, weight = 1): Promise<void> {
    if (!Number.isSafeInteger(weight) || weight < 1) throw new RangeError(`request weight must be a positive integer, got ${weight}`);
    if (this.current !== 'shared' || this.stopped) return;
    const mine: Array<{ limiter: Bottleneck; jobs: number[] }> = [];
    for (const scope of scopes) {
      const limiter = this.limiters.get(scope);
      if (!limiter) continue;
      const units = weightUnits(weight, this.bucketSpecs.get(scope)!.limit);
      mine.push({ limiter, jobs: sharedChunks(units, this.chunks.get(scope)!) });
    }
    if (mine.length === 0) return;
    const priority = SHARED_PRIORITY[cls];
    let timer: NodeJS.Timeout | undefined;
    let release: (() => void) | undefined;
    const released = new Promise<'released'>((res) => {
      release = () => res('released');
      this.waiters.add(release);
    });
    const timeout = new Promise<'timeout'>((res) => {
      timer = setTimeout(() => res('timeout'), Math.max(0, wait.waitMs));
    });
    let got: 'ok' | 'timeout' | 'released';
    try {
      const tokens = mine.flatMap(({ limiter, jobs }) => jobs.map((w) => limiter.schedule({ priority, weight: w }, async () => undefined)));
      got = await Promise.race([Promise.all(tokens).then(() => 'ok' as const), timeout, released]);
    } catch {
      this.fallback('a shared token could not be taken');
      return;
    } finally {
      clearTimeout(timer);
      if (release) this.waiters.delete(release);
    }
    if (got !== 'timeout') return;
    this.timeouts++;
    if (wait.onTimeout === 'send') {
      this.bypasses++;
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
    clearInterval(this.demandTimer);
    clearTimeout(this.resumeTimer);
    this.releaseWaiters();
    // Withdraws this instance's demand so the others take its share at once, not after the TTL.
    if (wasShared && this.own !== undefined) {
      await Promise.race([this.client.hdel(this.demandKey, this.instanceId).catch(() => undefined), new Promise((r) => setTimeout(r, 500).unref())]);
    }
    await Promise.all([...this.limiters.values()].map((l) => Promise.resolve().then(() => l.stop({ dropWaitingJobs: true })).catch(() => undefined)));
    await Promise.resolve().then(() => this.connection.disconnect(false)).catch(() => undefined);
    this.client.disconnect();
  }

  /**
   * One clustered limiter per shared scope. Made again when Redis lost their settings (a restart
   * without persistence): Bottleneck re-creates them itself only on the exact reply
   * `SETTINGS_KEY_NOT_FOUND`, and Redis 7 prefixes a script's error with `ERR `, so every heartbeat
   * failed and the instances never left the fallback (measured, Debian's redis-server 7.0).
   */
  private createLimiters(): void {
    const heartbeat = this.opts.heartbeatMs ?? 150;
    const old = [...this.limiters.values()];
    this.limiters.clear();
    for (const l of old) {
      // Its last heartbeats still fail until it has stopped: they must not count against the new ones.
      l.removeAllListeners('error');
      l.on('error', () => undefined);
      void Promise.resolve().then(() => l.stop({ dropWaitingJobs: true })).catch(() => undefined);
    }
    for (const [scope, spec] of Object.entries(this.opts.specs)) {
      const limiter = new Bottleneck({
        id: `dms-keeper:${this.opts.name}:${scope}`,
        datastore: 'ioredis',
        connection: this.connection,
        clearDatastore: false,
        maxConcurrent: null,
        minTime: 0,
        heartbeatInterval: heartbeat,
        ...sharedReservoir(spec, heartbeat),
      });
      limiter.on('error', (e: unknown) => {
        if (/SETTINGS_KEY_NOT_FOUND/.test(String((e as Error | undefined)?.message))) this.settingsLost = true;
        this.fallback('redis error');
      });
      this.limiters.set(scope, limiter);
    }
  }

  private resume(): void {
    if (this.stopped || this.current === 'shared') return;
    if (this.settingsLost) {
      this.settingsLost = false;
      this.createLimiters();
    }
    this.applyLocal('shared', 'redis answers');
  }

  private fallback(reason: string): void {
    if (this.stopped || this.current === 'local_fallback') return;
    this.view = undefined;
    this.firstReadNowMs = undefined;
    this.applyLocal('local_fallback', reason);
    this.releaseWaiters();
    this.retryResume();
  }

  /**
   * An error while the connection stays up (a limiter's command that was sent while Redis was away,
   * failing just after it came back) brings no new `ready` event to resume on: measured, both shards
   * stayed on the fallback after Redis was back. So while the connection is up, try the shared budget
   * again a little later; a Redis really in trouble fails it again and the fallback stands.
   */
  private retryResume(): void {
    if (this.resumeTimer) return;
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = undefined;
      if (this.client.status === 'ready') this.resume();
      else if (!this.stopped) this.retryResume();
    }, RESUME_RETRY_MS);
    this.resumeTimer.unref();
  }

  private releaseWaiters(): void {
    for (const release of [...this.waiters]) release();
    this.waiters.clear();
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
    if (this.appliedShare !== undefined && Math.abs(share - this.appliedShare) <= this.appliedShare * BUDGET_CHANGE_TOLERANCE) return;
    this.appliedShare = share;
    for (const scope of Object.keys(this.opts.specs)) this.opts.setLocalSpec(scope, shareOf(this.bucketSpecs.get(scope)!, share));
  }
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
