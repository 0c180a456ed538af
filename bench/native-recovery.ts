/**
 * Signer recovery through libsecp256k1 (the `secp256k1` package, which the keeper signs with) for the
 * benchmark's simulator. viem's pure-JS recovery takes about 3 ms here against 0.08 ms for this
 * one; at 10,000 accounts the simulator verifies about 200 signatures a second during the cold
 * start (approvals and arms), and in JS that alone kept one core busy and made the simulator, not
 * the keeper, the thing measured.
 */
import secp256k1 from 'secp256k1';
import { hexToBytes, keccak256, toHex, type Hex } from 'viem';
import type { SignatureRecovery } from '../src/venue/signing/signer.js';

export const nativeRecovery: SignatureRecovery = async (hash: Hex, signature: Hex) => {
  const sig = hexToBytes(signature);
  if (sig.length !== 65) throw new Error('signature: want 65 bytes');
  const v = sig[64]!;
  const recid = v >= 27 ? v - 27 : v;
  const pub = secp256k1.ecdsaRecover(sig.subarray(0, 64), recid, hexToBytes(hash), false);
  return `0x${keccak256(toHex(pub.subarray(1))).slice(-40)}` as `0x${string}`;
};
