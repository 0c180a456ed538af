import { describe, expect, it } from 'vitest';
import { addDecimals, decAdd, decCanonical, decCmp, decMul, decSub, decSum, isDecimal, pow10Neg } from './decimal.js';

describe('decimal', () => {
  it.each([
    ['0.1', '0.2', '0.3'],
    ['1', '-1.5', '-0.5'],
    ['100000.50', '0.005', '100000.505'],
    ['-0.1', '0.1', '0'],
  ])('%s + %s = %s', (a, b, want) => expect(decAdd(a, b)).toBe(want));

  it('subtracts, multiplies, compares exactly', () => {
    expect(decSub('10', '0.0001')).toBe('9.9999');
    expect(decMul('0.55', '120')).toBe('66');
    expect(decMul('-1.5', '0.3')).toBe('-0.45');
    expect(decCmp('0.0', '0')).toBe(0);
    expect(decCmp('1.10', '1.1')).toBe(0);
    expect(decCmp('-2', '1')).toBe(-1);
    expect(decCmp('12345678901234567890.1', '12345678901234567890')).toBe(1);
  });

  it('canonicalises and validates', () => {
    expect(decCanonical('0.0')).toBe('0');
    expect(decCanonical('-0.000')).toBe('0');
    expect(decCanonical('007.50')).toBe('7.5');
    expect(isDecimal('1e5')).toBe(false);
    expect(isDecimal('.5')).toBe(false);
    expect(isDecimal('5.')).toBe(false);
    expect(isDecimal(5)).toBe(false);
    expect(() => decAdd('abc', '1')).toThrow(TypeError);
    expect(decSum(['0.1', '0.1', '0.1'])).toBe('0.3');
    expect(addDecimals(['1', 'oops', '2.5'])).toBe('3.5');
    expect(pow10Neg(0)).toBe('1');
    expect(pow10Neg(3)).toBe('0.001');
  });
});
