/**
 * Exact base-10 decimals over BigInt, for the venue's decimal strings (prices, sizes, USDC sums).
 * Never parse them as floats: "0.1" + "0.2" must be "0.3". The one decimal module of the project.
 */
interface Fixed {
  /** value = units / 10^scale */
  units: bigint;
  scale: number;
}

const DECIMAL_RE = /^-?\d+(\.\d+)?$/;

export function isDecimal(text: unknown): text is string {
  return typeof text === 'string' && DECIMAL_RE.test(text);
}

function parse(text: string): Fixed {
  if (!DECIMAL_RE.test(text)) throw new TypeError(`not a decimal: ${JSON.stringify(text.slice(0, 40))}`);
  const neg = text.startsWith('-');
  const body = neg ? text.slice(1) : text;
  const [int, frac = ''] = body.split('.') as [string, string?];
  const units = BigInt(int + frac) * (neg ? -1n : 1n);
  return { units, scale: frac.length };
}

function align(a: Fixed, b: Fixed): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale), scale];
}

function format(units: bigint, scale: number): string {
  const neg = units < 0n;
  let digits = (neg ? -units : units).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    let int = digits.slice(0, digits.length - scale);
    const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
    if (int === '') int = '0';
    digits = frac ? `${int}.${frac}` : int;
  }
  return neg && digits !== '0' ? `-${digits}` : digits;
}

/** Canonical text: no trailing fractional zeros, "-0" as "0" ("0.0" -> "0", "1.50" -> "1.5"). */
export function decCanonical(a: string): string {
  const f = parse(a);
  return format(f.units, f.scale);
}

export function decAdd(a: string, b: string): string {
  const [x, y, s] = align(parse(a), parse(b));
  return format(x + y, s);
}

export function decSub(a: string, b: string): string {
  const [x, y, s] = align(parse(a), parse(b));
  return format(x - y, s);
}

export function decMul(a: string, b: string): string {
  const x = parse(a);
  const y = parse(b);
  return format(x.units * y.units, x.scale + y.scale);
}

export function decCmp(a: string, b: string): -1 | 0 | 1 {
  const [x, y] = align(parse(a), parse(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

export function decSum(values: readonly string[]): string {
  return values.reduce((acc, v) => decAdd(acc, v), '0');
}

/** Sum that skips values that are not decimals (a venue field we could not read is not zero; the caller decides). */
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
