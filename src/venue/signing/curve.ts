import { createRequire } from 'node:module';
import { bytesToHex, hexToBytes } from 'viem/utils';
import { keccak256 } from './keccak.js';
import type { Hex } from 'viem';
import { privateKeyToAddress, sign } from 'viem/accounts';
import type { Signature } from '../types.js';

/**
 * The secp256k1 arithmetic behind every signature and every key's address, behind one narrow
 * interface with two implementations that give the same bytes (RFC 6979 deterministic nonces,
 * low-S; a test holds them to that on random keys and digests):
 *
 * - `libsecp256k1`: the `secp256k1` package's native binding (Bitcoin Core's library, constant
 *   time). An arm's signature costs about 0.05 ms and allocates almost nothing on the JS heap.
 * - `viem`: viem's pure-JS secp256k1. About 0.35 to 0.5 ms a signature and some 300 KB of BigInt
 *   garbage, which at 100 arms/s was most of the keeper's CPU and the reason for its GC pauses.
 *
 * viem still does everything else (EIP-712 hashing, keccak, key generation); only the curve
 * arithmetic moves. The native binding is used when its prebuilt binary loads on this platform;
 * otherwise the keeper runs on viem's and says so at start.
 */
export interface SigningCurve {
  readonly name: 'libsecp256k1' | 'viem';
  /** ECDSA over a 32-byte digest with a 32-byte key; `v` is 27 + the recovery id. (viem's is async, hence the Promise.) */
  signDigest(digest: Uint8Array, privateKey: Uint8Array): Promise<Signature>;
  /** The key's address, lower case. */
  address(privateKey: Hex): `0x${string}`;
}

/** What the binding exports that we use (the package's own types describe the JS wrapper the same way). */
interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  publicKeyCreate(privateKey: Uint8Array, compressed: boolean): Uint8Array;
}

export const viemCurve: SigningCurve = {
  name: 'viem',
  async signDigest(digest, privateKey) {
    const sig = await sign({ hash: bytesToHex(digest), privateKey: bytesToHex(privateKey), to: 'object' });
    return { r: sig.r, s: sig.s, v: 27 + (sig.yParity ?? 0) };
  },
  address(privateKey) {
    return privateKeyToAddress(privateKey).toLowerCase() as `0x${string}`;
  },
};

export function nativeCurve(binding: NativeSecp256k1): SigningCurve {
  return {
    name: 'libsecp256k1',
    async signDigest(digest, privateKey) {
      const { signature, recid } = binding.ecdsaSign(digest, privateKey);
      return { r: hex32(signature, 0), s: hex32(signature, 32), v: 27 + recid };
    },
    address(privateKey) {
      return addressOfPublicKey(binding.publicKeyCreate(hexToBytes(privateKey), false));
    },
  };
}

/** 32 bytes of `bytes` from `at`, as 0x-hex (Buffer's native hex, not a string built digit by digit). */
function hex32(bytes: Uint8Array, at: number): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset + at, 32).toString('hex')}`;
}

/** The address of an uncompressed public key (0x04 ‖ x ‖ y): the last 20 bytes of keccak256(x ‖ y). */
export function addressOfPublicKey(uncompressed: Uint8Array): `0x${string}` {
  return `0x${keccak256(uncompressed.subarray(1)).slice(-40)}`;
}

export interface CurveChoice {
  curve: SigningCurve;
  /** Why the native binding is not in use (null when it is). */
  fallbackReason: string | null;
}

/**
 * What to tell the operator about the curve in use, in one wording for every command: `run` logs it
 * at start (`signing_curve`), `disarm` prints it on stderr when it is a warning.
 */
export function signingCurveNotice(choice: CurveChoice): { level: 'info' | 'warn'; fields: Record<string, unknown>; msg: string } {
  const { curve, fallbackReason } = choice;
  if (fallbackReason === null) return { level: 'info', fields: { event: 'signing_curve', curve: curve.name }, msg: `signing with ${curve.name}` };
  return {
    level: 'warn',
    fields: { event: 'signing_curve', curve: curve.name, reason: fallbackReason },
    msg: `signing with viem's pure-JS secp256k1, about 8 times the CPU per arm: ${fallbackReason}`,
  };
}

/**
 * libsecp256k1 when its binary loads, viem's otherwise. `secp256k1/bindings` is the binding alone:
 * the package's main entry would fall back silently to the `elliptic` JS library, which we do not
 * want to sign with.
 */
export function loadSigningCurve(load: () => unknown = () => createRequire(import.meta.url)('secp256k1/bindings')): CurveChoice {
  try {
    const binding = load() as Partial<NativeSecp256k1> | null;
    if (typeof binding?.ecdsaSign !== 'function' || typeof binding.publicKeyCreate !== 'function') {
      return { curve: viemCurve, fallbackReason: 'the secp256k1 binding lacks ecdsaSign or publicKeyCreate' };
    }
    return { curve: nativeCurve(binding as NativeSecp256k1), fallbackReason: null };
  } catch (e) {
    return { curve: viemCurve, fallbackReason: `the native secp256k1 binding did not load: ${(e as Error).message.split('\n')[0]}` };
  }
}
