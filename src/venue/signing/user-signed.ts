import { concat, hexToBytes, numberToBytes } from 'viem/utils';
import { keccak256 } from './keccak.js';
import type { Hex } from 'viem';
import type { Network } from '../types.js';
import { domainSeparator, eip712Digest, hashText } from './eip712.js';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as const;

/**
 * The name of the network field of a user-signed action ("Mainnet" / "Testnet"): the one place it
 * is chosen. The venue and its own clients (the official Python SDK, `@nktkas/hyperliquid`) name it
 * `hyperliquidChain`, in the posted action and in the signed EIP-712 type; the outcome service's
 * spec calls the same field `venueChain`. The type string is part of the signed hash, so an
 * approval signed over the spec's name recovers to some other address and the venue refuses it
 * (none of 12 agreed with the SDKs while we sent it). We send the venue's name; `venueChain` is
 * kept only for a service that speaks the spec's dialect (`venue.chain_field`).
 */
export const CHAIN_FIELDS = ['hyperliquidChain', 'venueChain'] as const;
export type ChainField = (typeof CHAIN_FIELDS)[number];
/** What the venue accepts (and so the default of `venue.chain_field`). */
export const VENUE_CHAIN_FIELD: ChainField = 'hyperliquidChain';

/**
 * User-signed actions (approveAgent, approveBuilderFee): EIP-712 over the action's own fields.
 * The network field's name is data (see CHAIN_FIELDS). Field order is the venue's, not the action's.
 */
export type UserSignedKind = 'approveAgent' | 'approveBuilderFee';

const FIELDS: Record<UserSignedKind, ReadonlyArray<readonly [name: string | 'CHAIN', type: string]>> = {
  approveAgent: [
    ['CHAIN', 'string'],
    ['agentAddress', 'address'],
    ['agentName', 'string'],
    ['nonce', 'uint64'],
  ],
  approveBuilderFee: [
    ['CHAIN', 'string'],
    ['maxFeeRate', 'string'],
    ['builder', 'address'],
    ['nonce', 'uint64'],
  ],
};

const PRIMARY: Record<UserSignedKind, string> = {
  approveAgent: 'HyperliquidTransaction:ApproveAgent',
  approveBuilderFee: 'HyperliquidTransaction:ApproveBuilderFee',
};

export function chainName(network: Network): 'Mainnet' | 'Testnet' {
  return network === 'mainnet' ? 'Mainnet' : 'Testnet';
}

export function userSignedTypedData(
  kind: UserSignedKind,
  action: Record<string, unknown>,
  opts: { chainField?: ChainField } = {},
) {
  const chainField = opts.chainField ?? VENUE_CHAIN_FIELD;
  const signatureChainId = action.signatureChainId;
  if (typeof signatureChainId !== 'string' || !/^0x[0-9a-fA-F]+$/.test(signatureChainId)) {
    throw new TypeError('signatureChainId must be a hexadecimal string');
  }
  const fields = FIELDS[kind].map(([name, type]) => ({ name: name === 'CHAIN' ? chainField : name, type }));
  const message: Record<string, unknown> = {};
  for (const { name, type } of fields) {
    const v = action[name];
    if (type === 'uint64') {
      if (typeof v !== 'number' && typeof v !== 'bigint') throw new TypeError(`${name} must be an integer`);
      message[name] = BigInt(v);
    } else if (name === 'agentName') {
      // An absent agentName is signed as "" (the unnamed agent).
      message[name] = typeof v === 'string' ? v : '';
    } else {
      if (typeof v !== 'string') throw new TypeError(`${name} must be a string`);
      message[name] = v;
    }
  }
  const primaryType = PRIMARY[kind];
  return {
    domain: {
      name: 'HyperliquidSignTransaction',
      version: '1',
      chainId: Number.parseInt(signatureChainId, 16),
      verifyingContract: ZERO_ADDRESS,
    },
    types: { [primaryType]: fields },
    primaryType,
    message,
  };
}

/**
 * The EIP-712 digest of `userSignedTypedData(kind, action, opts)`: the same bytes as viem's
 * hashTypedData (a property test holds it to that) without its generic walk, which re-hashed the
 * fixed domain and type strings and validated the whole payload on every call: 51 KB of garbage and
 * 1.35 ms per approval, ~10,000 of them in a 10,000-account cold start. The domain separator (per
 * chain id) and the type hash (per kind and chain field name) are computed once; what is left is a
 * keccak per string field, one for the struct and one for the digest.
 * digest = keccak256(0x1901 ‖ domainSeparator ‖ keccak256(typeHash ‖ encoded fields))
 */
export function userSignedDigest(kind: UserSignedKind, action: Record<string, unknown>, opts: { chainField?: ChainField } = {}): Hex {
  const typed = userSignedTypedData(kind, action, opts); // checks and normalizes the fields
  const fields = typed.types[typed.primaryType]!;
  const parts: Uint8Array[] = [typeHash(typed.primaryType, fields)];
  for (const { name, type } of fields) parts.push(encodeField(name, type, typed.message[name]));
  const structHash = keccak256(concat(parts), 'bytes');
  return eip712Digest(userDomain(typed.domain.chainId), structHash);
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const domainSeparators = new Map<number, Uint8Array>();
const typeHashes = new Map<string, Uint8Array>();

function userDomain(chainId: number): Uint8Array {
  let d = domainSeparators.get(chainId);
  if (!d) {
    if (!Number.isSafeInteger(chainId) || chainId < 0) throw new TypeError('signatureChainId is out of range');
    d = domainSeparator('HyperliquidSignTransaction', '1', chainId);
    domainSeparators.set(chainId, d);
  }
  return d;
}

function typeHash(primaryType: string, fields: ReadonlyArray<{ name: string; type: string }>): Uint8Array {
  const text = `${primaryType}(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`;
  let h = typeHashes.get(text);
  if (!h) {
    h = hashText(text);
    typeHashes.set(text, h);
  }
  return h;
}

function encodeField(name: string, type: string, value: unknown): Uint8Array {
  if (type === 'string') return hashText(value as string);
  if (type === 'address') {
    if (typeof value !== 'string' || !ADDRESS_RE.test(value)) throw new TypeError(`${name} must be an address`);
    return concat([new Uint8Array(12), hexToBytes(value as Hex)]);
  }
  if (type === 'uint64') {
    const v = value as bigint;
    if (v < 0n || v >= 2n ** 64n) throw new TypeError(`${name} is out of the uint64 range`);
    return numberToBytes(v, { size: 32 });
  }
  throw new TypeError(`unsupported EIP-712 field type ${type}`);
}
