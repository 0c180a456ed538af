import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { RequestScheduler, type RequestOptions } from '../budget/scheduler.js';
import { VenueClock } from '../time/venue-clock.js';
import type { HttpRequest, HttpResponse, HttpTransport } from './http.js';
import { NoServiceError, SCOPES, VenuePort } from './port.js';

/**
 * The port's info reads (issue 20, "Weights in the budget"): each admitted through the scheduler
 * with the venue's weight, in the `exchange` scope only (the venue's per-IP weight), not in the
 * service's `global` window.
 */
const USER = '0x' + '1'.repeat(40);
const MASTER = '0x' + '2'.repeat(40);

function answers(): Record<string, unknown> {
  return {
    frontendOpenOrders: [
      { coin: 'BTC', side: 'B', sz: '1.0', limitPx: '100.0', oid: 1, timestamp: 1 },
      { coin: '@107', side: 'A', sz: '2.0', limitPx: '0.5', oid: 2, timestamp: 2 },
    ],
    clearinghouseState: {
      assetPositions: [{ position: { coin: 'ETH', szi: '-0.5', entryPx: '2000.0', positionValue: '1010.0', unrealizedPnl: '-10.0' }, type: 'oneWay' }],
      marginSummary: { accountValue: '5000.0' },
      withdrawable: '4000.0',
    },
    spotClearinghouseState: {
      balances: [
        { coin: 'USDC', total: '100.0', hold: '0.0' },
        { coin: '#42', total: '3.0', hold: '0.0' },
        { coin: 'PURR', total: '0.0', hold: '0.0' },
      ],
    },
    userRole: { role: 'subAccount', data: { master: MASTER } },
    userRateLimit: { cumVlm: '2000000.0', nRequestsUsed: 10, nRequestsCap: 10010 },
  };
}

function fakeTransport(clock: FakeClock, sent: HttpRequest[]): HttpTransport {
  return {
    request: async (req: HttpRequest): Promise<HttpResponse> => {
      sent.push(req);
      const type = (req.json as { type: string }).type;
      const body = Buffer.from(JSON.stringify(answers()[type]));
      const now = clock.monoMs();
      return { status: 200, headers: { date: new Date(clock.nowMs()).toUTCString() }, body, dateHeader: new Date(clock.nowMs()).toUTCString(), latencyMs: 0, sentMonoMs: now, recvMonoMs: now } as HttpResponse;
    },
  } as unknown as HttpTransport;
}

/** A scheduler at the venue's 1,200 a minute that records what it admitted, on a fake clock. */
function recordingScheduler() {
  const clock = new FakeClock(1_700_000_000_000);
  const scheduler = new RequestScheduler(clock, { global: { limit: 1_200, windowMs: 60_000 }, exchange: { limit: 1_200, windowMs: 60_000 } });
  const admitted: RequestOptions[] = [];
  const run = scheduler.run.bind(scheduler);
  scheduler.run = <T>(opts: RequestOptions, fn: () => Promise<T>): Promise<T> => {
    admitted.push(opts);
    return run(opts, fn);
  };
  return { clock, scheduler, admitted };
}

function setup() {
  const { clock, scheduler, admitted } = recordingScheduler();
  const sent: HttpRequest[] = [];
  const port = new VenuePort({ baseUrl: 'http://service.invalid', exchangeUrl: 'http://venue.invalid', transport: fakeTransport(clock, sent), scheduler, venueClock: new VenueClock(clock), clock });
  return { clock, scheduler, port, admitted, sent };
}

