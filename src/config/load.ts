import { hostname } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { mapLimited } from '../budget/pool.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';
import type { z } from 'zod';
import { collectEnvOverrides, applyEnvOverrides, HEARTBEAT_TOKEN_ENV } from './env.js';
import { ConfigError, formatPath, safeKeyName, shownKeyName, sortProblems, type ConfigProblem } from './errors.js';
import {
  accountProblems,
  demoProblems,
  livenessProblems,
  accountSwitchProblems,
  checkUrl,
  exchangePathProblem,
  parseListen,
  replicationProblems,
  shardProblems,
  fleetProblems,
  topSwitchProblems,
  venueProblems,
  noServiceProblems,
  type AccountIdentity,
  type ResolvedUrls,
  type RuleProblem,
} from './rules.js';
import {
  ACCOUNT_NAME_RE,
  ADDRESS_RE,
  AccountSchema,
  CONFIG_DEFAULTS,
  DEFAULT_STATE_DIR,
  InfoWeightsSchema,
  KeySourceSchema,
  objectShape,
  schemaAt,
  SECTION_SCHEMAS,
  SWITCH_KEYS,
  TOP_LEVEL_KEYS,
  type RawAccount,
  type RawAccountSwitch,
  type RawKeySource,
  type RawSwitch,
} from './schema.js';
import { checkCredentialText, checkPasswordText, checkTokenText, defaultReadFile, tryReadKey, type KeyFileStat, type KeySource } from './secret.js';
import type { AccountConfig, Config, LivenessConfig, PolymarketVenueConfig, SwitchConfig, VenueConfig } from './types.js';
import { accountVenueProblems, clobSwitch, DEFAULT_VENUE_NAME, isClobAccount, toVenues, venuesProblems } from './venues.js';

/** The key sources an account's keys and credentials were read from (checked at load, read again when used). */
interface AccountKeySources {
  master?: KeySource;
  agent?: KeySource;
  token?: KeySource;
  clobKey?: KeySource;
  clobSecret?: KeySource;
  clobPassphrase?: KeySource;
}
import type { InfoWeights } from '../venue/info.js';

/** Key files read at once while a config is checked. */
const KEY_READ_CONCURRENCY = 64;
/** Accounts whose keys are read between two turns of the event loop (about 5 ms of reads). */
const KEY_READ_BATCH = 256;

/**
 * Loading: YAML text -> env overrides -> shape (zod, section by section) -> cross-field rules ->
 * key sources checked -> the request plan. Every problem found on the way is collected and thrown
 * together as one `ConfigError`, each with its YAML path and, where the document has one, its line.
 *
 * Nothing here reads `process.env` or the file system directly: the environment is an argument and
 * the two fs calls (read, stat) are injectable.
 */

export interface ParseOptions {
  /** The environment: `DMS_KEEPER_*` overrides, `CREDENTIALS_DIRECTORY`, `STATE_DIRECTORY`, `{ env: VAR }` keys. */
  env: Readonly<Record<string, string | undefined>>;
  /** Relative key files resolve here when `CREDENTIALS_DIRECTORY` is not set: the config file's directory. */
  baseDir: string;
  /** Named in the error message and kept as `Config.source`. */
  source?: string;
  readFile?: (path: string) => Promise<string>;
  stat?: (path: string) => Promise<KeyFileStat>;
}

export interface LoadOptions {
  path: string;
  env: Readonly<Record<string, string | undefined>>;
  readFile?: (path: string) => Promise<string>;
  stat?: (path: string) => Promise<KeyFileStat>;
}

export async function loadConfig(opts: LoadOptions): Promise<Config> {
  const readFile = opts.readFile ?? defaultReadFile;
  let text: string;
  try {
    text = await readFile(opts.path);
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code;
    throw new ConfigError([{ path: '(file)', message: `cannot read the config file ${opts.path}${typeof code === 'string' ? ` (${code})` : ''}` }], opts.path);
  }
  return parseConfig(text, {
    env: opts.env,
    baseDir: dirname(resolve(opts.path)),
    source: opts.path,
    ...(opts.readFile ? { readFile: opts.readFile } : {}),
    ...(opts.stat ? { stat: opts.stat } : {}),
  });
}

type Segments = Array<string | number>;

