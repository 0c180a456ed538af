import type { z } from 'zod';
import { envVarFor } from './env.js';
import { AccountSchema, arrayElement, CONFIG_DEFAULTS, objectShape, schemaKind, SECTION_SCHEMAS, TOP_LEVEL_KEYS, unwrapSchema } from './schema.js';

/**
 * docs/configuration.md, generated from the schema: every key, its type, bounds, allowed values,
 * default and environment variable come from the zod schema and CONFIG_DEFAULTS, so the reference
 * cannot drift from what the loader accepts. Only the one-line meanings are written here, and a
 * test fails when a key has none or a meaning names a key the schema does not have.
 *
 *   node scripts/config-reference.mjs --write    regenerate docs/configuration.md (after a build)
 */
export const KEY_MEANINGS: Record<string, string> = {
  venue: 'Where the venue is.',
  'venue.simulator': 'Start the embedded venue simulator on loopback and point every URL at it (demo and tests only; the URLs below are then ignored).',
  'venue.network': 'Signing chain and the default `exchange_url` / `ws_url`.',
  'venue.base_url': 'REST service URL. Required unless `simulator`, or `watch.source: venue` with every account on `switch.path: exchange` (a keeper with no service: arms through the exchange endpoint, reads and account resolution (`userRole`) through the venue\'s info endpoint, notifications through the WebSocket, the venue clock from the `Date` of the venue\'s answers). `https://` (plain `http://` only for a loopback host), no `user:password@`.',
  'venue.exchange_url': 'Exchange endpoint base: the keeper posts to `{exchange_url}/exchange`. Default per network: mainnet `https://api.hyperliquid.xyz`, testnet `https://api.hyperliquid-testnet.xyz`.',
  'venue.ws_url': 'WebSocket base: the keeper connects to `{ws_url}/ws`. Default per network, as `exchange_url` with `wss://`.',
  'venue.chain_field': 'The name under which approvals (`approveAgent`, `approveBuilderFee`) carry and sign the network (`Mainnet`/`Testnet`): `hyperliquidChain`, the venue\'s own and what its clients send, or `venueChain`, the outcome service spec\'s name, only for a service that speaks that dialect (the venue refuses it: the name is part of the signed type). `check-config` prints the one in force.',
  'venue.request_timeout_ms': 'Deadline of one request (connect, headers, body). Also sets the retry slot of the re-arm rule: `request_timeout_ms / 1000 + 1` s.',
  switch: 'The dead man\'s switch of every account; an account may override any key in its own `switch:`.',
  'switch.deadline_seconds': 'Each arm sets the cancel time to venue now + this. If the keeper dies, open orders are cancelled at most this long after its last arm. At least 10 (the venue\'s 5 s minimum lead plus a 5 s margin).',
  'switch.rearm_every_seconds': 'Planned re-arm period. Rule: `deadline_seconds - rearm_every_seconds >= min_horizon_seconds + 2 x retry slot`, so two failed attempts can be retried before the horizon drops below the minimum. The adaptive cadence may stretch it to fit the request budget, never past that rule.',
  'switch.min_horizon_seconds': 'Readiness fails, and the alert DmsKeeperHorizonLow fires, for an account whose horizon (deadline minus now) drops below this. Less than `deadline_seconds`. Exported per account as `dms_keeper_min_horizon_seconds`.',
  'switch.arm_when': '`always`, or `orders_open`: keep the account armed only while it has open orders (an unknown count counts as open).',
  'switch.on_shutdown': '`keep`: a clean stop leaves the schedule armed and it fires later (fail safe). `clear`: a clean stop clears it. Use `keep` for any account another instance also protects.',
  'switch.path': 'How arms are sent: `rest` (`POST {base_url}/v1/trading/orders/schedule-cancel`), `exchange` (`POST {exchange_url}/exchange`), or `rest_then_exchange` (REST, or the exchange endpoint when REST is held by a 429, would keep an arm past its safe time, or failed: then for 10 to 30 s, back as soon as REST works again).',
  watch: 'How each account is watched.',
  'watch.orders_every_seconds': 'Open-orders poll per account; how fast a fired cancel is noticed without notifications.',
  'watch.positions_every_seconds': 'Positions poll per account.',
  'watch.source':
    'Where open orders and positions are read: `service` (the REST service\'s listings), `venue` (the venue\'s own info endpoint, `POST {exchange_url}/info`: every order the scheduled cancel hits, including orders the service does not list; its reads spend the venue\'s IP weight, 24 per account and period at the published weights; `venue.base_url` may then be absent when every account uses `switch.path: exchange`), or `service_then_venue` (the service, and the venue for each read the service fails; while it fails, one read every 10 s for the whole keeper asks the service and the others go straight to the venue; accounts are then resolved by the venue\'s `userRole` too while the service fails). `/status` `orders_source` and `dms_keeper_orders_source` say which answered. What `arm_when: orders_open` counts: under `service` the service\'s listing (no venue read); under `venue` the venue\'s; under `service_then_venue` the venue\'s for `orders_open` accounts, read instead of the service\'s on the orders cadence (20 weight a read), and the service\'s only when that read fails (`always` accounts read the service and spend no venue weight).',
  'watch.address_budget_warn_share':
    'Warn (log `address_budget_low`, alert `DmsKeeperAddressBudgetLow`) when a day of re-arms at the account\'s planned period would take more than this share of its address\'s actions left (the venue\'s `userRateLimit`: `nRequestsCap - nRequestsUsed`, read after provisioning and every 10 minutes when `watch.source` is `venue` or `service_then_venue`; `dms_keeper_address_actions_left`). Every re-arm spends one of the address\'s actions, and so does the trader\'s bot.',
  'watch.perp_dexes':
    "Builder-deployed perp dexes (HIP-3) the accounts trade on, by name as the venue lists them (`perpDexs`), e.g. `[xyz, flx]`; not overridable from the environment (a list). The venue's info endpoint lists a builder dex's orders and positions only when asked by name, but the scheduled cancel cancels them too: without its name here an account whose only orders are on such a dex counts 0 open orders and, with `arm_when: orders_open`, is never armed. When the keeper reads the venue (`watch.source` `venue`, or `service_then_venue` for `orders_open` accounts and while the service fails), each open-orders read is one request for the default listing (the first perp dex, spot included) plus one per dex listed here, and the count is their sum; each positions read likewise asks `clearinghouseState` per dex (`spotClearinghouseState` once). At the published weights that is 20 x (1 + dexes) per orders read and 2 x (1 + dexes) + 2 per positions read, for every account (`check-config` prints it). A read fails as a whole when any dex's fails (the count is then unknown, which arms an `orders_open` account). A name the venue does not know is read as no orders *(assumed)*: check the spelling. Unused under `watch.source: service`.",
  'watch.notifications': 'Subscribe to the venue\'s WebSocket notifications per account (at most 10 accounts per IP; the rest are polled only). A notification triggers a prompt re-read.',
  rate_limits: 'The client-side request budget shared by every account of this instance. The venue\'s 429 details always win (a tighter announced limit is adopted).',
  'rate_limits.global': 'All requests.',
  'rate_limits.global.requests': 'Requests allowed per window.',
  'rate_limits.global.per_seconds': 'Window length in seconds.',
  'rate_limits.schedule_cancel': 'Arms and clears (scheduleCancel). Never a reason to refuse: past it the keeper stretches periods, then shortens horizons, then protects the highest `priority` first (`check-config` prints the plan).',
  'rate_limits.schedule_cancel.requests': 'Requests allowed per window.',
  'rate_limits.exchange':
    "The exchange endpoint, `POST {exchange_url}/exchange`, a quota of its own (its requests also count in `global`: a venue may count both in one per-IP window): the approvals when an account is provisioned (`approveAgent` for a new or renewed agent, `approveBuilderFee` for a `builder_fee`; at start-up that is up to one of each per account) and the arms of `switch.path: exchange` (and of `rest_then_exchange` while REST fails). The default is the venue's published IP weight; raise it only as far as your venue tier grants.",
  'rate_limits.exchange.requests': 'Requests allowed per window.',
  'rate_limits.exchange.per_seconds': 'Window length in seconds.',
  'rate_limits.info_weights':
    "What each request to the venue's info endpoint (`POST {exchange_url}/info`) spends of the IP's weight budget, which `/info` and `/exchange` share (an exchange action weighs 1, so `rate_limits.exchange` is counted in these units). The defaults are the venue's published figures; the venue may change them, and then these keep the keeper's budget (its admission, the read plan, `check-config`) honest. Used when `watch.source` is `venue` or `service_then_venue`, and by the address budget reads.",
  'rate_limits.info_weights.open_orders': 'An open-orders read (`frontendOpenOrders` or `openOrders`), once per account and orders period.',
  'rate_limits.info_weights.clearinghouse_state': 'The perp positions read (`clearinghouseState`), once per account and positions period.',
  'rate_limits.info_weights.spot_clearinghouse_state': 'The spot balances read (`spotClearinghouseState`), with each positions read.',
  'rate_limits.info_weights.user_role': "The role read (`userRole`) that resolves an account whose master key is not its own address, once per account, when no service resolves it.",
  'rate_limits.info_weights.user_rate_limit': "The address's action budget and volume read (`userRateLimit`).",
  'rate_limits.info_weights.extra_agents': "The approved agents read (`extraAgents`) that confirms the keeper's agent is on the venue and when its approval lapses: once per account after each approval and then daily.",
  'rate_limits.shared':
    'Optional: one budget for every instance with the same `name` (shards behind one egress IP, which the venue counts as one), kept in Redis through Bottleneck. If Redis is unreachable each instance keeps arming on its share of the budget; Redis is never needed to keep the switch armed.',
  'rate_limits.shared.redis_url': '`redis://host:port` (or `rediss://`, optionally `/db`), without credentials.',
  'rate_limits.shared.name': 'Instances with the same name share one budget and, with more than one shard, relay bot heartbeats to the shard that holds each account (channel `dms-keeper:<name>:heartbeats`, docs/liveness.md).',
  'rate_limits.shared.password': 'Optional Redis password: `{ file: NAME }` or `{ env: VAR }`, read like a key (a file others can read is refused).',
  'rate_limits.shared.fallback_share': "This instance's share of each budget while Redis is unreachable, and its planning share until the instances' demands are known, in (0, 1]; default 1 / `shard.count`, or with `shard.fleet` 1 / the live instances of the last membership read. With Redis answering, the share follows each instance's published demand.",
  'rate_limits.schedule_cancel.per_seconds': 'Window length in seconds.',
  accounts: 'The accounts to protect. Required, at least one. Not overridable from the environment.',
  'accounts[].name': 'Unique; the `account` label of every metric.',
  'accounts[].address': 'The account: a master account or a subaccount (resolved with `GET /v1/accounts/{address}`; a subaccount is armed with `vaultAddress`). In quotes.',
  'accounts[].master_key': 'The master key: `{ file: NAME }` or `{ env: VAR }`. Signs `approveAgent` / `approveBuilderFee` at start-up, then is dropped from memory. For a subaccount, its master account\'s key. Required unless `agent.key` is given.',
  'accounts[].agent': 'The agent wallet that signs the account\'s arms.',
  'accounts[].agent.name': 'A named agent slot; approving the same name again rotates the agent. Each account under one master needs its own name.',
  'accounts[].agent.key': 'An agent the venue already approved: `{ file: NAME }` or `{ env: VAR }`. Without it, a fresh agent is generated, approved at start-up and stored in `state_dir`.',
  'accounts[].agent.valid_days': 'Approval expiry of a generated agent; it is renewed at 80% of this.',
  'accounts[].priority':
    'Who is protected first when the request budget cannot arm every account (higher first, then config order; accounts known to have no open orders last). The others are reported `over_budget`.',
  'accounts[].builder_fee': 'Optional `approveBuilderFee` at start-up.',
  'accounts[].builder_fee.builder': 'The builder\'s address, in quotes.',
  'accounts[].builder_fee.max_fee_rate': 'The highest fee rate approved, a percent string such as `"0.01%"`.',
  'accounts[].venue': 'The venue this account trades on: `hyperliquid` (the top-level `venue:`, the default) or a name under `venues:`.',
  'accounts[].clob_credentials':
    "On a `polymarket_clob` venue, required: the account's L2 API credentials (as the venue's clients create or derive them), each `{ file: NAME }` or `{ env: VAR }`, read when the keeper starts and never logged. They sign every heartbeat (HMAC); the account then has no `master_key`, `agent.key`, `builder_fee` or `switch:` (its switch is the venue's heartbeat). `address` is the address the credentials belong to (`POLY_ADDRESS`).",
  'accounts[].clob_credentials.key': 'The API key (`POLY_API_KEY`).',
  'accounts[].clob_credentials.secret': 'The API secret (base64): the HMAC key of every request.',
  'accounts[].clob_credentials.passphrase': 'The API passphrase (`POLY_PASSPHRASE`).',
  venues:
    "Optional: named venues besides the top-level `venue:` (named `hyperliquid`), each of a `kind`, for accounts that name them in `accounts[].venue` ([polymarket.md](polymarket.md)). Without it every account is on `venue:`. Not overridable from the environment.",
  'venues.<name>': 'One venue; `<name>` matches `[a-z][a-z0-9_-]{0,31}` (the `venue` label of the metrics) and is not `hyperliquid`.',
  'venues.<name>.kind': '`polymarket_clob`: Polymarket\'s CLOB, whose switch is a heartbeat: `POST {clob_url}/v1/heartbeats` chained by `heartbeat_id`; the venue cancels every open order of the account 10 s after the last accepted one.',
  'venues.<name>.clob_url': 'The CLOB\'s base URL, e.g. `https://clob.polymarket.com` (`http://` only for a loopback host). Required unless `venue.simulator` (the embedded simulator serves a CLOB under `/clob`).',
  'venues.<name>.heartbeat_every_seconds':
    'The heartbeat period. Rule: `10 - heartbeat_every_seconds >= min_horizon_seconds + 1 x (request_timeout_ms / 1000 + 1)`, so one failed beat can be retried before the horizon drops below the minimum. Never stretched: the CLOB\'s budget is far above what heartbeats spend.',
  'venues.<name>.min_horizon_seconds': 'As `switch.min_horizon_seconds`, for this venue\'s accounts: readiness fails below it. The horizon is the last accepted heartbeat plus 10 s, minus now.',
  'venues.<name>.request_timeout_ms': 'Deadline of one request to this venue; sets its retry slot (`request_timeout_ms / 1000 + 1` s).',
  'venues.<name>.rate_limit': 'The CLOB\'s request budget, shared by this venue\'s accounts (heartbeats first, then reads). Default: the published general limit, 9,000 requests per 10 s.',
  'venues.<name>.rate_limit.requests': 'Requests allowed per window.',
  'venues.<name>.rate_limit.per_seconds': 'Window length in seconds.',
  'accounts[].switch': 'This account\'s own values for any key of the top-level `switch:`.',
  'accounts[].liveness':
    'Optional: re-arm this account only while its bot is alive ([liveness.md](liveness.md)). Exactly one of `heartbeat` (the bot POSTs `/heartbeat`) or `probe` (the keeper GETs the bot\'s health URL). Without it the account is armed for as long as the keeper runs. A (re)started keeper gives every bot one `silence_seconds` before judging it.',
  'accounts[].liveness.heartbeat': 'The bot tells the keeper it is alive: `POST /heartbeat` on `server.listen` with `Authorization: Bearer <token>` and `{"accounts": [names]}`.',
  'accounts[].liveness.heartbeat.token':
    'The bot\'s token: `{ file: NAME }` or `{ env: VAR }`, read like a key (mode 0600), one line of at least 16 printable characters; kept only as its SHA-256 digest and compared in constant time. Accounts of one bot share it. Read again on reload.',
  'accounts[].liveness.probe': 'The keeper asks the bot: a GET of `url` every `every_seconds`; a 2xx within `timeout_ms` is alive. One probe per URL, whatever the number of accounts naming it.',
  'accounts[].liveness.probe.url': 'The bot\'s health URL, `http://` or `https://`, without credentials.',
  'accounts[].liveness.probe.every_seconds': 'How often the URL is probed.',
  'accounts[].liveness.probe.timeout_ms': 'A probe not answered within this counts as failed (`timeout`).',
  'accounts[].liveness.silence_seconds': 'No heartbeat (or passing probe) for this long: the bot counts as dead. With `probe`, more than `every_seconds` plus `timeout_ms`.',
  'accounts[].liveness.on_silence':
    '`cancel_soon`: arm once at the earliest time the venue accepts (its 5 s minimum lead plus a 1 s margin), so the venue cancels within seconds, then no re-arm until the bot is back. `stop_rearming`: stop moving the deadline; the venue cancels at the last one (at most `deadline_seconds` later). Either way a fired cancel spends one of the day\'s triggers, and the bot back is armed at its normal horizon at once.',
  demo: 'Only with `venue.simulator: true` (what `npm start` runs): bots the keeper runs itself, each heartbeating for its accounts over HTTP with their token, as a real bot would ([liveness.md](liveness.md)).',
  'demo.bots': 'One entry a bot.',
  'demo.bots[].accounts': 'The accounts the bot trades: each with `liveness.heartbeat`, all with the same token.',
  'demo.bots[].silent_after_seconds': 'The bot falls silent this long after the start (a simulated crash); absent: it never does.',
  'demo.bots[].silent_for_seconds': 'How long it stays silent before it is back; absent: for good.',
  shard: 'Which accounts this instance protects: those whose address hashes to `index` of `count` (first 8 bytes of sha256 of the lower-case `0x` address, as an unsigned integer, mod `count`).',
  'shard.index': 'This instance\'s shard, 0 to `count - 1`, when the shards are fixed (no `shard.fleet`). systemd\'s `dms-keeper@N` sets it from the environment.',
  'shard.count': 'How many instances share the accounts, when the shards are fixed (no `shard.fleet`).',
  'shard.fleet': "The live instances decide who arms what, not `index` and `count`: each instance holds a lease in the shared budget's Redis (`rate_limits.shared`, required), and each account is armed by the `replication` live instances with the highest rendezvous score for it. Adding or removing an instance moves only the accounts it gains or held; a new owner arms before the old one lets go. Without Redis every instance keeps the last membership it knew and keeps arming. Needs `on_shutdown: keep` and a `master_key` for every account. See docs/operations.md, \"Fleet\".",
  'shard.fleet.instance': "This instance's name in the fleet: unique, and the same across restarts (so a restart takes back the same accounts from its state directory). Default: `$HOSTNAME` (a pod's name), else the host's name.",
  'shard.fleet.lease_seconds': "An instance that has not renewed its lease for this long is gone: its accounts move to the next best instances. Renewed every third of it. Longer: a slow restart moves nothing (each moved account costs an approval); shorter: a lost instance's accounts find a second owner sooner.",
  'shard.replication': "How many instances protect each account: 1, or 2 (both arm it, so a lost instance costs no account its protection): with fixed shards the account's own shard's instance and the next one's, with `shard.fleet` the two best live instances. Needs two instances or more, `on_shutdown: keep` and a `master_key` for every account (the second instance approves an agent of its own, `<agent.name>-2`); every replica's re-arms spend the address's action budget. See docs/operations.md, \"Replicas\".",
  state_dir: 'Daily trigger counts, start-up pacing and generated agent keys. Default: `$STATE_DIRECTORY` (systemd `StateDirectory=`), else `./state`. The shipped units and the image force it to their state directory.',
  server: 'The ops HTTP server.',
  'server.listen': '`host:port` (IPv6 in brackets) of `/metrics`, `/healthz`, `/readyz`, `/status` and the status page. No authentication: keep it on loopback or a private network.',
  log: 'Logging (stdout).',
  'log.level': '`info`: state changes, failures, a summary a minute and start-up progress; `debug` adds every arm.',
  'log.format': '`json`: one JSON object a line (journald, log shippers); `pretty`: readable lines (pino-pretty). `npm start` uses `pretty`.',
};

