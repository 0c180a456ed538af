/**
 * Adaptive cadence against the simulator: more accounts than the configured cadence can re-arm
 * within the budget; the keeper stretches every period within its margin and holds every horizon
 * with no 429, where the configured cadence would need twice the budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { account, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const keyOf = (i: number) => keccak256(stringToBytes(`dms-keeper cadence test account ${i}`));

describe('adaptive cadence', () => {
  it('30 accounts, a 60/min arm budget, configured cadence 15 s (needs 120/min): stretched, every horizon held, no 429', async () => {
    const n = 30;
    const keys = Array.from({ length: n }, (_, i) => keyOf(i));
    const addresses = keys.map((k) => privateKeyToAddress(k).toLowerCase());
    h = await startHarness({
      accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, keys[i]!)),
      sim: {
        accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 5_000_000 })),
        rateLimits: { scheduleCancel: { limit: 60, windowSeconds: 60 }, global: { limit: 1200, windowSeconds: 60 } },
      },
      rateLimits: { global: 1200, scheduleCancel: 60 },
    });
    await h.keeper.start();
    const c = h.keeper.status().cadence!;
    expect(c.stretch).toBeGreaterThan(1.9);
    expect(c.holds).toBe(true);
    expect(c.arms_per_second).toBeLessThanOrEqual(1);
    expect(h.keeper.status().accounts[0]!.rearm_every_seconds).toBeGreaterThan(29);
    expect(h.keeper.status().accounts[0]!.rearm_every_seconds).toBeLessThanOrEqual(39);

    // cold start: all armed within N / B (30 s) plus a little
    await h.advance(33_000);
    for (const a of addresses) expect(h.venueHorizonMs(a)).not.toBeNull();

    let min = Number.POSITIVE_INFINITY;
    for (let t = 0; t < 300_000; t += 1_000) {
      await h.advance(1_000);
      for (const a of addresses) min = Math.min(min, h.venueHorizonMs(a) ?? Number.NEGATIVE_INFINITY);
    }
    expect(min).toBeGreaterThanOrEqual(20_000);
    const text = await h.metricsText();
    const limited = [...text.matchAll(/dms_keeper_arm_requests_total\{account="[^"]+",result="rate_limited"\} (\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
    expect(limited).toBe(0);
    expect(text).toMatch(/^dms_keeper_cadence_stretch 1\.9\d*|^dms_keeper_cadence_stretch 2/m);
    expect(h.logs.some((l) => l.event === 'cadence' && l.msg === 're-arm periods stretched to fit the arm budget')).toBe(true);
  }, 60_000);
});
