import { describe, expect, it } from 'vitest';
import { AccountSchema, ActionAnswerSchema, decodeValue, OrdersPageSchema, PositionsPageSchema, RestErrorEnvelopeSchema } from '../venue/decode.js';
import { withoutNulls } from '../venue/tolerant.js';
import { parseProfile, SIM_PROFILES } from './profiles.js';

const CLOCKS = { venueNowMs: Date.UTC(2026, 10, 24, 12), hostNowMs: Date.UTC(2026, 10, 24, 12) - 30_000 };
const MAIN = '0x' + 'a'.repeat(40);
const SUB = '0x' + 'b'.repeat(40);
const ORDER = {
  order_id: 'o1',
  outcome_id: 'out1',
  side: 0,
  direction: 'buy',
  order_type: 'limit',
  time_in_force: 'gtc',
  price: '0.5',
  status: 'open',
  account: { main_account: { address: MAIN, account_type: 'main', username: 'alice' } },
};
const POSITION = { outcome_id: 'out1', side: 1, quantity: '10', value_usdc: '5.5', unrealized_pnl_usdc: '-0.25', account: { main_account: { address: MAIN, account_type: 'main' } } };

/** Answers the keeper reads, as our strict simulator writes them. */
const SAMPLES: Array<{ endpoint: string; status: number; body: unknown; schema: Parameters<typeof decodeValue>[1] }> = [
  { endpoint: 'GET /v1/accounts/{address}', status: 200, body: { address: MAIN, account_type: 'main', username: 'alice', subaccounts: [{ address: SUB, account_type: 'subaccount' }] }, schema: AccountSchema },
  { endpoint: 'GET /v1/accounts/{address}', status: 200, body: { address: SUB, account_type: 'subaccount', parent: { address: MAIN, account_type: 'main', username: 'alice' } }, schema: AccountSchema },
  { endpoint: 'GET /v1/accounts/{address}/orders', status: 200, body: { data: [ORDER, ORDER], next_cursor: 'c2' }, schema: OrdersPageSchema },
  { endpoint: 'GET /v1/accounts/{address}/orders', status: 200, body: { data: [ORDER] }, schema: OrdersPageSchema },
  { endpoint: 'GET /v1/accounts/{address}/positions', status: 200, body: { data: [POSITION], as_of: '2026-11-24T12:00:00.000Z' }, schema: PositionsPageSchema },
  { endpoint: 'POST /v1/trading/orders/schedule-cancel', status: 200, body: { status: 'ok', response: { type: 'default' } }, schema: ActionAnswerSchema },
  { endpoint: 'POST /exchange', status: 200, body: { status: 'err', response: 'Cannot set scheduled cancel time until enough volume traded.' }, schema: ActionAnswerSchema },
  {
    endpoint: 'POST /v1/trading/orders/schedule-cancel',
    status: 429,
    body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'slow', details: [{ type: 'rate_limit', limit: 10, reason: 'q', retry_after_seconds: 3, scope: 'endpoint', window_seconds: 60 }] } },
    schema: RestErrorEnvelopeSchema,
  },
];

const NAMED = SIM_PROFILES.map((p) => (p === 'random:SEED' ? 'random:42' : p));

