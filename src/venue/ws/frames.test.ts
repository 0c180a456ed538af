import { describe, expect, it } from 'vitest';
import { VENUE_FACTS } from '../facts.js';
import { backoffCeilingMs, backoffDelayMs, DEFAULT_BACKOFF } from './backoff.js';
import {
  attributeNotification,
  encodePing,
  encodeSubscription,
  normalizeAddress,
  parseServerFrame,
  userNamedIn,
} from './frames.js';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);
const C = '0x' + '0123456789'.repeat(4);

describe('encoding', () => {
  it('subscribe/unsubscribe match the documented JSON byte for byte', () => {
    expect(encodeSubscription('subscribe', A)).toBe(
      `{"method":"subscribe","subscription":{"type":"notification","user":"${A}"}}`,
    );
    expect(encodeSubscription('unsubscribe', A)).toBe(
      `{"method":"unsubscribe","subscription":{"type":"notification","user":"${A}"}}`,
    );
    expect(encodePing()).toBe('{"method":"ping"}');
  });

  it('normalizeAddress lower-cases and rejects non-addresses', () => {
    expect(normalizeAddress('0x' + 'AbCd'.repeat(10))).toBe('0x' + 'abcd'.repeat(10));
    expect(normalizeAddress(` ${A} `)).toBe(A);
    expect(normalizeAddress('0x1234')).toBeUndefined();
    expect(normalizeAddress('a'.repeat(42))).toBeUndefined();
    expect(normalizeAddress(A + '0')).toBeUndefined();
  });
});

describe('parseServerFrame', () => {
  it.each([
    [VENUE_FACTS.wsGreeting, { kind: 'greeting' }],
    ['{"channel":"pong"}', { kind: 'pong' }],
    ['{"channel":"error","data":"Invalid subscription"}', { kind: 'error', message: 'Invalid subscription' }],
    ['{"channel":"error","data":{"code":1}}', { kind: 'error', message: '{"code":1}' }],
    ['{"channel":"error"}', { kind: 'error', message: '' }],
    [
      `{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"notification","user":"${A.toUpperCase().replace('0X', '0x')}"}}}`,
      { kind: 'subscription_ack', method: 'subscribe', subscriptionType: 'notification', user: A },
    ],
    [
      '{"channel":"subscriptionResponse","data":{"method":"unsubscribe","subscription":{"type":"notification","user":"nope"}}}',
      { kind: 'subscription_ack', method: 'unsubscribe', subscriptionType: 'notification', user: undefined },
    ],
    [
      '{"channel":"notification","data":{"notification":"Order cancelled"}}',
      { kind: 'notification', text: 'Order cancelled', user: undefined },
    ],
    [
      `{"channel":"notification","data":{"notification":"x","user":"${A}"}}`,
      { kind: 'notification', text: 'x', user: A },
    ],
    // Unknown payload shapes are still reasons to reconcile: delivered with their JSON as text.
    ['{"channel":"notification","data":{"other":1}}', { kind: 'notification', text: '{"other":1}', user: undefined }],
    ['{"channel":"notification","data":"plain"}', { kind: 'notification', text: 'plain', user: undefined }],
    ['{"channel":"notification"}', { kind: 'unparsed', reason: 'malformed', sample: '{"channel":"notification"}' }],
    ['{"channel":"subscriptionResponse","data":5}', { kind: 'unparsed', reason: 'malformed', sample: '{"channel":"subscriptionResponse","data":5}' }],
    ['Websocket connection established', { kind: 'unparsed', reason: 'not_json', sample: 'Websocket connection established' }],
    ['{"chan', { kind: 'unparsed', reason: 'not_json', sample: '{"chan' }],
    ['null', { kind: 'unparsed', reason: 'malformed', sample: 'null' }],
    ['[1,2]', { kind: 'unparsed', reason: 'malformed', sample: '[1,2]' }],
    ['{"channel":7}', { kind: 'unparsed', reason: 'malformed', sample: '{"channel":7}' }],
    ['{"channel":"trades","data":[]}', { kind: 'unparsed', reason: 'unknown_channel', sample: '{"channel":"trades","data":[]}' }],
    ['', { kind: 'unparsed', reason: 'not_json', sample: '' }],
  ])('%s', (text, want) => {
    expect(parseServerFrame(Buffer.from(text), false)).toEqual(want);
    expect(parseServerFrame(text, false)).toEqual(want);
  });

  it('binary frames and fragmented buffers', () => {
    expect(parseServerFrame(Buffer.from([1, 2, 3]), true)).toEqual({ kind: 'unparsed', reason: 'binary', sample: '<3 bytes>' });
    expect(parseServerFrame([Buffer.from('{"chan'), Buffer.from('nel":"pong"}')], false)).toEqual({ kind: 'pong' });
    const ab = new TextEncoder().encode('{"channel":"pong"}').buffer;
    expect(parseServerFrame(ab, false)).toEqual({ kind: 'pong' });
  });

  it('keeps only a bounded sample of a huge odd frame', () => {
    const f = parseServerFrame('x'.repeat(100_000), false);
    expect(f.kind).toBe('unparsed');
    if (f.kind === 'unparsed') expect(f.sample.length).toBeLessThanOrEqual(201);
  });
});

