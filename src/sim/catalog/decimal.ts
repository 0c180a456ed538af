/**
 * Exact base-10 arithmetic for the simulator's book and fixtures. The spec sends every decimal as
 * a string so no precision is lost; summing "0.1" and "0.2" as floats would publish
 * "0.30000000000000004" as a level size, so values are held as a BigInt coefficient and a scale.
 *
 * Only what the catalog needs: parse, add, subtract, compare, canonical print.
 */

/** value = coef / 10^scale, with scale >= 0. */
export interface Fixed {
  readonly coef: bigint;
  readonly scale: number;
}

const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

/** True for a plain base-10 decimal string (optional minus, digits, optional fraction). */
export function isDecimal(text: string): boolean {
  return DECIMAL_RE.test(text);
}

/** Throws on anything that is not a plain decimal: callers pass venue-internal values only. */
export function parseFixed(text: string): Fixed {
  const m = DECIMAL_RE.exec(text);
  if (!m) throw new Error(`not a decimal: ${JSON.stringify(text)}`);
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

export function cmpFixed(a: Fixed, b: Fixed): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Canonical text: no trailing fractional zeros, no "-0"; "1.50" prints as "1.5". */
export function formatFixed(f: Fixed): string {
  let { coef, scale } = f;
  while (scale > 0 && coef % 10n === 0n) {
    coef /= 10n;
    scale -= 1;
  }
  const neg = coef < 0n;
  const digits = (neg ? -coef : coef).toString().padStart(scale + 1, '0');
  const body = scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return neg ? `-${body}` : body;
}

// ---- string conveniences ----

export function decCanonical(a: string): string {
  return formatFixed(parseFixed(a));
}

export function decAdd(a: string, b: string): string {
  return formatFixed(addFixed(parseFixed(a), parseFixed(b)));
}

export function decSub(a: string, b: string): string {
  return formatFixed(subFixed(parseFixed(a), parseFixed(b)));
}

export function decCmp(a: string, b: string): -1 | 0 | 1 {
  return cmpFixed(parseFixed(a), parseFixed(b));
}

export function decSum(values: readonly string[]): string {
  let acc: Fixed = { coef: 0n, scale: 0 };
  for (const v of values) acc = addFixed(acc, parseFixed(v));
  return formatFixed(acc);
}

/** 10^-n as text: 0 gives "1", 3 gives "0.001". For tick and lot sizes. */
export function pow10Neg(n: number): string {
  if (!Number.isInteger(n) || n < 0) throw new Error(`bad exponent ${n}`);
  return formatFixed({ coef: 1n, scale: n });
}
