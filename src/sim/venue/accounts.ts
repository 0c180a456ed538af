import type { Clock } from '../../sched/clock.js';
import type { Account, AccountLocation, AccountRef, OpenOrder, Position } from '../../venue/types.js';
import { normalizeAddress } from '../http-util.js';
import type { Catalog, RestingOrder, SeedOrder, SeedPosition, SimAccountSeed } from '../types.js';
import { addFixed as add, parseFixed as dec, formatFixed as fmt, isDecimal as isDecimalText, isPositiveFixed as isPositive, mulFixed as mul, subFixed as sub, cmpFixed as cmp } from '../../venue/decimal.js';

const ORDER_TYPES = new Set(['limit', 'market', 'stop_limit', 'stop_market']);
const TIME_IN_FORCE = new Set(['gtc', 'ioc', 'alo']);

/** Why an order left the open listing (the venue's order statuses, as far as we model them). */
export type ClosedOrderStatus = 'scheduledCancel';

export interface ClosedOrder {
  /** The order as it was listed, with `status: 'not_open'`. */
  order: OpenOrder;
  status: ClosedOrderStatus;
  closedAtMs: number;
}

interface OrderRecord {
  /** Time priority and listing order: lower was placed earlier. */
  seq: number;
  address: string;
  order_id: string;
  venue_order_id: string;
  client_order_id?: string;
  outcome_id: string;
  side: 0 | 1;
  direction: 'buy' | 'sell';
  order_type: NonNullable<OpenOrder['order_type']>;
  time_in_force?: NonNullable<OpenOrder['time_in_force']>;
  price: string;
  original: string;
  filled: string;
  submitted_by?: string;
  createdMs: number;
  updatedMs: number;
}

interface PositionRecord extends SeedPosition {
  address: string;
  openedMs: number;
}

interface AccountRecord {
  address: string;
  parent?: string;
  username?: string;
  venue_name?: string;
  image_url?: string;
  tradedVolumeUsd: number;
  subaccounts: string[];
  /** venue_order_id -> order, in placement order. */
  orders: Map<string, OrderRecord>;
  positions: PositionRecord[];
  closed: ClosedOrder[];
}

/** Thrown for bad seeds or orders: these come from fixtures, tests or the admin route. */
export class SeedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeedError';
  }
}

/**
 * Accounts, their open orders and positions, in the spec's shapes (part 2). Decimals stay exact
 * strings end to end; derived figures (filled, value, PnL) are computed with BigInt fixed point.
 */
export class AccountBook {
  private readonly accounts = new Map<string, AccountRecord>();
  /** outcome_id -> venue_order_id -> order: the book reads resting orders per outcome. */
  private readonly byOutcome = new Map<string, Map<string, OrderRecord>>();
  private seq = 0;

  constructor(
    private readonly clock: Clock,
    private readonly catalog: Catalog,
  ) {}

  add(seed: SimAccountSeed): void {
    const address = mustAddress(seed.address, 'account address');
    if (this.accounts.has(address)) throw new SeedError(`account ${address} already exists`);
    let parent: string | undefined;
    if (seed.parent !== undefined) {
      parent = mustAddress(seed.parent, 'parent address');
      const p = this.accounts.get(parent);
      if (!p) throw new SeedError(`parent ${parent} of ${address} is not seeded (seed the main account first)`);
      if (p.parent !== undefined) throw new SeedError(`parent ${parent} of ${address} is itself a subaccount`);
    }
    checkVolume(seed.tradedVolumeUsd);
    const rec: AccountRecord = {
      address,
      tradedVolumeUsd: seed.tradedVolumeUsd,
      subaccounts: [],
      orders: new Map(),
      positions: [],
      closed: [],
    };
    if (parent !== undefined) rec.parent = parent;
    if (seed.username !== undefined) rec.username = seed.username;
    if (seed.venue_name !== undefined) rec.venue_name = seed.venue_name;
    if (seed.image_url !== undefined) rec.image_url = seed.image_url;
    // Validate everything before the account becomes visible, so a bad seed leaves no trace.
    const positions = (seed.positions ?? []).map((p) => this.checkPosition(address, p));
    for (const o of seed.orders ?? []) this.checkOrder(o);
    this.accounts.set(address, rec);
    if (parent !== undefined) this.accounts.get(parent)?.subaccounts.push(address);
    rec.positions.push(...positions);
    for (const o of seed.orders ?? []) this.place(address, o);
  }

  has(address: string): boolean {
    return this.accounts.has(address.toLowerCase());
  }

  isMain(address: string): boolean {
    const a = this.accounts.get(address.toLowerCase());
    return a !== undefined && a.parent === undefined;
  }

  /** The main account of a subaccount; undefined for a main or unknown address. */
  parentOf(address: string): string | undefined {
    return this.accounts.get(address.toLowerCase())?.parent;
  }