/** Said of every missing relative key file while CREDENTIALS_DIRECTORY is unset; the first says why. */
const NO_CREDENTIALS_DIRECTORY = ' (CREDENTIALS_DIRECTORY is not set)';
const CREDENTIALS_HINT =
  ' (CREDENTIALS_DIRECTORY is not set, so relative key files are looked for beside the config file;' +
  ' set it to the directory holding the key files, as systemd LoadCredential= does; for the shipped example: npm run check-config)';

/** YAML's core schema reads unquoted `0x…` as a hex integer, which would mangle addresses. */
type TagList = Array<{ format?: string } | string>;
const withoutHexInts = (tags: TagList): TagList => tags.filter((t) => typeof t === 'string' || t.format !== 'HEX');

export async function parseConfig(text: string, opts: ParseOptions): Promise<Config> {
  let raw: unknown;
  {
    // Block-scoped: the document (every node with its source range) is garbage once the plain
    // values are out. Parsed from a 10,000-account file it is ~30 MB, and its tokens as much again;
    // held through the checks that follow, it set the keeper's peak memory (the live heap of a
    // whole running keeper, before the keeper had done anything). Problems are rare and need
    // positions only then: `documentPositions` parses the same text again for them.
    const { doc, lineCounter } = parseWithPositions(text);
    if (doc.errors.length > 0) {
      throw new ConfigError(
        doc.errors.map((e) => ({ path: '(yaml)', message: firstLine(e.message), line: lineCounter.linePos(e.pos[0]).line })),
        opts.source,
      );
    }
    try {
      // Copied: a string the document hands out may be a slice of `text`, and one slice kept (a URL
      // in the config the keeper holds) keeps the whole file: a 10,000-account keeper held its
      // 1.1 MB config text for 80 slices (heap snapshot, 2026-12-07).
      raw = structuredClone(doc.toJS({ maxAliasCount: 100 }));
    } catch (e) {
      throw new ConfigError([{ path: '(yaml)', message: firstLine(e instanceof Error ? e.message : String(e)) }], opts.source);
    }
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError([{ path: '(document)', message: `must be a mapping of sections (${TOP_LEVEL_KEYS.join(', ')})` }], opts.source);
  }
  return new Loader(documentPositions(text), raw as Record<string, unknown>, opts).run();
}

function parseWithPositions(text: string): { doc: Document; lineCounter: LineCounter } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false, // pretty errors quote source lines, which may hold anything
    uniqueKeys: true,
    customTags: withoutHexInts as never,
  });
  return { doc, lineCounter };
}

/** A YAML path's position in `text`, the document parsed on the first call (a config with a problem) and kept. */
function documentPositions(text: string): (segments: Segments) => { line: number; col: number } | undefined {
  let parsed: { doc: Document; lineCounter: LineCounter } | undefined;
  return (segments) => {
    parsed ??= parseWithPositions(text);
    return positionOf(parsed.doc, parsed.lineCounter, segments);
  };
}

class Loader {
  private readonly problems: ConfigProblem[] = [];
  /** Columns, for ordering problems on one line; not part of the reported problem. */
  private readonly columns = new Map<ConfigProblem, number>();
  private overridden = new Map<string, string>();

  constructor(
    private readonly positionAt: (segments: Segments) => { line: number; col: number } | undefined,
    private readonly raw: Record<string, unknown>,
    private readonly opts: ParseOptions,
  ) {}

