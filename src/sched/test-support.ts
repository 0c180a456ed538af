import type { FakeClock } from './fake-clock.js';

/** For the scheduler's tests: jobs that record when they ran (virtual ms) and under which tag. */
export function recorder(clock: FakeClock): { sent: Array<{ atMs: number; tag: string }>; job: (tag: string) => () => Promise<string> } {
  const sent: Array<{ atMs: number; tag: string }> = [];
  const job = (tag: string) => async () => {
    sent.push({ atMs: clock.nowMs(), tag });
    return tag;
  };
  return { sent, job };
}
