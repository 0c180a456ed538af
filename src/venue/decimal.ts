/**
 * Exact base-10 decimals over BigInt, for the venue's decimal strings (prices, sizes, USDC sums).
 * Never parse them as floats: "0.1" + "0.2" must be "0.3". The one decimal module of the project
 * (the keeper and the simulator both use it): a value-level API (`Fixed`) for arithmetic in loops,
 * and string conveniences on top.
 */

/** value = coef / 10^scale, with scale >= 0. */
export interface Fixed {
  readonly coef: bigint;
  readonly scale: number;
}

const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

export function isDecimal(text: unknown): text is string {
  return typeof text === 'string' && DECIMAL_RE.test(text);
}

/** Throws a TypeError on anything that is not a plain decimal (optional minus, digits, optional fraction). */
export function parseFixed(text: string): Fixed {
  const m = DECIMAL_RE.exec(text);
  if (!m) throw new TypeError(`not a decimal: ${JSON.stringify(String(text).slice(0, 40))}`);
  const frac = m[3] ?? '';
  const coef = BigInt(`${m[2] ?? '0'}${frac}`);
  return { coef: m[1] ? -coef : coef, scale: frac.length };
}

function rescale(f: Fixed, scale: number): bigint {
  return f.coef * 10n ** BigInt(scale - f.scale);
}

export function addFixed(a: Fixed, b: Fixed): Fixed {
  const scale = Math.max(a.scale, b.scale);
  return { coef: rescale(a, scale) + rescale(b, scale), scale };
}

export function subFixed(a: Fixed, b: Fixed): Fixed {
  const scale = Math.max(a.scale, b.scale);
  return { coef: rescale(a, scale) - rescale(b, scale), scale };
}

export function mulFixed(a: Fixed, b: Fixed): Fixed {
  return { coef: a.coef * b.coef, scale: a.scale + b.scale };
}

export function cmpFixed(a: Fixed, b: Fixed): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isPositiveFixed(a: Fixed): boolean {
  return a.coef > 0n;
}

/** Canonical text: no trailing fractional zeros, no "-0" ("0.0" -> "0", "1.50" -> "1.5"). */
export function formatFixed(a: Fixed): string {
  let { coef, scale } = a;
  while (scale > 0 && coef % 10n === 0n) {
    coef /= 10n;
    scale -= 1;
  }
  const neg = coef < 0n;
  const digits = (neg ? -coef : coef).toString().padStart(scale + 1, '0');
  const body = scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return neg ? `-${body}` : body;
}

// ---- string conveniences: text in, canonical text out ----

export function decCanonical(a: string): string {
  return formatFixed(parseFixed(a));
}

export function decAdd(a: string, b: string): string {
  return formatFixed(addFixed(parseFixed(a), parseFixed(b)));
}

export function decSub(a: string, b: string): string {
  return formatFixed(subFixed(parseFixed(a), parseFixed(b)));
}

export function decMul(a: string, b: string): string {
  return formatFixed(mulFixed(parseFixed(a), parseFixed(b)));
}

export function decCmp(a: string, b: string): -1 | 0 | 1 {
  return cmpFixed(parseFixed(a), parseFixed(b));
}

export function decSum(values: readonly string[]): string {
  return formatFixed(values.reduce<Fixed>((acc, v) => addFixed(acc, parseFixed(v)), { coef: 0n, scale: 0 }));
}

/** Sum that skips values that are not decimals (a field we could not read is not zero; the caller decides). */
export function addDecimals(values: readonly string[]): string {
  return decSum(values.filter((v) => isDecimal(v)));
}

/** "10^-n" as a decimal string: pow10Neg(2) = "0.01". */
export function pow10Neg(n: number): string {
  if (!Number.isInteger(n) || n < 0) throw new RangeError('n must be a non-negative integer');
  return n === 0 ? '1' : `0.${'0'.repeat(n - 1)}1`;
}

/** For metrics only (a gauge is a float): the nearest double. */
export function decToNumber(a: string): number {
  return Number(decCanonical(a));
}
