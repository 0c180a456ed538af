/**
 * More invariants of DESIGN.md section 3 against the simulator, in virtual time: venue time, fired
 * cancels noticed with positions, the daily trigger budget, the exchange fallback, arm_when,
 * notifications, and reload.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, startHarness, type Harness } from './support/harness.js';

const ALICE = demoAddress('alice');
const BOB = demoAddress('bob');
const bob = (over = {}, sw = {}) => account('arb-desk', BOB, demoMasterKey('bob'), over, sw);
const alice = (over = {}, sw = {}) => account('mm-main', ALICE, demoMasterKey('alice'), over, sw);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function minHorizonOver(harness: Harness, address: string, totalMs: number, stepMs = 500): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let t = 0; t < totalMs; t += stepMs) {
    await harness.advance(stepMs);
    const hz = harness.venueHorizonMs(address);
    min = Math.min(min, hz === null ? Number.NEGATIVE_INFINITY : hz);
  }
  return min;
}

describe('venue time', () => {
  it.each([3_000, -3_000, 60_000, -60_000])('a venue clock offset of %i ms: deadlines in venue time, horizons held, skew measured', async (offsetMs) => {
    h = await startHarness({ accounts: () => [bob()], sim: { clockOffsetMs: offsetMs } });
    await h.keeper.start();
    await h.advance(1_000);
    const min = await minHorizonOver(h, BOB, 120_000);
    expect(min).toBeGreaterThanOrEqual(44_000);
    const skew = h.keeper.status().clock_skew_seconds;
    expect(Math.abs(skew - -offsetMs / 1000)).toBeLessThan(0.1);
    const text = await h.metricsText();
    const gauge = Number(/^dms_keeper_clock_skew_seconds (\S+)$/m.exec(text)?.[1]);
    expect(Math.abs(gauge - -offsetMs / 1000)).toBeLessThan(0.1);
    const loud = h.logs.some((l) => l.event === 'clock_skew' && l.level === 50);
    expect(loud).toBe(Math.abs(offsetMs) > 2_000);
  });
});

describe('fired cancels are noticed', () => {
  /** Arms BOB, then the venue refuses arms for 80 s (longer than the deadline): its cancel fires. */
  async function fireBobsCancel(): Promise<{ harness: Harness; ordersBefore: number }> {
    const harness = await startHarness({ accounts: () => [bob()] });
    h = harness;
    await h.keeper.start();
    await h.advance(16_000);
    const ordersBefore = h.sim.state.openOrders(BOB).length;
    expect(ordersBefore).toBeGreaterThan(0);
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 80_000 });
    await h.advance(90_000);
    return { harness, ordersBefore };
  }

  it('the venue refuses arms for longer than the deadline: the lapse is reported with the positions left, counted and persisted', async () => {
    const { harness, ordersBefore } = await fireBobsCancel();
    h = harness;
    expect(h.sim.state.openOrders(BOB).length).toBe(0);
    const fired = h.logs.find((l) => l.event === 'cancel_fired');
    expect(fired).toBeDefined();
    expect(fired!.orders_before).toBe(ordersBefore);
    expect(fired!.positions_open).toBe(h.sim.state.positions(BOB).length);
    expect(String(fired!.msg)).toContain('open position');
    const text = await h.metricsText();
    expect(text).toContain('dms_keeper_cancels_fired_total{account="arb-desk"} 1');
    expect(text).toContain('dms_keeper_triggers_today{account="arb-desk"} 1');
    const persisted = JSON.parse(await readFile(`${h.stateDir}/triggers.json`, 'utf8')) as { counts: Record<string, number> };
    expect(persisted.counts['arb-desk']).toBe(1);
    // and it re-armed as soon as the venue answered again
    expect(h.venueHorizonMs(BOB)!).toBeGreaterThan(40_000);
    expect(h.keeper.status().accounts[0]!.phase).toBe('armed');
  });

  it('after a restart with the same state directory, /status still shows the last fired cancel and what it left', async () => {
    const { harness, ordersBefore } = await fireBobsCancel();
    h = harness;
    const fired = h.keeper.status().accounts[0]!.last_cancel_fired;
    expect(fired).toMatchObject({ orders_cancelled: ordersBefore, positions_open: h.sim.state.positions(BOB).length, triggers_today: 1 });
    const stateDir = h.stateDir;
    await h.close();

    h = await startHarness({ accounts: () => [bob()], stateDir });
    await h.keeper.start();
    await h.advance(2_000);
    const after = JSON.parse(JSON.stringify(h.keeper.status())) as { accounts: Array<{ name: string; last_cancel_fired: unknown; triggers_today: number }> };
    expect(after.accounts[0]!.name).toBe('arb-desk');
    expect(after.accounts[0]!.last_cancel_fired).toEqual(fired);
    expect(after.accounts[0]!.triggers_today).toBe(1);
    expect(h.logs.filter((l) => l.event === 'cancel_fired')).toEqual([]); // nothing fired in the second life
  });

  it('warns before the daily trigger budget runs out', async () => {
    h = await startHarness({ accounts: () => [bob({}, { deadlineMs: 10_000, rearmEveryMs: 3_000, minHorizonMs: 6_000 })] });
    await h.keeper.start();
    await h.advance(2_000);
    // Eight lapses: the venue refuses every arm for 12 s, eight times.
    for (let i = 0; i < 8; i++) {
      h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 12_000 });
      await h.advance(16_000);
    }
    expect(h.sim.state.schedule(BOB).triggersToday).toBe(8);
    expect(h.keeper.status().accounts[0]!.triggers_today).toBe(8);
    expect(h.logs.some((l) => l.event === 'trigger_budget')).toBe(true);
  }, 60_000);
});

