import { CHAIN_FIELDS, VENUE_CHAIN_FIELD } from '../venue/signing/user-signed.js';
import { z } from 'zod';
import { VENUE_FACTS } from '../venue/facts.js';

/**
 * The shape of the YAML config (DESIGN.md section 2), in the file's own snake_case. Every object
 * is strict: an unknown key is an error at every level (a typo must not silently fall back to a
 * default on a safety switch). Cross-field rules and everything that depends on the environment
 * (URL schemes, key files) live in `rules.ts` and `load.ts`, so each problem gets its own YAML path.
 *
 * The `Config` the loader returns (types.ts) is camelCase and fully defaulted.
 */

/** Default `exchange_url` / `ws_url` per network. The client appends `/exchange` and `/ws`. */
export const NETWORK_URLS = {
  mainnet: { exchangeUrl: 'https://api.hyperliquid.xyz', wsUrl: 'wss://api.hyperliquid.xyz' },
  testnet: { exchangeUrl: 'https://api.hyperliquid-testnet.xyz', wsUrl: 'wss://api.hyperliquid-testnet.xyz' },
} as const;

// The deadline's floor and the re-arm rule's retry reserve live with the rest of the horizon's
// arithmetic (plan/horizon.ts); re-exported here, where the config's other numbers are.
export { DEADLINE_SAFETY_MARGIN_SECONDS, minDeadlineSeconds, RETRIES_BEFORE_MIN_HORIZON, retrySlotSeconds } from '../plan/horizon.js';

/** pino's levels (plus `silent`). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const DEFAULT_LISTEN = '127.0.0.1:9464';
export const DEFAULT_STATE_DIR = './state';

/** Every default of DESIGN.md section 2, in one place (the schema below reads from here). */
export const CONFIG_DEFAULTS = {
  venue: { simulator: false, network: 'testnet', request_timeout_ms: 5000, chain_field: VENUE_CHAIN_FIELD },
  switch: {
    deadline_seconds: 60,
    rearm_every_seconds: 15,
    min_horizon_seconds: 20,
    arm_when: 'always',
    on_shutdown: 'keep',
    path: 'rest',
  },
  watch: { orders_every_seconds: 30, positions_every_seconds: 60, notifications: true, source: 'service', address_budget_warn_share: 0.5, perp_dexes: [] },
  rate_limits: {
    global: { requests: 1200, per_seconds: 60 },
    schedule_cancel: { requests: 600, per_seconds: 60 },
    /** The venue's published IP weight: 1200 per minute, an action weighs 1. */
    exchange: { requests: VENUE_FACTS.ipWeightPerMinute, per_seconds: 60 },
    /** The venue's published weights of the info requests the keeper sends (open_orders: frontendOpenOrders or openOrders). */
    info_weights: {
      open_orders: VENUE_FACTS.infoWeights.other,
      clearinghouse_state: VENUE_FACTS.infoWeights.byType['clearinghouseState']!,
      spot_clearinghouse_state: VENUE_FACTS.infoWeights.byType['spotClearinghouseState']!,
      user_role: VENUE_FACTS.infoWeights.byType['userRole']!,
      user_rate_limit: VENUE_FACTS.infoWeights.other,
      extra_agents: VENUE_FACTS.infoWeights.other,
    },
  },
  agent: { name: 'dms-keeper', valid_days: 30 },
  /**
   * A `polymarket_clob` venue under `venues:`. The heartbeat period is the venue's own examples'
   * (5 s, half its 10 s timeout); the minimum horizon and request timeout leave one failed beat
   * room for its retry (plan/horizon.ts); the rate limit is the CLOB's published general limit.
   */
  polymarket_clob: { heartbeat_every_seconds: 5, min_horizon_seconds: 2, request_timeout_ms: 1000, rate_limit: { requests: 9000, per_seconds: 10 } },
  liveness: { silence_seconds: 10, on_silence: 'cancel_soon', probe: { every_seconds: 1, timeout_ms: 1000 } },
  shard: { index: 0, count: 1, replication: 1, fleet: { lease_seconds: 10 } },
  server: { listen: DEFAULT_LISTEN },
  log: { level: 'info', format: 'json' },
} as const;

export { ACCOUNT_NAME_MAX, ACCOUNT_NAME_RE } from './names.js';
import { ACCOUNT_NAME_MAX, ACCOUNT_NAME_RE } from './names.js';
export { ADDRESS_RE } from '../venue/address.js';
import { ADDRESS_RE } from '../venue/address.js';
/** Printable ASCII without spaces: the venue appends ` valid_until <ms>` after the name. */
export const AGENT_NAME_RE = /^[\x21-\x7e]+$/;
export const FEE_RATE_RE = /^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?%$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `switch:` and `agent:` with every child commented out are YAML nulls: read them as empty. */
const emptyIsNull = (v: unknown): unknown => (v === null ? undefined : v);
function section<T extends z.ZodType>(schema: T) {
  return z.preprocess(emptyIsNull, schema);
}

