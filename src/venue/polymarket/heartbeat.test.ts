import { describe, expect, it } from 'vitest';
import { decodeHeartbeatAnswer, heartbeatError, heartbeatRequest, HEARTBEAT_KINDS, type HeartbeatOutcome } from './heartbeat.js';
import { ClobError, ClobRequestError, CLOB_REASONS } from './errors.js';
import { toJson } from '../json.js';

function res(status: number, body: string | Buffer, headers: Record<string, string> = {}): { status: number; headers: Record<string, string>; body: Buffer } {
  return { status, headers, body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body };
}

describe('heartbeatRequest', () => {
  it('is POST /v1/heartbeats with the body the client serializes: null before the first beat, else the id', () => {
    expect(heartbeatRequest(null)).toEqual({ method: 'POST', path: '/v1/heartbeats', json: { heartbeat_id: null }, body: '{"heartbeat_id":null}' });
    expect(heartbeatRequest('abc-1').body).toBe('{"heartbeat_id":"abc-1"}');
    expect(heartbeatRequest('').body).toBe('{"heartbeat_id":""}');
  });

  it('the body is the toJson of the object the transport sends, so the bytes signed are the bytes sent', () => {
    for (const id of [null, 'x', 'q"\\\u2028é😀']) {
      const r = heartbeatRequest(id);
      expect(toJson(r.json)).toBe(r.body);
      expect(r.body).toBe(JSON.stringify({ heartbeat_id: id }));
    }
  });

  it('refuses an id that is neither a string nor null', () => {
    expect(() => heartbeatRequest(42 as unknown as string)).toThrow(ClobRequestError);
    expect(() => heartbeatRequest(undefined as unknown as null)).toThrow(ClobRequestError);
  });
});

