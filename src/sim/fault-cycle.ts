/**
 * A fault cycle: the same faults at the same offsets every period, on the simulator's base clock
 * (virtual time under a FakeClock, so a test runs twenty minutes of it in seconds; the real clock
 * in `bench/soak.ts --scenario routes`, where the same cycle runs against the built keeper).
 *
 * `ROUTES_CYCLE` is the one the route soak measures (issue 19): every minute a WebSocket drop and
 * 10 s of REST 503, 5 s of a proxy's HTML at +20 s, and at +35 s a 3 s storm of 429s on the REST
 * schedule-cancel endpoint whose `rate_limit` detail announces 10 per 10 s. The exchange endpoint
 * is never touched: a `rest_then_exchange` keeper always has a route with room.
 */
import type { Clock, TimerHandle } from '../time/clock.js';
import type { FaultControl, RequestFaultSpec } from './faults.js';
import { SCHEDULE_CANCEL_ENDPOINT } from './rate-limit.js';

export interface FaultCycleStep {
  /** Offset in the period at which the fault is added. */
  atMs: number;
  /** The fault; its `forMs` is how long it lasts. */
  fault: RequestFaultSpec & { forMs: number };
}

export interface FaultCycleSpec {
  periodMs: number;
  /** Drop every WebSocket connection once per period (at its start, from the second period on). */
  wsDrop: boolean;
  steps: FaultCycleStep[];
}

export const ROUTES_CYCLE: FaultCycleSpec = {
  periodMs: 60_000,
  wsDrop: true,
  steps: [
    { atMs: 0, fault: { kind: 'status', status: 503, path: 'rest', reason: 'upstream_unavailable', forMs: 10_000 } },
    { atMs: 20_000, fault: { kind: 'body', mode: 'html', status: 502, path: 'rest', forMs: 5_000 } },
    {
      atMs: 35_000,
      fault: { kind: 'status', status: 429, path: 'rest', endpoint: SCHEDULE_CANCEL_ENDPOINT, scope: 'endpoint', limit: 10, windowSeconds: 10, retryAfterSeconds: 2, forMs: 3_000 },
    },
  ],
};

/** Offsets in the period at which each fault of the cycle ends (the REST route recovers). */
export function recoveryOffsetsMs(spec: FaultCycleSpec): number[] {
  return spec.steps.map((s) => s.atMs + s.fault.forMs).sort((a, b) => a - b);
}

export interface RunningCycle {
  /** Base-clock time the first period started. */
  readonly startedAtMs: number;
  /** Periods started so far. */
  periods(): number;
  /** Stops adding faults (those already added run out on their own) and the WebSocket drops. */
  stop(): void;
}

/** Runs `spec` on `faults` from now, for `periods` periods (default: until stopped). */
export function startFaultCycle(faults: FaultControl, clock: Clock, spec: FaultCycleSpec, opts: { periods?: number } = {}): RunningCycle {
  const timers = new Set<TimerHandle>();
  let started = 0;
  let stopped = false;
  const at = (delayMs: number, fn: () => void): void => {
    const t = clock.setTimeout(() => {
      timers.delete(t);
      if (!stopped) fn();
    }, delayMs);
    timers.add(t);
  };
  const period = (): void => {
    if (opts.periods !== undefined && started >= opts.periods) {
      faults.setWsDropEveryMs(null);
      return;
    }
    started += 1;
    for (const s of spec.steps) at(s.atMs, () => faults.add({ ...s.fault }));
    at(spec.periodMs, period);
  };
  // The hub drops every connection each `periodMs` from when the setting is made: at the start of
  // every period after the first.
  if (spec.wsDrop) faults.setWsDropEveryMs(spec.periodMs);
  const startedAtMs = clock.nowMs();
  period();
  return {
    startedAtMs,
    periods: () => started,
    stop: () => {
      stopped = true;
      for (const t of timers) clock.clearTimeout(t);
      timers.clear();
      if (spec.wsDrop) faults.setWsDropEveryMs(null);
    },
  };
}

/** Accepted scheduleCancels in one second of a run, by route, and the REST limit in force then. */
export interface RouteSecond {
  /** Offset from the cycle's start (ms, at the end of the second). */
  tMs: number;
  rest: number;
  exchange: number;
  /** Requests per second the REST schedule-cancel route may carry (the keeper's limit in force). */
  restLimitPerSecond: number;
}

/**
 * For each recovery of the REST route (a fault's end), the seconds until a 5 s window in which REST
 * carries at least `share` of what it can (every arm, or its limit in force when that is lower);
 * null when none starts within the minute after. Recoveries whose minute runs past `endMs` are left
 * out.
 */
export function routeRecoveryLags(seconds: readonly RouteSecond[], spec: FaultCycleSpec, endMs: number, share = 0.8): Array<{ recoveryS: number; lagS: number | null }> {
  const out: Array<{ recoveryS: number; lagS: number | null }> = [];
  for (let c = 0; c * spec.periodMs < endMs; c++) {
    for (const off of recoveryOffsetsMs(spec)) {
      const r = c * spec.periodMs + off;
      if (r + 60_000 > endMs) continue;
      let lag: number | null = null;
      for (let i = seconds.findIndex((x) => x.tMs > r); i >= 0 && i + 5 <= seconds.length && seconds[i]!.tMs <= r + 60_000; i++) {
        const w = seconds.slice(i, i + 5);
        const all = w.reduce((a, x) => a + x.rest + x.exchange, 0);
        const rest = w.reduce((a, x) => a + x.rest, 0);
        const can = Math.min(all, w.reduce((a, x) => a + x.restLimitPerSecond, 0));
        if (rest >= share * can) {
          lag = Math.max(0, (w[0]!.tMs - 1_000 - r) / 1000);
          break;
        }
      }
      out.push({ recoveryS: r / 1000, lagS: lag });
    }
  }
  return out;
}
