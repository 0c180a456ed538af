/**
 * Orders on the simulated CLOB: the SDK's signed order checked (shape, owner and signer against the
 * API key, tick, EIP-712 signature), then rested. There is no matching: every GTC/GTD order rests
 * until cancelled (by the user, by cancel-all or by a heartbeat lapse); FOK/FAK orders, having no
 * counterparty, are killed.
 */
import { hashTypedData, isAddress, isHex, type Hex } from 'viem';
import { z } from 'zod';
import { ORDER_TYPES, orderDomain, recoverOrderSigner, type SignedOrderStruct } from './eip712.js';
import type { ClobMarket, ClobToken, MarketIndex } from './markets.js';
import { ASSUMPTIONS, CLOB_TEXTS } from './texts.js';

const uint = z.string().regex(/^\d{1,78}$/);
const address = z.string().refine((s) => isAddress(s, { strict: false }), 'an address');

/** `POST /order`'s body as the SDK writes it (`orderToJson`). */
export const postOrderSchema = z.object({
  order: z.object({
    salt: z.union([z.number().int().nonnegative().safe(), uint]),
    maker: address,
    signer: address,
    taker: address,
    tokenId: uint,
    makerAmount: uint,
    takerAmount: uint,
    side: z.enum(['BUY', 'SELL']),
    expiration: uint,
    nonce: uint,
    feeRateBps: uint,
    signatureType: z.union([z.literal(0), z.literal(1), z.literal(2)]),
    signature: z.string().refine((s) => isHex(s), 'hex'),
  }),
  owner: z.string().min(1),
  orderType: z.enum(['GTC', 'GTD', 'FOK', 'FAK']),
  deferExec: z.boolean().optional(),
  postOnly: z.boolean().optional(),
});
export type PostOrderBody = z.infer<typeof postOrderSchema>;

/** An open order as `GET /data/orders` lists it (the SDK's `OpenOrder`). */
export interface OpenOrder {
  id: string;
  status: 'LIVE';
  owner: string;
  maker_address: string;
  market: string;
  asset_id: string;
  side: 'BUY' | 'SELL';
  original_size: string;
  size_matched: string;
  price: string;
  associate_trades: string[];
  outcome: string;
  /** Venue seconds. */
  created_at: number;
  expiration: string;
  order_type: string;
}

export type OrderCheck = { ok: true; order: OpenOrder } | { ok: false; status: number; error: string };

const AMOUNT_DECIMALS = 6n;
const ONE = 10n ** AMOUNT_DECIMALS;

