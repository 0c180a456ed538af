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
  /** The timers not yet run or cleared, by id. */
  private timers = new Map<number, FakeTimer>();
  /**
   * Every timer set and not yet run, cleared ones included (a clear only leaves the map), as a
   * binary min-heap on (dueMs, id): the next one is found in O(log n), where a scan of the map per
   * timer run was most of a 400-account timeline's clock time. A cleared one is dropped when it
   * comes to the top, and the heap is rebuilt when cleared ones outnumber the live.
   */
  private heap: FakeTimer[] = [];

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
    const timer: FakeTimer = { id, dueMs: this.current + Math.max(0, delayMs), fn };
    this.timers.set(id, timer);
    this.push(timer);
    return id as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    if (!this.timers.delete(handle as unknown as number)) return;
    if (this.heap.length > 64 && this.heap.length > 2 * this.timers.size) this.rebuild();
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
      this.pop(); // `next` is the heap's top
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

  /** The live timer due first (ties: the one set first), left in place; cleared ones on top are dropped. */
  private nextDue(): FakeTimer | undefined {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || this.timers.has(top.id)) return top;
      this.pop();
    }
  }

  private static before(a: FakeTimer, b: FakeTimer): boolean {
    return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.id < b.id);
  }

  private push(timer: FakeTimer): void {
    const h = this.heap;
    let i = h.push(timer) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!FakeClock.before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && FakeClock.before(h[l]!, h[m]!)) m = l;
      if (r < h.length && FakeClock.before(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }

  /** The heap again from the live timers only. */
  private rebuild(): void {
    this.heap = [];
    for (const t of this.timers.values()) this.push(t);
  }
}
