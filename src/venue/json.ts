/**
 * JSON in and out of the venue client.
 *
 * `toJson` exists because `JSON.stringify` throws on bigint, and scheduleCancel's `time` must be a
 * bigint for msgpack to hash it as uint64 (VENUE.md): the posted JSON has to carry that same
 * integer, bare, or the venue hashes a different action than the one we signed.
 *
 * `parseJson` exists because `JSON.parse`'s SyntaxError quotes the start of the body in its message
 * (Node 20: `Unexpected token '<', "<html>…" is not valid JSON`), and bodies must never reach logs.
 */

/**
 * Serializes like `JSON.stringify` (no indentation, insertion key order, `toJSON` honoured,
 * `undefined`/functions/symbols dropped from objects and `null` in arrays), except that a bigint
 * becomes a bare JSON integer. Non-finite numbers and cycles throw a `TypeError`: `JSON.stringify`
 * would silently turn `NaN` into `null`, which in a signed body means a different request.
 */
export function toJson(value: unknown): string {
  const out = write(value, '', []);
  if (out === undefined) throw new TypeError('toJson: top-level value is not serializable');
  return out;
}

function write(value: unknown, key: string, stack: object[]): string | undefined {
  let v = value;
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: (k: string) => unknown }).toJSON(key);
  }
  switch (typeof v) {
    case 'bigint':
      return v.toString(10);
    case 'string':
      return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) throw new TypeError('toJson: non-finite number');
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      break;
  }
  if (v === null) return 'null';
  const obj = v as object;
  if (stack.includes(obj)) throw new TypeError('toJson: cyclic structure');
  stack.push(obj);
  try {
    if (Array.isArray(obj)) {
      const items = obj.map((item, i) => write(item, String(i), stack) ?? 'null');
      return `[${items.join(',')}]`;
    }
    const parts: string[] = [];
    for (const k of Object.keys(obj)) {
      const s = write((obj as Record<string, unknown>)[k], k, stack);
      if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    stack.pop();
  }
}

export type JsonParseResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Parses JSON without ever throwing. The failure text is ours (position at most), never a quote of
 * the input.
 */
export function parseJson(text: string): JsonParseResult {
  // A UTF-8 BOM is legal in front of an HTTP body but not in JSON.parse.
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(src) as unknown };
  } catch (err) {
    return { ok: false, error: src.trim() === '' ? 'empty body' : describeParseError(err, src.length) };
  }
}

function describeParseError(err: unknown, length: number): string {
  const msg = err instanceof Error ? err.message : '';
  const pos = /position (\d+)/.exec(msg);
  const at = pos ? Number(pos[1]) : undefined;
  if (/end of (JSON )?input|Unterminated string/i.test(msg) || at === length) {
    return `invalid JSON: unexpected end of input after ${length} chars (truncated?)`;
  }
  if (at !== undefined) return `invalid JSON at position ${at} of ${length}`;
  return `invalid JSON (${length} chars)`;
}
