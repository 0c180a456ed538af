import type { Clock, TimerHandle } from '../time/clock.js';
import { addDecimals, isDecimal } from '../venue/decimal.js';
import { distinctOrders, type InfoOpenOrders } from '../venue/info-decode.js';
import type { InfoPositions, InfoReadOptions } from '../venue/port.js';
import type { OpenOrder, OrdersPage, Position, PositionsPage } from '../venue/types.js';

/**
 * Watches one account's open orders and positions by polling. The venue port admits every page
 * through the shared budget as a read (so reads are shed before arms under pressure). A
 * notification or a lapsed deadline asks for a prompt `reconcile()`. The reads come from the
 * service's listing or the venue's info endpoint (`watch.source`, WatchSourceMode); each report
 * says which answered.
 */
export interface WatchSource {
  ordersPages(address: string, opts?: { signal?: AbortSignal }): AsyncGenerator<OrdersPage>;
  positionsPages(address: string, opts?: { signal?: AbortSignal }): AsyncGenerator<PositionsPage>;
  /**
   * The venue's own count (POST {exchange_url}/info): every order the scheduled cancel hits, on the
   * default listing and on each builder-deployed dex of `dexes` (summed; one failing fails it all).
   */
  infoOpenOrders(address: string, opts?: InfoReadOptions): Promise<InfoOpenOrders>;
  infoPositions(address: string, opts?: InfoReadOptions): Promise<InfoPositions>;
  /**
   * Under `service_then_venue`: whether this read asks the service first (it answers, or this read
   * is the keeper's one probe of it while it fails: venue/routes.ts). Absent: always.
   */
  serviceReadTurn?(): boolean;
}

/** Where a read came from: the service's listing or the venue's info endpoint (the metric's label values). */
export { READ_SOURCES, type ReadSource } from '../obs/metrics.js';
import type { ReadSource } from '../obs/metrics.js';

/**
 * `watch.source`: `service` (today's reads), `venue` (the info endpoint alone: needs no service),
 * or `service_then_venue` (the service, and the venue for each read the service fails: back on
 * the service as soon as it answers).
 */
export type WatchSourceMode = 'service' | 'venue' | 'service_then_venue';

/**
 * The venue's open orders in the service's shape (what the keeper keeps of them: the count is
 * what it acts on).
 */
export function ordersFromInfo(r: InfoOpenOrders): OpenOrder[] {
  return r.orders.map((o) => ({
    ...(o.oid !== undefined ? { venue_order_id: String(o.oid) } : {}),
    ...(o.side !== undefined ? { side: o.side === 'B' ? 0 : 1 } : {}),
    ...(o.limitPx !== undefined ? { price: o.limitPx } : {}),
    ...(o.sz !== undefined ? { remaining_quantity: o.sz } : {}),
    status: 'open' as const,
  }));
}

/** A decimal text that is present and not zero. */
function nonZero(d: string | undefined): boolean {
  return d !== undefined && isDecimal(d) && !/^[-+]?0*(\.0*)?$/.test(d);
}

/** The quote currency of spot balances: cash, not a position. */
const SPOT_QUOTE = 'USDC';

/** A read that failed: `reason` `shed` when our own budget dropped it to keep room for arms, else why the venue did not answer. */
export interface ReadFailure {
  reason: string;
  message: string;
}

/** Any read's failure as the reports take it (the watcher's, the address budget's, the agent check's). */
export function readFailureOf(e: unknown): ReadFailure {
  const err = e as { reason?: unknown; message?: unknown } | null;
  return { reason: typeof err?.reason === 'string' ? err.reason : 'internal', message: String(err?.message ?? e) };
}

/**
 * The positions a fired cancel leaves open, as the venue holds them: every perp position with a
 * size (`szi` not 0), and every spot token held other than USDC (outcome positions are spot
 * tokens there). Value and PnL are the perp positions' (a spot balance carries no mark).
 */
