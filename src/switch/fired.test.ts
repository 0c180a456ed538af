/**
 * What a fired cancel cancelled (fired.ts), and AccountReports.lapsed using it: the last read before
 * the deadline against the read after it, by order id. Orders that vanished earlier (an outcome that
 * settled) are not the cancel's; a poll that landed after the deadline is not the "before"; orders
 * placed since are not subtracted; a primary and its dual are one order.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../obs/metrics.js';
import { FakeClock } from '../time/fake-clock.js';
import { VenueClock } from '../time/venue-clock.js';
import type { LastCancelFired, TriggerCounter } from '../state/triggers.js';
import type { OpenOrder } from '../venue/types.js';
import { ActivityReporter } from '../account/activity.js';
import { cancelledOrders, lastReadBefore, ordersSnapshot } from './fired.js';
import type { AccountState } from '../account/keeper-types.js';
import { bareAccount } from '../account/test-support.js';
import { AccountReports } from '../account/reports.js';
import type { AccountWatcher } from '../account/watcher.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';

const order = (id: string): OpenOrder => ({ venue_order_id: id, status: 'open' });
const T = 1_800_000_000_000;

describe('fired.ts', () => {
  it('takes the last read that completed before the deadline', () => {
    const a = ordersSnapshot([order('1'), order('2')], 2, T + 1_000);
    const b = ordersSnapshot([], 0, T + 9_000);
    expect(lastReadBefore(T + 8_000, b, a)).toBe(a);
    expect(lastReadBefore(T + 10_000, b, a)).toBe(b);
    expect(lastReadBefore(T, b, a)).toBeUndefined();
  });

  it('counts by id: orders placed since are not subtracted; without ids, by count', () => {
    const before = ordersSnapshot([order('1'), order('2')], 2, T);
    expect(cancelledOrders(before, [order('3')])).toBe(2);
    expect(cancelledOrders(before, [order('2'), order('3')])).toBe(1);
    expect(cancelledOrders(before, undefined)).toBe(2);
    expect(cancelledOrders(undefined, [])).toBeNull();
    const noIds = ordersSnapshot([{ status: 'open' }, order('2')], 2, T);
    expect(noIds.ids).toBeNull();
    expect(cancelledOrders(noIds, [order('9')])).toBe(1);
  });
});

describe('AccountReports.lapsed: what the fired cancel cancelled', () => {
  it('an outcome settled before the deadline and a poll landed after it: the cancel took only what was open just before it', async () => {
    const clock = new FakeClock(T);
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _e, cb) {
          for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
          cb();
        },
      }),
    );
    const fired: LastCancelFired[] = [];
    const triggers = { get: () => 0, record: () => Promise.resolve(1), recordFired: (_a: string, f: LastCancelFired) => Promise.resolve(void fired.push(f)) } as unknown as TriggerCounter;
    const reports = new AccountReports({
      venue: { switchFacts: HYPERLIQUID_SWITCH_FACTS },
      clock,
      venueClock: new VenueClock(clock),
      metrics: createMetrics({ version: 'test', defaultMetrics: false }),
      logger,
      triggers,
      activity: new ActivityReporter(),
      triggerWarnAt: () => 8,
      accounts: () => [],
    });
    const after: OpenOrder[] = [order('40')]; // a new order the bot placed after the cancel
    const m: AccountState = bareAccount({ name: 'acct' }, logger, { watcher: { reconcile: () => Promise.resolve({ orders: after }) } as unknown as AccountWatcher });
    const read = (ids: string[]) => reports.watch(m, { type: 'orders', count: ids.length, orders: ids.map(order), atMs: clock.nowMs(), source: 'service' });

    await clock.advance(1_000);
    read(['10', '11', '12']); // two of them rest on a 15-minute outcome
    await clock.advance(4_000);
    read(['12']); // it settled: two orders gone, no cancel fired
    const deadline = T + 8_000;
    await clock.advance(4_000);
    read([]); // the cancel fired at the deadline; this poll landed before the lapse was handled
    await reports.lapsed(m, deadline);

    expect(fired).toEqual([expect.objectContaining({ orders_cancelled: 1 })]);
    expect(lines.find((l) => l.event === 'cancel_fired')).toMatchObject({ orders_before: 1, orders_cancelled: 1, orders_after: 1 });
  });
});
