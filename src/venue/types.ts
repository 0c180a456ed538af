/**
 * The spec's resources (outcome-market-service.md, part 2), as TypeScript types.
 *
 * Rules carried through: every response field is optional (spec 1.5); a field described as null
 * is `T | null`; decimals are `Decimal` strings end to end, never `number`; datetimes are ISO 8601
 * strings. The runtime decoders in `decode.ts` are checked against these types.
 */

/** A base-10 decimal as the venue sends it. Compare with `decimal.ts`, never as text or float. */
export type Decimal = string;
/** ISO 8601 timestamp. */
export type DateTime = string;
/** 0x-prefixed EVM address. */
export type Address = string;

export type AccountType = 'main' | 'subaccount';
export type LifecycleStatus = 'active' | 'settled' | 'verifying';

export interface AccountRef {
  address?: Address;
  username?: string;
  image_url?: string;
  venue_name?: string;
  account_type?: AccountType;
}

export interface AccountLocation {
  main_account?: AccountRef;
  subaccount?: AccountRef;
}

export interface Account {
  account_type?: AccountType;
  subaccounts?: AccountRef[];
  address?: Address;
  username?: string;
  image_url?: string;
  venue_name?: string;
  parent?: AccountRef;
}

export type OrderDirection = 'buy' | 'sell';
export type OrderType = 'limit' | 'market' | 'stop_limit' | 'stop_market';
export type TimeInForce = 'gtc' | 'ioc' | 'alo';

export interface OpenOrder {
  order_id?: string;
  venue_order_id?: string;
  client_order_id?: string;
  outcome_id?: string;
  side?: number;
  direction?: OrderDirection;
  order_type?: OrderType;
  /** Absent (not defaulted) when the venue reported none. */
  time_in_force?: TimeInForce;
  price?: Decimal;
  original_quantity?: Decimal;
  filled_quantity?: Decimal;
  remaining_quantity?: Decimal;
  status?: 'open' | 'not_open';
  account?: AccountLocation;
  created_at?: DateTime;
  updated_at?: DateTime;
  /** null when attribution is absent. */
  submitted_by?: AccountRef | null;
}

export interface Position {
  outcome_id?: string;
  side?: number;
  quantity?: Decimal;
  average_entry_price?: Decimal;
  gross_realized_pnl_usdc?: Decimal;
  fees_paid_usdc?: Decimal;
  realized_pnl_usdc?: Decimal;
  mark_price?: Decimal;
  value_usdc?: Decimal;
  unrealized_pnl_usdc?: Decimal;
  total_pnl_usdc?: Decimal;
  account?: AccountLocation;
  opened_at?: DateTime;
  updated_at?: DateTime;
}

export interface OutcomeSettleSide {
  side?: number;
  fraction?: Decimal;
}

export interface OutcomeSide {
  side?: number;
  label?: string;
  /** null when there is no participant. */
  abbreviation?: string | null;
  participant_id?: string;
  hl_asset_id?: string;
}

export interface OutcomeTrading {
  quote?: string;
  min_notional?: Decimal;
  tick_size?: Decimal;
  lot_size?: Decimal;
}

export interface ExternalID {
  provider?: string;
  id?: string;
}

export type SportsMarketType =
  | 'SPORTS_MARKET_TYPE_UNSPECIFIED'
  | 'moneyline'
  | 'spread'
  | 'total'
  | 'player_prop'
  | 'scalar';
export type SportsMarketPeriod = 'SPORTS_MARKET_PERIOD_UNSPECIFIED' | 'full_game' | 'tournament';

export interface SportsMarket {
  type?: SportsMarketType;
  period?: SportsMarketPeriod;
  line?: string;
}

export interface PriceTarget {
  asset?: string;
  comparator?: 'above' | 'below' | 'at';
  strike?: Decimal;
}

export interface Outcome {
  id?: string;
  slug?: string;
  event_id?: string;
  title?: string;
  status?: LifecycleStatus;
  /** null until deployed. */
  hl_question_id?: string | null;
  /** null until deployed. */
  hl_id?: string | null;
  created_at?: DateTime;
  updated_at?: DateTime;
  hl_template_id?: string;
  hl_keywords?: Record<string, string>;
  /** null until the venue confirms settlement. */
  hl_settle_fraction?: Decimal | null;
  hl_rules?: string;
  /** null on a standalone market. */
  question_id?: string | null;
  settlement_initiated_at?: DateTime;
  settlement_approved_at?: DateTime;
  settled_at?: DateTime;
  settlement?: OutcomeSettleSide[];
  hl_settlement?: OutcomeSettleSide[];
  sides?: OutcomeSide[];
  trading?: OutcomeTrading;
  providers?: ExternalID[];
  /** null when the outcome has no sports facet. */
  sports_market?: SportsMarket | null;
  price_target?: PriceTarget;
  participant_id?: string;
}

export interface Named {
  id?: string;
  name?: string;
  image_url?: string;
}

export interface Question {
  id?: string;
  event_id?: string;
  hl_question_id?: string;
  hl_fallback_outcome_id?: string;
  hl_template_id?: string;
  hl_keywords?: Record<string, string>;
  hl_rules?: string;
  deployer_fee_scale?: Decimal;
}

export interface EventParticipant {
  id?: string;
  name?: string;
  abbreviation?: string;
  image_url?: string;
  color?: string;
  side?: number;
}

export type ContestStatus =
  | 'CONTEST_STATUS_UNSPECIFIED'
  | 'scheduled'
  | 'live'
  | 'finished'
  | 'postponed'
  | 'cancelled';