export function positionsFromInfo(r: InfoPositions): Position[] {
  const perp: Position[] = r.perp
    .filter((p) => nonZero(p.szi))
    .map((p) => ({
      ...(p.szi !== undefined ? { quantity: p.szi } : {}),
      ...(p.entryPx !== undefined ? { average_entry_price: p.entryPx } : {}),
      ...(p.positionValue !== undefined ? { value_usdc: p.positionValue } : {}),
      ...(p.unrealizedPnl !== undefined ? { unrealized_pnl_usdc: p.unrealizedPnl } : {}),
    }));
  const spot: Position[] = r.balances.filter((b) => b.coin !== SPOT_QUOTE && nonZero(b.total)).map((b) => ({ ...(b.total !== undefined ? { quantity: b.total } : {}) }));
  return [...perp, ...spot];
}

export interface PositionsSummary {
  count: number;
  valueUsdc: string;
  unrealizedPnlUsdc: string;
  positions: Position[];
}

export type WatchReport =
  | { type: 'orders'; count: number; orders: OpenOrder[]; atMs: number; source: ReadSource }
  | ({ type: 'positions'; atMs: number; source: ReadSource } & PositionsSummary)
  | ({ type: 'read_failed'; what: 'orders' | 'positions' } & ReadFailure);

export interface WatcherDeps {
  clock: Clock;
  source: WatchSource;
  report: (r: WatchReport) => void;
  /** Where reads come from (`watch.source`); default `service`. */
  mode?: WatchSourceMode;
  /**
   * Under `service_then_venue`: count this account's orders on the venue first (true for
   * `arm_when: orders_open`, asked at each read so a reload applies). See readOrders.
   */
  countOrdersOnVenue?: () => boolean;
  /**
   * Builder-deployed perp dexes (HIP-3) read on the venue besides the default listing
   * (`watch.perp_dexes`, asked at each read so a reload applies): the venue lists their orders and
   * positions only when asked by name, and the scheduled cancel hits them too.
   */
  perpDexes?: () => readonly string[];
  /** false: the source publishes no positions (a CLOB venue), none are read; default true. */
  positions?: boolean;
}

/** A failed read that is not the service failing: our own budget shed it, or it was aborted. */
function notTheService(e: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (e as { reason?: unknown } | null)?.reason === 'shed';
}

export function summarizePositions(positions: Position[]): PositionsSummary {
  return {
    count: positions.length,
    valueUsdc: addDecimals(positions.map((p) => p.value_usdc ?? '0')),
    unrealizedPnlUsdc: addDecimals(positions.map((p) => p.unrealized_pnl_usdc ?? '0')),
    positions,
  };
}

/**
 * When a watcher's first reads go (read-stagger.ts decides): `afterMs` after its start plus `phase`
 * (in [0, 1)) of each read's period in force, orders at once when `ordersNow`.
 */
export interface FirstReads {
  afterMs: number;
  phase: number;
  ordersNow: boolean;
}

/** Both first reads at once (a single watcher, tests). */
const AT_ONCE: FirstReads = { afterMs: 0, phase: 0, ordersNow: true };

export class AccountWatcher {
  /**
   * One timer for both polls, set for the earlier of their due times (monotonic ms; null: none
   * due). Two timers an account were 20,000 Timeout objects at 10,000 accounts (a heap snapshot:
   * three an account with the re-arm's, 3.6 MB with their timer lists).
   */
  private timer: TimerHandle | null = null;
  private timerAtMs = Number.POSITIVE_INFINITY;
  private readonly dueMs: { orders: number | null; positions: number | null } = { orders: null, positions: null };
  private running = false;
  /**
   * The first reads still waiting for their place (start), and when the watcher started (monotonic
   * ms): a new period re-times them (setIntervals). Null once both have gone.
   */
  private firstPending: { orders: boolean; positions: boolean; first: FirstReads; startedMonoMs: number } | null = null;
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
   * Starts polling; the first reads may be held back (the keeper spreads them across accounts over
   * the planned period, so that a start with thousands of accounts reads at the steady pace).
   */
  start(first: FirstReads = AT_ONCE): void {
    if (this.running) return;
    this.running = true;
    this.firstPending = { orders: true, positions: this.deps.positions !== false, first, startedMonoMs: this.deps.clock.monoMs() };
    this.timeFirstReads();
  }

