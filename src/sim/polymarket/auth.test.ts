import { createL1Headers, createL2Headers } from '@polymarket/clob-client';
import { buildPolyHmacSignature } from '@polymarket/clob-client/dist/signing/index.js';
import { createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { polyHmac, verifyL1, verifyL2 } from './auth.js';
import { CredentialStore } from './credentials.js';
import { ASSUMPTIONS } from './texts.js';

const signer = createWalletClient({ account: privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'), transport: http('http://127.0.0.1:9') });
const ADDRESS = signer.account.address;

/** Headers as node hands them over: lower-case names, string values. */
function lower(h: object): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), String(v)]));
}

describe('CLOB authentication', () => {
  it('writes the same HMAC as the SDK (url-safe base64, padded)', async () => {
    const store = new CredentialStore();
    const { secret } = store.ensure(ADDRESS);
    for (const [method, path, body] of [
      ['POST', '/v1/heartbeats', '{"heartbeat_id":null}'],
      ['GET', '/data/orders', undefined],
      ['DELETE', '/cancel-all', undefined],
    ] as const) {
      expect(polyHmac(secret, '1795000000', method, path, body ?? '')).toBe(await buildPolyHmacSignature(secret, 1795000000, method, path, body));
    }
  });

  it('verifies L2 headers the SDK writes, and refuses each kind of mismatch', async () => {
    const store = new CredentialStore();
    const creds = store.ensure(ADDRESS);
    const ts = 1_795_000_000;
    const nowMs = ts * 1000;
    const body = '{"heartbeat_id":null}';
    const h = lower(await createL2Headers(signer, creds, { method: 'POST', requestPath: '/v1/heartbeats', body }, ts));
    const req = { method: 'POST', path: '/v1/heartbeats', body, headers: h, nowMs };
    expect(verifyL2(store, req)?.key).toBe(creds.key);
    expect(verifyL2(store, { ...req, body: '{"heartbeat_id":""}' })).toBeUndefined();
    expect(verifyL2(store, { ...req, path: '/heartbeats' })).toBeUndefined();
    expect(verifyL2(store, { ...req, method: 'PUT' })).toBeUndefined();
    expect(verifyL2(store, { ...req, headers: { ...h, poly_passphrase: 'x' } })).toBeUndefined();
    expect(verifyL2(store, { ...req, headers: { ...h, poly_address: '0x' + '1'.repeat(40) } })).toBeUndefined();
    expect(verifyL2(store, { ...req, headers: { ...h, poly_api_key: store.derive(ADDRESS, 1).key } })).toBeUndefined();
    const { poly_passphrase: _omit, ...missing } = h;
    expect(verifyL2(store, { ...req, headers: missing })).toBeUndefined();
    // The timestamp window, inclusive at its edge.
    const w = ASSUMPTIONS.timestampWindowSeconds * 1000;
    expect(verifyL2(store, { ...req, nowMs: nowMs + w })?.key).toBe(creds.key);
    expect(verifyL2(store, { ...req, nowMs: nowMs - w })?.key).toBe(creds.key);
    expect(verifyL2(store, { ...req, nowMs: nowMs + w + 1000 })).toBeUndefined();
  });

  it('verifies the SDK\'s L1 ClobAuth proof for its chain and nonce only', async () => {
    const ts = 1_795_000_000;
    const h = lower(await createL1Headers(signer, 137, 3, ts));
    expect(await verifyL1(137, h, ts * 1000)).toEqual({ address: ADDRESS.toLowerCase(), nonce: 3 });
    expect(await verifyL1(80002, h, ts * 1000)).toBeUndefined();
    expect(await verifyL1(137, { ...h, poly_nonce: '4' }, ts * 1000)).toBeUndefined();
    expect(await verifyL1(137, { ...h, poly_timestamp: String(ts + 1) }, ts * 1000)).toBeUndefined();
    expect(await verifyL1(137, { ...h, poly_address: '0x' + '1'.repeat(40) }, ts * 1000)).toBeUndefined();
    expect(await verifyL1(137, { ...h, poly_signature: 'nothex' }, ts * 1000)).toBeUndefined();
    expect(await verifyL1(137, h, (ts + 3600) * 1000)).toBeUndefined();
  });

  it('derives the same credentials for the same (address, nonce) and seed, other ones otherwise', () => {
    const a = new CredentialStore().derive(ADDRESS, 0);
    expect(new CredentialStore().derive(ADDRESS.toLowerCase(), 0)).toEqual(a);
    expect(new CredentialStore().derive(ADDRESS, 1).key).not.toBe(a.key);
    expect(new CredentialStore('other seed').derive(ADDRESS, 0).key).not.toBe(a.key);
    const store = new CredentialStore();
    expect(store.create(ADDRESS, 0)).toEqual(a);
    expect(store.create(ADDRESS, 0)).toBeUndefined();
    expect(store.existing(ADDRESS, 0)).toEqual(a);
    expect(store.byApiKey(a.key)).toEqual(a);
  });
});
