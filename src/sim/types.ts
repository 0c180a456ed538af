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
  | { kind: 'http'; status: number; body: unknown };

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
