import type { z } from 'zod';
import type { ConfigProblem } from './errors.js';
import { formatPath } from './errors.js';
import { objectShape, schemaKind, SECTION_SCHEMAS } from './schema.js';

/**
 * `DMS_KEEPER_*` environment overrides of scalar config keys.
 *
 * The rule: `DMS_KEEPER_` + the YAML path of a scalar, each key upper-cased, levels joined with a
 * DOUBLE underscore (keys themselves contain single underscores):
 *   switch.deadline_seconds            -> DMS_KEEPER_SWITCH__DEADLINE_SECONDS
 *   venue.base_url                     -> DMS_KEEPER_VENUE__BASE_URL
 *   rate_limits.global.requests        -> DMS_KEEPER_RATE_LIMITS__GLOBAL__REQUESTS
 *   state_dir                          -> DMS_KEEPER_STATE_DIR
 * Values are parsed to the key's type: numbers as decimal text; booleans as true/false, 1/0,
 * yes/no, on/off (any case); strings as given. An empty value counts as unset (so a template can
 * leave one blank). Overrides apply before validation, so every rule checks the overridden value,
 * and problems with it name the variable. `accounts` (a list) is not overridable.
 *
 * A `DMS_KEEPER_*` variable that names no scalar is an error (a typo would otherwise be ignored),
 * except variables the config itself names as key sources (`master_key: { env: ... }`).
 */
export const ENV_PREFIX = 'DMS_KEEPER_';
export { HEARTBEAT_TOKEN_ENV } from './names.js';

export type ScalarKind = 'string' | 'number' | 'boolean';

export interface EnvOverride {
  variable: string;
  segments: string[];
  value: string | number | boolean;
}

export function envVarFor(segments: readonly string[]): string {
  return ENV_PREFIX + segments.map((s) => s.toUpperCase()).join('__');
}

/** Every overridable scalar, by variable name, derived from the schema (so it cannot drift). */
export function overridableScalars(): Map<string, { segments: string[]; kind: ScalarKind }> {
  const out = new Map<string, { segments: string[]; kind: ScalarKind }>();
  const walk = (schema: z.ZodType, segments: string[]): void => {
    const kind = schemaKind(schema);
    if (kind === 'object') {
      for (const [k, child] of Object.entries(objectShape(schema) ?? {})) walk(child, [...segments, k]);
    } else if (kind === 'string' || kind === 'number' || kind === 'boolean') {
      out.set(envVarFor(segments), { segments, kind });
    }
  };
  for (const [k, schema] of Object.entries(SECTION_SCHEMAS)) walk(schema, [k]);
  return out;
}

/** The list keys outside `accounts` (e.g. `watch.perp_dexes`), by the variable that would name them: not overridable. */
function listKeys(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (schema: z.ZodType, segments: string[]): void => {
    const kind = schemaKind(schema);
    if (kind === 'object') for (const [k, child] of Object.entries(objectShape(schema) ?? {})) walk(child, [...segments, k]);
    else if (kind === 'array') out.set(envVarFor(segments), segments);
  };
  for (const [k, schema] of Object.entries(SECTION_SCHEMAS)) walk(schema, [k]);
  return out;
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);
const NUMBER_RE = /^[+-]?[0-9]+(?:\.[0-9]+)?$/;

/**
 * Reads the overrides out of `env`. `ignore`: variables the config names as key sources. Values
 * are never echoed in problems (a variable may hold something sensitive by mistake).
 */
export function collectEnvOverrides(
  env: Readonly<Record<string, string | undefined>>,
  ignore: ReadonlySet<string> = new Set(),
): { overrides: EnvOverride[]; problems: ConfigProblem[] } {
  const scalars = overridableScalars();
  const overrides: EnvOverride[] = [];
  const problems: ConfigProblem[] = [];
  for (const variable of Object.keys(env).sort()) {
    if (!variable.startsWith(ENV_PREFIX) || ignore.has(variable)) continue;
    const text = env[variable];
    if (text === undefined || text === '') continue;
    const target = scalars.get(variable);
    if (target === undefined) {
      problems.push({ path: variable, message: unknownVariableMessage(variable, scalars) });
      continue;
    }
    const path = formatPath(target.segments);
    if (target.kind === 'number') {
      if (!NUMBER_RE.test(text.trim())) {
        problems.push({ path, message: `${variable} is not a number` });
        continue;
      }
      overrides.push({ variable, segments: target.segments, value: Number(text.trim()) });
    } else if (target.kind === 'boolean') {
      const t = text.trim().toLowerCase();
      if (!TRUE.has(t) && !FALSE.has(t)) {
        problems.push({ path, message: `${variable} is not a boolean (true/false, 1/0, yes/no, on/off)` });
        continue;
      }
      overrides.push({ variable, segments: target.segments, value: TRUE.has(t) });
    } else {
      overrides.push({ variable, segments: target.segments, value: text });
    }
  }
  return { overrides, problems };
}

function unknownVariableMessage(variable: string, scalars: Map<string, unknown>): string {
  const rest = variable.slice(ENV_PREFIX.length);
  if (rest === 'ACCOUNTS' || rest.startsWith('ACCOUNTS_')) {
    return 'accounts cannot be overridden from the environment (a list): edit the config file';
  }
  const list = listKeys().get(variable);
  if (list !== undefined) return `${formatPath(list)} cannot be overridden from the environment (a list): edit the config file`;
  const flat = (s: string): string => s.replaceAll('__', '_');
  const near = [...scalars.keys()].find((k) => flat(k) === flat(variable));
  if (near !== undefined) return `names no config key; did you mean ${near}? (levels are joined with a double underscore)`;
  const section = [...scalars.keys()].some((k) => k.startsWith(`${variable}__`));
  if (section) return 'names a section, not a scalar key; override its keys one by one';
  return 'names no config key (DMS_KEEPER_ + the YAML path upper-cased, levels joined with __, e.g. DMS_KEEPER_SWITCH__DEADLINE_SECONDS)';
}

/**
 * Writes the overrides into the raw document (mutating it: it is the loader's own copy) and
 * returns which YAML paths they set, so problems there name the variable instead of a line.
 * A section that is not a mapping is left alone: validation reports it.
 */
export function applyEnvOverrides(raw: Record<string, unknown>, overrides: readonly EnvOverride[]): Map<string, string> {
  const overridden = new Map<string, string>();
  for (const o of overrides) {
    let node: Record<string, unknown> = raw;
    let ok = true;
    for (const seg of o.segments.slice(0, -1)) {
      const next = node[seg];
      if (next === undefined || next === null) {
        const created: Record<string, unknown> = {};
        node[seg] = created;
        node = created;
      } else if (typeof next === 'object' && !Array.isArray(next)) {
        node = next as Record<string, unknown>;
      } else {
        ok = false;
        break;
      }
    }
    const leaf = o.segments[o.segments.length - 1];
    if (!ok || leaf === undefined) continue;
    node[leaf] = o.value;
    overridden.set(formatPath(o.segments), o.variable);
  }
  return overridden;
}