describe('VenuePort: the venue info endpoint as a read source', () => {
  it('open orders: every order the cancel hits, a read of weight 20 on the exchange scope only', async () => {
    const { port, admitted, scheduler, sent } = setup();
    const r = await port.infoOpenOrders(USER);
    expect(r.count).toBe(2);
    expect(sent.map((s) => (s.json as { type: string }).type)).toEqual(['frontendOpenOrders']);
    expect(admitted).toHaveLength(1);
    expect(admitted[0]).toMatchObject({ kind: 'read', scopes: [SCOPES.exchange], weight: 20 });
    expect(scheduler.stats().scopes.exchange!.used).toBe(20);
    expect(scheduler.stats().scopes.global!.used).toBe(0);
  });

  it('positions: clearinghouseState and spotClearinghouseState, 2 each; perp positions and the spot tokens held', async () => {
    const { port, admitted, scheduler, clock } = setup();
    const pending = port.infoPositions(USER);
    await clock.advance(1_000); // the second waits for its slot of the grid (2 slots of 50 ms)
    const r = await pending;
    expect(admitted.map((a) => [a.kind, a.scopes, a.weight])).toEqual([
      ['read', [SCOPES.exchange], 2],
      ['read', [SCOPES.exchange], 2],
    ]);
    expect(scheduler.stats().scopes.exchange!.used).toBe(4);
    expect(r.perp).toHaveLength(1);
    expect(r.balances).toHaveLength(3);
  });

  it('userRole prepares a first arm (like resolving an account over REST): weight 60, after arms, before reads', async () => {
    const { port, admitted, scheduler } = setup();
    const r = await port.infoUserRole(USER);
    expect(r).toMatchObject({ role: 'subAccount', master: MASTER });
    expect(admitted[0]).toMatchObject({ kind: 'prepare', scopes: [SCOPES.exchange], weight: 60 });
    expect(scheduler.stats().scopes.exchange!.used).toBe(60);
  });

  it('userRateLimit: a read of weight 20', async () => {
    const { port, admitted } = setup();
    const r = await port.infoUserRateLimit(USER);
    expect(r.nRequestsCap).toBe(10010);
    expect(admitted[0]).toMatchObject({ kind: 'read', scopes: [SCOPES.exchange], weight: 20 });
  });

  it('a 429 on an info request holds the exchange scope, whatever scope its detail names', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const scheduler = new RequestScheduler(clock, { global: { limit: 1_200, windowMs: 60_000 }, exchange: { limit: 1_200, windowMs: 60_000 } });
    const transport = {
      request: async (): Promise<HttpResponse> =>
        ({
          status: 429,
          headers: { 'retry-after': '7', 'content-type': 'application/json' },
          body: Buffer.from(JSON.stringify({ status: 'RESOURCE_EXHAUSTED', code: 429, message: 'slow down', details: [{ kind: 'rate_limit', scope: 'global', limit: 1200, window_seconds: 60, retry_after_seconds: 7 }] })),
          latencyMs: 0,
          sentMonoMs: clock.monoMs(),
          recvMonoMs: clock.monoMs(),
        }) as HttpResponse,
    } as unknown as HttpTransport;
    const port = new VenuePort({ baseUrl: 'http://service.invalid', exchangeUrl: 'http://venue.invalid', transport, scheduler, venueClock: new VenueClock(clock), clock });
    await expect(port.infoOpenOrders(USER)).rejects.toThrow();
    expect(scheduler.blockedUntil(SCOPES.exchange)).toBeGreaterThanOrEqual(clock.monoMs() + 7_000);
    expect(scheduler.blockedUntil(SCOPES.global)).toBe(0);
  });

  it('with no service (no base_url): REST calls fail at once, spend no budget, and send nothing', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const scheduler = new RequestScheduler(clock, { global: { limit: 1_200, windowMs: 60_000 }, exchange: { limit: 1_200, windowMs: 60_000 } });
    const sent: HttpRequest[] = [];
    const port = new VenuePort({ exchangeUrl: 'http://venue.invalid', transport: fakeTransport(clock, sent), scheduler, venueClock: new VenueClock(clock), clock });
    expect(port.hasService).toBe(false);
    await expect(port.getAccount(USER)).rejects.toBeInstanceOf(NoServiceError);
    await expect(port.health()).rejects.toBeInstanceOf(NoServiceError);
    await expect(port.ordersPages(USER).next()).rejects.toBeInstanceOf(NoServiceError);
    expect(sent).toEqual([]);
    expect(scheduler.stats().admitted).toEqual({ arm: 0, read: 0 });
    // the venue itself still answers
    expect((await port.infoUserRole(USER)).role).toBe('subAccount');
  });
});

/**
 * Builder-deployed perp dexes (HIP-3, `watch.perp_dexes`): the venue lists them only when asked by
 * name, so a read is one request for the default listing and one per dex, each admitted by its
 * weight, summed, and failing as a whole.
 */
