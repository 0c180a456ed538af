/**
 * The heartbeat relay, the pure part (docs/liveness.md, "Fleets"): a heartbeat that reaches an
 * instance for another shard's account is authenticated there and published on the fleet's Redis
 * (`rate_limits.shared`); every instance applies the ones for its own accounts. What travels, how
 * it is read back, and whether a relayed heartbeat is still fresh enough to count. The shell
 * (subscription, publishing, logs) is heartbeat-relay.ts.
 */

/** The pub/sub channel of a fleet: every instance with this `rate_limits.shared.name` shares it. */
export function relayChannel(sharedName: string): string {
  return `dms-keeper:${sharedName}:heartbeats`;
}

/** One relayed heartbeat: the account and when the receiving instance heard it (its wall clock, Unix ms). Never the token. */
export interface RelayedHeartbeat {
  account: string;
  heardAtMs: number;
}

/** A message longer than this is not one of ours (an account name is at most 64 characters). */
export const RELAY_MESSAGE_MAX_CHARS = 256;

export function formatRelayed(h: RelayedHeartbeat): string {
  return JSON.stringify({ account: h.account, heard_at: h.heardAtMs });
}

/** A message of the channel, or undefined for anything else (never thrown: the channel is shared). */
export function parseRelayed(text: string): RelayedHeartbeat | undefined {
  if (text.length > RELAY_MESSAGE_MAX_CHARS) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const { account, heard_at } = v as { account?: unknown; heard_at?: unknown };
  if (typeof account !== 'string' || account.length === 0 || account.length > 64) return undefined;
  if (typeof heard_at !== 'number' || !Number.isFinite(heard_at) || heard_at <= 0) return undefined;
  return { account, heardAtMs: heard_at };
}

export type RelayVerdict =
  /** Counts as heard `heardAgoMs` ago (0: now), exactly as a heartbeat received here then. */
  | { apply: true; heardAgoMs: number }
  /**
   * `stale`: heard a silence period ago or more (on this instance's clock): it would not keep the
   * bot alive had it come here directly, so it must not revive one now. `future`: stamped later
   * than this instance's clock by more than the clocks may differ: a clock is wrong, the age unknown.
   */
  | { apply: false; why: 'stale' | 'future'; ageMs: number };

/**
 * Whether a relayed heartbeat counts here. Its `heard_at` is on the publisher's clock, `nowMs` on
 * this one's: they differ by up to `clockAllowanceMs` (each instance is held within
 * `MAX_CLOCK_SKEW_MS` of the venue). A stamp ahead of this clock by no more than that is a
 * heartbeat heard just now; an older one counts from when it was heard (so its silence timer runs
 * from then, not from its delivery), and one a silence period old or older does not count at all.
 * Pure.
 */
export function relayVerdict(heardAtMs: number, nowMs: number, silenceMs: number, clockAllowanceMs: number): RelayVerdict {
  const ageMs = nowMs - heardAtMs;
  if (ageMs < -clockAllowanceMs) return { apply: false, why: 'future', ageMs };
  if (ageMs >= silenceMs) return { apply: false, why: 'stale', ageMs };
  return { apply: true, heardAgoMs: Math.max(0, ageMs) };
}