/** A 6-decimal fixed-point amount as the venue writes sizes ("10", "2.5"). */
export function formatUnits6(v: bigint): string {
  const whole = v / ONE;
  const frac = (v % ONE).toString().padStart(6, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

function decimals(tick: string): bigint {
  return BigInt(tick.split('.')[1]?.length ?? 0);
}

/** Price = collateral / shares, on the market's tick; undefined when off the tick or outside (0, 1). */
function priceOf(usdc: bigint, shares: bigint, tick: string): string | undefined {
  if (shares <= 0n || usdc <= 0n || usdc >= shares) return undefined;
  const k = 10n ** decimals(tick);
  if ((usdc * k) % shares !== 0n) return undefined;
  const ticks = (usdc * k) / shares;
  const d = Number(decimals(tick));
  const text = `0.${ticks.toString().padStart(d, '0')}`.replace(/0+$/, '');
  return text === '0.' ? undefined : text;
}

export interface CheckContext {
  chainId: number;
  markets: MarketIndex;
  /** The API key the request proved, and its address (lower case). */
  apiKey: string;
  address: string;
  nowMs: number;
  /** The post-only phase after a restart: only post-only orders are taken. */
  postOnlyPhase: boolean;
}

/** Checks a posted order as the venue would, and builds its open-order record. */
export async function checkOrder(body: PostOrderBody, ctx: CheckContext): Promise<OrderCheck> {
  const o = body.order;
  const fail = (status: number, error: string): OrderCheck => ({ ok: false, status, error });
  if (body.owner !== ctx.apiKey) return fail(400, CLOB_TEXTS.ownerMismatch);
  if (o.signer.toLowerCase() !== ctx.address) return fail(400, CLOB_TEXTS.signerMismatch);
  if (o.signatureType === 0 && o.maker.toLowerCase() !== o.signer.toLowerCase()) return fail(400, CLOB_TEXTS.invalidSignature);
  const found = ctx.markets.token(o.tokenId);
  if (!found) return fail(400, CLOB_TEXTS.invalidTokenId);
  if (body.postOnly === true && body.orderType !== 'GTC' && body.orderType !== 'GTD') return fail(400, CLOB_TEXTS.invalidPayload);
  if (ctx.postOnlyPhase && body.postOnly !== true) return fail(400, ASSUMPTIONS.postOnlyText);

  const struct: SignedOrderStruct = {
    salt: BigInt(o.salt),
    maker: o.maker as Hex,
    signer: o.signer as Hex,
    taker: o.taker as Hex,
    tokenId: BigInt(o.tokenId),
    makerAmount: BigInt(o.makerAmount),
    takerAmount: BigInt(o.takerAmount),
    expiration: BigInt(o.expiration),
    nonce: BigInt(o.nonce),
    feeRateBps: BigInt(o.feeRateBps),
    side: o.side === 'BUY' ? 0 : 1,
    signatureType: o.signatureType,
  };
  const signer = await recoverOrderSigner(ctx.chainId, found.market.negRisk, struct, o.signature as Hex);
  if (!signer || signer.toLowerCase() !== ctx.address) return fail(400, CLOB_TEXTS.invalidSignature);

  const [usdc, shares] = o.side === 'BUY' ? [struct.makerAmount, struct.takerAmount] : [struct.takerAmount, struct.makerAmount];
  const price = priceOf(usdc, shares, found.market.tickSize);
  if (price === undefined) return fail(400, `invalid price, min: ${found.market.tickSize} - max: ${1 - Number(found.market.tickSize)}`);
  if (shares < BigInt(found.market.minOrderSize) * ONE) return fail(400, `Size (${formatUnits6(shares)}) lower than the minimum: ${found.market.minOrderSize}`);
  if (body.orderType === 'GTD' && struct.expiration * 1000n <= BigInt(ctx.nowMs)) return fail(400, CLOB_TEXTS.invalidPayload);
  if (body.orderType === 'FOK' || body.orderType === 'FAK') return fail(400, ASSUMPTIONS.unfillableText);

  const id = hashTypedData({ domain: orderDomain(ctx.chainId, found.market.negRisk), types: ORDER_TYPES, primaryType: 'Order', message: struct });
  return { ok: true, order: openOrder(id, body, found, shares, price, ctx) };
}

function openOrder(id: string, body: PostOrderBody, found: { market: ClobMarket; token: ClobToken }, shares: bigint, price: string, ctx: CheckContext): OpenOrder {
  return {
    id,
    status: 'LIVE',
    owner: ctx.apiKey,
    maker_address: body.order.maker,
    market: found.market.conditionId,
    asset_id: found.token.tokenId,
    side: body.order.side,
    original_size: formatUnits6(shares),
    size_matched: '0',
    price,
    associate_trades: [],
    outcome: found.token.outcome,
    created_at: Math.floor(ctx.nowMs / 1000),
    expiration: body.order.expiration,
    order_type: body.orderType,
  };
}

export interface OpenOrderFilter {
  id?: string | undefined;
  market?: string | undefined;
  asset_id?: string | undefined;
}

/** Open orders per user (lower-case address), in the order they were placed. */
export class OrderBook {
  private readonly byUser = new Map<string, Map<string, OpenOrder>>();

  has(address: string, id: string): boolean {
    return this.byUser.get(address.toLowerCase())?.has(id) ?? false;
  }

  place(address: string, order: OpenOrder): void {
    const a = address.toLowerCase();
    let m = this.byUser.get(a);
    if (!m) {
      m = new Map();
      this.byUser.set(a, m);
    }
    m.set(order.id, order);
  }

  open(address: string, filter: OpenOrderFilter = {}, nowMs?: number): OpenOrder[] {
    const m = this.byUser.get(address.toLowerCase());
    if (!m) return [];
    if (nowMs !== undefined) this.expire(m, nowMs);
    return [...m.values()]
      .filter((o) => (filter.id === undefined || o.id === filter.id) && (filter.market === undefined || o.market === filter.market) && (filter.asset_id === undefined || o.asset_id === filter.asset_id))
      .map((o) => ({ ...o, associate_trades: [...o.associate_trades] }));
  }

  /** Cancels the named orders of a user: the venue's `{canceled, not_canceled}`. */
  cancel(address: string, ids: string[]): { canceled: string[]; not_canceled: Record<string, string> } {
    const m = this.byUser.get(address.toLowerCase());
    const canceled: string[] = [];
    const notCanceled: Record<string, string> = {};
    for (const id of ids) {
      if (m?.delete(id)) canceled.push(id);
      else notCanceled[id] = ASSUMPTIONS.notCanceledReason;
    }
    return { canceled, not_canceled: notCanceled };
  }

  /** Cancels every open order of a user; their ids. */
  cancelAll(address: string): string[] {
    const m = this.byUser.get(address.toLowerCase());
    if (!m) return [];
    const ids = [...m.keys()];
    m.clear();
    return ids;
  }

  /** GTD orders past their expiration leave the book (venue seconds). */
  private expire(m: Map<string, OpenOrder>, nowMs: number): void {
    for (const [id, o] of m) if (o.order_type === 'GTD' && Number(o.expiration) * 1000 <= nowMs) m.delete(id);
  }
}