  async run(): Promise<Config> {
    const { raw, opts } = this;

    // Env overrides first, so every later rule sees (and names) the overridden value. Variables
    // the file names as key sources are the user's own, not typos of override names.
    const { overrides, problems: envProblems } = collectEnvOverrides(opts.env, keySourceEnvNames(raw.accounts));
    this.problems.push(...envProblems);
    this.overridden = applyEnvOverrides(raw, overrides);

    for (const key of Object.keys(raw)) {
      if (!(TOP_LEVEL_KEYS as readonly string[]).includes(key)) this.add([key], `unknown key ${safeKeyName(key)}; allowed here: ${TOP_LEVEL_KEYS.join(', ')}`);
    }

    const venue = this.section('venue');
    const sw = this.section('switch');
    const watch = this.section('watch');
    const rateLimits = this.section('rate_limits');
    const shard = this.section('shard');
    const stateDir = this.section('state_dir');
    const server = this.section('server');
    const log = this.section('log');
    const demo = this.section('demo');
    const accounts = this.accounts();

    // Cross-field rules. A section that failed its shape still takes part through the fields that
    // passed their own checks (`partial`), so one typo does not hide another rule's problem.
    const venueP = this.partial('venue', venue);
    const swP = this.partial('switch', sw);
    const v = venueProblems(venueP.fields, venueP.invalid, watch?.source);
    this.addRules(v.problems);
    if (venueP.fields.simulator === false && venueP.fields.base_url === undefined && !venueP.invalid.has('base_url') && watch?.source === 'venue') {
      this.addRules(noServiceProblems(swP.fields.path, accounts ? accounts.parsed.map((a) => a?.switch?.path) : []));
    }
    const urls: ResolvedUrls = v.urls;
    const timeoutMs = venueP.fields.request_timeout_ms;
    // The configured venue is Hyperliquid's: its switch facts, the value the port hands the keeper.
    const minLeadMs = HYPERLIQUID_SWITCH_FACTS.minLeadMs;
    this.addRules(topSwitchProblems(swP.fields, timeoutMs, minLeadMs));
    const venues = this.section('venues');
    if (venues) this.addRules(venuesProblems(venues, venueP.fields.simulator));
    if (accounts) {
      this.addRules(accountProblems(accounts.parsed, accounts.identities));
      const rawVenues = this.raw.venues;
      this.addRules(accountVenueProblems(accounts.parsed, rawVenues && typeof rawVenues === 'object' && !Array.isArray(rawVenues) ? Object.keys(rawVenues) : []));
      accounts.parsed.forEach((a, i) => {
        if (a?.switch && !isClobAccount(a)) this.addRules(accountSwitchProblems(i, swP.fields, a.switch, timeoutMs, minLeadMs));
        if (a?.liveness) this.addRules(livenessProblems(i, a.liveness));
      });
    }
    const simulator = venueP.fields.simulator;
    // Only when the exchange URL could be resolved at all: an invalid one is reported already.
    const exchangeUrlKnown =
      venueP.fields.network !== undefined && !venueP.invalid.has('exchange_url') && !(venueP.fields.exchange_url !== undefined && urls.exchangeUrl === undefined);
    if (simulator !== undefined && exchangeUrlKnown) {
      if (swP.fields.path) this.addRules(exchangePathProblem(['switch', 'path'], swP.fields.path, simulator, urls.exchangeUrl));
      accounts?.parsed.forEach((a, i) => {
        if (a?.switch?.path !== undefined) this.addRules(exchangePathProblem(['accounts', i, 'switch', 'path'], a.switch.path, simulator, urls.exchangeUrl));
      });
    }
    const shardFields = this.partial('shard', shard).fields;
    this.addRules(shardProblems(shardFields));
    this.addRules(fleetProblems(shardFields, rateLimits?.shared !== undefined));
    const fleet = shardFields.fleet !== undefined;
    if (fleet || (shardFields.replication !== undefined && shardFields.replication > 1)) this.addRules(replicationProblems(swP.fields.on_shutdown, accounts?.parsed ?? [], fleet));
    if (demo) this.addRules(demoProblems(demo, simulator, accounts?.parsed ?? []));
    let listen: { host: string; port: number } | undefined;
    if (server) {
      const l = parseListen(server.listen);
      if ('problem' in l) this.add(['server', 'listen'], l.problem);
      else listen = l;
    }

    // Key sources: every one is read and checked now (then dropped), so a bad key stops the
    // start instead of surfacing at the first approval.
    const keySources = accounts ? await this.checkKeys(accounts.parsed) : [];
    const sharedPassword = rateLimits?.shared?.password ? await this.checkPassword(rateLimits.shared.password) : undefined;

    const ok = this.problems.length === 0;
    if (!ok || !venue || !sw || !watch || !rateLimits || !shard || !server || !listen || !log || !accounts) {
      throw new ConfigError(this.sorted(), opts.source);
    }

    const topSwitch = toSwitch(sw);
    const clobVenues = toVenues(venues);
    const config: Config = {
      ...(opts.source !== undefined ? { source: opts.source } : {}),
      venue: toVenue(venue, urls),
      venues: clobVenues,
      switch: topSwitch,
      watch: {
        ordersEverySeconds: watch.orders_every_seconds,
        positionsEverySeconds: watch.positions_every_seconds,
        notifications: watch.notifications,
        source: watch.source,
        addressBudgetWarnShare: watch.address_budget_warn_share,
        perpDexes: [...watch.perp_dexes],
      },
      rateLimits: {
        global: { requests: rateLimits.global.requests, perSeconds: rateLimits.global.per_seconds },
        scheduleCancel: { requests: rateLimits.schedule_cancel.requests, perSeconds: rateLimits.schedule_cancel.per_seconds },
        exchange: { requests: rateLimits.exchange.requests, perSeconds: rateLimits.exchange.per_seconds },
        infoWeights: infoWeightsOf(rateLimits.info_weights),
        ...(rateLimits.shared
          ? {
              shared: {
                redisUrl: rateLimits.shared.redis_url,
                name: rateLimits.shared.name,
                ...(sharedPassword ? { password: sharedPassword } : {}),
                fallbackShare: rateLimits.shared.fallback_share ?? 1 / shard.count,
              },
            }
          : {}),
      },
      accounts: accounts.parsed.map((a, i) => toAccount(a as RawAccount, sw, keySources[i] ?? {}, clobVenues)),
      shard: {
        index: shard.index,
        count: shard.count,
        replication: shard.replication,
        ...(shard.fleet ? { fleet: { instance: shard.fleet.instance ?? defaultInstance(this.opts.env), leaseSeconds: shard.fleet.lease_seconds, fallbackShareFollows: rateLimits.shared?.fallback_share === undefined } } : {}),
      },
      stateDir: stateDir ?? defaultStateDir(opts.env),
      server: { listen: server.listen, host: listen.host, port: listen.port },
      log: { level: log.level, format: log.format },
      ...(demo
        ? {
            demo: {
              bots: demo.bots.map((b) => ({
                accounts: [...b.accounts],
                ...(b.silent_after_seconds !== undefined ? { silentAfterSeconds: b.silent_after_seconds } : {}),
                ...(b.silent_for_seconds !== undefined ? { silentForSeconds: b.silent_for_seconds } : {}),
              })),
            },
          }
        : {}),
    };

    // Budget arithmetic never makes a config invalid: the keeper protects what the budget allows
    // (src/cli/check-config-plan.ts), and `check-config` says how much that is.
    return deepFreeze(config);
  }

