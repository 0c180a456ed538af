import { z } from 'zod';
import { classifyActionError } from './classify.js';
import {
  ActionError,
  DecodeError,
  REST_STATUS_NAMES,
  RestError,
  truncate,
  type DependencyDetail,
  type ErrorDetail,
  type FieldViolationDetail,
  type RateLimitDetail,
  type RestErrorBody,
} from './errors.js';
import type { HttpResponse } from './http.js';
import { parseJson, toJson } from './json.js';
import type {
  Account,
  AccountLocation,
  AccountRef,
  ActionOk,
  Category,
  Contest,
  Event,
  EventParticipant,
  ExternalID,
  Health,
  Included,
  MarketTemplate,
  Named,
  OpenOrder,
  OrdersPage,
  Outcome,
  OutcomeBook,
  OutcomeBookAccounts,
  OutcomeBookLevel,
  OutcomeBookOrder,
  OutcomeBookSide,
  OutcomeSettleSide,
  OutcomeSide,
  OutcomeSideStats,
  OutcomeStats,
  OutcomeTrading,
  Participant,
  ParticipantsPage,
  Position,
  PositionsPage,
  PriceTarget,
  Provider,
  ProvidersList,
  Question,
  Series,
  SportsMarket,
  TemplateKeyword,
  TemplatesList,
  Topic,
} from './types.js';

/**
 * Runtime decoders for the spec's resources (part 2) and responses (part 4).
 *
 * Rules: every field optional (spec 1.5); `null` only where types.ts says `| null` (the spec's
 * "null when…"); decimals are strings matching a base-10 decimal, so a JSON number where a decimal
 * is due fails (a float would already have lost precision); enums exact; unknown keys stripped
 * everywhere (zod's object default), so callers only ever see fields the spec names.
 *
 * Datetimes are accepted as any string: they are informational for the keeper, and refusing a
 * whole orders page over a timestamp variant would cost more than it protects.
 */

const DECIMAL_RE = /^-?(?:\d+(?:\.\d+)?|\.\d+)$/;
const DECIMAL_MSG = 'expected decimal string';

