/**
 * What a venue request is for, as the request budget (scheduler.ts) and the shared budget
 * (shared-budget.ts) order it, and how long each class waits for a shared token (tokenWait). The class is said outright, not folded into a number: a deadline is a
 * venue time and nothing else, so no reader has to tell a deadline from a sentinel.
 */
export type RequestClass =
  /**
   * A scheduleCancel, arm or clear. `deadlineVenueMs`: the venue time of the account's current
   * deadline, which this arm must beat (absent: none to protect, a first arm or a clear; a
   * cancel-soon arm passes the time it was queued at, as it is due at once).
   */
  | { kind: 'arm'; deadlineVenueMs?: number }
  /** approveAgent / approveBuilderFee: after every arm and clear, before prepares and reads. */
  | { kind: 'approval' }
  /** Work that only prepares a first arm (resolving an account): after every approval, before reads. */
  | { kind: 'prepare' }
  /** Watching: takes only what the others leave, and is shed when it has waited too long. */
  | { kind: 'read' };

export type RequestKind = RequestClass['kind'];

/**
 * The scheduler's two queues. Arms, approvals and prepares wait in the arm queue: never shed, and
 * free to use the share of the global window reads leave them (ARM_RESERVE_SHARE). Reads wait in
 * their own, served only with what the arm queue leaves, and shed after DEFAULT_READ_MAX_WAIT_MS
 * unless they say otherwise.
 */
export type RequestQueue = 'arm' | 'read';

/**
 * The fifth of the global window reads may not touch, kept for arms: the arms' retries after errors
 * and 429s and the approvals of a re-provision spend it. The scheduler paces reads on the rest, the
 * read plan stretches reads to fit in it (read-plan.ts READ_UTILISATION), and check-config asks for
 * it as headroom.
 */
export const ARM_RESERVE_SHARE = 0.2;

/** How long a read waits for budget, local or shared, before it is shed, when it names no wait. */
export const DEFAULT_READ_MAX_WAIT_MS = 10_000;

export function queueOf(c: RequestClass): RequestQueue {
  return c.kind === 'read' ? 'read' : 'arm';
}

/**
 * The one order of the classes, lowest first within a queue: arms by deadline, the earliest first
 * (those with none to protect before all); then approvals; then prepares. Every read has the same
 * key, so reads go first come, first served. The keys after the arms are numbers past any venue
 * time, so a queue holding arms, approvals and prepares of the same scopes keeps them in one sorted
 * lane.
 */
export function orderKey(c: RequestClass): number {
  switch (c.kind) {
    case 'arm':
      return c.deadlineVenueMs ?? 0;
    case 'approval':
      return Number.MAX_SAFE_INTEGER - 1;
    case 'prepare':
      return Number.MAX_SAFE_INTEGER;
    case 'read':
      return Number.POSITIVE_INFINITY;
  }
}

// ---- how long a class waits for its shared token ----

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