  /** One top-level section through its schema; undefined (and problems recorded) on failure. */
  private section<K extends keyof typeof SECTION_SCHEMAS>(key: K): z.output<(typeof SECTION_SCHEMAS)[K]> | undefined {
    const schema = SECTION_SCHEMAS[key];
    const r = schema.safeParse(this.raw[key]);
    if (r.success) return r.data as z.output<(typeof SECTION_SCHEMAS)[K]>;
    this.addIssues(r.error.issues, [key]);
    return undefined;
  }

  /**
   * A section as far as it is valid: the parsed section, or when it failed, each field of its
   * shape parsed on its own (defaults included) with the failed keys listed in `invalid`.
   */
  private partial<K extends 'venue' | 'switch' | 'shard'>(
    key: K,
    parsed: z.output<(typeof SECTION_SCHEMAS)[K]> | undefined,
  ): { fields: Partial<z.output<(typeof SECTION_SCHEMAS)[K]>>; invalid: Set<string> } {
    if (parsed !== undefined) return { fields: parsed, invalid: new Set() };
    const fields: Record<string, unknown> = {};
    const invalid = new Set<string>();
    const raw = this.raw[key] ?? {};
    const shape = objectShape(SECTION_SCHEMAS[key]) ?? {};
    for (const [k, schema] of Object.entries(shape)) {
      if (typeof raw !== 'object' || Array.isArray(raw)) {
        invalid.add(k);
        continue;
      }
      const r = schema.safeParse((raw as Record<string, unknown>)[k]);
      if (r.success) fields[k] = r.data;
      else invalid.add(k);
    }
    return { fields: fields as Partial<z.output<(typeof SECTION_SCHEMAS)[K]>>, invalid };
  }

  /** Accounts one by one, so one broken account does not hide another's problems. */
  private accounts(): { parsed: Array<RawAccount | undefined>; identities: AccountIdentity[] } | undefined {
    const value = this.raw.accounts;
    if (value === undefined || value === null) {
      this.add(['accounts'], 'is required: list at least one account');
      return undefined;
    }
    if (!Array.isArray(value)) {
      this.add(['accounts'], 'must be a list of accounts (each starting with "- name: ...")');
      return undefined;
    }
    if (value.length === 0) {
      this.add(['accounts'], 'needs at least one account');
      return undefined;
    }
    const parsed = value.map((item, i) => {
      const r = AccountSchema.safeParse(item);
      if (r.success) return r.data;
      this.addIssues(r.error.issues, ['accounts', i]);
      return undefined;
    });
    return { parsed, identities: value.map(rawIdentity) };
  }

