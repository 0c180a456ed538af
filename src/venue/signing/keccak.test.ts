import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex, keccak256 as viemKeccak256 } from 'viem/utils';
import { keccak256, keccakImplementation } from './keccak.js';

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

  it('one call does not leak into the next (the hasher is reused)', () => {
    const a = new Uint8Array([1, 2, 3]);
    const first = keccak256(a);
    keccak256(new Uint8Array(300).fill(9));
    expect(keccak256(a)).toBe(first);
  });
});
