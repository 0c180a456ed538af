/**
 * Reliability: the invariants of DESIGN.md section 3 under faults, in virtual time against the
 * simulator. Titles read `<scenario> :: <invariant>`; scripts/reliability-table.mjs turns the
 * results into the README's table.
 */
import { keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { buildApproveAgent } from '../src/venue/actions.js';
import { signerFromPrivateKey } from '../src/venue/signing/signer.js';
import { account, startHarness, type Harness } from './support/harness.js';

const BOB = demoAddress('bob');
const ALICE = demoAddress('alice');
const SC = 'POST /v1/trading/orders/schedule-cancel';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function sampleMin(harness: Harness, addresses: string[], totalMs: number, stepMs = 500): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let t = 0; t < totalMs; t += stepMs) {
    await harness.advance(stepMs);
    for (const a of addresses) min = Math.min(min, harness.venueHorizonMs(a) ?? Number.NEGATIVE_INFINITY);
  }
  return min;
}

const armsLogged = (harness: Harness) => harness.logs.filter((l) => l.event === 'arm');

function noArmInsideRetryAfter(harness: Harness): void {
  const arms = armsLogged(harness);
  for (const rl of arms.filter((l) => l.result === 'rate_limited')) {
    const at = Date.parse(String(rl.time));
    const until = at + Number(rl.retry_after_ms);
    expect(arms.filter((l) => Date.parse(String(l.time)) > at && Date.parse(String(l.time)) < until)).toEqual([]);
  }
}

