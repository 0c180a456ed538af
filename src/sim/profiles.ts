/**
 * Venue profiles: the ways a real venue (or a proxy in front of it) may answer within the spec,
 * which our own simulator would otherwise never show. Every response field is typed optional
 * (spec 1.5), so a venue may send `null` or leave any field out, add keys and enum values; a
 * proxy may answer in its place with its own clock; a cache may serve a stale `/v1/health`; the
 * venue's clock may be off or step.
 *
 * A profile is applied to the simulator's JSON answers after its routes wrote them (pure
 * functions of endpoint, status, body and a seeded random source), plus clock and fault settings.
 * What the spec says is always set, and what the keeper acts on, is never varied: an account's
 * `account_type` and a subaccount's `parent.address`, a page's `data` elements and a non-empty
 * `next_cursor`, an action answer's `status` (and an `err` answer's text), and the RESTError
 * envelope's required fields and `rate_limit` detail.
 *
 * The venue's info answers (`POST /info`, info-routes.ts; named `POST /info <type>`) vary the same
 * way, with what issue 20's reader acts on protected: every order of an open-orders list with its
 * `oid` and `coin`; every `assetPositions` entry with its `position`, `coin` and `szi`; every spot
 * balance with its `coin` and `total`; `userRole`'s `role` and `data.master` / `data.user`; all of
 * `userRateLimit`; every extra agent with its `name`, `address` and `validUntil`. The venue does not
 * promise that the rest is optional, but its answers have gained and lost keys over the years
 * (`maxTradeSzs`, `time`, `cloid`) and send null where a value is absent (`entryPx`,
 * `liquidationPx`, `tif`): a reader that relies on nothing else survives every variation. Lists stay
 * whole (no element is dropped or nulled); the 422 text answer is never varied.
 */
import type { Clock, TimerHandle } from '../time/clock.js';
import { withDualOrders } from './catalog/duals.js';
import type { FaultControl } from './faults.js';

export const SIM_PROFILES = [
  'strict',
  'nulls',
  'omitted',
  'extra_keys',
  'unknown_enums',
  'realistic',
  'proxy',
  'stale_health',
  'offset+2s',
  'offset-2s',
  'offset+30s',
  'offset-30s',
  'offset+300s',
  'offset-300s',
  'clock_step',
  'hip4_recurring',
  'random:SEED',
  'spec_dialect',
] as const;

/** Which of the body variations a profile applies (random: each with some probability). */
interface Variations {
  nulls: number;
  omit: number;
  extraKeys: number;
  unknownEnums: number;
  /** Probability that a 2xx answer carries a foreign (host-time) `Date`, as a proxy's cache would. */
  foreignDate: number;
}

const NONE: Variations = { nulls: 0, omit: 0, extraKeys: 0, unknownEnums: 0, foreignDate: 0 };

export interface SimProfile {
  readonly name: string;
  /** Venue clock minus base clock at start. */
  readonly clockOffsetMs: number;
  /**
   * `spec_dialect`: user-signed actions may name their network `venueChain` (the spec's name) as
   * well as `hyperliquidChain` (the venue's, the only one every other profile accepts).
   */
  readonly specChainField: boolean;
  /** Rewrites one JSON answer; `venueNowMs`/`hostNowMs` for `Date` headers and `as_of`. */
  transform(endpoint: string, status: number, body: unknown, clocks: { venueNowMs: number; hostNowMs: number }): { body: unknown; dateMs?: number };
  /** Starts timed behaviour (proxy phases, clock steps); returns the stop. */
  install(faults: FaultControl, baseClock: Clock): () => void;
  /**
   * HIP-4 as the venue runs it (`hip4_recurring`): the catalog gets a recurring 15-minute outcome
   * series that settles on the venue clock (catalog/recurring.ts, catalog/settlement.ts).
   */
  readonly recurringOutcomes?: boolean;
}

export class UnknownProfileError extends Error {
  readonly code = 'SIM_UNKNOWN_PROFILE' as const;
}