/** The JSON type of a value, for messages that must not quote the value itself. */
function jsonKind(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

const decimal = z
  .string({ error: (iss) => `${DECIMAL_MSG}, received ${jsonKind(iss.input)}` })
  .regex(DECIMAL_RE, { error: DECIMAL_MSG });
const datetime = z.string();
const int = z.number().int();
const opt = <T extends z.ZodType>(t: T) => t.optional();
const nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();
const list = <T extends z.ZodType>(t: T) => z.array(t).optional();
const stringMap = z.record(z.string(), z.string());
const lifecycle = z.enum(['active', 'settled', 'verifying']);
const accountType = z.enum(['main', 'subaccount']);

export const AccountRefSchema = z.object({
  address: opt(z.string()),
  username: opt(z.string()),
  image_url: opt(z.string()),
  venue_name: opt(z.string()),
  account_type: opt(accountType),
});

export const AccountLocationSchema = z.object({
  main_account: opt(AccountRefSchema),
  subaccount: opt(AccountRefSchema),
});

export const AccountSchema = z.object({
  account_type: opt(accountType),
  subaccounts: list(AccountRefSchema),
  address: opt(z.string()),
  username: opt(z.string()),
  image_url: opt(z.string()),
  venue_name: opt(z.string()),
  parent: opt(AccountRefSchema),
});

export const OpenOrderSchema = z.object({
  order_id: opt(z.string()),
  venue_order_id: opt(z.string()),
  client_order_id: opt(z.string()),
  outcome_id: opt(z.string()),
  side: opt(int),
  direction: opt(z.enum(['buy', 'sell'])),
  order_type: opt(z.enum(['limit', 'market', 'stop_limit', 'stop_market'])),
  time_in_force: opt(z.enum(['gtc', 'ioc', 'alo'])),
  price: opt(decimal),
  original_quantity: opt(decimal),
  filled_quantity: opt(decimal),
  remaining_quantity: opt(decimal),
  status: opt(z.enum(['open', 'not_open'])),
  account: opt(AccountLocationSchema),
  created_at: opt(datetime),
  updated_at: opt(datetime),
  submitted_by: nullable(AccountRefSchema),
});

export const PositionSchema = z.object({
  outcome_id: opt(z.string()),
  side: opt(int),
  quantity: opt(decimal),
  average_entry_price: opt(decimal),
  gross_realized_pnl_usdc: opt(decimal),
  fees_paid_usdc: opt(decimal),
  realized_pnl_usdc: opt(decimal),
  mark_price: opt(decimal),
  value_usdc: opt(decimal),
  unrealized_pnl_usdc: opt(decimal),
  total_pnl_usdc: opt(decimal),
  account: opt(AccountLocationSchema),
  opened_at: opt(datetime),
  updated_at: opt(datetime),
});

export const OutcomeSettleSideSchema = z.object({ side: opt(int), fraction: opt(decimal) });

export const OutcomeSideSchema = z.object({
  side: opt(int),
  label: opt(z.string()),
  abbreviation: nullable(z.string()),
  participant_id: opt(z.string()),
  hl_asset_id: opt(z.string()),
});

export const OutcomeTradingSchema = z.object({
  quote: opt(z.string()),
  min_notional: opt(decimal),
  tick_size: opt(decimal),
  lot_size: opt(decimal),
});

export const ExternalIDSchema = z.object({ provider: opt(z.string()), id: opt(z.string()) });

export const SportsMarketSchema = z.object({
  type: opt(z.enum(['SPORTS_MARKET_TYPE_UNSPECIFIED', 'moneyline', 'spread', 'total', 'player_prop', 'scalar'])),
  period: opt(z.enum(['SPORTS_MARKET_PERIOD_UNSPECIFIED', 'full_game', 'tournament'])),
  line: opt(z.string()),
});

export const PriceTargetSchema = z.object({
  asset: opt(z.string()),
  comparator: opt(z.enum(['above', 'below', 'at'])),
  strike: opt(decimal),
});

export const OutcomeSchema = z.object({
  id: opt(z.string()),
  slug: opt(z.string()),
  event_id: opt(z.string()),
  title: opt(z.string()),
  status: opt(lifecycle),
  hl_question_id: nullable(z.string()),
  hl_id: nullable(z.string()),
  created_at: opt(datetime),
  updated_at: opt(datetime),
  hl_template_id: opt(z.string()),
  hl_keywords: opt(stringMap),
  hl_settle_fraction: nullable(decimal),
  hl_rules: opt(z.string()),
  question_id: nullable(z.string()),
  settlement_initiated_at: opt(datetime),
  settlement_approved_at: opt(datetime),
  settled_at: opt(datetime),
  settlement: list(OutcomeSettleSideSchema),
  hl_settlement: list(OutcomeSettleSideSchema),
  sides: list(OutcomeSideSchema),
  trading: opt(OutcomeTradingSchema),
  providers: list(ExternalIDSchema),
  sports_market: nullable(SportsMarketSchema),
  price_target: opt(PriceTargetSchema),
  participant_id: opt(z.string()),
});

export const NamedSchema = z.object({ id: opt(z.string()), name: opt(z.string()), image_url: opt(z.string()) });

export const QuestionSchema = z.object({
  id: opt(z.string()),
  event_id: opt(z.string()),
  hl_question_id: opt(z.string()),
  hl_fallback_outcome_id: opt(z.string()),
  hl_template_id: opt(z.string()),
  hl_keywords: opt(stringMap),
  hl_rules: opt(z.string()),
  deployer_fee_scale: opt(decimal),
});

export const EventParticipantSchema = z.object({
  id: opt(z.string()),
  name: opt(z.string()),
  abbreviation: opt(z.string()),
  image_url: opt(z.string()),
  color: opt(z.string()),
  side: opt(int),
});

export const ContestSchema = z.object({
  status: opt(z.enum(['CONTEST_STATUS_UNSPECIFIED', 'scheduled', 'live', 'finished', 'postponed', 'cancelled'])),
  started_at: opt(datetime),
  ended_at: opt(datetime),
});

export const EventSchema = z.object({
  id: opt(z.string()),
  slug: opt(z.string()),
  title: opt(z.string()),
  start_time: opt(datetime),
  status: opt(lifecycle),
  created_at: opt(datetime),
  updated_at: opt(datetime),
  image_url: nullable(z.string()),
  topic_id: opt(z.string()),
  category: opt(NamedSchema),
  series: nullable(NamedSchema),
  providers: list(ExternalIDSchema),
  outcomes: list(OutcomeSchema),
  questions: list(QuestionSchema),
  settlement_initiated_at: opt(datetime),
  settlement_approved_at: opt(datetime),
  settled_at: opt(datetime),
  participants: list(EventParticipantSchema),
  contest: opt(ContestSchema),
});

export const ParticipantSchema = z.object({
  id: opt(z.string()),
  name: opt(z.string()),
  abbreviation: opt(z.string()),
  image_url: opt(z.string()),
  color: nullable(z.string()),
  providers: list(ExternalIDSchema),
  topic_id: opt(z.string()),
  category_id: opt(z.string()),
  series_id: opt(z.string()),
  slug: opt(z.string()),
});

export const SeriesSchema = z.object({
  id: opt(z.string()),
  category_id: opt(z.string()),
  topic_id: opt(z.string()),
  name: opt(z.string()),
  image_url: opt(z.string()),
  providers: list(ExternalIDSchema),
});

export const CategorySchema = z.object({
  id: opt(z.string()),
  topic_id: opt(z.string()),
  name: opt(z.string()),
  image_url: opt(z.string()),
  series: list(SeriesSchema),
});

export const TopicSchema = z.object({
  id: opt(z.string()),
  name: opt(z.string()),
  image_url: opt(z.string()),
  categories: list(CategorySchema),
});

export const ProviderSchema = z.object({ id: opt(z.string()) });

export const TemplateKeywordSchema = z.object({ name: opt(z.string()), hint: opt(z.string()) });

export const MarketTemplateSchema = z.object({
  id: opt(z.string()),
  kind: opt(z.enum(['standalone', 'question', 'question_outcome'])),
  side_names: list(z.string()),
  keywords: list(TemplateKeywordSchema),
  name: opt(z.string()),
  description: opt(z.string()),
  parent: nullable(z.string()),
});

export const IncludedSchema = z.object({ outcomes: list(OutcomeSchema), events: list(EventSchema) });

export const OutcomeBookOrderSchema = z.object({
  oid: opt(z.string()),
  address: opt(z.string()),
  size: opt(decimal),
  priority: opt(int),
  source_side: opt(int),
});

export const OutcomeBookLevelSchema = z.object({
  price: opt(decimal),
  size: opt(decimal),
  orders: list(OutcomeBookOrderSchema),
});

export const OutcomeBookSideSchema = z.object({
  side: opt(int),
  bids: list(OutcomeBookLevelSchema),
  asks: list(OutcomeBookLevelSchema),
});

export const OutcomeBookAccountsSchema = z.object({ data: list(AccountRefSchema) });

export const OutcomeBookSchema = z.object({
  outcome_id: opt(z.string()),
  state: opt(lifecycle),
  as_of: opt(datetime),
  revision: opt(z.string()),
  depth: opt(int),
  sides: list(OutcomeBookSideSchema),
  accounts: opt(OutcomeBookAccountsSchema),
});

export const OutcomeSideStatsSchema = z.object({
  side: opt(int),
  open_quantity: opt(decimal),
  holder_count: opt(int),
});

export const OutcomeStatsSchema = z.object({
  outcome_id: opt(z.string()),
  volume_usdc: opt(decimal),
  trade_count: opt(int),
  as_of: opt(datetime),
  sides: list(OutcomeSideStatsSchema),
});

export const HealthSchema = z.object({ ok: opt(z.boolean()), as_of: opt(datetime), block: opt(decimal) });

export const OrdersPageSchema = z.object({
  data: list(OpenOrderSchema),
  next_cursor: opt(z.string()),
  included: opt(IncludedSchema),
});

export const PositionsPageSchema = z.object({
  data: list(PositionSchema),
  next_cursor: opt(z.string()),
  as_of: opt(datetime),
  included: opt(IncludedSchema),
});

export const ParticipantsPageSchema = z.object({ data: list(ParticipantSchema), next_cursor: opt(z.string()) });
export const ProvidersListSchema = z.object({ data: list(ProviderSchema) });
export const TemplatesListSchema = z.object({ data: list(MarketTemplateSchema) });

// ---- errors and action answers ----

export const FieldViolationDetailSchema = z.object({
  type: z.literal('field_violation'),
  field: z.string(),
  reason: z.string(),
});
export const RateLimitDetailSchema = z.object({
  type: z.literal('rate_limit'),
  limit: int,
  reason: z.string(),
  retry_after_seconds: int,
  scope: z.enum(['endpoint', 'global']),
  window_seconds: int,
});
export const DependencyDetailSchema = z.object({ type: z.literal('dependency'), reason: z.string() });

const KNOWN_DETAIL_TYPES: ReadonlySet<string> = new Set(['field_violation', 'rate_limit', 'dependency']);

export const ErrorDetailSchema = z.discriminatedUnion('type', [
  FieldViolationDetailSchema,
  RateLimitDetailSchema,
  DependencyDetailSchema,
]);

/**
 * The RESTError envelope (spec part 7). All of `code/status/message/details` are required there.
 * A detail of a `type` the spec does not name is dropped rather than voiding the whole envelope:
 * losing a 429's RestError over a new detail kind would cost the retry layer its retry-after.
 * Known kinds are decoded strictly.
 */
export const RestErrorEnvelopeSchema = z.object({
  error: z.object({
    code: int,
    status: z.enum(REST_STATUS_NAMES),
    message: z.string(),
    details: z
      .array(z.unknown())
      .transform((items) =>
        items.filter((d) => {
          const t = d !== null && typeof d === 'object' ? (d as { type?: unknown }).type : undefined;
          return typeof t === 'string' && KNOWN_DETAIL_TYPES.has(t);
        }),
      )
      .pipe(z.array(ErrorDetailSchema)),
  }),
});

/**
 * The venue's action answer. `err` carries text; an `err` whose response is not a string is still a
 * refusal (never a success), so it is accepted here and reported as an unclassified ActionError.
 */
export const ActionAnswerSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('ok'), response: z.unknown().optional() }),
  z.object({ status: z.literal('err'), response: z.unknown().optional() }),
]);

