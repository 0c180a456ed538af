/**
 * Replication in virtual time (issue: a fleet that loses a node loses no account's protection):
 * three keepers on one simulator and one clock, `shard: { count: 3, replication: 2 }` as the
 * config resolves it (accountsCovered: each instance arms its own shard's accounts and the previous
 * shard's, replica 1 under its own agent name), 15 accounts, the production-like switch of 60 s /
 * 15 s / 20 s (deadline / re-arm / min horizon).
 * - every account is armed by two instances, each with its own agent;
 * - one instance stopped for 75 s, longer than a deadline (the venue keeps its last arms, as after
 *   a SIGKILL: on_shutdown keep): no account's horizon drops below its minimum, no cancel fires;
 * - the control, replication 1: the same loss leaves its shard's accounts to run down below
 *   min_horizon within a deadline (a false cancel for each of them would follow).
 * What only processes show (a real SIGKILL, a restart on the state directory, /status's coverage)
 * is test/replication-processes.test.ts's, kept short.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { accountsCovered, replicaAgentName } from '../src/config/shard.js';
import { account, startHarness, type ExtraKeeper, type Harness } from './support/harness.js';

const N = 15;
const COUNT = 3;
const DEADLINE_MS = 60_000;
const REARM_MS = 15_000;
const MIN_HORIZON_MS = 20_000;
/** How long the instance stays stopped: longer than a deadline, so an account left to it alone would fire. */
const LOST_MS = 75_000;

const keys = Array.from({ length: N }, (_, i) => keccak256(stringToBytes(`dms-keeper replication timeline account ${i}`)));
const addresses = keys.map((k) => privateKeyToAddress(k).toLowerCase());
const all = addresses.map((address, i) => ({ address, key: keys[i]!, name: `a${i}` }));

/** Instance `index`'s accounts as the config resolves them (src/config/shard.ts), each replica under its own agent name. */
function instanceAccounts(index: number, replication: number) {
  return accountsCovered(all, { index, count: COUNT, replication }).map(({ account: a, replica }) =>
    account(a.name, a.address, a.key, { agentName: replicaAgentName('dms-keeper', replica), identity: `${a.address}|${replicaAgentName('dms-keeper', replica)}` }, { deadlineMs: DEADLINE_MS, rearmEveryMs: REARM_MS, minHorizonMs: MIN_HORIZON_MS }),
  );
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The fleet: the harness's keeper is instance 0, addKeeper() instances 1 and 2; all started, all accounts armed. */
async function fleet(replication: number): Promise<{ h: Harness; others: ExtraKeeper[] }> {
  const hh = await startHarness({
    accounts: () => instanceAccounts(0, replication),
    sim: { accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })) },
    // each instance's own budget: a third of the venue's one schedule-cancel window, as the processes have
    rateLimits: { global: 400, scheduleCancel: 200, exchange: 200 },
  });
  h = hh;
  const others = [await hh.addKeeper(() => instanceAccounts(1, replication)), await hh.addKeeper(() => instanceAccounts(2, replication))];
  await hh.keeper.start();
  for (const o of others) await o.keeper.start();
  for (let t = 0; t < 60_000 && !addresses.every((a) => (hh.venueHorizonMs(a) ?? 0) > 0); t += 1_000) await hh.advance(1_000);
  expect(addresses.filter((a) => !((hh.venueHorizonMs(a) ?? 0) > 0))).toEqual([]);
  return { h: hh, others };
}

/** The venue's view of every account: the lowest horizon, how many are unarmed, how many cancels fired today. */
function venueView(hh: Harness): { minHorizonMs: number; unarmed: number; fired: number } {
  let min = Number.POSITIVE_INFINITY;
  let unarmed = 0;
  let fired = 0;
  for (const a of addresses) {
    const horizon = hh.venueHorizonMs(a);
    fired += hh.sim.state.schedule(a).triggersToday;
    if (horizon === null || horizon <= 0) unarmed++;
    else min = Math.min(min, horizon);
  }
  return { minHorizonMs: min, unarmed, fired };
}

describe('replication in virtual time: three keepers, one lost for longer than a deadline', () => {
  it('replication 2 :: each account armed by two agents; one instance stopped for 75 s (> the 60 s deadline): every horizon >= min_horizon, no cancel fired', async () => {
    const { h: hh, others } = await fleet(2);
    // Each instance covers two shards' accounts, each account twice in all.
    const covered = [instanceAccounts(0, 2), instanceAccounts(1, 2), instanceAccounts(2, 2)];
    expect(covered.reduce((s, c) => s + c.length, 0)).toBe(2 * N);
    // Two agents arm each account: within three re-arm periods the venue accepted arms of every account from two signers.
    await hh.advance(3 * REARM_MS);
    const signers = new Map<string, Set<string>>();
    for (const x of hh.sim.state.actionLog()) {
      if (x.type !== 'scheduleCancel' || x.result !== 'ok' || !x.account || !x.signer) continue;
      signers.set(x.account.toLowerCase(), (signers.get(x.account.toLowerCase()) ?? new Set()).add(x.signer.toLowerCase()));
    }
    for (const a of addresses) expect(signers.get(a)?.size, a).toBe(2);

    await others[0]!.stop();
    let worst = Number.POSITIVE_INFINITY;
    for (let t = 1_000; t <= LOST_MS; t += 1_000) {
      await hh.advance(1_000);
      const v = venueView(hh);
      worst = Math.min(worst, v.minHorizonMs);
      expect(v.unarmed, `${t / 1000} s after the loss`).toBe(0);
      expect(v.fired, `${t / 1000} s after the loss`).toBe(0);
    }
    expect(worst).toBeGreaterThanOrEqual(MIN_HORIZON_MS);
    process.stdout.write(`replication 2 (virtual time, 60 / 15 / 20 s): lowest horizon with one instance of three lost for ${LOST_MS / 1000} s: ${(worst / 1000).toFixed(1)} s\n`);
  }, 60_000);

  it("the control, replication 1 :: the same loss leaves the lost shard's accounts to run down below min_horizon within a deadline", async () => {
    const { h: hh, others } = await fleet(1);
    await others[0]!.stop();
    let worst = Number.POSITIVE_INFINITY;
    let belowAfterMs = Number.POSITIVE_INFINITY;
    for (let t = 1_000; t <= DEADLINE_MS && worst >= MIN_HORIZON_MS; t += 1_000) {
      await hh.advance(1_000);
      worst = Math.min(worst, venueView(hh).minHorizonMs);
      if (worst < MIN_HORIZON_MS) belowAfterMs = t;
    }
    expect(worst).toBeLessThan(MIN_HORIZON_MS);
    // deadline - re-arm - min_horizon to deadline - min_horizon after the loss: 25 to 40 s
    expect(belowAfterMs).toBeLessThanOrEqual(DEADLINE_MS - MIN_HORIZON_MS + 1_000);
    process.stdout.write(`replication 1 (control, virtual time): below min horizon ${belowAfterMs / 1000} s after the loss (lowest ${(worst / 1000).toFixed(1)} s)\n`);
  }, 60_000);
});
