import { isDecimal } from './decimal.js';
import { ASSUMED } from './assumptions.js';
import { describe, expect, it } from 'vitest';
import {
  AccountSchema,
  ActionAnswerSchema,
  EventSchema,
  HealthSchema,
  MarketTemplateSchema,
  OpenOrderSchema,
  OrdersPageSchema,
  OutcomeBookSchema,
  OutcomeSchema,
  OutcomeStatsSchema,
  ParticipantSchema,
  PositionSchema,
  TopicSchema,
  decodeActionResponse,
  decodeRestErrorBody,
  decodeResponse,
  decodeValue,
  errorForStatus,
  formatPath,
} from './decode.js';
import { ActionError, DecodeError, RestError } from './errors.js';
import type { HttpResponse } from './http.js';

const EP = 'GET /v1/test';

function res(status: number, body: string | object, headers: Record<string, string> = {}): HttpResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { status, headers, body: Buffer.from(text, 'utf8'), latencyMs: 1, sentMonoMs: 0, recvMonoMs: 1 };
}

function decodeFails(schema: Parameters<typeof decodeValue>[1], value: unknown): DecodeError {
  try {
    decodeValue(EP, schema, value);
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    return e as DecodeError;
  }
  throw new Error('expected a DecodeError');
}

const OUTCOME = {
  id: 'o1',
  slug: 'will-it-rain',
  event_id: 'e1',
  title: 'Will it rain?',
  status: 'active',
  hl_question_id: null,
  hl_id: null,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  hl_template_id: 't1',
  hl_keywords: { city: 'Paris' },
  hl_settle_fraction: null,
  hl_rules: 'rules',
  question_id: null,
  settlement: [],
  hl_settlement: [],
  sides: [
    { side: 0, label: 'Yes', abbreviation: null, hl_asset_id: '100' },
    { side: 1, label: 'No', abbreviation: null, hl_asset_id: '101' },
  ],
  trading: { quote: 'USDC', min_notional: '10', tick_size: '0.0001', lot_size: '0.01' },
  providers: [{ provider: 'sportradar', id: 'sr:1' }],
  sports_market: null,
  price_target: { asset: 'BTC', comparator: 'above', strike: '100000.5' },
};

const ORDER = {
  order_id: 'ord-1',
  venue_order_id: '123',
  client_order_id: '0xabc',
  outcome_id: 'o1',
  side: 0,
  direction: 'buy',
  order_type: 'limit',
  time_in_force: 'gtc',
  price: '0.55',
  original_quantity: '10',
  filled_quantity: '2.5',
  remaining_quantity: '7.5',
  status: 'open',
  account: { main_account: { address: '0xaa', account_type: 'main' } },
  created_at: '2026-01-01T00:00:00Z',
  submitted_by: null,
};

