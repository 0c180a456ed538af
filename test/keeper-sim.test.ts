/**
 * The keeper against the venue simulator (real loopback HTTP, signatures verified, virtual time):
 * the safety invariants of DESIGN.md section 3, each as a timeline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, startHarness, type Harness } from './support/harness.js';

const ALICE = demoAddress('alice');
const ALICE_SUB = demoAddress('alice-sub');
const BOB = demoAddress('bob');
const CAROL = demoAddress('carol');

const three = () => [
  account('mm-main', ALICE, demoMasterKey('alice')),
  account('mm-sub', ALICE_SUB, demoMasterKey('alice'), { agentName: 'dms-keeper-sub' }),
  account('arb-desk', BOB, demoMasterKey('bob')),
];

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Samples every account's venue-side horizon every `stepMs` while advancing `totalMs`. */
async function runAndSample(harness: Harness, addresses: string[], totalMs: number, stepMs = 1_000, from = 0) {
  let min = Number.POSITIVE_INFINITY;
  const samples: number[] = [];
  for (let t = 0; t < totalMs; t += stepMs) {
    await harness.advance(stepMs);
    if (t + stepMs < from) continue;
    for (const a of addresses) {
      const hz = harness.venueHorizonMs(a);
      const v = hz === null ? Number.NEGATIVE_INFINITY : hz;
      samples.push(v);
      min = Math.min(min, v);
    }
  }
  return { min, samples };
}

