import Bottleneck from 'bottleneck';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { WindowSpec } from './admission.js';
import { shareOf, sharedReservoir } from './shared-reservoir.js';

/**
 * One request budget for every instance with the same `rate_limits.shared.name` (shards behind one
 * egress IP: the venue counts the IP, not the process), through Bottleneck's Redis clustering. Each
 * shared scope is a clustered Bottleneck limiter whose token bucket lives in Redis
 * (shared-reservoir.ts sizes it to the rolling window); a request admitted by this instance's own
 * budget (RequestScheduler) also takes a token from every shared scope it spends, arms before
 * approvals before reads (Bottleneck's priorities).
 *
 * Why Bottleneck only here: it reads the wall clock and sets real timers, so it cannot be this
 * instance's admission in virtual time; what it does that we would otherwise write ourselves is
 * the atomic, Lua-scripted bucket several processes share through Redis.
 *
 * Redis is never a single point of failure for the switch. Until Redis answers, and whenever it
 * stops (connection lost, a command failing), the keeper runs on its local budget cut to its share
 * (`fallback_share`, default 1 / shard count), and a token that does not come within
 * `maxWaitMs` (10 s) is not waited for: arms go rather than lapse. When Redis is back, the shared budget
 * resumes and the local budget is the whole one again.
 */
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
  /** Longest wait for a shared token before the request goes anyway, ms. Default 10,000: the queue
   * at a saturated shared budget is legitimately seconds long; Redis down fails at once instead. */
  maxWaitMs?: number;
}

/** Bottleneck priorities: 0 runs first. */
export const SHARED_PRIORITY = { arm: 0, approval: 2, prepare: 3, read: 6 } as const;
export type SharedClass = keyof typeof SHARED_PRIORITY;

export class SharedBudget {
  private readonly client: Redis;
  private readonly connection: Bottleneck.IORedisConnection;
  private readonly limiters = new Map<string, Bottleneck>();
  private current: BudgetMode = 'local_fallback';
  private stopped = false;
  /** Tokens that did not come in time (the request went on its local budget). */
  timeouts = 0;

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
      const limiter = new Bottleneck({
        id: `dms-keeper:${opts.name}:${scope}`,
        datastore: 'ioredis',
        connection: this.connection,
        clearDatastore: false,
        maxConcurrent: null,
        minTime: 0,
        heartbeatInterval: heartbeat,
        ...sharedReservoir(spec, heartbeat),
      });
      limiter.on('error', () => this.fallback('redis error'));
      this.limiters.set(scope, limiter);
    }
    // Until Redis answers, this instance keeps to its share.
    this.applyLocal('local_fallback', 'connecting to redis');
  }

  mode(): BudgetMode {
    return this.current;
  }

  /**
   * Takes one token from every shared scope among `scopes`. Resolves when they came, when the
   * shared budget is not in force (the local share applies), or after `maxWaitMs` (counted): never
   * rejects, so Redis cannot fail a request.
   */
  async take(scopes: readonly string[], cls: SharedClass): Promise<void> {
    if (this.current !== 'shared' || this.stopped) return;
    const mine = scopes.map((s) => this.limiters.get(s)).filter((l): l is Bottleneck => l !== undefined);
    if (mine.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((res) => {
      timer = setTimeout(() => res('timeout'), this.opts.maxWaitMs ?? 10_000);
    });
    try {
      const got = await Promise.race([Promise.all(mine.map((l) => l.schedule({ priority: SHARED_PRIORITY[cls] }, async () => undefined))).then(() => 'ok' as const), timeout]);
      if (got === 'timeout') this.timeouts++;
    } catch {
      this.fallback('a shared token could not be taken');
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all([...this.limiters.values()].map((l) => Promise.resolve().then(() => l.stop({ dropWaitingJobs: true })).catch(() => undefined)));
    await Promise.resolve().then(() => this.connection.disconnect(false)).catch(() => undefined);
    this.client.disconnect();
  }

  private resume(): void {
    if (this.stopped || this.current === 'shared') return;
    this.applyLocal('shared', 'redis answers');
  }

  private fallback(reason: string): void {
    if (this.stopped || this.current === 'local_fallback') return;
    this.applyLocal('local_fallback', reason);
  }

  private applyLocal(mode: BudgetMode, reason: string): void {
    this.current = mode;
    for (const [scope, spec] of Object.entries(this.opts.specs)) {
      this.opts.setLocalSpec(scope, mode === 'shared' ? spec : shareOf(spec, this.opts.fallbackShare));
    }
    this.opts.onModeChange?.(mode, reason);
  }
}