describe('reliability', () => {
  // A 429 forbids sending before retry_after, so the worst case is storm + retry_after; the horizon
  // holds while that fits in deadline - rearm_every - min_horizon (60 - 15 - 20 = 25 s here).
  it('429 storm of 15 s on the endpoint scope (retry_after 8 s; storm + retry_after within the margin) :: horizon >= min_horizon; nothing sent inside retry_after', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob')), account('mm-main', ALICE, demoMasterKey('alice'))] });
    await h.keeper.start();
    await h.advance(12_000);
    h.sim.faults.add({ kind: 'status', status: 429, endpoint: SC, scope: 'endpoint', retryAfterSeconds: 8, limit: 600, windowSeconds: 60, forMs: 15_000 });
    expect(await sampleMin(h, [BOB, ALICE], 120_000)).toBeGreaterThanOrEqual(20_000);
    expect(armsLogged(h).some((l) => l.result === 'rate_limited')).toBe(true);
    noArmInsideRetryAfter(h);
  });

  it('429 storm of 15 s on the global scope (retry_after 7 s; within the margin) :: horizon >= min_horizon; nothing sent inside retry_after', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob')), account('mm-main', ALICE, demoMasterKey('alice'))] });
    await h.keeper.start();
    await h.advance(12_000);
    h.sim.faults.add({ kind: 'status', status: 429, scope: 'global', retryAfterSeconds: 7, limit: 1200, windowSeconds: 60, forMs: 15_000 });
    expect(await sampleMin(h, [BOB, ALICE], 120_000)).toBeGreaterThanOrEqual(20_000);
    expect(armsLogged(h).some((l) => l.result === 'rate_limited')).toBe(true);
    noArmInsideRetryAfter(h);
  });

  it('latency spikes up to the request timeout (4.9 s of 5 s) for a minute, then beyond it (6 s) for 20 s :: horizon >= min_horizon', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))], requestTimeoutMs: 5_000 });
    await h.keeper.start();
    await h.advance(10_000);
    h.sim.faults.add({ kind: 'latency', ms: 4_900, endpoint: SC, forMs: 60_000 });
    const slow = await sampleMin(h, [BOB], 70_000);
    h.sim.faults.add({ kind: 'latency', ms: 6_000, endpoint: SC, forMs: 20_000 });
    const timeouts = await sampleMin(h, [BOB], 80_000);
    expect(Math.min(slow, timeouts)).toBeGreaterThanOrEqual(20_000);
    expect(armsLogged(h).some((l) => l.result === 'error' && l.reason === 'timeout')).toBe(true);
  });

  it('connection resets mid-response (the venue applied the arm, the keeper saw an error) :: horizon held, no false fire, nothing double-counted', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))] });
    await h.keeper.start();
    await h.advance(10_000);
    h.sim.faults.add({ kind: 'reset', phase: 'mid_response', endpoint: SC, count: 4 });
    expect(await sampleMin(h, [BOB], 180_000)).toBeGreaterThanOrEqual(20_000);
    expect(h.logs.filter((l) => l.event === 'cancel_fired')).toEqual([]);
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(0);
    expect(h.keeper.status().accounts[0]!.triggers_today).toBe(0);
    expect(armsLogged(h).filter((l) => l.result === 'error').length).toBe(4);
  });

  it('a WebSocket that goes silent for 2 minutes, then drops every 5 s :: arming unaffected, ws_connected reflects it, reconnects', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))], notifications: true });
    await h.keeper.start();
    await h.advance(5_000);
    expect(h.keeper.status().ws_connected).toBe(true);
    h.sim.faults.add({ kind: 'wsSilent', on: true });
    let sawDown = false;
    let min = Number.POSITIVE_INFINITY;
    for (let t = 0; t < 120_000; t += 1_000) {
      await h.advance(1_000);
      if (!h.keeper.status().ws_connected) sawDown = true;
      min = Math.min(min, h.venueHorizonMs(BOB) ?? Number.NEGATIVE_INFINITY);
    }
    expect(sawDown).toBe(true);
    h.sim.faults.add({ kind: 'wsSilent', on: false });
    h.sim.faults.add({ kind: 'wsDrop', everyMs: 5_000 });
    min = Math.min(min, await sampleMin(h, [BOB], 60_000));
    h.sim.faults.add({ kind: 'wsDrop', everyMs: null });
    await h.advance(60_000);
    expect(min).toBeGreaterThanOrEqual(44_000);
    expect(h.keeper.status().ws_connected).toBe(true);
    expect(h.logs.some((l) => l.event === 'ws_reconnected')).toBe(true);
  });

  it.each([30_000, -60_000])('the venue clock steps by %i ms mid-run :: the keeper re-learns venue time; no fire; horizon back above min_horizon within one period', async (stepMs) => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))] });
    await h.keeper.start();
    await h.advance(20_000);
    h.sim.faults.add({ kind: 'clockOffset', ms: stepMs });
    let min = Number.POSITIVE_INFINITY;
    for (let t = 0; t < 120_000; t += 500) {
      await h.advance(500);
      const hz = h.venueHorizonMs(BOB) ?? Number.NEGATIVE_INFINITY;
      if (t >= 16_000) min = Math.min(min, hz);
      expect(hz).toBeGreaterThan(0);
    }
    expect(min).toBeGreaterThanOrEqual(20_000);
    expect(Math.abs(h.keeper.status().clock_skew_seconds + stepMs / 1000)).toBeLessThan(1);
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(0);
  });

  it('the agent is pruned twice within a minute :: one re-provision, then slow retries (no rotation war, no tight loop)', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))] });
    await h.keeper.start();
    await h.advance(5_000);
    const master = signerFromPrivateKey(demoMasterKey('bob'));
    const prune = async (i: number) => {
      const other = signerFromPrivateKey(keccak256(stringToBytes(`pruner ${i}`)));
      const body = await buildApproveAgent({ signer: master, network: 'testnet', nonce: h!.sim.clock.nowMs() + 1_000 + i, agentAddress: other.address, agentName: `dms-keeper valid_until ${h!.sim.clock.nowMs() + 86_400_000}` });
      await h!.sim.state.handleAction(JSON.parse(JSON.stringify(body)), 'exchange');
    };
    await prune(1);
    await h.advance(20_000);
    await prune(2);
    await h.advance(40_000);
    const ours = h.sim.state.actionLog().filter((a) => a.type === 'approveAgent' && a.signer === master.address && a.result === 'ok').length;
    // initial approval + one re-provision (the 2 prunes are ours too: count them out)
    expect(ours - 2).toBe(2);
    const refused = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel' && a.result.startsWith('User or API Wallet'));
    expect(refused.length).toBeLessThanOrEqual(3);
    expect(h.keeper.status().accounts[0]!.phase).toBe('blocked');
    expect(h.keeper.readiness().ready).toBe(false);
  });

  it('the daily trigger cap is reached :: the account is reported and retried every 5 minutes; the other account is unaffected', async () => {
    h = await startHarness({
      accounts: () => [
        account('arb-desk', BOB, demoMasterKey('bob'), {}, { deadlineMs: 10_000, rearmEveryMs: 3_000, minHorizonMs: 6_000 }),
        account('mm-main', ALICE, demoMasterKey('alice')),
      ],
    });
    await h.keeper.start();
    await h.advance(2_000);
    for (let i = 0; i < 10; i++) {
      h.sim.faults.add({ kind: 'status', status: 503, endpoint: SC, forMs: 12_000 });
      await h.advance(16_000);
      if (h.venueHorizonMs(ALICE)! < 20_000) h.sim.faults.reset();
    }
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(10);
    const before = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel' && a.account === BOB).length;
    let aliceMin = Number.POSITIVE_INFINITY;
    for (let t = 0; t < 12 * 60_000; t += 1_000) {
      await h.advance(1_000);
      aliceMin = Math.min(aliceMin, h.venueHorizonMs(ALICE) ?? Number.NEGATIVE_INFINITY);
    }
    const after = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel' && a.account === BOB).length;
    expect(after - before).toBeLessThanOrEqual(4); // ~every 5 minutes, not every second
    expect(h.keeper.status().accounts.find((a) => a.name === 'arb-desk')!.phase).toBe('blocked');
    expect(h.keeper.readiness().faults.map((f) => f.account)).toEqual(['arb-desk']);
    expect(aliceMin).toBeGreaterThanOrEqual(20_000);
  }, 60_000);

  it('100 accounts, 10 with bad keys :: the 90 are armed within one period and hold min_horizon; the 10 fail alone, named by readiness', async () => {
    const n = 100;
    const keys = Array.from({ length: n }, (_, i) => keccak256(stringToBytes(`dms-keeper reliability account ${i}`)));
    const addresses = keys.map((k) => privateKeyToAddress(k).toLowerCase());
    const bad = new Set(Array.from({ length: 10 }, (_, i) => i * 10 + 3));
    h = await startHarness({
      accounts: () => addresses.map((a, i) => account(`acct-${i}`, a, bad.has(i) ? keys[(i + 1) % n]! : keys[i]!)),
      sim: {
        accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 5_000_000 })),
        rateLimits: { scheduleCancel: { limit: 1200, windowSeconds: 60 }, global: { limit: 4000, windowSeconds: 60 } },
      },
      rateLimits: { global: 4000, scheduleCancel: 1200 },
    });
    await h.keeper.start();
    await h.advance(15_000);
    const good = addresses.filter((_, i) => !bad.has(i));
    for (const a of good) expect(h.venueHorizonMs(a)).not.toBeNull();
    expect(await sampleMin(h, good, 180_000, 1_000)).toBeGreaterThanOrEqual(20_000);
    const faults = h.keeper.readiness().faults.map((f) => f.account).sort();
    expect(faults).toEqual([...bad].map((i) => `acct-${i}`).sort());
    for (const f of h.keeper.readiness().faults) expect(f.problem).toContain('master key belongs to');
  }, 120_000);
});
