import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { AccountWatcher, type WatchReport, type WatchSource } from './watcher.js';

/** A source whose reads hang until released (or aborted), recording the signal each read got. */
function hangingSource() {
  const signals: AbortSignal[] = [];
  const pending: Array<() => void> = [];
  const pages = async function* (opts?: { signal?: AbortSignal }) {
    const signal = opts!.signal!;
    signals.push(signal);
    await new Promise<void>((resolve, reject) => {
      pending.push(resolve);
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
    yield { data: [] };
  };
  const source = {
    ordersPages: (_a: string, opts?: { signal?: AbortSignal }) => pages(opts),
    positionsPages: (_a: string, opts?: { signal?: AbortSignal }) => pages(opts),
  } as unknown as WatchSource;
  return { source, signals, releaseAll: () => pending.splice(0).forEach((r) => r()) };
}

describe('AccountWatcher', () => {
  it('stop aborts the reads in flight; reads after a finished round get a fresh signal', async () => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const { source, signals, releaseAll } = hangingSource();
    const reports: WatchReport[] = [];
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 10_000, positionsEveryMs: 10_000 }, { clock, source, report: (r) => reports.push(r) });
    w.start();
    await clock.advance(1);
    expect(signals).toHaveLength(2); // orders and positions, in flight together: one signal
    expect(signals[0]).toBe(signals[1]);
    releaseAll();
    await clock.advance(10_001);
    expect(reports.filter((r) => r.type === 'orders')).toHaveLength(1);
    expect(signals).toHaveLength(4);
    expect(signals[2]).not.toBe(signals[0]); // the first round's controller was dropped
    expect(signals[2]!.aborted).toBe(false);
    w.stop();
    expect(signals[2]!.aborted).toBe(true);
    expect((signals[2]!.reason as Error).message).toBe('watcher stopped');
  });
});

describe('AccountWatcher first reads', () => {
  /** A source that answers at once and records when each kind was read (ms since `t0`). */
  function timedSource(clock: FakeClock, t0: number) {
    const at: Record<'orders' | 'positions', number[]> = { orders: [], positions: [] };
    const pages = (what: 'orders' | 'positions') =>
      async function* () {
        at[what].push(clock.monoMs() - t0);
        yield { data: [] };
      };
    const source = { ordersPages: () => pages('orders')(), positionsPages: () => pages('positions')() } as unknown as WatchSource;
    return { source, at };
  }

  it('go at their phase of the period in force, then every period', async () => {
    const clock = new FakeClock(0);
    const { source, at } = timedSource(clock, 0);
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 30_000, positionsEveryMs: 60_000 }, { clock, source, report: () => undefined });
    w.start({ afterMs: 1_000, phase: 0.5, ordersNow: false });
    await clock.advance(100_000);
    expect(at.orders).toEqual([16_000, 46_000, 76_000]);
    expect(at.positions).toEqual([31_000, 91_000]);
  });

  it('both polls on one timer, at their own times, the same ones as on two; none left once stopped', async () => {
    const clock = new FakeClock(0);
    const { source, at } = timedSource(clock, 0);
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 30_000, positionsEveryMs: 45_000 }, { clock, source, report: () => undefined });
    w.start({ afterMs: 1_000, phase: 0.5, ordersNow: false });
    const pending: number[] = [];
    for (let t = 0; t < 100_000; t += 2_500) {
      await clock.advance(2_500);
      pending.push(clock.pendingTimers());
    }
    expect(at.orders).toEqual([16_000, 46_000, 76_000]);
    expect(at.positions).toEqual([23_500, 68_500]);
    // One Timeout an account for its reads (two were 20,000 of them at 10,000 accounts).
    expect(Math.max(...pending)).toBe(1);
    w.stop();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('still waiting when the plan stretches the periods, they take their place in the new ones (and no earlier than now)', async () => {
    const clock = new FakeClock(0);
    const { source, at } = timedSource(clock, 0);
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 30_000, positionsEveryMs: 60_000 }, { clock, source, report: () => undefined });
    w.start({ afterMs: 0, phase: 0.5, ordersNow: false });
    await clock.advance(10_000);
    w.setIntervals({ ordersEveryMs: 60_000, positionsEveryMs: 120_000 });
    await clock.advance(30_000);
    expect(at.orders).toEqual([30_000]);
    expect(at.positions).toEqual([]);
    // Back to the configured periods at 40 s: the positions' first read, still waiting, has its place (30 s) behind it.
    w.setIntervals({ ordersEveryMs: 30_000, positionsEveryMs: 60_000 });
    await clock.advance(0);
    expect(at.positions).toEqual([40_000]);
    await clock.advance(60_000);
    // A later read keeps the period it was timed with (orders: 60 s from 30 s).
    expect(at.orders).toEqual([30_000, 90_000]);
    expect(at.positions).toEqual([40_000, 100_000]);
    w.stop();
  });

  it('orders at once for an account that arms on its orders', async () => {
    const clock = new FakeClock(0);
    const { source, at } = timedSource(clock, 0);
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 30_000, positionsEveryMs: 60_000 }, { clock, source, report: () => undefined });
    w.start({ afterMs: 0, phase: 0.9, ordersNow: true });
    await clock.advance(1);
    expect(at.orders).toEqual([0]);
    expect(at.positions).toEqual([]);
    w.stop();
  });
});

