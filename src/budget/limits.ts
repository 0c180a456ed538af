import { spacingMs, type WindowSpec } from './admission.js';

/**
 * A scope's limit in force as data: the configured one, or one a 429's detail announced (learned),
 * held while the venue keeps refusing and probed back up after a quiet spell. Pure transitions of
 * (state, limit in force, event, now); the scheduler applies them and keeps the probe timer.
 */

/**
 * Quiet spell (no 429 on the scope) before each probe step back up. The venue's announced limit is
 * its word and staying under it costs little, while an overshooting probe costs a 429 and a hold on
 * the accounts nearest their deadlines. A minute was tried first: on a venue configured at twice its
 * real limit it drew a second burst of 429s a minute after the first.
 */
export const LIMIT_QUIET_MS = 300_000;
/** A probe the venue refused doubles the next quiet spell, up to this. */
export const LIMIT_QUIET_MAX_MS = 3_600_000;
/** Each probe step multiplies the learned rate by this, up to the configured one. */
export const LIMIT_PROBE_FACTOR = 2;

export interface LimitState {
  /** The configured spec (the default for scopes only 429s named), or what `setLimit` made it. */
  base: WindowSpec;
  configured: boolean;
  /** The limit the venue announced, while it holds; null: the baseline is in force. */
  learned: WindowSpec | null;
  nextProbeMs: number;
  /** The quiet spell before the next probe: LIMIT_QUIET_MS, doubled by each refused probe. */
  quietMs: number;
  /** When a probe last gave the configured limit back (a refusal soon after counts against it). */
  restoredAtMs: number;
}

export type LimitSource = 'configured' | 'learned';

/** One scope's limit as the scheduler's `limits()` shows it. */
export interface ScopeLimit {
  scope: string;
  /** The configured window; absent for scopes only 429s named (their default spec). */
  configured?: WindowSpec;
  inForce: WindowSpec;
  source: LimitSource;
}

/** `learned`: a 429 announced a lower one or refused a probe; `probed`: a step back up; `restored`: the configured one. */
export type LimitChangeKind = 'learned' | 'probed' | 'restored';

export interface LimitChange {
  scope: string;
  kind: LimitChangeKind;
  from: WindowSpec;
  to: WindowSpec;
  configured?: WindowSpec;
  source: LimitSource;
}

/** A transition's outcome: the new state, and the limit to put in force when it differs from the one in force. */
export interface LimitStep {
  state: LimitState;
  change?: { kind: LimitChangeKind; to: WindowSpec };
}

/** Requests per second a window allows. */
export function ratePerSecond(spec: WindowSpec): number {
  return (spec.limit * 1000) / spec.windowMs;
}

/** A window the venue or the shared budget may hand us: both numbers positive. */
export function validSpec(spec: WindowSpec): boolean {
  return spec.limit > 0 && spec.windowMs > 0;
}

export function initialLimit(base: WindowSpec, configured: boolean): LimitState {
  return { base: { ...base }, configured, learned: null, nextProbeMs: 0, quietMs: LIMIT_QUIET_MS, restoredAtMs: Number.NEGATIVE_INFINITY };
}

function doubled(quietMs: number): number {
  return Math.min(LIMIT_QUIET_MAX_MS, quietMs * 2);
}

function sameSpec(a: WindowSpec, b: WindowSpec): boolean {
  return a.limit === b.limit && a.windowMs === b.windowMs;
}

function step(state: LimitState, inForce: WindowSpec, kind: LimitChangeKind, to: WindowSpec): LimitStep {
  return sameSpec(inForce, to) ? { state } : { state, change: { kind, to } };
}

/**
 * A 429 on the scope. It restarts a learned limit's quiet spell; one that refuses a probed limit
 * (above what the venue announced) sends it back to the announced one and doubles the next spell.
 */
