import { DEFAULT_READ_MAX_WAIT_MS, type RequestClass } from './request-class.js';

/**
 * How long a request waits for its token from the shared budget (shared-budget.ts), and what
 * happens when the token does not come. Pure.
 *
 * A saturated shared budget must not become a 429 storm, so a request goes without its token only
 * when its account would otherwise pass its deadline:
 * - an arm of an armed account waits until its current deadline less the venue's 5 s minimum lead
 *   (the latest a new deadline is still accepted before the old one fires) less BYPASS_MARGIN_MS,
 *   then goes anyway (a bypass, counted);
 * - a request with no deadline to protect (a first arm, an approval, a resolve, a clear) waits up to
 *   NO_DEADLINE_TOKEN_CAP_MS and is then shed (ShedError, counted), so the caller retries through
 *   its own backoff instead of a queue of them going out together;
 * - a read waits its own max wait and is then shed, like a read the local budget has no room for.
 */
/** What `take` does with a token that does not come within `waitMs`. */
export interface TokenWait {
  waitMs: number;
  /** `send`: the request goes without its token (a bypass); `shed`: it is dropped (ShedError). */
  onTimeout: 'send' | 'shed';
}

/**
 * Kept between the end of a bypassing arm's wait and the deadline's minimum lead: the arm's own
 * flight to the venue (well under 1 s on a healthy route) and the venue clock estimate's error
 * (a skew beyond 2 s is already an alarm), so a bypassing arm still lands before the lead.
 */
export const BYPASS_MARGIN_MS = 2_000;

/** Longest wait for the token of a request with no deadline to protect. */
export const NO_DEADLINE_TOKEN_CAP_MS = 60_000;

export interface TokenWaitInput {
  /** An arm's deadline is the one it protects (absent, 0 or not a time: none). */
  cls: RequestClass;
  venueNowMs: number;
  /** The venue's minimum lead of a deadline (VENUE_FACTS.scheduleCancelMinLeadMs, given by the port). */
  minLeadMs: number;
  /** A read's max wait (its shed time). */
  readMaxWaitMs?: number | undefined;
}

export function tokenWait(r: TokenWaitInput): TokenWait {
  if (r.cls.kind === 'read') return { waitMs: Math.max(0, r.readMaxWaitMs ?? DEFAULT_READ_MAX_WAIT_MS), onTimeout: 'shed' };
  const deadlineVenueMs = r.cls.kind === 'arm' ? (r.cls.deadlineVenueMs ?? 0) : 0;
  if (deadlineVenueMs > 0) {
    const latest = deadlineVenueMs - r.minLeadMs - BYPASS_MARGIN_MS;
    return { waitMs: Math.max(0, latest - r.venueNowMs), onTimeout: 'send' };
  }
  return { waitMs: NO_DEADLINE_TOKEN_CAP_MS, onTimeout: 'shed' };
}
