import { describe, expect, it } from 'vitest';
import { parseJson, toJson } from './json.js';

describe('toJson', () => {
  it('writes a bigint as a bare integer, beyond 2^53 exactly', () => {
    expect(toJson({ type: 'scheduleCancel', time: 1735689600000n })).toBe('{"type":"scheduleCancel","time":1735689600000}');
    expect(toJson([2n ** 64n - 1n])).toBe('[18446744073709551615]');
  });

  it('matches JSON.stringify for everything else', () => {
    const v = {
      s: 'a"b\u2028',
      n: 1.5,
      neg: -0.25,
      t: true,
      f: false,
      nul: null,
      u: undefined,
      arr: [1, undefined, () => 1, 'x'],
      nested: { d: new Date(0), empty: {} },
    };
    expect(toJson(v)).toBe(JSON.stringify(v));
  });

  it('keeps insertion key order', () => {
    expect(toJson({ type: 'a', time: 1n, nonce: 2 })).toBe('{"type":"a","time":1,"nonce":2}');
  });

  it('refuses NaN, Infinity and cycles instead of writing null', () => {
    expect(() => toJson({ nonce: Number.NaN })).toThrow(TypeError);
    expect(() => toJson({ nonce: Infinity })).toThrow(TypeError);
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => toJson(a)).toThrow(/cyclic/);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(toJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe('parseJson', () => {
  it('parses valid JSON, with or without a BOM', () => {
    expect(parseJson('{"a":[1,"2"]}')).toEqual({ ok: true, value: { a: [1, '2'] } });
    expect(parseJson('\ufeff{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it.each([
    ['{"data":[{"price":"1.5"', /end of input/],
    ['[1,2', /end of input/],
    ['<html><body>Bad Gateway SECRET</body></html>', /invalid JSON/],
    ['{"a" 1}', /position 5/],
    ['', /empty body/],
    ['   ', /empty body/],
  ])('never throws, and never quotes the input: %j', (text, want) => {
    const r = parseJson(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(want);
    expect(r.error).not.toContain('html');
    expect(r.error).not.toContain('SECRET');
    expect(r.error).not.toContain('price');
  });
});
