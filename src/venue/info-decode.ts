import { z } from 'zod';
import { ADDRESS_RE } from './address.js';
import { ASSUMED } from './assumptions.js';
import { isDecimal } from './decimal.js';
import { decodeLenient, type ReadContract } from './decode.js';
import { DecodeError, truncate } from './errors.js';

/**
 * Decoders for the venue's info endpoint (`POST {exchange_url}/info`, Hyperliquid's info API), in
 * the venue's own format (camelCase, numbers either as JSON numbers or strings). The schemas name
 * only the fields the keeper reads; everything else is dropped. They are applied like the service's
 * answers (tolerant.ts): `null` is absent, unknown keys are dropped, a field that does not fit is
 * removed and the rest kept, and only what the keeper acts on fails closed, as
 * `DecodeError('bad_shape')` naming the path:
 *
 * - open orders: the answer is a list and every element an object (each one is an order the
 *   cancel hits: the count is what `arm_when: orders_open` acts on);
 * - clearinghouseState: `assetPositions`, each element and its `position` (the positions a fired
 *   cancel leaves open are counted and reported);
 * - spotClearinghouseState: `balances` and each element;
 * - userRole: `role` (a string), and for a subaccount `data.master` (the account armed through
 *   `vaultAddress`); an unknown role is kept as `unknown`, never read as a plain user;
 * - userRateLimit: `cumVlm`, `nRequestsUsed`, `nRequestsCap` (the volume gate and the headroom);
 * - extraAgents: the list, each element, its `address` and (when present) `validUntil` (whether our
 *   approval landed, and when it lapses).
 *
 * `decodeInfo*` take an already-parsed JSON value (the simulator can check its own answers with
 * them); `InfoClient` (info.ts) adds the HTTP status and body checks.
 */

/** The request types the client sends; each is also the suffix of its endpoint label. */
export const INFO_REQUEST_TYPES = [
  'frontendOpenOrders',
  'openOrders',
  'clearinghouseState',
  'spotClearinghouseState',
  'userRole',
  'userRateLimit',
  'extraAgents',
] as const;
export type InfoRequestType = (typeof INFO_REQUEST_TYPES)[number];
export type OpenOrdersType = Extract<InfoRequestType, 'frontendOpenOrders' | 'openOrders'>;

/** `info:openOrders` etc.: the error endpoint and the metric label of one request type. */
export type InfoEndpoint = `info:${InfoRequestType}`;
export const INFO_ENDPOINTS: readonly InfoEndpoint[] = INFO_REQUEST_TYPES.map((t) => `info:${t}` as const);
export function infoEndpoint(type: InfoRequestType): InfoEndpoint {
  return `info:${type}`;
}

// ---- numbers in either form (ASSUMED.infoNumbersEitherForm) ----

/** A plain decimal's text, from a decimal string or a finite JSON number. */
const infoDecimal = z
  .union([z.string(), z.number()], { error: (iss) => `expected decimal string or number, received ${jsonKind(iss.input)}` })
  .transform((v) => (typeof v === 'number' ? String(v) : v))
  .pipe(z.string().refine((v) => isDecimal(v), { error: 'expected a plain decimal' }));

/** A non-negative safe integer, from a JSON number or a string of digits. */
const infoUint = z
  .union([z.number(), z.string().regex(/^\d{1,16}$/)], { error: (iss) => `expected integer or digit string, received ${jsonKind(iss.input)}` })
  .transform((v) => (typeof v === 'string' ? Number(v) : v))
  .pipe(z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER));

const address = z.string().regex(ADDRESS_RE, { error: 'expected a 0x address of 40 hex digits' });

