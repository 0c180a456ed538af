import type { Clock } from '../../time/clock.js';
import type { Account, AccountLocation, AccountRef, OpenOrder, Position } from '../../venue/types.js';
import { normalizeAddress } from '../http-util.js';
import type {
  Catalog,
  RestingOrder,
  SeedOrder,
  SeedPerpPosition,
  SeedPosition,
  SeedSpotBalance,
  SeedVenueOrder,
  SimAccountSeed,
  VenueOpenOrder,
  VenuePerpPosition,
  VenueSpotBalance,
} from '../types.js';
import { OUTCOME_ASSET_BASE, outcomeCoin, outcomeIndexOf, outcomeToken, outcomeTokenIndex } from '../catalog/asset-id.js';
import { addFixed as add, parseFixed as dec, formatFixed as fmt, isDecimal as isDecimalText, isPositiveFixed as isPositive, mulFixed as mul, subFixed as sub, cmpFixed as cmp } from '../../venue/decimal.js';

const ORDER_TYPES = new Set(['limit', 'market', 'stop_limit', 'stop_market']);
const TIME_IN_FORCE = new Set(['gtc', 'ioc', 'alo']);

/**
 * Why an order left the open listing (the venue's order statuses, as far as we model them):
 * `scheduledCancel` the dead man's switch fired; `delistedCanceled` its outcome settled
 * (SETTLED_ORDER_STATUS); `canceled` a `cancel` action took it.
 */
export type ClosedOrderStatus = 'scheduledCancel' | 'delistedCanceled' | 'canceled';

/**
 * The status an order resting on an outcome gets when the outcome settles **(assumed)**. The
 * service lists open orders only (spec 4.2, "no history"), so its listings just stop showing them;
 * the venue's historical listing (`historicalOrders`, `orderStatus`) has no status for it in its
 * published vocabulary, whose nearest is `delistedCanceled` ("canceled due to asset delisting": a
 * settled outcome trades no more). Never `scheduledCancel`: no scheduled cancel fired.
 */
export const SETTLED_ORDER_STATUS: ClosedOrderStatus = 'delistedCanceled';

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

/** An order only the venue shows (SeedVenueOrder), in the venue's vocabulary. */
interface VenueOrderRecord {
  seq: number;
  oid: number;
  coin: string;
  /** A builder-deployed perp dex; absent: the default listing. */
  dex?: string;
  side: 'B' | 'A';
  limitPx: string;
  sz: string;
  origSz: string;
  orderType: string;
  tif: string | null;
  reduceOnly: boolean;
  triggerPx?: string;
  triggerCondition?: string;
  isPositionTpsl: boolean;
  cloid?: string;
  createdMs: number;
}

