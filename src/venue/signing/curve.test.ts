import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes, recoverAddress, serializeSignature, type Hex } from 'viem';
import { loadSigningCurve, signingCurveNotice, viemCurve } from './curve.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const keyHex = (k: bigint): Hex => `0x${k.toString(16).padStart(64, '0')}`;

describe('signing curves', () => {
  const choice = loadSigningCurve();

  it('loads libsecp256k1 on this platform (its prebuilt binary ships for linux x64)', () => {
    expect(choice.fallbackReason).toBeNull();
    expect(choice.curve.name).toBe('libsecp256k1');
  });

  it('gives the same signatures and addresses as viem on random keys and digests, and the edge keys', async () => {
    const native = choice.curve;
    const keys: Hex[] = [keyHex(1n), keyHex(2n), keyHex(N - 1n), keyHex(N / 2n)];
    for (let i = 0; i < 200; i++) keys.push(bytesToHex(randomBytes(32)));
    let compared = 0;
    for (const key of keys) {
      if (BigInt(key) === 0n || BigInt(key) >= N) continue;
      const digest = bytesToHex(randomBytes(32));
      const want = await viemCurve.signDigest(hexToBytes(digest), hexToBytes(key));
      const got = await native.signDigest(hexToBytes(digest), hexToBytes(key));
      expect(got, key === keys[0] ? 'key 1' : 'random key').toEqual(want);
      expect(native.address(key)).toBe(viemCurve.address(key));
      // and the signature recovers to that address (low-S, right recovery id)
      expect(BigInt(got.s) <= N / 2n).toBe(true);
      const recovered = await recoverAddress({ hash: digest, signature: serializeSignature({ r: got.r, s: got.s, yParity: got.v - 27 }) });
      expect(recovered.toLowerCase()).toBe(native.address(key));
      compared++;
    }
    expect(compared).toBeGreaterThan(190);
  });

  it('falls back to viem, with the reason, when the binding does not load or is not what we expect', () => {
    const missing = loadSigningCurve(() => {
      throw new Error('No native build was found for platform=linux arch=riscv64\n  more lines');
    });
    expect(missing.curve).toBe(viemCurve);
    expect(missing.fallbackReason).toBe('the native secp256k1 binding did not load: No native build was found for platform=linux arch=riscv64');
    const odd = loadSigningCurve(() => ({ ecdsaSign: 'no' }));
    expect(odd.curve).toBe(viemCurve);
    expect(odd.fallbackReason).toMatch(/lacks ecdsaSign or publicKeyCreate/);
  });

  it('one notice for run and disarm: info with the native curve, a warning with the reason without it', () => {
    const missing = loadSigningCurve(() => {
      throw new Error('No native build was found for platform=linux arch=riscv64');
    });
    expect(signingCurveNotice(missing)).toEqual({
      level: 'warn',
      fields: { event: 'signing_curve', curve: 'viem', reason: missing.fallbackReason },
      msg: `signing with viem's pure-JS secp256k1, about 8 times the CPU per arm: ${missing.fallbackReason}`,
    });
    expect(signingCurveNotice({ curve: { ...viemCurve, name: 'libsecp256k1' }, fallbackReason: null })).toEqual({ level: 'info', fields: { event: 'signing_curve', curve: 'libsecp256k1' }, msg: 'signing with libsecp256k1' });
  });
});
