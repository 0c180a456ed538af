import type { Network } from '../types.js';

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
