/**
 * The harness itself: virtual time must wait for every piece of real I/O the keeper waits on, or a
 * timeline measures the machine, not the keeper. Its state-file reads were once untracked, and the
 * cold start of budget-tiers' 180 accounts armed anywhere from 18.2 s to 24.8 s (7 runs in 45 over
 * its 19.8 s bound): virtual time ran on while `start()` read the state directory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { benchAddresses, benchKey } from '../bench/keys.js';
import { account, advanceUntilAllArmed, startHarness, type Harness } from './support/harness.js';

const SWITCH = { deadlineMs: 20_000, rearmEveryMs: 10_000, minHorizonMs: 8_000 };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Virtual ms from start to the first signed action, and to every account armed. */
async function coldStart(stateReadDelayMs: number): Promise<{ firstActionMs: number; allArmedMs: number }> {
  const n = 20;
  const addresses = benchAddresses(n);
  h = await startHarness({
    sim: {
      accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
      rateLimits: { globalCounts: 'signed', global: { limit: 1_200, windowSeconds: 60 }, scheduleCancel: null },
    },
    accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, benchKey(i), {}, SWITCH)),
    rateLimits: { global: 1_200, scheduleCancel: 1_200 },
    watch: { ordersEveryMs: 120_000, positionsEveryMs: 300_000 },
    stateReadDelayMs,
  });
  const t0 = h.clock.monoMs();
  const wall0 = h.clock.nowMs();
  await h.keeper.start();
  const allArmedMs = await advanceUntilAllArmed(h, addresses, t0, 20_000);
  const firstActionMs = Math.min(...h.sim.state.actionLog().map((x) => x.atMs - wall0));
  await h.close();
  h = undefined;
  return { firstActionMs, allArmedMs };
}

describe('virtual time and the state directory', () => {
  it('a slow disk (every state read 30 ms real) :: the same cold start, to the millisecond, as a fast one', async () => {
    const fast = await coldStart(0);
    const slow = await coldStart(30);
    console.log(`cold start, fast disk ${JSON.stringify(fast)}, slow disk ${JSON.stringify(slow)}`);
    expect(fast.firstActionMs).toBeLessThan(250);
    expect(slow).toEqual(fast);
  }, 60_000);
});