/** Parses a profile name (see SIM_PROFILES); throws UnknownProfileError naming the choices. */
export function parseProfile(name: string): SimProfile {
  const offset = /^offset([+-])(\d+)s$/.exec(name);
  if (offset) return makeProfile(name, { ...NONE }, (offset[1] === '-' ? -1 : 1) * Number(offset[2]) * 1000);
  const random = /^random:(\d+)$/.exec(name);
  if (random) return makeProfile(name, { nulls: 0.15, omit: 0.15, extraKeys: 0.2, unknownEnums: 0.2, foreignDate: 0.1 }, 30_000, Number(random[1]));
  switch (name) {
    case 'strict':
      return makeProfile(name, NONE, 0);
    case 'nulls':
      return makeProfile(name, { ...NONE, nulls: 1 }, 0);
    case 'omitted':
      return makeProfile(name, { ...NONE, omit: 1 }, 0);
    case 'extra_keys':
      return makeProfile(name, { ...NONE, extraKeys: 1 }, 0);
    case 'unknown_enums':
      return makeProfile(name, { ...NONE, unknownEnums: 1 }, 0);
    // What the benchmark runs against: every optional field the keeper does not act on sent as
    // null, and keys the spec does not name added to every object.
    case 'realistic':
      return makeProfile(name, { ...NONE, nulls: 1, extraKeys: 1 }, 0);
    case 'proxy':
      return makeProfile(name, { ...NONE, foreignDate: 0.3 }, 30_000, 1, installProxyPhases);
    case 'stale_health':
      return makeProfile(name, NONE, 0, 1, undefined, STALE_HEALTH_MS);
    case 'clock_step':
      return makeProfile(name, NONE, 0, 1, installClockSteps);
    // Recurring 15-minute outcomes that settle, and the merged book's dual orders in `/info`'s
    // open-orders listings (catalog/duals.ts).
    case 'hip4_recurring': {
      const base = makeProfile(name, NONE, 0);
      return {
        ...base,
        recurringOutcomes: true,
        transform: (endpoint, status, body, clocks) => {
          const out = base.transform(endpoint, status, body, clocks);
          const dual = status === 200 && (endpoint === `${INFO_PREFIX}openOrders` || endpoint === `${INFO_PREFIX}frontendOpenOrders`);
          return dual ? { ...out, body: withDualOrders(out.body) } : out;
        },
      };
    }
    // A service speaking the spec's dialect of the user-signed actions (`venueChain`): strict otherwise.
    case 'spec_dialect':
      return { ...makeProfile(name, NONE, 0), specChainField: true };
    default:
      throw new UnknownProfileError(`unknown simulator profile '${name}'; one of: ${SIM_PROFILES.join(', ')}`);
  }
}

/** How old a cached `/v1/health` is in the stale_health profile. */
const STALE_HEALTH_MS = 90_000;

/** A proxy in front: every 40 s, 3 s of HTML 502/504 pages stamped with the host's clock. */
function installProxyPhases(faults: FaultControl, base: Clock): () => void {
  let handle: TimerHandle | null = null;
  let n = 0;
  const next = (): void => {
    handle = base.setTimeout(() => {
      faults.add({ kind: 'body', mode: 'html', status: n++ % 2 === 0 ? 502 : 504, path: 'rest', dateShiftMs: -faults.clockOffsetMs(), forMs: 3_000 });
      next();
    }, 40_000);
  };
  next();
  return () => {
    if (handle) base.clearTimeout(handle);
  };
}

/** The venue's clock steps: +30 s after a minute, back 30 s a minute and a half later. */
function installClockSteps(faults: FaultControl, base: Clock): () => void {
  const handles = [
    base.setTimeout(() => faults.setClockOffset(faults.clockOffsetMs() + 30_000), 60_000),
    base.setTimeout(() => faults.setClockOffset(faults.clockOffsetMs() - 30_000), 150_000),
  ];
  return () => handles.forEach((h) => base.clearTimeout(h));
}

