import type { Clock, TimerHandle } from './clock.js';

interface FakeTimer {
  id: number;
  dueMs: number;
  fn: () => void;
}

/** Lets queued promise continuations and setImmediate callbacks run. */
export async function flushMicrotasks(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Virtual time for tests: `advance(ms)` moves the clock forward and runs every timer that falls
 * due, in due order (ties in creation order), flushing promise continuations after each one so
 * async code scheduled by a timer gets to run before the next timer fires.
 */
export class FakeClock implements Clock {
  /** Virtual monotonic time: timers run on it. */
  private current: number;
  /** Wall clock minus monotonic clock: moved only by `stepWall`. */
  private wallOffsetMs = 0;
  private seq = 0;
  private timers = new Map<number, FakeTimer>();

  /**
   * `settle`, when given, runs after every timer instead of a plain microtask flush: tests that do
   * real loopback I/O in virtual time pass a function that waits until no request is in flight, so
   * a request started by a timer completes at that timer's virtual instant.
   */
  constructor(
    startMs = Date.UTC(2026, 0, 1, 12, 0, 0),
    private readonly settle: () => Promise<void> = () => flushMicrotasks(),
  ) {
    this.current = startMs;
  }

  nowMs(): number {
    return this.current + this.wallOffsetMs;
  }

  monoMs(): number {
    return this.current;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { id, dueMs: this.current + Math.max(0, delayMs), fn });
    return id as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as unknown as number);
  }

  /** Number of timers not yet run. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running due timers in order. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await this.settle();
    for (;;) {
      const next = this.nextDue();
      if (!next || next.dueMs > target) break;
      this.timers.delete(next.id);
      this.current = Math.max(this.current, next.dueMs);
      next.fn();
      await this.settle();
    }
    this.current = target;
    await this.settle();
  }

  /**
   * Moves time without running timers, as when the event loop was blocked: both readings move, and
   * timers that fell due run at the next `advance`.
   */
  jump(ms: number): void {
    this.current += ms;
  }

  /** Steps the wall clock only (NTP, an operator): monotonic time and timers are untouched. */
  stepWall(ms: number): void {
    this.wallOffsetMs += ms;
  }

  private nextDue(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers.values()) {
      if (!best || t.dueMs < best.dueMs || (t.dueMs === best.dueMs && t.id < best.id)) best = t;
    }
    return best;
  }
}
