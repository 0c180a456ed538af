/**
 * Polymarket's L2 authentication: five headers, one an HMAC-SHA256 over
 * `timestamp + method + requestPath + body` keyed with the API secret. Byte for byte what
 * `@polymarket/clob-client` builds (dist/headers/index.js createL2Headers, dist/signing/hmac.js
 * buildPolyHmacSignature): test/polymarket-oracle.test.ts holds us to it. Synchronous (node:crypto)
 * where the client is async (WebCrypto): a heartbeat must not wait on a promise queue to be signed.
 */
import { createHmac } from 'node:crypto';
import { getAddress } from 'viem/utils';
import { ADDRESS_RE } from '../address.js';
import { ClobRequestError } from './errors.js';

/** The API credentials as the venue issues them (`createOrDeriveApiKey`). */
export interface ApiCreds {
  readonly key: string;
  readonly secret: string;
  readonly passphrase: string;
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * Credentials that never print their secret or passphrase: `toJSON` and inspection show the key
 * alone (an identifier the venue also sends back), so a logged object or a thrown context leaks
 * nothing that signs. The secret is checked to decode (as the client decodes it) when built.
 */
export class ApiCredentials implements ApiCreds {
  readonly key: string;
  readonly #secret: string;
  readonly #passphrase: string;

  constructor(creds: ApiCreds) {
    checkCreds(creds);
    this.key = creds.key;
    this.#secret = creds.secret;
    this.#passphrase = creds.passphrase;
  }

  get secret(): string {
    return this.#secret;
  }

  get passphrase(): string {
    return this.#passphrase;
  }

  toJSON(): { key: string } {
    return { key: this.key };
  }

  [INSPECT](): string {
    return `ApiCredentials(${this.key})`;
  }
}

export type L2Method = 'GET' | 'POST' | 'DELETE' | 'PUT';

export interface L2HeaderArgs {
  /** The signer's address; sent EIP-55 checksummed, as every signer the client accepts returns it. */
  address: string;
  creds: ApiCreds;
  /** Unix seconds, an integer: `POLY_TIMESTAMP` and the message's first part. */
  timestampSeconds: number;
  method: L2Method;
  /** The path signed, without scheme, host or query (the client signs `/data/orders` for every page). */
  requestPath: string;
  /** The exact body bytes sent, when there is a body. */
  body?: string;
}

/** The headers in the client's order. The object redacts signature and passphrase in `toJSON`/inspection. */
export type L2Headers = {
  readonly POLY_ADDRESS: string;
  readonly POLY_SIGNATURE: string;
  readonly POLY_TIMESTAMP: string;
  readonly POLY_API_KEY: string;
  readonly POLY_PASSPHRASE: string;
};

export function l2Headers(args: L2HeaderArgs): L2Headers {
  const { address, creds, timestampSeconds, method, requestPath, body } = args;
  if (typeof address !== 'string' || !ADDRESS_RE.test(address)) throw new ClobRequestError('bad_address', 'address is not 0x followed by 40 hex digits');
  checkCreds(creds);
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new ClobRequestError('bad_timestamp', 'timestampSeconds must be a non-negative integer (Unix seconds)');
  }
  if (!(['GET', 'POST', 'DELETE', 'PUT'] as const).includes(method)) throw new ClobRequestError('bad_request', 'method must be GET, POST, DELETE or PUT');
  if (typeof requestPath !== 'string' || !/^\/[\x21-\x7e]*$/.test(requestPath)) {
    throw new ClobRequestError('bad_request', 'requestPath must start with / and hold printable ASCII only');
  }
  if (body !== undefined && typeof body !== 'string') throw new ClobRequestError('bad_request', 'body must be a string when given');
  const headers: L2Headers = {
    POLY_ADDRESS: getAddress(address),
    POLY_SIGNATURE: polyHmacSignature(creds.secret, timestampSeconds, method, requestPath, body),
    POLY_TIMESTAMP: `${timestampSeconds}`,
    POLY_API_KEY: creds.key,
    POLY_PASSPHRASE: creds.passphrase,
  };
  const redacted = (): Record<string, string> => ({ ...headers, POLY_SIGNATURE: '[redacted]', POLY_PASSPHRASE: '[redacted]' });
  // Not enumerable: the transport copies the headers with Object.entries and must see the five alone.
  Object.defineProperty(headers, 'toJSON', { value: redacted, enumerable: false });
  Object.defineProperty(headers, INSPECT, { value: () => `L2Headers(${JSON.stringify(redacted())})`, enumerable: false });
  return headers;
}

/**
 * `buildPolyHmacSignature`: HMAC-SHA256 of `timestamp + method + requestPath + body` (UTF-8), keyed
 * with the decoded secret, as url-safe base64 (`+` to `-`, `/` to `_`) keeping the `=` padding.
 */
export function polyHmacSignature(secret: string, timestampSeconds: number, method: string, requestPath: string, body?: string): string {
  const message = `${timestampSeconds}${method}${requestPath}${body ?? ''}`;
  const mac = createHmac('sha256', decodeSecret(secret)).update(new TextEncoder().encode(message)).digest('base64');
  return mac.replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * The secret's key bytes as the client reads them: base64url folded into base64, every character
 * outside the base64 alphabet dropped, then decoded as `atob` does (the WHATWG forgiving-base64
 * decode: at most two trailing `=` when the length is a multiple of 4, no length of 4n+1, no `=`
 * elsewhere). An empty key is refused: WebCrypto cannot import one, so the client fails too.
 */
export function decodeSecret(secret: string): Buffer {
  if (typeof secret !== 'string') throw new ClobRequestError('bad_secret', 'the API secret must be a string');
  let s = secret.replace(/-/g, '+').replace(/_/g, '/').replace(/[^A-Za-z0-9+/=]/g, '');
  if (s.length % 4 === 0) s = s.replace(/={1,2}$/, '');
  if (s.length % 4 === 1 || s.includes('=')) throw new ClobRequestError('bad_secret', 'the API secret is not base64');
  const bytes = Buffer.from(s, 'base64');
  if (bytes.length === 0) throw new ClobRequestError('bad_secret', 'the API secret decodes to no bytes');
  return bytes;
}

function checkCreds(creds: ApiCreds): void {
  if (creds === null || typeof creds !== 'object') throw new ClobRequestError('bad_credentials', 'credentials must be {key, secret, passphrase}');
  for (const field of ['key', 'passphrase'] as const) {
    const v = creds[field];
    // A header value: no control characters, nothing that the HTTP stack would trim or refuse.
    if (typeof v !== 'string' || !/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(v)) {
      throw new ClobRequestError('bad_credentials', `credentials.${field} must be a non-empty printable ASCII string`);
    }
  }
  decodeSecret(creds.secret);
}