// ---- compile-time agreement with types.ts ----

/**
 * Both directions of assignability plus identical key sets: `satisfies z.ZodType<T>` alone would
 * miss a field added to types.ts but not here (every field is optional, so the narrower schema
 * output still fits). Nested resources are checked by their own entries.
 */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
type Agrees<S extends z.ZodType, T> = [z.output<S>] extends [T]
  ? [T] extends [z.output<S>]
    ? SameKeys<z.output<S>, T>
    : false
  : false;
type Check<S extends z.ZodType, T> = Agrees<S, T>;
type AllTrue<T extends readonly true[]> = T;

export type _SchemaAgreement = AllTrue<
  [
    Check<typeof AccountRefSchema, AccountRef>,
    Check<typeof AccountLocationSchema, AccountLocation>,
    Check<typeof AccountSchema, Account>,
    Check<typeof OpenOrderSchema, OpenOrder>,
    Check<typeof PositionSchema, Position>,
    Check<typeof OutcomeSettleSideSchema, OutcomeSettleSide>,
    Check<typeof OutcomeSideSchema, OutcomeSide>,
    Check<typeof OutcomeTradingSchema, OutcomeTrading>,
    Check<typeof ExternalIDSchema, ExternalID>,
    Check<typeof SportsMarketSchema, SportsMarket>,
    Check<typeof PriceTargetSchema, PriceTarget>,
    Check<typeof OutcomeSchema, Outcome>,
    Check<typeof NamedSchema, Named>,
    Check<typeof QuestionSchema, Question>,
    Check<typeof EventParticipantSchema, EventParticipant>,
    Check<typeof ContestSchema, Contest>,
    Check<typeof EventSchema, Event>,
    Check<typeof ParticipantSchema, Participant>,
    Check<typeof SeriesSchema, Series>,
    Check<typeof CategorySchema, Category>,
    Check<typeof TopicSchema, Topic>,
    Check<typeof ProviderSchema, Provider>,
    Check<typeof TemplateKeywordSchema, TemplateKeyword>,
    Check<typeof MarketTemplateSchema, MarketTemplate>,
    Check<typeof IncludedSchema, Included>,
    Check<typeof OutcomeBookOrderSchema, OutcomeBookOrder>,
    Check<typeof OutcomeBookLevelSchema, OutcomeBookLevel>,
    Check<typeof OutcomeBookSideSchema, OutcomeBookSide>,
    Check<typeof OutcomeBookAccountsSchema, OutcomeBookAccounts>,
    Check<typeof OutcomeBookSchema, OutcomeBook>,
    Check<typeof OutcomeSideStatsSchema, OutcomeSideStats>,
    Check<typeof OutcomeStatsSchema, OutcomeStats>,
    Check<typeof HealthSchema, Health>,
    Check<typeof OrdersPageSchema, OrdersPage>,
    Check<typeof PositionsPageSchema, PositionsPage>,
    Check<typeof ParticipantsPageSchema, ParticipantsPage>,
    Check<typeof ProvidersListSchema, ProvidersList>,
    Check<typeof TemplatesListSchema, TemplatesList>,
    Check<typeof FieldViolationDetailSchema, FieldViolationDetail>,
    Check<typeof RateLimitDetailSchema, RateLimitDetail>,
    Check<typeof DependencyDetailSchema, DependencyDetail>,
    Check<typeof ErrorDetailSchema, ErrorDetail>,
    Check<(typeof RestErrorEnvelopeSchema)['shape']['error'], RestErrorBody>,
  ]
