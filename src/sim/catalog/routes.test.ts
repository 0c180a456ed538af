/**
 * The catalog routes through the same Router the server uses, without a socket: every route's
 * answer, the 400s and 404s the spec lists for it, and the book's aggregation over exact decimals.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { AccountRef, Event, Health, OutcomeBook, OutcomeStats, Participant, Series, Topic } from '../../venue/types.js';
import { Router, type SimResponse } from '../http-util.js';
import type { RestingOrder } from '../types.js';
import { buildCatalog } from './catalog.js';
import { BLOCK_AT_BUILD, BLOCK_INTERVAL_MS, catalogRoutes, type CatalogRouteDeps } from './routes.js';

const BUILT = Date.UTC(2025, 10, 22, 8, 0, 0);
const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const C = '0xcccccccccccccccccccccccccccccccccccccccc';

interface Harness {
  now: number;
  orders: Map<string, RestingOrder[]>;
  router: Router;
  get(pathAndQuery: string): Promise<SimResponse>;
}

function harness(extra: Partial<CatalogRouteDeps> = {}): Harness {
  const catalog = buildCatalog({ nowMs: BUILT });
  const h: Harness = {
    now: BUILT + 5_000,
    orders: new Map(),
    router: new Router(),
    get: async (pathAndQuery) => {
      const url = new URL(pathAndQuery, 'http://127.0.0.1');
      const m = h.router.match('GET', url.pathname);
      if (m === undefined) throw new Error(`no route for ${url.pathname}`);
      if (m === 'method_not_allowed') throw new Error('405');
      return m.route.handler(
        { method: 'GET', path: url.pathname, query: url.searchParams, headers: {}, body: undefined, nowMs: h.now, remoteAddress: '127.0.0.1' },
        m.params,
      );
    },
  };
  h.router.add(
    ...catalogRoutes(catalog, {
      nowMs: () => h.now,
      restingOrders: (id) => h.orders.get(id) ?? [],
      ...extra,
    }),
  );
  return h;
}

function order(oid: string, address: string, side: 0 | 1, direction: 'buy' | 'sell', price: string, size: string, priority: number): RestingOrder {
  return { oid, address, side, direction, price, size, priority };
}

function expectFieldViolation(res: SimResponse, field: string): void {
  expect(res.status).toBe(400);
  const err = (res.body as { error: { code: number; status: string; message: string; details: unknown[] } }).error;
  expect(err.code).toBe(400);
  expect(err.status).toBe('INVALID_ARGUMENT');
  expect(err.message).toEqual(expect.any(String));
  expect(err.details).toEqual([expect.objectContaining({ type: 'field_violation', field, reason: expect.any(String) })]);
}

function expectNotFound(res: SimResponse): void {
  expect(res.status).toBe(404);
  expect(res.body).toEqual({ error: { code: 404, status: 'NOT_FOUND', message: expect.any(String), details: [] } });
}

describe('route table', () => {
  it('registers every catalog route as GET with a stable, unique endpoint name', () => {
    const routes = catalogRoutes(buildCatalog({ nowMs: BUILT }), { nowMs: () => BUILT, restingOrders: () => [] });
    const names = routes.map((r) => r.endpoint);
    expect(new Set(names).size).toBe(names.length);
    for (const r of routes) {
      expect(r.method).toBe('GET');
      expect(r.endpoint).toBe(`GET ${r.pattern}`);
    }
    expect(names).toEqual(
      expect.arrayContaining([
        'GET /v1/outcomes/{id}/book',
        'GET /v1/outcomes/{id}/stats',
        'GET /v1/events/{id}',
        'GET /v1/participants',
        'GET /v1/topics/{topic_id}',
        'GET /v1/series/{series_id}',
        'GET /v1/providers',
        'GET /v1/templates',
        'GET /v1/health',
      ]),
    );
  });

  it('leaves 405 to the router: a POST on a catalog path is method_not_allowed', () => {
    const h = harness();
    expect(h.router.match('POST', '/v1/outcomes/out_ars_che_home/book')).toBe('method_not_allowed');
    expect(h.router.match('GET', '/v1/nowhere')).toBeUndefined();
  });
});

describe('GET /v1/outcomes/{id}/book', () => {
  let h: Harness;
  beforeEach(() => {
    h = harness({
      accountRef: (address) => (address === A ? { address: A, username: 'alice', account_type: 'main' } : undefined),
    });
    h.orders.set('out_ars_che_home', [
      order('1', A, 0, 'buy', '0.41', '10.1', 1),
      order('2', B, 0, 'buy', '0.410', '0.2', 2),
      order('3', A, 0, 'sell', '0.45', '3', 3),
      order('4', C, 1, 'buy', '0.53', '7.7', 4),
    ]);
  });

  it('aggregates resting orders into levels on both sides, exactly', async () => {
    const res = await h.get('/v1/outcomes/out_ars_che_home/book');
    expect(res.status).toBe(200);
    const book = res.body as OutcomeBook;
    expect(book.outcome_id).toBe('out_ars_che_home');
    expect(book.state).toBe('active');
    expect(book.as_of).toBe(new Date(h.now).toISOString());
    expect(book.depth).toBe(10);
    expect(book.revision).toEqual(expect.any(String));
    expect('accounts' in book).toBe(false);
    expect(book.sides?.map((s) => s.side)).toEqual([0, 1]);
    const s0 = book.sides?.[0];
    expect(s0?.bids).toEqual([
      {
        price: '0.41',
        size: '10.3',
        orders: [
          { oid: '1', address: A, size: '10.1', priority: 1, source_side: 0 },
          { oid: '2', address: B, size: '0.2', priority: 2, source_side: 0 },
        ],
      },
    ]);
    // C's buy of side 1 at 0.53 is side 0 liquidity at 0.47, above A's native ask at 0.45.
    expect(s0?.asks?.map((l) => [l.price, l.size, l.orders?.[0]?.source_side])).toEqual([
      ['0.45', '3', 0],
      ['0.47', '7.7', 1],
    ]);
    const s1 = book.sides?.[1];
    expect(s1?.bids?.map((l) => [l.price, l.size])).toEqual([
      ['0.55', '3'],
      ['0.53', '7.7'],
    ]);
    expect(s1?.asks?.map((l) => [l.price, l.size])).toEqual([['0.59', '10.3']]);
  });

  it('keeps the revision while the book is unchanged and moves it when it changes', async () => {
    const r1 = ((await h.get('/v1/outcomes/out_ars_che_home/book')).body as OutcomeBook).revision;
    h.now += 1_000;
    const r2 = ((await h.get('/v1/outcomes/out_ars_che_home/book')).body as OutcomeBook).revision;
    expect(r2).toBe(r1);
    h.orders.set('out_ars_che_home', (h.orders.get('out_ars_che_home') ?? []).slice(1));
    const r3 = ((await h.get('/v1/outcomes/out_ars_che_home/book')).body as OutcomeBook).revision;
    expect(r3).not.toBe(r1);
  });

  it('honours depth: default 10, 0 for all, n levels per bids and asks', async () => {
    const many: RestingOrder[] = [];
    for (let i = 1; i <= 14; i++) many.push(order(`b${i}`, A, 0, 'buy', `0.${String(i).padStart(2, '0')}`, '1', i));
    h.orders.set('out_ars_che_draw', many);
    const def = (await h.get('/v1/outcomes/out_ars_che_draw/book')).body as OutcomeBook;
    expect(def.sides?.[0]?.bids?.length).toBe(10);
    expect(def.sides?.[0]?.bids?.[0]?.price).toBe('0.14');
    expect(def.sides?.[1]?.asks?.length).toBe(10);
    const full = (await h.get('/v1/outcomes/out_ars_che_draw/book?depth=0')).body as OutcomeBook;
    expect(full.depth).toBe(0);
    expect(full.sides?.[0]?.bids?.length).toBe(14);
    const two = (await h.get('/v1/outcomes/out_ars_che_draw/book?depth=2')).body as OutcomeBook;
    expect(two.depth).toBe(2);
    expect(two.sides?.[0]?.bids?.map((l) => l.price)).toEqual(['0.14', '0.13']);
    expect(two.sides?.[1]?.asks?.map((l) => l.price)).toEqual(['0.86', '0.87']);
  });

  it('refuses a negative, fractional or non-numeric depth with a field_violation on depth', async () => {
    for (const bad of ['-1', '1.5', 'ten', '', '1e2', '99999999999999999999']) {
      expectFieldViolation(await h.get(`/v1/outcomes/out_ars_che_home/book?depth=${encodeURIComponent(bad)}`), 'depth');
    }
    // Stable machine-readable reasons, so a client can tell "negative" from "not a number".
    const reason = (res: SimResponse): unknown => (res.body as { error: { details: Array<{ reason: string }> } }).error.details[0]?.reason;
    expect(reason(await h.get('/v1/outcomes/out_ars_che_home/book?depth=-1'))).toBe('out_of_range');
    expect(reason(await h.get('/v1/outcomes/out_ars_che_home/book?depth=1.5'))).toBe('not_an_integer');
  });

  it('adds the accounts sidecar for include=accounts, in any spelling the spec allows', async () => {
    for (const q of ['include=accounts', 'include=accounts,accounts', 'include=,accounts', 'include=accounts&include=']) {
      const book = (await h.get(`/v1/outcomes/out_ars_che_home/book?${q}`)).body as OutcomeBook;
      // deps.accountRef is used when it knows the address; others still get an AccountRef.
      expect(book.accounts?.data, q).toEqual<AccountRef[]>([
        { address: A, username: 'alice', account_type: 'main' },
        { address: B, account_type: 'main' },
        { address: C, account_type: 'main' },
      ]);
    }
    const none = (await h.get('/v1/outcomes/out_ars_che_home/book?include=')).body as OutcomeBook;
    expect('accounts' in none).toBe(false);
  });

  it('lists only the accounts of the levels shown', async () => {
    const book = (await h.get('/v1/outcomes/out_ars_che_home/book?depth=1&include=accounts')).body as OutcomeBook;
    // Depth 1: side 0 shows bid 0.41 (A, B) and ask 0.45 (A); side 1 the same orders mirrored. C is not shown.
    expect(book.accounts?.data?.map((a) => a.address)).toEqual([A, B]);
  });

  it('refuses an unknown include token with a field_violation on include', async () => {
    for (const q of ['include=orders', 'include=accounts,outcome', 'include=accounts&include=ACCOUNTS']) {
      expectFieldViolation(await h.get(`/v1/outcomes/out_ars_che_home/book?${q}`), 'include');
    }
  });

  it('ignores unknown query parameters', async () => {
    const res = await h.get('/v1/outcomes/out_ars_che_home/book?foo=bar&limit=zzz');
    expect(res.status).toBe(200);
  });

  it('reports the state of a settled or verifying outcome, with an empty book', async () => {
    const settled = (await h.get('/v1/outcomes/out_lal_bos_moneyline/book')).body as OutcomeBook;
    expect(settled.state).toBe('settled');
    expect(settled.sides).toEqual([
      { side: 0, bids: [], asks: [] },
      { side: 1, bids: [], asks: [] },
    ]);
    expect(((await h.get('/v1/outcomes/out_eth_up_down_week/book')).body as OutcomeBook).state).toBe('verifying');
  });

  it('answers 404 for an unknown outcome and 400 for a malformed id', async () => {
    expectNotFound(await h.get('/v1/outcomes/out_nope/book'));
    expectFieldViolation(await h.get('/v1/outcomes/bad%20id/book'), 'id');
  });
});

describe('GET /v1/outcomes/{id}/stats', () => {
  it('serves fixture volume and holders with open quantity from resting orders', async () => {
    const h = harness();
    h.orders.set('out_btc_above_100000_50', [
      order('1', A, 0, 'buy', '0.6', '0.1', 1),
      order('2', B, 0, 'sell', '0.7', '0.2', 2),
      order('3', C, 1, 'buy', '0.2', '1.25', 3),
    ]);
    const res = await h.get('/v1/outcomes/out_btc_above_100000_50/stats');
    expect(res.status).toBe(200);
    expect(res.body).toEqual<OutcomeStats>({
      outcome_id: 'out_btc_above_100000_50',
      volume_usdc: '512003.37',
      trade_count: 8812,
      as_of: new Date(h.now).toISOString(),
      sides: [
        { side: 0, open_quantity: '0.3', holder_count: 1980 },
        { side: 1, open_quantity: '1.25', holder_count: 1432 },
      ],
    });
  });

  it('prefers the exchange trade counters when given', async () => {
    const h = harness({ tradeStats: (id) => (id === 'out_ars_che_home' ? { volume_usdc: '12.5', trade_count: 3 } : undefined) });
    const s = (await h.get('/v1/outcomes/out_ars_che_home/stats')).body as OutcomeStats;
    expect([s.volume_usdc, s.trade_count]).toEqual(['12.5', 3]);
    expect(s.sides?.map((x) => x.open_quantity)).toEqual(['0', '0']);
    const other = (await h.get('/v1/outcomes/out_ars_che_draw/stats')).body as OutcomeStats;
    expect(other.volume_usdc).toBe('90312.8');
  });

  it('answers 404 for an unknown outcome and 400 for a malformed id', async () => {
    const h = harness();
    expectNotFound(await h.get('/v1/outcomes/out_nope/stats'));
    expectFieldViolation(await h.get(`/v1/outcomes/${'x'.repeat(200)}/stats`), 'id');
  });
});

describe('GET /v1/events/{id}', () => {
  it('returns the event with hierarchy, questions and every outcome', async () => {
    const h = harness();
    const res = await h.get('/v1/events/evt_us_pres_2028');
    expect(res.status).toBe(200);
    const e = res.body as Event;
    expect(e.series?.id).toBe('us-presidential-2028');
    expect(e.category?.id).toBe('us-elections');
    expect(e.outcomes?.length).toBe(7);
    expect(e.questions?.map((q) => q.id)).toEqual(['qst_us_pres_2028_winner']);
    expect('contest' in e).toBe(false);
  });

  it('keeps null and omitted keys through the route', async () => {
    const h = harness();
    const e = (await h.get('/v1/events/evt_ukraine_ceasefire')).body as Event;
    // Through JSON, as the server sends it: null survives, absent stays absent.
    const wire = JSON.parse(JSON.stringify(e)) as Event;
    expect(wire.image_url).toBeNull();
    expect(wire.series).toBeNull();
    expect('participants' in wire).toBe(false);
    expect('contest' in wire).toBe(false);
    const draft = wire.outcomes?.find((o) => o.id === 'out_ceasefire_h2_draft');
    expect(draft?.hl_id).toBeNull();
    expect(draft?.hl_question_id).toBeNull();
    expect(draft?.hl_keywords).toEqual({});
    expect(draft?.trading).toEqual({ quote: 'USDC', min_notional: '10', tick_size: '0.00000001', lot_size: '1' });
  });

  it('answers 404 for an unknown event and 400 for a malformed id', async () => {
    const h = harness();
    expectNotFound(await h.get('/v1/events/evt_nope'));
    expectFieldViolation(await h.get('/v1/events/%3Cscript%3E'), 'id');
  });
});

describe('GET /v1/participants', () => {
  it('pages through every participant with opaque cursors', async () => {
    const h = harness();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await h.get(`/v1/participants?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      const page = res.body as { data: Participant[]; next_cursor?: string };
      expect(page.data.length).toBeLessThanOrEqual(10);
      seen.push(...page.data.map((p) => p.id ?? ''));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(4);
    expect(seen.length).toBe(38);
    expect(new Set(seen).size).toBe(38);
  });

  it('returns everything on one page by default, without next_cursor', async () => {
    const page = (await harness().get('/v1/participants')).body as { data: Participant[]; next_cursor?: string };
    expect(page.data.length).toBe(38);
    expect('next_cursor' in page).toBe(false);
  });

  it('filters by topic, category and series', async () => {
    const h = harness();
    const nba = (await h.get('/v1/participants?series_id=nba')).body as { data: Participant[] };
    expect(nba.data.length).toBe(8);
    expect(nba.data.every((p) => p.series_id === 'nba' && p.topic_id === 'sports' && p.category_id === 'basketball')).toBe(true);
    const soccer = (await h.get('/v1/participants?topic_id=sports&category_id=soccer&limit=20')).body as { data: Participant[]; next_cursor?: string };
    expect(soccer.data.length).toBe(20);
    expect(soccer.next_cursor).toEqual(expect.any(String));
    const politics = (await h.get('/v1/participants?topic_id=politics')).body as { data: Participant[] };
    expect(politics.data.map((p) => p.slug)).toContain('j-d-vance');
  });

  it('answers an unknown filter value with an empty list, and ignores unknown parameters', async () => {
    const h = harness();
    const res = await h.get('/v1/participants?series_id=bundesliga');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [] });
    const all = (await h.get('/v1/participants?colour=red&topic_id=')).body as { data: Participant[] };
    expect(all.data.length).toBe(38);
  });

  it('refuses a bad limit, a bad cursor or a malformed filter', async () => {
    const h = harness();
    expectFieldViolation(await h.get('/v1/participants?limit=0'), 'limit');
    expectFieldViolation(await h.get('/v1/participants?limit=abc'), 'limit');
    expectFieldViolation(await h.get('/v1/participants?cursor=not-a-cursor'), 'cursor');
    expectFieldViolation(await h.get('/v1/participants?topic_id=two%20words'), 'topic_id');
  });

  it('serves a single participant by id', async () => {
    const h = harness();
    const res = await h.get('/v1/participants/prt_chelsea');
    expect(res.status).toBe(200);
    expect((res.body as Participant).color).toBeNull();
    expectNotFound(await h.get('/v1/participants/prt_nope'));
  });
});

describe('GET /v1/topics/{topic_id} and /v1/series/{series_id}', () => {
  it('returns a topic with nested categories and their series', async () => {
    const h = harness();
    const res = await h.get('/v1/topics/sports');
    expect(res.status).toBe(200);
    const t = res.body as Topic;
    expect(t.categories?.map((c) => c.id)).toEqual(['soccer', 'basketball']);
    expect(t.categories?.[0]?.series?.map((s) => s.id)).toEqual(['premier-league', 'la-liga']);
    expect(t.categories?.[0]?.series?.[0]?.providers).toEqual([
      { provider: 'sportradar', id: 'sr:competition:17' },
      { provider: 'opta', id: '8' },
    ]);
    const politics = (await h.get('/v1/topics/politics')).body as Topic;
    expect(politics.categories?.find((c) => c.id === 'international')?.series).toEqual([]);
  });

  it('returns a series', async () => {
    const res = await harness().get('/v1/series/nba');
    expect(res.status).toBe(200);
    expect(res.body).toEqual<Series>({
      id: 'nba',
      category_id: 'basketball',
      topic_id: 'sports',
      name: 'NBA',
      image_url: expect.stringMatching(/^https:\/\//) as unknown as string,
      providers: [{ provider: 'sportradar', id: 'sr:competition:132' }],
    });
  });

  it('answers 404 for unknown slugs and 400 for malformed ones', async () => {
    const h = harness();
    expectNotFound(await h.get('/v1/topics/weather'));
    expectNotFound(await h.get('/v1/series/bundesliga'));
    expectFieldViolation(await h.get('/v1/topics/-'), 'topic_id');
    expectFieldViolation(await h.get('/v1/series/a%2Fb'), 'series_id');
  });
});

describe('GET /v1/providers, /v1/templates, /v1/health', () => {
  it('lists providers, filtered by the taxonomy; unknown values give an empty list', async () => {
    const h = harness();
    expect((await h.get('/v1/providers')).body).toEqual({ data: [{ id: 'ap' }, { id: 'opta' }, { id: 'pyth' }, { id: 'sportradar' }] });
    expect((await h.get('/v1/providers?series_id=premier-league')).body).toEqual({ data: [{ id: 'opta' }, { id: 'sportradar' }] });
    expect((await h.get('/v1/providers?topic_id=crypto')).body).toEqual({ data: [{ id: 'pyth' }] });
    const unknown = await h.get('/v1/providers?category_id=chess');
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ data: [] });
    expectFieldViolation(await h.get('/v1/providers?series_id=%20'), 'series_id');
  });

  it('lists templates with placeholders left in', async () => {
    const res = await harness().get('/v1/templates?unused=1');
    expect(res.status).toBe(200);
    const data = (res.body as { data: Array<{ id: string; name: string; kind: string; parent: string | null }> }).data;
    expect(data.length).toBeGreaterThanOrEqual(3);
    expect(data.find((t) => t.id === 'tpl_price_target')?.name).toBe('{asset} {comparator} {strike} at {deadline}?');
    expect(data.find((t) => t.id === 'tpl_match_result_leg')?.parent).toBe('tpl_match_result');
  });

  it('reports health with venue time and a block that advances with it', async () => {
    const h = harness();
    h.now = BUILT;
    const first = (await h.get('/v1/health')).body as Health;
    expect(first).toEqual({ ok: true, as_of: new Date(BUILT).toISOString(), block: BLOCK_AT_BUILD.toString() });
    h.now = BUILT + 60_000;
    const later = (await h.get('/v1/health')).body as Health;
    expect(later.as_of).toBe(new Date(BUILT + 60_000).toISOString());
    expect(BigInt(later.block ?? '0') - BigInt(first.block ?? '0')).toBe(BigInt(60_000 / BLOCK_INTERVAL_MS));
    // A venue clock stepped back never shows a block before the build-time block.
    h.now = BUILT - 3_600_000;
    expect(((await h.get('/v1/health')).body as Health).block).toBe(BLOCK_AT_BUILD.toString());
  });
});
