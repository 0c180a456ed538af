import type { Clock } from '../../time/clock.js';

/**
 * Per-signer nonces: `max(now_ms, last + 1)` (VENUE.md). `now` is venue time when the caller has an
 * estimate of it (`venueNowMs`), so nonces stay inside the venue's (T - 2 d, T + 1 d) window even
 * when our clock is off. Strictly increasing per signer, whatever the clock does.
 */
export class NonceSource {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly venueNowMs: () => number = () => clock.nowMs(),
  ) {}

  next(signerAddress: string): number {
    const key = signerAddress.toLowerCase();
    const prev = this.last.get(key) ?? 0;
    const n = Math.max(Math.floor(this.venueNowMs()), prev + 1);
    this.last.set(key, n);
    return n;
  }

  /** After `Invalid nonce`, skip ahead so the retry cannot collide with anything already sent. */
  bump(signerAddress: string, atLeast: number): void {
    const key = signerAddress.toLowerCase();
    this.last.set(key, Math.max(this.last.get(key) ?? 0, atLeast));
  }
}
