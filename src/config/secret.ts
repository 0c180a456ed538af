import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from 'node:fs';
import { readFile as fsReadFile, stat as fsStat } from 'node:fs/promises';
import { inspect } from 'node:util';
import { isPrivateKeyText, isValidPrivateKey } from '../venue/signing/key-text.js';
import { ConfigError, type ConfigProblem } from './errors.js';

/**
 * Private keys from `{ file: PATH }` or `{ env: VAR }` sources (DESIGN.md section 2).
 *
 * The config holds only WHERE a key is (`KeySource`, plain data, safe to log); `readKey` reads it
 * on demand and hands back a `Secret`. Loading the config reads and checks every key once, so a
 * bad key is a config error at start, and then drops it: invariant 5 wants the master key in
 * memory only while it signs an approval, and re-provisioning reads it again from its source.
 */

const REDACTED = '[redacted]';

/**
 * A value that never prints: `String()`, template literals, `JSON.stringify`, `util.inspect`
 * (hence console.log and pino) all give `[redacted]`. The value is reachable only through
 * `reveal()`, so every use of key material is a grep-able call. The value sits in a true private
 * field, which neither enumeration, spreading, structuredClone nor inspection can see.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

/** Where a key is. `path` is absolute (already resolved); `yamlPath` names the config entry. */
export type KeySource =
  | { kind: 'file'; path: string; yamlPath: string }
  | { kind: 'env'; name: string; yamlPath: string };

/** What `readKey` needs from the file system; node's `Stats` satisfies `KeyFileStat`. */
export interface KeyFileStat {
  mode: number;
  size: number;
  isFile(): boolean;
}

export interface KeyIo {
  env: Readonly<Record<string, string | undefined>>;
  /** Tests: the file system, in memory (both or neither). Absent: one descriptor, read synchronously (readKeyFileSync). */
  readFile?: (path: string) => Promise<string>;
  stat?: (path: string) => Promise<KeyFileStat>;
}

export const defaultReadFile = (path: string): Promise<string> => fsReadFile(path, 'utf8');
export const defaultStat = (path: string): Promise<KeyFileStat> => fsStat(path);

/** A key file is tiny (66 or 67 bytes); anything much larger is the wrong file, not read. */
const MAX_KEY_FILE_BYTES = 1024;
/** `0x` + 64 hex digits, optionally one trailing newline (what `keygen` writes). */
const KEY_TEXT_RE = /^(0x[0-9a-fA-F]{64})\n?$/;

export const KEY_FORMAT_HINT = 'want 0x followed by 64 hex digits, optionally one newline';

/**
 * Reads and checks one key. On any problem: a `ConfigError` with one problem naming the source
 * (path or variable) and never its content.
 */
export async function readKey(source: KeySource, io: KeyIo): Promise<Secret> {
  const r = await tryReadKey(source, io);
  if ('problem' in r) throw new ConfigError([r.problem]);
  return r.secret;
}

/** A password (the shared budget's Redis): one line of text, read like a key, never shown. */
export function checkPasswordText(text: string, what: string): Secret | string {
  const value = text.replace(/\r?\n$/, '');
  if (value === '' || /[\r\n]/.test(value)) return `${what} does not hold one password (want one line of text)`;
  return new Secret(value);
}

/**
 * A bot's heartbeat token (`liveness.heartbeat.token`): one line of at least 16 characters without
 * spaces, read like a key and never shown. Short tokens are refused: the token is all that stands
 * between a peer on the keeper's network and keeping a dead bot's orders alive.
 */
export function checkTokenText(text: string, what: string): Secret | string {
  const value = text.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(value)) return `${what} does not hold one token (want one line)`;
  // Anything else could not go in an Authorization header unchanged (HTTP trims spaces, forbids control characters).
  if (/[^\x21-\x7e]/.test(value)) return `${what} holds characters a token cannot have (want printable ASCII without spaces)`;
  if (value.length < HEARTBEAT_TOKEN_MIN_CHARS) return `${what} holds a token shorter than ${HEARTBEAT_TOKEN_MIN_CHARS} characters (e.g. openssl rand -hex 32)`;
  return new Secret(value);
}

/**
 * A CLOB L2 credential (`clob_credentials.key`, `.secret`, `.passphrase`): one line of printable
 * ASCII without spaces, read like a key and never shown. The key and passphrase go in headers as
 * they are, the secret is the HMAC key: anything else could not be sent unchanged.
 */
export function checkCredentialText(text: string, what: string): Secret | string {
  const value = text.replace(/\r?\n$/, '');
  if (value === '' || /[\r\n]/.test(value)) return `${what} does not hold one credential (want one line)`;
  if (/[^\x21-\x7e]/.test(value)) return `${what} holds characters a credential cannot have (want printable ASCII without spaces)`;
  return new Secret(value);
}

/** A Polymarket account's L2 credentials, read when the keeper starts or reloads. */
export async function readCredential(source: KeySource, io: KeyIo): Promise<Secret> {
  const r = await tryReadKey(source, io, checkCredentialText);
  if ('problem' in r) throw new ConfigError([r.problem]);
  return r.secret;
}