describe('resource decoders accept the spec shapes', () => {
  it('Outcome, with every documented null', () => {
    const o = decodeValue(EP, OutcomeSchema, OUTCOME);
    expect(o.hl_id).toBeNull();
    expect(o.hl_settle_fraction).toBeNull();
    expect(o.sides?.[1]).toEqual({ side: 1, label: 'No', abbreviation: null, hl_asset_id: '101' });
    expect(o.price_target?.strike).toBe('100000.5');
    expect(o.hl_keywords).toEqual({ city: 'Paris' });
  });

  it('OpenOrder: submitted_by null or an AccountRef; time_in_force absent stays absent', () => {
    const a = decodeValue(EP, OpenOrderSchema, ORDER);
    expect(a.submitted_by).toBeNull();
    const { time_in_force: _tif, ...noTif } = ORDER;
    const b = decodeValue(EP, OpenOrderSchema, { ...noTif, submitted_by: { address: '0xbb', account_type: 'subaccount' } });
    expect(b.submitted_by).toEqual({ address: '0xbb', account_type: 'subaccount' });
    expect('time_in_force' in b).toBe(false);
  });

  it('Position', () => {
    const p = decodeValue(EP, PositionSchema, {
      outcome_id: 'o1',
      side: 1,
      quantity: '3',
      average_entry_price: '0.4',
      realized_pnl_usdc: '-1.25',
      opened_at: '2026-01-01T00:00:00Z',
    });
    expect(p).toEqual({ outcome_id: 'o1', side: 1, quantity: '3', average_entry_price: '0.4', realized_pnl_usdc: '-1.25', opened_at: '2026-01-01T00:00:00Z' });
  });

  it('Account', () => {
    const a = decodeValue(EP, AccountSchema, {
      account_type: 'main',
      address: '0xaa',
      subaccounts: [{ address: '0xbb', account_type: 'subaccount' }],
    });
    expect(a.subaccounts?.[0]?.account_type).toBe('subaccount');
  });

  it('Event with nulls, outcomes, questions, participants and contest', () => {
    const e = decodeValue(EP, EventSchema, {
      id: 'e1',
      slug: 'ev',
      status: 'settled',
      image_url: null,
      series: null,
      category: { id: 'c', name: 'Cat' },
      outcomes: [OUTCOME],
      questions: [{ id: 'q1', deployer_fee_scale: '0.5', hl_keywords: {} }],
      participants: [{ id: 'p1', name: 'Home', side: 0 }],
      contest: { status: 'live', started_at: '2026-01-01T00:00:00Z' },
    });
    expect(e.series).toBeNull();
    expect(e.outcomes?.[0]?.id).toBe('o1');
    expect(e.contest?.status).toBe('live');
  });

  it('Participant colour null, Topic tree, MarketTemplate parent null', () => {
    expect(decodeValue(EP, ParticipantSchema, { id: 'p', color: null, slug: 'p' }).color).toBeNull();
    const t = decodeValue(EP, TopicSchema, {
      id: 'sports',
      categories: [{ id: 'soccer', series: [{ id: 'epl', providers: [{ provider: 'x', id: '1' }] }] }],
    });
    expect(t.categories?.[0]?.series?.[0]?.providers?.[0]?.id).toBe('1');
    expect(decodeValue(EP, MarketTemplateSchema, { id: 't', kind: 'standalone', parent: null, keywords: [{ name: 'a', hint: 'b' }] }).parent).toBeNull();
  });

  it('OutcomeBook, OutcomeStats, Health', () => {
    const b = decodeValue(EP, OutcomeBookSchema, {
      outcome_id: 'o1',
      state: 'active',
      depth: 10,
      revision: '42',
      sides: [{ side: 0, bids: [{ price: '0.5', size: '10', orders: [{ oid: '1', address: '0xaa', size: '10', priority: 3, source_side: 1 }] }], asks: [] }],
      accounts: { data: [{ address: '0xaa' }] },
    });
    expect(b.sides?.[0]?.bids?.[0]?.orders?.[0]?.source_side).toBe(1);
    const s = decodeValue(EP, OutcomeStatsSchema, { volume_usdc: '1000.25', trade_count: 7, sides: [{ side: 0, open_quantity: '5', holder_count: 2 }] });
    expect(s.trade_count).toBe(7);
    expect(decodeValue(EP, HealthSchema, { ok: true, as_of: '2026-01-01T00:00:00Z', block: '123456' })).toEqual({
      ok: true,
      as_of: '2026-01-01T00:00:00Z',
      block: '123456',
    });
  });

  it('strips unknown keys everywhere, consistently', () => {
    const p = decodeValue(EP, OrdersPageSchema, { data: [{ ...ORDER, surprise: 1 }], next_cursor: 'c', extra: { x: 1 } });
    expect(p).not.toHaveProperty('extra');
    expect(p.data?.[0]).not.toHaveProperty('surprise');
  });

  it('accepts decimal forms the chain sends (0.0, negative, integer)', () => {
    for (const d of ['0', '0.0', '-12.5', '100000']) {
      expect(decodeValue(EP, HealthSchema, { block: d }).block).toBe(d);
    }
  });

  it('one decimal grammar: what the strict schema refuses, the sums could not add either', () => {
    for (const d of ['.5', '5.', '1e3', '+1', ' 1']) {
      expect(() => decodeValue(EP, HealthSchema, { block: d }), d).toThrow(/block: expected decimal string/);
      expect(isDecimal(d), d).toBe(false);
    }
  });
});