describe('decodeHeartbeatAnswer', () => {
  it.each<[string, ReturnType<typeof res>, HeartbeatOutcome]>([
    ['200 with the next id', res(200, '{"heartbeat_id":"hb-2"}'), { kind: 'accepted', httpStatus: 200, heartbeatId: 'hb-2' }],
    ['200 {"status":"ok"} (the API reference) has no id', res(200, '{"status":"ok"}'), { kind: 'accepted', httpStatus: 200, heartbeatId: undefined }],
    ['200 with a null id', res(200, '{"heartbeat_id":null}'), { kind: 'accepted', httpStatus: 200, heartbeatId: undefined }],
    ['200 with an id that is not a string', res(200, '{"heartbeat_id":17}'), { kind: 'accepted', httpStatus: 200, heartbeatId: undefined }],
    ['200 with an empty id', res(200, '{"heartbeat_id":""}'), { kind: 'accepted', httpStatus: 200, heartbeatId: undefined }],
    ['200 with extra keys', res(200, '{"heartbeat_id":"a","status":"ok","ttl":10,"nested":{"x":[1]}}'), { kind: 'accepted', httpStatus: 200, heartbeatId: 'a' }],
    ['200 {}', res(200, '{}'), { kind: 'accepted', httpStatus: 200, heartbeatId: undefined }],
    ['201 with an id', res(201, '{"heartbeat_id":"b"}'), { kind: 'accepted', httpStatus: 201, heartbeatId: 'b' }],
    ['200 with a UTF-8 BOM', res(200, '\ufeff{"heartbeat_id":"c"}'), { kind: 'accepted', httpStatus: 200, heartbeatId: 'c' }],
  ])('%s: accepted', (_w, r, want) => {
    expect(decodeHeartbeatAnswer(r)).toEqual(want);
  });

  it.each<[string, ReturnType<typeof res>, HeartbeatOutcome]>([
    ['the documented stale answer', res(400, '{"error":"Invalid Heartbeat ID","heartbeat_id":"cur-9"}'), { kind: 'stale', httpStatus: 400, currentId: 'cur-9', venueMessage: 'Invalid Heartbeat ID' }],
    ['stale without the current id', res(400, '{"error":"Invalid Heartbeat ID"}'), { kind: 'stale', httpStatus: 400, currentId: undefined, venueMessage: 'Invalid Heartbeat ID' }],
    ['stale with a null id', res(400, '{"error":"Invalid Heartbeat ID","heartbeat_id":null}'), { kind: 'stale', httpStatus: 400, currentId: undefined, venueMessage: 'Invalid Heartbeat ID' }],
    ['stale, its text under error_msg (as several clients read it)', res(400, '{"error_msg":"Invalid Heartbeat ID","heartbeat_id":"cur-3"}'), { kind: 'stale', httpStatus: 400, currentId: 'cur-3', venueMessage: 'Invalid Heartbeat ID' }],
    ['stale in other case and spacing, extra keys', res(400, '{"error":"invalid  heartbeat id: expected x","heartbeat_id":"cur","code":7}'), { kind: 'stale', httpStatus: 400, currentId: 'cur', venueMessage: 'invalid  heartbeat id: expected x' }],
    ['stale as plain text', res(400, 'Invalid Heartbeat ID'), { kind: 'stale', httpStatus: 400, currentId: undefined, venueMessage: 'Invalid Heartbeat ID' }],
    ['stale as a JSON string', res(400, '"Invalid Heartbeat ID"'), { kind: 'stale', httpStatus: 400, currentId: undefined, venueMessage: 'Invalid Heartbeat ID' }],
    ['a 2xx that says the id is invalid', res(200, '{"error":"Invalid Heartbeat ID"}'), { kind: 'stale', httpStatus: 200, currentId: undefined, venueMessage: 'Invalid Heartbeat ID' }],
  ])('%s: stale', (_w, r, want) => {
    expect(decodeHeartbeatAnswer(r)).toEqual(want);
  });

  it.each<[string, ReturnType<typeof res>, HeartbeatOutcome]>([
    ['400 with another error', res(400, '{"error":"Invalid body"}'), { kind: 'refused', httpStatus: 400, venueMessage: 'Invalid body' }],
    ['400 HTML from a proxy (not quoted)', res(400, '<html><body>Bad Request</body></html>'), { kind: 'refused', httpStatus: 400, venueMessage: '' }],
    ['400 empty', res(400, ''), { kind: 'refused', httpStatus: 400, venueMessage: '' }],
    ['400 with an error object', res(400, '{"error":{"why":"x"}}'), { kind: 'refused', httpStatus: 400, venueMessage: '{"why":"x"}' }],
    ['404', res(404, '{"error":"not found"}'), { kind: 'refused', httpStatus: 404, venueMessage: 'not found' }],
    ['401', res(401, '{"error":"Unauthorized/Invalid api key"}'), { kind: 'unauthorized', httpStatus: 401, venueMessage: 'Unauthorized/Invalid api key' }],
    ['403 HTML', res(403, '<html>blocked</html>'), { kind: 'unauthorized', httpStatus: 403 }],
    ['425', res(425, '{"error":"too early"}'), { kind: 'maintenance', httpStatus: 425, venueMessage: 'too early' }],
    ['503 cancel-only', res(503, '{"error":"Trading is currently cancel-only"}'), { kind: 'maintenance', httpStatus: 503, venueMessage: 'Trading is currently cancel-only' }],
    ['503 cancel only in HTML', res(503, '<html>exchange in CANCEL ONLY mode</html>'), { kind: 'maintenance', httpStatus: 503 }],
    ['503 other', res(503, 'upstream unavailable'), { kind: 'transient', cause: 'server', httpStatus: 503, venueMessage: 'upstream unavailable' }],
    ['500', res(500, '{"error":"internal"}'), { kind: 'transient', cause: 'server', httpStatus: 500, venueMessage: 'internal' }],
    ['502 empty', res(502, ''), { kind: 'transient', cause: 'server', httpStatus: 502 }],
    ['429 with Retry-After', res(429, '{"error":"slow down"}', { 'retry-after': '3' }), { kind: 'rate_limited', httpStatus: 429, retryAfterMs: 3000, venueMessage: 'slow down' }],
    ['429 without Retry-After', res(429, ''), { kind: 'rate_limited', httpStatus: 429 }],
    ['429 with a garbled Retry-After', res(429, '', { 'retry-after': 'soon' }), { kind: 'rate_limited', httpStatus: 429 }],
    ['200 not JSON', res(200, '<html>ok</html>'), { kind: 'transient', cause: 'not_json', httpStatus: 200 }],
    ['200 empty', res(200, ''), { kind: 'transient', cause: 'not_json', httpStatus: 200 }],
    ['200 truncated JSON', res(200, '{"heartbeat_id":"a'), { kind: 'transient', cause: 'not_json', httpStatus: 200 }],
    ['200 not UTF-8', res(200, Buffer.from([0x7b, 0xff, 0x7d])), { kind: 'transient', cause: 'not_json', httpStatus: 200 }],
    ['200 an array', res(200, '[{"heartbeat_id":"a"}]'), { kind: 'transient', cause: 'bad_shape', httpStatus: 200 }],
    ['200 null', res(200, 'null'), { kind: 'transient', cause: 'bad_shape', httpStatus: 200 }],
    ['200 with another error and no id', res(200, '{"error":"something"}'), { kind: 'transient', cause: 'bad_shape', httpStatus: 200, venueMessage: 'something' }],
    ['302 (redirects are not followed)', res(302, ''), { kind: 'transient', cause: 'bad_status', httpStatus: 302 }],
  ])('%s', (_w, r, want) => {
    expect(decodeHeartbeatAnswer(r)).toEqual(want);
  });

  it('an HTTP-date Retry-After counts against the given now', () => {
    const nowMs = Date.parse('2026-11-28T12:00:00Z');
    expect(decodeHeartbeatAnswer(res(429, '', { 'retry-after': 'Sat, 28 Nov 2026 12:00:07 GMT' }), nowMs)).toEqual({ kind: 'rate_limited', httpStatus: 429, retryAfterMs: 7000 });
  });

  it('a long venue text is cut, and a long plain body is not quoted at all', () => {
    const long = decodeHeartbeatAnswer(res(400, JSON.stringify({ error: 'x'.repeat(5000) })));
    expect(long.kind).toBe('refused');
    expect((long as { venueMessage: string }).venueMessage.length).toBe(5000); // verbatim in the outcome...
    expect(heartbeatError(long as Exclude<HeartbeatOutcome, { kind: 'accepted' }>).message.length).toBeLessThan(500); // ...cut in the error
    expect(decodeHeartbeatAnswer(res(400, 'y'.repeat(600)))).toEqual({ kind: 'refused', httpStatus: 400, venueMessage: '' });
  });

  it('every kind it returns is a known one, and every failure kind is an error reason', () => {
    expect([...HEARTBEAT_KINDS].filter((k) => k !== 'accepted').sort()).toEqual([...CLOB_REASONS].sort());
  });
});

describe('heartbeatError', () => {
  it('carries a stable code, the reason, the status, the venue text and Retry-After', () => {
    const e = heartbeatError({ kind: 'rate_limited', httpStatus: 429, retryAfterMs: 2000, venueMessage: 'slow' });
    expect(e).toBeInstanceOf(ClobError);
    expect(e).toMatchObject({ code: 'POLYMARKET_CLOB_ERROR', reason: 'rate_limited', httpStatus: 429, retryAfterMs: 2000, venueMessage: 'slow', endpoint: 'POST /v1/heartbeats' });
    expect(heartbeatError({ kind: 'stale', httpStatus: 400, currentId: 'c', venueMessage: 'Invalid Heartbeat ID' }).message).toContain('stale');
    expect(heartbeatError({ kind: 'transient', cause: 'timeout' }).message).toContain('timeout');
  });
});
