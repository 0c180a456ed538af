import type { FakeClock } from '../time/fake-clock.js';
import type { SharedReservoir } from './shared-share.js';

/** For the scheduler's tests: jobs that record when they ran (virtual ms) and under which tag. */
export function recorder(clock: FakeClock): { sent: Array<{ atMs: number; tag: string }>; job: (tag: string) => () => Promise<string> } {
  const sent: Array<{ atMs: number; tag: string }> = [];
  const job = (tag: string) => async () => {
    sent.push({ atMs: clock.nowMs(), tag });
    return tag;
  };
  return { sent, job };
}

/**
 * For the shared budget's tests: the most a bucket can let out in any span of `spanMs` (what the
 * venue's window sees), the bound shared-share.ts sizes the bucket by.
 */
export function sharedMaxInSpan(r: SharedReservoir, spanMs: number): number {
  return r.reservoirIncreaseMaximum + r.reservoirIncreaseAmount * (Math.floor(spanMs / r.reservoirIncreaseInterval) + 1);
}
