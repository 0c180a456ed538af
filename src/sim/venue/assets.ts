/**
 * The tradable HIP-4 outcomes as the venue's trading actions and metadata see them. The formula
 * (encoding, asset id, coin, token, reading an asset id back, the token index) lives in one place,
 * catalog/asset-id.ts; `outcome` is the catalog's numeric outcome index (`Outcome.hl_id`).
 */
import type { Catalog } from '../types.js';
import { decCanonical, isDecimal, parseFixed } from '../../venue/decimal.js';
import { outcomeIndexOf, outcomeOfAssetId } from '../catalog/asset-id.js';

export type OutcomeSideIndex = 0 | 1;

/** One deployed, tradable outcome as the venue's metadata shows it. */
export interface OutcomeMarket {
  /** The catalog's id (the service's `outcome_id`). */
  outcomeId: string;
  /** The venue's outcome index. */
  outcome: number;
  name: string;
  description: string;
  /** Side 0's name, then side 1's. */
  sideNames: [string, string];
  /** Size decimals: sizes are multiples of `lotSize` (10^-szDecimals). */
  szDecimals: number;
  /** The catalog's trading rules (decimal strings): price step, size step, minimum order value in USDC. */
  tickSize: string;
  lotSize: string;
  minNotional: string;
}

/** Defaults for an outcome whose catalog entry names no trading rules (test catalogs) **(assumed)**. */
const DEFAULT_TRADING = { tick_size: '0.0001', lot_size: '1', min_notional: '10' } as const;

/** The catalog's tradable outcomes (active and deployed), as the venue lists them, by outcome index. */
export function outcomeMarkets(catalog: Catalog): OutcomeMarket[] {
  const out: OutcomeMarket[] = [];
  for (const id of catalog.tradableOutcomeIds()) {
    const o = catalog.outcome(id);
    const outcome = outcomeIndexOf(o?.hl_id);
    if (o === undefined || outcome === undefined) continue;
    const label = (side: OutcomeSideIndex, fallback: string): string => o.sides?.find((s) => s.side === side)?.label ?? fallback;
    const t = o.trading;
    const lotSize = isDecimal(t?.lot_size) ? t.lot_size : DEFAULT_TRADING.lot_size;
    out.push({
      outcomeId: id,
      outcome,
      name: o.title ?? id,
      description: o.hl_rules ?? '',
      sideNames: [label(0, 'Yes'), label(1, 'No')],
      szDecimals: parseFixed(decCanonical(lotSize)).scale,
      tickSize: isDecimal(t?.tick_size) ? t.tick_size : DEFAULT_TRADING.tick_size,
      lotSize,
      minNotional: isDecimal(t?.min_notional) ? t.min_notional : DEFAULT_TRADING.min_notional,
    });
  }
  return out.sort((a, b) => a.outcome - b.outcome);
}

/** The tradable outcome side an asset id names, or undefined (unknown, not deployed, not active). */
export function tradableOutcomeSide(catalog: Catalog, asset: number): { market: OutcomeMarket; side: OutcomeSideIndex } | undefined {
  const named = outcomeOfAssetId(asset);
  if (named === undefined) return undefined;
  const market = outcomeMarkets(catalog).find((m) => m.outcome === named.outcome);
  return market === undefined ? undefined : { market, side: named.side };
}