describe('path fallback', () => {
  it('rest_then_exchange: REST answers 503 for 2 minutes (longer than the margin), the exchange endpoint carries the switch', async () => {
    h = await startHarness({ accounts: () => [bob({}, { path: 'rest_then_exchange' })] });
    await h.keeper.start();
    await h.advance(10_000);
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 120_000 });
    const min = await minHorizonOver(h, BOB, 180_000);
    expect(min).toBeGreaterThanOrEqual(20_000);
    const viaExchange = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel' && a.via === 'exchange' && a.result === 'ok');
    expect(viaExchange.length).toBeGreaterThan(3);
  });

  it('rest only: the same outage lapses (the scenario above is not vacuous)', async () => {
    h = await startHarness({ accounts: () => [bob()] });
    await h.keeper.start();
    await h.advance(10_000);
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 120_000 });
    const min = await minHorizonOver(h, BOB, 180_000);
    expect(min).toBeLessThan(0);
    expect(h.keeper.readiness().ready).toBe(true); // recovered by the end
  });

  it('readiness flips while a horizon is really below min_horizon', async () => {
    h = await startHarness({ accounts: () => [bob()] });
    await h.keeper.start();
    await h.advance(10_000);
    expect(h.keeper.readiness().ready).toBe(true);
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 60_000 });
    let sawNotReady = false;
    for (let t = 0; t < 60_000; t += 1_000) {
      await h.advance(1_000);
      const hz = h.venueHorizonMs(BOB);
      const ready = h.keeper.readiness().ready;
      if (hz !== null && hz < 20_000 - 1_000) expect(ready).toBe(false);
      if (hz !== null && hz > 20_000 + 1_000) expect(ready).toBe(true);
      if (!ready) sawNotReady = true;
    }
    expect(sawNotReady).toBe(true);
    expect(h.keeper.readiness().faults[0]!.account).toBe('arb-desk');
  });
});

