import { ADDRESS_RE } from './address.js';
import { VENUE_FACTS } from './facts.js';
import type { Signer } from './signing/signer.js';
import { chainName, VENUE_CHAIN_FIELD, type ChainField } from './signing/user-signed.js';
import type {
  Address,
  ApproveAgentAction,
  ChainNamed,
  ApproveBuilderFeeAction,
  Network,
  ScheduleCancelAction,
  SignedRequest,
} from './types.js';

/**
 * Builders for the three signed actions. They sign and return the exact body to POST; they read no
 * clock and do no I/O (the nonce is the caller's: it must come from the per-signer NonceSource).
 * Invalid arguments are programming errors and throw `TypeError`/`RangeError` before anything is
 * signed, because a signature over a wrong action is worse than no request.
 */

const FEE_RATE_RE = /^\d+(?:\.\d+)?%$/;
const VALID_UNTIL = ' valid_until ';

function address(what: string, value: string): Address {
  if (!ADDRESS_RE.test(value)) throw new TypeError(`${what} must be a 0x-prefixed 20-byte hex address`);
  return value.toLowerCase();
}

function nonNegativeInt(what: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative safe integer`);
  return value;
}

/**
 * `time` travels as a bigint, which @msgpack/msgpack always writes as uint64 (0xcf), while the venue
 * hashes integers in their smallest form. The two agree only from 2^32 up, which every unix-ms time
 * after February 1970 is; a smaller value is almost surely seconds passed as ms, and would also be
 * signed over bytes the venue never hashes. Refused either way.
 */
function unixMs(timeMs: number): number {
  nonNegativeInt('timeMs', timeMs);
  if (timeMs < 2 ** 32) throw new RangeError('timeMs must be unix milliseconds (>= 2^32); seconds were probably passed');
  return timeMs;
}

export interface BuildScheduleCancelArgs {
  /** The account's approved agent (or its master). */
  signer: Signer;
  network: Network;
  nonce: number;
  /** Unix ms to cancel at; absent clears the schedule. */
  timeMs?: number;
  /** The subaccount (vault) whose orders are covered, when not the signer's master. */
  vaultAddress?: string;
  expiresAfter?: number;
}

/**
 * `{type:'scheduleCancel', time}` with `time` a bigint: msgpack must hash it as uint64 and `toJson`
 * posts the same integer. Clearing omits the key entirely (null would be a different action).
 */
export async function buildScheduleCancel(args: BuildScheduleCancelArgs): Promise<SignedRequest<ScheduleCancelAction>> {
  const nonce = nonNegativeInt('nonce', args.nonce);
  const action: ScheduleCancelAction =
    args.timeMs === undefined ? { type: 'scheduleCancel' } : { type: 'scheduleCancel', time: BigInt(unixMs(args.timeMs)) };
  const vaultAddress = args.vaultAddress === undefined ? undefined : address('vaultAddress', args.vaultAddress);
  const expiresAfter = args.expiresAfter === undefined ? undefined : nonNegativeInt('expiresAfter', args.expiresAfter);
  const signature = await args.signer.signL1({
    action,
    nonce,
    network: args.network,
    ...(vaultAddress !== undefined ? { vaultAddress } : {}),
    ...(expiresAfter !== undefined ? { expiresAfter } : {}),
  });
  const body: SignedRequest<ScheduleCancelAction> = { action, nonce, signature };
  if (vaultAddress !== undefined) body.vaultAddress = vaultAddress;
  if (expiresAfter !== undefined) body.expiresAfter = expiresAfter;
  return body;
}

export interface BuildApproveAgentArgs {
  /** Must be the master key: the venue accepts approveAgent only from it. */
  signer: Signer;
  network: Network;
  nonce: number;
  agentAddress: string;
  /** Absent means the account's single unnamed agent (signed as ""). May end in ` valid_until <ms>`. */
  agentName?: string;
  /** The network field's name; default the venue's (signing/user-signed.ts, CHAIN_FIELDS). */
  chainField?: ChainField;
}

/** The network field under its chosen name, placed where the venue's clients place it. */
function chainNamed(network: Network, chainField: ChainField): ChainNamed {
  const chain = chainName(network);
  return chainField === 'venueChain' ? { venueChain: chain } : { hyperliquidChain: chain };
}

/**
 * `{type, signatureChainId, hyperliquidChain, agentAddress, agentName?, nonce}`: the venue's own
 * clients' fields and order (the JSON order is not hashed for a user-signed action, but what we
 * post should read as what the venue's clients post). An unnamed agent omits `agentName`, as the
 * official Python SDK does (`@nktkas/hyperliquid` sends `null`; both are signed as "").
 */
export async function buildApproveAgent(args: BuildApproveAgentArgs): Promise<SignedRequest<ApproveAgentAction>> {
  const nonce = nonNegativeInt('nonce', args.nonce);
  let agentName: string | undefined;
  if (args.agentName !== undefined) {
    const base = args.agentName.split(VALID_UNTIL)[0] ?? '';
    if (base.length > VENUE_FACTS.agentNameMaxChars) {
      throw new RangeError(`agentName must be at most ${VENUE_FACTS.agentNameMaxChars} characters before the valid_until suffix`);
    }
    agentName = args.agentName;
  }
  const chainField = args.chainField ?? VENUE_CHAIN_FIELD;
  const action: ApproveAgentAction = {
    type: 'approveAgent',
    signatureChainId: VENUE_FACTS.userSignedChainId,
    ...chainNamed(args.network, chainField),
    agentAddress: address('agentAddress', args.agentAddress),
    ...(agentName !== undefined ? { agentName } : {}),
    nonce,
  };
  // What is sent is what is signed: the network field under the same name in both.
  const signature = await args.signer.signUserAction('approveAgent', { ...action }, { chainField });
  return { action, nonce, signature };
}

export interface BuildApproveBuilderFeeArgs {
  /** Must be the master key. */
  signer: Signer;
  network: Network;
  nonce: number;
  builder: string;
  /** A percent string such as `"0.001%"`. */
  maxFeeRate: string;
  /** The network field's name; default the venue's (signing/user-signed.ts, CHAIN_FIELDS). */
  chainField?: ChainField;
}

/** `{type, signatureChainId, hyperliquidChain, maxFeeRate, builder, nonce}`, as the venue's clients post it. */
export async function buildApproveBuilderFee(args: BuildApproveBuilderFeeArgs): Promise<SignedRequest<ApproveBuilderFeeAction>> {
  const nonce = nonNegativeInt('nonce', args.nonce);
  if (!FEE_RATE_RE.test(args.maxFeeRate)) throw new TypeError('maxFeeRate must be a decimal followed by %, e.g. "0.001%"');
  const chainField = args.chainField ?? VENUE_CHAIN_FIELD;
  const action: ApproveBuilderFeeAction = {
    type: 'approveBuilderFee',
    signatureChainId: VENUE_FACTS.userSignedChainId,
    ...chainNamed(args.network, chainField),
    maxFeeRate: args.maxFeeRate,
    builder: address('builder', args.builder),
    nonce,
  };
  // What is sent is what is signed: the network field under the same name in both.
  const signature = await args.signer.signUserAction('approveBuilderFee', { ...action }, { chainField });
  return { action, nonce, signature };
}
