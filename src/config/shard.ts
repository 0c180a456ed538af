import { createHash } from 'node:crypto';
import { VENUE_FACTS } from '../venue/facts.js';

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

/** The accounts shard `index` of `count` holds (replica 0), in their original order. Pure. */
export function accountsForShard<T extends { address: string }>(accounts: readonly T[], shard: { index: number; count: number }): T[] {
  return accounts.filter((a) => shardOf(a.address, shard.count) === shard.index);
}

/**
 * Replication (DESIGN.md section 7, "Replicas"): with `replication` 2 every account is protected by
 * two instances, its shard's (replica 0) and the next one's (replica 1): instance `index` covers
 * its own shard and shard `index - 1`. Both arm (active-active): the latest arm sets the deadline,
 * so either alone keeps every horizon, and a lost instance costs no account its protection. The
 * two replicas of a shard are neighbours, so spreading the pods over nodes (topology spread) puts
 * them on different nodes. Pure; in the original order, replica 0 accounts first, each with the shards
 * whose instances cover it (coveringShards).
 */
export function accountsCovered<T extends { address: string }>(
  accounts: readonly T[],
  shard: { index: number; count: number; replication?: number },
): Array<{ account: T; replica: number; shards: number[] }> {
  const replication = Math.min(shard.replication ?? 1, shard.count);
  const out: Array<{ account: T; replica: number; shards: number[] }> = [];
  for (let replica = 0; replica < replication; replica++) {
    const held = (shard.index - replica + shard.count) % shard.count;
    const shards = coveringShards(held, shard);
    for (const account of accountsForShard(accounts, { index: held, count: shard.count })) out.push({ account, replica, shards });
  }
  return out;
}

/** The shards whose instances cover an account of shard `held`: its own, then the next ones. */
export function coveringShards(held: number, shard: { count: number; replication?: number }): number[] {
  const replication = Math.min(shard.replication ?? 1, shard.count);
  return Array.from({ length: replication }, (_, r) => (held + r) % shard.count);
}

/**
 * The agent an instance approves in agent slot `slot`: slot 0 the configured name, slot k
 * `<name>-<k+1>`. Two instances must not share a named agent: approving the same name again
 * replaces it, and each would keep revoking the other's. Static replication gives replica r slot r;
 * a fleet claims a free slot per account in Redis (src/fleet/fleet-redis.ts).
 */
export function replicaAgentName(name: string, slot: number): string {
  return slot === 0 ? name : `${name}-${slot + 1}`;
}

/**
 * Agent slots per account: the venue's named agents per master. A fleet's account has at most
 * `replication` owners plus, during a handover, the one letting go: 3 with replication 2.
 */
export const AGENT_SLOTS = VENUE_FACTS.namedAgentsPerMaster;

/**
 * The instances that own an account in a fleet (`shard.fleet`): rendezvous (highest random weight)
 * hashing. Each instance scores the account as
 *
 *   score = uint64_be(first 8 bytes of sha256(instance + "\n" + lower-cased address))
 *
 * and the `replication` highest scores own it, best first (ties by name). An instance joining
 * takes from each other instance only the accounts it now outscores (about 1/N of them); one
 * leaving gives each of its accounts to the next best, and nothing else moves. Pure.
 */
export function rendezvousOwners(address: string, members: readonly string[], replication: number): string[] {
  const key = address.toLowerCase();
  const scored = members.map((m) => ({ m, score: createHash('sha256').update(`${m}\n${key}`, 'utf8').digest().readBigUInt64BE(0) }));
  scored.sort((a, b) => (a.score === b.score ? (a.m < b.m ? -1 : 1) : a.score > b.score ? -1 : 1));
  return scored.slice(0, Math.max(0, replication)).map((x) => x.m);
}
