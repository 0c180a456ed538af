import { spacingMs, type WindowSpec } from './admission.js';

/**
 * The pace a rate scope actually achieves while it has work waiting, measured on the scheduler's
 * clock: pure. A scope is *pressed* while an arm waits for that scope's own window (not for
 * another scope, not for a 429's block: scheduler.ts decides, at each pump; a wait on another of
 * the arm's scopes is neutral, see meterStep). Over a stretch of
 * unbroken pressure its admissions are what the keeper can send: a capable scheduler sends the
 * limit's pace to within 1% then (the grid catches up after stalls under 1 s, admission.ts), so a
 * lower pace is something else holding the sends back: CPU, a stalled event loop, or a venue that
 * answers slowly (each request counts in the window until it is answered: at latency L a window
 * of W carries W / (W + L) of its limit). A shortfall without demand is not a limit: any pump that
 * finds the scope neither pressed nor held elsewhere (no arm that needs it waiting) breaks the stretch.
 *
 * limits.ts decides what a measured pace does to the limit in force (onShortfall).
 */

/**
 * The stretch of unbroken pressure a pace is measured over. Long enough that a capable scheduler
 * measures its limit (a stall that loses slots must pass 1 s, and then costs 3%); short enough
 * that the backlog a sag builds before it is known stays small: at 10% short, 3 s of sends (at 60 s,
 * twice that, which a plan stretched to its longest periods, 1 s of lag allowed, cannot absorb).
 */
export const ACHIEVED_WINDOW_MS = 30_000;

/**
 * At least this many of the limit's slots per measure, so a slow scope's pace is not one admission
 * more or less (at 1 per second: 100 s).
 */
export const ACHIEVED_MIN_SLOTS = 100;

/** The stretch of pressure a pace on `spec` is measured over. */
export function paceWindowMs(spec: WindowSpec): number {
  return Math.max(ACHIEVED_WINDOW_MS, ACHIEVED_MIN_SLOTS * spacingMs(spec));
}

export interface PaceMeter {
  /** Pressed without a break since (scheduler clock ms); null: not pressed at the last pump. */
  fromMs: number | null;
  /** The scope's admitted units when the stretch began. */
  unitsAtFrom: number;
  /** No stretch starts before this: the window of a limit just lowered still holds what the old one let out. */
  heldUntilMs: number;
  /** Pumps of the stretch so far at which this scope held the head arm, and at which another of its scopes did. */
  ownPumps: number;
  elsewherePumps: number;
}

export function newPaceMeter(): PaceMeter {
  return { fromMs: null, unitsAtFrom: 0, heldUntilMs: Number.NEGATIVE_INFINITY, ownPumps: 0, elsewherePumps: 0 };
}

/**
 * One pump's look at a scope: whether it is pressed, whether an arm that needs it waited on another
 * of its scopes instead (`heldElsewhere`), and its admitted units so far (a running count, weights
 * included). Returns the meter, and the pace (units per second) when a stretch of `windowMs` has
 * just been measured; the next stretch starts there.
 *
 * A pump held elsewhere neither presses the scope nor breaks its stretch: at 50,000 accounts the
 * head arm of a 70 s backlog waited on `global` at 475 pumps and on `schedule_cancel` at 12,661,
 * and breaking at each of those 475 left no stretch a window long, so no pace was ever in force.
 * A stretch is judged only if the scope itself held the arms at half its pumps or more: a scope
 * with room, pressed now and then (two grids meeting), is not what held them back, and its
 * admissions over a stretch held mostly elsewhere measure the other scope.
 */
export function meterStep(
  m: PaceMeter,
  pressed: boolean,
  nowMs: number,
  units: number,
  windowMs: number,
  heldElsewhere = false,
): { meter: PaceMeter; perSecond?: number } {
  if (nowMs < m.heldUntilMs) return m.fromMs === null ? { meter: m } : { meter: { ...m, fromMs: null } };
  if (!pressed) {
    if (m.fromMs === null) return { meter: m };
    return heldElsewhere ? { meter: { ...m, elsewherePumps: m.elsewherePumps + 1 } } : { meter: { ...m, fromMs: null } };
  }
  if (m.fromMs === null) return { meter: { ...m, fromMs: nowMs, unitsAtFrom: units, ownPumps: 1, elsewherePumps: 0 } };
  const elapsedMs = nowMs - m.fromMs;
  if (elapsedMs < windowMs) return { meter: { ...m, ownPumps: m.ownPumps + 1 } };
  const next = { ...m, fromMs: nowMs, unitsAtFrom: units, ownPumps: 1, elsewherePumps: 0 };
  if (m.ownPumps + 1 < m.elsewherePumps) return { meter: next };
  return { meter: next, perSecond: ((units - m.unitsAtFrom) * 1000) / elapsedMs };
}

/** Breaks the stretch and starts none before `untilMs` (a lowered limit, admissions a previous instance made). */
export function holdMeter(m: PaceMeter, untilMs: number): PaceMeter {
  return { ...m, fromMs: null, heldUntilMs: Math.max(m.heldUntilMs, untilMs) };
}

/**
 * Of a pace the keeper achieved (short of CPU), the share the plan's arms may take: the thread also
 * carries the reads, the lapses' reports and the timers, and the pace moves with the neighbours.
 * At 0.97 of it (the plan took 2.23 of 2.3 arms/s a thread carrying 2.5 requests/s could send) the
 * reads alone tipped it over and the kept accounts sank (test/budget-starved-cpu.test.ts).
 */
export const ACHIEVED_PLAN_SHARE = 0.9;
