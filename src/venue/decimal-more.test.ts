import { describe, expect, it } from 'vitest';
import { decAdd, decCanonical, decCmp, decSub, decSum, isDecimal, parseFixed, pow10Neg } from './decimal.js';

describe('fixed-point decimals', () => {
  it('adds without float error', () => {
    // As floats this is 0.30000000000000004: the reason the helper exists.
    expect(decAdd('0.1', '0.2')).toBe('0.3');
    expect(decSum(['0.1', '0.2', '0.3', '0.4'])).toBe('1');
    expect(decSum(['123456789012345678.000000001', '0.999999999'])).toBe('123456789012345679');
    expect(decSum([])).toBe('0');
  });

  it('subtracts, including across zero', () => {
    expect(decSub('1', '0.55')).toBe('0.45');
    expect(decSub('1', '0.0')).toBe('1');
    expect(decSub('0.5', '0.75')).toBe('-0.25');
    expect(decSub('2', '2.000')).toBe('0');
  });

  it('compares as numbers, not as text', () => {
    expect(decCmp('0.0', '0')).toBe(0);
    expect(decCmp('10', '9.99')).toBe(1);
    expect(decCmp('0.09', '0.1')).toBe(-1);
    expect(decCmp('-1', '0')).toBe(-1);
  });

  it('prints canonically', () => {
    expect(decCanonical('1.50')).toBe('1.5');
    expect(decCanonical('0.000')).toBe('0');
    expect(decCanonical('-0.0')).toBe('0');
    expect(decCanonical('007.10')).toBe('7.1');
    expect(decCanonical('0.00000001')).toBe('0.00000001');
  });

  it('builds powers of ten for tick and lot sizes', () => {
    expect(pow10Neg(0)).toBe('1');
    expect(pow10Neg(2)).toBe('0.01');
    expect(pow10Neg(8)).toBe('0.00000001');
    expect(() => pow10Neg(-1)).toThrow();
  });

  it('refuses what is not a plain decimal', () => {
    for (const bad of ['', '1e3', '.5', '5.', '+1', 'NaN', '1,5', ' 1']) {
      expect(isDecimal(bad)).toBe(false);
      expect(() => parseFixed(bad)).toThrow();
    }
    expect(isDecimal('-12.340')).toBe(true);
  });
});
