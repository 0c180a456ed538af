import { bytesToHex, concat, numberToBytes, stringToBytes } from 'viem/utils';
import { keccak256, keccak256Parts } from './keccak.js';
import type { Hex } from 'viem';

/**
 * The EIP-712 pieces both of the venue's fixed-shape digests use (l1.ts for L1 actions, user-signed.ts
 * for approvals): each computes its domain separator and type hash once and then hashes only what
 * changes per action. Tests hold both digests to viem's generic hashTypedData.
 */

/** keccak256 of a string's UTF-8 bytes: how EIP-712 encodes a `string` field and a type string. */
export const hashText = (text: string): Uint8Array => keccak256(stringToBytes(text), 'bytes');

const DOMAIN_TYPE_HASH = hashText('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)');

/**
 * A domain separator for {name, version, chainId, verifyingContract: the zero address}, the only
 * domain shape the venue signs: keccak256(typeHash ‖ keccak256(name) ‖ keccak256(version) ‖ chainId
 * as u256 ‖ verifyingContract as u256).
 */
export function domainSeparator(name: string, version: string, chainId: number): Uint8Array {
  return keccak256(concat([DOMAIN_TYPE_HASH, hashText(name), hashText(version), numberToBytes(BigInt(chainId), { size: 32 }), new Uint8Array(32)]), 'bytes');
}

const EIP712_PREFIX = new Uint8Array([0x19, 0x01]);

/** The digest signed: keccak256(0x1901 ‖ domainSeparator ‖ structHash). */
export function eip712DigestBytes(domain: Uint8Array, structHash: Uint8Array): Uint8Array {
  return keccak256Parts([EIP712_PREFIX, domain, structHash]);
}

export function eip712Digest(domain: Uint8Array, structHash: Uint8Array): Hex {
  return bytesToHex(eip712DigestBytes(domain, structHash));
}