  private async checkKeys(accounts: ReadonlyArray<RawAccount | undefined>): Promise<AccountKeySources[]> {
    const io = {
      env: this.opts.env,
      ...(this.opts.readFile ? { readFile: this.opts.readFile } : {}),
      ...(this.opts.stat ? { stat: this.opts.stat } : {}),
    };
    const rawItems = Array.isArray(this.raw.accounts) ? (this.raw.accounts as unknown[]) : [];
    let read = 0;
    // A few files open at a time: 50,000 accounts read at once failed with EMFILE.
    return mapLimited(accounts, KEY_READ_CONCURRENCY, async (a, i) => {
      // Key files are read synchronously (secret.ts readKeyFileSync): the event loop gets a turn
      // between batches, so a reload of 50,000 accounts does not hold the re-arm timers for 0.5 s.
      if (++read % KEY_READ_BATCH === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      // An account whose shape failed (say, a bad address) still has its key sources checked,
      // so one run reports every problem of the account, not the first one found.
      const sources = a ? { master: a.master_key, agent: a.agent.key } : rawKeySources(rawItems[i]);
      const out: AccountKeySources = {};
      const jobs: Array<[Segments, RawKeySource, keyof AccountKeySources]> = [];
      if (sources.master) jobs.push([['accounts', i, 'master_key'], sources.master, 'master']);
      if (sources.agent) jobs.push([['accounts', i, 'agent', 'key'], sources.agent, 'agent']);
      const token = a?.liveness?.heartbeat?.token;
      if (token) jobs.push([['accounts', i, 'liveness', 'heartbeat', 'token'], token, 'token']);
      const clob = a?.clob_credentials;
      if (clob) {
        jobs.push([['accounts', i, 'clob_credentials', 'key'], clob.key, 'clobKey']);
        jobs.push([['accounts', i, 'clob_credentials', 'secret'], clob.secret, 'clobSecret']);
        jobs.push([['accounts', i, 'clob_credentials', 'passphrase'], clob.passphrase, 'clobPassphrase']);
      }
      for (const [segments, rawSource, slot] of jobs) {
        const source = this.keySource(segments, rawSource);
        const r = await tryReadKey(source, io, slot === 'token' ? checkTokenText : slot === 'master' || slot === 'agent' ? undefined : checkCredentialText);
        if ('problem' in r) this.add([...segments, source.kind === 'file' ? 'file' : 'env'], r.problem.message + this.credentialsHint(rawSource, r.problem.message));
        out[slot] = source;
      }
      return out;
    });
  }

  /** The shared budget's Redis password: read like a key (file mode, size), checked as one line. */
  private async checkPassword(raw: RawKeySource): Promise<KeySource> {
    const segments: Segments = ['rate_limits', 'shared', 'password'];
    const source = this.keySource(segments, raw);
    const io = { env: this.opts.env, ...(this.opts.readFile ? { readFile: this.opts.readFile } : {}), ...(this.opts.stat ? { stat: this.opts.stat } : {}) };
    const r = await tryReadKey(source, io, checkPasswordText);
    if ('problem' in r) this.add([...segments, source.kind === 'file' ? 'file' : 'env'], r.problem.message + this.credentialsHint(raw, r.problem.message));
    return source;
  }

  /**
   * A missing key file named relatively while `CREDENTIALS_DIRECTORY` is unset is most often a
   * command run without the environment the service gets (systemd's LoadCredential=, or what
   * `npm start` sets for the example): say where the file was looked for and why.
   */
  private credentialsHint(raw: RawKeySource, message: string): string {
    if (raw.file === undefined || isAbsolute(raw.file) || !message.includes('ENOENT')) return '';
    const credDir = this.opts.env.CREDENTIALS_DIRECTORY;
    if (credDir !== undefined && credDir !== '') return ` (looked for in $CREDENTIALS_DIRECTORY=${credDir})`;
    return NO_CREDENTIALS_DIRECTORY;
  }

  /** Problems in reading order; the first missing key file carries the whole credentials hint. */
  private sorted(): ConfigProblem[] {
    const list = sortProblems(this.problems, (p) => this.columns.get(p) ?? 0);
    const first = list.findIndex((p) => p.message.endsWith(NO_CREDENTIALS_DIRECTORY));
    if (first >= 0) {
      const p = list[first]!;
      list[first] = { ...p, message: p.message.slice(0, -NO_CREDENTIALS_DIRECTORY.length) + CREDENTIALS_HINT };
    }
    return list;
  }

  /** Relative files resolve in `$CREDENTIALS_DIRECTORY` (systemd LoadCredential=), else beside the config. */
  private keySource(segments: Segments, raw: RawKeySource): KeySource {
    const yamlPath = formatPath(segments);
    if (raw.env !== undefined) return { kind: 'env', name: raw.env, yamlPath };
    const file = raw.file as string;
    const credDir = this.opts.env.CREDENTIALS_DIRECTORY;
    const base = credDir !== undefined && credDir !== '' ? credDir : this.opts.baseDir;
    return { kind: 'file', path: isAbsolute(file) ? file : resolve(base, file), yamlPath };
  }

  private addRules(list: readonly RuleProblem[]): void {
    for (const p of list) this.add(p.segments, p.message);
  }

  private addIssues(issues: readonly z.core.$ZodIssue[], prefix: Segments): void {
    for (const issue of issues) {
      const segments: Segments = [...prefix, ...issue.path.filter((s): s is string | number => typeof s !== 'symbol')];
      if (issue.code === 'unrecognized_keys') {
        const allowed = allowedKeys(segments);
        for (const k of issue.keys) this.add([...segments, k], `unknown key ${safeKeyName(k)}${allowed ? `; allowed here: ${allowed.join(', ')}` : ''}`);
        continue;
      }
      this.add(segments, issueMessage(issue, valueAt(this.raw, segments), typeof segments[segments.length - 1] === 'number'));
    }
  }

  private add(segments: Segments, message: string): void {
    // The path may end in an unknown key's name, which is not echoed when it looks like a key.
    const path = formatPath(segments.map((s) => (typeof s === 'string' ? shownKeyName(s) : s)));
    const variable = this.overriddenBy(path);
    if (variable !== undefined) {
      this.problems.push({ path, message: `${message} (set by ${variable})` });
      return;
    }
    const pos = this.positionAt(segments);
    const problem: ConfigProblem = pos !== undefined ? { path, message, line: pos.line } : { path, message };
    if (pos !== undefined) this.columns.set(problem, pos.col);
    this.problems.push(problem);
  }

  private overriddenBy(path: string): string | undefined {
    for (const [p, variable] of this.overridden) if (path === p || path.startsWith(`${p}.`)) return variable;
    return undefined;
  }
}

/** The valid parts of an account item whose shape failed, for the uniqueness rules. */
function rawIdentity(item: unknown): AccountIdentity {
  if (!item || typeof item !== 'object') return {};
  const o = item as { name?: unknown; address?: unknown; agent?: { name?: unknown } | null };
  const id: AccountIdentity = {};
  if (typeof o.name === 'string' && ACCOUNT_NAME_RE.test(o.name)) id.name = o.name;
  if (typeof o.address === 'string' && ADDRESS_RE.test(o.address)) id.address = o.address.toLowerCase();
  const agentName = o.agent && typeof o.agent === 'object' ? o.agent.name : undefined;
  if (agentName === undefined) id.agentName = CONFIG_DEFAULTS.agent.name;
  else if (typeof agentName === 'string') id.agentName = agentName;
  return id;
}

/** The key sources of an account item whose shape failed, as far as each is valid on its own. */
function rawKeySources(item: unknown): { master?: RawKeySource; agent?: RawKeySource } {
  if (!item || typeof item !== 'object') return {};
  const o = item as { master_key?: unknown; agent?: { key?: unknown } | null };
  const parse = (v: unknown): RawKeySource | undefined => {
    if (v === undefined) return undefined;
    const r = KeySourceSchema.safeParse(v);
    return r.success ? r.data : undefined;
  };
  const agent = o.agent && typeof o.agent === 'object' ? parse(o.agent.key) : undefined;
  const master = parse(o.master_key);
  return { ...(master ? { master } : {}), ...(agent ? { agent } : {}) };
}

/** The env names `{ env: VAR }` key sources mention, read from the raw document (before validation). */
function keySourceEnvNames(accounts: unknown): Set<string> {
  const out = new Set<string>();
  if (!Array.isArray(accounts)) return out;
  const take = (s: unknown): void => {
    if (s && typeof s === 'object' && typeof (s as { env?: unknown }).env === 'string') out.add((s as { env: string }).env);
  };
  for (const a of accounts) {
    if (!a || typeof a !== 'object') continue;
    take((a as { master_key?: unknown }).master_key);
    take((a as { agent?: { key?: unknown } }).agent?.key);
    take((a as { liveness?: { heartbeat?: { token?: unknown } } }).liveness?.heartbeat?.token);
    const clob = (a as { clob_credentials?: Record<string, unknown> | null }).clob_credentials;
    if (clob && typeof clob === 'object') for (const k of ['key', 'secret', 'passphrase']) take(clob[k]);
  }
  // The heartbeat client's own token variable: a bot's sidecar and a keeper may share an environment.
  out.add(HEARTBEAT_TOKEN_ENV);
  return out;
}

function allowedKeys(segments: Segments): string[] | undefined {
  const last = segments[segments.length - 1];
  const parent = segments[segments.length - 2];
  if (last === 'master_key' || (last === 'key' && parent === 'agent') || (last === 'token' && parent === 'heartbeat') || parent === 'clob_credentials') return ['file', 'env'];
  const schema = schemaAt(segments);
  const shape = schema ? objectShape(schema) : undefined;
  return shape ? Object.keys(shape) : undefined;
}

const EXPECTED: Record<string, string> = {
  int: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
};

/**
 * Friendlier texts for zod's default messages; messages the schema wrote itself are kept. Values
 * are described by type, never quoted (a misplaced key must not be echoed).
 */
function issueMessage(issue: z.core.$ZodIssue, value: unknown, listItem = false): string {
  const isDefault = /^(Invalid|Too (small|big)|Unrecognized)/.test(issue.message);
  if (!isDefault) return issue.message;
  switch (issue.code) {
    case 'invalid_type': {
      if (value === undefined) return 'is required';
      if (value === null) return listItem ? 'is an empty list item' : 'has no value (remove the key to use the default)';
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      return `must be ${expected} (got ${describe(value)})`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') return min <= 1 ? 'must not be empty' : `must be at least ${min} characters`;
      if (issue.origin === 'array') return `needs at least ${min} item${min === 1 ? '' : 's'}`;
      return `is ${describe(value)}; must be ${issue.inclusive ? 'at least' : 'more than'} ${min}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${max} characters`;
      if (issue.origin === 'array') return `must have at most ${max} items`;
      return `is ${describe(value)}; must be ${issue.inclusive ? 'at most' : 'less than'} ${max}`;
    }
    case 'invalid_value':
      return `must be one of: ${issue.values.map(String).join(', ')}`;
    default:
      return issue.message;
  }
}

/** Numbers and booleans are shown; strings and structures only by kind. */
function describe(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return 'a string';
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'nothing';
  return typeof v === 'object' ? 'a mapping' : typeof v;
}

function valueAt(raw: unknown, segments: Segments): unknown {
  let cur: unknown = raw;
  for (const s of segments) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[s];
  }
  return cur;
}

