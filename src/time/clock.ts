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

export interface Clock {
  /** Milliseconds since the Unix epoch, on this clock (the host's wall clock: NTP may step it). */
  nowMs(): number;
  /**
   * A monotonic reading in ms: never steps, whatever the wall clock does. Aligned with `nowMs()`
   * when the clock was made, so it reads like an epoch time, but only differences mean anything.
   * Durations (timers, rate windows, holds, the venue clock's samples) are measured on it.
   */
  monoMs(): number;
  /** Runs `fn` once after `delayMs` (clamped to >= 0). */
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
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
 * The real clock. Timers are unref'd: a pending timer alone never keeps the process alive (servers
 * and sockets do).
 */
export function systemClock(): Clock {
  const originMs = Date.now() - performance.now();
  return {
    nowMs: () => Date.now(),
    // Whole ms, like Date.now(): venue times and nonces derived from it must be integers.
    monoMs: () => Math.floor(originMs + performance.now()),
    setTimeout: (fn, delayMs) => {
      const t = globalThis.setTimeout(fn, Math.max(0, delayMs));
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
    setTimeout: (fn, delayMs) => base.setTimeout(fn, delayMs),
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
    setTimeout: (fn, delayMs) => base.setTimeout(fn, delayMs),
    clearTimeout: (h) => base.clearTimeout(h),
  };
}
