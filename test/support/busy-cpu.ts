import type { Clock, TimerHandle } from '../../src/time/clock.js';

/**
 * A keeper short of CPU, in virtual time (issue 36): its one thread can do `msPerRequest` of work
 * for each request it sends and nothing else meanwhile. Modelled as a single server: each request
 * leaves only when the thread is free and then holds it `msPerRequest`, and a timer that comes due
 * while it is busy runs when it is free (the event loop's timers fire late). So the keeper carries
 * at most 1000 / msPerRequest requests a second, whatever its plan says, and every timer it sets
 * (re-arms, the scheduler's admissions, request timeouts) slips as a starved keeper's do. The
 * venue's clock is not slowed: the simulator runs on the real FakeClock.
 */
export class BusyCpu {
  private busyUntilMs = Number.NEGATIVE_INFINITY;
  /** Requests sent, and the time timers spent waiting for the thread (ms). */
  requests = 0;
  timerSlipMs = 0;
  /** Requests sent, by endpoint. */
  readonly byEndpoint = new Map<string, number>();

  constructor(
    private readonly base: Clock,
    private msPerRequest: number,
  ) {}

  /** The CPU changes (a neighbour starts or stops): the work each request takes from now on. */
  setMsPerRequest(ms: number): void {
    this.msPerRequest = ms;
  }

  /** Waits for the thread and takes it for one request's work. */
  async turn(endpoint = '?'): Promise<void> {
    this.byEndpoint.set(endpoint, (this.byEndpoint.get(endpoint) ?? 0) + 1);
    const startMs = Math.max(this.base.monoMs(), this.busyUntilMs);
    this.busyUntilMs = startMs + this.msPerRequest;
    this.requests += 1;
    const waitMs = startMs - this.base.monoMs();
    if (waitMs > 0) await new Promise<void>((resolve) => this.base.setTimeout(resolve, waitMs));
  }

  /** The keeper's clock: readings are the base clock's, timers run no earlier than the thread is free. */
  clock(): Clock {
    const base = this.base;
    return {
      nowMs: () => base.nowMs(),
      monoMs: () => base.monoMs(),
      setTimeout: (fn, delayMs) => {
        const handle: { inner: TimerHandle } = { inner: undefined as unknown as TimerHandle };
        const run = (): void => {
          const slipMs = this.busyUntilMs - base.monoMs();
          if (slipMs > 0) {
            this.timerSlipMs += slipMs;
            handle.inner = base.setTimeout(run, slipMs);
            return;
          }
          fn();
        };
        handle.inner = base.setTimeout(run, delayMs);
        return handle as unknown as TimerHandle;
      },
      clearTimeout: (h) => base.clearTimeout((h as unknown as { inner: TimerHandle }).inner),
    };
  }
}
