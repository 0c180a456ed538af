import type { Clock, TimerHandle } from '../sched/clock.js';
import { addDecimals } from '../venue/decimal.js';
import type { OpenOrder, OrdersPage, Position, PositionsPage } from '../venue/types.js';

/**
 * Watches one account's open orders and positions by polling. The venue port admits every page
 * through the shared budget as a read (so reads are shed before arms under pressure). A
 * notification or a lapsed deadline asks for a prompt `reconcile()`.
 */
export interface WatchSource {
  ordersPages(address: string, opts?: { signal?: AbortSignal }): AsyncGenerator<OrdersPage>;
  positionsPages(address: string, opts?: { signal?: AbortSignal }): AsyncGenerator<PositionsPage>;
}

export interface PositionsSummary {
  count: number;
  valueUsdc: string;
  unrealizedPnlUsdc: string;
  positions: Position[];
}

export type WatchReport =
  | { type: 'orders'; count: number; orders: OpenOrder[]; atMs: number }
  | ({ type: 'positions'; atMs: number } & PositionsSummary)
  | { type: 'read_failed'; what: 'orders' | 'positions'; reason: string; message: string };

export interface WatcherDeps {
  clock: Clock;
  source: WatchSource;
  report: (r: WatchReport) => void;
}

export function summarizePositions(positions: Position[]): PositionsSummary {
  return {
    count: positions.length,
    valueUsdc: addDecimals(positions.map((p) => p.value_usdc ?? '0')),
    unrealizedPnlUsdc: addDecimals(positions.map((p) => p.unrealized_pnl_usdc ?? '0')),
    positions,
  };
}

export class AccountWatcher {
  private ordersTimer: TimerHandle | null = null;
  private positionsTimer: TimerHandle | null = null;
  private running = false;
  /** Aborts the reads in flight; made when a read starts and dropped when none is left (account-runner.ts says why). */
  private abort: AbortController | null = null;
  private ordersInFlight: Promise<OpenOrder[] | undefined> | null = null;
  private positionsInFlight: Promise<PositionsSummary | undefined> | null = null;

  constructor(
    readonly address: string,
    private intervals: { ordersEveryMs: number; positionsEveryMs: number },
    private readonly deps: WatcherDeps,
  ) {}

  /**
   * Starts polling; the first reads may be held back (the keeper staggers them across accounts so
   * that a start with thousands of accounts does not queue every read at once).
   */
  start(firstDelayMs: { ordersMs: number; positionsMs: number } = { ordersMs: 0, positionsMs: 0 }): void {
    if (this.running) return;
    this.running = true;
    if (firstDelayMs.ordersMs > 0) this.ordersTimer = this.deps.clock.setTimeout(() => void this.pollOrders(), firstDelayMs.ordersMs);
    else void this.pollOrders();
    if (firstDelayMs.positionsMs > 0) this.positionsTimer = this.deps.clock.setTimeout(() => void this.pollPositions(), firstDelayMs.positionsMs);
    else void this.pollPositions();
  }

  stop(): void {
    this.running = false;
    this.abort?.abort(new Error('watcher stopped'));
    this.abort = null;
    if (this.ordersTimer) this.deps.clock.clearTimeout(this.ordersTimer);
    if (this.positionsTimer) this.deps.clock.clearTimeout(this.positionsTimer);
    this.ordersTimer = this.positionsTimer = null;
  }

  setIntervals(intervals: { ordersEveryMs: number; positionsEveryMs: number }): void {
    this.intervals = intervals;
  }

  /** Reads orders and positions now (a notification arrived, or a deadline passed). */
  async reconcile(): Promise<{ orders?: OpenOrder[]; positions?: PositionsSummary }> {
    const [orders, positions] = await Promise.all([this.pollOrders(), this.pollPositions()]);
    return { orders, positions };
  }

  private pollOrders(): Promise<OpenOrder[] | undefined> {
    if (!this.running) return Promise.resolve(undefined);
    // Coalesce: a reconcile during a poll waits for that poll instead of doubling the reads.
    if (this.ordersInFlight) return this.ordersInFlight;
    if (this.ordersTimer) this.deps.clock.clearTimeout(this.ordersTimer);
    this.ordersTimer = null;
    this.ordersInFlight = this.readAll(this.deps.source.ordersPages(this.address, { signal: this.signal() }))
      .then(
        (orders) => {
          this.deps.report({ type: 'orders', count: orders.length, orders, atMs: this.deps.clock.nowMs() });
          return orders;
        },
        (e: unknown) => {
          this.reportFailure('orders', e);
          return undefined;
        },
      )
      .finally(() => {
        this.ordersInFlight = null;
        this.releaseSignal();
        if (this.running) this.ordersTimer = this.deps.clock.setTimeout(() => void this.pollOrders(), this.intervals.ordersEveryMs);
      });
    return this.ordersInFlight;
  }

  private pollPositions(): Promise<PositionsSummary | undefined> {
    if (!this.running) return Promise.resolve(undefined);
    if (this.positionsInFlight) return this.positionsInFlight;
    if (this.positionsTimer) this.deps.clock.clearTimeout(this.positionsTimer);
    this.positionsTimer = null;
    this.positionsInFlight = this.readAll(this.deps.source.positionsPages(this.address, { signal: this.signal() }))
      .then(
        (positions) => {
          const summary = summarizePositions(positions);
          this.deps.report({ type: 'positions', atMs: this.deps.clock.nowMs(), ...summary });
          return summary;
        },
        (e: unknown) => {
          this.reportFailure('positions', e);
          return undefined;
        },
      )
      .finally(() => {
        this.positionsInFlight = null;
        this.releaseSignal();
        if (this.running) this.positionsTimer = this.deps.clock.setTimeout(() => void this.pollPositions(), this.intervals.positionsEveryMs);
      });
    return this.positionsInFlight;
  }

  private signal(): AbortSignal {
    return (this.abort ??= new AbortController()).signal;
  }

  private releaseSignal(): void {
    if (!this.ordersInFlight && !this.positionsInFlight) this.abort = null;
  }

  /** Every cursor page (the port admits each one). */
  private async readAll<T>(pages: AsyncGenerator<{ data?: T[] }>): Promise<T[]> {
    const out: T[] = [];
    for await (const page of pages) out.push(...(page.data ?? []));
    return out;
  }

  private reportFailure(what: 'orders' | 'positions', e: unknown): void {
    if (!this.running) return;
    const err = e as { reason?: unknown; message?: unknown };
    this.deps.report({ type: 'read_failed', what, reason: typeof err?.reason === 'string' ? err.reason : 'internal', message: String(err?.message ?? e) });
  }
}
