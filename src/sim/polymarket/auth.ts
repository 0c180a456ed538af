/**
 * The CLOB's two authentication levels, checked as the venue checks them.
 *
 * L1 (wallet): `POLY_ADDRESS`, `POLY_SIGNATURE` (an EIP-712 ClobAuth signature over address,
 * timestamp, nonce and a fixed text), `POLY_TIMESTAMP`, `POLY_NONCE`. Only the key routes use it.
 *
 * L2 (API key): `POLY_ADDRESS`, `POLY_SIGNATURE`, `POLY_TIMESTAMP`, `POLY_API_KEY`,
 * `POLY_PASSPHRASE`; the signature is HMAC-SHA256, keyed with the base64url-decoded secret, over
 * `timestamp + method + path + body`, written in url-safe base64 with its `=` padding. The path is
 * the venue's own (no query string, no mount prefix: a proxy's `/clob` is not signed).
 *
 * Both refuse a timestamp further than ASSUMPTIONS.timestampWindowSeconds from the venue clock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isAddress, isHex, type Hex } from 'viem';
import type { ClobKeyRecord, CredentialStore } from './credentials.js';
import { recoverClobAuth } from './eip712.js';
import { ASSUMPTIONS } from './texts.js';

export type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** The venue's HMAC over one request: url-safe base64 with padding, as the clients write it. */
export function polyHmac(secret: string, timestamp: string, method: string, path: string, body: string): string {
  const key = Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return createHmac('sha256', key).update(`${timestamp}${method}${path}${body}`).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

function timestampOk(raw: string | undefined, nowMs: number): boolean {
  if (raw === undefined || !/^\d{1,12}$/.test(raw)) return false;
  return Math.abs(Number(raw) * 1000 - nowMs) <= ASSUMPTIONS.timestampWindowSeconds * 1000;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface L2Request {
  method: string;
  /** The venue path, without the mount prefix or query. */
  path: string;
  /** The raw body text ('' when none). */
  body: string;
  headers: Headers;
  nowMs: number;
}

/** The API key record an L2 request proves, or undefined (answer 401). */
export function verifyL2(store: CredentialStore, req: L2Request): ClobKeyRecord | undefined {
  const address = header(req.headers, 'POLY_ADDRESS');
  const signature = header(req.headers, 'POLY_SIGNATURE');
  const timestamp = header(req.headers, 'POLY_TIMESTAMP');
  const apiKey = header(req.headers, 'POLY_API_KEY');
  const passphrase = header(req.headers, 'POLY_PASSPHRASE');
  if (!address || !signature || !timestamp || !apiKey || !passphrase) return undefined;
  const rec = store.byApiKey(apiKey);
  if (!rec) return undefined;
  if (!sameText(rec.passphrase, passphrase)) return undefined;
  if (address.toLowerCase() !== rec.address) return undefined;
  if (!timestampOk(timestamp, req.nowMs)) return undefined;
  const expected = polyHmac(rec.secret, timestamp, req.method, req.path, req.body);
  return sameText(expected, signature) ? rec : undefined;
}

/** The (address, nonce) an L1 request proves, or undefined (answer 401). */
export async function verifyL1(chainId: number, headers: Headers, nowMs: number): Promise<{ address: string; nonce: number } | undefined> {
  const address = header(headers, 'POLY_ADDRESS');
  const signature = header(headers, 'POLY_SIGNATURE');
  const timestamp = header(headers, 'POLY_TIMESTAMP');
  const nonceText = header(headers, 'POLY_NONCE') ?? '0';
  if (!address || !isAddress(address, { strict: false }) || !signature || !isHex(signature) || !timestamp) return undefined;
  if (!/^\d{1,15}$/.test(nonceText) || !timestampOk(timestamp, nowMs)) return undefined;
  const nonce = Number(nonceText);
  const signer = await recoverClobAuth(chainId, { address: address as Hex, timestamp, nonce: BigInt(nonce) }, signature);
  if (!signer || signer.toLowerCase() !== address.toLowerCase()) return undefined;
  return { address: address.toLowerCase(), nonce };
}
