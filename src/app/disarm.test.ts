import { describe, expect, it } from 'vitest';
import { disarmAccounts, type DisarmVenue } from './disarm.js';
import type { KeeperAccountSpec } from '../account/keeper-types.js';
import type { AgentStore } from '../state/agent-store.js';
import { FakeClock } from '../time/fake-clock.js';

describe('disarm on a heartbeat venue', () => {
  it('skips a CLOB account with the reason (nothing is scheduled; stopping the heartbeats is what cancels), sends nothing, and fails nothing', async () => {
    const untouched = new Proxy({}, { get: () => () => Promise.reject(new Error('the venue must not be called')) }) as unknown as DisarmVenue;
    const spec = {
      name: 'pm-arb',
      address: '0x45d4d87db13e02e2a710174ea224cc73ce81b643',
      agentName: '-',
      validDays: 30,
      identity: 'x',
      switch: { deadlineMs: 10_000, rearmEveryMs: 5_000, minHorizonMs: 2_000, armWhen: 'always', onShutdown: 'keep', path: 'rest' },
      clob: { venue: 'polymarket', credentials: { key: async () => 'k', secret: async () => 's', passphrase: async () => 'p' } },
    } satisfies KeeperAccountSpec;
    const results = await disarmAccounts({ accounts: [spec], network: 'testnet', venue: untouched, store: {} as AgentStore, clock: new FakeClock(0) });
    expect(results).toEqual([{ account: 'pm-arb', address: spec.address, result: 'no_clear', message: expect.stringContaining('nothing to clear') }]);
  });
});
