import { createHash } from 'node:crypto';

/**
 * Sharding (DESIGN.md section 7): instance `index` of `count` protects the accounts whose address
 * hashes to `index`. The hash is fixed and reproducible outside this code:
 *
 *   shard = uint64_be(first 8 bytes of sha256(ASCII of the lower-cased "0x…" address)) mod count
 *
 * e.g. in a shell: `printf %s 0xabc… | sha256sum | cut -c1-16` gives the 64-bit number in hex.
 * It depends only on the address (not on file order or the account's name), so an account stays
 * on its shard when others are added, removed or renamed. Changing `count` moves accounts; run
 * old and new layouts side by side (active-active is safe with `on_shutdown: keep`) while
 * resharding.
 */
export function shardOf(address: string, count: number): number {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`shard count must be a positive integer, got ${count}`);
  const digest = createHash('sha256').update(address.toLowerCase(), 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(count));
}

/** The accounts shard `index` of `count` protects, in their original order. Pure. */
export function accountsForShard<T extends { address: string }>(accounts: readonly T[], shard: { index: number; count: number }): T[] {
  return accounts.filter((a) => shardOf(a.address, shard.count) === shard.index);
}
