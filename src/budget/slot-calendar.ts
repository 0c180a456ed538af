/**
 * A calendar of re-arm slots `spacingMs` apart (1 / the plan's usable arms per second). Each re-arm
 * claims the latest free slot at or before its period's end: never later, so no horizon is shorter
 * than planned. Why: a cold start arms everyone back to back at the full budget, and re-arming each
 * exactly a period later keeps them packed forever, the plan's slack all in one idle gap, so no
 * hiccup is ever caught up (1 to 2.5 s of lag and lapses at 10,000 accounts). "Latest free slot" is
 * a union-find over slot indices with path compression; slots behind `now` are pruned now and then.
 */

/**
 * How far before its wish a re-arm may be pulled, as a share of its period: past it "latest free
 * slot" walks below a cold start's whole packed run (first arms go at the whole budget, slots at
 * 0.97 of it). At 50,000 accounts 454 re-arms were handed slots seconds after their first arm and
 * then waited, least urgent, up to 48.8 s.
 */
export const MAX_PULL_SHARE = 0.1;

export class SlotCalendar {
  /** Taken slot index -> a candidate index below it (union-find parent). */
  private readonly next = new Map<number, number>();
  private claimsSincePrune = 0;

  constructor(readonly spacingMs: number) {
    if (!(spacingMs > 0) || !Number.isFinite(spacingMs)) throw new RangeError(`slot spacing must be a positive number of ms, got ${spacingMs}`);
  }

  /** Claims the latest free slot in [notBeforeMs, wishMs]; none free (over budget): `wishMs`, unclaimed. */
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
