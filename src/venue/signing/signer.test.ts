import { describe, expect, it } from 'vitest';
import { isValidPrivateKey, signerFromPrivateKey } from './signer.js';

const N = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';

describe('isValidPrivateKey', () => {
  it('agrees with the signer on the edges of the curve order', () => {
    const cases: Array<[string, boolean]> = [
      [`0x${'0'.repeat(64)}`, false],
      [`0x${'0'.repeat(63)}1`, true],
      [`0x${N}`, false],
      [`0x${N.slice(0, -1)}0`, true], // n - 1
      [`0x${'f'.repeat(64)}`, false],
      [`0x${'11'.repeat(32)}`, true],
      ['0x1234', false],
      [`${'11'.repeat(32)}`, false],
    ];
    for (const [key, ok] of cases) {
      expect(isValidPrivateKey(key), key).toBe(ok);
      let signerOk = true;
      try {
        signerFromPrivateKey(key);
      } catch {
        signerOk = false;
      }
      expect(signerOk, key).toBe(ok);
    }
  });
});
