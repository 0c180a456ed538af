import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex, keccak256 as viemKeccak256 } from 'viem/utils';
import { keccak256, keccak256Parts, keccakImplementation } from './keccak.js';

describe('keccak256', () => {
  it('runs on WebAssembly here (the reference is only the fallback)', () => {
    expect(keccakImplementation).toBe('wasm');
  });

  it('known answers: the empty input and "abc"', () => {
    expect(keccak256(new Uint8Array())).toBe('0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(keccak256(new TextEncoder().encode('abc'))).toBe('0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });

  it('gives viem’s bytes on random inputs across the 136-byte block boundary, as hex or bytes, from bytes or hex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 420 }), (data) => {
        const want = viemKeccak256(data);
        expect(keccak256(data)).toBe(want);
        expect(keccak256(bytesToHex(data))).toBe(want);
        expect(bytesToHex(keccak256(data, 'bytes'))).toBe(want);
      }),
      { numRuns: 500 },
    );
  });

  it('of parts: the hash of their bytes one after the other, however they are cut', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 0, maxLength: 200 }), { maxLength: 6 }), (parts) => {
        const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
        let at = 0;
        for (const p of parts) {
          joined.set(p, at);
          at += p.length;
        }
        expect(bytesToHex(keccak256Parts(parts))).toBe(viemKeccak256(joined));
      }),
      { numRuns: 300 },
    );
  });

  it('one call does not leak into the next (the hasher is reused)', () => {
    const a = new Uint8Array([1, 2, 3]);
    const first = keccak256(a);
    keccak256(new Uint8Array(300).fill(9));
    expect(keccak256(a)).toBe(first);
  });
});