/** Tokens shorter than this are refused: the token is all that stands between a peer and a live account. */
export const HEARTBEAT_TOKEN_MIN_CHARS = 16;

/** A heartbeat token, read when the keeper starts or reloads. */
export async function readToken(source: KeySource, io: KeyIo): Promise<Secret> {
  const r = await tryReadKey(source, io, checkTokenText);
  if ('problem' in r) throw new ConfigError([r.problem]);
  return r.secret;
}

/** The Redis password of `rate_limits.shared`, read when the keeper starts. */
export async function readPassword(source: KeySource, io: KeyIo): Promise<Secret> {
  const r = await tryReadKey(source, io, checkPasswordText);
  if ('problem' in r) throw new ConfigError([r.problem]);
  return r.secret;
}

export async function tryReadKey(
  source: KeySource,
  io: KeyIo,
  check: (text: string, what: string) => Secret | string = checkKeyText,
): Promise<{ secret: Secret } | { problem: ConfigProblem }> {
  if (source.kind === 'env') {
    const path = `${source.yamlPath}.env`;
    const value = io.env[source.name];
    if (value === undefined || value === '') return { problem: { path, message: `environment variable ${source.name} is not set` } };
    const checked = check(value, `environment variable ${source.name}`);
    return typeof checked === 'string' ? { problem: { path, message: checked } } : { secret: checked };
  }

  const path = `${source.yamlPath}.file`;
  let file: KeyFileRead;
  try {
    file = io.stat || io.readFile ? await readInjected(source.path, io) : readKeyFileSync(source.path);
  } catch (e) {
    return { problem: { path, message: `cannot read ${source.path}: ${fsReason(e)}` } };
  }
  if ('refused' in file) return { problem: { path, message: file.refused } };
  const checked = check(file.text, source.path);
  return typeof checked === 'string' ? { problem: { path, message: checked } } : { secret: checked };
}

/** A key file as read: why it was refused before its content was looked at (fileProblem), or its text. */
type KeyFileRead = { refused: string } | { text: string };

/**
 * Why a key file is refused before its content is looked at, or undefined. A key others can read
 * is refused whatever it holds; write bits count too: a key others can replace is as bad as one
 * they can read.
 */
function fileProblem(st: KeyFileStat, file: string): string | undefined {
  if (!st.isFile()) return `${file} is not a regular file`;
  if ((st.mode & 0o077) !== 0) {
    const what = (st.mode & 0o044) !== 0 ? 'readable' : 'writable';
    const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
    return `${file}: file is ${what} by group or others (mode ${mode}); chmod 600 it`;
  }
  if (st.size > MAX_KEY_FILE_BYTES) return tooLarge(file, st.size);
  return undefined;
}

function tooLarge(file: string, bytes: number): string {
  return `${file} does not hold one private key (${KEY_FORMAT_HINT}); it is ${bytes} bytes`;
}

/** The injected file system's view of a key file: its stat checked, then its text read. */
async function readInjected(file: string, io: KeyIo): Promise<KeyFileRead> {
  const refused = fileProblem(await (io.stat ?? defaultStat)(file), file);
  return refused !== undefined ? { refused } : { text: await (io.readFile ?? defaultReadFile)(file) };
}

/**
 * A key file through one descriptor: opened (non-blocking, so a FIFO in its place cannot hang the
 * keeper), its fstat checked (the file that is read is the file that was checked), read only when
 * fileProblem finds nothing, closed. Synchronous: a key file is under 1 KB, and 50,000 of them
 * through the promise API (a stat, then open, fstat, read and close, each a round trip through
 * libuv's threads) took 7 s of CPU at start-up against 0.5 s this way (a microbench on the bench
 * machine). The config loader yields between batches of them (load.ts).
 */
export function readKeyFileSync(file: string): KeyFileRead {
  const fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    const refused = fileProblem(fstatSync(fd), file);
    if (refused !== undefined) return { refused };
    const buf = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, n);
    const text = buf.toString('utf8', 0, n);
    buf.fill(0);
    // A file grown past the limit after its fstat is refused by the size read.
    return n > MAX_KEY_FILE_BYTES ? { refused: tooLarge(file, n) } : { text };
  } finally {
    closeSync(fd);
  }
}

/** A `Secret`, or a message that describes `what` (a path or variable) and never the text. */
function checkKeyText(text: string, what: string): Secret | string {
  const m = KEY_TEXT_RE.exec(text);
  const key = m?.[1];
  if (key === undefined || !isPrivateKeyText(key)) return `${what} does not hold one private key (${KEY_FORMAT_HINT})`;
  // Right shape but outside the curve order (e.g. all zeros): the signer would refuse it later.
  if (!isValidPrivateKey(key)) return `${what} does not hold a valid secp256k1 private key`;
  return new Secret(key);
}

/** The error code only: fs messages repeat the path (we print it already) and nothing else useful. */
function fsReason(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file (ENOENT)';
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${code})`;
    case 'EISDIR':
      return 'is a directory (EISDIR)';
    default:
      return typeof code === 'string' ? code : 'unreadable';
  }
}
