/**
 * Issue 20 item 1, `extraAgents`: the whole keeper against the simulator in virtual time confirms
 * its approval landed and learns when it lapses from the venue (account/agent-check.ts):
 * (a) an agent replaced under its name on an account that is not arming (`arm_when: orders_open`,
 *     no orders) is found by the daily read and re-approved before any order needs the switch;
 * (b) an expiry on the venue earlier than the keeper's record (the agent re-approved elsewhere with
 *     a shorter `valid_until`) is adopted, and the agent renewed before it lapses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildApproveAgent } from '../src/venue/actions.js';
import { signerFromPrivateKey } from '../src/venue/signing/signer.js';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, gauge, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const DAY = 86_400_000;

/** Signs an approveAgent with the master's key and hands it to the venue, as a person with that key could. */
async function approveElsewhere(harness: Harness, masterKey: string, agentAddress: string, name: string, validUntilMs: number, nonceBump: number): Promise<void> {
  const master = signerFromPrivateKey(masterKey);
  const body = await buildApproveAgent({ signer: master, network: 'testnet', nonce: harness.sim.clock.nowMs() + nonceBump, agentAddress, agentName: `${name} valid_until ${validUntilMs}` });
  const r = await harness.sim.state.handleAction(JSON.parse(JSON.stringify(body)), 'exchange');
  expect(r.kind === 'answer' && r.body.status).toBe('ok');
}

describe("the master's approved agents, read on the venue", () => {
  it('(a) an idle account whose agent was replaced under its name is re-approved at the next daily read, before its orders need the switch', { timeout: 180_000 }, async () => {
    const IDLE = demoAddress('agent-idle');
    const key = demoMasterKey('agent-idle');
    h = await startHarness({
      sim: { accounts: [{ address: IDLE, tradedVolumeUsd: 50_000_000 }], venueOnly: true },
      noService: true,
      accounts: () => [account('idle', IDLE, key, {}, { armWhen: 'orders_open', path: 'exchange' })],
      // Reads seldom: a virtual day of them costs real loopback requests.
      watch: { source: 'venue', ordersEveryMs: 600_000, positionsEveryMs: 600_000 },
    });
    await h.keeper.start();
    await h.advance(3 * 60_000);
    let st = h.keeper.status().accounts[0]!;
    const first = st.agent!.address;
    expect(st.should_be_armed).toBe(false); // no orders: nothing to arm (armed only until the first read said so)
    // confirmed on the venue, with the expiry the keeper approved
    expect(st.agent!.venue).toMatchObject({ listed: true, valid_until: st.agent!.valid_until });
    expect(gauge(await h.metricsText(), 'dms_keeper_agent_listed{account="idle"}')).toBe(1);

    // Someone approves another agent under the keeper's name: the keeper's agent is gone.
    const other = signerFromPrivateKey('0x' + '5a'.repeat(32)).address;
    await approveElsewhere(h, key, other, 'dms-keeper', h.sim.clock.nowMs() + 10 * DAY, 11);
    const replacedAt = h.logs.length;
    expect(h.sim.state.agents(IDLE).map((a) => a.address)).not.toContain(first);

    await h.advance(DAY + 5 * 60_000);
    st = h.keeper.status().accounts[0]!;
    expect(h.logs.some((l) => l.event === 'agent_check' && l.result === 'gone' && l.account === 'idle')).toBe(true);
    expect(st.agent!.address).not.toBe(first);
    // the venue has the keeper's new agent, and no arm was needed to find out
    expect(h.sim.state.agents(IDLE).map((a) => a.address)).toContain(st.agent!.address);
    expect(h.logs.slice(replacedAt).filter((l) => l.event === 'arm' && l.account === 'idle')).toEqual([]);

    // Orders come: the first arm is signed by an agent the venue knows, at once.
    h.sim.state.placeVenueOrder(IDLE, { coin: 'BTC', side: 'B', limitPx: '100', sz: '1' });
    await h.advance(11 * 60_000); // the next orders read (every 10 minutes here)
    expect(h.keeper.status().accounts[0]!.phase).toBe('armed');
    expect(h.logs.some((l) => l.event === 'reprovision' && l.account === 'idle')).toBe(false);
  });

  it('(b) an expiry on the venue earlier than the record is adopted and the agent renewed before it lapses', { timeout: 120_000 }, async () => {
    const ACCT = demoAddress('agent-short');
    const key = demoMasterKey('agent-short');
    h = await startHarness({
      sim: { accounts: [{ address: ACCT, tradedVolumeUsd: 50_000_000 }], venueOnly: true },
      noService: true,
      accounts: () => [account('short', ACCT, key, {}, { path: 'exchange' })],
      watch: { source: 'venue', ordersEveryMs: 60_000, positionsEveryMs: 120_000 },
    });
    await h.keeper.start();
    await h.advance(10_000);
    const st0 = h.keeper.status().accounts[0]!;
    const first = st0.agent!.address;
    const recorded = Date.parse(st0.agent!.valid_until!);
    expect(recorded - h.sim.clock.nowMs()).toBeGreaterThan(29 * DAY);

    // The same agent re-approved elsewhere, to lapse in 2 days: the venue now says 2 days.
    const short = h.sim.clock.nowMs() + 2 * DAY;
    await approveElsewhere(h, key, first, 'dms-keeper', short, 13);
    expect(h.sim.state.agents(ACCT).find((a) => a.address === first)!.validUntilMs).toBe(short);

    await h.advance(4 * 60_000);
    const adopted = h.logs.find((l) => l.event === 'agent_expiry' && l.account === 'short');
    expect(adopted).toMatchObject({ result: 'earlier_than_recorded', level: 40 });
    // 2 days left is less than a fifth of 30 days: renewed at once, by a new approval
    const st = h.keeper.status().accounts[0]!;
    expect(st.agent!.address).not.toBe(first);
    const onVenue = h.sim.state.agents(ACCT).find((a) => a.address === st.agent!.address);
    expect(onVenue!.validUntilMs! - h.sim.clock.nowMs()).toBeGreaterThan(29 * DAY);
    expect(st.phase).toBe('armed');
    expect(h.venueHorizonMs(ACCT)!).toBeGreaterThanOrEqual(20_000);
  });
});