describe('resource decoders refuse what the spec rules out', () => {
  it('a JSON number where a decimal is due, naming the path', () => {
    const e = decodeFails(OrdersPageSchema, { data: [ORDER, ORDER, ORDER, { ...ORDER, price: 0.55 }] });
    expect(e.reason).toBe('bad_shape');
    expect(e.message).toContain('data[3].price: expected decimal string');
  });

  it.each(['1e-8', '0x10', '1,5', ' 1', 'NaN', '', '1.'])('a string that is not a base-10 decimal: %j', (d) => {
    expect(decodeFails(HealthSchema, { block: d }).message).toContain('block: expected decimal string');
  });

  it.each([
    ['OpenOrder.price', OpenOrderSchema, { ...ORDER, price: null }, 'price:'],
    ['OpenOrder.account', OpenOrderSchema, { ...ORDER, account: null }, 'account:'],
    ['Outcome.slug', OutcomeSchema, { ...OUTCOME, slug: null }, 'slug:'],
    ['Outcome.trading', OutcomeSchema, { ...OUTCOME, trading: null }, 'trading:'],
    ['Event.participants', EventSchema, { id: 'e', participants: null }, 'participants:'],
  ] as const)('null where not nullable: %s', (_name, schema, value, path) => {
    const e = decodeFails(schema, value);
    expect(e.message).toContain(path);
    expect(e.message).toContain('received null');
  });

  it('enums are exact', () => {
    expect(decodeFails(OpenOrderSchema, { ...ORDER, direction: 'BUY' }).message).toContain('direction:');
    expect(decodeFails(OutcomeSchema, { ...OUTCOME, status: 'open' }).message).toContain('status:');
  });

  it('integers are integers', () => {
    expect(decodeFails(OpenOrderSchema, { ...ORDER, side: 0.5 }).message).toContain('side:');
    expect(decodeFails(OpenOrderSchema, { ...ORDER, side: '0' }).message).toContain('side: expected number');
  });

  it('nested paths, and a count of further issues, never the values', () => {
    const secret = 'SECRET-VALUE-0xdeadbeef';
    const e = decodeFails(EventSchema, {
      outcomes: [OUTCOME, { ...OUTCOME, sides: [{ side: 0, label: 5 }, { side: 1, hl_asset_id: 7 }] }],
      title: 42,
      slug: secret.length,
      image_url: { secret },
    });
    expect(e.message).toMatch(/: (title|slug|image_url|outcomes\[1\]\.sides\[\d\]\.\w+): .* \(and \d+ more issues\)$/);
    expect(e.message).not.toContain(secret);
  });

  it('the root must be an object', () => {
    expect(decodeFails(HealthSchema, null).message).toContain('(root): expected object, received null');
    expect(decodeFails(HealthSchema, [1]).message).toContain('(root): expected object');
  });
});

describe('formatPath', () => {
  it('writes JS-like paths and bounds body-controlled keys', () => {
    expect(formatPath(['data', 3, 'price'])).toBe('data[3].price');
    expect(formatPath(['included', 'outcomes', 0, 'hl_keywords', 'a b'])).toBe('included.outcomes[0].hl_keywords["a b"]');
    expect(formatPath([])).toBe('(root)');
    expect(formatPath(['k', 'x'.repeat(500)]).length).toBeLessThan(100);
  });
});

