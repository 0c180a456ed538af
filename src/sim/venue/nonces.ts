import { VENUE_FACTS } from '../../venue/facts.js';
import { VENUE_TEXTS } from './texts.js';

/**
 * The venue's nonce rule, per signer (VENUE.md): the 100 highest nonces are kept; a new one must
 * not repeat, must exceed the smallest kept once the set is full, and must lie strictly inside
 * (T - 2 days, T + 1 day) of venue time T. Out-of-order nonces are accepted: that is why a client
 * must not have two actions in flight for one signer.
 *
 * `check` and `commit` are separate so a caller can refuse an action for other reasons (address
 * budget) without burning its nonce.
 */
export class NonceBook {
  /** Ascending, at most `nonceSetSize` entries, per lower-cased signer. */
  private readonly kept = new Map<string, number[]>();

  constructor(private readonly setSize: number = VENUE_FACTS.nonceSetSize) {}

  /** The refusal text, or undefined when `nonce` is acceptable for `signer` at `nowMs`. */
  check(signer: string, nonce: number, nowMs: number): string | undefined {
    const low = nowMs - VENUE_FACTS.nonceMaxAgeMs;
    const high = nowMs + VENUE_FACTS.nonceMaxAheadMs;
    if (!(nonce > low && nonce < high)) return VENUE_TEXTS.nonceOutOfWindow(nonce, low, high);
    const set = this.kept.get(signer.toLowerCase());
    if (set === undefined) return undefined;
    if (set.includes(nonce)) return VENUE_TEXTS.nonceDuplicate(nonce);
    const smallest = set[0];
    if (set.length >= this.setSize && smallest !== undefined && nonce <= smallest) {
      return VENUE_TEXTS.nonceTooLow(nonce, smallest);
    }
    return undefined;
  }

  /** Records an accepted nonce, dropping the smallest once more than `setSize` are kept. */
  commit(signer: string, nonce: number): void {
    const key = signer.toLowerCase();
    let set = this.kept.get(key);
    if (!set) {
      set = [];
      this.kept.set(key, set);
    }
    let i = set.length;
    while (i > 0 && (set[i - 1] as number) > nonce) i--;
    set.splice(i, 0, nonce);
    while (set.length > this.setSize) set.shift();
  }

  /** Kept nonces of `signer`, ascending (for tests). */
  keptFor(signer: string): readonly number[] {
    return this.kept.get(signer.toLowerCase()) ?? [];
  }
}