export function onRefusal(l: LimitState, inForce: WindowSpec, nowMs: number): LimitStep {
  if (!l.learned) return { state: l };
  if (ratePerSecond(inForce) > ratePerSecond(l.learned)) {
    const quietMs = doubled(l.quietMs);
    return step({ ...l, quietMs, nextProbeMs: nowMs + quietMs }, inForce, 'learned', { ...l.learned });
  }
  return { state: { ...l, nextProbeMs: nowMs + l.quietMs } };
}

/** A 429's detail announced the venue's numbers: taken at once when tighter, else it only restarts a learned limit's spell. */
export function onAnnounced(l: LimitState, inForce: WindowSpec, announced: WindowSpec, nowMs: number): LimitStep {
  const tighter = spacingMs(announced) > spacingMs(inForce) || announced.limit < inForce.limit;
  if (!tighter) return l.learned ? { state: { ...l, nextProbeMs: nowMs + l.quietMs } } : { state: l };
  let quietMs = l.quietMs;
  // Refused above an announced limit we had given back (a probe): wait longer next time.
  if (l.learned && ratePerSecond(inForce) > ratePerSecond(l.learned) && ratePerSecond(announced) <= ratePerSecond(l.learned)) quietMs = doubled(quietMs);
  // Refused soon after a probe restored the configured limit: the same; long after: a new episode.
  if (!l.learned) quietMs = nowMs - l.restoredAtMs < quietMs ? doubled(quietMs) : LIMIT_QUIET_MS;
  return step({ ...l, learned: { ...announced }, quietMs, nextProbeMs: nowMs + quietMs }, inForce, 'learned', { ...announced });
}

/** The probe timer fired: a learned limit past its quiet spell steps up by LIMIT_PROBE_FACTOR, or to the configured spec. */
export function onQuiet(l: LimitState, inForce: WindowSpec, nowMs: number): LimitStep {
  if (!l.learned || nowMs < l.nextProbeMs) return { state: l };
  const target = ratePerSecond(inForce) * LIMIT_PROBE_FACTOR;
  if (target >= ratePerSecond(l.base)) return step({ ...l, learned: null, restoredAtMs: nowMs }, inForce, 'restored', { ...l.base });
  const probed = { limit: Math.max(1, Math.round((target * inForce.windowMs) / 1000)), windowMs: inForce.windowMs };
  return step({ ...l, nextProbeMs: nowMs + l.quietMs }, inForce, 'probed', probed);
}

/** A new baseline (from the shared budget, which reports its own changes), in force at once unless a lower learned limit holds. */
export function onBaseline(l: LimitState, inForce: WindowSpec, base: WindowSpec): { state: LimitState; inForce: WindowSpec } {
  if (l.learned && ratePerSecond(l.learned) < ratePerSecond(base)) return { state: { ...l, base: { ...base } }, inForce: ratePerSecond(inForce) > ratePerSecond(base) ? base : inForce };
  return { state: { ...l, base: { ...base }, learned: null }, inForce: base };
}

/** When the probe timer must fire for this scope; infinite when no learned limit holds it. */
export function probeDueMs(l: LimitState): number {
  return l.learned ? l.nextProbeMs : Number.POSITIVE_INFINITY;
}

/** The scope's limit as `limits()` shows it; null for a scope only 429s named that holds no learned limit. */
export function scopeLimitOf(scope: string, l: LimitState, inForce: WindowSpec): ScopeLimit | null {
  if (!l.configured && !l.learned) return null;
  return { scope, ...(l.configured ? { configured: { ...l.base } } : {}), inForce: { ...inForce }, source: sourceOf(l) };
}

/** The listeners' account of a change `from` → `to` under the state that made it. */
export function limitChangeOf(scope: string, l: LimitState, kind: LimitChangeKind, from: WindowSpec, to: WindowSpec): LimitChange {
  return { scope, kind, from: { ...from }, to: { ...to }, ...(l.configured ? { configured: { ...l.base } } : {}), source: sourceOf(l) };
}

function sourceOf(l: LimitState): LimitSource {
  return l.learned ? 'learned' : 'configured';
}