>;

// ---- decoding ----

/** `data[3].price`, `included.outcomes[0].hl_keywords["a b"]`; `(root)` for the top level. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      // Record keys come from the body: bound them so a path can never smuggle a large payload.
      const key = truncate(String(seg), 40);
      out += /^[A-Za-z_$][\w$]*$/.test(key) ? (out === '' ? key : `.${key}`) : `[${JSON.stringify(key)}]`;
    }
  }
  return out === '' ? '(root)' : out;
}

/** The first issue, by path; the rest counted. Zod messages name types and options, never values. */
function describeIssues(error: z.ZodError): string {
  const [first, ...rest] = error.issues;
  if (!first) return 'invalid shape';
  const message = first.message.replace(/^Invalid input: /, '');
  const more = rest.length > 0 ? ` (and ${rest.length} more issue${rest.length > 1 ? 's' : ''})` : '';
  return `${formatPath(first.path)}: ${message}${more}`;
}

/** Decodes an already-parsed JSON value, or throws `DecodeError('bad_shape')` naming the path. */
export function decodeValue<S extends z.ZodType>(endpoint: string, schema: S, value: unknown, httpStatus?: number): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new DecodeError(endpoint, 'bad_shape', describeIssues(r.error), httpStatus);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/** A 2xx body must be UTF-8 JSON; anything else is `not_json`. */
export function parseSuccessBody(endpoint: string, res: HttpResponse): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(res.body);
  } catch {
    throw new DecodeError(endpoint, 'not_json', `body is not valid UTF-8 (${res.body.length} bytes)`, res.status);
  }
  const parsed = parseJson(text);
  if (!parsed.ok) throw new DecodeError(endpoint, 'not_json', parsed.error, res.status);
  return parsed.value;
}

