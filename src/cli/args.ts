import { ACCOUNT_NAME_MAX, ACCOUNT_NAME_RE } from '../config/names.js';
import { heartbeatEndpoint, HeartbeatUrlError, parseHttpUrl } from '../heartbeat-client/heartbeat-url.js';
import { parseProfile, SIM_PROFILES } from '../sim/profiles.js';
import { parseBudget, SIM_BUDGETS } from '../sim/rate-limit.js';
import { parseArgs } from 'node:util';

/**
 * The CLI contract (docs/DESIGN.md section 2), parsed without side effects so it can be tested as data.
 */
export type Command =
  | { name: 'run'; config: string }
  | { name: 'check-config'; config: string }
  | { name: 'disarm'; config: string; account?: string }
  | { name: 'keygen'; out: string; force: boolean }
  | { name: 'simulate'; port: number; host: string; profile: string; budget: string }
  | {
      name: 'heartbeat';
      urls: string[];
      accounts: string[];
      everyMs: number;
      timeoutMs: number;
      checkUrl?: string;
      /** Absent: the token comes from DMS_KEEPER_HEARTBEAT_TOKEN (never from argv: ps shows it). */
      tokenFile?: string;
    }
  | { name: 'help'; topic?: string }
  | { name: 'version' };

export class UsageError extends Error {
  readonly code = 'USAGE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The exit codes every command follows (README.md, "Exit codes"; test/cli.test.ts checks each row).
 * 2 means "fix the command line or the file": retrying the same thing cannot help, so the systemd
 * units do not restart on it (RestartPreventExitStatus=2).
 */
export const EXIT_CODES = { ok: 0, runtime: 1, usage: 2 } as const;

const EXIT_TEXT = `Exit codes: 0 success (or a clean stop), 1 runtime failure (the venue, the network, the
file system, a Node.js older than 20.19), 2 bad config or usage (retrying will not help).
`;

export const USAGE = `dms-keeper: keeps the venue's dead man's switch (scheduled cancel-all) armed for many accounts

Usage:
  dms-keeper [run] --config FILE            run the keeper (the default command)
  dms-keeper check-config --config FILE     validate the config and print the request plan
  dms-keeper disarm --config FILE [--account NAME]
                                            clear the scheduled cancel (planned maintenance)
  dms-keeper keygen --out FILE [--force]    write a new agent private key (mode 0600)
  dms-keeper simulate [--port N] [--host 127.0.0.1] [--profile NAME] [--budget NAME]
                                            run the venue simulator on loopback
  dms-keeper heartbeat --url URL --account NAME [--account NAME ...] [--check-url URL]
                                            tell a keeper a bot is alive, every second
  dms-keeper help [COMMAND] | COMMAND --help
                                            this text, or one command's
  dms-keeper --version

${EXIT_TEXT}Signals (run): SIGTERM/SIGINT stop gracefully (a second one forces exit); SIGHUP reloads the config.
Signals (heartbeat, simulate): SIGTERM/SIGINT stop, exit 0.
`;

const KEY_FILES = `Key files named { file: NAME } resolve in $CREDENTIALS_DIRECTORY (systemd's LoadCredential=
sets it; so does npm start, to state/demo-credentials), else beside the config file.`;

/** `dms-keeper help COMMAND` and `dms-keeper COMMAND --help`. */
export const COMMAND_HELP: Record<Exclude<Command['name'], 'help' | 'version'>, string> = {
  run: `Usage: dms-keeper [run] --config FILE

Runs the keeper: provisions an agent per account, keeps every account's scheduled cancel armed,
watches orders and positions, and serves /metrics, /healthz, /readyz, /status and the status
page on server.listen. Logs go to stdout (log.format: json or pretty).
${KEY_FILES}

Signals: SIGTERM/SIGINT stop within 15 s (on_shutdown decides whether schedules stay armed; a
second signal exits at once, schedules armed); SIGHUP reloads the config (a bad file keeps the
old one).

  -c, --config FILE   the YAML config (see docs/configuration.md)

Exit codes: 0 clean stop; 1 could not start (e.g. the port is in use), a forced stop (second
signal), or a Node.js older than 20.19; 2 bad config or usage. An unreachable venue is not a start
failure: the keeper keeps retrying and /readyz says what is missing.
`,
  'check-config': `Usage: dms-keeper check-config --config FILE

Validates the config exactly as run does (key files included) and prints the request plan:
accounts, cadence, budget used vs available, capacity. Every problem of every account is
reported at once, each with its YAML path and line. Sends nothing to the venue.
${KEY_FILES}

  -c, --config FILE   the YAML config

Exit codes: 0 valid, every account keeps its min horizon; 1 valid and the keeper will run, but the
budget cannot keep every min horizon (the plan names the accounts); 2 any problem (on stderr).
`,
  disarm: `Usage: dms-keeper disarm --config FILE [--account NAME]

Clears the scheduled cancel of every account of the config, or of one (planned maintenance).
Signs with the account's configured agent, else the agent the keeper stored in state_dir, else
the master key. Stop the keeper first, or it re-arms. Prints one line per account.
${KEY_FILES}

  -c, --config FILE   the YAML config
  --account NAME      only this account (a name from the config)

Exit codes: 0 every account cleared; 1 the venue refused or could not be reached for at least
one account; 2 bad config, an account name the config does not have, or venue.simulator set.
`,
  keygen: `Usage: dms-keeper keygen --out FILE [--force]

Writes a new private key (0x + 64 hex digits and a newline) to FILE with mode 0600, and prints
only its address. Use it for agent.key, or for test accounts.

  -o, --out FILE      where to write; an existing file is never overwritten without --force
  --force             overwrite FILE (its mode is tightened to 0600)

Exit codes: 0 written; 1 the file could not be written; 2 usage, or FILE exists (without --force).
`,
  simulate: `Usage: dms-keeper simulate [--port N] [--host 127.0.0.1] [--profile NAME] [--budget NAME]

Runs the venue simulator on its own (for demos and manual tests): REST /v1, POST /exchange,
POST /info, /ws, and the admin routes /_sim/. Loopback only. Stop with Ctrl-C.

Network: testnet, always (the keeper's embedded simulator takes the config's venue.network). A
keeper against it: venue.network: testnet, and base_url, exchange_url and ws_url set to the URLs
printed at start (http:// and ws:// are accepted on loopback).
Accounts: the four demo accounts of npm start (their public throwaway keys:
node scripts/demo-credentials.mjs DIR). Add one, funded over the venue's $1,000,000 volume gate so
that its scheduled cancel is accepted (below it the venue refuses: "ineligible"):
  dms-keeper keygen --out desk.master        # prints the new key's address
  curl -X POST http://127.0.0.1:8080/_sim/accounts -H 'content-type: application/json' \\
    -d '{"address": "0x...", "tradedVolumeUsd": 2000000}'
Move an account over or under the gate: POST /_sim/volume {"address": "0x...", "usd": N}.
Every admin route (state, orders, faults, clock, rate limits): docs/simulator.md.

  -p, --port N        0..65535 (default 8080; 0 picks a free port)
  --host HOST         a loopback address (default 127.0.0.1)
  --profile NAME      how the venue varies within the spec (default strict): ${SIM_PROFILES.join(', ')}
  --budget NAME       what the venue's rate limits count (default ip_window): ${SIM_BUDGETS.join(', ')}

Exit codes: 0 clean stop; 1 could not listen; 2 usage.
`,
  heartbeat: `Usage: dms-keeper heartbeat --url URL --account NAME [--account NAME ...]
         [--every-seconds N] [--timeout-ms N] [--check-url URL] [--token-file FILE]

Tells a keeper that a bot is alive: POST URL/heartbeat once a period, naming every account, with
the bot's token (docs/liveness.md, docs/heartbeat-clients.md). Run it beside the bot (a sidecar, or
systemd/dms-keeper-heartbeat@.service bound to the bot's unit). Keeps going through keeper outages;
logs one JSON line at start and one per change (ok, failing, bot_unhealthy), not one per heartbeat.

  --url URL           the keeper's base URL, e.g. http://127.0.0.1:9464; repeat it for each keeper
                      that protects these accounts (redundant keepers each need the heartbeats)
  --account NAME      an account the bot trades; repeat it, or give NAME,NAME (at most 256)
  --every-seconds N   the period (default 1); keep it under half the keeper's silence_seconds
  --timeout-ms N      for each request (default 1000)
  --check-url URL     the bot's own health URL: a heartbeat is sent only after it answered 2xx
                      in the timeout, so a dead bot beside a live heartbeat still reads as silent
  --token-file FILE   the bot's token (mode 0600 or 0400; a relative FILE is looked for in
                      $CREDENTIALS_DIRECTORY, which LoadCredential= sets), or set the environment
                      variable DMS_KEEPER_HEARTBEAT_TOKEN. Never on the command line (ps shows it).

Exit codes: 0 stopped by SIGTERM/SIGINT; 2 usage, no usable token, or the keeper refused the
heartbeat (400 malformed, 401 wrong token, 404 an account without heartbeat liveness): retrying
the same request cannot help. An unreachable keeper, a 5xx or a 429 is retried every period.
`,
};

/** The help for `topic`, or the general usage; an unknown topic is a usage error. */
export function helpText(topic?: string): string {
  if (topic === undefined || topic === 'help') return USAGE;
  const text = (COMMAND_HELP as Record<string, string>)[topic];
  if (text === undefined) throw new UsageError(`no help for '${topic}': commands are ${Object.keys(COMMAND_HELP).join(', ')}`);
  return text;
}

const COMMANDS = new Set(['run', 'check-config', 'disarm', 'keygen', 'simulate', 'heartbeat', 'help']);

/** One request names at most this many accounts (docs/liveness.md: the keeper's 400 beyond it). */
export const HEARTBEAT_MAX_ACCOUNTS = 256;

export function parseCommand(argv: readonly string[]): Command {
  const first = argv[0];
  if (first === '--version' || first === '-v') return { name: 'version' };
  if (first === '--help' || first === '-h') return { name: 'help' };
  const explicit = first !== undefined && !first.startsWith('-');
  const name = explicit ? first : 'run';
  if (!COMMANDS.has(name)) throw new UsageError(`unknown command '${name}' (try --help)`);
  const rest = explicit ? argv.slice(1) : argv;
  if (rest.includes('--help') || rest.includes('-h')) return { name: 'help', topic: name };
  // Said before parseArgs, whose message would quote the option and so the token itself.
  if (rest.some((a) => a === '--token' || a.startsWith('--token='))) {
    throw new UsageError('the token is never taken from the command line (ps shows it to every user): use --token-file FILE or DMS_KEEPER_HEARTBEAT_TOKEN');
  }

  const options = {
    config: { type: 'string', short: 'c' },
    account: { type: 'string', multiple: true },
    out: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    profile: { type: 'string' },
    budget: { type: 'string' },
    url: { type: 'string', multiple: true },
    'every-seconds': { type: 'string' },
    'timeout-ms': { type: 'string' },
    'check-url': { type: 'string' },
    'token-file': { type: 'string' },
  } as const;
  let values: { [k: string]: string | boolean | string[] | undefined };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: [...rest], options, allowPositionals: true, strict: true }));
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
  if (name === 'help') return { name: 'help', topic: positionals[0] };
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);

  const allowed: Record<string, string[]> = {
    run: ['config'],
    'check-config': ['config'],
    disarm: ['config', 'account'],
    keygen: ['out', 'force'],
    simulate: ['port', 'host', 'profile', 'budget'],
    heartbeat: ['url', 'account', 'every-seconds', 'timeout-ms', 'check-url', 'token-file'],
  };
  for (const key of Object.keys(values)) {
    if (!allowed[name]?.includes(key)) throw new UsageError(`option --${key} does not apply to '${name}'`);
  }
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const list = (k: string): string[] => (Array.isArray(values[k]) ? (values[k] as string[]) : []);

  switch (name) {
    case 'run':
    case 'check-config': {
      const config = str('config');
      if (!config) throw new UsageError(`'${name}' needs --config FILE`);
      return { name, config };
    }
    case 'disarm': {
      const config = str('config');
      if (!config) throw new UsageError(`'disarm' needs --config FILE`);
      const accounts = list('account');
      if (accounts.length > 1) throw new UsageError(`'disarm' takes one --account (or none, for every account)`);
      const account = accounts[0];
      return account === undefined ? { name, config } : { name, config, account };
    }
    case 'keygen': {
      const out = str('out');
      if (!out) throw new UsageError(`'keygen' needs --out FILE`);
      return { name, out, force: values.force === true };
    }
    case 'simulate': {
      const portText = str('port') ?? '8080';
      if (!/^\d+$/.test(portText) || Number(portText) > 65535) {
        throw new UsageError(`--port must be an integer 0..65535, got '${portText}'`);
      }
      const profile = str('profile') ?? 'strict';
      try {
        parseProfile(profile);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      const budget = str('budget') ?? 'ip_window';
      try {
        parseBudget(budget);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      return { name, port: Number(portText), host: str('host') ?? '127.0.0.1', profile, budget };
    }
    case 'heartbeat':
      return parseHeartbeat(str, list);
    default:
      throw new UsageError(`unknown command '${name}'`);
  }
}

/** `heartbeat`'s options, checked so that nothing wrong is first found by the keeper (or not at all). */
function parseHeartbeat(str: (k: string) => string | undefined, list: (k: string) => string[]): Extract<Command, { name: 'heartbeat' }> {
  const urls = list('url');
  // An empty value is what an unset variable gives in a unit's ExecStart= (${DMS_KEEPER_HEARTBEAT_URL}).
  if (urls.length === 0 || urls.some((u) => u === '')) throw new UsageError(`'heartbeat' needs --url URL (the keeper's base URL, e.g. http://127.0.0.1:9464)`);
  if (new Set(urls).size !== urls.length) throw new UsageError('the same --url is given twice');
  const accounts = list('account').flatMap((a) => a.split(','));
  if (accounts.length === 0 || accounts.every((a) => a === '')) throw new UsageError(`'heartbeat' needs --account NAME (every account the bot trades)`);
  for (const a of accounts) {
    if (!ACCOUNT_NAME_RE.test(a) || a.length > ACCOUNT_NAME_MAX) throw new UsageError(`--account '${a}' is not an account name (want [a-z0-9][a-z0-9_.-]*, at most ${ACCOUNT_NAME_MAX} characters)`);
  }
  if (new Set(accounts).size !== accounts.length) throw new UsageError('an account is named twice');
  if (accounts.length > HEARTBEAT_MAX_ACCOUNTS) throw new UsageError(`at most ${HEARTBEAT_MAX_ACCOUNTS} accounts in one heartbeat (the keeper refuses more)`);
  const everyText = str('every-seconds') ?? '1';
  const every = Number(everyText);
  if (!/^\d+(\.\d+)?$/.test(everyText) || every < 0.1 || every > 3600) throw new UsageError(`--every-seconds must be a number from 0.1 to 3600, got '${everyText}'`);
  const timeoutText = str('timeout-ms') ?? '1000';
  if (!/^\d+$/.test(timeoutText) || Number(timeoutText) < 10 || Number(timeoutText) > 60_000) throw new UsageError(`--timeout-ms must be an integer from 10 to 60000, got '${timeoutText}'`);
  const checkUrl = str('check-url');
  const tokenFile = str('token-file');
  if (tokenFile === '') throw new UsageError('--token-file is empty');
  try {
    for (const u of urls) heartbeatEndpoint(u);
    if (checkUrl !== undefined) parseHttpUrl(checkUrl, '--check-url');
  } catch (e) {
    if (e instanceof HeartbeatUrlError) throw new UsageError(e.message);
    throw e;
  }
  return {
    name: 'heartbeat',
    urls,
    accounts,
    everyMs: Math.round(every * 1000),
    timeoutMs: Number(timeoutText),
    ...(checkUrl !== undefined ? { checkUrl } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
  };
}
