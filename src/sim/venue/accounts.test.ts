import { describe, expect, it } from 'vitest';
import { decAdd, decCmp, decMul, decSub, decCanonical, isDecimal as isDecimalText } from '../../venue/decimal.js';
import { MASTER, OTHER_MASTER, SUB, harness } from './test-support.js';
import { SeedError } from './accounts.js';

const T0 = '2026-01-01T12:00:00.000Z';

describe('decimal helper', () => {
  it('is exact where floats are not', () => {
    expect(decAdd('0.1', '0.2')).toBe('0.3');
    expect(decMul('120.5', '0.55')).toBe('66.275');
    expect(decMul('3', '0.1')).toBe('0.3');
    expect(decSub('0.55', '0.6')).toBe('-0.05');
    expect(decSub('1.50', '1.5')).toBe('0');
    expect(decCanonical('007.2500')).toBe('7.25');
    expect(decCmp('0.10', '0.1')).toBe(0);
    expect(decCmp('-1', '0')).toBe(-1);
    expect(decMul('123456789012345678.9', '10')).toBe('1234567890123456789');
  });

  it('accepts plain decimals only', () => {
    expect(isDecimalText('1e3')).toBe(false);
    expect(isDecimalText('.5')).toBe(false);
    expect(isDecimalText('+1')).toBe(false);
    expect(isDecimalText(1)).toBe(false);
    expect(isDecimalText('-0.5')).toBe(true);
  });
});

