import { isAbsolute, resolve } from 'node:path';
import { Secret, tryReadKey, type KeyIo, type KeySource } from '../config/secret.js';
import { UsageError } from './args.js';

/**
 * The bot's heartbeat token for `dms-keeper heartbeat`: from `--token-file` (read like a key file,
 * by the same code: regular file, mode 0600 or 0400, a relative name in $CREDENTIALS_DIRECTORY)
 * or from this variable. Never from argv, where `ps` shows it to every user of the host.
 */
export const HEARTBEAT_TOKEN_ENV = 'DMS_KEEPER_HEARTBEAT_TOKEN';

/** The keeper refuses a configured token shorter than this (docs/liveness.md). */
export const TOKEN_MIN_CHARS = 16;

/**
 * One line of printable ASCII without spaces, at least 16 characters; one trailing newline is
 * ignored (what `echo` and editors leave). Anything else could not go in an Authorization header
 * unchanged (HTTP trims spaces, forbids control characters), so it could never match. The message
 * describes `what` (a path or variable), never the text.
 */
export function checkTokenText(text: string, what: string): Secret | string {
  const token = text.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(token)) return `${what} does not hold one token (want one line)`;
  if (/[^\x21-\x7e]/.test(token)) return `${what} holds characters a token cannot have (want printable ASCII without spaces)`;
  if (token.length < TOKEN_MIN_CHARS) return `${what} holds a token shorter than ${TOKEN_MIN_CHARS} characters (the keeper refuses those)`;
  return new Secret(token);
}

export interface TokenOptions {
  tokenFile?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Where a relative --token-file is looked for when CREDENTIALS_DIRECTORY is not set. */
  cwd: string;
  io?: Pick<KeyIo, 'readFile' | 'stat'>;
}

/** The token, or a `UsageError` saying what to fix (exit 2: retrying cannot help). */
export async function readHeartbeatToken(opts: TokenOptions): Promise<Secret> {
  const fromEnv = opts.env[HEARTBEAT_TOKEN_ENV];
  const hasEnv = fromEnv !== undefined && fromEnv !== '';
  if (opts.tokenFile !== undefined && hasEnv) {
    throw new UsageError(`both --token-file and ${HEARTBEAT_TOKEN_ENV} are set: give the token one way`);
  }
  let source: KeySource;
  const credDir = opts.env.CREDENTIALS_DIRECTORY;
  if (opts.tokenFile !== undefined) {
    const file = opts.tokenFile;
    const base = credDir !== undefined && credDir !== '' ? credDir : opts.cwd;
    source = { kind: 'file', path: isAbsolute(file) ? file : resolve(base, file), yamlPath: '--token-file' };
  } else if (hasEnv) {
    source = { kind: 'env', name: HEARTBEAT_TOKEN_ENV, yamlPath: HEARTBEAT_TOKEN_ENV };
  } else {
    throw new UsageError(`no token: give --token-file FILE or set ${HEARTBEAT_TOKEN_ENV}`);
  }
  const r = await tryReadKey(source, { env: opts.env, ...opts.io }, checkTokenText);
  if ('problem' in r) {
    if (source.kind === 'env') throw new UsageError(r.problem.message);
    // A relative name not found: say where it was looked for (the unit's LoadCredential= may be missing).
    const missingRelative = opts.tokenFile !== undefined && !isAbsolute(opts.tokenFile) && r.problem.message.includes('ENOENT');
    const where = !missingRelative ? '' : credDir !== undefined && credDir !== '' ? ` (looked for in $CREDENTIALS_DIRECTORY=${credDir})` : ' (CREDENTIALS_DIRECTORY is not set: looked for in the working directory)';
    throw new UsageError(`--token-file: ${r.problem.message}${where}`);
  }
  return r.secret;
}