/**
 * The position of a YAML path: the key's for a mapping entry, the item's for a list entry. When
 * the path runs out of the document (a missing key), the nearest existing ancestor's.
 */
export function positionOf(doc: Document, lines: LineCounter, segments: Segments): { line: number; col: number } | undefined {
  let node: unknown = doc.contents;
  let pos: { line: number; col: number } | undefined;
  const posAt = (n: unknown): { line: number; col: number } | undefined => {
    const range = (n as Node | null)?.range;
    return range ? lines.linePos(range[0]) : undefined;
  };
  for (const seg of segments) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value === seg : p.key === seg));
      if (!pair) break;
      pos = posAt(pair.key) ?? pos;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) break;
      pos = posAt(item) ?? pos;
      node = item;
    } else break;
  }
  return pos;
}

/** The config's info weights (snake_case, one `open_orders` for both open-orders types) as the port's table. */
function infoWeightsOf(w: z.output<typeof InfoWeightsSchema>): InfoWeights {
  return {
    frontendOpenOrders: w.open_orders,
    openOrders: w.open_orders,
    clearinghouseState: w.clearinghouse_state,
    spotClearinghouseState: w.spot_clearinghouse_state,
    userRole: w.user_role,
    userRateLimit: w.user_rate_limit,
    extraAgents: w.extra_agents,
  };
}

