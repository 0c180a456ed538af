/**
 * Issue 20 item 5, the whole keeper against the simulator in virtual time: the address's action
 * headroom (`userRateLimit`: nRequestsCap - nRequestsUsed) exported per account and warned about
 * once when a day of re-arms would take more than `watch.address_budget_warn_share` of it; and an
 * account whose `cumVlm` is below the volume gate reported before any arm is sent for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, gauge, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the address action budget and the volume gate', () => {
  it('exports the headroom, warns once when a day of re-arms takes over half of it, and reports an account below the volume gate before arming it', { timeout: 120_000 }, async () => {
    const LOW = demoAddress('headroom-low');
    const SMALL = demoAddress('below-gate');
    const OK = demoAddress('headroom-ok');
    const CAP = 12_000;
    const USED = 11_000; // 1,000 left: a day of re-arms every 15 s is 5,760
    h = await startHarness({
      sim: {
        accounts: [
          { address: LOW, tradedVolumeUsd: 5_000_000, rateLimit: { nRequestsCap: CAP, nRequestsUsed: USED } },
          { address: SMALL, tradedVolumeUsd: 400_000 },
          { address: OK, tradedVolumeUsd: 50_000_000 },
        ],
      },
      // An exchange budget that admits the three first reads at once (the venue's 1,200 a minute
      // paces a read of weight 20 a second: then only the first accounts' reads come before their
      // arms, see FIRST_READ_WAIT_MS).
      rateLimits: { global: 1200, scheduleCancel: 600, exchange: 60_000 },
      watch: { source: 'service_then_venue' }, // the keeper reads the venue only when it reads it at all
      accounts: () => [
        account('low', LOW, demoMasterKey('headroom-low')),
        account('small', SMALL, demoMasterKey('below-gate')),
        account('ok', OK, demoMasterKey('headroom-ok')),
      ],
    });
    await h.keeper.start();
    await h.advance(5_000);

    let text = await h.metricsText();
    // Read after provisioning, before the first arm: the approval (and at most a re-arm) is all
    // the address spent beyond the seeded figure.
    const left = gauge(text, 'dms_keeper_address_actions_left{account="low"}');
    expect(left).toBeDefined();
    expect(left!).toBeLessThanOrEqual(CAP - USED);
    expect(left!).toBeGreaterThanOrEqual(CAP - USED - 3);
    // cap 10,000 + 1 per USDC traded, minus what it spent: far from any warning
    expect(gauge(text, 'dms_keeper_address_actions_left{account="ok"}')!).toBeGreaterThan(50_000_000);

    // The volume gate: reported from the read, before any arm of the account left.
    const logs = h.logs;
    const gateAt = logs.findIndex((l) => l.event === 'below_volume_gate' && l.account === 'small');
    expect(gateAt).toBeGreaterThanOrEqual(0);
    expect(logs[gateAt]!.level).toBe(40);
    expect(Number(logs[gateAt]!.cum_vlm)).toBe(400_000); // the venue writes it as a decimal text ("400000.0")
    const firstArm = logs.findIndex((l) => l.event === 'arm' && l.account === 'small');
    expect(firstArm).toBeGreaterThan(gateAt);
    expect(logs[gateAt]!.before_first_arm).toBe(true); // no arm had left when it was reported // the venue's refusal still comes: it is the authority (address-budget.ts)
    expect(gauge(text, 'dms_keeper_account_ineligible{account="small"}')).toBe(1);
    expect(gauge(text, 'dms_keeper_account_ineligible{account="low"}')).toBe(0);
    const small = h.keeper.status().accounts.find((a) => a.name === 'small')!;
    expect(small.problem).toMatch(/below_volume_gate/);
    expect(h.keeper.status().accounts.find((a) => a.name === 'ok')!.problem).toBeNull();

    // A day of re-arms at 15 s (5,760) is more than half of 1,000: one warning, not one per read.
    const warned = () => h!.logs.filter((l) => l.event === 'address_budget_low');
    expect(warned().map((l) => l.account)).toEqual(['low']);
    expect(warned()[0]!.level).toBe(40);
    expect(warned()[0]!.rearms_per_day).toBe(5_760);

    // Two more reads (every 10 minutes): still one warning; the gauge follows the venue.
    // The trader's bot spends 800 more just before the 10-minute read.
    await h.advance(9.5 * 60_000);
    h.sim.state.setUserRateLimit(LOW, { nRequestsUsed: 11_800 });
    await h.advance(60_000);
    text = await h.metricsText();
    const later = gauge(text, 'dms_keeper_address_actions_left{account="low"}')!;
    // 200 left when seeded, minus the re-arms between that and the read (one per 15 s, within 30 s)
    expect(later).toBeLessThanOrEqual(200);
    expect(later).toBeGreaterThanOrEqual(200 - 4);
    await h.advance(10 * 60_000);
    expect(warned()).toHaveLength(1);
    expect(h.logs.filter((l) => l.event === 'below_volume_gate')).toHaveLength(1);
  });
});