interface Row {
  path: string;
  type: string;
  def: string;
  env: string;
  meaning: string;
}

type Def = { type: string; innerType?: z.ZodType; entries?: Record<string, string>; checks?: Array<{ _zod: { def: CheckDef } }>; format?: string };
type CheckDef = { check: string; value?: unknown; minimum?: number; maximum?: number; inclusive?: boolean; pattern?: RegExp };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Required unless some wrapper (optional, default, prefault) lets it be left out. */
function optional(s: z.ZodType): boolean {
  let cur: z.ZodType | undefined = s;
  for (let i = 0; i < 20 && cur; i++) {
    const d = defOf(cur);
    if (['optional', 'default', 'prefault'].includes(d.type)) return true;
    if (d.type === 'pipe') cur = (d as unknown as { out: z.ZodType }).out;
    else cur = d.innerType;
  }
  return false;
}

function describeType(path: string, s: z.ZodType): string {
  if (path.endsWith('master_key') || path.endsWith('agent.key') || path.endsWith('heartbeat.token') || /clob_credentials\.(key|secret|passphrase)$/.test(path)) return '`{ file: NAME }` or `{ env: VAR }`';
  const d = defOf(unwrapSchema(s));
  const checks = (d.checks ?? []).map((c) => c._zod.def);
  switch (d.type) {
    case 'enum':
      return Object.values(d.entries ?? {}).map((v) => `\`${v}\``).join(' | ');
    case 'boolean':
      return 'boolean';
    case 'number': {
      const min = checks.find((c) => c.check === 'greater_than')?.value;
      const max = checks.find((c) => c.check === 'less_than')?.value;
      const kind = d.format === 'safeint' ? 'integer' : 'number';
      return min !== undefined && max !== undefined ? `${kind} ${min}..${max}` : min !== undefined ? `${kind} >= ${min}` : kind;
    }
    case 'string': {
      const pattern = checks.find((c) => c.check === 'string_format')?.pattern;
      const max = checks.find((c) => c.check === 'max_length')?.maximum;
      if (pattern?.source === '^0x[0-9a-fA-F]{40}$') return 'address (`0x` + 40 hex digits)';
      if (pattern) return `string \`${pattern.source}\`${max !== undefined ? `, <= ${max} chars` : ''}`;
      return max !== undefined ? `string, <= ${max} chars` : 'string';
    }
    case 'object':
      return 'mapping';
    case 'array': {
      const element = arrayElement(s);
      const max = checks.find((c) => c.check === 'max_length')?.maximum;
      const of = element ? describeType(`${path}[]`, element) : '';
      return `list${of ? ` of ${of}` : ''}${max !== undefined ? `, <= ${max} entries` : ''}`;
    }
    default:
      return d.type;
  }
}