export interface ClosedVenueOrder {
  order: VenueOpenOrder;
  status: ClosedOrderStatus;
  closedAtMs: number;
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
  /** Orders only the venue shows, by oid, in placement order. */
  venueOrders: Map<number, VenueOrderRecord>;
  closedVenue: ClosedVenueOrder[];
  perpPositions: VenuePerpPosition[];
  perpUsd: string;
  spotBalances: VenueSpotBalance[];
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
      venueOrders: new Map(),
      closedVenue: [],
      perpPositions: (seed.perpPositions ?? []).map((p) => checkPerpPosition(p)),
      perpUsd: canonical(checkDecimal(seed.perpUsd ?? '0', 'perpUsd')),
      spotBalances: (seed.spotBalances ?? []).map((b) => checkSpotBalance(b)),
    };
    if (parent !== undefined) rec.parent = parent;
    if (seed.username !== undefined) rec.username = seed.username;
    if (seed.venue_name !== undefined) rec.venue_name = seed.venue_name;
    if (seed.image_url !== undefined) rec.image_url = seed.image_url;
    // Validate everything before the account becomes visible, so a bad seed leaves no trace.
    const positions = (seed.positions ?? []).map((p) => this.checkPosition(address, p));
    for (const o of seed.orders ?? []) this.checkOrder(o);
    for (const o of seed.venueOrders ?? []) checkVenueOrder(o);
    this.accounts.set(address, rec);
    if (parent !== undefined) this.accounts.get(parent)?.subaccounts.push(address);
    rec.positions.push(...positions);
    for (const o of seed.orders ?? []) this.place(address, o);
    for (const o of seed.venueOrders ?? []) this.placeVenue(rec, o);
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

  /**
   * Removes every open order of exactly `address`, the service-listed ones and those only the venue
   * shows (perps, spot, builders' dexes), as the venue's cancel-all does; returns how many.
   */
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
    const venueOrders = [...a.venueOrders.values()];
    for (const o of venueOrders) a.closedVenue.push({ order: this.venueOrderView(o), status, closedAtMs: nowMs });
    a.venueOrders.clear();
    return orders.length + venueOrders.length;
  }

  /**
   * Cancels one service-listed (outcome) order of exactly `address` by its venue order id; false
   * when it has no such open order.
   */
  cancelOrder(address: string, venueOrderId: string, status: ClosedOrderStatus, nowMs: number): boolean {
    const a = this.accounts.get(address.toLowerCase());
    const o = a?.orders.get(venueOrderId);
    if (!a || !o) return false;
    o.updatedMs = nowMs;
    a.closed.push({ order: this.orderView(o, 'not_open'), status, closedAtMs: nowMs });
    this.byOutcome.get(o.outcome_id)?.delete(o.venue_order_id);
    a.orders.delete(venueOrderId);
    return true;
  }

  /**
   * An outcome settled: its resting orders leave every listing (the service's, `/info`'s, the
   * book), each kept among the closed ones with `status`; no scheduled cancel fired, so nothing
   * here touches a schedule or a trigger count. Its positions are paid out as the venue converts
   * the tokens: side 0 gets `settleFraction` USDC per token, side 1 `1 - settleFraction`, credited
   * to the holder's spot USDC balance (made if absent); the positions leave the listings.
   */
  settleOutcome(outcomeId: string, settleFraction: string, status: ClosedOrderStatus, nowMs: number): { orders: number; positions: number } {
    if (!isDecimalText(settleFraction)) throw new SeedError('settle fraction must be a decimal');
    let orders = 0;
    for (const o of [...(this.byOutcome.get(outcomeId)?.values() ?? [])]) {
      const a = this.accounts.get(o.address);
      if (!a) continue;
      o.updatedMs = nowMs;
      a.closed.push({ order: this.orderView(o, 'not_open'), status, closedAtMs: nowMs });
      a.orders.delete(o.venue_order_id);
      orders++;
    }
    this.byOutcome.delete(outcomeId);
    let positions = 0;
    for (const a of this.accounts.values()) {
      const settled = a.positions.filter((p) => p.outcome_id === outcomeId);
      if (settled.length === 0) continue;
      a.positions = a.positions.filter((p) => p.outcome_id !== outcomeId);
      let payout = dec('0');
      for (const p of settled) payout = add(payout, mul(dec(p.quantity), p.side === 0 ? dec(settleFraction) : sub(dec('1'), dec(settleFraction))));
      const usdc = a.spotBalances.find((b) => b.coin === 'USDC');
      if (usdc) usdc.total = fmt(add(dec(usdc.total), payout));
      else a.spotBalances.push({ coin: 'USDC', token: 0, total: fmt(payout), hold: '0.0', entryNtl: '0.0' });
      positions += settled.length;
    }
    return { orders, positions };
  }

  closedOrders(address: string): readonly ClosedOrder[] {
    return this.accounts.get(address.toLowerCase())?.closed ?? [];
  }

  closedVenueOrders(address: string): readonly ClosedVenueOrder[] {
    return this.accounts.get(address.toLowerCase())?.closedVenue ?? [];
  }

  // ---- the venue's own view (POST /info) ----

  /** Every open order of exactly `address`, as the venue lists them: newest first. */
  venueOpenOrders(address: string): VenueOpenOrder[] {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) return [];
    const rows: Array<{ seq: number; view: VenueOpenOrder }> = [
      ...[...a.orders.values()].map((o) => ({ seq: o.seq, view: this.listedAsVenueOrder(o) })),
      ...[...a.venueOrders.values()].map((o) => ({ seq: o.seq, view: this.venueOrderView(o) })),
    ];
    rows.sort((x, y) => y.seq - x.seq);
    return rows.map((r) => r.view);
  }

  placeVenueOrder(address: string, seed: SeedVenueOrder): VenueOpenOrder {
    const a = this.must(address);
    checkVenueOrder(seed);
    return this.venueOrderView(this.placeVenue(a, seed));
  }

  perpPositions(address: string): VenuePerpPosition[] {
    return (this.accounts.get(address.toLowerCase())?.perpPositions ?? []).map((p) => ({ ...p }));
  }

  perpUsd(address: string): string {
    return this.accounts.get(address.toLowerCase())?.perpUsd ?? '0';
  }

  /**
   * Spot balances of exactly `address`: one outcome token per own position (the same positions the
   * service lists; a main account's listing adds its subaccounts', the venue keeps each address's
   * own), then the seeded ones. An outcome token's `hold` is what its open sell orders lock.
   */
  spotBalances(address: string): VenueSpotBalance[] {
    const a = this.accounts.get(address.toLowerCase());
    if (!a) return [];
    const tokens = a.positions.map((p): VenueSpotBalance => {
      const { tokenName: coin, token } = this.outcomeCoin(p.outcome_id, p.side);
      let hold = dec('0');
      for (const o of a.orders.values()) {
        if (o.outcome_id === p.outcome_id && o.side === p.side && o.direction === 'sell') hold = add(hold, sub(dec(o.original), dec(o.filled)));
      }
      return { coin, token, total: p.quantity, hold: fmt(hold), entryNtl: fmt(mul(dec(p.quantity), dec(p.average_entry_price))) };
    });
    return [...tokens, ...a.spotBalances.map((b) => ({ ...b }))];
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

  /**
   * An outcome side's spot coin and token on the venue (catalog/asset-id.ts): the coin `#<encoding>`
   * (open orders), the balance named by the token `+<encoding>`, its `token` number the side's token
   * index (outcomeTokenIndex, assumed).
   * An outcome with no chain id (test catalogs) is named by its id.
   */
  private outcomeCoin(outcomeId: string, side: 0 | 1): { coin: string; tokenName: string; token: number } {
    const n = outcomeIndexOf(this.catalog.outcome(outcomeId)?.hl_id);
    if (n === undefined) return { coin: `#${outcomeId}:${side}`, tokenName: `+${outcomeId}:${side}`, token: OUTCOME_ASSET_BASE };
    return { coin: outcomeCoin(n, side), tokenName: outcomeToken(n, side), token: outcomeTokenIndex(n, side) };
  }

  /** A service-listed (outcome) order as the venue shows it. */
  private listedAsVenueOrder(o: OrderRecord): VenueOpenOrder {
    const trigger = o.order_type === 'stop_limit' || o.order_type === 'stop_market';
    return {
      coin: this.outcomeCoin(o.outcome_id, o.side).coin,
      side: o.direction === 'buy' ? 'B' : 'A',
      limitPx: o.price,
      sz: fmt(sub(dec(o.original), dec(o.filled))),
      oid: Number(o.venue_order_id),
      timestamp: o.createdMs,
      origSz: o.original,
      orderType: VENUE_ORDER_TYPES[o.order_type],
      tif: trigger ? null : VENUE_TIF[o.time_in_force ?? 'gtc'],
      reduceOnly: false,
      isTrigger: trigger,
      triggerPx: '0',
      triggerCondition: 'N/A',
      isPositionTpsl: false,
      listed: true,
      // An order placed with a cloid (an `order` action's `c`) carries it as the venue lists it.
      ...(o.client_order_id !== undefined && /^0x[0-9a-f]{32}$/.test(o.client_order_id) ? { cloid: o.client_order_id } : {}),
    };
  }

  private venueOrderView(o: VenueOrderRecord): VenueOpenOrder {
    const out: VenueOpenOrder = {
      coin: o.coin,
      side: o.side,
      limitPx: o.limitPx,
      sz: o.sz,
      oid: o.oid,
      timestamp: o.createdMs,
      origSz: o.origSz,
      orderType: o.orderType,
      tif: o.tif,
      reduceOnly: o.reduceOnly,
      isTrigger: o.triggerPx !== undefined,
      triggerPx: o.triggerPx ?? '0',
      triggerCondition: o.triggerCondition ?? 'N/A',
      isPositionTpsl: o.isPositionTpsl,
      listed: false,
    };
    if (o.cloid !== undefined) out.cloid = o.cloid;
    if (o.dex !== undefined) out.dex = o.dex;
    return out;
  }

  private placeVenue(a: AccountRecord, seed: SeedVenueOrder): VenueOrderRecord {
    const seq = ++this.seq;
    const trigger = seed.triggerPx !== undefined;
    const o: VenueOrderRecord = {
      seq,
      // The same oid space as the listed orders' venue_order_id: one venue, one sequence.
      oid: 40_000_000_000 + seq,
      coin: seed.coin,
      side: seed.side,
      limitPx: canonical(seed.limitPx),
      sz: canonical(seed.sz),
      origSz: canonical(seed.origSz ?? seed.sz),
      orderType: seed.orderType ?? 'Limit',
      tif: seed.tif !== undefined ? seed.tif : trigger ? null : 'Gtc',
      reduceOnly: seed.reduceOnly ?? false,
      isPositionTpsl: seed.isPositionTpsl ?? false,
      createdMs: this.clock.nowMs(),
    };
    if (trigger) {
      o.triggerPx = canonical(seed.triggerPx as string);
      o.triggerCondition = seed.triggerCondition ?? 'Triggered';
    }
    if (seed.cloid !== undefined) o.cloid = seed.cloid.toLowerCase();
    const dex = seedDex(seed.dex);
    if (dex !== undefined) o.dex = dex;
    a.venueOrders.set(o.oid, o);
    return o;
  }

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

const VENUE_ORDER_TYPES: Record<OrderRecord['order_type'], string> = {
  limit: 'Limit',
  market: 'Market',
  stop_limit: 'Stop Limit',
  stop_market: 'Stop Market',
};
const VENUE_TIF: Record<NonNullable<OrderRecord['time_in_force']>, string> = { gtc: 'Gtc', ioc: 'Ioc', alo: 'Alo' };
const VENUE_TIFS = new Set(['Gtc', 'Ioc', 'Alo', 'FrontendMarket']);

function checkDecimal(text: unknown, what: string): string {
  if (!isDecimalText(text)) throw new SeedError(`${what} must be a decimal`);
  return text;
}

function checkPositiveDecimal(text: unknown, what: string): string {
  if (!isDecimalText(text) || !isPositive(dec(text))) throw new SeedError(`${what} must be a positive decimal`);
  return text;
}

/**
 * A builder-deployed perp dex's name as the venue has them (`xyz`, `flx`: lower-case letters and
 * digits, at most 6); the empty string is the first perp dex.
 */
const DEX_RE = /^[a-z0-9]{1,6}$/;

/** A seed's `dex`: undefined for the default listing (absent or ''), else checked. */
function seedDex(dex: unknown): string | undefined {
  if (dex === undefined || dex === '') return undefined;
  if (typeof dex !== 'string' || !DEX_RE.test(dex)) throw new SeedError('dex must be 1 to 6 lower-case letters or digits (or empty: the first perp dex)');
  return dex;
}

/**
 * A coin on a builder dex is named `<dex>:<COIN>` by the venue. (The dex is what decides where it
 * is listed, not the coin: a seed without `dex` stays in the default listing whatever its name.)
 */
function checkDexCoin(coin: string, dex: unknown, what: string): void {
  const d = seedDex(dex);
  if (d !== undefined && !coin.startsWith(`${d}:`)) throw new SeedError(`${what} coin on dex ${d} must be named ${d}:<COIN> (as the venue names it)`);
}

function checkVenueOrder(o: SeedVenueOrder): void {
  if (typeof o.coin !== 'string' || o.coin === '') throw new SeedError('venue order coin must be a non-empty string');
  checkDexCoin(o.coin, o.dex, 'venue order');
  if (o.side !== 'B' && o.side !== 'A') throw new SeedError('venue order side must be B or A');
  checkPositiveDecimal(o.limitPx, 'venue order limitPx');
  checkPositiveDecimal(o.sz, 'venue order sz');
  if (o.origSz !== undefined && cmp(dec(checkPositiveDecimal(o.origSz, 'venue order origSz')), dec(o.sz)) < 0) {
    throw new SeedError('venue order origSz must be at least sz');
  }
  if (o.triggerPx !== undefined) checkPositiveDecimal(o.triggerPx, 'venue order triggerPx');
  if (o.tif !== undefined && o.tif !== null && !VENUE_TIFS.has(o.tif)) throw new SeedError(`bad venue order tif ${String(o.tif)}`);
  if (o.cloid !== undefined && !/^0x[0-9a-fA-F]{32}$/.test(o.cloid)) throw new SeedError('venue order cloid must be 0x followed by 32 hex digits');
}

function checkPerpPosition(p: SeedPerpPosition): VenuePerpPosition {
  if (typeof p.coin !== 'string' || p.coin === '') throw new SeedError('perp position coin must be a non-empty string');
  checkDexCoin(p.coin, p.dex, 'perp position');
  const dex = seedDex(p.dex);
  const szi = dec(checkDecimal(p.szi, 'perp position szi'));
  if (szi.coef === 0n) throw new SeedError('perp position szi must not be zero');
  checkPositiveDecimal(p.entryPx, 'perp position entryPx');
  if (p.markPx !== undefined) checkPositiveDecimal(p.markPx, 'perp position markPx');
  const leverage = p.leverage ?? 20;
  if (!Number.isSafeInteger(leverage) || leverage < 1) throw new SeedError('perp position leverage must be a positive integer');
  if (p.liquidationPx !== undefined && p.liquidationPx !== null) checkPositiveDecimal(p.liquidationPx, 'perp position liquidationPx');
  return {
    coin: p.coin,
    szi: canonical(p.szi),
    entryPx: canonical(p.entryPx),
    markPx: canonical(p.markPx ?? p.entryPx),
    leverage,
    leverageType: p.leverageType ?? 'cross',
    liquidationPx: p.liquidationPx === undefined || p.liquidationPx === null ? null : canonical(p.liquidationPx),
    ...(dex !== undefined ? { dex } : {}),
  };
}

function checkSpotBalance(b: SeedSpotBalance): VenueSpotBalance {
  if (typeof b.coin !== 'string' || b.coin === '') throw new SeedError('spot balance coin must be a non-empty string');
  if (!Number.isSafeInteger(b.token) || b.token < 0) throw new SeedError('spot balance token must be a non-negative integer');
  const total = dec(checkDecimal(b.total, 'spot balance total'));
  const hold = dec(checkDecimal(b.hold ?? '0', 'spot balance hold'));
  if (total.coef < 0n || hold.coef < 0n || cmp(hold, total) > 0) throw new SeedError('spot balance needs 0 <= hold <= total');
  return { coin: b.coin, token: b.token, total: fmt(total), hold: fmt(hold), entryNtl: canonical(checkDecimal(b.entryNtl ?? '0', 'spot balance entryNtl')) };
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
