import { describe, expect, it } from 'vitest';
import { VENUE_FACTS } from '../../venue/facts.js';
import { FakeClock } from '../../time/fake-clock.js';
import { offsetClock } from '../../time/clock.js';
import { VenueState } from './state.js';
import { defaultSeeds, stubCatalog, harness, MASTER, OTHER_MASTER, STRANGER, SUB, AGENT_A, approveAgentBody, scheduleCancelBody } from './test-support.js';

const OK = { kind: 'answer', body: { status: 'ok', response: { type: 'default' } } };
const err = (text: string) => ({ kind: 'answer', body: { status: 'err', response: text } });

describe('scheduleCancel: arming and the 5 s minimum lead', () => {
  it('accepts time = now + 5000 exactly and refuses now + 4999', async () => {
    const h = harness();
    const now = h.clock.nowMs();
    const early = await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: now + 4_999, nonce: h.nonce() }), 'rest');
    expect(early).toEqual(err('Scheduled cancel time too early, must be at least 5 seconds from now.'));
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 0 });
    const ok = await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: now + 5_000, nonce: h.nonce() }), 'rest');
    expect(ok).toEqual(OK);
    expect(h.venue.schedule(MASTER.address)).toEqual({ timeMs: now + 5_000, triggersToday: 0 });
  });

  it('hashes a JSON-number time >= 2^32 as uint64 (the master is recognised)', async () => {
    const h = harness();
    const time = h.clock.nowMs() + 60_000;
    expect(time).toBeGreaterThan(2 ** 32);
    const body = (await scheduleCancelBody(MASTER, { time, nonce: h.nonce() })) as { action: { time: unknown } };
    expect(typeof body.action.time).toBe('number');
    expect(await h.venue.handleAction(body, 'exchange')).toEqual(OK);
    expect(h.venue.actionLog().at(-1)).toEqual({ atMs: h.clock.nowMs(), via: 'exchange', type: 'scheduleCancel', account: MASTER.address, signer: MASTER.address, result: 'ok' });
  });
});