  subaccountCount(address: string): number {
    return this.accounts.get(address.toLowerCase())?.subaccounts.length ?? 0;
  }

  tradedVolume(address: string): number {
    return this.accounts.get(address.toLowerCase())?.tradedVolumeUsd ?? 0;
  }

  setTradedVolume(address: string, usd: number): void {
    checkVolume(usd);
    this.must(address).tradedVolumeUsd = usd;
  }

  account(address: string): Account | undefined {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) return undefined;
    const out: Account = { account_type: a.parent === undefined ? 'main' : 'subaccount' };
    if (a.parent === undefined) out.subaccounts = a.subaccounts.map((s) => this.ref(s));
    out.address = a.address;
    if (a.username !== undefined) out.username = a.username;
    if (a.image_url !== undefined) out.image_url = a.image_url;
    if (a.venue_name !== undefined) out.venue_name = a.venue_name;
    if (a.parent !== undefined) out.parent = this.ref(a.parent);
    return out;
  }

  openOrders(address: string): OpenOrder[] {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) return [];
    return [...a.orders.values()].map((o) => this.orderView(o, 'open'));
  }

  positions(address: string): Position[] {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) return [];
    const owners = [a, ...a.subaccounts.map((s) => this.must(s))];
    return owners.flatMap((o) => o.positions.map((p) => this.positionView(p)));
  }

  restingOrders(outcomeId: string): RestingOrder[] {
    const orders = [...(this.byOutcome.get(outcomeId)?.values() ?? [])];
    orders.sort((x, y) => x.seq - y.seq);
    return orders.map((o) => ({
      oid: o.venue_order_id,
      address: o.address,
      side: o.side,
      direction: o.direction,
      price: o.price,
      size: fmt(sub(dec(o.original), dec(o.filled))),
      priority: o.seq,
    }));
  }

  placeOrder(address: string, seed: SeedOrder): OpenOrder {
    const a = this.must(address);
    this.checkOrder(seed);
    return this.orderView(this.place(a.address, seed), 'open');
  }

  /** Removes every open order of exactly `address`; returns how many were cancelled. */
  cancelAll(address: string, status: ClosedOrderStatus, nowMs: number): number {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) return 0;
    const orders = [...a.orders.values()];
    for (const o of orders) {
      o.updatedMs = nowMs;
      a.closed.push({ order: this.orderView(o, 'not_open'), status, closedAtMs: nowMs });
      this.byOutcome.get(o.outcome_id)?.delete(o.venue_order_id);
    }
    a.orders.clear();
    return orders.length;
  }

  closedOrders(address: string): readonly ClosedOrder[] {
    return this.accounts.get(address.toLowerCase())?.closed ?? [];
  }

  // ---- spec shapes ----

  ref(address: string): AccountRef {
    const a = this.accounts.get(address.toLowerCase());
    // A wallet that is no account (an agent) still gets a ref: the spec always sets account_type.
    if (!a) return { address: address.toLowerCase(), account_type: 'main' };
    const r: AccountRef = { address: a.address };
    if (a.username !== undefined) r.username = a.username;
    if (a.image_url !== undefined) r.image_url = a.image_url;
    if (a.venue_name !== undefined) r.venue_name = a.venue_name;
    r.account_type = a.parent === undefined ? 'main' : 'subaccount';
    return r;
  }

  location(address: string): AccountLocation {
    const a = this.must(address);
    if (a.parent === undefined) return { main_account: this.ref(a.address) };
    return { main_account: this.ref(a.parent), subaccount: this.ref(a.address) };
  }

  private orderView(o: OrderRecord, status: 'open' | 'not_open'): OpenOrder {
    const out: OpenOrder = {
      order_id: o.order_id,
      venue_order_id: o.venue_order_id,
    };
    if (o.client_order_id !== undefined) out.client_order_id = o.client_order_id;
    out.outcome_id = o.outcome_id;
    out.side = o.side;
    out.direction = o.direction;
    out.order_type = o.order_type;
    // Absent, not defaulted to gtc, when none was reported (spec part 2).
    if (o.time_in_force !== undefined) out.time_in_force = o.time_in_force;
    out.price = o.price;
    out.original_quantity = o.original;
    out.filled_quantity = o.filled;
    out.remaining_quantity = fmt(sub(dec(o.original), dec(o.filled)));
    out.status = status;
    out.account = this.location(o.address);
    out.created_at = iso(o.createdMs);
    out.updated_at = iso(o.updatedMs);
    out.submitted_by = o.submitted_by === undefined ? null : this.ref(o.submitted_by);
    return out;
  }

  private positionView(p: PositionRecord): Position {
    const q = dec(p.quantity);
    const mark = dec(p.mark_price);
    const entry = dec(p.average_entry_price);
    const unrealized = mul(q, sub(mark, entry));
    const realized = dec('0');
    return {
      outcome_id: p.outcome_id,
      side: p.side,
      quantity: p.quantity,
      average_entry_price: p.average_entry_price,
      gross_realized_pnl_usdc: '0',
      fees_paid_usdc: '0',
      realized_pnl_usdc: fmt(realized),
      mark_price: p.mark_price,
      value_usdc: fmt(mul(q, mark)),
      unrealized_pnl_usdc: fmt(unrealized),
      total_pnl_usdc: fmt(add(realized, unrealized)),
      account: this.location(p.address),
      opened_at: iso(p.openedMs),
      updated_at: iso(p.openedMs),
    };
  }

  // ---- internals ----

  private place(address: string, seed: SeedOrder): OrderRecord {
    const seq = ++this.seq;
    const now = this.clock.nowMs();
    const o: OrderRecord = {
      seq,
      address,
      // Stable ids, unique per simulator instance: the service's id and the venue's numeric oid.
      order_id: `ord_${seq.toString().padStart(10, '0')}`,
      venue_order_id: String(40_000_000_000 + seq),
      outcome_id: seed.outcome_id,
      side: seed.side,
      direction: seed.direction,
      order_type: seed.order_type ?? 'limit',
      price: canonical(seed.price),
      original: canonical(seed.quantity),
      filled: canonical(seed.filled ?? '0'),
      createdMs: now,
      updatedMs: now,
    };
    if (seed.client_order_id !== undefined) o.client_order_id = seed.client_order_id;
    if (seed.time_in_force !== undefined) o.time_in_force = seed.time_in_force;
    if (seed.submitted_by !== undefined) o.submitted_by = mustAddress(seed.submitted_by, 'submitted_by');
    this.must(address).orders.set(o.venue_order_id, o);
    let book = this.byOutcome.get(o.outcome_id);
    if (!book) {
      book = new Map();
      this.byOutcome.set(o.outcome_id, book);
    }
    book.set(o.venue_order_id, o);
    return o;
  }

  private checkOrder(o: SeedOrder): void {
    if (this.catalog.outcome(o.outcome_id) === undefined) throw new SeedError(`unknown outcome ${o.outcome_id}`);
    if (o.side !== 0 && o.side !== 1) throw new SeedError(`order side must be 0 or 1`);
    if (o.direction !== 'buy' && o.direction !== 'sell') throw new SeedError(`order direction must be buy or sell`);
    if (o.order_type !== undefined && !ORDER_TYPES.has(o.order_type)) throw new SeedError(`bad order_type ${o.order_type}`);
    if (o.time_in_force !== undefined && !TIME_IN_FORCE.has(o.time_in_force)) throw new SeedError(`bad time_in_force ${o.time_in_force}`);
    if (!isDecimalText(o.price) || !isPositive(dec(o.price))) throw new SeedError(`order price must be a positive decimal`);
    if (!isDecimalText(o.quantity) || !isPositive(dec(o.quantity))) throw new SeedError(`order quantity must be a positive decimal`);
    const filled = o.filled ?? '0';
    if (!isDecimalText(filled) || dec(filled).coef < 0n) throw new SeedError(`order filled must be a non-negative decimal`);
    // A fully filled order is terminal: it cannot be listed as open.
    if (cmp(dec(filled), dec(o.quantity)) >= 0) throw new SeedError(`order filled must be below its quantity`);
    if (o.submitted_by !== undefined) mustAddress(o.submitted_by, 'submitted_by');
  }

  private checkPosition(address: string, p: SeedPosition): PositionRecord {
    if (this.catalog.outcome(p.outcome_id) === undefined) throw new SeedError(`unknown outcome ${p.outcome_id}`);
    if (p.side !== 0 && p.side !== 1) throw new SeedError(`position side must be 0 or 1`);
    for (const [k, v] of [
      ['quantity', p.quantity],
      ['average_entry_price', p.average_entry_price],
      ['mark_price', p.mark_price],
    ] as const) {
      if (!isDecimalText(v)) throw new SeedError(`position ${k} must be a decimal`);
    }
    if (!isPositive(dec(p.quantity))) throw new SeedError(`position quantity must be positive`);
    return {
      outcome_id: p.outcome_id,
      side: p.side,
      quantity: canonical(p.quantity),
      average_entry_price: canonical(p.average_entry_price),
      mark_price: canonical(p.mark_price),
      address,
      openedMs: this.clock.nowMs(),
    };
  }

  private must(address: string): AccountRecord {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) throw new SeedError(`unknown account ${address}`);
    return a;
  }
}

function canonical(text: string): string {
  return fmt(dec(text));
}

function mustAddress(text: string, what: string): string {
  const a = typeof text === 'string' ? normalizeAddress(text) : undefined;
  if (a === undefined) throw new SeedError(`${what} must be 0x followed by 40 hex digits`);
  return a;
}

function checkVolume(usd: number): void {
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) throw new SeedError('tradedVolumeUsd must be a finite number >= 0');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
