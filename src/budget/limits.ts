import { BUDGET_UTILISATION, spacingMs, type WindowSpec } from './admission.js';

/**
 * A scope's limit in force as data: the configured one, or one a 429's detail announced (learned),
 * held while the venue keeps refusing and probed back up after a quiet spell; under either, the
 * pace the keeper achieved (achieved-pace.ts) when it fell short of it, held and probed back the
 * same way. Pure transitions of (state, limit, event, now); the scheduler applies them and keeps
 * the probe timer.
 *
 * Two limits, one in force. The venue's (configured, learned, or a probe between: the `inForce`
 * the venue's transitions take) is what the scheduler admits by: it is the venue's rule. The
 * achieved one is in force over it when lower (inForceOf): what the plan is made for, what
 * /status, the metric and the logs show. It is not admitted by: the keeper sends what it can
 * anyway, and admitting by it would spiral down, since at a venue's latency L a window of W
 * carries W / (W + L) of whatever limit it is given, so each window would measure less again.
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
  /** The pace achieved, while it holds; null: none measured short (or probed back up). */
  achieved: AchievedLimit | null;
  /** The quiet spell before the achieved limit's next probe: LIMIT_QUIET_MS, doubled by each probe the pace fell short of. */
  achievedQuietMs: number;
  /** When a probe last gave the achieved limit up (a shortfall soon after counts against it). */
  achievedRestoredAtMs: number;
}

/** The pace a scope achieved while pressed, as a limit: the one measured, and the one in force (probed up from it). */
export interface AchievedLimit {
  measured: WindowSpec;
  inForce: WindowSpec;
  nextProbeMs: number;
}

/** `achieved`: the keeper's own pace, below the venue's limit (achieved-pace.ts). */
export type LimitSource = 'configured' | 'learned' | 'achieved';

/** One scope's limit as the scheduler's `limits()` shows it. */
export interface ScopeLimit {
  scope: string;
  /** The configured window; absent for scopes only 429s named (their default spec). */
  configured?: WindowSpec;
  inForce: WindowSpec;
  source: LimitSource;
}

/**
 * `learned`: a 429 announced a lower one or refused a probe; `achieved`: the keeper's pace fell
 * short of the limit in force; `probed`: a step back up; `restored`: the configured limit (or,
 * when an achieved one is given up under a learned one, that learned one).
 */
export type LimitChangeKind = 'learned' | 'achieved' | 'probed' | 'restored';

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
  return {
    base: { ...base },
    configured,
    learned: null,
    nextProbeMs: 0,
    quietMs: LIMIT_QUIET_MS,
    restoredAtMs: Number.NEGATIVE_INFINITY,
    achieved: null,
    achievedQuietMs: LIMIT_QUIET_MS,
    achievedRestoredAtMs: Number.NEGATIVE_INFINITY,
  };
}

function doubled(quietMs: number): number {
  return Math.min(LIMIT_QUIET_MAX_MS, quietMs * 2);
}

