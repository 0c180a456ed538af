/**
 * HIP-4 outcome identifiers as the venue spells them (Hyperliquid's asset-id docs): an outcome side
 * is `encoding = 10 * outcome + side`; its asset id (what an order names) `100_000_000 + encoding`;
 * its spot coin (books, open orders, fills) `#<encoding>`; its token (balances) `+<encoding>`.
 * Outcome 0: Yes `100000000`, No `100000001`. One place for the formula, so every venue-format
 * answer of the simulator agrees.
 */

/** Where outcome asset ids begin (below: perps, spot pairs from 10 000, HIP-3 perps from 100 000). */
export const OUTCOME_ASSET_BASE = 100_000_000;

/** `10 * outcome + side`; throws RangeError for an outcome that is not a non-negative integer or a side not 0/1. */
export function outcomeEncoding(outcome: number, side: number): number {
  if (!Number.isSafeInteger(outcome) || outcome < 0) throw new RangeError(`outcome must be a non-negative integer, got ${outcome}`);
  if (side !== 0 && side !== 1) throw new RangeError(`outcome side must be 0 or 1, got ${side}`);
  const encoding = 10 * outcome + side;
  if (!Number.isSafeInteger(OUTCOME_ASSET_BASE + encoding)) throw new RangeError(`outcome ${outcome} is out of range`);
  return encoding;
}

/** The asset id of one outcome side: `100_000_000 + 10 * outcome + side`. */
export function outcomeAssetId(outcome: number, side: number): number {
  return OUTCOME_ASSET_BASE + outcomeEncoding(outcome, side);
}

/** The spot coin of one outcome side: `#<encoding>`. */
export function outcomeCoin(outcome: number, side: number): string {
  return `#${outcomeEncoding(outcome, side)}`;
}

/** The token of one outcome side: `+<encoding>`. */
export function outcomeToken(outcome: number, side: number): string {
  return `+${outcomeEncoding(outcome, side)}`;
}

/** Outcome and side of an encoding `10 * outcome + side`; undefined when it names side 2..9. */
function decodeEncoding(encoding: number): { outcome: number; side: 0 | 1 } | undefined {
  const side = encoding % 10;
  if (side !== 0 && side !== 1) return undefined;
  return { outcome: (encoding - side) / 10, side };
}

/** Outcome and side of a spot coin `#<encoding>`; undefined for anything else. */
export function parseOutcomeCoin(coin: string): { outcome: number; side: 0 | 1 } | undefined {
  const m = /^#(\d{1,15})$/.exec(coin);
  return m ? decodeEncoding(Number(m[1])) : undefined;
}

/** Outcome and side an asset id names; undefined when it is no outcome asset (or names side 2..9). */
export function outcomeOfAssetId(asset: number): { outcome: number; side: 0 | 1 } | undefined {
  if (!Number.isSafeInteger(asset) || asset < OUTCOME_ASSET_BASE) return undefined;
  return decodeEncoding(asset - OUTCOME_ASSET_BASE);
}

/**
 * The token index of an outcome side (`spotMeta.tokens`, balances' `token`, `outcomeMeta` side specs)
 * **(assumed)**: the venue does not publish how outcome tokens are indexed; the simulator uses the
 * side's asset id, one number per side, clear of every other token.
 */
export function outcomeTokenIndex(outcome: number, side: 0 | 1): number {
  return outcomeAssetId(outcome, side);
}

/** The numeric outcome index of a catalog outcome's `hl_id`; undefined until it is deployed (or not a number). */
export function outcomeIndexOf(hlId: string | null | undefined): number | undefined {
  return typeof hlId === 'string' && /^\d+$/.test(hlId) && Number.isSafeInteger(Number(hlId)) ? Number(hlId) : undefined;
}
