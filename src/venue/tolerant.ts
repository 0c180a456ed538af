import type { z } from 'zod';
import { DecodeError } from './errors.js';

/**
 * Reading the venue as it is, not as our simulator echoes it (spec 1.5: every response field is
 * typed optional). The strict schemas in decode.ts describe the spec exactly; here they are applied
 * leniently: `null` means absent, unknown keys are dropped, and a value that does not fit its field
 * (an unknown enum value, a decimal that does not parse, a wrong type) is removed and the rest of
 * the answer kept. Only the fields the keeper acts on fail closed: a problem at one of the
 * `critical` paths throws `DecodeError('bad_shape')` naming it.
 *
 * Measured from outside, the strict reading protected no account: a venue that sent `null` for an
 * account's `username` failed the whole resolve, and `next_cursor: null` every orders read.
 */

/** A path into the answer; `'*'` matches any array index or key. */
export type CriticalPath = ReadonlyArray<string | number>;

/** Rounds of remove-and-retry before giving up (each round removes every reported problem). */
const MAX_REPAIR_ROUNDS = 16;

export function decodeTolerant<S extends z.ZodType>(
  endpoint: string,
  schema: S,
  value: unknown,
  critical: readonly CriticalPath[],
  httpStatus: number | undefined,
  describe: (issue: z.core.$ZodIssue) => string,
): z.output<S> {
  let v: unknown;
  try {
    v = withoutNulls(value);
  } catch (e) {
    if (e instanceof TooDeepError) throw new DecodeError(endpoint, 'bad_shape', `nested deeper than ${MAX_DEPTH} levels`, httpStatus);
    throw e;
  }
  for (let round = 0; round < MAX_REPAIR_ROUNDS; round++) {
    const r = schema.safeParse(v);
    if (r.success) return r.data;
    for (const issue of r.error.issues) {
      const path = issue.path as ReadonlyArray<PropertyKey>;
      if (path.length === 0 || critical.some((c) => matches(c, path))) {
        throw new DecodeError(endpoint, 'bad_shape', describe(issue), httpStatus);
      }
    }
    // Deepest first, and array elements from the last, so one removal never shifts another's path.
    const paths = r.error.issues.map((i) => i.path as ReadonlyArray<PropertyKey>).sort(comparePaths);
    for (const p of paths) v = removeAt(v, p);
  }
  throw new DecodeError(endpoint, 'bad_shape', 'the answer could not be read after removing what did not fit', httpStatus);
}

/** The spec's deepest answer nests about ten levels; a hostile one must not exhaust the stack. */
const MAX_DEPTH = 64;

class TooDeepError extends Error {}

/**
 * A copy without object keys whose value is `null` (array elements are kept, even `null`). Throws
 * past MAX_DEPTH levels of nesting.
 */
export function withoutNulls(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) throw new TooDeepError();
  if (Array.isArray(value)) return value.map((x) => withoutNulls(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value as Record<string, unknown>)) if (x !== null) out[k] = withoutNulls(x, depth + 1);
  return out;
}

/**
 * A problem at a critical path, or above it (a parent missing or of the wrong type hides it too).
 * A problem inside it is not: `data.*` is critical (every order counts), `data.3.price` is not.
 */
function matches(critical: CriticalPath, path: ReadonlyArray<PropertyKey>): boolean {
  if (path.length > critical.length) return false;
  return path.every((p, i) => critical[i] === '*' || critical[i] === p);
}

function comparePaths(a: ReadonlyArray<PropertyKey>, b: ReadonlyArray<PropertyKey>): number {
  if (a.length !== b.length) return b.length - a.length;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return y - x;
    return String(y) < String(x) ? -1 : 1;
  }
  return 0;
}

/** Removes the value at `path` (a key, or an array element); a path that no longer exists is a no-op. */
function removeAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let parent: unknown = root;
  for (let i = 0; i < path.length - 1; i++) {
    if (parent === null || typeof parent !== 'object') return root;
    parent = (parent as Record<PropertyKey, unknown>)[path[i] as PropertyKey];
  }
  const last = path[path.length - 1];
  if (Array.isArray(parent) && typeof last === 'number') {
    if (last < parent.length) parent.splice(last, 1);
  } else if (parent !== null && typeof parent === 'object' && last !== undefined) {
    delete (parent as Record<PropertyKey, unknown>)[last];
  }
  return root;
}