  stop(): void {
    this.running = false;
    this.firstPending = null;
    this.abort?.abort(new Error('watcher stopped'));
    this.abort = null;
    this.dueMs.orders = this.dueMs.positions = null;
    this.rearm();
  }

  /** `what` is due in `inMs` (null: not due); the one timer follows the earlier due time. */
  private due(what: 'orders' | 'positions', inMs: number | null): void {
    this.dueMs[what] = inMs === null ? null : this.deps.clock.monoMs() + inMs;
    this.rearm();
  }

  private rearm(): void {
    const { orders, positions } = this.dueMs;
    const atMs = Math.min(orders ?? Number.POSITIVE_INFINITY, positions ?? Number.POSITIVE_INFINITY);
    if (atMs === this.timerAtMs) return;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    this.timerAtMs = atMs;
    if (atMs === Number.POSITIVE_INFINITY) return;
    this.timer = this.deps.clock.setTimeout(() => this.fire(), Math.max(0, atMs - this.deps.clock.monoMs()));
  }

  /** The timer: each poll whose time has come goes, orders first. */
  private fire(): void {
    // The earlier due time is what the timer was set for (rearm keeps it so): it goes even on a
    // clock read a ms short.
    const now = Math.max(this.deps.clock.monoMs(), this.timerAtMs);
    this.timer = null;
    this.timerAtMs = Number.POSITIVE_INFINITY;
    const { orders, positions } = this.dueMs;
    const ordersDue = orders !== null && orders <= now;
    const positionsDue = positions !== null && positions <= now;
    // Taken before the polls: one coalesced into a read in flight must not stay due (and refire).
    if (ordersDue) this.dueMs.orders = null;
    if (positionsDue) this.dueMs.positions = null;
    if (ordersDue) void this.pollOrders();
    if (positionsDue) void this.pollPositions();
    this.rearm();
  }

  /** New periods: the next reads go at them, and first reads still waiting take their place in them. */
  setIntervals(intervals: { ordersEveryMs: number; positionsEveryMs: number }): void {
    const moved = intervals.ordersEveryMs !== this.intervals.ordersEveryMs || intervals.positionsEveryMs !== this.intervals.positionsEveryMs;
    this.intervals = intervals;
    if (moved && this.running) this.timeFirstReads();
  }

  /**
   * (Re-)times the first reads still waiting at their place in the periods in force: when a pace
   * achieved stretches the reads, the first round stretches with them, as later rounds do.
   */
  private timeFirstReads(): void {
    const p = this.firstPending;
    if (!p) return;
    const elapsedMs = this.deps.clock.monoMs() - p.startedMonoMs;
    const dueInMs = (periodMs: number): number => p.first.afterMs + p.first.phase * periodMs - elapsedMs;
    if (p.orders) {
      const inMs = p.first.ordersNow ? 0 : dueInMs(this.intervals.ordersEveryMs);
      if (inMs > 0) this.due('orders', inMs);
      else void this.pollOrders();
    }
    if (p.positions) {
      const inMs = dueInMs(this.intervals.positionsEveryMs);
      if (inMs > 0) this.due('positions', inMs);
      else void this.pollPositions();
    }
  }

  /** A read of `what` is starting: it is no longer a first read waiting for its place. */
  private firstGone(what: 'orders' | 'positions'): void {
    const p = this.firstPending;
    if (!p) return;
    p[what] = false;
    if (!p.orders && !p.positions) this.firstPending = null;
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
    this.firstGone('orders');
    this.due('orders', null);
    this.ordersInFlight = this.readOrders(this.signal())
      .then(
        ({ orders, count, source }) => {
          this.deps.report({ type: 'orders', count, orders, atMs: this.deps.clock.nowMs(), source });
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
        if (this.running) this.due('orders', this.intervals.ordersEveryMs);
      });
    return this.ordersInFlight;
  }

