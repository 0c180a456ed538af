/**
 * `POST /info` on the venue host (where `POST /exchange` is served): the venue's own view of an
 * address, answered from the simulator's state in the venue's format (issue 20). The formats are
 * learned from the official Python SDK's recorded answers (`hyperliquid-dex/hyperliquid-python-sdk`,
 * `tests/cassettes/info_test/*.yaml`, read at commit 7ee976d123b1e04295e4a1e37a424ca6a13bef88) and
 * its `hyperliquid/info.py` docstrings:
 *
 *   openOrders              [{coin, limitPx, oid, side, sz, timestamp}]                (recorded)
 *                             + origSz, cloid?, reduceOnly?  (what @nktkas/hyperliquid 0.32 types)
 *   frontendOpenOrders      [{children, coin, isPositionTpsl, isTrigger, limitPx, oid, orderType,
 *                             origSz, reduceOnly, side, sz, tif, timestamp, triggerCondition,
 *                             triggerPx}]                                              (recorded)
 *   clearinghouseState      {assetPositions: [{position: {coin, entryPx, leverage, liquidationPx,
 *                             marginUsed, positionValue, returnOnEquity, szi, unrealizedPnl},
 *                             type: "oneWay"}], crossMarginSummary, marginSummary, withdrawable,
 *                             time}                                   (recorded; `time` assumed)
 *   spotClearinghouseState  {balances: [{coin, token, hold, total, entryNtl}]}      (assumed: no
 *                             recording; the shape the SDK's examples read and the venue documents)
 *   userRole                {role: "user"|"missing"} | {role: "subAccount", data: {master}} |
 *                             {role: "agent", data: {user}}   (recorded `{role}`; `data` assumed)
 *   userRateLimit           {cumVlm, nRequestsUsed, nRequestsCap}                     (recorded)
 *   extraAgents             [{name, address, validUntil}]                              (recorded)
 *   meta, spotMeta, outcomeMeta   market metadata, no `user` (market-info.ts)
 *
 * What each answer holds (state.ts, accounts.ts):
 *  - open orders: every open order of exactly this address on the dex asked for, newest first.
 *    Without `dex` (or with `""`): the default listing, the first perp dex with spot and outcomes:
 *    the service-listed outcome orders (coin `#<10 * outcome + side>`, oid = `venue_order_id`) and
 *    the orders only the venue shows (`SimAccountSeed.venueOrders`, `POST /_sim/venue-orders`)
 *    that name no dex. With `dex: "xyz"`: only the venue-only orders seeded with that dex (HIP-3:
 *    the venue lists a builder-deployed dex only when asked by name). The scheduled cancel cancels
 *    them all, on every dex. A dex nothing is seeded on, known or not, answers `[]`
 *    (ASSUMED.infoUnknownDexAnswersEmpty: the venue documents no answer for an unknown one);
 *  - clearinghouseState: the seeded perp positions of the dex asked for (`perpPositions`, each
 *    one's `dex`) and, for the first perp dex, its USDC (`perpUsd`; a builder dex's is 0); the
 *    service lists outcome positions only, so its positions appear in spotClearinghouseState;
 *  - spotClearinghouseState: one outcome-token balance per own position (the same quantity and
 *    entry as the service's listing, which for a main account also holds its subaccounts'), then the
 *    seeded spot balances (spot is not per perp dex: a `dex` is ignored);
 *  - userRole: `user` for a main account, `subAccount` with its master, `agent` with the account
 *    it acts for, `missing` for anything else;
 *  - userRateLimit: `cumVlm` the traded volume (the volume gate's figure), `nRequestsUsed` the
 *    actions its signers sent that the venue counted, `nRequestsCap` the cap it enforces; each
 *    seedable (`SimAccountSeed.rateLimit`, `POST /_sim/user-rate-limit`);
 *  - extraAgents: the named agents approved by this address, with `validUntil` (absent for one
 *    approved without an expiry, assumed); the single unnamed agent is not an "extra" one (assumed).
 *
 * A body that is not an object with a known `type` and a `user` address, or whose `dex` is not a
 * string, is refused as the venue refuses what it cannot deserialize: 422, a text body
 * (VENUE_TEXTS.undeserializable).
 */
import type { Route, SimResponse } from './http-util.js';
import { normalizeAddress, ok } from './http-util.js';
import type { AgentInfo, VenueInfoState, VenueOpenOrder, VenuePerpPosition } from './types.js';
import { VENUE_TEXTS } from './venue/texts.js';
import type { OutcomeMarket } from './venue/assets.js';
import { isMarketInfoType, metaAnswer, outcomeMetaAnswer, spotMetaAnswer, type MarketInfoType } from './market-info.js';
import { infoWeight, type InfoWeightOverrides } from './weights.js';
import { addFixed as add, formatFixed as fmt, mulFixed as mul, parseFixed as dec, subFixed as sub, type Fixed } from '../venue/decimal.js';

