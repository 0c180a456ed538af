/**
 * The stall reported from outside (issue: "the venue as it is"): the venue runs 30 s ahead of the
 * host; REST answers 503 for a while, then a proxy answers HTML 502 with its own (host-time) `Date`
 * header, and reads keep failing that way afterwards. The old venue clock took one such header as a
 * clock step and moved venue time back 30 s; every re-arm planned in venue time became a local
 * timer 30 s late, and every deadline passed while the keeper was alive.
 *
 * Want: zero lapses at the venue (every horizon at or above its minimum), and no gap between arm attempts longer than the planned period
 * plus one retry slot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT_ENDPOINTS } from '../src/sim/account-routes.js';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, DEFAULT_SWITCH, startHarness, type Harness } from './support/harness.js';

const ALICE = demoAddress('alice');
const BOB = demoAddress('bob');
const OFFSET_MS = 30_000;
/** arb-desk runs a tight switch: 30 s deadline, re-armed every 10 s, 12 s minimum horizon. */
const TIGHT = { deadlineMs: 30_000, rearmEveryMs: 10_000, minHorizonMs: 12_000 };
/** The planned period plus one retry slot (a first retry after a transient failure is 1 s). */
const maxAttemptGapMs = (rearmEveryMs: number): number => rearmEveryMs + 2_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('venue clock stall: venue +30 s, REST 503, then a host-dated HTML 502 proxy', () => {
  it('keeps every deadline ahead and arms on time', async () => {
    h = await startHarness({
      sim: { clockOffsetMs: OFFSET_MS },
      accounts: () => [account('mm-main', ALICE, demoMasterKey('alice')), account('arb-desk', BOB, demoMasterKey('bob'), {}, TIGHT)],
    });
    await h.keeper.start();
    await h.advance(30_000);
    expect(h.venueHorizonMs(ALICE)).toBeGreaterThan(DEFAULT_SWITCH.minHorizonMs);

    // Venue-side horizon over minimum horizon, per account: below 1 the invariant broke, at 0 the
    // deadline passed.
    const worst = { alice: Number.POSITIVE_INFINITY, bob: Number.POSITIVE_INFINITY };
    const sample = async (ms: number): Promise<void> => {
      for (let t = 0; t < ms; t += 500) {
        await h!.advance(500);
        worst.alice = Math.min(worst.alice, (h!.venueHorizonMs(ALICE) ?? Number.NEGATIVE_INFINITY) / DEFAULT_SWITCH.minHorizonMs);
        worst.bob = Math.min(worst.bob, (h!.venueHorizonMs(BOB) ?? Number.NEGATIVE_INFINITY) / TIGHT.minHorizonMs);
      }
    };
    const startedAt = h.clock.nowMs();

    h.sim.faults.add({ kind: 'status', status: 503, path: 'rest', forMs: 5_000 });
    await sample(5_000);
    h.sim.faults.add({ kind: 'body', mode: 'html', status: 502, path: 'rest', dateShiftMs: -OFFSET_MS, forMs: 5_000 });
    await sample(5_000);
    for (const endpoint of [ACCOUNT_ENDPOINTS.orders, ACCOUNT_ENDPOINTS.positions, ACCOUNT_ENDPOINTS.account, 'GET /v1/health']) {
      h.sim.faults.add({ kind: 'body', mode: 'html', status: 502, endpoint, dateShiftMs: -OFFSET_MS, forMs: 150_000 });
    }
    await sample(150_000);

    // mm-main's margin (60 - 15 - 20 = 25 s) covers the 10 s in which arms fail: its minimum
    // horizon holds. arb-desk's (30 - 10 - 12 = 8 s) does not, by construction: its horizon may dip
    // below the minimum during the outage, but its deadline never passes.
    expect(worst.alice).toBeGreaterThanOrEqual(1);
    expect(worst.bob).toBeGreaterThan(0.5);
    expect(h.sim.state.schedule(ALICE).triggersToday).toBe(0);
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(0);
    // Every attempt (whatever its answer) within the period plus one retry slot of the one before.
    for (const [name, rearmEveryMs] of [['mm-main', DEFAULT_SWITCH.rearmEveryMs], ['arb-desk', TIGHT.rearmEveryMs]] as const) {
      const times = h.logs
        .filter((l) => l.event === 'arm' && l.account === name)
        .map((l) => Date.parse(String(l.time)))
        .filter((t) => t >= startedAt - rearmEveryMs);
      expect(times.length).toBeGreaterThanOrEqual(10);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(Math.max(...gaps), `${name} gaps ${gaps.join(',')}`).toBeLessThanOrEqual(maxAttemptGapMs(rearmEveryMs));
    }
    expect(h.logs.some((l) => l.event === 'cancel_fired')).toBe(false);
  });
});
