/**
 * Shape validation of a POSTed action body, before any signature work.
 *
 * A malformed body is the caller's bug, not a venue refusal. On the service's REST schedule-cancel
 * path it answers 400 with the spec's RESTError envelope and a `field_violation` naming the
 * offending field (dotted path); on the venue's `/exchange` the venue cannot deserialize it and
 * answers 422 with its plain text (state.ts). Only bodies that could have been signed get as far as
 * signature recovery.
 */
import type { Network, Signature, VenueChain } from '../../venue/types.js';
import { badRequest, normalizeAddress, type SimResponse } from '../http-util.js';
import { chainName, type ChainField } from '../../venue/signing/user-signed.js';
import { VENUE_TEXTS } from './texts.js';

interface Common {
  /** The action exactly as it arrived: its key order and values are what was hashed. */
  action: Record<string, unknown>;
  nonce: number;
  signature: Signature;
}

export interface ScheduleCancelBody extends Common {
  kind: 'scheduleCancel';
  /** Absent: clear the schedule. */
  time?: number;
  vaultAddress?: string;
  expiresAfter?: number;
}

export interface ApproveAgentBody extends Common {
  kind: 'approveAgent';
  /** The name the network field travelled under (the venue's `hyperliquidChain`; `venueChain` under `spec_dialect`). */
  chainField: ChainField;
  agentAddress: string;
  /** As signed: "" when absent (the unnamed agent), possibly with a ` valid_until <ms>` suffix. */
  agentName: string;
}

export interface ApproveBuilderFeeBody extends Common {
  kind: 'approveBuilderFee';
  chainField: ChainField;
  maxFeeRate: string;
  builder: string;
}

/** One order of an `order` action, as the venue's SDKs post it (`{a, b, p, s, r, t, c?}`). */
export interface OrderWire {
  /** Asset id (an outcome side: catalog/asset-id.ts). */
  a: number;
  /** Buy (true) or sell. */
  b: boolean;
  /** Limit price and size, decimal strings as sent (checked per order: the venue answers a per-order error). */
  p: string;
  s: string;
  /** Reduce-only. */
  r: boolean;
  /** `limit` with its time in force, or a trigger (TP/SL) order. */
  t: { limit: { tif: 'Gtc' | 'Ioc' | 'Alo' | 'FrontendMarket' } } | { trigger: Record<string, unknown> };
  /** Client order id: 0x + 32 hex digits. */
  c?: string;
}

interface L1Common extends Common {
  vaultAddress?: string;
  expiresAfter?: number;
}

export interface OrderBody extends L1Common {
  kind: 'order';
  orders: OrderWire[];
  grouping: 'na' | 'normalTpsl' | 'positionTpsl';
  /** A builder and its fee in tenths of a basis point. */
  builder?: { b: string; f: number };
}

export interface CancelBody extends L1Common {
  kind: 'cancel';
  cancels: Array<{ a: number; o: number }>;
}

export type L1Body = ScheduleCancelBody | OrderBody | CancelBody;

export type ParsedBody = ScheduleCancelBody | ApproveAgentBody | ApproveBuilderFeeBody | OrderBody | CancelBody;

/**
 * `error`: the body fails shape validation, in the service's envelope (what the REST schedule-cancel
 * path answers; `/exchange` answers the venue's 422 text instead, state.ts). `venueText`, when set:
 * the venue reads such a body but refuses the action, answering HTTP 200 `status:"err"` with it.
 */
export type ParseResult = { ok: ParsedBody } | { error: SimResponse; type?: string; venueText?: string };

/** How the simulator reads a user-signed action's network field. */
export interface ChainDialect {
  /**
   * Accept the spec's `venueChain` as well as the venue's `hyperliquidChain` (the `spec_dialect`
   * profile). Default false: only `hyperliquidChain`, as the venue deserializes it.
   */
  specChainField?: boolean;
}