  private pollPositions(): Promise<PositionsSummary | undefined> {
    if (!this.running || this.deps.positions === false) return Promise.resolve(undefined);
    if (this.positionsInFlight) return this.positionsInFlight;
    this.firstGone('positions');
    this.due('positions', null);
    this.positionsInFlight = this.readPositions(this.signal())
      .then(
        ({ positions, source }) => {
          const summary = summarizePositions(positions);
          this.deps.report({ type: 'positions', atMs: this.deps.clock.nowMs(), source, ...summary });
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
        if (this.running) this.due('positions', this.intervals.positionsEveryMs);
      });
    return this.positionsInFlight;
  }

  /** Orders from the configured source; `service_then_venue` asks the venue when the service failed. */
  private async readOrders(signal: AbortSignal): Promise<{ orders: OpenOrder[]; count: number; source: ReadSource }> {
    const fromVenue = async () => {
      const r = await this.deps.source.infoOpenOrders(this.address, this.venueReadOptions(signal));
      return { orders: ordersFromInfo(r), count: r.count, source: 'venue' as const };
    };
    const mode = this.deps.mode ?? 'service';
    if (mode === 'venue') return fromVenue();
    const fromService = async () => {
      // A primary and its dual (HIP-4's merged book) share the order id: one order (ASSUMED.outcomeDualSharesOid).
      const orders = distinctOrders(await this.readAll(this.deps.source.ordersPages(this.address, { signal })), (o) => o.venue_order_id);
      return { orders, count: orders.length, source: 'service' as const };
    };
    // `arm_when: orders_open` under service_then_venue arms on the venue's count (issue 20 item 4):
    // the cancel hits every order the info endpoint lists, the service's listing may show none.
    // One info read (weight 20 of the IP's 1,200 a minute) per orders period replaces the service
    // read instead of adding to it: its orders are shown too, so reading both would buy nothing.
    // `always` accounts spend no venue weight (their count decides nothing). A venue read that
    // fails falls back to the service's count; one our budget shed (or aborted) stays unknown,
    // which arms, without spending another read under pressure.
    if (mode === 'service_then_venue' && this.deps.countOrdersOnVenue?.()) {
      try {
        return await fromVenue();
      } catch (e) {
        if (notTheService(e, signal)) throw e;
        return fromService();
      }
    }
    if (!this.asksService(mode)) return fromVenue();
    try {
      return await fromService();
    } catch (e) {
      if (mode !== 'service_then_venue' || notTheService(e, signal)) throw e;
      return fromVenue();
    }
  }

  /** Whether a read goes to the service first: always under `service`; under `service_then_venue` while it answers, and as the probe while it fails. */
  private asksService(mode: WatchSourceMode): boolean {
    return mode === 'service' || (this.deps.source.serviceReadTurn?.() ?? true);
  }

  private async readPositions(signal: AbortSignal): Promise<{ positions: Position[]; source: ReadSource }> {
    const fromVenue = async () => ({ positions: positionsFromInfo(await this.deps.source.infoPositions(this.address, this.venueReadOptions(signal))), source: 'venue' as const });
    const mode = this.deps.mode ?? 'service';
    if (mode === 'venue' || !this.asksService(mode)) return fromVenue();
    try {
      return { positions: await this.readAll(this.deps.source.positionsPages(this.address, { signal })), source: 'service' };
    } catch (e) {
      if (mode !== 'service_then_venue' || notTheService(e, signal)) throw e;
      return fromVenue();
    }
  }

  /** A venue read's options: the read's signal and the builder dexes it covers. */
  private venueReadOptions(signal: AbortSignal): InfoReadOptions {
    const dexes = this.deps.perpDexes?.() ?? [];
    return dexes.length > 0 ? { signal, dexes } : { signal };
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
    this.deps.report({ type: 'read_failed', what, ...readFailureOf(e) });
  }
}
