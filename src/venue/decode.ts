import { z } from 'zod';
import { classifyActionError } from './classify.js';
import { isDecimal } from './decimal.js';
import { ASSUMED } from './assumptions.js';
import { decodeTolerant, type CriticalPath } from './tolerant.js';
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
 * These schemas are the spec, exactly: every field optional (spec 1.5); `null` only where types.ts
 * says `| null` (the spec's "null when…"); decimals are strings in decimal.ts's grammar, so a JSON
 * number where a decimal is due fails (a float would already have lost precision); enums exact;
 * unknown keys stripped everywhere (zod's object default), so callers only ever see fields the
 * spec names. `decodeValue` applies them strictly: the simulator's conformance checker. Answers
 * from the venue are read through `decodeResponse`/`decodeActionResponse`, which apply them
 * leniently (tolerant.ts) and fail closed only on the fields the keeper acts on.
 *
 * Datetimes are accepted as any string: they are informational for the keeper, and refusing a
 * whole orders page over a timestamp variant would cost more than it protects.
 */

const DECIMAL_MSG = 'expected decimal string';

/** The JSON type of a value, for messages that must not quote the value itself. */
function jsonKind(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

// The one decimal grammar of the code base (decimal.ts): what decodes here, the sums can add.
const decimal = z
  .string({ error: (iss) => `${DECIMAL_MSG}, received ${jsonKind(iss.input)}` })
  .refine((v) => isDecimal(v), { error: DECIMAL_MSG });
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

/** What the keeper acts on in an answer: problems there fail the read (see tolerant.ts). */
export interface ReadContract {
  /** Paths where a value that does not fit is an error, not something to skip. */
  critical?: readonly CriticalPath[];
  /** Top-level keys that must be present (after `null` is read as absent). */
  required?: readonly string[];
}

/** Tolerant reading of a value against a strict schema, failing closed only on `contract`. */
export function decodeLenient<S extends z.ZodType>(endpoint: string, schema: S, value: unknown, contract: ReadContract = {}, httpStatus?: number): z.output<S> {
  const out = decodeTolerant(endpoint, schema, value, contract.critical ?? [], httpStatus, describeIssue);
  for (const key of contract.required ?? []) {
    if ((out as Record<string, unknown>)[key] === undefined) throw new DecodeError(endpoint, 'bad_shape', `${key}: required, but absent or null`, httpStatus);
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${formatPath(issue.path)}: ${issue.message.replace(/^Invalid input: /, '')}`;
}

const TolerantEnvelopeSchema = z.object({
  error: z.object({
    code: int.optional(),
    status: z.string().optional(),
    message: z.string().optional(),
    details: z.array(z.unknown()).optional(),
  }),
});
const TolerantRateLimitSchema = z.object({
  type: z.literal('rate_limit'),
  limit: int.optional(),
  reason: z.string().optional(),
  retry_after_seconds: z.number().optional(),
  scope: z.string().optional(),
  window_seconds: int.optional(),
});

/** `Retry-After` in seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(header: unknown, nowMs?: number): number | undefined {
  if (typeof header !== 'string') return undefined;
  const t = header.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const at = Date.parse(t);
  if (nowMs !== undefined && Number.isFinite(at)) return Math.max(0, Math.ceil((at - nowMs) / 1000));
  return undefined;
}

/**
 * The RESTError envelope of a non-2xx answer, read tolerantly: an unknown `status` name or detail
 * type is kept or dropped, never fatal; a `rate_limit` detail missing fields is completed from
 * `Retry-After` (else ASSUMED) and the global scope (the one that holds everything). Undefined when
 * the body is not an envelope at all (no `error` object).
 */
export function decodeRestErrorBody(body: Buffer, httpStatus?: number, retryAfterHeader?: unknown): RestErrorBody | undefined {
  const parsed = parseJson(lenientUtf8.decode(body));
  if (!parsed.ok) return undefined;
  const r = TolerantEnvelopeSchema.safeParse(withoutNullsShallow(parsed.value));
  if (!r.success) return undefined;
  const e = r.data.error;
  const details: ErrorDetail[] = [];
  for (const d of e.details ?? []) {
    const type = d !== null && typeof d === 'object' ? (d as { type?: unknown }).type : undefined;
    if (type === 'rate_limit') {
      const rl = TolerantRateLimitSchema.safeParse(withoutNullsShallow(d));
      if (!rl.success) continue;
      details.push(completeRateLimit(rl.data, retryAfterHeader));
    } else if (type === 'field_violation' || type === 'dependency') {
      const known = ErrorDetailSchema.safeParse(d);
      if (known.success) details.push(known.data);
    }
  }
  if (httpStatus === 429 && !details.some((d) => d.type === 'rate_limit')) details.push(completeRateLimit({}, retryAfterHeader));
  const status = typeof e.status === 'string' ? e.status : 'UNKNOWN';
  return { code: e.code ?? httpStatus ?? 0, status: status as RestErrorBody['status'], message: e.message ?? '', details };
}

function completeRateLimit(rl: Partial<z.output<typeof TolerantRateLimitSchema>>, retryAfterHeader: unknown): RateLimitDetail {
  const retry = rl.retry_after_seconds ?? retryAfterSeconds(retryAfterHeader) ?? ASSUMED.rateLimitRetryAfterDefaultSeconds;
  return {
    type: 'rate_limit',
    // 0: not announced; the budget only adopts announced numbers.
    limit: rl.limit ?? 0,
    reason: rl.reason ?? 'unknown',
    retry_after_seconds: Math.max(0, Math.ceil(retry)),
    scope: rl.scope === 'endpoint' ? 'endpoint' : 'global',
    window_seconds: rl.window_seconds ?? 0,
  };
}

function withoutNullsShallow(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== null) out[k] = k === 'error' ? withoutNullsShallow(x) : x;
  return out;
}

/**
 * Non-2xx: a `RestError` when the venue's envelope is there, else `DecodeError('bad_status')`. A
 * 429 without one (a proxy's page, a body cut short) is still a RestError, marked as not written
 * by the venue: it holds the scope from `Retry-After`, else for ASSUMED's default.
 */
export function errorForStatus(endpoint: string, res: HttpResponse): RestError | DecodeError {
  const body = decodeRestErrorBody(res.body, res.status, res.headers['retry-after']);
  if (body) return new RestError(endpoint, res.status, body);
  if (res.status === 429) {
    const synthesized: RestErrorBody = { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'HTTP 429 without a RESTError envelope', details: [completeRateLimit({}, res.headers['retry-after'])] };
    return new RestError(endpoint, 429, synthesized, { venueWrote: false });
  }
  const ct = res.headers['content-type'];
  const kind = typeof ct === 'string' ? ct.split(';')[0]!.trim().slice(0, 60) : 'no content-type';
  const said = kind === 'text/plain' ? plainTextGist(res.body) : undefined;
  return new DecodeError(endpoint, 'bad_status', `HTTP ${res.status} without a RESTError envelope (${kind}, ${res.body.length} bytes)${said ? `: ${said}` : ''}`, res.status);
}

/**
 * The venue refuses a body it cannot read with 422 and one line of plain text ("Failed to
 * deserialize the JSON body into the target type"): the only clue an operator gets to what was
 * wrong, so it is quoted. Only a short text, printable ASCII, cut at 160 characters: an HTML page or
 * a binary answer is described, never echoed into the logs.
 */
function plainTextGist(body: Buffer): string | undefined {
  if (body.length === 0 || body.length > 512) return undefined;
  const text = body.toString('utf8').trim();
  if (!/^[\x20-\x7e]+$/.test(text)) return undefined;
  return JSON.stringify(text.length > 160 ? `${text.slice(0, 160)}…` : text);
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The whole answer of a REST read: status check, JSON parse, tolerant shape check. */
export function decodeResponse<S extends z.ZodType>(endpoint: string, res: HttpResponse, schema: S, contract: ReadContract = {}): z.output<S> {
  if (!isSuccess(res.status)) throw errorForStatus(endpoint, res);
  return decodeLenient(endpoint, schema, parseSuccessBody(endpoint, res), contract, res.status);
}

/** An action answer's `status` is what we act on: anything but `ok`/`err` there fails closed. */
const ACTION_CONTRACT: ReadContract = { critical: [['status']], required: ['status'] };

/**
 * The answer of an action (exchange, and the REST schedule-cancel): `ok` is returned, `err` throws
 * an `ActionError` classified from its text (an HTTP 200 `err` is a refusal, never a success),
 * anything else is a `DecodeError`.
 */
export function decodeActionResponse(endpoint: string, res: HttpResponse): ActionOk {
  if (!isSuccess(res.status)) throw errorForStatus(endpoint, res);
  const answer = decodeLenient(endpoint, ActionAnswerSchema, parseSuccessBody(endpoint, res), ACTION_CONTRACT, res.status);
  if (answer.status === 'ok') {
    const ok: ActionOk = { status: 'ok' };
    if (answer.response !== undefined) ok.response = answer.response;
    return ok;
  }
  const text = typeof answer.response === 'string' ? answer.response : toJson(answer.response ?? null);
  const reason = typeof answer.response === 'string' ? classifyActionError(text) : 'other';
  throw new ActionError(endpoint, reason, text);
}
