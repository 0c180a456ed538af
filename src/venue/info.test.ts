import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ASSUMED } from './assumptions.js';
import { DecodeError, RestError, TransportError } from './errors.js';
import { VENUE_FACTS } from './facts.js';
import { HttpTransport, type ResponseObservation } from './http.js';
import { InfoClient, infoRequestWeight } from './info.js';
import {
  INFO_ENDPOINTS,
  INFO_REQUEST_TYPES,
  decodeInfoClearinghouseState,
  decodeInfoExtraAgents,
  decodeInfoOpenOrders,
  decodeInfoSpotClearinghouseState,
  decodeInfoUserRateLimit,
  decodeInfoUserRole,
} from './info-decode.js';
import type { VenueDateSample } from './venue-time.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'venue-info');
const fixtureText = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const fixture = (name: string): unknown => JSON.parse(fixtureText(name)) as unknown;

const USER = '0x5e9ee1089755c3435139848e47e6635505d5a13a';
const MASTER = '0x1111111111111111111111111111111111111111';

function decodeError(f: () => unknown): DecodeError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    return e as DecodeError;
  }
  throw new Error('expected a DecodeError');
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

// ---- the recorded answers (test/fixtures/venue-info/README.md) ----

describe('the venue’s recorded info answers decode, with the recordings’ counts', () => {
  it('every fixture file is listed, with its source, in the README, and every listed file exists', () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).sort();
    const readme = fixtureText('README.md');
    const listed = [...readme.matchAll(/^\| `([\w-]+\.json)` \|/gm)].map((m) => m[1]).sort();
    expect(files.length).toBeGreaterThan(0);
    expect(listed).toEqual(files);
    expect(readme).toContain('hyperliquid-dex/hyperliquid-python-sdk');
    expect(readme).toMatch(/Commit read: `[0-9a-f]{40}`/);
  });

  it('openOrders: 196 orders (the SDK asserts 196), each with its oid, coin, side, size, price and time', () => {
    const r = decodeInfoOpenOrders(fixture('open-orders.json'), 'openOrders');
    expect(r.type).toBe('openOrders');
    expect(r.count).toBe(196);
    expect(r.orders).toHaveLength(196);
    expect(new Set(r.orders.map((o) => o.oid)).size).toBe(196);
    for (const o of r.orders) {
      expect(Number.isSafeInteger(o.oid)).toBe(true);
      expect(['A', 'B']).toContain(o.side);
      expect(o.coin).toMatch(/^[A-Z]+$/);
      expect(o.sz).toMatch(/^\d+(\.\d+)?$/);
      expect(o.limitPx).toMatch(/^\d+(\.\d+)?$/);
      expect(o.timestamp).toBeGreaterThan(1_679_000_000_000);
    }
    expect(r.orders[0]).toEqual({ coin: 'MATIC', limitPx: '1.0357', oid: 62269971, side: 'B', sz: '208.7', timestamp: 1679940217356 });
  });

  it('frontendOpenOrders: 3 orders (the SDK asserts 3); children listed at the top too are not counted twice', () => {
    const r = decodeInfoOpenOrders(fixture('frontend-open-orders.json'), 'frontendOpenOrders');
    expect(r.count).toBe(3);
    expect(r.orders.map((o) => o.oid)).toEqual([3184595907, 3184595906, 3184595905]);
    expect(r.orders[2]).toEqual({ coin: 'INJ', limitPx: '10.0', oid: 3184595905, side: 'B', sz: '12.5', timestamp: 1700126022555 });
    // Only the fields read: children, trigger data and the rest are dropped.
    expect(Object.keys(r.orders[0]!).sort()).toEqual(['coin', 'limitPx', 'oid', 'side', 'sz', 'timestamp']);
  });

  it('clearinghouseState: 12 positions (the SDK asserts 12), account value and withdrawable', () => {
    const r = decodeInfoClearinghouseState(fixture('clearinghouse-state.json'));
    expect(r.positions).toHaveLength(12);
    expect(r.positions.map((p) => p.coin)).toEqual(['BTC', 'ETH', 'ATOM', 'MATIC', 'DYDX', 'SOL', 'AVAX', 'BNB', 'APE', 'OP', 'LTC', 'ARB']);
    expect(r.accountValue).toBe('1182.312496');
    expect(r.withdrawable).toBe('1010.57173');
    expect(r.positions[0]).toEqual({ coin: 'BTC', szi: '-0.00785', entryPx: '26951.0', positionValue: '211.64542', unrealizedPnl: '-0.08007' });
    expect(r.positions.filter((p) => p.szi?.startsWith('-'))).toHaveLength(5);
  });

  it('userRateLimit: the volume and the request budget as recorded', () => {
    expect(decodeInfoUserRateLimit(fixture('user-rate-limit.json'))).toEqual({
      cumVlm: '170043721737.450012207',
      nRequestsUsed: 36589831368,
      nRequestsCap: 170043731737,
    });
  });

  it('userRole: vault, with no master', () => {
    expect(decodeInfoUserRole(fixture('user-role.json'))).toEqual({ role: 'vault', roleText: 'vault' });
  });

  it('extraAgents: 2 agents with their names, addresses and expiries', () => {
    expect(decodeInfoExtraAgents(fixture('extra-agents.json'))).toEqual([
      { name: 'ok', address: '0x286edfa08c04f6899dab3bfdecf2dd133f9733b9', validUntil: 1767776120478 },
      { name: 'new', address: '0xc06e6617005c1888aeb8b3017fe00f82b7b84fc0', validUntil: 1771174068515 },
    ]);
  });
});