/** What the keeper acts on, as it must arrive whatever the profile. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test's view into untyped JSON
type Json = any;

function protectedView(body: unknown): unknown {
  const b = body as Json;
  if (b.error) return { error: { code: b.error.code, status: b.error.code === 429 ? b.error.status : '*', message: b.error.message, rl: b.error.details.find((d: Json) => d.type === 'rate_limit') } };
  if (b.status) return { status: b.status, response: b.status === 'err' ? b.response : '*' };
  if (b.data) return { n: b.data.length, objects: b.data.every((x: unknown) => x !== null && typeof x === 'object'), more: typeof b.next_cursor === 'string' && b.next_cursor !== '' ? b.next_cursor : '' };
  return { account_type: b.account_type, parent: b.account_type === 'subaccount' ? b.parent.address : '*' };
}

describe('venue profiles', () => {
  it.each(NAMED)('%s never varies what the keeper acts on', (name) => {
    const p = parseProfile(name);
    for (let round = 0; round < 20; round++) {
      for (const s of SAMPLES) {
        const out = p.transform(s.endpoint, s.status, structuredClone(s.body), CLOCKS).body;
        expect(protectedView(out), `${name} ${s.endpoint}`).toEqual(protectedView(s.body));
      }
    }
  });

  it.each(['strict', 'nulls', 'omitted', 'extra_keys', 'proxy', 'stale_health', 'offset+30s', 'clock_step'])(
    '%s sends nothing the spec forbids: with null read as absent, every answer passes the strict schemas',
    (name) => {
      const p = parseProfile(name);
      for (const s of SAMPLES) {
        const out = p.transform(s.endpoint, s.status, structuredClone(s.body), CLOCKS).body;
        expect(() => decodeValue(s.endpoint, s.schema, withoutNulls(out)), `${name} ${s.endpoint}`).not.toThrow();
      }
    },
  );

  it('nulls: the cases measured from outside are there (account fields, last next_cursor, a main account order\'s subaccount)', () => {
    const p = parseProfile('nulls');
    const acct = p.transform(SAMPLES[0]!.endpoint, 200, structuredClone(SAMPLES[0]!.body), CLOCKS).body as Record<string, unknown>;
    expect(acct).toMatchObject({ account_type: 'main', username: null, image_url: null, venue_name: null, parent: null });
    const last = p.transform(SAMPLES[3]!.endpoint, 200, structuredClone(SAMPLES[3]!.body), CLOCKS).body as { next_cursor: unknown; data: Json[] };
    expect(last.next_cursor).toBeNull();
    expect(JSON.stringify(last.data)).toContain('"subaccount":null');
  });

  it('omitted, extra_keys and unknown_enums vary what they say', () => {
    const order = (name: string) => (parseProfile(name).transform(SAMPLES[3]!.endpoint, 200, structuredClone(SAMPLES[3]!.body), CLOCKS).body as { data: Array<Record<string, unknown>> }).data[0]!;
    expect(order('omitted')).toEqual({});
    expect(Object.keys(order('extra_keys')).some((k) => k.startsWith('x_extra_'))).toBe(true);
    expect(order('unknown_enums')).toMatchObject({ status: 'future_status', direction: 'future_direction' });
  });

  it('stale_health serves an old as_of with the cache\'s Date; proxy stamps some answers with the host\'s clock', () => {
    const stale = parseProfile('stale_health').transform('GET /v1/health', 200, { ok: true, as_of: new Date(CLOCKS.venueNowMs).toISOString() }, CLOCKS);
    expect(Date.parse((stale.body as { as_of: string }).as_of)).toBe(CLOCKS.venueNowMs - 90_000);
    expect(stale.dateMs).toBe(CLOCKS.venueNowMs - 90_000);
    const proxy = parseProfile('proxy');
    expect(proxy.clockOffsetMs).toBe(30_000);
    const dates = Array.from({ length: 50 }, () => proxy.transform(SAMPLES[2]!.endpoint, 200, structuredClone(SAMPLES[2]!.body), CLOCKS).dateMs);
    expect(dates.filter((d) => d === CLOCKS.hostNowMs).length).toBeGreaterThan(5);
  });

  it('random:SEED is reproducible', () => {
    const run = () => Array.from({ length: 5 }, () => JSON.stringify(parseProfile('random:7').transform(SAMPLES[2]!.endpoint, 200, structuredClone(SAMPLES[2]!.body), CLOCKS)));
    expect(run()).toEqual(run());
  });

  it('an unknown name is refused, naming the choices', () => {
    expect(() => parseProfile('chaos')).toThrow(/unknown simulator profile 'chaos'; one of: strict, nulls/);
    expect(parseProfile('offset-300s').clockOffsetMs).toBe(-300_000);
  });
});

describe('spec_dialect', () => {
  it('is the one profile that accepts the spec\'s venueChain; it varies no answer', () => {
    const p = parseProfile('spec_dialect');
    expect(p.specChainField).toBe(true);
    expect(p.clockOffsetMs).toBe(0);
    for (const s of SAMPLES) expect(p.transform(s.endpoint, s.status, structuredClone(s.body), CLOCKS).body).toEqual(s.body);
    for (const name of SIM_PROFILES.filter((n) => n !== 'spec_dialect' && n !== 'random:SEED')) expect(parseProfile(name).specChainField, name).toBe(false);
    expect(parseProfile('random:7').specChainField).toBe(false);
  });
});
