import { rendezvousOwners } from '../config/shard.js';
import type { AccountCover } from '../account/keeper-types.js';

/**
 * A fleet's decisions (`shard.fleet`; docs/DESIGN.md section 7, "Fleet"), pure: which accounts this
 * instance gains, which it hands over and when it may let one go. The shell (src/fleet/fleet.ts)
 * reads the membership and the settled sets from Redis and feeds them here.
 *
 * The handover rule: a new owner arms before the old one lets go. An account this instance no
 * longer owns stays held (and re-armed) until every one of its owners has published it as settled (armed,
 * or judged not to be armed as the old owner would judge it);
 * two or three instances arming one account for a while is safe (the latest arm sets the deadline).
 */

/** Each candidate account's owners, best first, under `members`. */
export function ownersOf(candidates: ReadonlyArray<{ name: string; address: string }>, members: readonly string[], replication: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of candidates) out.set(c.name, rendezvousOwners(c.address, members, replication));
  return out;
}

export interface FleetStep {
  /** Owned here and not held: claim an agent slot, then arm. */
  gain: string[];
  /** Held and no longer owned here: let go once every owner has settled it (handedOver). */
  handOver: string[];
  /** Held and gone from the config: removed at once, as a reload removes an account. */
  drop: string[];
}

/** What changes for this instance (`me`) under `owners`, given what it holds. Config order. */
export function fleetStep(held: ReadonlyMap<string, number>, owners: ReadonlyMap<string, readonly string[]>, me: string): FleetStep {
  const step: FleetStep = { gain: [], handOver: [], drop: [] };
  for (const [name, o] of owners) {
    const mine = o.includes(me);
    if (mine && !held.has(name)) step.gain.push(name);
    else if (!mine && held.has(name)) step.handOver.push(name);
  }
  for (const name of held.keys()) if (!owners.has(name)) step.drop.push(name);
  return step;
}

/**
 * Whether an account being handed over may be let go: every owner but this instance has settled it.
 * With no owner at all (an empty membership) it is never let go.
 */
export function handedOver(owners: readonly string[], me: string, settledBy: (instance: string) => boolean): boolean {
  const others = owners.filter((o) => o !== me);
  return others.length > 0 && others.every(settledBy);
}

/**
 * How this instance covers an account it holds: its place among the owners (replica 0 the best
 * score; an instance handing the account over ranks after them, so it never brings a silent bot's
 * deadline near), its agent slot, and every instance arming it.
 */
export function coverOf(owners: readonly string[], me: string, slot: number): AccountCover {
  const i = owners.indexOf(me);
  return i >= 0 ? { replica: i, slot, coveredBy: [...owners] } : { replica: owners.length, slot, coveredBy: [...owners, me] };
}

/** How many accounts change owner set between two memberships (what a scaling step moves). */
export function movedAccounts(before: ReadonlyMap<string, readonly string[]>, after: ReadonlyMap<string, readonly string[]>): number {
  let moved = 0;
  for (const [name, o] of after) {
    const b = before.get(name);
    if (!b || b.length !== o.length || o.some((x) => !b.includes(x))) moved++;
  }
  return moved;
}