describe('decodeResponse', () => {
  it('2xx JSON -> decoded value', () => {
    expect(decodeResponse(EP, res(200, { ok: true }), HealthSchema)).toEqual({ ok: true });
  });

  it('2xx truncated JSON -> not_json with the status', () => {
    const e = (() => {
      try {
        decodeResponse(EP, res(200, '{"data":[{"order_id":"a"'), OrdersPageSchema);
      } catch (err) {
        return err as DecodeError;
      }
      throw new Error('no error');
    })();
    expect(e).toBeInstanceOf(DecodeError);
    expect(e.reason).toBe('not_json');
    expect(e.httpStatus).toBe(200);
    expect(e.message).not.toContain('order_id');
  });

  it('2xx invalid UTF-8 -> not_json', () => {
    const r: HttpResponse = { status: 200, headers: {}, body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), latencyMs: 0, sentMonoMs: 0, recvMonoMs: 0 };
    expect(() => decodeResponse(EP, r, HealthSchema)).toThrow(expect.objectContaining({ reason: 'not_json' }));
  });

  it('2xx: a value that does not fit a field the keeper does not act on is skipped, not fatal', () => {
    expect(decodeResponse(EP, res(200, { ok: 'yes', as_of: '2026-01-01T00:00:00Z' }), HealthSchema)).toEqual({ as_of: '2026-01-01T00:00:00Z' });
  });

  it('2xx: a problem at a field the keeper acts on -> bad_shape naming it', () => {
    const contract = { critical: [['data'], ['data', '*'], ['next_cursor']], required: ['data'] };
    expect(() => decodeResponse(EP, res(200, { data: [{}], next_cursor: 7 }), OrdersPageSchema, contract)).toThrow(/next_cursor: expected string/);
    expect(() => decodeResponse(EP, res(200, { data: [null] }), OrdersPageSchema, contract)).toThrow(/data\[0\]: expected object/);
    expect(() => decodeResponse(EP, res(200, { data: null }), OrdersPageSchema, contract)).toThrow(/data: required, but absent or null/);
    expect(() => decodeResponse(EP, res(200, [1, 2]), OrdersPageSchema, contract)).toThrow(/bad_shape/);
    const page = decodeResponse(EP, res(200, { data: [{ price: 0.5, direction: 'sideways', account: { main_account: null, subaccount: null } }], next_cursor: null }), OrdersPageSchema, contract);
    expect(page).toEqual({ data: [{ account: {} }] });
  });

  it('HTML 502 from a proxy -> bad_status carrying 502, not the page', () => {
    const html = '<html><head><title>502 Bad Gateway</title></head><body>nginx internal-host-7</body></html>';
    const e = errorForStatus(EP, res(502, html, { 'content-type': 'text/html; charset=utf-8' }));
    expect(e).toBeInstanceOf(DecodeError);
    expect((e as DecodeError).reason).toBe('bad_status');
    expect((e as DecodeError).httpStatus).toBe(502);
    expect(e.message).toContain('text/html');
    expect(e.message).not.toContain('internal-host');
  });

  it("the venue's 422 plain text is quoted (the operator's one clue); a long or unprintable text is not", () => {
    const text = 'Failed to deserialize the JSON body into the target type';
    const e = errorForStatus(EP, res(422, text, { 'content-type': 'text/plain; charset=utf-8' }));
    expect(e).toMatchObject({ reason: 'bad_status', httpStatus: 422 });
    expect(e.message).toContain(`: "${text}"`);
    expect(errorForStatus(EP, res(422, 'x'.repeat(600), { 'content-type': 'text/plain' })).message).not.toContain('xxx');
    expect(errorForStatus(EP, res(422, 'bad\u0007bell', { 'content-type': 'text/plain' })).message).not.toContain('bell');
    expect(errorForStatus(EP, res(422, 'y'.repeat(300), { 'content-type': 'text/plain' })).message).toContain(`"${'y'.repeat(160)}…"`);
  });

  it('non-2xx JSON that is not the envelope -> bad_status', () => {
    expect(errorForStatus(EP, res(500, { message: 'oops' }))).toMatchObject({ reason: 'bad_status', httpStatus: 500 });
    expect(errorForStatus(EP, res(400, { error: 'x' }))).toMatchObject({ reason: 'bad_status' });
  });

  it('an envelope with a status name the spec does not list is still the venue\'s envelope', () => {
    const e = errorForStatus(EP, res(400, { error: { code: 400, status: 'BAD', message: 'x', details: [], more: 1 } }));
    expect(e).toBeInstanceOf(RestError);
    expect((e as RestError).venueWrote).toBe(true);
    expect((e as RestError).body.status).toBe('BAD');
  });

  it('a 429 without an envelope still holds its scope: Retry-After, else the assumed default', () => {
    const withHeader = errorForStatus(EP, res(429, '<html>slow down</html>', { 'content-type': 'text/html', 'retry-after': '12' }));
    expect(withHeader).toBeInstanceOf(RestError);
    expect((withHeader as RestError).venueWrote).toBe(false);
    expect((withHeader as RestError).rateLimit).toMatchObject({ retry_after_seconds: 12, scope: 'global', limit: 0 });
    const bare = errorForStatus(EP, res(429, ''));
    expect((bare as RestError).rateLimit?.retry_after_seconds).toBe(ASSUMED.rateLimitRetryAfterDefaultSeconds);
  });
});