function toSwitch(s: RawSwitch): SwitchConfig {
  return {
    deadlineSeconds: s.deadline_seconds,
    rearmEverySeconds: s.rearm_every_seconds,
    minHorizonSeconds: s.min_horizon_seconds,
    armWhen: s.arm_when,
    onShutdown: s.on_shutdown,
    path: s.path,
  };
}

const CAMEL: Record<keyof RawSwitch, keyof SwitchConfig> = {
  deadline_seconds: 'deadlineSeconds',
  rearm_every_seconds: 'rearmEverySeconds',
  min_horizon_seconds: 'minHorizonSeconds',
  arm_when: 'armWhen',
  on_shutdown: 'onShutdown',
  path: 'path',
};

function toAccount(a: RawAccount, top: RawSwitch, keys: AccountKeySources, venues: readonly PolymarketVenueConfig[]): AccountConfig {
  const clobVenue = venues.find((v) => v.name === a.venue);
  if (clobVenue) {
    // A heartbeat account: its switch is its venue's (venues.ts clobSwitch), its keys the L2 credentials.
    return {
      name: a.name,
      address: a.address,
      agent: { name: a.agent.name, validDays: a.agent.valid_days },
      switch: clobSwitch(clobVenue),
      switchOverrides: [],
      priority: a.priority,
      ...(a.liveness ? { liveness: toLiveness(a.liveness, keys.token) } : {}),
      venue: clobVenue.name,
      ...(keys.clobKey && keys.clobSecret && keys.clobPassphrase ? { clobCredentials: { key: keys.clobKey, secret: keys.clobSecret, passphrase: keys.clobPassphrase } } : {}),
    };
  }
  const own: RawAccountSwitch = a.switch ?? {};
  const overrides = SWITCH_KEYS.filter((k) => own[k] !== undefined);
  const effective = { ...top } as Record<keyof RawSwitch, unknown>;
  for (const k of overrides) effective[k] = own[k];
  return {
    name: a.name,
    address: a.address,
    ...(keys.master ? { masterKey: keys.master } : {}),
    agent: { name: a.agent.name, ...(keys.agent ? { key: keys.agent } : {}), validDays: a.agent.valid_days },
    ...(a.builder_fee ? { builderFee: { builder: a.builder_fee.builder, maxFeeRate: a.builder_fee.max_fee_rate } } : {}),
    switch: toSwitch(effective as RawSwitch),
    switchOverrides: overrides.map((k) => CAMEL[k]),
    priority: a.priority,
    ...(a.liveness ? { liveness: toLiveness(a.liveness, keys.token) } : {}),
    venue: DEFAULT_VENUE_NAME,
  };
}