describe('keeper against the simulator', () => {
  it('arms 3 accounts (main, subaccount via vault, another main) within one period of start', async () => {
    h = await startHarness({ accounts: three });
    await h.keeper.start();
    await h.advance(15_000);
    for (const a of [ALICE, ALICE_SUB, BOB]) {
      const hz = h.venueHorizonMs(a);
      expect(hz).not.toBeNull();
      expect(hz!).toBeGreaterThanOrEqual(45_000);
    }
    const status = h.keeper.status();
    expect(status.accounts.map((a) => a.phase)).toEqual(['armed', 'armed', 'armed']);
    expect(status.accounts.find((a) => a.name === 'mm-sub')!.account_type).toBe('subaccount');
    expect(h.keeper.readiness().ready).toBe(true);
    // agents were approved by the masters, one per account, and the master keys signed nothing else
    const actions = h.sim.state.actionLog();
    expect(actions.filter((a) => a.type === 'approveAgent' && a.result === 'ok').length).toBe(3);
    const masters = new Set([ALICE, BOB]);
    expect(actions.filter((a) => a.type === 'scheduleCancel' && masters.has(a.signer ?? '')).length).toBe(0);
  });

  it('10 virtual minutes with 429 and 503 stretches shorter than the margin: every horizon stays >= min_horizon, no request inside retry_after', async () => {
    h = await startHarness({ accounts: three });
    await h.keeper.start();
    await h.advance(20_000);
    // t=20 s: the trading endpoint answers 429 (retry_after 8 s) for 12 s
    h.sim.faults.add({ kind: 'status', status: 429, endpoint: 'POST /v1/trading/orders/schedule-cancel', scope: 'endpoint', retryAfterSeconds: 8, limit: 600, windowSeconds: 60, forMs: 12_000 });
    const first = await runAndSample(h, [ALICE, ALICE_SUB, BOB], 60_000);
    // t=80 s: 503 with a dependency detail for 25 s
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', reason: 'upstream_unavailable', forMs: 25_000 });
    const second = await runAndSample(h, [ALICE, ALICE_SUB, BOB], 60_000);
    // t=140 s: a global 429 storm of 15 s
    h.sim.faults.add({ kind: 'status', status: 429, scope: 'global', retryAfterSeconds: 5, limit: 1200, windowSeconds: 60, forMs: 15_000 });
    const rest = await runAndSample(h, [ALICE, ALICE_SUB, BOB], 460_000);
    const minHorizon = Math.min(first.min, second.min, rest.min);
    expect(minHorizon).toBeGreaterThanOrEqual(20_000);

    // the keeper saw 429s, and after each one sent nothing on that scope before retry_after
    const text = await h.metricsText();
    const limited = [...text.matchAll(/dms_keeper_arm_requests_total\{account="[^"]+",result="rate_limited"\} (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(limited).toBeGreaterThan(0);
    // no arm failed for a reason of our own making
    expect(h.logs.filter((l) => l.event === 'arm' && l.reason === 'internal')).toEqual([]);
    const arms = h.logs.filter((l) => l.event === 'arm');
    const rl = arms.filter((l) => l.result === 'rate_limited');
    expect(rl.length).toBeGreaterThan(0);
    // After a 429 the whole scope waits: no arm of ANY account answers inside retry_after.
    for (const entry of rl) {
      const at = Date.parse(String(entry.time));
      const retryAfter = Number(entry.retry_after_ms);
      const tooSoon = arms.filter((l) => Date.parse(String(l.time)) > at && Date.parse(String(l.time)) < at + retryAfter);
      expect(tooSoon).toEqual([]);
    }
    h.logs.push({ summary: { minHorizonMs: minHorizon, arms: arms.length, rateLimited: rl.length } });
  }, 120_000);

  it('a keeper that stops re-arming (killed) leaves a deadline that fires and cancels the orders, and not before', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))] });
    await h.keeper.start();
    await h.advance(20_000);
    const ordersBefore = h.sim.state.openOrders(BOB).length;
    expect(ordersBefore).toBeGreaterThan(0);
    const deadline = h.sim.state.schedule(BOB).timeMs!;
    // "kill": the keeper's timers stop with no request at all (on_shutdown keep sends nothing)
    await h.stop();
    const killedAt = h.sim.clock.nowMs();
    expect(deadline - killedAt).toBeGreaterThan(40_000);
    await h.advance(deadline - killedAt - 1);
    expect(h.sim.state.openOrders(BOB).length).toBe(ordersBefore);
    await h.advance(2);
    expect(h.sim.state.openOrders(BOB).length).toBe(0);
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(1);
  });

  it('on_shutdown: clear leaves no schedule, and the clear is the last request', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'), {}, { onShutdown: 'clear' })] });
    await h.keeper.start();
    await h.advance(40_000);
    expect(h.sim.state.schedule(BOB).timeMs).toBeDefined();
    await h.stop();
    expect(h.sim.state.schedule(BOB).timeMs).toBeUndefined();
    const scheduleActions = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel');
    const n = scheduleActions.length;
    await h.advance(120_000);
    expect(h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel').length).toBe(n);
    expect(h.sim.state.openOrders(BOB).length).toBeGreaterThan(0);
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(0);
  });

  it('on_shutdown: keep leaves the schedule armed', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))] });
    await h.keeper.start();
    await h.advance(20_000);
    await h.stop();
    expect(h.venueHorizonMs(BOB)!).toBeGreaterThan(30_000);
  });

  it('an ineligible account beside healthy ones: reported, slow retries, never delays the others', async () => {
    h = await startHarness({
      accounts: () => [...three(), account('small-desk', CAROL, demoMasterKey('carol'))],
    });
    await h.keeper.start();
    const { min } = await runAndSample(h, [ALICE, ALICE_SUB, BOB], 120_000, 1_000, 16_000);
    expect(min).toBeGreaterThanOrEqual(45_000);
    const carol = h.keeper.status().accounts.find((a) => a.name === 'small-desk')!;
    expect(carol.phase).toBe('ineligible');
    expect(carol.should_be_armed).toBe(false);
    const carolAttempts = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel' && a.account === CAROL);
    expect(carolAttempts.length).toBe(1);
    expect(h.keeper.readiness().ready).toBe(true);
    expect(await h.metricsText()).toContain('dms_keeper_account_ineligible{account="small-desk"} 1');
  });

  it('an account with a wrong master key fails provisioning alone; the others are armed', async () => {
    h = await startHarness({
      accounts: () => [...three(), account('bad-key', CAROL, demoMasterKey('bob'))],
    });
    await h.keeper.start();
    await h.advance(15_000);
    for (const a of [ALICE, ALICE_SUB, BOB]) expect(h.venueHorizonMs(a)!).toBeGreaterThanOrEqual(45_000);
    const bad = h.keeper.status().accounts.find((a) => a.name === 'bad-key')!;
    expect(bad.phase).toBe('provisioning_failed');
    expect(bad.provision_error).toContain('master key belongs to');
    expect(h.keeper.readiness().ready).toBe(false);
    expect(h.keeper.readiness().faults.map((f) => f.account)).toEqual(['bad-key']);
  });

  it('two accounts under one master with the same agent name: the second is refused, the first keeps its agent', async () => {
    h = await startHarness({
      accounts: () => [account('mm-main', ALICE, demoMasterKey('alice')), account('mm-sub', ALICE_SUB, demoMasterKey('alice'))],
    });
    await h.keeper.start();
    await h.advance(30_000);
    const st = h.keeper.status().accounts;
    const armed = st.filter((a) => a.phase === 'armed');
    const refused = st.filter((a) => a.phase === 'provisioning_failed');
    expect(armed.length).toBe(1);
    expect(refused.length).toBe(1);
    expect(refused[0]!.provision_error).toContain('Give each account its own agent.name');
    expect(h.sim.state.actionLog().filter((a) => a.type === 'approveAgent').length).toBe(1);
  });

  it('a pruned agent is re-provisioned once, then arming resumes', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))] });
    await h.keeper.start();
    await h.advance(5_000);
    const firstAgent = h.keeper.status().accounts[0]!.agent!.address;
    // Another approval under the same name replaces (prunes) our agent at the venue.
    const { signerFromPrivateKey } = await import('../src/venue/signing/signer.js');
    const { buildApproveAgent } = await import('../src/venue/actions.js');
    const master = signerFromPrivateKey(demoMasterKey('bob'));
    const other = signerFromPrivateKey('0x' + '42'.repeat(32));
    const body = await buildApproveAgent({ signer: master, network: 'testnet', nonce: h.sim.clock.nowMs() + 7, agentAddress: other.address, agentName: `dms-keeper valid_until ${h.sim.clock.nowMs() + 86_400_000}` });
    const r = await h.sim.state.handleAction(JSON.parse(JSON.stringify(body)), 'exchange');
    expect(r.kind === 'answer' && r.body.status).toBe('ok');
    await h.advance(60_000);
    const st = h.keeper.status().accounts[0]!;
    expect(st.agent!.address).not.toBe(firstAgent);
    expect(st.phase).toBe('armed');
    expect(h.venueHorizonMs(BOB)!).toBeGreaterThanOrEqual(20_000);
    expect(h.logs.some((l) => l.event === 'reprovision')).toBe(true);
  });

  it('restarting reuses the stored agent: no new approval, no slot exhaustion', async () => {
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))] });
    await h.keeper.start();
    await h.advance(5_000);
    const stateDir = h.stateDir;
    const agent = h.keeper.status().accounts[0]!.agent!.address;
    await h.close();
    h = await startHarness({ accounts: () => [account('arb-desk', BOB, demoMasterKey('bob'))], stateDir });
    // a fresh simulator knows nothing of the first run's agent: the keeper reuses it, the venue
    // refuses it, and it re-provisions once (this also exercises restart + prune together)
    await h.keeper.start();
    await h.advance(10_000);
    const st = h.keeper.status().accounts[0]!;
    expect(st.agent!.source === 'stored' || st.agent!.address !== agent).toBe(true);
    expect(st.phase).toBe('armed');
  });
});