export const INFO_ENDPOINT = 'POST /info';

/** The info types about one address (they need a `user`). */
export const INFO_TYPES = ['openOrders', 'frontendOpenOrders', 'clearinghouseState', 'spotClearinghouseState', 'userRole', 'userRateLimit', 'extraAgents'] as const;
export type InfoType = (typeof INFO_TYPES)[number] | MarketInfoType;

/** The name an info answer carries for the profiles (profiles.ts): `POST /info clearinghouseState`. */
export function infoAnswerName(type: InfoType): string {
  return `${INFO_ENDPOINT} ${type}`;
}

export interface InfoRouteDeps {
  state: VenueInfoState & { agents(address: string): AgentInfo[] };
  /** Venue time, for `clearinghouseState.time`. */
  nowMs: () => number;
  /** Weights other than the published ones, by request type. */
  weights?: InfoWeightOverrides;
  /** The tradable outcomes, for the market metadata (market-info.ts); none when absent. */
  markets?: () => OutcomeMarket[];
}

/** The venue's refusal of a body it cannot read: 422 and plain text. */
export function infoRefusal(): SimResponse {
  return { status: 422, body: null, raw: VENUE_TEXTS.undeserializable };
}

export function infoRoutes(deps: InfoRouteDeps): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/info',
      endpoint: INFO_ENDPOINT,
      handler: (req) => answerInfo(deps, req.body),
      weight: (body) => infoWeight(body, deps.weights),
    },
  ];
}

export function answerInfo(deps: InfoRouteDeps, body: unknown): SimResponse {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return infoRefusal();
  const { type, user: rawUser, dex: rawDex } = body as { type?: unknown; user?: unknown; dex?: unknown };
  if (typeof type === 'string' && isMarketInfoType(type)) return marketInfo(deps, type, rawDex);
  if (typeof type !== 'string' || !(INFO_TYPES as readonly string[]).includes(type)) return infoRefusal();
  const user = typeof rawUser === 'string' ? normalizeAddress(rawUser) : undefined;
  if (user === undefined) return infoRefusal();
  if (rawDex !== undefined && rawDex !== null && typeof rawDex !== 'string') return infoRefusal();
  // The dex asked for: '' (absent) is the first perp dex, with spot and outcomes.
  const dex = typeof rawDex === 'string' ? rawDex : '';
  const onDex = (o: { dex?: string }): boolean => (o.dex ?? '') === dex;
  const t = type as (typeof INFO_TYPES)[number];
  const named = (b: unknown): SimResponse => ({ ...ok(b), endpoint: infoAnswerName(t) });
  const { state } = deps;
  switch (t) {
    case 'openOrders':
      return named(state.venueOpenOrders(user).filter(onDex).map(openOrderView));
    case 'frontendOpenOrders':
      return named(state.venueOpenOrders(user).filter(onDex).map(frontendOrderView));
    case 'clearinghouseState':
      return named(clearinghouseView(state.perpPositions(user).filter(onDex), dex === '' ? state.perpUsd(user) : '0', deps.nowMs()));
    case 'spotClearinghouseState':
      return named({
        balances: state.spotBalances(user).map((b) => ({ coin: b.coin, token: b.token, hold: venueDec(b.hold), total: venueDec(b.total), entryNtl: venueDec(b.entryNtl) })),
      });
    case 'userRole': {
      const r = state.userRole(user);
      if (r.role === 'subAccount') return named({ role: 'subAccount', data: { master: r.master } });
      if (r.role === 'agent') return named({ role: 'agent', data: { user: r.user } });
      return named({ role: r.role });
    }
    case 'userRateLimit': {
      const r = state.userRateLimit(user);
      return named({ cumVlm: r.cumVlm, nRequestsUsed: r.nRequestsUsed, nRequestsCap: r.nRequestsCap });
    }
    case 'extraAgents':
      return named(
        state
          .agents(user)
          .filter((a) => a.name !== '')
          .map((a) => ({ name: a.name, address: a.address, ...(a.validUntilMs !== undefined ? { validUntil: a.validUntilMs } : {}) })),
      );
  }
}

/** Market metadata: no `user`; `meta` takes an optional `dex` (a string). */
function marketInfo(deps: InfoRouteDeps, type: MarketInfoType, rawDex: unknown): SimResponse {
  if (rawDex !== undefined && rawDex !== null && typeof rawDex !== 'string') return infoRefusal();
  const markets = deps.markets?.() ?? [];
  const named = (b: unknown): SimResponse => ({ ...ok(b), endpoint: infoAnswerName(type) });
  switch (type) {
    case 'meta':
      return named(metaAnswer(typeof rawDex === 'string' ? rawDex : ''));
    case 'spotMeta':
      return named(spotMetaAnswer(markets));
    case 'outcomeMeta':
      return named(outcomeMetaAnswer(markets));
  }
}

