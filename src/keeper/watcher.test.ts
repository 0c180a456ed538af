import { describe, expect, it } from 'vitest';
import { FakeClock } from '../sched/fake-clock.js';
import { AccountWatcher, type WatchReport, type WatchSource } from './watcher.js';

/** A source whose reads hang until released (or aborted), recording the signal each read got. */
function hangingSource() {
  const signals: AbortSignal[] = [];
  const pending: Array<() => void> = [];
  const pages = async function* (opts?: { signal?: AbortSignal }) {
    const signal = opts!.signal!;
    signals.push(signal);
    await new Promise<void>((resolve, reject) => {
      pending.push(resolve);
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
    yield { data: [] };
  };
  const source = {
    ordersPages: (_a: string, opts?: { signal?: AbortSignal }) => pages(opts),
    positionsPages: (_a: string, opts?: { signal?: AbortSignal }) => pages(opts),
  } as unknown as WatchSource;
  return { source, signals, releaseAll: () => pending.splice(0).forEach((r) => r()) };
}

describe('AccountWatcher', () => {
  it('stop aborts the reads in flight; reads after a finished round get a fresh signal', async () => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const { source, signals, releaseAll } = hangingSource();
    const reports: WatchReport[] = [];
    const w = new AccountWatcher('0xabc', { ordersEveryMs: 10_000, positionsEveryMs: 10_000 }, { clock, source, report: (r) => reports.push(r) });
    w.start();
    await clock.advance(1);
    expect(signals).toHaveLength(2); // orders and positions, in flight together: one signal
    expect(signals[0]).toBe(signals[1]);
    releaseAll();
    await clock.advance(10_001);
    expect(reports.filter((r) => r.type === 'orders')).toHaveLength(1);
    expect(signals).toHaveLength(4);
    expect(signals[2]).not.toBe(signals[0]); // the first round's controller was dropped
    expect(signals[2]!.aborted).toBe(false);
    w.stop();
    expect(signals[2]!.aborted).toBe(true);
    expect((signals[2]!.reason as Error).message).toBe('watcher stopped');
  });
});
