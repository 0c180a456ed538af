import { describe, expect, it } from 'vitest';
import { coverOf, fleetStep, handedOver, movedAccounts, ownersOf } from './fleet-step.js';

const candidates = Array.from({ length: 60 }, (_, i) => ({ name: `acct-${i}`, address: `0x${(i + 1).toString(16).padStart(40, '0')}` }));

describe('fleetStep', () => {
  it('gains what it owns and does not hold, hands over what it holds and no longer owns, drops what left the config', () => {
    const owners = new Map([
      ['a', ['me', 'x']],
      ['b', ['x', 'y']],
      ['c', ['y', 'me']],
    ]);
    const held = new Map([
      ['b', 1],
      ['c', 0],
      ['gone', 2],
    ]);
    expect(fleetStep(held, owners, 'me')).toEqual({ gain: ['a'], handOver: ['b'], drop: ['gone'] });
  });

  it('every account is owned by exactly `replication` instances, and the three instances split them', () => {
    const owners = ownersOf(candidates, ['k0', 'k1', 'k2'], 2);
    const per = new Map<string, number>();
    for (const o of owners.values()) {
      expect(new Set(o).size).toBe(2);
      for (const k of o) per.set(k, (per.get(k) ?? 0) + 1);
    }
    expect([...per.values()].reduce((a, b) => a + b, 0)).toBe(120);
    for (const c of per.values()) expect(c).toBeGreaterThan(25); // 40 each on average
  });
});

describe('handedOver', () => {
  it('lets go only once every other owner has armed it', () => {
    expect(handedOver(['x', 'y'], 'me', (o) => o === 'x')).toBe(false);
    expect(handedOver(['x', 'y'], 'me', () => true)).toBe(true);
    // Still an owner itself: only the others count.
    expect(handedOver(['me', 'y'], 'me', (o) => o === 'y')).toBe(true);
  });

  it('never lets go with no other owner', () => {
    expect(handedOver([], 'me', () => true)).toBe(false);
    expect(handedOver(['me'], 'me', () => true)).toBe(false);
  });
});

describe('coverOf', () => {
  it('is the owner rank, and last for an instance handing over', () => {
    expect(coverOf(['x', 'me'], 'me', 2)).toEqual({ replica: 1, slot: 2, coveredBy: ['x', 'me'] });
    expect(coverOf(['x', 'y'], 'me', 0)).toEqual({ replica: 2, slot: 0, coveredBy: ['x', 'y', 'me'] });
  });
});

describe('movedAccounts (what one scaling step moves)', () => {
  it('3 -> 4 -> 2 instances with replication 2: each step moves about the share the hash allows', () => {
    const three = ownersOf(candidates, ['k0', 'k1', 'k2'], 2);
    const four = ownersOf(candidates, ['k0', 'k1', 'k2', 'k3'], 2);
    const two = ownersOf(candidates, ['k0', 'k1'], 2);
    // Joining: k3 takes an owner place in 2/4 of the accounts.
    expect(movedAccounts(three, four)).toBeLessThanOrEqual(40);
    // Leaving (k2, k3): exactly the accounts one of them owned move (5/6 of them: only a pair of k0 and k1, 1 in 6 of the
    // pairs of four, keeps both owners), and none other.
    const touched = [...four.values()].filter((o) => o.some((x) => x === 'k2' || x === 'k3')).length;
    expect(movedAccounts(four, two)).toBe(touched);
  });
});