/**
 * The Python SDK's recording (2023) has six keys; the venue has since added `origSz` (and `cloid`,
 * `reduceOnly: true` when set), which `@nktkas/hyperliquid` types as part of the answer.
 */
function openOrderView(o: VenueOpenOrder): Record<string, unknown> {
  return {
    coin: o.coin,
    limitPx: venueDec(o.limitPx),
    oid: o.oid,
    side: o.side,
    sz: venueDec(o.sz),
    timestamp: o.timestamp,
    origSz: venueDec(o.origSz),
    ...(o.cloid !== undefined ? { cloid: o.cloid } : {}),
    ...(o.reduceOnly ? { reduceOnly: true } : {}),
  };
}

function frontendOrderView(o: VenueOpenOrder): Record<string, unknown> {
  return {
    children: [],
    coin: o.coin,
    isPositionTpsl: o.isPositionTpsl,
    isTrigger: o.isTrigger,
    limitPx: venueDec(o.limitPx),
    oid: o.oid,
    orderType: o.orderType,
    origSz: venueDec(o.origSz),
    reduceOnly: o.reduceOnly,
    side: o.side,
    sz: venueDec(o.sz),
    tif: o.tif,
    timestamp: o.timestamp,
    triggerCondition: o.triggerCondition,
    triggerPx: venueDec(o.triggerPx),
    ...(o.cloid !== undefined ? { cloid: o.cloid } : {}),
  };
}

function abs(f: Fixed): Fixed {
  return f.coef < 0n ? { coef: -f.coef, scale: f.scale } : f;
}

/** a / b truncated to `places` decimals (b != 0). */
function div(a: Fixed, b: Fixed, places: number): Fixed {
  const num = a.coef * 10n ** BigInt(places + b.scale);
  const den = b.coef * 10n ** BigInt(a.scale);
  return { coef: num / den, scale: places };
}

/**
 * The perp account: per position `positionValue = |szi| * markPx`, `unrealizedPnl = szi * (markPx
 * - entryPx)`, `marginUsed = positionValue / leverage`, `returnOnEquity = unrealizedPnl / (|szi| *
 * entryPx / leverage)`; `accountValue = totalRawUsd + sum(szi * markPx)`, `withdrawable =
 * max(0, accountValue - totalMarginUsed)`. The venue's own formulas are richer (funding, isolated
 * margin); these keep the figures consistent with each other, which is what a reader can check.
 */
function clearinghouseView(positions: VenuePerpPosition[], rawUsd: string, nowMs: number): Record<string, unknown> {
  let ntl = dec('0');
  let signedNtl = dec('0');
  let margin = dec('0');
  const assetPositions = positions.map((p) => {
    const szi = dec(p.szi);
    const mark = dec(p.markPx);
    const entry = dec(p.entryPx);
    const lev = dec(String(p.leverage));
    const value = mul(abs(szi), mark);
    const upnl = mul(szi, sub(mark, entry));
    const used = div(value, lev, 6);
    const equity = div(mul(abs(szi), entry), lev, 12);
    const roe = equity.coef === 0n ? dec('0') : div(upnl, equity, 8);
    ntl = add(ntl, value);
    signedNtl = add(signedNtl, mul(szi, mark));
    margin = add(margin, used);
    const leverage: Record<string, unknown> = { type: p.leverageType, value: p.leverage };
    if (p.leverageType === 'isolated') leverage.rawUsd = venueDec(fmt(used));
    return {
      position: {
        coin: p.coin,
        entryPx: venueDec(p.entryPx),
        leverage,
        liquidationPx: p.liquidationPx === null ? null : venueDec(p.liquidationPx),
        marginUsed: venueDec(fmt(used)),
        positionValue: venueDec(fmt(value)),
        returnOnEquity: venueDec(fmt(roe)),
        szi: venueDec(p.szi),
        unrealizedPnl: venueDec(fmt(upnl)),
      },
      type: 'oneWay',
    };
  });
  const accountValue = add(dec(rawUsd), signedNtl);
  const free = sub(accountValue, margin);
  const summary = {
    accountValue: venueDec(fmt(accountValue)),
    totalMarginUsed: venueDec(fmt(margin)),
    totalNtlPos: venueDec(fmt(ntl)),
    totalRawUsd: venueDec(rawUsd),
  };
  return {
    assetPositions,
    crossMarginSummary: { ...summary },
    marginSummary: summary,
    withdrawable: venueDec(fmt(free.coef < 0n ? dec('0') : free)),
    time: nowMs,
  };
}

/** A decimal as the venue writes it: a whole number keeps one fractional zero ("10.0", "0.0"). */
export function venueDec(text: string): string {
  return text.includes('.') ? text : `${text}.0`;
}
