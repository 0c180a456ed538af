/**
 * The two EIP-712 structures the CLOB verifies, written from the venue's contracts and clients
 * (not imported from them: the simulator checks what a client sends with its own copy).
 *
 *  - `ClobAuth` (domain `ClobAuthDomain` v1, no verifying contract): the L1 proof of wallet
 *    control behind `POST /auth/api-key` and `GET /auth/derive-api-key`.
 *  - `Order` (domain `Polymarket CTF Exchange` v1, verifying contract = the CTF exchange, or the
 *    neg-risk CTF exchange for a neg-risk market): every order posted.
 */
import { recoverTypedDataAddress, type Hex } from 'viem';

export const CLOB_AUTH_MESSAGE = 'This message attests that I control the given wallet';

export const CLOB_AUTH_TYPES = {
  ClobAuth: [
    { name: 'address', type: 'address' },
    { name: 'timestamp', type: 'string' },
    { name: 'nonce', type: 'uint256' },
    { name: 'message', type: 'string' },
  ],
} as const;

export const ORDER_TYPES = {
  Order: [
    { name: 'salt', type: 'uint256' },
    { name: 'maker', type: 'address' },
    { name: 'signer', type: 'address' },
    { name: 'taker', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'makerAmount', type: 'uint256' },
    { name: 'takerAmount', type: 'uint256' },
    { name: 'expiration', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'feeRateBps', type: 'uint256' },
    { name: 'side', type: 'uint8' },
    { name: 'signatureType', type: 'uint8' },
  ],
} as const;

/** The exchange contracts per chain: Polygon (137) and its Amoy testnet (80002). */
export const EXCHANGES: Readonly<Record<number, { exchange: Hex; negRiskExchange: Hex }>> = {
  137: { exchange: '0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E', negRiskExchange: '0xC5d563A36AE78145C45a50134d48A1215220f80a' },
  80002: { exchange: '0xdFE02Eb6733538f8Ea35D585af8DE5958AD99E40', negRiskExchange: '0xC5d563A36AE78145C45a50134d48A1215220f80a' },
};

export function clobAuthDomain(chainId: number): { name: string; version: string; chainId: number } {
  return { name: 'ClobAuthDomain', version: '1', chainId };
}

export function orderDomain(chainId: number, negRisk: boolean): { name: string; version: string; chainId: number; verifyingContract: Hex } {
  const c = EXCHANGES[chainId];
  if (!c) throw new RangeError(`no CTF exchange known for chain ${chainId}`);
  return { name: 'Polymarket CTF Exchange', version: '1', chainId, verifyingContract: negRisk ? c.negRiskExchange : c.exchange };
}

/** The signer of a ClobAuth proof, or undefined when the signature does not parse. */
export async function recoverClobAuth(chainId: number, fields: { address: Hex; timestamp: string; nonce: bigint }, signature: Hex): Promise<string | undefined> {
  try {
    return await recoverTypedDataAddress({
      domain: clobAuthDomain(chainId),
      types: CLOB_AUTH_TYPES,
      primaryType: 'ClobAuth',
      message: { ...fields, message: CLOB_AUTH_MESSAGE },
      signature,
    });
  } catch {
    return undefined;
  }
}

/** The order as signed: integers as bigint, side 0 = BUY, 1 = SELL. */
export interface SignedOrderStruct {
  salt: bigint;
  maker: Hex;
  signer: Hex;
  taker: Hex;
  tokenId: bigint;
  makerAmount: bigint;
  takerAmount: bigint;
  expiration: bigint;
  nonce: bigint;
  feeRateBps: bigint;
  side: number;
  signatureType: number;
}

/** The signer of an order, or undefined when the signature does not parse. */
export async function recoverOrderSigner(chainId: number, negRisk: boolean, order: SignedOrderStruct, signature: Hex): Promise<string | undefined> {
  try {
    return await recoverTypedDataAddress({ domain: orderDomain(chainId, negRisk), types: ORDER_TYPES, primaryType: 'Order', message: order, signature });
  } catch {
    return undefined;
  }
}