const seconds = () => z.int().min(1);
const address = (what: string) =>
  z
    .string()
    .regex(ADDRESS_RE, `must be ${what}: 0x followed by 40 hex digits, in quotes`)
    .transform((s) => s.toLowerCase() as `0x${string}`);

/** The YAML form of a key source, checked by hand so that no message can echo a pasted key. */
export interface RawKeySource {
  file?: string;
  env?: string;
}

export const KeySourceSchema = z.unknown().transform((v, ctx): RawKeySource => {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint') {
    ctx.addIssue({
      code: 'custom',
      message:
        'a key is never written inline in the config (the value is not shown here): use { file: NAME } ' +
        '(mode 0600, or a systemd credential) or { env: VAR }, and treat a key that was pasted into a config file as exposed',
    });
    return z.NEVER;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    ctx.addIssue({ code: 'custom', message: 'must be { file: NAME } or { env: VAR }' });
    return z.NEVER;
  }
  const obj = v as Record<string, unknown>;
  let ok = true;
  for (const k of Object.keys(obj)) {
    if (k !== 'file' && k !== 'env') {
      ctx.addIssue({ code: 'unrecognized_keys', keys: [k], message: 'Unrecognized key' });
      ok = false;
    }
  }
  const hasFile = obj.file !== undefined;
  const hasEnv = obj.env !== undefined;
  if (hasFile && hasEnv) {
    ctx.addIssue({ code: 'custom', message: 'give either file or env, not both' });
    return z.NEVER;
  }
  if (!hasFile && !hasEnv) {
    if (ok) ctx.addIssue({ code: 'custom', message: 'must be { file: NAME } or { env: VAR }' });
    return z.NEVER;
  }
  if (hasFile) {
    if (typeof obj.file !== 'string' || obj.file === '' || obj.file.includes('\0')) {
      ctx.addIssue({ code: 'custom', path: ['file'], message: 'must be a file name or path' });
      return z.NEVER;
    }
    return ok ? { file: obj.file } : z.NEVER;
  }
  if (typeof obj.env !== 'string' || !ENV_NAME_RE.test(obj.env)) {
    ctx.addIssue({ code: 'custom', path: ['env'], message: 'must be an environment variable name (letters, digits, _)' });
    return z.NEVER;
  }
  return ok ? { env: obj.env } : z.NEVER;
});

const D = CONFIG_DEFAULTS;

export const VenueSchema = z.strictObject({
  simulator: z.boolean().default(D.venue.simulator),
  network: z.enum(['testnet', 'mainnet']).default(D.venue.network),
  base_url: z.string().min(1).optional(),
  exchange_url: z.string().min(1).optional(),
  ws_url: z.string().min(1).optional(),
  request_timeout_ms: z.int().min(100).default(D.venue.request_timeout_ms),
  chain_field: z.enum(CHAIN_FIELDS).default(D.venue.chain_field),
});

const switchFields = {
  deadline_seconds: seconds(),
  rearm_every_seconds: seconds(),
  min_horizon_seconds: seconds(),
  arm_when: z.enum(['always', 'orders_open']),
  on_shutdown: z.enum(['keep', 'clear']),
  path: z.enum(['rest', 'exchange', 'rest_then_exchange']),
};
export const SWITCH_KEYS = Object.keys(switchFields) as Array<keyof typeof switchFields>;

export const SwitchSchema = z.strictObject({
  deadline_seconds: switchFields.deadline_seconds.default(D.switch.deadline_seconds),
  rearm_every_seconds: switchFields.rearm_every_seconds.default(D.switch.rearm_every_seconds),
  min_horizon_seconds: switchFields.min_horizon_seconds.default(D.switch.min_horizon_seconds),
  arm_when: switchFields.arm_when.default(D.switch.arm_when),
  on_shutdown: switchFields.on_shutdown.default(D.switch.on_shutdown),
  path: switchFields.path.default(D.switch.path),
});

/** An account's `switch:` block: any subset of the top-level keys, no defaults (they inherit). */
export const AccountSwitchSchema = z.strictObject({
  deadline_seconds: switchFields.deadline_seconds.optional(),
  rearm_every_seconds: switchFields.rearm_every_seconds.optional(),
  min_horizon_seconds: switchFields.min_horizon_seconds.optional(),
  arm_when: switchFields.arm_when.optional(),
  on_shutdown: switchFields.on_shutdown.optional(),
  path: switchFields.path.optional(),
});