function defaultAt(path: string): string {
  if (path === 'state_dir') return '`$STATE_DIRECTORY`, else `./state`';
  if (path === 'venue.exchange_url' || path === 'venue.ws_url') return 'per network';
  if (path.startsWith('venues.<name>.')) path = path.replace('venues.<name>.', 'polymarket_clob.');
  const key = path.replace(/^accounts\[\]\.agent\./, 'agent.').replace(/^accounts\[\]\.switch\./, 'switch.').replace(/^accounts\[\]\.liveness\./, 'liveness.');
  if (path.startsWith('accounts[].switch.')) return 'the top-level value';
  let cur: unknown = CONFIG_DEFAULTS;
  for (const seg of key.split('.')) {
    if (cur === null || typeof cur !== 'object' || !(seg in cur)) return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  if (Array.isArray(cur)) return `\`[${cur.join(', ')}]\``;
  return typeof cur === 'object' ? '' : `\`${String(cur)}\``;
}

/** The value schema of a mapping by name (`z.record`), else undefined. */
function recordValue(s: z.ZodType): z.ZodType | undefined {
  const d = defOf(unwrapSchema(s)) as { type: string; valueType?: z.ZodType };
  return d.type === 'record' ? d.valueType : undefined;
}

function rows(): Row[] {
  const out: Row[] = [];
  const walk = (schema: z.ZodType, path: string, envSegments: string[] | null): void => {
    const shape = objectShape(schema);
    const keySource = path.endsWith('master_key') || path.endsWith('agent.key') || path.endsWith('heartbeat.token') || /clob_credentials\.(key|secret|passphrase)$/.test(path);
    out.push({
      path,
      type: describeType(path, schema),
      def: optional(schema) ? defaultAt(path) || '—' : '**required**',
      // Only scalars are overridable (env.ts): a list is set in the file.
      env: envSegments && !shape && schemaKind(schema) !== 'array' ? `\`${envVarFor(envSegments)}\`` : '',
      meaning: KEY_MEANINGS[path] ?? '',
    });
    // An account's switch: has exactly the keys of the top-level one (described there).
    if (shape && !keySource && path !== 'accounts[].switch') for (const [k, child] of Object.entries(shape)) walk(child, `${path}.${k}`, envSegments ? [...envSegments, k] : null);
    // A mapping by name (venues): its entries' keys under `<name>`, set in the file only.
    const value = recordValue(schema);
    if (value) walk(value, `${path}.<name>`, null);
    // A list of mappings (demo.bots): its entries' keys, set in the file only.
    const entry = schemaKind(schema) === 'array' ? objectShape(arrayElement(schema)!) : undefined;
    if (entry) for (const [k, child] of Object.entries(entry)) walk(child, `${path}[].${k}`, null);
  };
  for (const top of TOP_LEVEL_KEYS) {
    if (top === 'accounts') {
      out.push({ path: 'accounts', type: 'list', def: '**required**', env: '', meaning: KEY_MEANINGS.accounts ?? '' });
      for (const [k, child] of Object.entries(objectShape(AccountSchema) ?? {})) walk(child, `accounts[].${k}`, null);
    } else walk(SECTION_SCHEMAS[top], top, [top]);
  }
  return out;
}

/** Keys of the schema without a meaning, and meanings of keys the schema does not have. */
export function referenceProblems(): string[] {
  const r = rows();
  const paths = new Set(r.map((x) => x.path));
  return [
    ...r.filter((x) => !x.meaning).map((x) => `${x.path}: no meaning in KEY_MEANINGS`),
    ...Object.keys(KEY_MEANINGS)
      .filter((k) => !paths.has(k))
      .map((k) => `KEY_MEANINGS.${k}: not a key of the schema`),
  ];
}

/** A Markdown table cell: a pipe would end the cell. */
const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** The whole of docs/configuration.md. */
export function configReference(): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from src/config/schema.ts by `node scripts/config-reference.mjs --write`; a test fails when it is stale. Do not edit by hand. -->',
    '',
    'One YAML file, passed with `--config FILE`. `config/dms-keeper.example.yaml` is an annotated example that runs as shipped',
    '(`npm start`). Check a file with `dms-keeper check-config --config FILE`: it reports every problem at once, each with its',
    'YAML path and line, or prints the request plan.',
    '',
    '- **Unknown keys are errors**, at every level: a typo never falls back to a default.',
    '- **Secrets are never in the file.** A key is named as `{ file: NAME }` or `{ env: VAR }`. A relative file resolves in',
    '  `$CREDENTIALS_DIRECTORY` (systemd `LoadCredential=` sets it; so does `npm start`), else beside the config file. A key file',
    '  holds `0x` and 64 hex digits, optionally followed by a newline, and must not be readable or writable by group or others',
    '  (mode 0600 or 0400).',
    '- **Environment overrides**: every scalar outside `accounts` can be set with `DMS_KEEPER_` + its YAML path in upper case,',
    '  levels joined by a double underscore (column "env" below). Numbers as digits; booleans as `true`/`false`, `1`/`0`,',
    '  `yes`/`no`, `on`/`off`; an empty value counts as unset. A `DMS_KEEPER_` variable that names no key is an error.',
    '- A config is checked at start (exit 2 when invalid) and on every reload (SIGHUP): an invalid file is refused and the',
    '  running config stays in force (`dms_keeper_config_reloads_total{result="error"}`).',
    '',
    '| key | type | default | env | meaning |',
    '|---|---|---|---|---|',
    ...rows().map((r) => `| \`${r.path}\` | ${cell(r.type)} | ${r.def} | ${r.env} | ${cell(r.meaning)} |`),
    '',
    '## Rules across keys',
    '',
    '- `switch.deadline_seconds` >= 10, and `min_horizon_seconds` < `deadline_seconds`.',
    '- `deadline_seconds - rearm_every_seconds >= min_horizon_seconds + 2 x (request_timeout_ms / 1000 + 1)`, per account after',
    '  its overrides. With the defaults: 60 - 15 = 45 >= 20 + 2 x 6 = 32.',
    '- The request budget never makes a config invalid. When the re-arms outgrow `rate_limits`, the keeper stretches reads,',
    '  then periods, then horizons, and past that protects the highest `priority` first; `check-config` prints the plan and',
    '  exits 1 when some account would not keep its `min_horizon_seconds`.',
    '- `accounts[].name` and `accounts[].address` are unique; two accounts under one master need different `agent.name`s.',
    '- `master_key` is required unless `agent.key` is given; `builder_fee` needs `master_key`.',
    '- `accounts[].venue` names `hyperliquid` or a venue of `venues:`; an account on a `polymarket_clob` venue has `clob_credentials` and no `master_key`, `agent.key`, `builder_fee` or `switch:`; `venues.<name>.clob_url` is required unless `venue.simulator`.',
    '- On a `polymarket_clob` venue: `10 - heartbeat_every_seconds >= min_horizon_seconds + 1 x (request_timeout_ms / 1000 + 1)`. With the defaults: 10 - 5 = 5 >= 2 + 1 x 2 = 4.',
    '- `shard.index` < `shard.count`; `shard.replication` <= `shard.count`; with `shard.replication: 2`, every account has a `master_key`, `on_shutdown: keep`, and an `agent.name` short enough for `-2` to fit 16 characters; with `shard.fleet`, `rate_limits.shared` is set, `shard.index` and `shard.count` are not, and every account has a `master_key`, `on_shutdown: keep` and an `agent.name` short enough for `-3`.',
    '',
  ];
  return lines.join('\n');
}