/** The same window: limit and length. */
export function sameSpec(a: WindowSpec, b: WindowSpec): boolean {
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

/** When the probe timer must fire for this scope; infinite when neither a learned nor an achieved limit holds it. */
export function probeDueMs(l: LimitState): number {
  return Math.min(l.learned ? l.nextProbeMs : Number.POSITIVE_INFINITY, l.achieved ? l.achieved.nextProbeMs : Number.POSITIVE_INFINITY);
}

// ---- the pace achieved ----

/**
 * A pace measured while the scope was pressed counts as short below this share of the limit in
 * force: the share of it the plan spends (admission.ts BUDGET_UTILISATION). Below it the plan's own arms outrun what goes
 * out and the backlog grows without end; a capable scheduler measures 99% or more (the window's
 * 250 ms arrival margin, one admission in a hundred slots), so jitter stays above it.
 */
export const ACHIEVED_MARGIN = BUDGET_UTILISATION;

/** The limit in force: the achieved one when lower than the venue's (a learned limit lower than it, or equal, wins). */
export function inForceOf(l: LimitState, venue: WindowSpec): WindowSpec {
  return sourceOf(l, venue) === 'achieved' ? l.achieved!.inForce : venue;
}

/** A pace as a window of the venue's length (at least one request). */
function specAt(perSecond: number, windowMs: number): WindowSpec {
  return { limit: Math.max(1, Math.floor((perSecond * windowMs) / 1000)), windowMs };
}

function achievedStep(l: LimitState, venue: WindowSpec, next: LimitState, kind: LimitChangeKind): LimitStep {
  const from = inForceOf(l, venue);
  const to = inForceOf(next, venue);
  return sameSpec(from, to) && sourceOf(l, venue) === sourceOf(next, venue) ? { state: next } : { state: next, change: { kind, to: { ...to } } };
}

/**
 * The pace a stretch of pressure measured (achieved-pace.ts), against `venue`, the venue's limit
 * the scheduler admits by. Short of ACHIEVED_MARGIN of the limit in force, that pace is in force
 * from now, for a quiet spell; a shortfall under a limit probed up from a measured one (or soon
 * after one was given up) doubles the next spell, as a refused probe does a learned limit's. Not
 * short: nothing (a stretch of pressure at the full pace says nothing of a lower limit's cause).
 */
export function onShortfall(l: LimitState, venue: WindowSpec, perSecond: number, nowMs: number): LimitStep {
  if (!(perSecond >= 0) || perSecond >= ACHIEVED_MARGIN * ratePerSecond(inForceOf(l, venue))) return { state: l };
  const measured = specAt(perSecond, venue.windowMs);
  let quietMs = l.achievedQuietMs;
  if (l.achieved && ratePerSecond(l.achieved.inForce) > ratePerSecond(l.achieved.measured)) quietMs = doubled(quietMs);
  if (!l.achieved) quietMs = nowMs - l.achievedRestoredAtMs < quietMs ? doubled(quietMs) : LIMIT_QUIET_MS;
  const next: LimitState = { ...l, achieved: { measured, inForce: { ...measured }, nextProbeMs: nowMs + quietMs }, achievedQuietMs: quietMs };
  return achievedStep(l, venue, next, 'achieved');
}

/**
 * Each probe step of an achieved limit multiplies it by this, less than a learned one's: a probe past
 * what the keeper can carry is not refused by a 429 at once, it is paid in late re-arms until a
 * window measures it again (doubling 2.3/s against a thread carrying 2.5 sank the kept accounts in
 * test/budget-starved-cpu.test.ts's model).
 */
export const ACHIEVED_PROBE_FACTOR = 1.5;

/**
 * The probe timer fired: an achieved limit past its quiet spell steps up by ACHIEVED_PROBE_FACTOR, or
 * is given up once that reaches the venue's. Why probes, and not giving it up as soon as the
 * backlog clears: the plan made for the lower pace is what clears it, so a cleared backlog says
 * nothing of the cause; given up then, the plan would return, the backlog with it, and the limit
 * a window later, a window of late re-arms each time. And a capable keeper is never pressed under
 * a plan below its pace, so nothing short of a probe can show it has recovered.
 */
export function onAchievedQuiet(l: LimitState, venue: WindowSpec, nowMs: number): LimitStep {
  const a = l.achieved;
  if (!a || nowMs < a.nextProbeMs) return { state: l };
  const target = ratePerSecond(a.inForce) * ACHIEVED_PROBE_FACTOR;
  if (target >= ratePerSecond(venue)) return achievedStep(l, venue, { ...l, achieved: null, achievedRestoredAtMs: nowMs }, 'restored');
  const probed = { limit: Math.max(1, Math.round((target * a.inForce.windowMs) / 1000)), windowMs: a.inForce.windowMs };
  return achievedStep(l, venue, { ...l, achieved: { ...a, inForce: probed, nextProbeMs: nowMs + l.achievedQuietMs } }, 'probed');
}

// ---- what is shown ----

/** The scope's limit as `limits()` shows it (`venue`: the venue's limit the scheduler admits by); null for a scope only 429s named that holds no learned or achieved limit. */
export function scopeLimitOf(scope: string, l: LimitState, venue: WindowSpec): ScopeLimit | null {
  if (!l.configured && !l.learned && !l.achieved) return null;
  return { scope, ...(l.configured ? { configured: { ...l.base } } : {}), inForce: { ...inForceOf(l, venue) }, source: sourceOf(l, venue) };
}

/** The listeners' account of a change `from` → `to` (limits in force) under the state that made it, `venue` the limit admitted by. */
export function limitChangeOf(scope: string, l: LimitState, kind: LimitChangeKind, from: WindowSpec, to: WindowSpec, venue: WindowSpec = to): LimitChange {
  return { scope, kind, from: { ...from }, to: { ...to }, ...(l.configured ? { configured: { ...l.base } } : {}), source: sourceOf(l, venue) };
}

/** Where the limit in force comes from: the achieved pace when it is lower than the venue's limit, else the venue's own source. */
export function sourceOf(l: LimitState, venue: WindowSpec): LimitSource {
  if (l.achieved && ratePerSecond(l.achieved.inForce) < ratePerSecond(venue)) return 'achieved';
  return l.learned ? 'learned' : 'configured';
}