function makeProfile(
  name: string,
  v: Variations,
  clockOffsetMs: number,
  seed = 1,
  install?: (faults: FaultControl, base: Clock) => () => void,
  staleHealthMs = 0,
): SimProfile {
  const rng = mulberry32(seed);
  return {
    name,
    clockOffsetMs,
    specChainField: false,
    install: install ?? (() => () => undefined),
    transform(endpoint, status, body, clocks) {
      if (staleHealthMs > 0 && endpoint === 'GET /v1/health' && status === 200 && isObject(body)) {
        // A cache serves an old answer: its as_of and its Date are both stale.
        const at = clocks.venueNowMs - staleHealthMs;
        return { body: { ...body, as_of: new Date(at).toISOString() }, dateMs: at };
      }
      if (v === NONE) return { body };
      const out = status >= 400 ? varyEnvelope(body, v, rng) : endpoint.startsWith(INFO_PREFIX) ? varyInfo(endpoint.slice(INFO_PREFIX.length), body, v, rng) : varyBody(endpoint, body, v, rng);
      const foreign = status < 400 && chance(rng, v.foreignDate);
      return foreign ? { body: out, dateMs: clocks.hostNowMs } : { body: out };
    },
  };
}

// ---- body variations ----

type Path = ReadonlyArray<string | number>;

/** The paths the keeper acts on, per answer: never varied (see the file comment). */
function isProtected(endpoint: string, root: Record<string, unknown>, path: Path): boolean {
  const [a, b] = path;
  if (endpoint === 'GET /v1/accounts/{address}') {
    if (a === 'account_type' && path.length === 1) return true;
    if (a === 'parent' && root.account_type === 'subaccount') return path.length === 1 || (b === 'address' && path.length === 2);
    return false;
  }
  if (endpoint.endsWith('/orders') || endpoint.endsWith('/positions') || endpoint === 'GET /v1/participants') {
    if (a === 'data') return path.length <= 2;
    if (a === 'next_cursor') return typeof root.next_cursor === 'string' && root.next_cursor !== '';
    return false;
  }
  if (endpoint === 'POST /exchange' || endpoint.startsWith('POST /v1/trading/')) {
    return a === 'status' || (a === 'response' && root.status === 'err');
  }
  return false;
}

/** Keys whose values are enums in the spec, where the keeper acts on none (except as protected above). */
const ENUM_KEYS = new Set(['status', 'direction', 'order_type', 'time_in_force', 'state', 'kind', 'comparator', 'period', 'account_type']);

function varyBody(endpoint: string, body: unknown, v: Variations, rng: () => number): unknown {
  if (!isObject(body)) return body;
  const root = body;
  const walk = (value: unknown, path: Path): unknown => {
    if (Array.isArray(value)) return value.map((x, i) => walk(x, [...path, i]));
    if (!isObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) {
      const p = [...path, k];
      const prot = isProtected(endpoint, root, p);
      if (!prot && (x === null || typeof x !== 'object') && ENUM_KEYS.has(k) && typeof x === 'string' && chance(rng, v.unknownEnums)) {
        out[k] = `future_${k}`;
        continue;
      }
      if (!prot && chance(rng, v.omit)) continue;
      if (!prot && (x === null || typeof x !== 'object' || isObject(x)) && chance(rng, v.nulls)) {
        // Leaves become null; objects too, except where the spec's own null cases are nested
        // (an order's account location keeps its shape so `subaccount: null` is exercised).
        if (!isObject(x) || chance(rng, 0.5) || v.nulls < 1) {
          out[k] = null;
          continue;
        }
      }
      out[k] = walk(x, p);
    }
    if (v.nulls > 0) addSpecNulls(endpoint, root, path, value, out, v.nulls, rng);
    if (chance(rng, v.extraKeys)) out[`x_extra_${Math.floor(rng() * 1000)}`] = { added: true, list: [1, 'two', null] };
    return out;
  };
  return walk(body, []);
}

const INFO_PREFIX = 'POST /info ';

/** Enum-valued keys of the info answers (none of them acted on, except `role`, protected). */
const INFO_ENUM_KEYS = new Set(['side', 'orderType', 'tif', 'type', 'role']);

