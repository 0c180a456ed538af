/**
 * Exact base-10 arithmetic for account figures (order quantities, position values and PnL).
 *
 * The spec sends every decimal as a string so no precision is lost. `0.1 * 3` as floats would
 * publish "0.30000000000000004" as a position value, so a value is held as a BigInt coefficient and
 * a scale (value = coef / 10^scale). Multiplication is exact (scales add); nothing here divides, so
 * nothing here rounds.
 */

export interface Dec {
  readonly coef: bigint;
  readonly scale: number;
}

/** Plain base-10 text: optional minus, digits, optional fraction. No exponent, no "+", no ".5". */
const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

export function isDecimalText(text: unknown): text is string {
  return typeof text === 'string' && DECIMAL_RE.test(text);
}

/** Throws on anything that is not a plain decimal string: callers validate inputs first. */
export function dec(text: string): Dec {
  const m = DECIMAL_RE.exec(text);
  if (!m) throw new RangeError(`not a decimal: ${JSON.stringify(text)}`);
  const frac = m[3] ?? '';
  const coef = BigInt(`${m[2] ?? '0'}${frac}`);
  return { coef: m[1] ? -coef : coef, scale: frac.length };
}

function at(a: Dec, scale: number): bigint {
  return a.coef * 10n ** BigInt(scale - a.scale);
}

export function add(a: Dec, b: Dec): Dec {
  const scale = Math.max(a.scale, b.scale);
  return { coef: at(a, scale) + at(b, scale), scale };
}

export function sub(a: Dec, b: Dec): Dec {
  const scale = Math.max(a.scale, b.scale);
  return { coef: at(a, scale) - at(b, scale), scale };
}

export function mul(a: Dec, b: Dec): Dec {
  return { coef: a.coef * b.coef, scale: a.scale + b.scale };
}

export function cmp(a: Dec, b: Dec): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const x = at(a, scale);
  const y = at(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isPositive(a: Dec): boolean {
  return a.coef > 0n;
}

/** Canonical text: trailing fractional zeros dropped, never "-0" ("1.50" prints "1.5"). */
export function fmt(a: Dec): string {
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

export function decAdd(a: string, b: string): string {
  return fmt(add(dec(a), dec(b)));
}

export function decSub(a: string, b: string): string {
  return fmt(sub(dec(a), dec(b)));
}

export function decMul(a: string, b: string): string {
  return fmt(mul(dec(a), dec(b)));
}

export function decCmp(a: string, b: string): -1 | 0 | 1 {
  return cmp(dec(a), dec(b));
}

export function decCanonical(a: string): string {
  return fmt(dec(a));
}