describe('accounts (spec part 2 shapes)', () => {
  it('a main account lists its subaccounts; a subaccount names its parent', () => {
    const h = harness();
    expect(h.venue.getAccount(MASTER.address.toUpperCase().replace('0X', '0x'))).toEqual({
      account_type: 'main',
      subaccounts: [{ address: SUB, username: 'master-sub', account_type: 'subaccount' }],
      address: MASTER.address,
      username: 'master',
    });
    expect(h.venue.getAccount(SUB)).toEqual({
      account_type: 'subaccount',
      address: SUB,
      username: 'master-sub',
      parent: { address: MASTER.address, username: 'master', account_type: 'main' },
    });
    expect(h.venue.getAccount(OTHER_MASTER.address)).toEqual({ account_type: 'main', subaccounts: [], address: OTHER_MASTER.address });
    expect(h.venue.getAccount('0x00000000000000000000000000000000000000aa')).toBeUndefined();
    expect(h.venue.hasAccount(SUB)).toBe(true);
  });

  it('open orders: exact quantities, stable ids, absent time_in_force, null submitted_by', () => {
    const h = harness({ seeds: [] });
    h.venue.addAccount({ address: MASTER.address, username: 'm', venue_name: 'm.v', image_url: 'https://img.example/m.png', tradedVolumeUsd: 0 });
    h.venue.addAccount({ address: SUB, parent: MASTER.address, tradedVolumeUsd: 0 });
    const a = h.venue.placeOrder(SUB, {
      outcome_id: 'out-1',
      side: 1,
      direction: 'sell',
      price: '0.470',
      quantity: '300.0',
      filled: '120.25',
      order_type: 'limit',
      time_in_force: 'alo',
      client_order_id: '0xc1',
      submitted_by: MASTER.address,
    });
    const b = h.venue.placeOrder(SUB, { outcome_id: 'out-2', side: 0, direction: 'buy', price: '0.1', quantity: '5' });
    const masterRef = { address: MASTER.address, username: 'm', image_url: 'https://img.example/m.png', venue_name: 'm.v', account_type: 'main' };
    const subRef = { address: SUB, account_type: 'subaccount' };
    expect(a).toEqual({
      order_id: 'ord_0000000001',
      venue_order_id: '40000000001',
      client_order_id: '0xc1',
      outcome_id: 'out-1',
      side: 1,
      direction: 'sell',
      order_type: 'limit',
      time_in_force: 'alo',
      price: '0.47',
      original_quantity: '300',
      filled_quantity: '120.25',
      remaining_quantity: '179.75',
      status: 'open',
      account: { main_account: masterRef, subaccount: subRef },
      created_at: T0,
      updated_at: T0,
      submitted_by: masterRef,
    });
    expect('time_in_force' in b).toBe(false);
    expect('client_order_id' in b).toBe(false);
    expect(b.submitted_by).toBeNull();
    expect(b.filled_quantity).toBe('0');
    expect(b.remaining_quantity).toBe('5');
    expect(h.venue.openOrders(SUB)).toEqual([a, b]);
    expect(h.venue.openOrders(SUB)).toEqual(h.venue.openOrders(SUB));
    expect(h.venue.openOrders(MASTER.address)).toEqual([]);
  });

  it('positions: a main account sees its own and its subaccounts; a subaccount only its own', () => {
    const h = harness({ seeds: [] });
    h.venue.addAccount({
      address: MASTER.address,
      tradedVolumeUsd: 0,
      positions: [{ outcome_id: 'out-1', side: 1, quantity: '120.5', average_entry_price: '0.6', mark_price: '0.55' }],
    });
    h.venue.addAccount({
      address: SUB,
      parent: MASTER.address,
      tradedVolumeUsd: 0,
      positions: [{ outcome_id: 'out-2', side: 0, quantity: '3', average_entry_price: '0.1', mark_price: '0.2' }],
    });
    const own = {
      outcome_id: 'out-1',
      side: 1,
      quantity: '120.5',
      average_entry_price: '0.6',
      gross_realized_pnl_usdc: '0',
      fees_paid_usdc: '0',
      realized_pnl_usdc: '0',
      mark_price: '0.55',
      value_usdc: '66.275',
      unrealized_pnl_usdc: '-6.025',
      total_pnl_usdc: '-6.025',
      account: { main_account: { address: MASTER.address, account_type: 'main' } },
      opened_at: T0,
      updated_at: T0,
    };
    const subPos = h.venue.positions(SUB);
    expect(subPos).toHaveLength(1);
    expect(subPos[0]).toMatchObject({ outcome_id: 'out-2', value_usdc: '0.6', unrealized_pnl_usdc: '0.3', total_pnl_usdc: '0.3' });
    expect(subPos[0]?.account).toEqual({
      main_account: { address: MASTER.address, account_type: 'main' },
      subaccount: { address: SUB, account_type: 'subaccount' },
    });
    expect(h.venue.positions(MASTER.address)).toEqual([own, subPos[0]]);
  });

  it('resting orders per outcome, in time priority, sized by what remains', () => {
    const h = harness();
    const book = h.venue.restingOrders('out-2');
    expect(book).toEqual([
      { oid: '40000000003', address: MASTER.address, side: 0, direction: 'buy', price: '0.25', size: '10', priority: 3 },
      { oid: '40000000004', address: SUB, side: 0, direction: 'sell', price: '0.3', size: '20', priority: 4 },
    ]);
    h.venue.placeOrder(OTHER_MASTER.address, { outcome_id: 'out-2', side: 1, direction: 'buy', price: '0.5', quantity: '10', filled: '2.5' });
    expect(h.venue.restingOrders('out-2').at(-1)).toEqual({ oid: '40000000007', address: OTHER_MASTER.address, side: 1, direction: 'buy', price: '0.5', size: '7.5', priority: 7 });
    expect(h.venue.restingOrders('nope')).toEqual([]);
  });

  it('refuses bad seeds and orders without leaving a half-added account', () => {
    const h = harness({ seeds: [] });
    expect(() => h.venue.addAccount({ address: SUB, parent: MASTER.address, tradedVolumeUsd: 0 })).toThrow(SeedError);
    expect(() => h.venue.addAccount({ address: '0x12', tradedVolumeUsd: 0 })).toThrow(/40 hex digits/);
    expect(() =>
      h.venue.addAccount({ address: MASTER.address, tradedVolumeUsd: 0, orders: [{ outcome_id: 'zzz', side: 0, direction: 'buy', price: '0.1', quantity: '1' }] }),
    ).toThrow(/unknown outcome zzz/);
    expect(h.venue.hasAccount(MASTER.address)).toBe(false);
    h.venue.addAccount({ address: MASTER.address, tradedVolumeUsd: 0 });
    expect(() => h.venue.addAccount({ address: MASTER.address, tradedVolumeUsd: 0 })).toThrow(/already exists/);
    expect(() => h.venue.placeOrder(MASTER.address, { outcome_id: 'out-1', side: 0, direction: 'buy', price: '0.1', quantity: '1', filled: '1' })).toThrow(/below its quantity/);
    expect(() => h.venue.placeOrder(MASTER.address, { outcome_id: 'out-1', side: 0, direction: 'buy', price: '1e-1', quantity: '1' })).toThrow(/price/);
    expect(() => h.venue.placeOrder(OTHER_MASTER.address, { outcome_id: 'out-1', side: 0, direction: 'buy', price: '0.1', quantity: '1' })).toThrow(/unknown account/);
    expect(() => h.venue.setTradedVolume(MASTER.address, Number.NaN)).toThrow(SeedError);
  });
});
