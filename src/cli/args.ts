import { parseArgs } from 'node:util';

/**
 * The CLI contract (DESIGN.md section 2), parsed without side effects so it can be tested as data.
 * Exit codes: 0 clean stop, 1 runtime failure, 2 bad config or usage.
 */
export type Command =
  | { name: 'run'; config: string }
  | { name: 'check-config'; config: string }
  | { name: 'disarm'; config: string; account?: string }
  | { name: 'keygen'; out: string; force: boolean }
  | { name: 'simulate'; port: number; host: string }
  | { name: 'help'; topic?: string }
  | { name: 'version' };

export class UsageError extends Error {
  readonly code = 'USAGE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE = `dms-keeper: keeps the venue's dead man's switch (scheduled cancel-all) armed for many accounts

Usage:
  dms-keeper [run] --config FILE            run the keeper (the default command)
  dms-keeper check-config --config FILE     validate the config and print the request plan
  dms-keeper disarm --config FILE [--account NAME]
                                            clear the scheduled cancel (planned maintenance)
  dms-keeper keygen --out FILE [--force]    write a new agent private key (mode 0600)
  dms-keeper simulate [--port N] [--host 127.0.0.1]
                                            run the venue simulator on loopback
  dms-keeper help [COMMAND] | --help        this text
  dms-keeper --version

Exit codes: 0 clean stop, 1 runtime failure, 2 bad config or usage.
Signals (run): SIGTERM/SIGINT stop gracefully (a second one forces exit); SIGHUP reloads the config.
`;

const COMMANDS = new Set(['run', 'check-config', 'disarm', 'keygen', 'simulate', 'help']);

export function parseCommand(argv: readonly string[]): Command {
  const first = argv[0];
  if (first === '--version' || first === '-v') return { name: 'version' };
  if (first === '--help' || first === '-h') return { name: 'help' };
  const explicit = first !== undefined && !first.startsWith('-');
  const name = explicit ? first : 'run';
  if (!COMMANDS.has(name)) throw new UsageError(`unknown command '${name}' (try --help)`);
  const rest = explicit ? argv.slice(1) : argv;
  if (rest.includes('--help') || rest.includes('-h')) return { name: 'help', topic: name };

  const options = {
    config: { type: 'string', short: 'c' },
    account: { type: 'string' },
    out: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
  } as const;
  let values: { [k: string]: string | boolean | undefined };
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
    simulate: ['port', 'host'],
  };
  for (const key of Object.keys(values)) {
    if (!allowed[name]?.includes(key)) throw new UsageError(`option --${key} does not apply to '${name}'`);
  }
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? (values[k] as string) : undefined);

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
      const account = str('account');
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
      return { name, port: Number(portText), host: str('host') ?? '127.0.0.1' };
    }
    default:
      throw new UsageError(`unknown command '${name}'`);
  }
}
