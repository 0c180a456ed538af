/**
 * What a venue request is for, as the request budget (scheduler.ts) and the shared budget
 * (shared-budget.ts) order it. The class is said outright, not folded into a number: a deadline is a
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

