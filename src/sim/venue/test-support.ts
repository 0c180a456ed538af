/**
 * Helpers for this folder's tests: a stub catalog, fixed throwaway keys, and signed bodies shaped
 * exactly as `JSON.parse` of the posted JSON gives them (`time` a plain number, not a BigInt).
 */
import { FakeClock } from '../../time/fake-clock.js';
import { signerFromPrivateKey, type Signer } from '../../venue/signing/signer.js';
import { VENUE_CHAIN_FIELD, type ChainField } from '../../venue/signing/user-signed.js';
import type { Event, Network, Outcome } from '../../venue/types.js';
import type { Catalog, NotificationSink, SimAccountSeed } from '../types.js';
import { VenueState, type VenueStateOptions } from './state.js';

export const OUTCOMES = ['out-1', 'out-2', 'out-3'] as const;

export function stubCatalog(): Catalog {
  const outcomes = new Map<string, Outcome>(OUTCOMES.map((id) => [id, { id, status: 'active' }]));
  return {
    outcome: (id) => outcomes.get(id),
    event: (): Event | undefined => undefined,
    tradableOutcomeIds: () => [...OUTCOMES],
  };
}

/** Throwaway test keys: 0x followed by one repeated byte. They protect nothing. */
export function testKey(byte: number): `0x${string}` {
  return `0x${byte.toString(16).padStart(2, '0').repeat(32)}`;
}

export const MASTER = signerFromPrivateKey(testKey(0x11));
export const OTHER_MASTER = signerFromPrivateKey(testKey(0x22));
export const AGENT_A = signerFromPrivateKey(testKey(0x33));
export const AGENT_B = signerFromPrivateKey(testKey(0x44));
export const AGENT_C = signerFromPrivateKey(testKey(0x55));
export const STRANGER = signerFromPrivateKey(testKey(0x66));
/** Subaccounts have no key on the venue; this is just an address. */
export const SUB = '0x5ab0000000000000000000000000000000000001';

/** What the wire does to a body: BigInts become JSON numbers, undefined keys vanish. */
export function wire<T>(body: T): unknown {
  return JSON.parse(JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));
}

export async function scheduleCancelBody(
  signer: Signer,
  opts: { time?: number; nonce: number; vaultAddress?: string; expiresAfter?: number; network?: Network },
): Promise<unknown> {
  const action: Record<string, unknown> = { type: 'scheduleCancel' };
  if (opts.time !== undefined) action.time = BigInt(opts.time);
  const signature = await signer.signL1({
    action,
    nonce: opts.nonce,
    network: opts.network ?? 'testnet',
    vaultAddress: opts.vaultAddress,
    expiresAfter: opts.expiresAfter,
  });
  const body: Record<string, unknown> = { action, nonce: opts.nonce, signature };
  if (opts.vaultAddress !== undefined) body.vaultAddress = opts.vaultAddress;
  if (opts.expiresAfter !== undefined) body.expiresAfter = opts.expiresAfter;
  return wire(body);
}

export async function approveAgentBody(
  master: Signer,
  opts: { agent: string; name?: string; nonce: number; chain?: 'Testnet' | 'Mainnet'; chainField?: ChainField },
): Promise<unknown> {
  // The venue's field name by default; `venueChain` (the spec's) only where a test asks for it.
  const chainField = opts.chainField ?? VENUE_CHAIN_FIELD;
  const action: Record<string, unknown> = { type: 'approveAgent', [chainField]: opts.chain ?? 'Testnet', signatureChainId: '0x66eee', nonce: opts.nonce, agentAddress: opts.agent };
  if (opts.name !== undefined) action.agentName = opts.name;
  const signature = await master.signUserAction('approveAgent', action, { chainField });
  return wire({ action, nonce: opts.nonce, signature });
}

export async function approveBuilderFeeBody(master: Signer, opts: { builder: string; maxFeeRate: string; nonce: number }): Promise<unknown> {
  const action = { type: 'approveBuilderFee', hyperliquidChain: 'Testnet', signatureChainId: '0x66eee', nonce: opts.nonce, maxFeeRate: opts.maxFeeRate, builder: opts.builder };
  const signature = await master.signUserAction('approveBuilderFee', action);
  return wire({ action, nonce: opts.nonce, signature });
}

export interface Harness {
  clock: FakeClock;
  venue: VenueState;
  notes: Array<{ user: string; text: string }>;
  /** A fresh nonce per call: max(now, last + 1), as a well-behaved client makes them. */
  nonce(): number;
}

/** 2026-01-01T12:00:00Z unless told otherwise. */
export function harness(opts: { startMs?: number; seeds?: SimAccountSeed[]; catalog?: Catalog } & Partial<Omit<VenueStateOptions, 'clock' | 'catalog'>> = {}): Harness {
  const clock = new FakeClock(opts.startMs);
  const notes: Array<{ user: string; text: string }> = [];
  const sink: NotificationSink = (user, text) => notes.push({ user, text });
  const venue = new VenueState({
    clock,
    network: opts.network ?? 'testnet',
    catalog: opts.catalog ?? stubCatalog(),
    verifySignatures: opts.verifySignatures ?? true,
    onNotification: opts.onNotification ?? sink,
    addressBudget: opts.addressBudget,
    actionLogLimit: opts.actionLogLimit,
    specChainField: opts.specChainField,
  });
  const seeds = opts.seeds ?? defaultSeeds();
  for (const s of seeds) venue.addAccount(s);
  let last = 0;
  return {
    clock,
    venue,
    notes,
    nonce: () => {
      last = Math.max(clock.nowMs(), last + 1);
      return last;
    },
  };
}

/** MASTER (eligible, 3 orders) with SUB (eligible, 2 orders); OTHER_MASTER eligible, 1 order. */
export function defaultSeeds(): SimAccountSeed[] {
  return [
    {
      address: MASTER.address,
      username: 'master',
      tradedVolumeUsd: 5_000_000,
      orders: [
        { outcome_id: 'out-1', side: 0, direction: 'buy', price: '0.4', quantity: '100' },
        { outcome_id: 'out-1', side: 1, direction: 'sell', price: '0.6', quantity: '50' },
        { outcome_id: 'out-2', side: 0, direction: 'buy', price: '0.25', quantity: '10' },
      ],
    },
    {
      address: SUB,
      parent: MASTER.address,
      username: 'master-sub',
      tradedVolumeUsd: 1_500_000,
      orders: [
        { outcome_id: 'out-2', side: 0, direction: 'sell', price: '0.3', quantity: '20' },
        { outcome_id: 'out-3', side: 1, direction: 'buy', price: '0.7', quantity: '5' },
      ],
    },
    {
      address: OTHER_MASTER.address,
      tradedVolumeUsd: 2_000_000,
      orders: [{ outcome_id: 'out-3', side: 0, direction: 'buy', price: '0.1', quantity: '1000' }],
    },
  ];
}
