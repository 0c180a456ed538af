/**
 * What a venue request is for, as the scheduler and the shared budget order it, and how long each
 * class waits for a shared token. Said outright: a deadline is a venue time, never a sentinel.
 */
export type RequestClass =
  /**
   * A scheduleCancel, arm or clear. `deadlineVenueMs`: the venue time of the account's current
   * deadline, which this arm must beat (absent: none to protect, a first arm or a clear).
   */
  | { kind: 'arm'; urgency?: 'deadline'; deadlineVenueMs?: number }
  /**
   * A cancel-soon arm: the keeper bringing a silent bot's scheduled cancel near (plan/horizon.ts
   * cancelSoonLeadMs). It protects no deadline of ours: it is due the moment it is queued, at
   * the account's venue time `queuedVenueMs`.
   */
  | { kind: 'arm'; urgency: 'cancel_soon'; queuedVenueMs: number }
  /**
   * A first arm: the account has no deadline armed (its first, or the first after a clear or a
   * silence), so there is none to protect; ordered with the arms that have none (first). Under a
   * pace achieved it fills its scopes' windows only to the share of that pace the plan spends
   * (scheduler.ts achievedFill): the accounts it arms come due again at the pace they were armed.
   */
  | { kind: 'arm'; urgency: 'first' }
  /** approveAgent / approveBuilderFee: after every arm and clear, before prepares and reads. */
  | { kind: 'approval' }
  /** Work that only prepares a first arm (resolving an account): after every approval, before reads. */
  | { kind: 'prepare' }
  /** Watching: takes only what the others leave, and is shed when it has waited too long. */
  | { kind: 'read' };

export type RequestKind = RequestClass['kind'];

/** A scheduleCancel's class: a re-arm, first arm or clear, or a cancel-soon arm. */
export type ArmClass = Extract<RequestClass, { kind: 'arm' }>;

/** The scheduler's two queues: arms, approvals and prepares (never shed); reads (served with what is left, shed when late). */
export type RequestQueue = 'arm' | 'read';

/**
 * The fifth of the global window reads may not touch, for the arms' retries and a re-provision's
 * approvals: the scheduler paces reads on the rest, the read plan fits them in it, check-config asks for it.
 */
export const ARM_RESERVE_SHARE = 0.2;

/** How long a read waits for budget, local or shared, before it is shed, when it names no wait. */
export const DEFAULT_READ_MAX_WAIT_MS = 10_000;

export function queueOf(c: RequestClass): RequestQueue {
  return c.kind === 'read' ? 'read' : 'arm';
}

/**
 * The one order, lowest first: arms by the venue time they are due (none to protect first),
 * approvals, prepares; reads share one key (first come, first served). Numbers past any venue time
 * keep one sorted lane. An arm is due at its deadline; a cancel-soon arm at the time it was queued,
 * so it goes ahead of every re-arm whose deadline lies later, behind the arms with none to protect,
 * and among other arms due by then in the order of those times.
 */
export function orderKey(c: RequestClass): number {
  switch (c.kind) {
    case 'arm':
      return c.urgency === 'cancel_soon' ? c.queuedVenueMs : c.urgency === 'first' ? 0 : (c.deadlineVenueMs ?? 0);
    case 'approval':
      return Number.MAX_SAFE_INTEGER - 1;
    case 'prepare':
      return Number.MAX_SAFE_INTEGER;
    case 'read':
      return Number.POSITIVE_INFINITY;
  }
}

/** A first arm (its class says so): held to a pace achieved, never a re-arm, a cancel-soon arm or a clear (shutdown must not wait for it). */
export function isFirstArm(c: RequestClass): boolean {
  return c.kind === 'arm' && c.urgency === 'first';
}

// ---- how long a class waits for its shared token ----

/**
 * How long a request waits for its shared token, and what then (pure). A saturated shared budget
 * must not become a 429 storm, so only an arm whose deadline would otherwise pass goes without one:
 * it waits until that deadline less the venue's minimum lead less BYPASS_MARGIN_MS, then goes (a
 * bypass, counted); a cancel-soon arm, due already, goes at once. A request with no deadline waits NO_DEADLINE_TOKEN_CAP_MS and is shed (the
 * caller's backoff retries it); a read waits its max wait and is shed.
 */
export interface TokenWait {
  waitMs: number;
  /** `send`: the request goes without its token (a bypass); `shed`: it is dropped (ShedError). */
  onTimeout: 'send' | 'shed';
}

/** A bypassing arm's flight (well under 1 s) plus the venue clock's error (beyond 2 s an alarm), kept before the minimum lead. */
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
  // Due the moment it was queued: it waits for no token.
  if (r.cls.kind === 'arm' && r.cls.urgency === 'cancel_soon') return { waitMs: 0, onTimeout: 'send' };
  const deadlineVenueMs = r.cls.kind === 'arm' && r.cls.urgency !== 'first' ? (r.cls.deadlineVenueMs ?? 0) : 0;
  if (deadlineVenueMs > 0) {
    const latest = deadlineVenueMs - r.minLeadMs - BYPASS_MARGIN_MS;
    return { waitMs: Math.max(0, latest - r.venueNowMs), onTimeout: 'send' };
  }
  return { waitMs: NO_DEADLINE_TOKEN_CAP_MS, onTimeout: 'shed' };
}