export interface Contest {
  status?: ContestStatus;
  started_at?: DateTime;
  ended_at?: DateTime;
}

export interface Event {
  id?: string;
  slug?: string;
  title?: string;
  start_time?: DateTime;
  status?: LifecycleStatus;
  created_at?: DateTime;
  updated_at?: DateTime;
  /** null when the event has no image. */
  image_url?: string | null;
  topic_id?: string;
  category?: Named;
  /** null when the category has no series or the event was not placed under one. */
  series?: Named | null;
  providers?: ExternalID[];
  outcomes?: Outcome[];
  questions?: Question[];
  settlement_initiated_at?: DateTime;
  settlement_approved_at?: DateTime;
  settled_at?: DateTime;
  /** Omitted (key absent) when the event has none. */
  participants?: EventParticipant[];
  /** Omitted when the event is not a sports contest. */
  contest?: Contest;
}

export interface Participant {
  id?: string;
  name?: string;
  abbreviation?: string;
  image_url?: string;
  /** Lowercase hex with leading '#'; null when no colour is curated. */
  color?: string | null;
  providers?: ExternalID[];
  topic_id?: string;
  category_id?: string;
  series_id?: string;
  slug?: string;
}

export interface Series {
  id?: string;
  category_id?: string;
  topic_id?: string;
  name?: string;
  image_url?: string;
  providers?: ExternalID[];
}

export interface Category {
  id?: string;
  topic_id?: string;
  name?: string;
  image_url?: string;
  series?: Series[];
}

export interface Topic {
  id?: string;
  name?: string;
  image_url?: string;
  categories?: Category[];
}

export interface Provider {
  id?: string;
}

export interface TemplateKeyword {
  name?: string;
  hint?: string;
}

export interface MarketTemplate {
  id?: string;
  kind?: 'standalone' | 'question' | 'question_outcome';
  side_names?: string[];
  keywords?: TemplateKeyword[];
  name?: string;
  description?: string;
  /** null except on `question_outcome`. */
  parent?: string | null;
}

export interface Included {
  outcomes?: Outcome[];
  events?: Event[];
}

export interface OutcomeBookOrder {
  oid?: string;
  address?: Address;
  size?: Decimal;
  priority?: number;
  source_side?: number;
}

export interface OutcomeBookLevel {
  price?: Decimal;
  size?: Decimal;
  orders?: OutcomeBookOrder[];
}

export interface OutcomeBookSide {
  side?: number;
  bids?: OutcomeBookLevel[];
  asks?: OutcomeBookLevel[];
}

export interface OutcomeBookAccounts {
  data?: AccountRef[];
}

export interface OutcomeBook {
  outcome_id?: string;
  state?: LifecycleStatus;
  as_of?: DateTime;
  revision?: string;
  depth?: number;
  sides?: OutcomeBookSide[];
  accounts?: OutcomeBookAccounts;
}

export interface OutcomeSideStats {
  side?: number;
  open_quantity?: Decimal;
  holder_count?: number;
}

export interface OutcomeStats {
  outcome_id?: string;
  volume_usdc?: Decimal;
  trade_count?: number;
  as_of?: DateTime;
  sides?: OutcomeSideStats[];
}

export interface Health {
  ok?: boolean;
  as_of?: DateTime;
  block?: Decimal;
}

// ---- list envelopes (part 4) ----

export interface OrdersPage {
  data?: OpenOrder[];
  next_cursor?: string;
  included?: Included;
}

export interface PositionsPage {
  data?: Position[];
  next_cursor?: string;
  as_of?: DateTime;
  included?: Included;
}

export interface ParticipantsPage {
  data?: Participant[];
  next_cursor?: string;
}

export interface ProvidersList {
  data?: Provider[];
}

export interface TemplatesList {
  data?: MarketTemplate[];
}

export type IncludeKind = 'outcome' | 'event';

// ---- exchange actions (spec 4.13 to 4.15, VENUE.md) ----

export type VenueChain = 'Testnet' | 'Mainnet';
export type Network = 'testnet' | 'mainnet';

export interface Signature {
  r: `0x${string}`;
  s: `0x${string}`;
  v: number;
}

/** `time` absent (never null) clears the schedule. `time` is a bigint so msgpack encodes uint64. */
export interface ScheduleCancelAction {
  type: 'scheduleCancel';
  time?: bigint;
}

/**
 * The network of a user-signed action, under the name `venue.chain_field` chose
 * (signing/user-signed.ts, CHAIN_FIELDS): exactly one of the two keys is present.
 */
export type ChainNamed = { hyperliquidChain: VenueChain; venueChain?: never } | { venueChain: VenueChain; hyperliquidChain?: never };

/** Keys in the order the venue's own clients post them: type, signatureChainId, the network, the fields, nonce. */
export type ApproveAgentAction = { type: 'approveAgent'; signatureChainId: `0x${string}` } & ChainNamed & {
  agentAddress: Address;
  agentName?: string;
  nonce: number;
};

export type ApproveBuilderFeeAction = { type: 'approveBuilderFee'; signatureChainId: `0x${string}` } & ChainNamed & {
  maxFeeRate: string;
  builder: Address;
  nonce: number;
};

/** The body POSTed to `{exchange_url}/exchange` (and, for scheduleCancel, the REST trading path). */
export interface SignedRequest<A> {
  action: A;
  nonce: number;
  signature: Signature;
  vaultAddress?: Address;
  expiresAfter?: number;
}

/** A successful action answer: `{"status":"ok","response":...}`. */
export interface ActionOk {
  status: 'ok';
  response?: unknown;
}