// ---- tolerance ----

describe('the info reader is tolerant where the keeper does not act', () => {
  it('null is absent, omitted fields are absent, extra keys are dropped: every order still counts', () => {
    const r = decodeInfoOpenOrders([
      { oid: 1, coin: 'BTC', side: 'B', sz: '1', limitPx: null, timestamp: null, cloid: null },
      {},
      { oid: 3, newField: { deep: [1, 2] }, children: [{ oid: 4 }] },
    ]);
    expect(r.count).toBe(3);
    expect(r.orders).toEqual([{ oid: 1, coin: 'BTC', side: 'B', sz: '1' }, {}, { oid: 3 }]);
  });

  it('a field that does not fit is removed, the order kept: unknown side, bad size, negative oid', () => {
    const r = decodeInfoOpenOrders([{ oid: -1, coin: 'ETH', side: 'S', sz: '1e5', limitPx: 'abc', timestamp: 1.5 }]);
    expect(r.count).toBe(1);
    expect(r.orders[0]).toEqual({ coin: 'ETH' });
  });

  it('numbers come in either form: digit strings as integers, JSON numbers as decimals', () => {
    const r = decodeInfoOpenOrders([{ oid: '62269971', sz: 208.7, limitPx: 1, timestamp: '1679940217356' }]);
    expect(r.orders[0]).toEqual({ oid: 62269971, sz: '208.7', limitPx: '1', timestamp: 1679940217356 });
    expect(decodeInfoUserRateLimit({ cumVlm: 1234.5, nRequestsUsed: '10', nRequestsCap: '10500', nRequestsSurplus: 0 })).toEqual({
      cumVlm: '1234.5',
      nRequestsUsed: 10,
      nRequestsCap: 10500,
      nRequestsSurplus: 0,
    });
  });

  it('clearinghouseState: null summaries are absent, empty positions are positions, extra keys go', () => {
    const r = decodeInfoClearinghouseState({
      assetPositions: [{ position: {}, type: 'oneWay' }, { position: { coin: 'BTC', szi: '0.1', liquidationPx: null, leverage: { type: 'cross', value: 20 } } }],
      marginSummary: null,
      withdrawable: null,
      crossMaintenanceMarginUsed: '0.0',
      time: 1767268800000,
    });
    expect(r).toEqual({ positions: [{}, { coin: 'BTC', szi: '0.1' }] });
  });

  it('spotClearinghouseState: balances counted, their fields read, the rest dropped', () => {
    const r = decodeInfoSpotClearinghouseState({
      balances: [
        { coin: 'USDC', token: 0, total: '14.625485', hold: '0.0', entryNtl: '0.0' },
        { coin: 'PURR', token: 1, total: 2000, hold: null },
        { coin: '+14720', total: 'lots' },
      ],
    });
    expect(r.balances).toEqual([{ coin: 'USDC', total: '14.625485', hold: '0.0' }, { coin: 'PURR', total: '2000' }, { coin: '+14720' }]);
  });

  it.each([
    [{ role: 'user' }, { role: 'user', roleText: 'user' }],
    [{ role: 'missing' }, { role: 'missing', roleText: 'missing' }],
    [{ role: 'vault', data: null }, { role: 'vault', roleText: 'vault' }],
    [{ role: 'subAccount', data: { master: MASTER } }, { role: 'subAccount', roleText: 'subAccount', master: MASTER }],
    [{ role: 'agent', data: { user: MASTER } }, { role: 'agent', roleText: 'agent', master: MASTER }],
    [{ role: 'agent', data: { user: 'nobody' } }, { role: 'agent', roleText: 'agent' }],
    [{ role: 'agent' }, { role: 'agent', roleText: 'agent' }],
    [{ role: 'multiSig', data: 'whatever', extra: 1 }, { role: 'unknown', roleText: 'multiSig' }],
  ] as const)('userRole %j -> %j', (answer, expected) => {
    expect(decodeInfoUserRole(answer)).toEqual(expected);
  });

  it('an unknown role is kept as unknown, its text bounded: never read as a plain user', () => {
    const r = decodeInfoUserRole({ role: 'x'.repeat(500) });
    expect(r.role).toBe('unknown');
    expect(r.roleText.length).toBeLessThan(100);
  });

  it('extraAgents: a name or expiry may be absent or null; an empty list is no agents', () => {
    expect(decodeInfoExtraAgents([{ address: MASTER, name: null, validUntil: null, extra: true }, { address: MASTER, validUntil: '1771174068515' }])).toEqual([
      { address: MASTER },
      { address: MASTER, validUntil: 1771174068515 },
    ]);
    expect(decodeInfoExtraAgents([])).toEqual([]);
  });
});