describe('arm_when: orders_open', () => {
  it('arms while orders rest, stops re-arming when the book is empty, arms again when orders return', async () => {
    h = await startHarness({ accounts: () => [bob({}, { armWhen: 'orders_open' })], watch: { ordersEveryMs: 5_000 } });
    await h.keeper.start();
    await h.advance(5_000);
    expect(h.venueHorizonMs(BOB)).not.toBeNull();
    // the bot is gone and its orders with it: let the deadline fire (no clear is ever sent)
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 70_000 });
    await h.advance(75_000);
    expect(h.sim.state.openOrders(BOB).length).toBe(0);
    const armsBefore = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel').length;
    await h.advance(60_000);
    expect(h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel').length).toBe(armsBefore);
    expect(h.keeper.status().accounts[0]!.phase).toBe('idle');
    expect(h.keeper.readiness().ready).toBe(true);
    h.sim.state.placeOrder(BOB, { outcome_id: h.sim.catalog.tradableOutcomeIds()[0]!, side: 0, direction: 'buy', price: '0.4', quantity: '10' });
    await h.advance(6_000);
    expect(h.venueHorizonMs(BOB)!).toBeGreaterThan(50_000);
  });
});

describe('notifications', () => {
  it('a fired cancel pushed over the WebSocket is counted and triggers a prompt reconciliation', async () => {
    h = await startHarness({ accounts: () => [bob()], notifications: true, watch: { ordersEveryMs: 600_000, positionsEveryMs: 600_000 } });
    await h.keeper.start();
    await h.advance(2_000);
    h.sim.faults.add({ kind: 'status', status: 503, endpoint: 'POST /v1/trading/orders/schedule-cancel', forMs: 70_000 });
    await h.advance(75_000);
    const text = await h.metricsText();
    expect(text).toMatch(/dms_keeper_notifications_total\{account="arb-desk"\} [1-9]/);
    expect(h.keeper.status().accounts[0]!.open_orders).toBe(0);
    expect(text).toContain('dms_keeper_ws_connected 1');
  });
});

describe('reload', () => {
  it('keeps unchanged accounts untouched, provisions added ones, and applies on_shutdown to removed ones', async () => {
    h = await startHarness({ accounts: () => [bob({}, { onShutdown: 'clear' })] });
    await h.keeper.start();
    await h.advance(20_000);
    const bobArmsBefore = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel' && a.account === BOB).length;
    const r = await h.keeper.reload({
      network: 'testnet',
      accounts: [alice()],
      watch: { ordersEveryMs: 30_000, positionsEveryMs: 60_000, notifications: false },
      maxClockSkewMs: 2_000,
      triggerWarnAt: 8,
    });
    expect(r).toEqual({ added: ['mm-main'], removed: ['arb-desk'], updated: [], unchanged: [] });
    await h.advance(20_000);
    expect(h.sim.state.schedule(BOB).timeMs).toBeUndefined(); // removed with on_shutdown: clear
    expect(h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel' && a.account === BOB).length).toBe(bobArmsBefore + 1);
    expect(h.venueHorizonMs(ALICE)!).toBeGreaterThan(40_000);
  });

  it('a settings-only change applies without re-arming early or re-provisioning', async () => {
    h = await startHarness({ accounts: () => [bob()] });
    await h.keeper.start();
    await h.advance(5_000);
    const approvals = h.sim.state.actionLog().filter((a) => a.type === 'approveAgent').length;
    const next = bob({}, { rearmEveryMs: 10_000 });
    const r = await h.keeper.reload({ network: 'testnet', accounts: [next], watch: { ordersEveryMs: 30_000, positionsEveryMs: 60_000, notifications: false }, maxClockSkewMs: 2_000, triggerWarnAt: 8 });
    expect(r.updated).toEqual(['arb-desk']);
    await h.advance(60_000);
    expect(h.sim.state.actionLog().filter((a) => a.type === 'approveAgent').length).toBe(approvals);
    const arms = h.sim.state.actionLog().filter((a) => a.type === 'scheduleCancel').map((a) => a.atMs);
    const gaps = arms.slice(1).map((t, i) => t - arms[i]!);
    // the slot already planned (15 s) is kept; the cadence is 10 s after it
    expect(gaps.slice(-3)).toEqual([10_000, 10_000, 10_000]);
  });
});
