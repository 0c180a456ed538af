// viem/utils, never the package root: the root's index loads all of viem (360 files), about 0.3 s of
// CPU at every process start, which the keeper, the simulator and every test child paid.
import { concat, hashStruct, hashTypedData, hexToBytes, recoverAddress } from 'viem/utils';
import { keccak256 } from './keccak.js';
import type { Hex } from 'viem';
import type { Network, Signature } from '../types.js';
import { viemCurve, type SigningCurve } from './curve.js';
import { l1ActionHash, l1ActionHashBytes, l1SigningDigest, l1TypedData } from './l1.js';
import { userSignedDigest, userSignedTypedData, type ChainField, type UserSignedKind } from './user-signed.js';
import { isPrivateKeyText, isValidPrivateKey } from './key-text.js';
export { isPrivateKeyText, isValidPrivateKey };

/**
 * A signing key behind a narrow interface: callers get an address and signatures, never the key.
 * The key lives only in the signer's private field; `toJSON`/inspection print the address alone.
 */
export interface Signer {
  readonly address: `0x${string}`;
  signL1(args: { action: unknown; nonce: number; network: Network; vaultAddress?: string; expiresAfter?: number }): Promise<Signature>;
  signUserAction(kind: UserSignedKind, action: Record<string, unknown>, opts?: { chainField?: ChainField }): Promise<Signature>;
}


export class InvalidKeyError extends Error {
  readonly code = 'INVALID_KEY' as const;
  constructor(what: string) {
    super(`${what} is not a private key (want 0x followed by 64 hex digits)`);
    this.name = 'InvalidKeyError';
  }
}

/**
 * The key stays in a private field and nowhere else; `toJSON` and inspection show the address
 * alone. A class, not an object of closures: the methods live once on the prototype, where four
 * closures and their context per signer (two signers an account) were about 0.5 KB at 10,000
 * accounts each. No viem account object is kept either (ten closures and the public key, 1 KB).
 * `curve` does the secp256k1 arithmetic (curve.ts): the keeper passes libsecp256k1 when it loads;
 * viem's is the default, so tests and tools that do not choose sign with the reference.
 */
class KeySigner implements Signer {
  /** The key's 32 bytes (their own buffer, not a slice of Node's shared pool). */
  readonly #key: Uint8Array;
  readonly #curve: SigningCurve;
  readonly address: `0x${string}`;

  constructor(key: Hex, curve: SigningCurve) {
    this.#key = hexToBytes(key, { size: 32 });
    this.#curve = curve;
    this.address = curve.address(key);
  }

  async signL1({ action, nonce, network, vaultAddress, expiresAfter }: Parameters<Signer['signL1']>[0]): Promise<Signature> {
    // In bytes from the action to the signature: the hex between the hashes was a fifth of an arm's signing CPU.
    const connectionId = l1ActionHashBytes(action, nonce, vaultAddress, expiresAfter);
    // The typed data's digest, signed as a hash: what signTypedData(l1TypedData(...)) signs.
    return this.#curve.signDigest(l1SigningDigest(connectionId, network), this.#key);
  }

  async signUserAction(kind: UserSignedKind, action: Record<string, unknown>, opts?: { chainField?: ChainField }): Promise<Signature> {
    // The fixed-shape digest (user-signed.ts); the simulator recovers through viem's generic one.
    return this.#curve.signDigest(hexToBytes(userSignedDigest(kind, action, opts)), this.#key);
  }

  toJSON(): { address: string } {
    return { address: this.address };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Signer(${this.address})`;
  }
}

export function signerFromPrivateKey(privateKey: string, what = 'key', curve: SigningCurve = viemCurve): Signer {
  if (!isValidPrivateKey(privateKey)) throw new InvalidKeyError(what); // never echo the key
  return new KeySigner(privateKey as Hex, curve);
}

function joinSignature(sig: Signature): Hex {
  const r = BigInt(sig.r).toString(16).padStart(64, '0');
  const s = BigInt(sig.s).toString(16).padStart(64, '0');
  const v = sig.v.toString(16).padStart(2, '0');
  return `0x${r}${s}${v}`;
}

/**
 * Recovers the address that signed a 32-byte digest. viem's (pure JS) by default; the benchmark's
 * simulator plugs in libsecp256k1, since at 200 verifications a second viem's 3 ms each would make
 * the simulator, not the keeper, the thing measured.
 */
export type SignatureRecovery = (hash: Hex, signature: Hex) => Promise<`0x${string}`>;

const viemRecovery: SignatureRecovery = (hash, signature) => recoverAddress({ hash, signature });

/** l1TypedData's domain as EIP-712 types it (what viem's getTypesForEIP712Domain gives for it). */
const L1_DOMAIN_FIELDS = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;

/** viem's hash of l1TypedData's domain (the same for every action on either network), once. */
let l1DomainHash: Hex | undefined;

/**
 * viem's EIP-712 digest of `l1TypedData(connectionId, network)`: hashTypedData's own steps (0x1901 ‖
 * hashDomain ‖ hashStruct), with the fixed domain hashed once, not per action. The struct still goes
 * through viem's generic encoder, not the keeper's fixed-shape l1SigningHash, so the simulator checks
 * the keeper's signing path rather than repeating it. The domain's five keccaks (pure JS) and the
 * validation of a message built here (a 32-byte hash and 'a' or 'b') were half the hashing of every
 * arm the simulator verifies. A test holds it to hashTypedData.
 */
export function l1TypedDataDigest(connectionId: Hex, network: Network): Hex {
  const typed = l1TypedData(connectionId, network);
  // viem's types are inferred from literal type tables; this one is built here, hence the casts. The
  // domain's fields are l1TypedData's, in EIP-712's order (viem's hashDomain is hashStruct of them).
  const types = { EIP712Domain: L1_DOMAIN_FIELDS, ...typed.types } as unknown as Parameters<typeof hashStruct>[0]['types'];
  l1DomainHash ??= hashStruct({ data: typed.domain, primaryType: 'EIP712Domain', types } as unknown as Parameters<typeof hashStruct>[0]);
  return keccak256(concat(['0x1901', l1DomainHash, hashStruct({ data: typed.message, primaryType: typed.primaryType, types } as unknown as Parameters<typeof hashStruct>[0])]));
}

/** Who signed an L1 action (the simulator verifies signatures with this, as the venue does), by l1TypedDataDigest. */
export async function recoverL1Signer(
  args: {
    action: unknown;
    nonce: number;
    network: Network;
    signature: Signature;
    vaultAddress?: string;
    expiresAfter?: number;
  },
  recover: SignatureRecovery = viemRecovery,
): Promise<`0x${string}`> {
  const connectionId = l1ActionHash(args.action, args.nonce, args.vaultAddress, args.expiresAfter);
  const addr = await recover(l1TypedDataDigest(connectionId, args.network), joinSignature(args.signature));
  return addr.toLowerCase() as `0x${string}`;
}

export async function recoverUserSigner(
  kind: UserSignedKind,
  action: Record<string, unknown>,
  signature: Signature,
  opts?: { chainField?: ChainField },
  recover: SignatureRecovery = viemRecovery,
): Promise<`0x${string}`> {
  const typed = userSignedTypedData(kind, action, opts);
  const addr = await recover(hashTypedData(typed as unknown as Parameters<typeof hashTypedData>[0]), joinSignature(signature));
  return addr.toLowerCase() as `0x${string}`;
}