function toLiveness(l: NonNullable<RawAccount['liveness']>, token: KeySource | undefined): LivenessConfig {
  return {
    silenceSeconds: l.silence_seconds,
    onSilence: l.on_silence,
    ...(l.heartbeat && token ? { heartbeat: { token } } : {}),
    ...(l.probe ? { probe: { url: (checkUrl(l.probe.url, 'http', false) as { url: string }).url, everySeconds: l.probe.every_seconds, timeoutMs: l.probe.timeout_ms } } : {}),
  };
}

function toVenue(v: z.output<typeof SECTION_SCHEMAS.venue>, urls: ResolvedUrls): VenueConfig {
  const common = { network: v.network, requestTimeoutMs: v.request_timeout_ms, chainField: v.chain_field };
  if (!v.simulator) {
    // venueProblems guarantees the exchange and ws URLs in production (defaulted), and base_url
    // unless watch.source is venue (then every arm goes through the exchange endpoint).
    return { simulator: false, ...common, ...(urls.baseUrl !== undefined ? { baseUrl: urls.baseUrl } : {}), exchangeUrl: urls.exchangeUrl as string, wsUrl: urls.wsUrl as string };
  }
  return {
    simulator: true,
    ...common,
    ...(urls.baseUrl !== undefined ? { baseUrl: urls.baseUrl } : {}),
    ...(urls.exchangeUrl !== undefined ? { exchangeUrl: urls.exchangeUrl } : {}),
    ...(urls.wsUrl !== undefined ? { wsUrl: urls.wsUrl } : {}),
  };
}

/** `$STATE_DIRECTORY` (systemd StateDirectory=; the first entry if it lists several), else `./state`. */
/** `shard.fleet.instance` when unset: `$HOSTNAME` (a pod's name), else the host's name. */
export function defaultInstance(env: Readonly<Record<string, string | undefined>>): string {
  return env['HOSTNAME'] || hostname();
}

export function defaultStateDir(env: Readonly<Record<string, string | undefined>>): string {
  const first = env.STATE_DIRECTORY?.split(':')[0];
  return first !== undefined && first !== '' ? first : DEFAULT_STATE_DIR;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

function firstLine(s: string): string {
  return s.split('\n')[0]?.trim() ?? s;
}