/** The RESTError envelope of a non-2xx answer, or undefined when the body is not one. */
export function decodeRestErrorBody(body: Buffer): RestErrorBody | undefined {
  const parsed = parseJson(lenientUtf8.decode(body));
  if (!parsed.ok) return undefined;
  const r = RestErrorEnvelopeSchema.safeParse(parsed.value);
  return r.success ? r.data.error : undefined;
}

/** Non-2xx: a `RestError` when the spec's envelope is there, else `DecodeError('bad_status')`. */
export function errorForStatus(endpoint: string, res: HttpResponse): RestError | DecodeError {
  const body = decodeRestErrorBody(res.body);
  if (body) return new RestError(endpoint, res.status, body);
  const ct = res.headers['content-type'];
  const kind = typeof ct === 'string' ? ct.split(';')[0]!.trim().slice(0, 60) : 'no content-type';
  return new DecodeError(endpoint, 'bad_status', `HTTP ${res.status} without a RESTError envelope (${kind}, ${res.body.length} bytes)`, res.status);
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The whole answer of a REST read: status check, JSON parse, shape check. */
export function decodeResponse<S extends z.ZodType>(endpoint: string, res: HttpResponse, schema: S): z.output<S> {
  if (!isSuccess(res.status)) throw errorForStatus(endpoint, res);
  return decodeValue(endpoint, schema, parseSuccessBody(endpoint, res), res.status);
}

/**
 * The answer of an action (exchange, and the REST schedule-cancel): `ok` is returned, `err` throws
 * an `ActionError` classified from its text (an HTTP 200 `err` is a refusal, never a success),
 * anything else is a `DecodeError`.
 */
export function decodeActionResponse(endpoint: string, res: HttpResponse): ActionOk {
  if (!isSuccess(res.status)) throw errorForStatus(endpoint, res);
  const answer = decodeValue(endpoint, ActionAnswerSchema, parseSuccessBody(endpoint, res), res.status);
  if (answer.status === 'ok') {
    const ok: ActionOk = { status: 'ok' };
    if (answer.response !== undefined) ok.response = answer.response;
    return ok;
  }
  const text = typeof answer.response === 'string' ? answer.response : toJson(answer.response ?? null);
  const reason = typeof answer.response === 'string' ? classifyActionError(text) : 'other';
  throw new ActionError(endpoint, reason, text);
}