describe('scheduleCancel: the deadline', () => {
  it('cancels every open order of the account at the deadline, not one ms before, and notifies', async () => {
    const h = harness();
    const t0 = h.clock.nowMs();
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t0 + 10_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
    await h.clock.advance(9_999);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(3);
    expect(h.notes).toEqual([]);
    expect(h.venue.schedule(MASTER.address)).toEqual({ timeMs: t0 + 10_000, triggersToday: 0 });

    await h.clock.advance(1);
    expect(h.venue.openOrders(MASTER.address)).toEqual([]);
    expect(h.venue.restingOrders('out-1')).toEqual([]);
    const closed = h.venue.closedOrders(MASTER.address);
    expect(closed.map((c) => [c.status, c.closedAtMs, c.order.status])).toEqual([
      ['scheduledCancel', t0 + 10_000, 'not_open'],
      ['scheduledCancel', t0 + 10_000, 'not_open'],
      ['scheduledCancel', t0 + 10_000, 'not_open'],
    ]);
    expect(h.notes).toEqual([{ user: MASTER.address, text: 'Scheduled cancel triggered: 3 open orders cancelled.' }]);
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 1 });
    // Only that account: the subaccount and the other master keep their orders.
    expect(h.venue.openOrders(SUB)).toHaveLength(2);
    expect(h.venue.openOrders(OTHER_MASTER.address)).toHaveLength(1);
  });

  it('re-arming moves the deadline and is not a trigger', async () => {
    const h = harness();
    const t0 = h.clock.nowMs();
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t0 + 10_000, nonce: h.nonce() }), 'rest');
    await h.clock.advance(5_000);
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t0 + 20_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
    await h.clock.advance(5_000); // the old deadline passes
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(3);
    expect(h.venue.schedule(MASTER.address)).toEqual({ timeMs: t0 + 20_000, triggersToday: 0 });
    expect(h.notes).toEqual([]);
    await h.clock.advance(9_999);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(3);
    await h.clock.advance(1);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(0);
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 1 });
    expect(h.notes).toHaveLength(1);
  });

  it('moving the deadline earlier fires at the earlier time', async () => {
    const h = harness();
    const t0 = h.clock.nowMs();
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t0 + 60_000, nonce: h.nonce() }), 'rest');
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t0 + 6_000, nonce: h.nonce() }), 'rest');
    await h.clock.advance(6_000);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(0);
    await h.clock.advance(60_000);
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 1 });
  });

  it('a clear (time absent) removes the schedule: nothing fires', async () => {
    const h = harness();
    const t0 = h.clock.nowMs();
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t0 + 10_000, nonce: h.nonce() }), 'rest');
    const clear = await scheduleCancelBody(MASTER, { nonce: h.nonce() });
    expect((clear as { action: object }).action).toEqual({ type: 'scheduleCancel' });
    expect(await h.venue.handleAction(clear, 'rest')).toEqual(OK);
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 0 });
    await h.clock.advance(60_000);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(3);
    expect(h.notes).toEqual([]);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('orders placed after arming are cancelled too; a trigger with no orders still counts', async () => {
    const h = harness();
    const t0 = h.clock.nowMs();
    await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: t0 + 5_000, nonce: h.nonce() }), 'rest');
    h.venue.placeOrder(OTHER_MASTER.address, { outcome_id: 'out-1', side: 0, direction: 'buy', price: '0.2', quantity: '7' });
    await h.clock.advance(5_000);
    expect(h.notes).toEqual([{ user: OTHER_MASTER.address, text: 'Scheduled cancel triggered: 2 open orders cancelled.' }]);
    await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest');
    await h.clock.advance(5_000);
    expect(h.notes.at(-1)).toEqual({ user: OTHER_MASTER.address, text: 'Scheduled cancel triggered: 0 open orders cancelled.' });
    expect(h.venue.schedule(OTHER_MASTER.address)).toEqual({ triggersToday: 2 });
  });

  it('stop() cancels the timers', async () => {
    const h = harness();
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest');
    expect(h.clock.pendingTimers()).toBe(1);
    h.venue.stop();
    expect(h.clock.pendingTimers()).toBe(0);
    await h.clock.advance(10_000);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(3);
  });

  it('a throwing notification sink does not break the cancel', async () => {
    const h = harness({
      onNotification: () => {
        throw new Error('socket closed');
      },
    });
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest');
    await h.clock.advance(5_000);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(0);
    expect(h.venue.schedule(MASTER.address).triggersToday).toBe(1);
  });

  it('never fires early when the venue clock is set back after arming (the timer is only a wake-up)', async () => {
    const base = new FakeClock();
    let offset = 0;
    const venue = new VenueState({ clock: offsetClock(base, () => offset), network: 'testnet', catalog: stubCatalog() });
    for (const s of defaultSeeds()) venue.addAccount(s);
    const t0 = base.nowMs();
    expect(await venue.handleAction(await scheduleCancelBody(MASTER, { time: t0 + 10_000, nonce: t0 }), 'rest')).toEqual(OK);
    offset = -3_000; // the venue's clock steps back 3 s: its deadline is now 13 s away on our clock
    await base.advance(10_000);
    expect(venue.openOrders(MASTER.address)).toHaveLength(3);
    await base.advance(2_999);
    expect(venue.openOrders(MASTER.address)).toHaveLength(3);
    await base.advance(1);
    expect(venue.openOrders(MASTER.address)).toHaveLength(0);
    expect(venue.schedule(MASTER.address)).toEqual({ triggersToday: 1 });
  });
});

describe('scheduleCancel: at most 10 triggers per UTC day', () => {
  it('refuses the 11th arm of the day, still allows a clear, and resets at 00:00 UTC', async () => {
    const start = Date.UTC(2026, 2, 10, 20, 0, 0);
    const h = harness({ startMs: start });
    const addr = OTHER_MASTER.address;
    for (let i = 1; i <= VENUE_FACTS.maxTriggersPerUtcDay; i++) {
      expect(await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
      await h.clock.advance(5_000);
      expect(h.venue.schedule(addr).triggersToday).toBe(i);
    }
    expect(h.notes).toHaveLength(10);
    const refused = await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest');
    expect(refused).toEqual(err('Too many scheduled cancel triggers today'));
    expect(await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { nonce: h.nonce() }), 'rest')).toEqual(OK);

    // One ms before midnight UTC: still capped.
    const midnight = Date.UTC(2026, 2, 11, 0, 0, 0);
    await h.clock.advance(midnight - 1 - h.clock.nowMs());
    expect(h.venue.schedule(addr).triggersToday).toBe(10);
    expect(await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest')).toEqual(
      err('Too many scheduled cancel triggers today'),
    );
    await h.clock.advance(1);
    expect(h.venue.schedule(addr).triggersToday).toBe(0);
    expect(await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
    await h.clock.advance(5_000);
    expect(h.venue.schedule(addr).triggersToday).toBe(1);
  });

  it('counts triggers per account', async () => {
    const h = harness();
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce() }), 'rest');
    await h.clock.advance(5_000);
    expect(h.venue.schedule(MASTER.address).triggersToday).toBe(1);
    expect(h.venue.schedule(OTHER_MASTER.address).triggersToday).toBe(0);
    expect(h.venue.schedule(SUB).triggersToday).toBe(0);
  });
});