const HEX_WORD_RE = /^0x[0-9a-fA-F]{1,64}$/;
const HEX_RE = /^0x[0-9a-fA-F]+$/;
/** A percent string such as "0.001%" (VENUE.md). */
const FEE_RATE_RE = /^\d+(?:\.\d+)?%$/;
const SIGNATURE_V = new Set([0, 1, 27, 28]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isUint(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function fail(field: string, reason: string, message: string, type?: string): ParseResult {
  const r: ParseResult = { error: badRequest(field, reason, message) };
  if (type !== undefined) r.type = type;
  return r;
}

export function parseActionBody(body: unknown, via: 'rest' | 'exchange', network: Network, dialect: ChainDialect = {}): ParseResult {
  if (!isPlainObject(body)) return fail('body', 'not_an_object', 'request body must be a JSON object');
  const action = body.action;
  if (action === undefined) return fail('action', 'required', 'action is required');
  if (!isPlainObject(action)) return fail('action', 'not_an_object', 'action must be an object');
  const type = action.type;
  if (type === undefined) return fail('action.type', 'required', 'action.type is required');
  if (typeof type !== 'string') return fail('action.type', 'not_a_string', 'action.type must be a string');

  if (body.nonce === undefined) return fail('nonce', 'required', 'nonce is required', type);
  if (!isUint(body.nonce)) return fail('nonce', 'not_an_integer', 'nonce must be a non-negative integer', type);
  const nonce = body.nonce;

  const sig = body.signature;
  if (sig === undefined) return fail('signature', 'required', 'signature is required', type);
  if (!isPlainObject(sig)) return fail('signature', 'not_an_object', 'signature must be an object {r, s, v}', type);
  for (const k of ['r', 's'] as const) {
    if (sig[k] === undefined) return fail(`signature.${k}`, 'required', `signature.${k} is required`, type);
    if (typeof sig[k] !== 'string' || !HEX_WORD_RE.test(sig[k])) {
      return fail(`signature.${k}`, 'not_hex', `signature.${k} must be 0x followed by at most 64 hex digits`, type);
    }
  }
  if (sig.v === undefined) return fail('signature.v', 'required', 'signature.v is required', type);
  if (typeof sig.v !== 'number' || !SIGNATURE_V.has(sig.v)) return fail('signature.v', 'invalid', 'signature.v must be 27 or 28', type);
  const signature: Signature = { r: sig.r as `0x${string}`, s: sig.s as `0x${string}`, v: sig.v };

  // The official Python SDK posts `"vaultAddress": null` and `"expiresAfter": null` when unused:
  // null means absent for these two (it hashes as "no vault" / "no expiry").
  let vaultAddress: string | undefined;
  if (body.vaultAddress !== undefined && body.vaultAddress !== null) {
    vaultAddress = typeof body.vaultAddress === 'string' ? normalizeAddress(body.vaultAddress) : undefined;
    if (vaultAddress === undefined) return fail('vaultAddress', 'not_an_address', 'vaultAddress must be 0x followed by 40 hex digits', type);
  }
  let expiresAfter: number | undefined;
  if (body.expiresAfter !== undefined && body.expiresAfter !== null) {
    if (!isUint(body.expiresAfter)) return fail('expiresAfter', 'not_an_integer', 'expiresAfter must be a non-negative integer', type);
    expiresAfter = body.expiresAfter;
  }

  const common: Common = { action, nonce, signature };

  if (via === 'rest' && (type === 'approveAgent' || type === 'approveBuilderFee' || type === 'order' || type === 'cancel')) {
    return fail('action.type', 'unsupported_action_type', 'this endpoint takes action.type "scheduleCancel" only', type);
  }

  switch (type) {
    case 'scheduleCancel': {
      const out: ScheduleCancelBody = { kind: 'scheduleCancel', ...common };
      if ('time' in action) {
        // Never null (VENUE.md: omit the key to clear), never a string or a fraction: the venue
        // hashes and stores a uint64.
        if (!isUint(action.time)) {
          return fail('action.time', 'not_an_integer', 'action.time must be an integer of unix milliseconds (omit the key to clear)', type);
        }
        out.time = action.time;
      }
      if (vaultAddress !== undefined) out.vaultAddress = vaultAddress;
      if (expiresAfter !== undefined) out.expiresAfter = expiresAfter;
      return { ok: out };
    }
    case 'order':
      return parseOrder(action, { ...common, ...(vaultAddress !== undefined ? { vaultAddress } : {}), ...(expiresAfter !== undefined ? { expiresAfter } : {}) });
    case 'cancel':
      return parseCancel(action, { ...common, ...(vaultAddress !== undefined ? { vaultAddress } : {}), ...(expiresAfter !== undefined ? { expiresAfter } : {}) });
    case 'approveAgent':
    case 'approveBuilderFee': {
      if (body.vaultAddress !== undefined && body.vaultAddress !== null) {
        return fail('vaultAddress', 'not_allowed', `${type} is signed by the master and takes no vaultAddress`, type);
      }
      if (expiresAfter !== undefined) return fail('expiresAfter', 'not_allowed', `${type} takes no expiresAfter`, type);
      const chain = checkChain(action, network, type, dialect);
      if ('error' in chain) return chain;
      if (typeof action.signatureChainId !== 'string' || !HEX_RE.test(action.signatureChainId)) {
        return fail('action.signatureChainId', 'not_hex', 'action.signatureChainId must be a hexadecimal string such as "0x66eee"', type);
      }
      if (action.nonce === undefined) return fail('action.nonce', 'required', 'action.nonce is required', type);
      if (action.nonce !== nonce) return fail('action.nonce', 'must_equal_nonce', 'action.nonce must equal the body nonce', type);
      if (type === 'approveAgent') {
        const agentAddress = typeof action.agentAddress === 'string' ? normalizeAddress(action.agentAddress) : undefined;
        if (agentAddress === undefined) return fail('action.agentAddress', 'not_an_address', 'action.agentAddress must be 0x followed by 40 hex digits', type);
        const rawName = action.agentName;
        if (rawName !== undefined && rawName !== null && typeof rawName !== 'string') {
          return fail('action.agentName', 'not_a_string', 'action.agentName must be a string', type);
        }
        // An absent (or null) agentName is signed as "" and means the unnamed agent.
        const agentName = typeof rawName === 'string' ? rawName : '';
        return { ok: { kind: 'approveAgent', ...common, chainField: chain.chainField, agentAddress, agentName } };
      }
      if (typeof action.maxFeeRate !== 'string' || !FEE_RATE_RE.test(action.maxFeeRate)) {
        return fail('action.maxFeeRate', 'invalid_fee_rate', 'action.maxFeeRate must be a percent string such as "0.001%"', type);
      }
      const builder = typeof action.builder === 'string' ? normalizeAddress(action.builder) : undefined;
      if (builder === undefined) return fail('action.builder', 'not_an_address', 'action.builder must be 0x followed by 40 hex digits', type);
      return { ok: { kind: 'approveBuilderFee', ...common, chainField: chain.chainField, maxFeeRate: action.maxFeeRate, builder } };
    }
    default:
      return fail('action.type', 'unknown_action_type', `unknown action type ${JSON.stringify(type).slice(0, 64)}`, type);
  }
}

const TIFS = new Set(['Gtc', 'Ioc', 'Alo', 'FrontendMarket']);
const GROUPINGS = new Set(['na', 'normalTpsl', 'positionTpsl']);
const CLOID_RE = /^0x[0-9a-fA-F]{32}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/**
 * `{type:"order", orders:[{a,b,p,s,r,t,c?}], grouping, builder?}`: what the venue must be able to
 * deserialize (field types, the tif and grouping enums, a cloid's 16 bytes). Whether a price or a
 * size is acceptable, and whether the asset exists, is judged per order after the signature
 * (state.ts), as the venue answers those with a per-order error status.
 */
function parseOrder(action: Record<string, unknown>, common: L1Common): ParseResult {
  const type = 'order';
  if (!Array.isArray(action.orders)) return fail('action.orders', 'not_an_array', 'action.orders must be an array', type);
  const orders: OrderWire[] = [];
  for (const [i, raw] of action.orders.entries()) {
    const f = `action.orders.${i}`;
    if (!isPlainObject(raw)) return fail(f, 'not_an_object', `${f} must be an object`, type);
    if (!isUint(raw.a)) return fail(`${f}.a`, 'not_an_integer', `${f}.a must be an asset id`, type);
    for (const k of ['b', 'r'] as const) if (typeof raw[k] !== 'boolean') return fail(`${f}.${k}`, 'not_a_boolean', `${f}.${k} must be a boolean`, type);
    for (const k of ['p', 's'] as const) if (typeof raw[k] !== 'string') return fail(`${f}.${k}`, 'not_a_string', `${f}.${k} must be a decimal string`, type);
    const t = raw.t;
    if (!isPlainObject(t) || Object.keys(t).length !== 1) return fail(`${f}.t`, 'invalid', `${f}.t must be {limit: {tif}} or {trigger: {...}}`, type);
    if (isPlainObject(t.limit)) {
      if (typeof t.limit.tif !== 'string' || !TIFS.has(t.limit.tif)) return fail(`${f}.t.limit.tif`, 'invalid_enum', `${f}.t.limit.tif must be Gtc, Ioc, Alo or FrontendMarket`, type);
    } else if (isPlainObject(t.trigger)) {
      const tr = t.trigger;
      if (typeof tr.isMarket !== 'boolean' || typeof tr.triggerPx !== 'string' || (tr.tpsl !== 'tp' && tr.tpsl !== 'sl')) {
        return fail(`${f}.t.trigger`, 'invalid', `${f}.t.trigger must be {isMarket, triggerPx, tpsl}`, type);
      }
    } else {
      return fail(`${f}.t`, 'invalid', `${f}.t must be {limit: {tif}} or {trigger: {...}}`, type);
    }
    if (raw.c !== undefined && raw.c !== null && (typeof raw.c !== 'string' || !CLOID_RE.test(raw.c))) {
      return fail(`${f}.c`, 'not_a_cloid', `${f}.c must be 0x followed by 32 hex digits`, type);
    }
    const o: OrderWire = { a: raw.a, b: raw.b as boolean, p: raw.p as string, s: raw.s as string, r: raw.r as boolean, t: t as OrderWire['t'] };
    if (typeof raw.c === 'string') o.c = raw.c.toLowerCase();
    orders.push(o);
  }
  const grouping = action.grouping;
  if (typeof grouping !== 'string' || !GROUPINGS.has(grouping)) return fail('action.grouping', 'invalid_enum', 'action.grouping must be na, normalTpsl or positionTpsl', type);
  const out: OrderBody = { kind: 'order', ...common, orders, grouping: grouping as OrderBody['grouping'] };
  if (action.builder !== undefined && action.builder !== null) {
    const b = action.builder;
    if (!isPlainObject(b) || typeof b.b !== 'string' || !ADDRESS_RE.test(b.b) || !isUint(b.f)) {
      return fail('action.builder', 'invalid', 'action.builder must be {b: address, f: fee in tenths of a basis point}', type);
    }
    out.builder = { b: b.b.toLowerCase(), f: b.f };
  }
  return { ok: out };
}

/** `{type:"cancel", cancels:[{a, o}]}`: asset id and order id, both unsigned integers. */
function parseCancel(action: Record<string, unknown>, common: L1Common): ParseResult {
  const type = 'cancel';
  if (!Array.isArray(action.cancels)) return fail('action.cancels', 'not_an_array', 'action.cancels must be an array', type);
  const cancels: Array<{ a: number; o: number }> = [];
  for (const [i, raw] of action.cancels.entries()) {
    const f = `action.cancels.${i}`;
    if (!isPlainObject(raw)) return fail(f, 'not_an_object', `${f} must be an object`, type);
    if (!isUint(raw.a)) return fail(`${f}.a`, 'not_an_integer', `${f}.a must be an asset id`, type);
    if (!isUint(raw.o)) return fail(`${f}.o`, 'not_an_integer', `${f}.o must be an order id`, type);
    cancels.push({ a: raw.a, o: raw.o });
  }
  return { ok: { kind: 'cancel', ...common, cancels } };
}

/**
 * The network field. The venue and its SDKs name it `hyperliquidChain` (and sign that name: the type
 * string is part of the hash); the spec calls it `venueChain`. The venue cannot deserialize an action
 * without `hyperliquidChain`, so by default one in the spec's dialect is refused as unreadable (422 on
 * `/exchange`); the `spec_dialect` profile accepts either (the signature covers whichever was sent;
 * with both, `venueChain` as before). The value must be this venue's network: a body signed for the
 * other one is read, then refused as an action (HTTP 200 `err`, VENUE_TEXTS.wrongChain).
 */
function checkChain(action: Record<string, unknown>, network: Network, type: string, dialect: ChainDialect): { chainField: ChainField } | { error: SimResponse; type?: string; venueText?: string } {
  const chainField: ChainField = dialect.specChainField === true && ('venueChain' in action || !('hyperliquidChain' in action)) ? 'venueChain' : 'hyperliquidChain';
  const field = `action.${chainField}`;
  const value = action[chainField];
  if (value === undefined) return fail(field, 'required', `${field} is required`, type) as { error: SimResponse };
  if (value !== 'Testnet' && value !== 'Mainnet') return fail(field, 'invalid_enum', `${field} must be "Testnet" or "Mainnet"`, type) as { error: SimResponse };
  const expected: VenueChain = chainName(network);
  if (value !== expected) {
    const r = fail(field, 'wrong_network', `${field} is ${value} but this venue is ${expected}`, type) as { error: SimResponse; type?: string };
    return { ...r, venueText: VENUE_TEXTS.wrongChain(value, expected) };
  }
  return { chainField };
}
