import type { Network } from '../types.js';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as const;

/**
 * User-signed actions (approveAgent, approveBuilderFee): EIP-712 over the action's own fields.
 * The network field's name is data: the spec calls it `venueChain`, Hyperliquid's SDKs (and the
 * published vectors) `hyperliquidChain`. Field order is the venue's, not the action's.
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
  opts: { chainField?: string } = {},
) {
  const chainField = opts.chainField ?? 'venueChain';
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