// ---- fail closed ----

describe('the info reader fails closed on what the keeper acts on', () => {
  it.each([
    ['an object', { orders: [] }],
    ['null', null],
    ['a string', 'no orders'],
  ])('open orders that are %s: no count, a typed error', (_what, answer) => {
    const e = decodeError(() => decodeInfoOpenOrders(answer));
    expect(e.code).toBe('VENUE_DECODE_ERROR');
    expect(e.reason).toBe('bad_shape');
    expect(e.endpoint).toBe(`info:${ASSUMED.infoOpenOrdersType}`);
    expect(e.message).toContain('(root)');
  });

  it.each([null, 7, 'order', [1]])('an open order that is not an object (%j) fails the read: each one counts', (bad) => {
    const e = decodeError(() => decodeInfoOpenOrders([{ oid: 1 }, bad], 'openOrders'));
    expect(e.endpoint).toBe('info:openOrders');
    expect(e.message).toContain('[1]');
  });

  it.each([
    ['assetPositions absent', {}, 'assetPositions'],
    ['assetPositions null', { assetPositions: null }, 'assetPositions'],
    ['assetPositions an object', { assetPositions: {} }, 'assetPositions'],
    ['an element null', { assetPositions: [null] }, 'assetPositions[0]'],
    ['an element without position', { assetPositions: [{ type: 'oneWay' }] }, 'assetPositions[0].position'],
    ['a position that is a string', { assetPositions: [{ position: 'BTC' }] }, 'assetPositions[0].position'],
  ])('clearinghouseState with %s', (_what, answer, path) => {
    const e = decodeError(() => decodeInfoClearinghouseState(answer));
    expect(e.endpoint).toBe('info:clearinghouseState');
    expect(e.message).toContain(`${path}:`);
  });

  it.each([
    [{}, 'balances'],
    [{ balances: 'none' }, 'balances'],
    [{ balances: [{ coin: 'USDC' }, 3] }, 'balances[1]'],
  ])('spotClearinghouseState %j', (answer, path) => {
    const e = decodeError(() => decodeInfoSpotClearinghouseState(answer));
    expect(e.endpoint).toBe('info:spotClearinghouseState');
    expect(e.message).toContain(`${path}:`);
  });

  it.each([
    ['no role', {}, 'role'],
    ['a null role', { role: null }, 'role'],
    ['a numeric role', { role: 3 }, 'role'],
    ['a list', [{ role: 'user' }], '(root)'],
    ['a subAccount without data', { role: 'subAccount' }, 'data.master'],
    ['a subAccount with a null master', { role: 'subAccount', data: { master: null } }, 'data.master'],
    ['a subAccount whose master is not an address', { role: 'subAccount', data: { master: '0x1234' } }, 'data.master'],
    ['a subAccount whose data is a string', { role: 'subAccount', data: MASTER }, 'data.master'],
  ])('userRole with %s', (_what, answer, path) => {
    const e = decodeError(() => decodeInfoUserRole(answer));
    expect(e.endpoint).toBe('info:userRole');
    expect(e.message).toContain(`${path}:`);
  });

  const LIMIT = { cumVlm: '1000000.5', nRequestsUsed: 12, nRequestsCap: 1_010_000 };
  it.each([
    ['cumVlm absent', { ...LIMIT, cumVlm: undefined }, 'cumVlm'],
    ['cumVlm null', { ...LIMIT, cumVlm: null }, 'cumVlm'],
    ['cumVlm in exponent form', { ...LIMIT, cumVlm: '1e6' }, 'cumVlm'],
    ['nRequestsUsed absent', { ...LIMIT, nRequestsUsed: undefined }, 'nRequestsUsed'],
    ['nRequestsUsed negative', { ...LIMIT, nRequestsUsed: -1 }, 'nRequestsUsed'],
    ['nRequestsCap a word', { ...LIMIT, nRequestsCap: 'many' }, 'nRequestsCap'],
    ['nRequestsCap fractional', { ...LIMIT, nRequestsCap: 10.5 }, 'nRequestsCap'],
    ['nRequestsCap past 2^53', { ...LIMIT, nRequestsCap: 2 ** 60 }, 'nRequestsCap'],
  ])('userRateLimit with %s', (_what, answer, path) => {
    const e = decodeError(() => decodeInfoUserRateLimit(answer));
    expect(e.endpoint).toBe('info:userRateLimit');
    expect(e.message).toContain(`${path}:`);
  });

  it.each([
    ['not a list', { agents: [] }, '(root)'],
    ['an element null', [null], '[0]'],
    ['an address missing', [{ name: 'dms-keeper', validUntil: 1 }], '[0].address'],
    ['an address malformed', [{ address: '0xabc', name: 'dms-keeper' }], '[0].address'],
    ['an expiry that is a word', [{ address: MASTER, validUntil: 'soon' }], '[0].validUntil'],
  ])('extraAgents with %s', (_what, answer, path) => {
    const e = decodeError(() => decodeInfoExtraAgents(answer));
    expect(e.endpoint).toBe('info:extraAgents');
    expect(e.message).toContain(`${path}:`);
  });
});

