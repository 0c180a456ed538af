import { describe, expect, it } from 'vitest';
import { accountsCovered, accountsForShard, coveringShards, rendezvousOwners, replicaAgentName, shardOf } from './shard.js';

describe('shardOf', () => {
  // Pinned with coreutils, independently of this code:
  //   printf %s ADDRESS | sha256sum | cut -c1-16   -> the uint64, then mod count.
  const pinned: Array<[string, string, number[]]> = [
    ['0x00000000000000000000000000000000000000a1', '4bfe247a0c436d91', [1, 1, 1, 5]],
    ['0x00000000000000000000000000000000000000a2', '2fa89c1c807f7452', [0, 0, 2, 2]],
    ['0x00000000000000000000000000000000000000a3', 'c02b9f12eb0123aa', [0, 1, 2, 8]],
    ['0x14791697260e4c9a71f18484c9f997b308e59325', '1763db102728229f', [1, 2, 3, 9]],
  ];
  it.each(pinned)('%s is stable (sha256 prefix %s)', (address, prefix, want) => {
    expect([2, 3, 4, 10].map((n) => shardOf(address, n))).toEqual(want);
    expect(Number(BigInt(`0x${prefix}`) % 10n)).toBe(want[3]);
  });

  it('ignores case (addresses are compared lower-cased)', () => {
    expect(shardOf('0x14791697260E4C9A71F18484C9F997B308E59325', 4)).toBe(3);
  });

  it('puts everything on shard 0 of 1', () => {
    expect(shardOf('0x00000000000000000000000000000000000000a1', 1)).toBe(0);
  });

  it('spreads addresses evenly', () => {
    const counts = [0, 0, 0, 0, 0];
    for (let i = 0; i < 5000; i++) counts[shardOf(`0x${i.toString(16).padStart(40, '0')}`, 5)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(900); // 1000 each, +-10%
    for (const c of counts) expect(c).toBeLessThan(1100);
  });

  it('refuses a count below 1', () => {
    expect(() => shardOf('0x00', 0)).toThrow(RangeError);
  });
});

describe('accountsForShard', () => {
  const accounts = ['a1', 'a2', 'a3'].map((n) => ({ name: n, address: `0x00000000000000000000000000000000000000${n}` }));
  it('partitions: every account on exactly one shard, order kept', () => {
    const shards = [0, 1, 2].map((index) => accountsForShard(accounts, { index, count: 3 }).map((a) => a.name));
    expect(shards).toEqual([['a2'], ['a1', 'a3'], []]);
    expect(accountsForShard(accounts, { index: 0, count: 1 })).toEqual(accounts);
  });
});

describe('replication: each account on its shard\'s instance and the next one\'s', () => {
  const accounts = Array.from({ length: 60 }, (_, i) => ({ name: `a${i}`, address: `0x${i.toString(16).padStart(40, '0')}` }));
  it('with 3 instances and replication 2, every account is covered by exactly two of them, which differ', () => {
    const coverers = new Map<string, number[]>();
    for (let index = 0; index < 3; index++) {
      for (const { account, replica } of accountsCovered(accounts, { index, count: 3, replication: 2 })) {
        coverers.set(account.name, [...(coverers.get(account.name) ?? []), index]);
        expect(coveringShards(shardOf(account.address, 3), { count: 3, replication: 2 })[replica]).toBe(index);
      }
    }
    expect(coverers.size).toBe(60);
    for (const shards of coverers.values()) expect(new Set(shards).size).toBe(2);
  });

  it('replica 0 are the shard\'s own accounts, first; replication 1 is the plain shard', () => {
    const covered = accountsCovered(accounts, { index: 1, count: 3, replication: 2 });
    const own = accountsForShard(accounts, { index: 1, count: 3 });
    expect(covered.filter((c) => c.replica === 0).map((c) => c.account)).toEqual(own);
    expect(covered.filter((c) => c.replica === 1).map((c) => c.account)).toEqual(accountsForShard(accounts, { index: 0, count: 3 }));
    expect(accountsCovered(accounts, { index: 1, count: 3 }).map((c) => c.account)).toEqual(own);
  });

  it('each replica approves an agent of its own name', () => {
    expect(replicaAgentName('dms-keeper', 0)).toBe('dms-keeper');
    expect(replicaAgentName('dms-keeper', 1)).toBe('dms-keeper-2');
  });
});

describe('rendezvousOwners', () => {
  const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;

  it('ranks by sha256(instance + "\\n" + address), pinned with coreutils', () => {
    // printf %s 'keeper-a<newline>0x…a1' | sha256sum | cut -c1-16: a e9407c9b…, b 79c4f011…, c e7685a94…
    expect(rendezvousOwners('0x00000000000000000000000000000000000000A1', ['keeper-b', 'keeper-c', 'keeper-a'], 3)).toEqual(['keeper-a', 'keeper-c', 'keeper-b']);
    expect(rendezvousOwners('0x00000000000000000000000000000000000000a1', ['keeper-b', 'keeper-c', 'keeper-a'], 2)).toEqual(['keeper-a', 'keeper-c']);
    expect(rendezvousOwners(addr(1), ['only'], 2)).toEqual(['only']);
    expect(rendezvousOwners(addr(1), [], 2)).toEqual([]);
  });

  it('moves about 1/N of the owner pairs when a fourth instance joins, and only to it', () => {
    const three = ['k0', 'k1', 'k2'];
    const four = [...three, 'k3'];
    let moved = 0;
    const n = 4000;
    for (let i = 0; i < n; i++) {
      const before = rendezvousOwners(addr(i), three, 2);
      const after = rendezvousOwners(addr(i), four, 2);
      const gone = before.filter((o) => !after.includes(o));
      const came = after.filter((o) => !before.includes(o));
      if (came.length) {
        moved++;
        expect(came).toEqual(['k3']);
        expect(gone).toHaveLength(1);
      }
    }
    // An instance of 4 owns 2/4 of the accounts: each one it takes is one owner moved.
    expect(moved / n).toBeGreaterThan(0.45);
    expect(moved / n).toBeLessThan(0.55);
  });

  it('gives a leaving instance its accounts to the next best, moving nothing else', () => {
    const four = ['k0', 'k1', 'k2', 'k3'];
    const two = ['k0', 'k1'];
    for (let i = 0; i < 1000; i++) {
      const before = rendezvousOwners(addr(i), four, 2);
      const after = rendezvousOwners(addr(i), two, 2);
      // The survivors among the old owners keep the account.
      for (const o of before.filter((x) => two.includes(x))) expect(after).toContain(o);
    }
  });
});