describe('scheduleCancel: the volume gate', () => {
  it('refuses arming and clearing below $1,000,000 traded, and accepts at the gate', async () => {
    const h = harness();
    h.venue.setTradedVolume(MASTER.address, 999_999.99);
    const arm = await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() }), 'rest');
    expect(arm).toEqual(err('Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $999999.99.'));
    const clear = await h.venue.handleAction(await scheduleCancelBody(MASTER, { nonce: h.nonce() }), 'rest');
    expect(clear).toEqual(err('Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $999999.99.'));
    h.venue.setTradedVolume(MASTER.address, 250_000);
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { nonce: h.nonce() }), 'rest')).toEqual(
      err('Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $250000.'),
    );
    h.venue.setTradedVolume(MASTER.address, 1_000_000);
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
  });

  it('gates a subaccount on its own volume', async () => {
    const h = harness();
    h.venue.setTradedVolume(SUB, 10);
    const r = await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce(), vaultAddress: SUB }), 'rest');
    expect(r).toEqual(err('Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $10.'));
  });
});

describe('scheduleCancel: who may sign', () => {
  it('refuses a signer that is neither a master nor an approved agent', async () => {
    const h = harness();
    const r = await h.venue.handleAction(await scheduleCancelBody(STRANGER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() }), 'rest');
    expect(r).toEqual(err(`User or API Wallet ${STRANGER.address} does not exist.`));
    expect(h.venue.actionLog().at(-1)?.signer).toBe(STRANGER.address);
  });

  it('refuses a body signed for the other network (the signer recovers to someone else)', async () => {
    const h = harness();
    const body = await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce(), network: 'mainnet' });
    const r = (await h.venue.handleAction(body, 'rest')) as { kind: string; body: { status: string; response: string } };
    expect(r.body.status).toBe('err');
    expect(r.body.response).toMatch(/^User or API Wallet 0x[0-9a-f]{40} does not exist\.$/);
    expect(r.body.response).not.toContain(MASTER.address);
  });

  it('refuses a tampered action (time changed after signing)', async () => {
    const h = harness();
    const body = (await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() })) as { action: { time: number } };
    body.action.time += 1;
    const r = (await h.venue.handleAction(body, 'rest')) as { body: { response: string } };
    expect(r.body.response).toMatch(/^User or API Wallet 0x[0-9a-f]{40} does not exist\.$/);
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 0 });
  });

  it('arms a subaccount through vaultAddress with the master key or the master agent', async () => {
    const h = harness();
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'dms-keeper', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    const t = h.clock.nowMs() + 8_000;
    expect(await h.venue.handleAction(await scheduleCancelBody(AGENT_A, { time: t, nonce: h.nonce(), vaultAddress: SUB }), 'rest')).toEqual(OK);
    expect(h.venue.schedule(SUB)).toEqual({ timeMs: t, triggersToday: 0 });
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 0 });
    expect(h.venue.actionLog().at(-1)).toMatchObject({ account: SUB, signer: AGENT_A.address, result: 'ok' });
    await h.clock.advance(8_000);
    expect(h.venue.openOrders(SUB)).toEqual([]);
    expect(h.venue.openOrders(MASTER.address)).toHaveLength(3);
    expect(h.notes).toEqual([{ user: SUB, text: 'Scheduled cancel triggered: 2 open orders cancelled.' }]);
    // The master key itself may act for its subaccount too.
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 5_000, nonce: h.nonce(), vaultAddress: SUB }), 'rest')).toEqual(OK);
  });

  it("refuses another master's key or agent on a subaccount, and a vault that is not a subaccount", async () => {
    const h = harness();
    const t = h.clock.nowMs() + 8_000;
    expect(await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: t, nonce: h.nonce(), vaultAddress: SUB }), 'rest')).toEqual(
      err(`User or API Wallet ${OTHER_MASTER.address} does not exist.`),
    );
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t, nonce: h.nonce(), vaultAddress: OTHER_MASTER.address }), 'rest')).toEqual(
      err(`Vault not registered: ${OTHER_MASTER.address}`),
    );
    const unknown = '0x00000000000000000000000000000000000000ff';
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: t, nonce: h.nonce(), vaultAddress: unknown }), 'rest')).toEqual(
      err(`Vault not registered: ${unknown}`),
    );
    expect(h.venue.schedule(SUB)).toEqual({ triggersToday: 0 });
  });
});

describe('scheduleCancel: expiresAfter', () => {
  it('refuses an action whose expiresAfter has passed and accepts one still in time', async () => {
    const h = harness();
    const now = h.clock.nowMs();
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: now + 10_000, nonce: h.nonce(), expiresAfter: now - 1 }), 'rest')).toEqual(
      err('Action already expired'),
    );
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: now + 10_000, nonce: h.nonce(), expiresAfter: now }), 'rest')).toEqual(OK);
  });
});