function jsonKind(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

// ---- schemas (the venue's shapes, only the fields read) ----

/** One open order, from `openOrders` or `frontendOpenOrders`. `side`: `B` bid (buy), `A` ask (sell). */
export const InfoOpenOrderSchema = z.object({
  oid: infoUint.optional(),
  coin: z.string().optional(),
  side: z.enum(['A', 'B']).optional(),
  sz: infoDecimal.optional(),
  limitPx: infoDecimal.optional(),
  timestamp: infoUint.optional(),
});
export const InfoOpenOrdersSchema = z.array(InfoOpenOrderSchema);

export const InfoPositionSchema = z.object({
  coin: z.string().optional(),
  /** Signed size: negative is short. */
  szi: infoDecimal.optional(),
  entryPx: infoDecimal.optional(),
  positionValue: infoDecimal.optional(),
  unrealizedPnl: infoDecimal.optional(),
});
export const InfoAssetPositionSchema = z.object({ position: InfoPositionSchema });
export const InfoClearinghouseStateSchema = z.object({
  assetPositions: z.array(InfoAssetPositionSchema),
  marginSummary: z.object({ accountValue: infoDecimal.optional() }).optional(),
  withdrawable: infoDecimal.optional(),
});

export const InfoSpotBalanceSchema = z.object({
  coin: z.string().optional(),
  total: infoDecimal.optional(),
  hold: infoDecimal.optional(),
});
export const InfoSpotClearinghouseStateSchema = z.object({ balances: z.array(InfoSpotBalanceSchema) });

/** `data` is read by role below: its shape differs per role and an unknown role's must not fail. */
export const InfoUserRoleSchema = z.object({ role: z.string(), data: z.unknown().optional() });

export const InfoUserRateLimitSchema = z.object({
  cumVlm: infoDecimal,
  nRequestsUsed: infoUint,
  nRequestsCap: infoUint,
  nRequestsSurplus: infoUint.optional(),
});

export const InfoExtraAgentSchema = z.object({
  address,
  name: z.string().optional(),
  /** Venue ms; absent when the venue states no expiry. */
  validUntil: infoUint.optional(),
});
export const InfoExtraAgentsSchema = z.array(InfoExtraAgentSchema);

/** What fails closed in each answer (see the header). The root of every answer always does. */
const CONTRACTS = {
  openOrders: { critical: [['*']] },
  clearinghouseState: { critical: [['assetPositions'], ['assetPositions', '*'], ['assetPositions', '*', 'position']] },
  spotClearinghouseState: { critical: [['balances'], ['balances', '*']] },
  userRole: { critical: [['role']] },
  userRateLimit: { critical: [['cumVlm'], ['nRequestsUsed'], ['nRequestsCap']] },
  extraAgents: { critical: [['*'], ['*', 'address'], ['*', 'validUntil']] },
} as const satisfies Record<string, ReadContract>;

// ---- what the reader returns ----

export type InfoOpenOrder = z.output<typeof InfoOpenOrderSchema>;
export interface InfoOpenOrders {
  /** Which request type answered. */
  type: OpenOrdersType;
  orders: InfoOpenOrder[];
  /** Orders the scheduled cancel would hit: what the keeper acts on. */
  count: number;
}

export type InfoPosition = z.output<typeof InfoPositionSchema>;
export interface InfoClearinghouseState {
  positions: InfoPosition[];
  /** `marginSummary.accountValue`, USDC. */
  accountValue?: string;
  withdrawable?: string;
}

export type InfoSpotBalance = z.output<typeof InfoSpotBalanceSchema>;
export interface InfoSpotClearinghouseState {
  balances: InfoSpotBalance[];
}

export type InfoKnownRole = (typeof ASSUMED.infoUserRoles)[number];
export type InfoRole = InfoKnownRole | 'unknown';
export interface InfoUserRole {
  role: InfoRole;
  /** The venue's word, verbatim (bounded): says what an `unknown` role was. */
  roleText: string;
  /** A subaccount's master (`data.master`, always set for `subAccount`), or an agent's (`data.user`). */
  master?: string;
}

export type InfoUserRateLimit = z.output<typeof InfoUserRateLimitSchema>;
export type InfoExtraAgent = z.output<typeof InfoExtraAgentSchema>;

// ---- decoding ----

export function decodeInfoOpenOrders(value: unknown, type: OpenOrdersType = ASSUMED.infoOpenOrdersType, httpStatus?: number): InfoOpenOrders {
  const orders = decodeLenient(infoEndpoint(type), InfoOpenOrdersSchema, value, CONTRACTS.openOrders, httpStatus);
  // The top-level list only (ASSUMED.infoOpenOrdersCountTopLevel): `children` are listed there too.
  // An outcome order's dual (the merged book) shares its oid: one order (ASSUMED.outcomeDualSharesOid).
  const distinct = distinctOrders(orders, (o) => (o.oid === undefined ? undefined : String(o.oid)));
  return { type, orders: distinct, count: distinct.length };
}

/**
 * One entry per order: the first of each id kept (a primary and its dual share the id,
 * ASSUMED.outcomeDualSharesOid); an entry without an id is kept on its own.
 */
export function distinctOrders<T>(orders: readonly T[], idOf: (o: T) => string | undefined): T[] {
  const seen = new Set<string>();
  return orders.filter((o) => {
    const id = idOf(o);
    if (id === undefined) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

export function decodeInfoClearinghouseState(value: unknown, httpStatus?: number): InfoClearinghouseState {
  const s = decodeLenient(infoEndpoint('clearinghouseState'), InfoClearinghouseStateSchema, value, CONTRACTS.clearinghouseState, httpStatus);
  const out: InfoClearinghouseState = { positions: s.assetPositions.map((a) => a.position) };
  if (s.marginSummary?.accountValue !== undefined) out.accountValue = s.marginSummary.accountValue;
  if (s.withdrawable !== undefined) out.withdrawable = s.withdrawable;
  return out;
}

export function decodeInfoSpotClearinghouseState(value: unknown, httpStatus?: number): InfoSpotClearinghouseState {
  const s = decodeLenient(infoEndpoint('spotClearinghouseState'), InfoSpotClearinghouseStateSchema, value, CONTRACTS.spotClearinghouseState, httpStatus);
  return { balances: s.balances };
}

const KNOWN_ROLES: ReadonlySet<string> = new Set(ASSUMED.infoUserRoles);

export function decodeInfoUserRole(value: unknown, httpStatus?: number): InfoUserRole {
  const endpoint = infoEndpoint('userRole');
  const r = decodeLenient(endpoint, InfoUserRoleSchema, value, CONTRACTS.userRole, httpStatus);
  const role: InfoRole = KNOWN_ROLES.has(r.role) ? (r.role as InfoKnownRole) : 'unknown';
  const out: InfoUserRole = { role, roleText: truncate(r.role, 40) };
  const data = r.data !== null && typeof r.data === 'object' && !Array.isArray(r.data) ? (r.data as Record<string, unknown>) : undefined;
  if (role === 'subAccount') {
    // Armed through `vaultAddress` and signed for by its master's agent: without a master we
    // cannot arm it, so this fails closed (never read as a main account).
    const master = data?.[ASSUMED.infoSubAccountMasterField];
    if (typeof master !== 'string' || !ADDRESS_RE.test(master)) {
      const why = master === undefined || master === null ? 'absent or null' : 'not a 0x address of 40 hex digits';
      throw new DecodeError(endpoint, 'bad_shape', `data.${ASSUMED.infoSubAccountMasterField}: required for a subAccount, but ${why}`, httpStatus);
    }
    out.master = master;
  } else if (role === 'agent' && typeof data?.user === 'string' && ADDRESS_RE.test(data.user)) {
    out.master = data.user;
  }
  return out;
}

export function decodeInfoUserRateLimit(value: unknown, httpStatus?: number): InfoUserRateLimit {
  return decodeLenient(infoEndpoint('userRateLimit'), InfoUserRateLimitSchema, value, CONTRACTS.userRateLimit, httpStatus);
}

export function decodeInfoExtraAgents(value: unknown, httpStatus?: number): InfoExtraAgent[] {
  return decodeLenient(infoEndpoint('extraAgents'), InfoExtraAgentsSchema, value, CONTRACTS.extraAgents, httpStatus);
}
