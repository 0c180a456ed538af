/**
 * L2 credentials (`{ key, secret, passphrase }`) per (address, nonce), as the CLOB issues them.
 *
 * Deterministic: the same (address, nonce) always yields the same credentials in a simulator with
 * the same seed, which is what `GET /auth/derive-api-key` promises (derive returns what create
 * made). The key is a UUID, the secret 32 bytes in url-safe base64 (padded, as the venue's are),
 * the passphrase 32 bytes in hex.
 */
import { createHmac } from 'node:crypto';

export interface ClobCreds {
  /** The API key (a UUID): the `POLY_API_KEY` header and an order's `owner`. */
  key: string;
  /** url-safe base64; the HMAC key. */
  secret: string;
  passphrase: string;
}

export interface ClobKeyRecord extends ClobCreds {
  /** Lower-case address the key belongs to. */
  address: string;
  nonce: number;
}

function uuidFrom(bytes: Buffer): string {
  const h = bytes.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export class CredentialStore {
  private readonly byKey = new Map<string, ClobKeyRecord>();
  private readonly byOwner = new Map<string, ClobKeyRecord>();

  constructor(private readonly seed = 'dms-keeper-sim-clob') {}

  /** The credentials (address, nonce) would get; nothing is stored. */
  derive(address: string, nonce: number): ClobKeyRecord {
    const a = address.toLowerCase();
    const part = (what: string): Buffer => createHmac('sha256', this.seed).update(`${a}:${nonce}:${what}`).digest();
    return {
      address: a,
      nonce,
      key: uuidFrom(part('key')),
      secret: part('secret').toString('base64url') + '=',
      passphrase: part('passphrase').toString('hex'),
    };
  }

  /** Issues the credentials of (address, nonce); undefined when they were already issued. */
  create(address: string, nonce: number): ClobKeyRecord | undefined {
    const id = ownerId(address, nonce);
    if (this.byOwner.has(id)) return undefined;
    const r = this.derive(address, nonce);
    this.byOwner.set(id, r);
    this.byKey.set(r.key, r);
    return r;
  }

  /** The issued credentials of (address, nonce), if any. */
  existing(address: string, nonce: number): ClobKeyRecord | undefined {
    return this.byOwner.get(ownerId(address, nonce));
  }

  /** Issued or already there (the admin route: idempotent). */
  ensure(address: string, nonce = 0): ClobKeyRecord {
    return this.create(address, nonce) ?? (this.existing(address, nonce) as ClobKeyRecord);
  }

  byApiKey(key: string): ClobKeyRecord | undefined {
    return this.byKey.get(key);
  }
}

function ownerId(address: string, nonce: number): string {
  return `${address.toLowerCase()}:${nonce}`;
}
