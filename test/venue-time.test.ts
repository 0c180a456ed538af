/**
 * Venue time that cannot postpone a re-arm: whole-keeper timelines in virtual time. The host's wall
 * clock steps (NTP, an operator) and the venue's clock steps are different events: the first must
 * change nothing; the second re-plans every account and is logged as an error, and neither may let
 * a deadline pass.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT_ENDPOINTS } from '../src/sim/account-routes.js';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, DEFAULT_SWITCH, startHarness, type Harness } from './support/harness.js';

const ALICE = demoAddress('alice');
const BOB = demoAddress('bob');

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Advances in 500 ms steps; the lowest venue-side horizon of `addresses` seen (ms; -Infinity: none armed). */
async function worstHorizonMs(harness: Harness, addresses: string[], totalMs: number): Promise<number> {
  let worst = Number.POSITIVE_INFINITY;
  for (let t = 0; t < totalMs; t += 500) {
    await harness.advance(500);
    for (const a of addresses) worst = Math.min(worst, harness.venueHorizonMs(a) ?? Number.NEGATIVE_INFINITY);
  }
  return worst;
}

const two = () => [account('mm-main', ALICE, demoMasterKey('alice')), account('arb-desk', BOB, demoMasterKey('bob'))];

describe('venue time', () => {
  it('a step of the host wall clock (-1 h, then +2 h) changes nothing: no lapse, no clock error, still ready', async () => {
    h = await startHarness({ accounts: two });
    await h.keeper.start();
    await h.advance(20_000);
    h.clock.stepWall(-3_600_000);
    const a = await worstHorizonMs(h, [ALICE, BOB], 60_000);
    h.clock.stepWall(7_200_000);
    const b = await worstHorizonMs(h, [ALICE, BOB], 60_000);
    expect(Math.min(a, b)).toBeGreaterThanOrEqual(DEFAULT_SWITCH.minHorizonMs);
    expect(h.logs.filter((l) => l.event === 'venue_clock_step')).toEqual([]);
    expect(h.keeper.readiness().ready).toBe(true);
    expect(h.keeper.processHealth().alive).toBe(true);
    // The skew metric shows the host's clock is off (local minus venue), as it should.
    expect(h.keeper.status().clock_skew_seconds).toBeGreaterThan(3_500);
  });

  it('the venue clock steps +30 s, then back: re-planned at once, logged as errors, no deadline passes', async () => {
    h = await startHarness({ accounts: two });
    await h.keeper.start();
    await h.advance(20_000);
    h.sim.faults.setClockOffset(30_000);
    const forward = await worstHorizonMs(h, [ALICE, BOB], 60_000);
    h.sim.faults.setClockOffset(0);
    const back = await worstHorizonMs(h, [ALICE, BOB], 90_000);
    expect(forward).toBeGreaterThan(0);
    expect(back).toBeGreaterThanOrEqual(DEFAULT_SWITCH.minHorizonMs);
    const steps = h.logs.filter((l) => l.event === 'venue_clock_step');
    expect(steps.map((l) => l.direction)).toEqual(['forward', 'backward']);
    expect(steps.every((l) => l.level === 50)).toBe(true);
    expect(await h.metricsText()).toMatch(/dms_keeper_venue_clock_steps_total\{direction="backward"\} 1/);
    expect(h.sim.state.schedule(ALICE).triggersToday + h.sim.state.schedule(BOB).triggersToday).toBe(0);
  });

  it('arm_when orders_open: a failed orders read re-arms an idle account (unknown is not a stale 0)', async () => {
    h = await startHarness({
      sim: { accounts: [{ address: BOB, tradedVolumeUsd: 5_000_000 }] }, // eligible, no resting orders
      accounts: () => [account('idle-desk', BOB, demoMasterKey('bob'), {}, { armWhen: 'orders_open' })],
      watch: { ordersEveryMs: 10_000 },
    });
    await h.keeper.start();
    await h.advance(70_000);
    const idle = h.keeper.status().accounts[0]!;
    expect(idle.open_orders).toBe(0);
    expect(idle.phase).toBe('idle');
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: ACCOUNT_ENDPOINTS.orders, forMs: 15_000 });
    await h.advance(12_000);
    expect(h.keeper.status().accounts[0]!.phase).toBe('armed');
    expect(h.venueHorizonMs(BOB)).toBeGreaterThan(DEFAULT_SWITCH.minHorizonMs);
  });
});
