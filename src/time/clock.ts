/**
 * Time is injected everywhere: nothing below `main` reads `Date.now()` or calls `setTimeout`
 * directly. `systemClock` is the one real implementation; `FakeClock` (in `fake-clock.ts`) runs
 * whole scenarios in virtual time.
 */
/** A day in ms: agent validity, daily budgets and once-a-day checks count in whole days. */
export const DAY_MS = 86_400_000;

export interface TimerHandle {
  /** Opaque; only meaningful to the clock that created it. */
  readonly __timer: unique symbol;
}

export interface TimerOptions {
  precise?: boolean;
}

export interface Clock {
  /** Milliseconds since the Unix epoch, on this clock (the host's wall clock: NTP may step it). */
  nowMs(): number;
  /**
   * A monotonic reading in ms: never steps, whatever the wall clock does. Aligned with `nowMs()`
   * when the clock was made, so it reads like an epoch time, but only differences mean anything.
   * Durations (timers, rate windows, holds, the venue clock's samples) are measured on it.
   */
  monoMs(): number;
  /**
   * Runs `fn` once after `delayMs` (clamped to >= 0). `precise`: exempt from the daemon's timer
   * slack (TIMER_SLACK_MS), for a timer that paces sends to the budget's slots.
   */
  setTimeout(fn: () => void, delayMs: number, opts?: TimerOptions): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Resolves after `delayMs` on `clock`; rejects with the signal's reason when aborted. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * How late the keeper's real clock may fire a timer, so that timers due close together fire in one
 * wake-up of the event loop (the kernel's timer slack, for our timers). Why: on a virtual machine a
 * wake-up from idle costs more than the little work it does. Measured on a 2-vCPU VM: an empty
 * 10 ms interval takes 0.22 ms of CPU a tick, and at 1,000 accounts, each re-arm on its own timer,
 * the keeper's CPU per arm fell from 2.52 to 1.51 ms with this slack (docs/benchmarks.md).
 * A timer fires late by at most this, never early; the plan's lag allowance (plan/horizon.ts)
 * covers it ten times over. The request scheduler's pacing timers are exempt (`precise`): held to
 * the grid, a send budget of 20 a second went out in bursts a pump late, and two shards of 180
 * accounts on one such budget dipped to 7.64 s against their 8 s minimum (8.31 s without).
 */
export const TIMER_SLACK_MS = 100;

/**
 * The delay that makes a timer due `delayMs` after `nowMs` fire on the next multiple of `slackMs`
 * (on the same time line): all timers due within one slack interval then fire together. A delay of
 * 0 (or less) stays 0: "as soon as possible" is not held back.
 */
export function slackDelayMs(nowMs: number, delayMs: number, slackMs: number): number {
  if (delayMs <= 0 || slackMs <= 0) return Math.max(0, delayMs);
  // Whole ms, rounded up: Node keeps a timer list per distinct delay, and never fires early.
  return Math.ceil(Math.ceil((nowMs + delayMs) / slackMs) * slackMs - nowMs);
}

/**
 * The real clock. Timers are unref'd: a pending timer alone never keeps the process alive (servers
 * and sockets do). `timerSlackMs` (0 by default) lets timers fire up to that late, together
 * (TIMER_SLACK_MS, slackDelayMs); the keeper's daemon runs with it, the simulator and the one-shot
 * commands without.
 */
export function systemClock(opts: { timerSlackMs?: number } = {}): Clock {
  const originMs = Date.now() - performance.now();
  const slackMs = opts.timerSlackMs ?? 0;
  return {
    nowMs: () => Date.now(),
    // Whole ms, like Date.now(): venue times and nonces derived from it must be integers.
    monoMs: () => Math.floor(originMs + performance.now()),
    setTimeout: (fn, delayMs, timer) => {
      const t = globalThis.setTimeout(fn, slackMs > 0 && !timer?.precise ? slackDelayMs(performance.now(), delayMs, slackMs) : Math.max(0, delayMs));
      t.unref?.();
      return t as unknown as TimerHandle;
    },
    clearTimeout: (handle) => globalThis.clearTimeout(handle as unknown as NodeJS.Timeout),
  };
}

/**
 * A clock shifted by an offset from another's monotonic reading: the simulator uses it to model a
 * venue whose clock disagrees with ours. It runs on the base's monotonic time, so a step of the
 * host's wall clock does not move the venue's.
 */
export function offsetClock(base: Clock, offsetMs: () => number): Clock {
  return {
    nowMs: () => base.monoMs() + offsetMs(),
    monoMs: () => base.monoMs(),
    setTimeout: (fn, delayMs, timer) => base.setTimeout(fn, delayMs, timer),
    clearTimeout: (h) => base.clearTimeout(h),
  };
}

/**
 * The same clock read on its monotonic time: what request budgets and holds run on, so that a step
 * of the host's wall clock neither frees nor blocks a rate window.
 */
export function monotonicView(base: Clock): Clock {
  return {
    nowMs: () => base.monoMs(),
    monoMs: () => base.monoMs(),
    setTimeout: (fn, delayMs, timer) => base.setTimeout(fn, delayMs, timer),
    clearTimeout: (h) => base.clearTimeout(h),
  };
}
