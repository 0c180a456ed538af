import fc from 'fast-check';
import { recoverAddress, toHex } from 'viem';
import { privateKeyToAddress, sign } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { nativeRecovery } from './native-recovery.js';

describe('the benchmark simulator\'s libsecp256k1 recovery', () => {
  it('recovers what viem recovers, for random keys and digests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.bigInt({ min: 1n, max: 2n ** 255n }), async (digest, k) => {
        const privateKey = toHex(k, { size: 32 });
        const hash = toHex(digest);
        const signature = await sign({ hash, privateKey, to: 'hex' });
        const want = (await recoverAddress({ hash, signature })).toLowerCase();
        expect(await nativeRecovery(hash, signature)).toBe(want);
        expect(want).toBe(privateKeyToAddress(privateKey).toLowerCase());
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a signature of the wrong length', async () => {
    await expect(nativeRecovery(toHex(new Uint8Array(32)), '0x1234')).rejects.toThrow(/65 bytes/);
  });
});