describe('VenuePort: reads over the builder-deployed perp dexes', () => {
  /** Answers per dex ('' is the default listing); a dex in `failing` answers 500. */
  function dexVenue(clock: FakeClock, sent: Array<{ type: string; dex?: string }>, failing: ReadonlySet<string> = new Set()): HttpTransport {
    const byDex: Record<string, Record<string, unknown>> = {
      '': {
        frontendOpenOrders: [{ coin: 'BTC', side: 'B', sz: '1.0', limitPx: '100.0', oid: 1, timestamp: 1 }],
        clearinghouseState: { assetPositions: [{ position: { coin: 'ETH', szi: '1.0' } }], marginSummary: { accountValue: '5000.0' } },
        spotClearinghouseState: { balances: [{ coin: 'USDC', total: '100.0' }] },
      },
      xyz: {
        frontendOpenOrders: [
          { coin: 'xyz:TSLA', side: 'A', sz: '3.0', limitPx: '250.0', oid: 2, timestamp: 2 },
          { coin: 'xyz:NVDA', side: 'B', sz: '1.0', limitPx: '150.0', oid: 3, timestamp: 3 },
        ],
        clearinghouseState: { assetPositions: [{ position: { coin: 'xyz:TSLA', szi: '-2.0' } }], marginSummary: { accountValue: '70.0' } },
      },
      flx: { frontendOpenOrders: [], clearinghouseState: { assetPositions: [] } },
    };
    return {
      request: async (req: HttpRequest): Promise<HttpResponse> => {
        const { type, dex } = req.json as { type: string; dex?: string };
        sent.push({ type, ...(dex !== undefined ? { dex } : {}) });
        const now = clock.monoMs();
        const head = { headers: { date: new Date(clock.nowMs()).toUTCString() }, latencyMs: 0, sentMonoMs: now, recvMonoMs: now };
        if (failing.has(dex ?? '')) return { status: 500, body: Buffer.from('boom'), ...head } as unknown as HttpResponse;
        return { status: 200, body: Buffer.from(JSON.stringify(byDex[dex ?? '']![type])), ...head } as unknown as HttpResponse;
      },
    } as unknown as HttpTransport;
  }

  function setupDexes(failing?: ReadonlySet<string>) {
    const { clock, scheduler, admitted } = recordingScheduler();
    const sent: Array<{ type: string; dex?: string }> = [];
    const port = new VenuePort({ exchangeUrl: 'http://venue.invalid', transport: dexVenue(clock, sent, failing), scheduler, venueClock: new VenueClock(clock), clock });
    return { clock, scheduler, port, admitted, sent };
  }

  it('open orders: the default listing plus one read per dex, each of weight 20; the orders as the venue lists them, the count their sum', async () => {
    const { port, admitted, scheduler, sent, clock } = setupDexes();
    const pending = port.infoOpenOrders(USER, { dexes: ['xyz', 'flx'] });
    await clock.advance(5_000); // 60 weight of 20 a second, spread by the budget's grid
    const r = await pending;
    expect(r.count).toBe(3);
    expect(r.orders.map((o) => o.coin)).toEqual(['BTC', 'xyz:TSLA', 'xyz:NVDA']);
    expect(r.type).toBe('frontendOpenOrders');
    expect(sent).toEqual([{ type: 'frontendOpenOrders' }, { type: 'frontendOpenOrders', dex: 'xyz' }, { type: 'frontendOpenOrders', dex: 'flx' }]);
    expect(admitted.map((a) => [a.kind, a.scopes, a.weight])).toEqual(Array.from({ length: 3 }, () => ['read', [SCOPES.exchange], 20]));
    expect(scheduler.stats().scopes.exchange!.used).toBe(60);
    expect(scheduler.stats().scopes.global!.used).toBe(0);
  });

  it('positions: clearinghouseState per dex (2 each), spotClearinghouseState once; the first perp dex\'s account value', async () => {
    const { port, admitted, scheduler, sent, clock } = setupDexes();
    const pending = port.infoPositions(USER, { dexes: ['xyz'] });
    await clock.advance(1_000);
    const r = await pending;
    expect(r.perp.map((p) => p.coin)).toEqual(['ETH', 'xyz:TSLA']);
    expect(r.balances).toHaveLength(1);
    expect(r.accountValue).toBe('5000.0');
    expect(sent).toEqual([{ type: 'clearinghouseState' }, { type: 'clearinghouseState', dex: 'xyz' }, { type: 'spotClearinghouseState' }]);
    expect(admitted.map((a) => a.weight)).toEqual([2, 2, 2]);
    expect(scheduler.stats().scopes.exchange!.used).toBe(6);
  });

  it('no dexes: one request, as before', async () => {
    const { port, sent } = setupDexes();
    expect((await port.infoOpenOrders(USER, { dexes: [] })).count).toBe(1);
    expect(sent).toEqual([{ type: 'frontendOpenOrders' }]);
  });

  it.each([['a builder dex', 'xyz'], ['the default listing', '']])('fails closed as a whole when %s fails: never a partial count', async (_what, dex) => {
    const { port, clock } = setupDexes(new Set([dex]));
    const orders = port.infoOpenOrders(USER, { dexes: ['xyz', 'flx'] });
    const positions = port.infoPositions(USER, { dexes: ['xyz', 'flx'] });
    const settled = Promise.allSettled([orders, positions]);
    await clock.advance(10_000);
    const [o, p] = await settled;
    expect(o.status).toBe('rejected');
    expect(p.status).toBe('rejected');
    expect(((o as PromiseRejectedResult).reason as { endpoint?: string }).endpoint).toBe('info:frontendOpenOrders');
  });

  it('a dex read failing withdraws the reads still waiting for the budget: they send nothing', async () => {
    const { port, clock, sent, scheduler } = setupDexes(new Set(['xyz']));
    const settled = port.infoOpenOrders(USER, { dexes: ['xyz', 'flx'] }).then(
      () => 'resolved',
      () => 'rejected',
    );
    await clock.advance(10_000);
    expect(await settled).toBe('rejected');
    // the default listing, then xyz (500): flx, queued behind them, is never sent nor spent
    expect(sent).toEqual([{ type: 'frontendOpenOrders' }, { type: 'frontendOpenOrders', dex: 'xyz' }]);
    expect(scheduler.stats().scopes.exchange!.used).toBe(40);
  });

  it('an abort of the read aborts every dex\'s', async () => {
    const { port } = setupDexes();
    const ac = new AbortController();
    ac.abort(new Error('watcher stopped'));
    await expect(port.infoOpenOrders(USER, { signal: ac.signal, dexes: ['xyz'] })).rejects.toThrow();
  });
});
