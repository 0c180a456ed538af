/**
 * Contracts between the simulator's parts: the catalog (fixtures and catalog routes), the venue
 * state (accounts, orders, agents, nonces, scheduled cancels) and the server that exposes both over
 * HTTP and WebSocket. Each part depends on these interfaces, not on the others' internals.
 */
import type { Account, Event, OpenOrder, Outcome, Position } from '../venue/types.js';

/** Read access to the fixture catalog, as the account routes need it for `include`. */
export interface Catalog {
  outcome(id: string): Outcome | undefined;
  event(id: string): Event | undefined;
  /** Outcomes that are active and deployed: where simulated orders can rest. */
  tradableOutcomeIds(): string[];
}

/** One resting order as the book shows it. */
export interface RestingOrder {
  oid: string;
  address: string;
  /** Outcome side the order was posted on (0 first token, 1 second). */
  side: 0 | 1;
  direction: 'buy' | 'sell';
  price: string;
  size: string;
  /** Time priority; lower rests earlier. */
  priority: number;
}

export interface SeedOrder {
  outcome_id: string;
  side: 0 | 1;
  direction: 'buy' | 'sell';
  price: string;
  quantity: string;
  /** Filled so far; defaults to "0". */
  filled?: string;
  order_type?: OpenOrder['order_type'];
  time_in_force?: OpenOrder['time_in_force'];
  client_order_id?: string;
  /** Wallet that submitted it; omitted means attribution absent (null in the listing). */
  submitted_by?: string;
}

export interface SeedPosition {
  outcome_id: string;
  side: 0 | 1;
  quantity: string;
  average_entry_price: string;
  mark_price: string;
}

/**
 * An open order on the venue that the service's listing (`/v1/accounts/{address}/orders`) does not
 * show: a perp or spot order, a builder-deployed market's. Only `POST /info` (`openOrders`,
 * `frontendOpenOrders`) shows it, and the scheduled cancel cancels it with the rest. Fields in the
 * venue's own vocabulary (its `frontendOpenOrders` answer).
 */
export interface SeedVenueOrder {
  /** The venue's coin name: `BTC` (a perp), `PURR/USDC` or `@107` (spot), `xyz:TSLA` (a builder's dex). */
  coin: string;
  /**
   * The builder-deployed perp dex (HIP-3) it rests on, e.g. `xyz` (its coin is then `xyz:<COIN>`):
   * `/info` lists it only when asked with that `dex`, never in the default listing. Absent (or
   * empty): the first perp dex or spot, listed by default.
   */
  dex?: string;
  /** `B` bid (buy), `A` ask (sell). */
  side: 'B' | 'A';
  limitPx: string;
  /** Size left. */
  sz: string;
  /** Size when placed; default `sz`. */
  origSz?: string;
  /** Default `Limit`; e.g. `Stop Market`, `Take Profit Limit`. */
  orderType?: string;
  /** Default `Gtc` for a limit order, null for a trigger order. */
  tif?: 'Gtc' | 'Ioc' | 'Alo' | 'FrontendMarket' | null;
  reduceOnly?: boolean;
  /** A trigger order: `triggerPx` and `triggerCondition` (e.g. `Price below 9.995`). */
  triggerPx?: string;
  triggerCondition?: string;
  isPositionTpsl?: boolean;
  /** A 0x + 32 hex client order id. */
  cloid?: string;
}

/** A perp position, for `clearinghouseState` (the service lists outcome positions only). */
export interface SeedPerpPosition {
  coin: string;
  /** The builder-deployed perp dex it is on (coin `dex:<COIN>`): listed only by `clearinghouseState` with that `dex`. Absent: the first perp dex. */
  dex?: string;
  /** Signed size: negative is short. */
  szi: string;
  entryPx: string;
  /** Mark price; default `entryPx`. */
  markPx?: string;
  /** Default 20 (cross). */
  leverage?: number;
  leverageType?: 'cross' | 'isolated';
  /** Default null (none). */
  liquidationPx?: string | null;
}

/** A spot token balance, for `spotClearinghouseState` (outcome tokens come from the positions). */
export interface SeedSpotBalance {
  coin: string;
  /** The venue's token index. */
  token: number;
  total: string;
  hold?: string;
  entryNtl?: string;
}

/** The address's action budget as `userRateLimit` reports it; each field overrides what is derived. */
export interface SeedUserRateLimit {
  /** Cumulative traded volume (USDC): sets `tradedVolumeUsd` too (the volume gate reads the same figure). */
  cumVlm?: string;
  /** Actions counted so far; each admitted action raises it by one. */
  nRequestsUsed?: number;
  /** The cap; default 10,000 + 1 per USDC of `cumVlm` (the venue's rule), enforced as such. */
  nRequestsCap?: number;
}

export interface SimAccountSeed {
  /** The account's address (main account or subaccount). */
  address: string;
  /** Set for a subaccount: its main account's address (which must be seeded too, first). */
  parent?: string;
  username?: string;
  venue_name?: string;
  image_url?: string;
  /** Volume traded so far; below the venue gate ($1,000,000) scheduleCancel is refused. */
  tradedVolumeUsd: number;
  orders?: SeedOrder[];
  positions?: SeedPosition[];
  /** Orders the service does not list (perps, spot, builders' dexes): only `/info` shows them. */
  venueOrders?: SeedVenueOrder[];
  /** Perp positions (`clearinghouseState`). */
  perpPositions?: SeedPerpPosition[];
  /** The perp account's USDC (`totalRawUsd`); default "0". */
  perpUsd?: string;
  /** Spot balances besides outcome tokens (`spotClearinghouseState`), e.g. USDC. */
  spotBalances?: SeedSpotBalance[];
  rateLimit?: SeedUserRateLimit;
}