describe('RESTError envelope', () => {
  it('rate_limit detail with retry_after_seconds, scope and window_seconds', () => {
    const e = errorForStatus(
      'POST /v1/trading/orders/schedule-cancel',
      res(429, {
        error: {
          code: 429,
          status: 'RESOURCE_EXHAUSTED',
          message: 'slow down',
          details: [{ type: 'rate_limit', limit: 60, reason: 'schedule_cancel_per_ip', retry_after_seconds: 7, scope: 'endpoint', window_seconds: 60 }],
        },
      }),
    );
    expect(e).toBeInstanceOf(RestError);
    const r = e as RestError;
    expect(r.reason).toBe('rate_limited');
    expect(r.httpStatus).toBe(429);
    expect(r.body.status).toBe('RESOURCE_EXHAUSTED');
    expect(r.rateLimit).toEqual({ type: 'rate_limit', limit: 60, reason: 'schedule_cancel_per_ip', retry_after_seconds: 7, scope: 'endpoint', window_seconds: 60 });
  });

  it('global scope', () => {
    const body = decodeRestErrorBody(
      Buffer.from(
        JSON.stringify({
          error: {
            code: 429,
            status: 'RESOURCE_EXHAUSTED',
            message: 'm',
            details: [{ type: 'rate_limit', limit: 1000, reason: 'global', retry_after_seconds: 1, scope: 'global', window_seconds: 10 }],
          },
        }),
      ),
    );
    expect(body?.details[0]).toMatchObject({ scope: 'global', retry_after_seconds: 1 });
  });

  it('field_violation details', () => {
    const e = errorForStatus(
      EP,
      res(400, {
        error: {
          code: 400,
          status: 'INVALID_ARGUMENT',
          message: 'bad limit',
          details: [
            { type: 'field_violation', field: 'limit', reason: 'out_of_range' },
            { type: 'field_violation', field: 'cursor', reason: 'malformed' },
          ],
        },
      }),
    ) as RestError;
    expect(e.reason).toBe('invalid');
    expect(e.fieldViolations.map((f) => f.field)).toEqual(['limit', 'cursor']);
    expect(e.message).toContain('400 INVALID_ARGUMENT: bad limit');
  });

  it('dependency detail', () => {
    const e = errorForStatus(
      EP,
      res(503, { error: { code: 503, status: 'UNAVAILABLE', message: 'indexer down', details: [{ type: 'dependency', reason: 'index_lagging' }] } }),
    ) as RestError;
    expect(e.reason).toBe('unavailable');
    expect(e.dependency).toEqual({ type: 'dependency', reason: 'index_lagging' });
  });

  it('a rate_limit detail missing fields is completed (Retry-After, else the default; global scope); an unknown kind is dropped', () => {
    const partial = decodeRestErrorBody(
      Buffer.from(JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'm', details: [{ type: 'rate_limit', limit: 1, scope: null }] } })),
      429,
      '3',
    );
    expect(partial?.details).toEqual([{ type: 'rate_limit', limit: 1, reason: 'unknown', retry_after_seconds: 3, scope: 'global', window_seconds: 0 }]);
    const future = decodeRestErrorBody(
      Buffer.from(
        JSON.stringify({
          error: { code: 500, status: 'INTERNAL', message: 'm', details: [{ type: 'debug_info', trace: 'x' }, { type: 'dependency', reason: 'db' }] },
        }),
      ),
    );
    expect(future?.details).toEqual([{ type: 'dependency', reason: 'db' }]);
  });

  it('details, code, status and message may be missing or null: still the venue\'s envelope', () => {
    expect(decodeRestErrorBody(Buffer.from(JSON.stringify({ error: { code: 500, status: 'INTERNAL', message: 'm' } })))).toEqual({ code: 500, status: 'INTERNAL', message: 'm', details: [] });
    expect(decodeRestErrorBody(Buffer.from(JSON.stringify({ error: { code: null, status: null, message: null, details: null } })), 503)).toEqual({ code: 503, status: 'UNKNOWN', message: '', details: [] });
  });
});

describe('action answers', () => {
  it('ok -> returned', () => {
    expect(decodeActionResponse('exchange:scheduleCancel', res(200, { status: 'ok', response: { type: 'default' } }))).toEqual({
      status: 'ok',
      response: { type: 'default' },
    });
  });

  it.each([
    ['Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $12.5.', 'ineligible'],
    ['Invalid nonce: duplicate nonce', 'invalid_nonce'],
    ['User or API Wallet 0x0000000000000000000000000000000000000001 does not exist.', 'unknown_signer'],
    ['Too many cumulative requests sent (12000 > 10000) for cumulative volume traded $0.', 'address_budget'],
    ['brand new text', 'other'],
  ])('err %j -> ActionError %s', (text, reason) => {
    let caught: unknown;
    let value: unknown;
    try {
      value = decodeActionResponse('exchange:scheduleCancel', res(200, { status: 'err', response: text }));
    } catch (e) {
      caught = e;
    }
    expect(value).toBeUndefined();
    expect(caught).toBeInstanceOf(ActionError);
    expect((caught as ActionError).reason).toBe(reason);
    expect((caught as ActionError).venueMessage).toBe(text);
  });

  it('err with a non-string response is still a refusal', () => {
    expect(() => decodeActionResponse('exchange:approveAgent', res(200, { status: 'err', response: { why: 'x' } }))).toThrow(ActionError);
  });

  it.each([
    [{ status: 'unknown' }],
    [{ response: 'ok' }],
    [{ status: 'OK' }],
    [null],
    ['ok'],
  ])('anything else -> DecodeError bad_shape: %j', (body) => {
    expect(() => decodeActionResponse('exchange:scheduleCancel', res(200, JSON.stringify(body)))).toThrow(
      expect.objectContaining({ code: 'VENUE_DECODE_ERROR', reason: 'bad_shape' }),
    );
  });

  it('the schema keeps ok and err apart', () => {
    expect(ActionAnswerSchema.safeParse({ status: 'ok' }).success).toBe(true);
    expect(ActionAnswerSchema.safeParse({ status: 'error', response: 'x' }).success).toBe(false);
  });
});
