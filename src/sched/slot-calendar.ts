/**
 * A calendar of re-arm slots on a grid `spacingMs` apart (spacing = 1 / the arms per second the
 * plan may use). Each re-arm asks for the latest free slot at or before the time it wants (its
 * period's end): never later, so no horizon gets shorter than planned; earlier only by what it
 * takes to find a free slot.
 *
 * Why: a cold start arms every account back to back at the full budget, and if each then re-arms
 * exactly one period later the accounts stay packed at the full budget forever, with the plan's
 * slack all in one idle gap per period. Any hiccup inside the packed stretch is then never caught
 * up (measured: 1 to 2.5 s of lag and lapses at 10,000 accounts). Claiming slots spreads the next
 * round evenly at the planned rate, starting where the cold start ends: every arm has its own slot
 * and the budget's spacing never queues it.
 *
 * "Latest free slot at or before k" is a union-find over slot indices with path compression: a
 * taken slot points at a slot before it, so a run of taken slots is skipped in near-constant time.
 * Slots behind `now` are pruned from time to time; a stale pointer into the pruned past can only
 * lead below the caller's `notBeforeMs`, which reads as "no free slot" and is right.
 */
/**
 * How far before its wish a re-arm may be pulled, as a share of its period. Arms that came faster
 * than the calendar's spacing (a cold start's first arms go at the whole budget, the calendar spaces
 * at 0.97 of it) drift earlier by about 3% of the cold start: that is the spreading we want. Past
 * it, "latest free slot" walks below the whole packed run and hands a freshly armed account a slot
 * seconds after its first arm. Measured at 50,000 accounts: 454 such re-arms, each the least urgent
 * request in a window full of due re-arms, left up to 48.8 s after their slots.
 */
export const MAX_PULL_SHARE = 0.1;

export class SlotCalendar {
  /** Taken slot index -> a candidate index below it (union-find parent). */
  private readonly next = new Map<number, number>();
  private claimsSincePrune = 0;

  constructor(readonly spacingMs: number) {
    if (!(spacingMs > 0) || !Number.isFinite(spacingMs)) throw new RangeError(`slot spacing must be a positive number of ms, got ${spacingMs}`);
  }

  /**
   * Claims the latest free slot in [notBeforeMs, wishMs] and returns its time. When every slot in
   * that range is taken (the plan is over budget), returns `wishMs` unclaimed: the request then
   * queues in the scheduler as it would without a calendar.
   */
  claim(wishMs: number, notBeforeMs: number): number {
    if (++this.claimsSincePrune >= 4096) this.prune(notBeforeMs);
    const k = this.find(Math.floor(wishMs / this.spacingMs));
    const at = Math.min(k * this.spacingMs, wishMs); // k * spacing may round a hair past the wish
    if (at < notBeforeMs) return wishMs;
    this.next.set(k, k - 1);
    return at;
  }

  /** Slots held (including pruned-later past ones); for tests and stats. */
  size(): number {
    return this.next.size;
  }

  /** Forgets slots before `nowMs`: nobody claims the past. */
  prune(nowMs: number): void {
    this.claimsSincePrune = 0;
    const before = Math.floor(nowMs / this.spacingMs);
    for (const k of this.next.keys()) if (k < before) this.next.delete(k);
  }

  private find(k: number): number {
    let root = k;
    for (let p = this.next.get(root); p !== undefined; p = this.next.get(root)) root = p;
    // Path compression: every taken slot on the way now points at the free one.
    for (let i = k, p = this.next.get(i); p !== undefined && i !== root; i = p, p = this.next.get(i)) this.next.set(i, root);
    return root;
  }
}
