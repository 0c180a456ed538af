import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ApiCredentials, decodeSecret, l2Headers, polyHmacSignature } from './l2-auth.js';
import { ClobRequestError } from './errors.js';

const SECRET_BYTES = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');
const CREDS = { key: 'key-1', secret: SECRET_BYTES.toString('base64'), passphrase: 'pass-phrase-1' };
const ADDRESS = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

function reason(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof ClobRequestError) return e.reason;
    throw e;
  }
  return undefined;
}

describe('l2Headers', () => {
  it('is the five headers in the client order; the address checksummed; the timestamp as decimal text', () => {
    const h = l2Headers({ address: ADDRESS, creds: CREDS, timestampSeconds: 1_700_000_000, method: 'POST', requestPath: '/v1/heartbeats', body: '{"heartbeat_id":null}' });
    expect(Object.keys(h)).toEqual(['POLY_ADDRESS', 'POLY_SIGNATURE', 'POLY_TIMESTAMP', 'POLY_API_KEY', 'POLY_PASSPHRASE']);
    expect(h.POLY_ADDRESS).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    expect(h.POLY_TIMESTAMP).toBe('1700000000');
    expect(h.POLY_API_KEY).toBe('key-1');
    expect(h.POLY_PASSPHRASE).toBe('pass-phrase-1');
    // HMAC-SHA256 over timestamp + method + path + body, url-safe base64 with '=' kept (an independent recomputation)
    const want = createHmac('sha256', SECRET_BYTES).update('1700000000POST/v1/heartbeats{"heartbeat_id":null}').digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
    expect(h.POLY_SIGNATURE).toBe(want);
    expect(h.POLY_SIGNATURE.endsWith('=')).toBe(true);
  });

  it('without a body the message is timestamp + method + path', () => {
    const want = createHmac('sha256', SECRET_BYTES).update('5GET/data/orders').digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
    expect(polyHmacSignature(CREDS.secret, 5, 'GET', '/data/orders')).toBe(want);
  });

  it('never shows the signature or passphrase when logged, and the transport sees exactly five entries', () => {
    const h = l2Headers({ address: ADDRESS, creds: CREDS, timestampSeconds: 1, method: 'GET', requestPath: '/data/orders' });
    const printed = [JSON.stringify(h), inspect(h), inspect({ nested: h })].join('\n');
    expect(printed).not.toContain(h.POLY_SIGNATURE);
    expect(printed).not.toContain(CREDS.passphrase);
    expect(printed).toContain('[redacted]');
    expect(Object.entries(h).length).toBe(5);
  });

  it('refuses bad inputs with a typed reason, without echoing them', () => {
    const ok = { address: ADDRESS, creds: CREDS, timestampSeconds: 1, method: 'GET' as const, requestPath: '/p' };
    expect(reason(() => l2Headers({ ...ok, address: '0x123' }))).toBe('bad_address');
    expect(reason(() => l2Headers({ ...ok, timestampSeconds: 1.5 }))).toBe('bad_timestamp');
    expect(reason(() => l2Headers({ ...ok, timestampSeconds: -1 }))).toBe('bad_timestamp');
    expect(reason(() => l2Headers({ ...ok, method: 'PATCH' as 'GET' }))).toBe('bad_request');
    expect(reason(() => l2Headers({ ...ok, requestPath: 'data/orders' }))).toBe('bad_request');
    expect(reason(() => l2Headers({ ...ok, requestPath: '/a b' }))).toBe('bad_request');
    expect(reason(() => l2Headers({ ...ok, creds: { ...CREDS, key: '' } }))).toBe('bad_credentials');
    expect(reason(() => l2Headers({ ...ok, creds: { ...CREDS, passphrase: 'a\r\nX-Evil: 1' } }))).toBe('bad_credentials');
    expect(reason(() => l2Headers({ ...ok, creds: null as unknown as typeof CREDS }))).toBe('bad_credentials');
    expect(reason(() => l2Headers({ ...ok, creds: { ...CREDS, secret: '' } }))).toBe('bad_secret');
    try {
      l2Headers({ ...ok, creds: { ...CREDS, secret: 'A=A=A' } });
    } catch (e) {
      expect((e as Error).message).not.toContain('A=A=A');
    }
  });
});

describe('decodeSecret (as the client decodes it: base64url folded in, junk dropped, then atob)', () => {
  it.each([
    ['standard base64', 'AAEC/w==', [0, 1, 2, 255]],
    ['base64url', 'AAEC_w==', [0, 1, 2, 255]],
    ['no padding', 'AAEC_w', [0, 1, 2, 255]],
    ['junk dropped', ' AA.EC\n_w== ', [0, 1, 2, 255]],
    ['leftover bits discarded', 'AB', [0]],
  ])('%s', (_w, secret, bytes) => {
    expect([...decodeSecret(secret)]).toEqual(bytes);
  });

  it.each([
    ['a length of 4n+1', 'AAAAA'],
    ['= inside', 'AA=A'],
    ['three pads', 'A==='],
    ['one pad where two belong (atob refuses it too)', 'AAEC_w='],
    ['nothing left', '...'],
    ['empty', ''],
  ])('refuses %s', (_w, secret) => {
    expect(reason(() => decodeSecret(secret))).toBe('bad_secret');
  });
});

describe('ApiCredentials', () => {
  it('exposes the secret to the signer but never prints it', () => {
    const c = new ApiCredentials(CREDS);
    expect(c.secret).toBe(CREDS.secret);
    expect(c.passphrase).toBe(CREDS.passphrase);
    const printed = [JSON.stringify(c), inspect(c), JSON.stringify({ c }), inspect({ c }), String(Object.keys(c))].join('\n');
    expect(printed).not.toContain(CREDS.secret);
    expect(printed).not.toContain(CREDS.passphrase);
    expect(printed).toContain('key-1');
  });

  it('is usable wherever plain credentials are', () => {
    const h1 = l2Headers({ address: ADDRESS, creds: new ApiCredentials(CREDS), timestampSeconds: 9, method: 'GET', requestPath: '/x' });
    const h2 = l2Headers({ address: ADDRESS, creds: CREDS, timestampSeconds: 9, method: 'GET', requestPath: '/x' });
    expect(Object.entries(h1)).toEqual(Object.entries(h2));
  });

  it('refuses a secret that does not decode', () => {
    expect(() => new ApiCredentials({ ...CREDS, secret: 'A' })).toThrow(ClobRequestError);
  });
});