// ---- the client over a real loopback server ----

interface Seen {
  method: string | undefined;
  url: string | undefined;
  contentType: string | undefined;
  body: string;
}
type Reply = { status: number; body: string; headers?: Record<string, string>; hang?: boolean };

const servers: http.Server[] = [];
async function venue(replies: Reply[]): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') });
      const r = replies.shift() ?? { status: 500, body: 'no reply queued' };
      if (r.hang) return;
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body);
    });
  });
  servers.push(srv);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

function client(origin: string, extra: Partial<ConstructorParameters<typeof InfoClient>[0]> = {}, requestTimeoutMs = 5_000) {
  const observed: ResponseObservation[] = [];
  const dates: VenueDateSample[] = [];
  const transport = new HttpTransport({ requestTimeoutMs, onResponse: (o) => observed.push(o) });
  const info = new InfoClient({ exchangeUrl: origin, transport, onVenueDate: (s) => dates.push(s), ...extra });
  return { info, transport, observed, dates };
}

const ok = (name: string): Reply => ({ status: 200, body: fixtureText(name), headers: { date: 'Thu, 01 Jan 2026 12:00:00 GMT' } });

describe('InfoClient over HTTP', () => {
  it('POSTs {"type","user"} as JSON to {exchange_url}/info for each request type, and decodes the recorded answers', async () => {
    const v = await venue([
      ok('frontend-open-orders.json'),
      ok('open-orders.json'),
      ok('clearinghouse-state.json'),
      { status: 200, body: '{"balances":[{"coin":"USDC","token":0,"total":"14.6","hold":"0.0","entryNtl":"0.0"}]}' },
      ok('user-role.json'),
      ok('user-rate-limit.json'),
      ok('extra-agents.json'),
    ]);
    const c = client(v.origin);
    try {
      expect((await c.info.openOrders(USER)).count).toBe(3);
      expect((await c.info.openOrders(USER, { type: 'openOrders' })).count).toBe(196);
      expect((await c.info.clearinghouseState(USER)).positions).toHaveLength(12);
      expect((await c.info.spotClearinghouseState(USER)).balances).toHaveLength(1);
      expect((await c.info.userRole(USER)).role).toBe('vault');
      expect((await c.info.userRateLimit(USER)).nRequestsCap).toBe(170043731737);
      expect(await c.info.extraAgents(USER)).toHaveLength(2);
    } finally {
      await c.transport.close();
    }
    expect(v.seen.map((s) => [s.method, s.url, s.contentType])).toEqual(Array(7).fill(['POST', '/info', 'application/json']));
    expect(v.seen.map((s) => s.body)).toEqual(
      ['frontendOpenOrders', 'openOrders', 'clearinghouseState', 'spotClearinghouseState', 'userRole', 'userRateLimit', 'extraAgents'].map(
        (type) => `{"type":"${type}","user":"${USER}"}`,
      ),
    );
    expect(c.observed.map((o) => o.endpoint)).toEqual(INFO_REQUEST_TYPES.map((t) => `info:${t}`));
    // The default type is still the preferred one: an explicit type overrides one call only.
    expect(c.info.openOrdersType).toBe(ASSUMED.infoOpenOrdersType);
    // Answers that decoded are the venue's: each one's Date (node writes one on every answer) samples the venue clock.
    expect(c.dates).toHaveLength(7);
    expect(c.dates[0]!.dateHeader).toBe('Thu, 01 Jan 2026 12:00:00 GMT');
  });

  it('sends dex only when asked, and keeps a path prefix of exchange_url', async () => {
    const v = await venue([
      { status: 200, body: '[]' },
      { status: 200, body: '{"assetPositions":[]}' },
    ]);
    const c = client(`${v.origin}/hl/`);
    try {
      expect(await c.info.openOrders(USER, { dex: 'xyz' })).toEqual({ type: ASSUMED.infoOpenOrdersType, orders: [], count: 0 });
      expect(await c.info.clearinghouseState(USER)).toEqual({ positions: [] });
    } finally {
      await c.transport.close();
    }
    expect(v.seen.map((s) => s.url)).toEqual(['/hl/info', '/hl/info']);
    expect(v.seen.map((s) => JSON.parse(s.body) as unknown)).toEqual([
      { type: ASSUMED.infoOpenOrdersType, user: USER, dex: 'xyz' },
      { type: 'clearinghouseState', user: USER },
    ]);
  });

  it('a refused frontendOpenOrders (422) is an error now and openOrders from the next call on', async () => {
    const v = await venue([
      { status: 422, body: 'Failed to deserialize the JSON body into the target type', headers: { 'content-type': 'text/plain' } },
      ok('open-orders.json'),
    ]);
    const c = client(v.origin, { openOrdersType: 'frontendOpenOrders' });
    try {
      const e = await rejection(c.info.openOrders(USER));
      expect(e).toBeInstanceOf(DecodeError);
      expect((e as DecodeError).reason).toBe('bad_status');
      expect((e as DecodeError).httpStatus).toBe(422);
      expect((e as DecodeError).endpoint).toBe('info:frontendOpenOrders');
      expect(c.info.openOrdersType).toBe('openOrders');
      expect((await c.info.openOrders(USER)).count).toBe(196);
    } finally {
      await c.transport.close();
    }
    expect(v.seen.map((s) => (JSON.parse(s.body) as { type: string }).type)).toEqual(['frontendOpenOrders', 'openOrders']);
    // Nothing the venue did not decode as its own answer samples its clock.
    expect(c.dates).toHaveLength(1);
  });

  it.each([
    ['a 429', { status: 429, body: 'null', headers: { 'retry-after': '3' } }, RestError],
    ['a 500', { status: 500, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } }, DecodeError],
    ['an explicit type refused', { status: 422, body: 'Failed to deserialize' }, DecodeError],
    ['a named dex refused', { status: 422, body: 'Failed to deserialize' }, DecodeError],
  ] as const)('%s keeps the preferred open-orders type', async (what, reply, errorClass) => {
    const v = await venue([reply]);
    const c = client(v.origin);
    try {
      const explicit = what === 'an explicit type refused';
      const dex = what === 'a named dex refused';
      const e = await rejection(c.info.openOrders(USER, explicit ? { type: 'frontendOpenOrders' } : dex ? { dex: 'xyz' } : {}));
      expect(e).toBeInstanceOf(errorClass);
      expect(c.info.openOrdersType).toBe(ASSUMED.infoOpenOrdersType);
      if (e instanceof RestError) {
        expect(e.reason).toBe('rate_limited');
        expect(e.rateLimit?.retry_after_seconds).toBe(3);
      }
    } finally {
      await c.transport.close();
    }
  });

  it('a 200 that is not JSON is not_json; one that misses what we act on is bad_shape; neither samples the clock', async () => {
    const v = await venue([
      { status: 200, body: '<html>maintenance</html>', headers: { date: 'Thu, 01 Jan 2026 12:00:00 GMT' } },
      { status: 200, body: '{"role":null}', headers: { date: 'Thu, 01 Jan 2026 12:00:00 GMT' } },
    ]);
    const c = client(v.origin);
    try {
      const a = await rejection(c.info.userRateLimit(USER));
      expect((a as DecodeError).reason).toBe('not_json');
      expect((a as DecodeError).endpoint).toBe('info:userRateLimit');
      const b = await rejection(c.info.userRole(USER));
      expect((b as DecodeError).reason).toBe('bad_shape');
    } finally {
      await c.transport.close();
    }
    expect(c.dates).toEqual([]);
  });

  it('times out on the transport’s deadline as a TransportError', async () => {
    const v = await venue([{ status: 200, body: '[]', hang: true }]);
    const c = client(v.origin, {}, 150);
    try {
      const e = await rejection(c.info.extraAgents(USER));
      expect(e).toBeInstanceOf(TransportError);
      expect((e as TransportError).reason).toBe('timeout');
      expect((e as TransportError).endpoint).toBe('info:extraAgents');
    } finally {
      await c.transport.close();
    }
  });

  it('refuses a malformed user before sending anything, and a non-http exchange_url', async () => {
    const v = await venue([]);
    const c = client(v.origin);
    try {
      await expect(c.info.userRole('0x1234')).rejects.toThrow(TypeError);
      await expect(c.info.openOrders(`${USER} `)).rejects.toThrow(TypeError);
    } finally {
      await c.transport.close();
    }
    expect(v.seen).toEqual([]);
    expect(() => new InfoClient({ exchangeUrl: 'ftp://venue', transport: c.transport })).toThrow(TypeError);
    expect(() => new InfoClient({ exchangeUrl: `${v.origin}/?x=1`, transport: c.transport })).toThrow(TypeError);
  });
});

describe('weights of the info requests (the venue’s published defaults)', () => {
  it('pins VENUE_FACTS.infoWeights and what each request type spends', () => {
    expect(VENUE_FACTS.infoWeights).toEqual({
      exchangeAction: 1,
      other: 20,
      byType: { clearinghouseState: 2, spotClearinghouseState: 2, userRole: 60, l2Book: 2, allMids: 2, orderStatus: 2, exchangeStatus: 2 },
    });
    expect(VENUE_FACTS.ipWeightPerMinute).toBe(1200);
    expect(Object.fromEntries(INFO_REQUEST_TYPES.map((t) => [t, infoRequestWeight(t)]))).toEqual({
      frontendOpenOrders: 20,
      openOrders: 20,
      clearinghouseState: 2,
      spotClearinghouseState: 2,
      userRole: 60,
      userRateLimit: 20,
      extraAgents: 20,
    });
    expect(INFO_ENDPOINTS).toEqual(INFO_REQUEST_TYPES.map((t) => `info:${t}`));
  });
});