/** A source whose service reads fail while `serviceDown`, and whose venue shows its own counts. */
function twoSources(opts: { serviceOrders: number; venueOrders: number; serviceDown?: boolean }) {
  const calls: string[] = [];
  const state = { serviceDown: opts.serviceDown ?? false };
  const failing = async function* (): AsyncGenerator<never> {
    yield* [];
    throw Object.assign(new Error('503 UNAVAILABLE'), { reason: 'http_503' });
  };
  const source: WatchSource = {
    ordersPages: (_a: string) => {
      calls.push('service:orders');
      return state.serviceDown ? failing() : (async function* () { yield { data: Array.from({ length: opts.serviceOrders }, (_, i) => ({ order_id: `s${i}` })) }; })();
    },
    positionsPages: (_a: string) => {
      calls.push('service:positions');
      return state.serviceDown ? failing() : (async function* () { yield { data: [{ outcome_id: '1', value_usdc: '5', unrealized_pnl_usdc: '1' }] }; })();
    },
    infoOpenOrders: async () => {
      calls.push('venue:orders');
      const orders = Array.from({ length: opts.venueOrders }, (_, i) => ({ oid: i + 1, coin: 'BTC', side: 'B' as const, sz: '1', limitPx: '10' }));
      return { type: 'frontendOpenOrders' as const, orders, count: orders.length };
    },
    infoPositions: async () => {
      calls.push('venue:positions');
      return {
        perp: [{ coin: 'ETH', szi: '-2', positionValue: '100.5', unrealizedPnl: '-3' }, { coin: 'SOL', szi: '0' }],
        balances: [{ coin: 'USDC', total: '50' }, { coin: '#42', total: '3' }, { coin: 'PURR', total: '0' }],
      };
    },
  };
  return { source, calls, state };
}

