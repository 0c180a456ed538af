/**
 * Invariant 5: no key material reaches logs, metrics or /status, in a whole scenario that goes
 * through provisioning, re-provisioning, refusals, errors, fires and a stop; and agents are renewed
 * before their approval lapses.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { buildApproveAgent } from '../src/venue/actions.js';
import { signerFromPrivateKey } from '../src/venue/signing/signer.js';
import { account, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('key hygiene', () => {
  it('no master key, agent key or signature in any log line, metric or /status body', async () => {
    const masters = ['alice', 'bob', 'carol'].map(demoMasterKey);
    h = await startHarness({
      accounts: () => [
        account('mm-main', demoAddress('alice'), masters[0]!),
        account('mm-sub', demoAddress('alice-sub'), masters[0]!, { agentName: 'dms-keeper-sub' }),
        account('arb-desk', demoAddress('bob'), masters[1]!, {}, { path: 'rest_then_exchange', onShutdown: 'clear' }),
        account('small-desk', demoAddress('carol'), masters[2]!),
        account('wrong-key', demoAddress('carol'), masters[1]!, { agentName: 'other' }),
      ],
      notifications: true,
    });
    await h.keeper.start();
    await h.advance(20_000);
    // prune bob's agent, break the REST route, let a deadline lapse
    const bob = signerFromPrivateKey(masters[1]!);
    const other = signerFromPrivateKey('0x' + '42'.repeat(32));
    const prune = await buildApproveAgent({ signer: bob, network: 'testnet', nonce: h.sim.clock.nowMs() + 99, agentAddress: other.address, agentName: `dms-keeper valid_until ${h.sim.clock.nowMs() + 86_400_000}` });
    await h.sim.state.handleAction(JSON.parse(JSON.stringify(prune)), 'exchange');
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 30_000 });
    h.sim.faults.add({ kind: 'reset', endpoint: 'POST /exchange', count: 2 });
    h.sim.faults.add({ kind: 'status', status: 503, forMs: 70_000, endpoint: 'POST /exchange' });
    await h.advance(90_000);
    const status = JSON.stringify(h.keeper.status());
    const metrics = await h.metricsText();
    await h.stop();
    const logs = h.logText();

    // generated agent keys from the state directory
    const agentKeys: string[] = [];
    for (const f of await readdir(join(h.stateDir, 'agents'))) {
      agentKeys.push((JSON.parse(await readFile(join(h.stateDir, 'agents', f), 'utf8')) as { privateKey: string }).privateKey);
    }
    expect(agentKeys.length).toBeGreaterThanOrEqual(3);
    // the scenario really went through the interesting paths
    expect(logs).toContain('"event":"reprovision"');
    expect(logs).toContain('"event":"cancel_fired"');
    expect(logs).toContain('master key belongs to');
    expect(logs).toContain('"reason":"ineligible"');

    for (const text of [logs, metrics, status]) {
      for (const key of [...masters, ...agentKeys]) {
        expect(text.toLowerCase()).not.toContain(key.slice(2).toLowerCase());
      }
      // no 64-hex-digit run at all (keys, signature halves, hashes)
      expect(text).not.toMatch(/[0-9a-fA-F]{64}/);
    }
  }, 60_000);

  it('re-approves the agent before its approval lapses (valid_days), with a fresh key, without a lapse of the switch', async () => {
    const bob = demoAddress('bob');
    h = await startHarness({
      accounts: () => [account('arb-desk', bob, demoMasterKey('bob'), { validDays: 1 }, { deadlineMs: 3_600_000, rearmEveryMs: 1_800_000, minHorizonMs: 600_000 })],
      watch: { ordersEveryMs: 3_600_000, positionsEveryMs: 3_600_000 },
    });
    await h.keeper.start();
    await h.advance(1_000);
    const first = h.keeper.status().accounts[0]!.agent!;
    // renewal is due at 80% of the validity: 19.2 h
    await h.advance(19 * 3_600_000);
    expect(h.keeper.status().accounts[0]!.agent!.address).toBe(first.address);
    await h.advance(30 * 60_000);
    const second = h.keeper.status().accounts[0]!.agent!;
    expect(second.address).not.toBe(first.address);
    expect(Date.parse(second.valid_until!)).toBeGreaterThan(Date.parse(first.valid_until!));
    const approvals = h.sim.state.actionLog().filter((a) => a.type === 'approveAgent' && a.result === 'ok');
    expect(approvals.length).toBe(2);
    // the switch kept arming with the new agent past the old approval's expiry
    await h.advance(6 * 3_600_000);
    expect(h.venueHorizonMs(bob)!).toBeGreaterThan(600_000);
    const lastArm = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel').at(-1)!;
    expect(lastArm.signer).toBe(second.address);
    expect(lastArm.result).toBe('ok');
  }, 60_000);
});