/** The paths of an info answer the keeper acts on (see the file comment): never varied. */
function isProtectedInfo(type: string, path: Path): boolean {
  const last = path[path.length - 1];
  switch (type) {
    case 'openOrders':
    case 'frontendOpenOrders':
      return path.length === 1 || (path.length === 2 && (last === 'oid' || last === 'coin'));
    case 'clearinghouseState':
      if (path[0] !== 'assetPositions') return false;
      if (path.length <= 3) return path.length < 3 || last === 'position';
      return path.length === 4 && path[2] === 'position' && (last === 'coin' || last === 'szi');
    case 'spotClearinghouseState':
      return path[0] === 'balances' && (path.length <= 2 || (path.length === 3 && (last === 'coin' || last === 'total')));
    case 'userRole':
      return path[0] === 'role' || (path[0] === 'data' && (path.length === 1 || last === 'master' || last === 'user'));
    case 'userRateLimit':
      return path.length === 1;
    case 'extraAgents':
      return path.length === 1 || (path.length === 2 && (last === 'name' || last === 'address' || last === 'validUntil'));
    default:
      return true;
  }
}

/** An info answer (object or list) varied where the keeper does not act. */
function varyInfo(type: string, body: unknown, v: Variations, rng: () => number): unknown {
  const walk = (value: unknown, path: Path): unknown => {
    if (Array.isArray(value)) return value.map((x, i) => walk(x, [...path, i]));
    if (!isObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) {
      const p = [...path, k];
      const prot = isProtectedInfo(type, p);
      if (!prot && typeof x === 'string' && INFO_ENUM_KEYS.has(k) && chance(rng, v.unknownEnums)) {
        out[k] = `future_${k}`;
        continue;
      }
      if (!prot && chance(rng, v.omit)) continue;
      if (!prot && !Array.isArray(x) && chance(rng, v.nulls)) {
        out[k] = null;
        continue;
      }
      out[k] = walk(x, p);
    }
    if (chance(rng, v.extraKeys)) out[`x_extra_${Math.floor(rng() * 1000)}`] = { added: true, list: [1, 'two', null] };
    return out;
  };
  return walk(body, []);
}

/** Optional fields our simulator leaves out but the spec allows as present-and-null. */
function addSpecNulls(endpoint: string, root: Record<string, unknown>, path: Path, src: Record<string, unknown>, out: Record<string, unknown>, p: number, rng: () => number): void {
  const keys: string[] = [];
  if (endpoint === 'GET /v1/accounts/{address}' && path.length === 0) keys.push('username', 'image_url', 'venue_name', 'subaccounts', ...(root.account_type === 'subaccount' ? [] : ['parent']));
  if ((endpoint.endsWith('/orders') || endpoint.endsWith('/positions')) && path.length === 0) keys.push('next_cursor');
  if (path[path.length - 1] === 'account' && path[0] === 'data') keys.push('subaccount', 'main_account');
  for (const k of keys) if (!(k in src) && !isProtected(endpoint, root, [...path, k]) && chance(rng, p)) out[k] = null;
}

/** Error envelopes: the required fields stay; extra keys, an unknown status name, an unknown detail kind. */
function varyEnvelope(body: unknown, v: Variations, rng: () => number): unknown {
  if (!isObject(body) || !isObject(body.error)) return body;
  const error: Record<string, unknown> = { ...body.error };
  if (chance(rng, v.unknownEnums) && error.code !== 429) error.status = 'FUTURE_STATUS';
  if (chance(rng, v.unknownEnums) && Array.isArray(error.details)) error.details = [...error.details, { type: 'future_detail', note: 'x' }];
  if (chance(rng, v.extraKeys)) error.x_extra = { trace: 'abc' };
  const out: Record<string, unknown> = { ...body, error };
  if (chance(rng, v.extraKeys)) out.x_extra = 1;
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function chance(rng: () => number, p: number): boolean {
  return p >= 1 || (p > 0 && rng() < p);
}

/** A small seeded generator: the same seed gives the same variations, run after run. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