describe('AccountWatcher: where reads come from (watch.source)', () => {
  const start = (source: WatchSource, mode: 'service' | 'venue' | 'service_then_venue') => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const reports: WatchReport[] = [];
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 10_000, positionsEveryMs: 10_000 }, { clock, source, report: (r) => reports.push(r), mode });
    w.start();
    return { clock, reports, w };
  };

  it('service (the default): the service alone, as today', async () => {
    const { source, calls } = twoSources({ serviceOrders: 2, venueOrders: 5 });
    const { clock, reports, w } = start(source, 'service');
    await clock.advance(1);
    expect(calls.sort()).toEqual(['service:orders', 'service:positions']);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 2, source: 'service' });
    w.stop();
  });

  it("venue: every order the cancel hits and the venue's positions (perp positions held, spot tokens held, not USDC)", async () => {
    const { source, calls } = twoSources({ serviceOrders: 2, venueOrders: 5 });
    const { clock, reports, w } = start(source, 'venue');
    await clock.advance(1);
    expect(calls.sort()).toEqual(['venue:orders', 'venue:positions']);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 5, source: 'venue' });
    expect(reports.find((r) => r.type === 'positions')).toMatchObject({ count: 2, source: 'venue', valueUsdc: '100.5', unrealizedPnlUsdc: '-3' });
    w.stop();
  });

  it('service_then_venue: the venue while the service fails, the service again as soon as it answers', async () => {
    const { source, calls, state } = twoSources({ serviceOrders: 2, venueOrders: 5, serviceDown: true });
    const { clock, reports, w } = start(source, 'service_then_venue');
    await clock.advance(1);
    expect(calls.filter((c) => c.endsWith('orders'))).toEqual(['service:orders', 'venue:orders']);
    expect(reports.filter((r) => r.type === 'read_failed')).toEqual([]);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 5, source: 'venue' });
    expect(reports.find((r) => r.type === 'positions')).toMatchObject({ count: 2, source: 'venue' });
    state.serviceDown = false;
    reports.length = 0;
    calls.length = 0;
    await clock.advance(10_000);
    expect(calls.sort()).toEqual(['service:orders', 'service:positions']);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 2, source: 'service' });
    w.stop();
  });

  it('service_then_venue: not its turn to probe the failing service, a read goes straight to the venue; service mode never asks', async () => {
    const { source, calls } = twoSources({ serviceOrders: 2, venueOrders: 5, serviceDown: true });
    let turns = 0;
    const probing = { ...source, serviceReadTurn: () => (turns++, false) };
    const { clock, reports, w } = start(probing, 'service_then_venue');
    await clock.advance(1);
    expect(calls.sort()).toEqual(['venue:orders', 'venue:positions']);
    expect(turns).toBe(2);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 5, source: 'venue' });
    w.stop();

    const plain = twoSources({ serviceOrders: 2, venueOrders: 5 });
    const s = start({ ...plain.source, serviceReadTurn: () => (turns++, false) }, 'service');
    await s.clock.advance(1);
    expect(plain.calls.sort()).toEqual(['service:orders', 'service:positions']);
    expect(turns).toBe(2);
    s.w.stop();
  });

  it('service_then_venue: a read our own budget shed is not a failing service (no venue read spent on it)', async () => {
    const { source, calls } = twoSources({ serviceOrders: 2, venueOrders: 5 });
    const shed = { ...source, ordersPages: () => (async function* (): AsyncGenerator<never> { yield* []; throw Object.assign(new Error('shed'), { reason: 'shed' }); })() };
    const { clock, reports, w } = start(shed, 'service_then_venue');
    await clock.advance(1);
    expect(calls).not.toContain('venue:orders');
    expect(reports.find((r) => r.type === 'read_failed')).toMatchObject({ what: 'orders', reason: 'shed' });
    w.stop();
  });
});

