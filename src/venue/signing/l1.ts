import { encode } from '@msgpack/msgpack';
import { concat, numberToBytes, hexToBytes } from 'viem/utils';
import { keccak256 } from './keccak.js';
import type { Hex } from 'viem';
import { VENUE_FACTS } from '../facts.js';
import { domainSeparator, eip712Digest, hashText } from './eip712.js';
import type { Network } from '../types.js';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as const;
const UINT32_LIMIT = 2 ** 32;

/**
 * JS numbers >= 2^32 must reach msgpack as BigInt so they encode as uint64 (0xcf): @msgpack/msgpack
 * with `useBigInt64` encodes a large `number` as float64, which silently changes the hash.
 * Key order is preserved (msgpack encodes objects in insertion order, as the venue hashes them).
 */
export function normalizeForMsgpack(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value) && (value >= UINT32_LIMIT || value < -(2 ** 31))) {
    return BigInt(value);
  }
  // The venue hashes integers in msgpack's smallest form; @msgpack/msgpack writes every bigint as
  // 8 bytes, so a small bigint must go back to a number (uint32 or less).
  if (typeof value === 'bigint' && value < BigInt(UINT32_LIMIT) && value >= -(2n ** 31n)) {
    return Number(value);
  }
  if (Array.isArray(value)) return value.map(normalizeForMsgpack);
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) out[k] = normalizeForMsgpack(v);
    }
    return out;
  }
  return value;
}

export function msgpackAction(action: unknown): Uint8Array {
  return encode(normalizeForMsgpack(action), { useBigInt64: true });
}

/**
 * The L1 action hash (the phantom agent's `connectionId`):
 * keccak256(msgpack(action) ‖ nonce u64be ‖ (0x00 | 0x01 ‖ vault) ‖ [0x00 ‖ expiresAfter u64be]).
 */
export function l1ActionHash(
  action: unknown,
  nonce: number,
  vaultAddress?: string,
  expiresAfter?: number,
): Hex {
  const parts: Uint8Array[] = [msgpackAction(action), numberToBytes(BigInt(nonce), { size: 8 })];
  if (vaultAddress === undefined) {
    parts.push(new Uint8Array([0]));
  } else {
    parts.push(new Uint8Array([1]), hexToBytes(vaultAddress as Hex, { size: 20 }));
  }
  if (expiresAfter !== undefined) {
    parts.push(new Uint8Array([0]), numberToBytes(BigInt(expiresAfter), { size: 8 }));
  }
  return keccak256(concat(parts));
}

/** The EIP-712 payload an agent (or the master) signs for an L1 action. */
export function l1TypedData(connectionId: Hex, network: Network) {
  return {
    domain: {
      name: 'Exchange',
      version: '1',
      chainId: VENUE_FACTS.l1ChainId,
      verifyingContract: ZERO_ADDRESS,
    },
    types: {
      Agent: [
        { name: 'source', type: 'string' },
        { name: 'connectionId', type: 'bytes32' },
      ],
    },
    primaryType: 'Agent' as const,
    message: { source: network === 'mainnet' ? 'a' : 'b', connectionId },
  };
}

/**
 * The EIP-712 digest of `l1TypedData(connectionId, network)`, the same bytes viem's hashTypedData
 * gives (a test holds it to that), without its generic type walk: the domain and the one struct
 * are fixed, so the domain separator and the type hash are computed once. viem's validation and
 * ABI encoding were 0.16 ms of the 0.54 ms an arm's signature took.
 * digest = keccak256(0x1901 ‖ domainSeparator ‖ keccak256(typeHash ‖ keccak256(source) ‖ connectionId))
 */
const L1_DOMAIN_SEPARATOR = domainSeparator('Exchange', '1', VENUE_FACTS.l1ChainId);
const AGENT_TYPE_HASH = hashText('Agent(string source,bytes32 connectionId)');
const SOURCE_HASH = { mainnet: hashText('a'), testnet: hashText('b') } as const;

export function l1SigningHash(connectionId: Hex, network: Network): Hex {
  const structHash = keccak256(concat([AGENT_TYPE_HASH, SOURCE_HASH[network], hexToBytes(connectionId, { size: 32 })]), 'bytes');
  return eip712Digest(L1_DOMAIN_SEPARATOR, structHash);
}
