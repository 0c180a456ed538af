// The package's keccak-only build (11 KB): its index is a UMD bundle of every algorithm (280 KB,
// 90 ms to load), which no bundler can trim. A CommonJS module, hence the default import.
import hashWasmKeccak from 'hash-wasm/dist/keccak.umd.min.js';
import type { IHasher } from 'hash-wasm';
import { bytesToHex, hexToBytes, keccak256 as referenceKeccak256 } from 'viem/utils';
import type { Hex } from 'viem';

/**
 * keccak-256 for the signing path (three hashes an arm for the keeper, six for the simulator
 * verifying it): hash-wasm's WebAssembly, 1.4 µs for a 100-byte input on the bench machine against
 * 17 µs for viem's pure-JS one (@noble/hashes), which was a tenth of a virtual-time timeline's CPU.
 * The same bytes: a test holds it to viem's on random inputs, and every signing vector and venue
 * oracle test goes through it.
 *
 * The hasher is made once, when this module loads; it is used synchronously (init, update,
 * digest), so two calls never interleave. WebAssembly is already required (undici's HTTP parser);
 * where it cannot be instantiated all the same, viem's is used: slower, never different.
 */
let hasher: IHasher | undefined;
try {
  hasher = await hashWasmKeccak.createKeccak(256);
} catch {
  hasher = undefined;
}

/** Which implementation hashes here: for the test that holds the two to each other. */
export const keccakImplementation: 'wasm' | 'reference' = hasher ? 'wasm' : 'reference';

/**
 * keccak-256 of the bytes of `parts` one after the other, without joining them first (the signing
 * path hashes a few fixed pieces and one that changes per arm).
 */
export function keccak256Parts(parts: readonly Uint8Array[]): Uint8Array {
  if (!hasher) return referenceKeccak256(concatBytes(parts), 'bytes');
  hasher.init();
  for (const p of parts) hasher.update(p);
  return hasher.digest('binary');
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** keccak-256 of bytes (or of the bytes a 0x-hex string spells), as viem's `keccak256` takes and returns them. */
export function keccak256(data: Uint8Array | Hex): Hex;
export function keccak256(data: Uint8Array | Hex, to: 'bytes'): Uint8Array;
export function keccak256(data: Uint8Array | Hex, to: 'hex' | 'bytes' = 'hex'): Uint8Array | Hex {
  if (!hasher) return to === 'bytes' ? referenceKeccak256(data, 'bytes') : referenceKeccak256(data);
  hasher.init();
  hasher.update(typeof data === 'string' ? hexToBytes(data) : data);
  const out = hasher.digest('binary');
  return to === 'bytes' ? out : bytesToHex(out);
}
