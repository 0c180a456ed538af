import { keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { signerFromPrivateKey } from '../../venue/signing/signer.js';
import { DEMO_ACCOUNTS, demoAccountSeeds, demoMasterKey } from './demo.js';
import { harness, scheduleCancelBody, stubCatalog } from './test-support.js';

describe('demo accounts', () => {
  it('keys are keccak256 of the public phrase; addresses derive from them', () => {
    expect(demoMasterKey('alice')).toBe(keccak256(stringToBytes('dms-keeper simulator demo account: alice')));
    expect(demoMasterKey('alice')).not.toBe(demoMasterKey('bob'));
    const seeds = demoAccountSeeds(stubCatalog());
    expect(seeds.map((s) => s.address)).toEqual(DEMO_ACCOUNTS.map((a) => privateKeyToAddress(demoMasterKey(a.name)).toLowerCase()));
    expect(demoAccountSeeds(stubCatalog())).toEqual(seeds);
  });

  it('seeds 4 accounts: one main with a subaccount, one below the volume gate, all with orders', () => {
    const seeds = demoAccountSeeds(stubCatalog());
    expect(seeds).toHaveLength(4);
    expect(seeds.filter((s) => s.parent !== undefined)).toHaveLength(1);
    expect(seeds[1]?.parent).toBe(seeds[0]?.address);
    expect(seeds.filter((s) => s.tradedVolumeUsd < 1_000_000).map((s) => s.username)).toEqual(['carol']);
    for (const s of seeds) expect(s.orders?.length).toBeGreaterThan(0);
    const h = harness({ seeds });
    expect(h.venue.openOrders(seeds[0]?.address as string)).toHaveLength(3);
    expect(h.venue.positions(seeds[0]?.address as string)).toHaveLength(3);
    expect(h.venue.getAccount(seeds[0]?.address as string)?.subaccounts).toEqual([
      { address: seeds[1]?.address, username: 'alice-sub', venue_name: 'alice.demo/mm', account_type: 'subaccount' },
    ]);
  });

  it('alice can arm with her demo key (and her subaccount via vault); carol is refused by the gate', async () => {
    const seeds = demoAccountSeeds(stubCatalog());
    const h = harness({ seeds });
    const alice = signerFromPrivateKey(demoMasterKey('alice'));
    const carol = signerFromPrivateKey(demoMasterKey('carol'));
    const t = h.clock.nowMs() + 30_000;
    expect(await h.venue.handleAction(await scheduleCancelBody(alice, { time: t, nonce: h.nonce() }), 'rest')).toMatchObject({ body: { status: 'ok' } });
    expect(await h.venue.handleAction(await scheduleCancelBody(alice, { time: t, nonce: h.nonce(), vaultAddress: seeds[1]?.address }), 'rest')).toMatchObject({
      body: { status: 'ok' },
    });
    expect(await h.venue.handleAction(await scheduleCancelBody(carol, { time: t, nonce: h.nonce() }), 'rest')).toEqual({
      kind: 'answer',
      body: { status: 'err', response: 'Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $250000.' },
    });
  });

  it('seeds no orders or positions when the catalog has no tradable outcome', () => {
    const empty = { outcome: () => undefined, event: () => undefined, tradableOutcomeIds: () => [] };
    const seeds = demoAccountSeeds(empty);
    expect(seeds).toHaveLength(4);
    for (const s of seeds) {
      expect(s.orders).toEqual([]);
      expect(s.positions ?? []).toEqual([]);
    }
  });
});
