import { describe, expect, it } from 'vitest';
import { belowVolumeGate, budgetLow } from './address-actions.js';

describe('budgetLow: a day of re-arms against the share of the actions left', () => {
  it.each([
    // left, period, share -> re-arms a day, low
    [1_000, 15_000, 0.5, 5_760, true],
    [11_520, 15_000, 0.5, 5_760, false], // exactly half: not more than the share
    [11_519, 15_000, 0.5, 5_760, true],
    [1_000_000, 15_000, 0.5, 5_760, false],
    [20_000, 7_000, 0.5, 12_343, true], // a stretched or shorter period counts as planned
    [20_000, 60_000, 0.1, 1_440, false],
    [0, 60_000, 1, 1_440, true], // exhausted
    [-25, 60_000, 1, 1_440, true],
  ])('%i left, every %i ms, share %f: %i a day, low %s', (left, periodMs, share, perDay, low) => {
    expect(budgetLow(left, periodMs, share)).toEqual({ rearmsPerDay: perDay, low });
  });

  it('two replicas arming the account spend its budget twice', () => {
    expect(budgetLow(20_000, 15_000, 0.5)).toEqual({ rearmsPerDay: 5_760, low: false });
    expect(budgetLow(20_000, 15_000, 0.5, 2)).toEqual({ rearmsPerDay: 11_520, low: true });
  });
});

describe('belowVolumeGate: cumVlm against the venue\'s $1,000,000', () => {
  it.each([
    ['0.0', true],
    ['400000.0', true],
    ['999999.99', true],
    ['1000000.0', false],
    ['25000000', false],
    ['not a number', false], // the decoder refuses it first; never reported ineligible on garbage
  ])('%s: %s', (cumVlm, below) => {
    expect(belowVolumeGate(cumVlm)).toBe(below);
  });
});