export interface ScheduleInfo {
  /** Venue-time ms of the armed cancel; undefined when none is armed. */
  timeMs?: number;
  /** Fired cancels this UTC day. */
  triggersToday: number;
}

export interface AgentInfo {
  address: string;
  /** "" for the unnamed agent. */
  name: string;
  validUntilMs?: number;
}

/** Answer of an action: the venue's 200 body, or an HTTP-level error response. */
export type ActionOutcome =
  | { kind: 'answer'; body: { status: 'ok'; response: unknown } | { status: 'err'; response: string } }
  /** `raw`: a plain-text body in place of `body` (the venue's 422 for a body it cannot read). */
  | { kind: 'http'; status: number; body: unknown; raw?: string };

export type NotificationSink = (user: string, text: string) => void;

/** The venue's account-side state and rules, independent of HTTP. */
export interface VenueStateApi {
  addAccount(seed: SimAccountSeed): void;
  hasAccount(address: string): boolean;
  /** Spec-shaped Account, or undefined when unknown. */
  getAccount(address: string): Account | undefined;
  /** Current open orders of exactly this address, stable order. */
  openOrders(address: string): OpenOrder[];
  /** Positions: a main account's own plus its subaccounts'; a subaccount's own. */
  positions(address: string): Position[];
  restingOrders(outcomeId: string): RestingOrder[];
  placeOrder(address: string, order: SeedOrder): OpenOrder;
  setTradedVolume(address: string, usd: number): void;
  /**
   * A POSTed action body, as it arrived on `via`. Verifies signature and nonce, applies the
   * action, and answers the way the venue does.
   */
  handleAction(body: unknown, via: 'rest' | 'exchange'): Promise<ActionOutcome>;
  schedule(address: string): ScheduleInfo;
  agents(address: string): AgentInfo[];
  /** Every signed action accepted or refused, newest last (for tests and the admin route). */
  actionLog(): ReadonlyArray<{ atMs: number; via: 'rest' | 'exchange'; type: string; account?: string; signer?: string; result: string }>;
  /** Cancels timers. */
  stop(): void;
}

/** What `userRole` says of an address. */
export type UserRole = { role: 'user' } | { role: 'subAccount'; master: string } | { role: 'agent'; user: string } | { role: 'missing' };

/** An open order as the venue's info endpoint sees it (every order the scheduled cancel hits). */
export interface VenueOpenOrder {
  coin: string;
  side: 'B' | 'A';
  limitPx: string;
  sz: string;
  oid: number;
  timestamp: number;
  origSz: string;
  orderType: string;
  tif: string | null;
  reduceOnly: boolean;
  isTrigger: boolean;
  triggerPx: string;
  triggerCondition: string;
  isPositionTpsl: boolean;
  cloid?: string;
  /** Where it comes from: the service's listing (an outcome order) or the venue alone. */
  listed: boolean;
  /** The builder-deployed perp dex it rests on; absent: the default listing (first perp dex, spot, outcomes). */
  dex?: string;
}

export interface VenuePerpPosition {
  coin: string;
  /** The builder-deployed perp dex it is on; absent: the first perp dex. */
  dex?: string;
  szi: string;
  entryPx: string;
  markPx: string;
  leverage: number;
  leverageType: 'cross' | 'isolated';
  liquidationPx: string | null;
}

export interface VenueSpotBalance {
  coin: string;
  token: number;
  total: string;
  hold: string;
  entryNtl: string;
}

export interface UserRateLimitInfo {
  cumVlm: string;
  nRequestsUsed: number;
  nRequestsCap: number;
}

/**
 * The venue's own view of an address, for `POST /info` (info-routes.ts), and the seeding of what
 * only the venue shows. Separate from `VenueStateApi` so stubs of that one stay small.
 */
export interface VenueInfoState {
  /**
   * Every open order of exactly this address, on every dex (what the scheduled cancel hits): the
   * service-listed ones and the venue-only ones, newest first. `/info` lists those of one dex at a
   * time (each order's `dex`).
   */
  venueOpenOrders(address: string): VenueOpenOrder[];
  /** Places an order only `/info` shows (SeedVenueOrder); returns it. */
  placeVenueOrder(address: string, order: SeedVenueOrder): VenueOpenOrder;
  /** Perp positions on every dex (each one's `dex`). */
  perpPositions(address: string): VenuePerpPosition[];
  /** The first perp dex's USDC (a builder dex's is 0 in the simulator). */
  perpUsd(address: string): string;
  /** Outcome-token balances from the address's own positions, then the seeded spot balances. */
  spotBalances(address: string): VenueSpotBalance[];
  userRole(address: string): UserRole;
  userRateLimit(address: string): UserRateLimitInfo;
  /** Overrides the address's `userRateLimit` fields (SeedUserRateLimit). */
  setUserRateLimit(address: string, fields: SeedUserRateLimit): void;
}
