import { isAbsolute, resolve } from 'node:path';
import { checkTokenText, tryReadKey, type KeyIo, type KeySource, type Secret } from '../config/secret.js';
import { UsageError } from './args.js';

/**
 * The bot's heartbeat token for `dms-keeper heartbeat`: from `--token-file` (read like a key file,
 * by the same code: regular file, mode 0600 or 0400, a relative name in $CREDENTIALS_DIRECTORY)
 * or from DMS_KEEPER_HEARTBEAT_TOKEN, and checked by the keeper's own rule (src/config/secret.ts
 * checkTokenText), so the client refuses exactly the tokens the keeper would. Never from argv,
 * where `ps` shows it to every user of the host.
 */
import { HEARTBEAT_TOKEN_ENV } from '../config/names.js';
export { HEARTBEAT_TOKEN_ENV };

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