/**
 * A builder-deployed perp dex (HIP-3) by name, as the venue names them (`xyz`, `flx`, `vntl`): lower
 * case letters and digits, at most 6 (the venue's `perpDeploy` action: "Name of the perp dex (<= 6
 * characters)"). The empty string is the first perp dex, which is always read.
 */
export const PERP_DEX_RE = /^[a-z0-9]{1,6}$/;
/** At most this many in `watch.perp_dexes`: each costs every account one more open-orders read (weight 20) per period. */
export const PERP_DEXES_MAX = 16;

const perpDexes = z
  .array(
    z
      .string()
      .refine((d) => d !== '', { error: 'the first perp dex (the empty name) is always read: list only builder-deployed dexes', abort: true })
      .regex(PERP_DEX_RE, 'must be a perp dex name: 1 to 6 lower-case letters or digits (as the venue lists them in perpDexs)'),
  )
  .max(PERP_DEXES_MAX, `at most ${PERP_DEXES_MAX} perp dexes`)
  .superRefine((list, ctx) => {
    list.forEach((d, i) => {
      const first = list.indexOf(d);
      if (first !== i) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate of perp_dexes[${first}] (${d})` });
    });
  });

export const WatchSchema = z.strictObject({
  orders_every_seconds: seconds().default(D.watch.orders_every_seconds),
  positions_every_seconds: seconds().default(D.watch.positions_every_seconds),
  notifications: z.boolean().default(D.watch.notifications),
  source: z.enum(['service', 'venue', 'service_then_venue']).default(D.watch.source as 'service'),
  address_budget_warn_share: z.number().gt(0).max(1).default(D.watch.address_budget_warn_share),
  perp_dexes: perpDexes.default(() => [...D.watch.perp_dexes]),
});

const limit = (d: { requests: number; per_seconds: number }) =>
  section(
    z
      .strictObject({
        requests: z.int().min(1).default(d.requests),
        per_seconds: z.int().min(1).default(d.per_seconds),
      })
      .prefault({}),
  );

/** One budget for every instance with the same `name`, kept in Redis (budget/shared-budget.ts). */
export const SharedBudgetSchema = z.strictObject({
  redis_url: z
    .string()
    .max(512)
    .regex(/^rediss?:\/\/[^\s@/]+(\/\d{1,2})?$/, 'must be redis://host:port (or rediss://, optionally /db) without credentials: the password comes from password: { file | env }'),
  name: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'must match [a-z0-9][a-z0-9_.-]{0,63}'),
  password: KeySourceSchema.optional(),
  fallback_share: z.number().gt(0).max(1).optional(),
});

/** A request's weight against the IP budget: a whole number of the budget's units (an action weighs 1). */
const weight = (d: number) => z.int().min(1).max(100_000).default(d);
const IW = D.rate_limits.info_weights;
export const InfoWeightsSchema = section(
  z
    .strictObject({
      open_orders: weight(IW.open_orders),
      clearinghouse_state: weight(IW.clearinghouse_state),
      spot_clearinghouse_state: weight(IW.spot_clearinghouse_state),
      user_role: weight(IW.user_role),
      user_rate_limit: weight(IW.user_rate_limit),
      extra_agents: weight(IW.extra_agents),
    })
    .prefault({}),
);

export const RateLimitsSchema = z.strictObject({
  global: limit(D.rate_limits.global),
  schedule_cancel: limit(D.rate_limits.schedule_cancel),
  exchange: limit(D.rate_limits.exchange),
  info_weights: InfoWeightsSchema,
  shared: section(SharedBudgetSchema.optional()),
});

/**
 * One named venue of `venues:` besides the default `venue:` (src/config/venues.ts). Today one kind:
 * Polymarket's CLOB, whose switch is a heartbeat (docs/polymarket.md).
 */
export const PolymarketVenueSchema = z.strictObject({
  kind: z.literal('polymarket_clob'),
  /** The CLOB's base URL (https, or loopback); unused with `venue.simulator: true` (the embedded simulator serves one). */
  clob_url: z.string().min(1).optional(),
  heartbeat_every_seconds: seconds().default(D.polymarket_clob.heartbeat_every_seconds),
  min_horizon_seconds: seconds().default(D.polymarket_clob.min_horizon_seconds),
  request_timeout_ms: z.int().min(100).max(10_000).default(D.polymarket_clob.request_timeout_ms),
  rate_limit: limit(D.polymarket_clob.rate_limit),
});

/** A venue's name under `venues:` (a metric label, like an account's). */
export const VENUE_NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;

export const VenuesSchema = z.record(z.string().regex(VENUE_NAME_RE, 'must match [a-z][a-z0-9_-]{0,31} (it is a metric label)'), section(PolymarketVenueSchema));

/** A Polymarket account's L2 API credentials, each a key source like `master_key` (read at start and reload, never logged). */
export const ClobCredentialsSchema = z.strictObject({
  key: KeySourceSchema,
  secret: KeySourceSchema,
  passphrase: KeySourceSchema,
});

export const AgentSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(VENUE_FACTS.agentNameMaxChars, `at most ${VENUE_FACTS.agentNameMaxChars} characters (the venue's limit before the valid_until suffix)`)
    .regex(AGENT_NAME_RE, 'must be printable ASCII without spaces')
    .default(D.agent.name),
  key: KeySourceSchema.optional(),
  valid_days: z
    .int()
    .min(1)
    .max(VENUE_FACTS.agentValidMaxDays, `at most ${VENUE_FACTS.agentValidMaxDays} (the venue's longest agent approval)`)
    .default(D.agent.valid_days),
});

/**
 * An account's bot liveness (docs/liveness.md): re-armed only while its bot is alive, told by the
 * bot's heartbeats or by probing the bot's health URL (exactly one: liveness.ts, rules.ts).
 */
export const LivenessSchema = z.strictObject({
  heartbeat: section(z.strictObject({ token: KeySourceSchema }).optional()),
  probe: section(
    z
      .strictObject({
        url: z.string().min(1).max(2048),
        every_seconds: seconds().default(D.liveness.probe.every_seconds),
        timeout_ms: z.int().min(50).max(60_000).default(D.liveness.probe.timeout_ms),
      })
      .optional(),
  ),
  silence_seconds: seconds().default(D.liveness.silence_seconds),
  on_silence: z.enum(['cancel_soon', 'stop_rearming']).default(D.liveness.on_silence as 'cancel_soon'),
});

export const AccountSchema = z.strictObject({
  name: z
    .string()
    .max(ACCOUNT_NAME_MAX, `at most ${ACCOUNT_NAME_MAX} characters`)
    .regex(ACCOUNT_NAME_RE, 'must match [a-z0-9][a-z0-9_.-]* (it is a metric label)'),
  address: address('an address'),
  master_key: KeySourceSchema.optional(),
  agent: section(AgentSchema.prefault({})),
  builder_fee: section(
    z
      .strictObject({
        builder: address("the builder's address"),
        max_fee_rate: z.string().regex(FEE_RATE_RE, 'must be a percent string like "0.01%"'),
      })
      .optional(),
  ),
  switch: section(AccountSwitchSchema.optional()),
  /** Who is protected first when the budget cannot arm every account (higher first). */
  priority: z.int().min(-1_000_000).max(1_000_000).default(0),
  liveness: section(LivenessSchema.optional()),
  /** The venue it trades on: a name under `venues:`, or absent for the default `venue:` (src/config/venues.ts). */
  venue: z.string().min(1).max(32).optional(),
  /** A `polymarket_clob` account's L2 API credentials (src/config/venues.ts). */
  clob_credentials: section(ClobCredentialsSchema.optional()),
});

/**
 * `shard.fleet`: the live instances come from the shared budget's Redis (leases), not from
 * `index`/`count` (src/config/shard.ts rendezvousOwners; docs/DESIGN.md section 7, "Fleet").
 */
export const FleetSchema = z.strictObject({
  /** This instance's name in the fleet, unique and stable across restarts (a pod's name, a host's name). Default: the host name. */
  instance: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'must be 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit').optional(),
  /** An instance that has not renewed its lease for this long counts as gone; its accounts move. */
  lease_seconds: z.int().min(3).max(60).default(D.shard.fleet.lease_seconds),
});

export const ShardSchema = z.strictObject({
  index: z.int().min(0).default(D.shard.index),
  count: z.int().min(1).default(D.shard.count),
  /** How many instances protect each account: 1, or 2 (both arm it). */
  replication: z.int().min(1).max(2).default(D.shard.replication),
  fleet: section(FleetSchema.optional()),
});

export const ServerSchema = z.strictObject({
  listen: z.string().min(1).default(D.server.listen),
});

/**
 * `demo:` (only with `venue.simulator: true`): bots the keeper runs itself for `npm start`, each
 * heartbeating for its accounts as a real bot would (over HTTP, with their token), one of them
 * falling silent for a while so a newcomer sees the switch follow the bot.
 */
export const DemoSchema = z.strictObject({
  bots: z
    .array(
      z.strictObject({
        accounts: z.array(z.string().min(1).max(ACCOUNT_NAME_MAX)).min(1).max(64),
        silent_after_seconds: seconds().optional(),
        silent_for_seconds: seconds().optional(),
      }),
    )
    .min(1)
    .max(16),
});

/** json: one JSON object a line, for log shippers; pretty: pino-pretty's readable lines, for people. */
export const LOG_FORMATS = ['json', 'pretty'] as const;

export const LogSchema = z.strictObject({
  level: z.enum(LOG_LEVELS).default(D.log.level),
  format: z.enum(LOG_FORMATS).default(D.log.format),
});

/**
 * The top level, section by section. The loader validates each section on its own (so that one
 * broken section does not hide the problems of another) and accounts one by one.
 */
export const SECTION_SCHEMAS = {
  venue: section(VenueSchema.prefault({})),
  switch: section(SwitchSchema.prefault({})),
  watch: section(WatchSchema.prefault({})),
  rate_limits: section(RateLimitsSchema.prefault({})),
  shard: section(ShardSchema.prefault({})),
  state_dir: z.string().min(1).optional(),
  server: section(ServerSchema.prefault({})),
  log: section(LogSchema.prefault({})),
  demo: section(DemoSchema.optional()),
  venues: section(VenuesSchema.optional()),
} as const;

export const TOP_LEVEL_KEYS = ['venue', 'venues', 'switch', 'watch', 'rate_limits', 'accounts', 'shard', 'state_dir', 'server', 'log', 'demo'] as const;

export type RawVenue = z.output<typeof VenueSchema>;
export type RawSwitch = z.output<typeof SwitchSchema>;
export type RawAccountSwitch = z.output<typeof AccountSwitchSchema>;
export type RawWatch = z.output<typeof WatchSchema>;
export type RawRateLimits = z.output<typeof RateLimitsSchema>;
export type RawAccount = z.output<typeof AccountSchema>;
export type RawShard = z.output<typeof ShardSchema>;
export type RawServer = z.output<typeof ServerSchema>;
export type RawLog = z.output<typeof LogSchema>;
export type RawPolymarketVenue = z.output<typeof PolymarketVenueSchema>;

/**
 * Zod introspection, for the two places that need the schema as data: listing the keys allowed
 * where an unknown key was found, and typing env overrides. Wrappers (optional, default,
 * prefault, preprocess pipes) are looked through.
 */
interface ZodDefLike {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
}

function defOf(s: z.ZodType): ZodDefLike {
  return (s as unknown as { _zod: { def: ZodDefLike } })._zod.def;
}

export function unwrapSchema(s: z.ZodType): z.ZodType {
  let cur = s;
  for (let i = 0; i < 20; i++) {
    const d = defOf(cur);
    if (d.innerType && ['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional'].includes(d.type)) cur = d.innerType;
    else if (d.type === 'pipe' && d.in && d.out) cur = defOf(d.out).type === 'transform' ? d.in : d.out;
    else break;
  }
  return cur;
}

export type SchemaKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'other';

export function schemaKind(s: z.ZodType): SchemaKind {
  const t = defOf(unwrapSchema(s)).type;
  if (t === 'object' || t === 'array' || t === 'string' || t === 'number' || t === 'boolean') return t;
  if (t === 'enum') return 'string';
  return 'other';
}

export function objectShape(s: z.ZodType): Record<string, z.ZodType> | undefined {
  const d = defOf(unwrapSchema(s));
  return d.type === 'object' ? d.shape : undefined;
}

export function arrayElement(s: z.ZodType): z.ZodType | undefined {
  const d = defOf(unwrapSchema(s));
  return d.type === 'array' ? d.element : undefined;
}

/** The schema at a YAML path of the whole document (`accounts` elements are `AccountSchema`). */
export function schemaAt(segments: readonly PropertyKey[]): z.ZodType | undefined {
  const [first, ...rest] = segments;
  let cur: z.ZodType | undefined;
  if (first === 'accounts') {
    if (rest.length === 0) return z.array(AccountSchema);
    if (typeof rest[0] !== 'number') return undefined;
    cur = AccountSchema;
    rest.shift();
  } else if (typeof first === 'string' && first in SECTION_SCHEMAS) {
    cur = SECTION_SCHEMAS[first as keyof typeof SECTION_SCHEMAS];
  } else return undefined;
  for (const seg of rest) {
    if (cur === undefined) return undefined;
    if (typeof seg === 'number') cur = arrayElement(cur);
    else cur = objectShape(cur)?.[String(seg)];
  }
  return cur;
}
