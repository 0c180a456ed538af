/**
 * Demo accounts for the offline simulator (`npm start` against loopback).
 *
 * The keys below are PUBLIC: each is keccak256 of a fixed, published string. They protect nothing,
 * must never hold funds on any real network, and exist only so the simulator and the example
 * config work offline without anyone generating or storing a secret. Account addresses derive from
 * these keys, so the example config can name the same keys the simulator seeded.
 *
 * A subaccount has no key on the venue (its master signs with `vaultAddress`); its demo "key" is
 * only a deterministic way to mint a distinct address, and is never used to sign.
 */
import { keccak256, stringToBytes } from 'viem/utils';
import { privateKeyToAddress } from 'viem/accounts';
import type { Catalog, SeedOrder, SeedPosition, SimAccountSeed } from '../types.js';

export interface DemoAccountSpec {
  name: string;
  /** Name of the main account, for a subaccount. */
  parent?: string;
  tradedVolumeUsd: number;
  /** Why this account is in the demo. */
  role: string;
}

export const DEMO_ACCOUNTS: readonly DemoAccountSpec[] = [
  { name: 'alice', tradedVolumeUsd: 25_000_000, role: 'main account with a subaccount, eligible' },
  { name: 'alice-sub', parent: 'alice', tradedVolumeUsd: 2_000_000, role: 'subaccount, armed by the master via vaultAddress' },
  { name: 'bob', tradedVolumeUsd: 4_500_000, role: 'main account, eligible' },
  { name: 'carol', tradedVolumeUsd: 250_000, role: 'main account below the $1,000,000 volume gate: cannot be protected' },
];

/** The deterministic throwaway key of a demo account (see the file comment: public, protects nothing). */
export function demoMasterKey(name: string): `0x${string}` {
  return keccak256(stringToBytes(`dms-keeper simulator demo account: ${name}`));
}

export function demoAddress(name: string): string {
  return privateKeyToAddress(demoMasterKey(name)).toLowerCase();
}

/**
 * Seeds for `VenueState.addAccount`, main accounts before their subaccounts. Orders and positions
 * go on the catalog's tradable outcomes (cycled when there are few); none when there are none.
 * Prices are two-decimal probabilities and sizes whole units, so they sit on any plausible tick and
 * lot and clear a small minimum notional.
 */
export function demoAccountSeeds(catalog: Catalog): SimAccountSeed[] {
  const outcomes = catalog.tradableOutcomeIds();
  const pick = (i: number): string | undefined => (outcomes.length === 0 ? undefined : outcomes[i % outcomes.length]);
  const orders = (specs: Array<Omit<SeedOrder, 'outcome_id'> & { at: number }>): SeedOrder[] =>
    specs.flatMap(({ at, ...rest }) => {
      const outcome_id = pick(at);
      return outcome_id === undefined ? [] : [{ outcome_id, ...rest }];
    });
  const positions = (specs: Array<Omit<SeedPosition, 'outcome_id'> & { at: number }>): SeedPosition[] =>
    specs.flatMap(({ at, ...rest }) => {
      const outcome_id = pick(at);
      return outcome_id === undefined ? [] : [{ outcome_id, ...rest }];
    });

  const alice = demoAddress('alice');
  const bob = demoAddress('bob');
  const carol = demoAddress('carol');
  const aliceSub = demoAddress('alice-sub');
  const volume = (name: string): number => DEMO_ACCOUNTS.find((a) => a.name === name)?.tradedVolumeUsd ?? 0;
  const image = (name: string): string => `https://example.invalid/avatars/${name}.png`;

  return [
    {
      address: alice,
      username: 'alice',
      venue_name: 'alice.demo',
      image_url: image('alice'),
      tradedVolumeUsd: volume('alice'),
      orders: orders([
        { at: 0, side: 0, direction: 'buy', price: '0.42', quantity: '500', order_type: 'limit', time_in_force: 'gtc', client_order_id: '0x00000000000000000000000000a11ce1', submitted_by: alice },
        { at: 0, side: 0, direction: 'sell', price: '0.47', quantity: '300', filled: '120', order_type: 'limit', time_in_force: 'alo', client_order_id: '0x00000000000000000000000000a11ce2' },
        { at: 1, side: 1, direction: 'buy', price: '0.31', quantity: '1000', order_type: 'limit' },
      ]),
      positions: positions([
        { at: 0, side: 0, quantity: '250', average_entry_price: '0.38', mark_price: '0.445' },
        { at: 1, side: 1, quantity: '120.5', average_entry_price: '0.6', mark_price: '0.55' },
      ]),
    },
    {
      address: aliceSub,
      parent: alice,
      username: 'alice-sub',
      venue_name: 'alice.demo/mm',
      tradedVolumeUsd: volume('alice-sub'),
      orders: orders([
        { at: 2, side: 0, direction: 'buy', price: '0.12', quantity: '800', order_type: 'limit', time_in_force: 'gtc' },
        { at: 2, side: 0, direction: 'sell', price: '0.15', quantity: '800', order_type: 'limit', time_in_force: 'gtc' },
      ]),
      positions: positions([{ at: 2, side: 0, quantity: '400', average_entry_price: '0.135', mark_price: '0.13' }]),
    },
    {
      address: bob,
      username: 'bob',
      venue_name: 'bob.demo',
      tradedVolumeUsd: volume('bob'),
      orders: orders([
        { at: 1, side: 0, direction: 'buy', price: '0.66', quantity: '200', order_type: 'limit', time_in_force: 'gtc', client_order_id: '0x000000000000000000000000000b0b01', submitted_by: bob },
        { at: 3, side: 1, direction: 'sell', price: '0.25', quantity: '150', order_type: 'limit' },
      ]),
      positions: positions([{ at: 3, side: 1, quantity: '90', average_entry_price: '0.2', mark_price: '0.24' }]),
    },
    {
      address: carol,
      username: 'carol',
      venue_name: 'carol.demo',
      tradedVolumeUsd: volume('carol'),
      orders: orders([{ at: 0, side: 1, direction: 'buy', price: '0.5', quantity: '100', order_type: 'limit', time_in_force: 'gtc' }]),
    },
  ];
}
