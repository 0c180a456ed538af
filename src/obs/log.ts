/**
 * Log hygiene. pino's `redact` only covers known object keys, and error messages from HTTP and
 * signing libraries can carry URLs with credentials, request bodies, signatures or keys; so every
 * string that reaches a log line through an error goes through `scrub`.
 *
 * What is scrubbed: any 0x-prefixed run of 64 or more hex digits (private keys, signature r/s,
 * whole signatures, hashes: none of them belong in a log), bare 64-hex runs, and the userinfo part
 * of URLs. Addresses (40 hex digits) are public and stay.
 */
const HEX_LONG = /\b(0x)?[0-9a-fA-F]{64,}\b/g;
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+(:[^/\s@]*)?@/gi;
const QUERY_SECRET = /([?&](?:key|token|secret|signature|password|apikey|api_key)=)[^&\s]+/gi;

export function scrub(text: string): string {
  return text.replace(HEX_LONG, '[redacted]').replace(URL_USERINFO, '$1[redacted]@').replace(QUERY_SECRET, '$1[redacted]');
}

/** Deep-scrubs strings in a plain value (bounded depth; cycles cut). */
export function scrubValue(v: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof v === 'string') return scrub(v);
  if (v === null || typeof v !== 'object') return v;
  if (depth > 6 || seen.has(v)) return '[…]';
  seen.add(v);
  if (Array.isArray(v)) return v.slice(0, 50).map((x) => scrubValue(x, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] = SECRET_KEYS.test(k) ? '[redacted]' : scrubValue(x, depth + 1, seen);
  }
  return out;
}

const SECRET_KEYS = /^(private_?key|privateKey|master_?key|masterKey|agent_?key|agentKey|secret|signature|password|authorization|cookie|key)$/i;

/** Serializes an error with its code/reason, scrubbed; no stack frames' arguments, no bodies. */
export function serializeError(e: unknown): Record<string, unknown> {
  if (!(e instanceof Error)) return { message: scrub(String(e)) };
  const out: Record<string, unknown> = { type: e.name, message: scrub(e.message) };
  const extra = e as unknown as Record<string, unknown>;
  for (const k of ['code', 'reason', 'endpoint', 'httpStatus']) {
    if (typeof extra[k] === 'string' || typeof extra[k] === 'number') out[k] = typeof extra[k] === 'string' ? scrub(extra[k] as string) : extra[k];
  }
  if (e.stack) out.stack = scrub(e.stack.split('\n').slice(0, 8).join('\n'));
  if (e.cause !== undefined && e.cause !== e) out.cause = e.cause instanceof Error ? { type: e.cause.name, message: scrub(e.cause.message) } : scrub(String(e.cause));
  return out;
}

export const logSerializers = {
  err: serializeError,
  error: serializeError,
  venue: (v: unknown) => scrubValue(v),
};

/** Object keys pino censors wherever they appear in a log line's fields. */
export const redactPaths = [
  'privateKey',
  '*.privateKey',
  'masterKey',
  '*.masterKey',
  'agentKey',
  '*.agentKey',
  'signature',
  '*.signature',
  'key',
  '*.key',
];