describe('attributeNotification', () => {
  it('single candidate is unambiguous', () => {
    expect(attributeNotification('Order cancelled', undefined, [A])).toBe(A);
  });
  it('explicit user wins', () => {
    expect(attributeNotification('Order cancelled', B, [A, B])).toBe(B);
  });
  it('several candidates and no address: unknown', () => {
    expect(attributeNotification('Order cancelled', undefined, [A, B])).toBeUndefined();
  });
  it('exactly one subscribed address in the text (any case)', () => {
    expect(attributeNotification(`Cancelled for ${B.toUpperCase().replace('0X', '0x')}.`, undefined, [A, B])).toBe(B);
    expect(attributeNotification(`Transfer ${A} -> ${C}`, undefined, [A, B])).toBe(A);
  });
  it('two subscribed addresses in the text: ambiguous', () => {
    expect(attributeNotification(`${A} and ${B}`, undefined, [A, B])).toBeUndefined();
  });
  it('a longer hex string is not an address', () => {
    expect(userNamedIn(`${A}ff`, [A, B])).toBeUndefined();
  });
});

describe('backoff', () => {
  it('ceiling grows by factor and caps at max', () => {
    const ceilings = [0, 1, 2, 3, 4, 5, 6, 7, 20, 5000].map((n) => backoffCeilingMs(n, DEFAULT_BACKOFF));
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
  });

  it('delay = random() * ceiling (full jitter)', () => {
    expect(backoffDelayMs(0, () => 0, DEFAULT_BACKOFF)).toBe(0);
    expect(backoffDelayMs(0, () => 0.5, DEFAULT_BACKOFF)).toBe(250);
    expect(backoffDelayMs(3, () => 0.25, DEFAULT_BACKOFF)).toBe(1000);
    expect(backoffDelayMs(10, () => 0.999, DEFAULT_BACKOFF)).toBe(29970);
    expect(backoffDelayMs(2, () => 0.5, { initialMs: 100, maxMs: 10_000, factor: 3 })).toBe(450);
  });

  it('jitter spreads delays within [0, ceiling)', () => {
    const seq = [0.1, 0.9, 0.4, 0.7];
    let i = 0;
    const rnd = (): number => seq[i++ % seq.length] ?? 0;
    const delays = Array.from({ length: 4 }, () => backoffDelayMs(2, rnd, DEFAULT_BACKOFF));
    expect(delays).toEqual([200, 1800, 800, 1400]);
  });

  it('a faulty random source cannot make a negative or oversized delay', () => {
    expect(backoffDelayMs(0, () => -3, DEFAULT_BACKOFF)).toBe(0);
    expect(backoffDelayMs(0, () => 7, DEFAULT_BACKOFF)).toBe(500);
    expect(backoffDelayMs(0, () => Number.NaN, DEFAULT_BACKOFF)).toBe(0);
  });
});