describe('AccountWatcher: service_then_venue counts orders_open accounts on the venue', () => {
  const start = (source: WatchSource, countOnVenue: () => boolean) => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const reports: WatchReport[] = [];
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 10_000, positionsEveryMs: 10_000 }, { clock, source, report: (r) => reports.push(r), mode: 'service_then_venue', countOrdersOnVenue: countOnVenue });
    w.start();
    return { clock, reports, w };
  };

  it("the venue's count while the service answers, and no service orders read beside it", async () => {
    const { source, calls } = twoSources({ serviceOrders: 0, venueOrders: 3 });
    const { clock, reports, w } = start(source, () => true);
    await clock.advance(1);
    expect(calls.filter((c) => c.endsWith('orders'))).toEqual(['venue:orders']);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 3, source: 'venue' });
    // positions stay on the service
    expect(reports.find((r) => r.type === 'positions')).toMatchObject({ source: 'service' });
    w.stop();
  });

  it("the service's count when the venue read fails; a shed venue read is unknown (counts as open)", async () => {
    const { source, calls } = twoSources({ serviceOrders: 2, venueOrders: 3 });
    const fail = (reason: string) => ({ ...source, infoOpenOrders: async () => { calls.push('venue:orders'); throw Object.assign(new Error(reason), { reason }); } });
    let { clock, reports, w } = start(fail('http_503'), () => true);
    await clock.advance(1);
    expect(calls.filter((c) => c.endsWith('orders'))).toEqual(['venue:orders', 'service:orders']);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 2, source: 'service' });
    w.stop();
    calls.length = 0;
    ({ clock, reports, w } = start(fail('shed'), () => true));
    await clock.advance(1);
    expect(calls.filter((c) => c.endsWith('orders'))).toEqual(['venue:orders']);
    expect(reports.find((r) => r.type === 'read_failed')).toMatchObject({ what: 'orders', reason: 'shed' });
    w.stop();
  });

  it('an account that arms always stays on the service (no venue weight spent)', async () => {
    const { source, calls } = twoSources({ serviceOrders: 2, venueOrders: 3 });
    const { clock, reports, w } = start(source, () => false);
    await clock.advance(1);
    expect(calls.sort()).toEqual(['service:orders', 'service:positions']);
    expect(reports.find((r) => r.type === 'orders')).toMatchObject({ count: 2, source: 'service' });
    w.stop();
  });
});

describe('AccountWatcher: the builder-deployed perp dexes (watch.perp_dexes)', () => {
  it('asks the venue for them at each read (a reload applies at the next one); none: the default listing alone', async () => {
    const seen: Array<{ what: string; dexes: readonly string[] | undefined }> = [];
    const { source } = twoSources({ serviceOrders: 0, venueOrders: 1 });
    const recording: WatchSource = {
      ...source,
      infoOpenOrders: async (a, opts) => {
        seen.push({ what: 'orders', dexes: opts?.dexes });
        return source.infoOpenOrders(a, opts);
      },
      infoPositions: async (a, opts) => {
        seen.push({ what: 'positions', dexes: opts?.dexes });
        return source.infoPositions(a, opts);
      },
    };
    let dexes: string[] = ['xyz'];
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 10_000, positionsEveryMs: 10_000 }, { clock, source: recording, report: () => undefined, mode: 'venue', perpDexes: () => dexes });
    w.start();
    await clock.advance(1);
    expect(seen.sort((a, b) => a.what.localeCompare(b.what))).toEqual([
      { what: 'orders', dexes: ['xyz'] },
      { what: 'positions', dexes: ['xyz'] },
    ]);
    seen.length = 0;
    dexes = [];
    await clock.advance(10_000);
    expect(seen.map((s) => s.dexes)).toEqual([undefined, undefined]);
    w.stop();
  });
});

describe('AccountWatcher: the merged Yes/No book (HIP-4)', () => {
  it("counts a primary and its dual (one venue_order_id) once in the service's listing, across pages", async () => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const source = {
      ordersPages: async function* () {
        yield { data: [{ venue_order_id: '7', outcome_id: 'o', side: 0, direction: 'buy', price: '0.4' }, { venue_order_id: '8' }] };
        // the dual of order 7: the other side, the opposite direction, 1 - price, the same id
        yield { data: [{ venue_order_id: '7', outcome_id: 'o', side: 1, direction: 'sell', price: '0.6' }, { order_id: 'no-venue-id' }] };
      },
      positionsPages: async function* () {
        yield { data: [] };
      },
    } as unknown as WatchSource;
    const reports: WatchReport[] = [];
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 10_000, positionsEveryMs: 10_000 }, { clock, source, report: (r) => reports.push(r) });
    w.start();
    await clock.advance(1);
    w.stop();
    const orders = reports.find((r) => r.type === 'orders');
    expect(orders).toMatchObject({ type: 'orders', count: 3 });
    expect((orders as { orders: Array<{ venue_order_id?: string }> }).orders.map((o) => o.venue_order_id)).toEqual(['7', '8', undefined]);
  });
});
