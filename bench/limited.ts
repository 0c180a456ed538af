/**
 * What held a phase of the benchmark's sends back, from the figures the bench measures (issue 36:
 * a plan that sags on a slower machine must say why before a cure is chosen). Pure: the bench
 * measures, this decides, a test holds the rule.
 *
 * The candidates, each with the figure that names it:
 * - the keeper's CPU: its process used ~ a whole core (its JavaScript runs on one thread);
 * - the simulator's CPU: the same for the venue's process, which verifies every signature;
 * - the machine: every core busy, whoever used them (the two processes, or anything else);
 * - the event loop: late re-arms whose timers fired late (the loop was busy or starved);
 * - the request budget: late re-arms that waited for a slot of a rate scope (which scope, how often);
 * - the budget's window at the answers' latency: the keeper counts a request in the window until it
 *   is answered (the venue saw it somewhere between), so a window of W carries W / (W + L) of its
 *   limit at latency L; below the planned pace, that is what held the sends.
 * A phase that sent its planned pace with no late re-arm was held by nothing.
 */
import { spanMs } from '../src/budget/admission.js';

export interface LateShare {
  /** Late re-arms in the phase. */
  count: number;
  /** Their timers' lateness summed (the event loop woke late), ms. */
  timerMs: number;
  /** Their waits for the request budget summed, ms. */
  budgetMs: number;
  /** What held them in the budget: a scope (window full), `<scope>:429`, `<scope>:reserved`, with counts. */
  heldBy: ReadonlyMap<string, number>;
}

export interface PhaseFigures {
  phase: 'cold start' | 'steady';
  wallS: number;
  /** CPU (user + system, every thread) over the phase, as % of one core; null when unreadable. */
  keeperCpuPct: number | null;
  simCpuPct: number | null;
  /** All cores' busy time over the phase, as % of all of them (any process). */
  machineBusyPct: number | null;
  cores: number;
  sendsPerS: number;
  plannedPerS: number;
  /** A figure shown after the pace, judged by nothing (the cold start's first arms alone). */
  detail?: string;
  late: LateShare;
  /** The arms' scope, its limit and window, and the arms' mean latency (send to answer) over the phase; absent: not measured. */
  armWindow?: { limitPerS: number; windowMs: number; meanLatencyMs: number };
}

/**
 * The pace (per second) a scope of `limitPerS` over `windowMs` carries when each request is
 * answered `latencyMs` after it was admitted: the scheduler counts it from admission to answer and
 * then for a window's span (admission.ts recordDone), so each takes span + latency of the window.
 */
export function windowCarryPerS(limitPerS: number, windowMs: number, latencyMs: number): number {
  const spec = { limit: (limitPerS * windowMs) / 1000, windowMs };
  return (spec.limit * 1000) / (spanMs(spec) + Math.max(0, latencyMs));
}

/** A process this busy (% of one core) was the limit: its one JavaScript thread had no more to give. */
export const PROCESS_BOUND_PCT = 90;
/** The machine this busy (% of all cores) was the limit. */
export const MACHINE_BOUND_PCT = 95;
/** Sends at this share of the plan or more are the plan kept (the plan spends 0.97 of the budget). */
export const PACE_KEPT_SHARE = 0.97;

/** Room over the planned pace below which the window's carry is named: a backlog then drains at under this share a second. */
export const DRAIN_SHARE = 0.01;

export interface Verdict {
  /** The causes, the heaviest first; empty: nothing held the phase back. */
  causes: string[];
  /** One line for the bench's output and report. */
  text: string;
}

export function whatLimited(p: PhaseFigures): Verdict {
  const causes: Array<{ what: string; weight: number }> = [];
  if (p.machineBusyPct !== null && p.machineBusyPct >= MACHINE_BOUND_PCT) causes.push({ what: `the machine's CPU (${pct(p.machineBusyPct)} of ${p.cores} cores busy)`, weight: p.machineBusyPct });
  if (p.keeperCpuPct !== null && p.keeperCpuPct >= PROCESS_BOUND_PCT) causes.push({ what: `the keeper's CPU (${pct(p.keeperCpuPct)} of a core)`, weight: p.keeperCpuPct });
  if (p.simCpuPct !== null && p.simCpuPct >= PROCESS_BOUND_PCT) causes.push({ what: `the simulator's CPU (${pct(p.simCpuPct)} of a core)`, weight: p.simCpuPct });
  if (p.late.count > 0) {
    // The two waits of a late re-arm, weighed against each other in seconds (the CPU causes above outrank them: they are why timers fire late).
    const timerS = p.late.timerMs / 1000;
    const budgetS = p.late.budgetMs / 1000;
    if (timerS > 0) causes.push({ what: `the event loop (late re-arms' timers ${timerS.toFixed(1)} s late in all)`, weight: Math.min(89, timerS) });
    if (budgetS > 0) {
      const held = [...p.late.heldBy].sort((a, b) => b[1] - a[1]).map(([k, c]) => `${k} x${c}`).join(', ');
      causes.push({ what: `the request budget (late re-arms waited ${budgetS.toFixed(1)} s in all${held ? `; held by ${held}` : ''})`, weight: Math.min(89, budgetS) });
    }
  }
  let carried = '';
  if (p.armWindow) {
    const w = p.armWindow;
    const carry = windowCarryPerS(w.limitPerS, w.windowMs, w.meanLatencyMs);
    carried = `; arms answered in ${w.meanLatencyMs.toFixed(0)} ms on average, so the ${(w.windowMs / 1000).toFixed(0)} s window carries ${carry.toFixed(1)}/s of its ${w.limitPerS.toFixed(0)}`;
    // Less than 1% over the planned pace: a backlog of one second's sends takes over 100 s to drain.
    if (carry < p.plannedPerS * (1 + DRAIN_SHARE)) causes.push({ what: `the budget's window at the answers' latency (${carry.toFixed(1)}/s carried, ${p.plannedPerS.toFixed(1)} planned)`, weight: 89.5 });
  }
  causes.sort((a, b) => b.weight - a.weight);
  const kept = p.sendsPerS >= PACE_KEPT_SHARE * p.plannedPerS;
  const pace = `${p.phase}: sent ${p.sendsPerS.toFixed(1)}/s of ${p.plannedPerS.toFixed(1)} planned${p.detail ? `, ${p.detail}` : ''}`;
  const cpu = `keeper ${p.keeperCpuPct === null ? 'n/a' : pct(p.keeperCpuPct)}, simulator ${p.simCpuPct === null ? 'n/a' : pct(p.simCpuPct)} of a core; machine ${p.machineBusyPct === null ? 'n/a' : pct(p.machineBusyPct)} busy`;
  const late = `${p.late.count > 0 ? `, ${p.late.count} late re-arms` : ''}${carried}`;
  if (causes.length === 0) return { causes: [], text: `${pace} (${cpu}${late}): ${kept ? 'held by nothing' : 'short of the plan, with no cause the bench can see'}` };
  return { causes: causes.map((c) => c.what), text: `${pace} (${cpu}${late}): ${kept ? 'kept the plan; the busiest part was' : 'limited by'} ${causes.map((c) => c.what).join(', then ')}` };
}

function pct(x: number): string {
  return `${x.toFixed(0)}%`;
}
