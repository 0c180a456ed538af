import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { AgentStore } from '../state/agent-store.js';
import { NonceSource } from '../venue/signing/nonce.js';
import { parseAgentName } from '../sim/venue/agents.js';
import { provisionAccount, resolveAccount, type Provisioned, type ProvisionVenue } from './provision.js';

const MASTER_KEY = `0x${'11'.repeat(32)}`;
const AGENT_KEY = `0x${'22'.repeat(32)}` as const;

describe('provisionAccount', () => {
  it('a fractional venue time still yields "valid_until <whole ms>", which the venue parses', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dmsk-prov-'));
    try {
      // Venue time is the local clock plus a measured offset: fractional.
      const local = new FakeClock(Date.UTC(2026, 10, 22, 12));
      const venueNow = { nowMs: () => local.nowMs() + 0.625, monoMs: () => local.monoMs(), setTimeout: local.setTimeout.bind(local), clearTimeout: local.clearTimeout.bind(local) };
      const posted: Array<{ action: { agentName?: string } }> = [];
      const p = await provisionAccount(
        { name: 'acct', address: '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a', agentName: 'dms-keeper', validDays: 30, masterKey: async () => MASTER_KEY },
        {
          venue: {
            getAccount: async (address) => ({ address, account_type: 'main' }) as never,
            approve: async (body) => {
              posted.push(body as never);
              return { status: 'ok', response: { type: 'default' } };
            },
          },
          network: 'testnet',
          clock: venueNow,
          nonces: new NonceSource(local, venueNow.nowMs),
          store: new AgentStore(dir),
          generateKey: () => AGENT_KEY,
        },
      );
      const name = posted[0]!.action.agentName!;
      expect(name).toMatch(/^dms-keeper valid_until \d+$/);
      const parsed = parseAgentName(name, venueNow.nowMs());
      expect(parsed).toEqual({ name: 'dms-keeper', validUntilMs: p.agentValidUntilMs });
      expect(Number.isInteger(p.agentValidUntilMs)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /** The master key's own address. */
  const MASTER_ADDRESS = '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a';
  /** 40 accounts provisioned one after another, the venue's record of each from `account(address)`; `sameShape`: every record has the first's map. */
  async function provisionForty(addressOf: (i: number) => string, account: (address: string) => unknown): Promise<{ records: Provisioned[]; sameShape: boolean }> {
    setFlagsFromString('--allow-natives-syntax');
    const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;
    const dir = await mkdtemp(join(tmpdir(), 'dmsk-prov-'));
    try {
      const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
      const store = new AgentStore(dir);
      const records: Provisioned[] = [];
      for (let i = 0; i < 40; i++) {
        records.push(
          await provisionAccount(
            { name: `acct-${i}`, address: addressOf(i), agentName: 'dms-keeper', validDays: 30, masterKey: async () => MASTER_KEY },
            {
              venue: { getAccount: async (a) => account(a) as never, approve: async () => ({ status: 'ok', response: { type: 'default' } }) },
              network: 'testnet',
              clock,
              nonces: new NonceSource(clock, () => clock.nowMs()),
              store,
              generateKey: () => AGENT_KEY,
            },
          ),
        );
      }
      return { records, sameShape: records.every((r) => sameMap(records[0], r)) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('gives every account\'s record one shape: V8 made a map per record for a literal that opened with a spread (38,000 maps at 10,000 accounts)', async () => {
    const { sameShape } = await provisionForty(() => MASTER_ADDRESS, (address) => ({ address, account_type: 'main' }));
    expect(sameShape).toBe(true);
  });

  it('gives every subaccount\'s record its vault address, and all of them one shape of their own', async () => {
    // Mixed case, the parent's too: the record holds both lower-cased.
    const addressOf = (i: number): string => `0x${i.toString(16).padStart(2, '0')}${'AB'.repeat(19)}`;
    const { records, sameShape } = await provisionForty(addressOf, (address) => ({ address, account_type: 'subaccount', parent: { address: `0x${MASTER_ADDRESS.slice(2).toUpperCase()}` } }));
    expect(records.map((r) => [r.accountType, r.masterAddress, r.vaultAddress])).toEqual(records.map((_, i) => ['subaccount', MASTER_ADDRESS, addressOf(i).toLowerCase()]));
    expect(sameShape).toBe(true);
  });
});

describe('resolveAccount with no service: the venue says the role (userRole)', () => {
  const ADDR = '0x' + 'ab'.repeat(20);
  const MASTER = '0x' + 'cd'.repeat(20);
  const venue = (role: Awaited<ReturnType<NonNullable<ProvisionVenue['infoUserRole']>>>) => {
    const calls: string[] = [];
    const v: ProvisionVenue = {
      hasService: false,
      getAccount: async () => {
        calls.push('getAccount');
        throw new Error('no service');
      },
      infoUserRole: async () => {
        calls.push('userRole');
        return role;
      },
      approve: async () => ({ status: 'ok', response: { type: 'default' } }),
    };
    return { v, calls };
  };

  it('a user is a main account; a subaccount is armed through its vault address, signed for its master', async () => {
    const main = venue({ role: 'user', roleText: 'user' });
    expect(await resolveAccount(main.v, 'a', ADDR)).toEqual({ accountType: 'main', masterAddress: ADDR });
    expect(main.calls).toEqual(['userRole']);
    const sub = venue({ role: 'subAccount', roleText: 'subAccount', master: MASTER });
    expect(await resolveAccount(sub.v, 'a', ADDR)).toEqual({ accountType: 'subaccount', masterAddress: MASTER, vaultAddress: ADDR });
  });

  it.each([
    [{ role: 'missing', roleText: 'missing' }],
    [{ role: 'agent', roleText: 'agent', master: MASTER }],
    [{ role: 'vault', roleText: 'vault' }],
    [{ role: 'unknown', roleText: 'somethingNew' }],
  ] as const)('any other role fails closed (%o): never armed as a main account by default', async (role) => {
    const { v } = venue(role);
    await expect(resolveAccount(v, 'a', ADDR)).rejects.toMatchObject({ reason: 'resolve' });
  });

  it('with a service the service resolves, as before', async () => {
    const { v, calls } = venue({ role: 'user', roleText: 'user' });
    const withService: ProvisionVenue = { ...v, hasService: true, getAccount: async (address) => ({ address, account_type: 'main' }) as never };
    expect(await resolveAccount(withService, 'a', ADDR)).toEqual({ accountType: 'main', masterAddress: ADDR });
    expect(calls).toEqual([]);
  });
});

describe('resolveAccount with service_then_venue: the venue resolves while the service fails', () => {
  const ADDR = '0x' + 'ab'.repeat(20);
  const MASTER = '0x' + 'cd'.repeat(20);
  const venue = (getAccount: ProvisionVenue['getAccount']) => {
    const calls: string[] = [];
    const v: ProvisionVenue = {
      hasService: true,
      getAccount: async (a) => {
        calls.push('getAccount');
        return getAccount(a);
      },
      infoUserRole: async () => {
        calls.push('userRole');
        return { role: 'subAccount', roleText: 'subAccount', master: MASTER };
      },
      approve: async () => ({ status: 'ok', response: { type: 'default' } }),
    };
    return { v, calls };
  };
  const down = async (): Promise<never> => {
    throw Object.assign(new Error('503 UNAVAILABLE'), { httpStatus: 503 });
  };

  it('a failing service: userRole answers instead', async () => {
    const { v, calls } = venue(down);
    expect(await resolveAccount(v, 'a', ADDR, { fallbackToVenue: true })).toEqual({ accountType: 'subaccount', masterAddress: MASTER, vaultAddress: ADDR });
    expect(calls).toEqual(['getAccount', 'userRole']);
  });

  it('without the fallback the failure stands; a service that answers is never second-guessed', async () => {
    const failing = venue(down);
    await expect(resolveAccount(failing.v, 'a', ADDR)).rejects.toMatchObject({ reason: 'resolve' });
    expect(failing.calls).toEqual(['getAccount']);
    const answering = venue(async (address) => ({ address, account_type: 'main' }) as never);
    expect(await resolveAccount(answering.v, 'a', ADDR, { fallbackToVenue: true })).toEqual({ accountType: 'main', masterAddress: ADDR });
    expect(answering.calls).toEqual(['getAccount']);
  });

  it('a service that answers a 404 (no such account) is an answer, not a failure: no fallback', async () => {
    const { v, calls } = venue(async () => {
      throw Object.assign(new Error('404 NOT_FOUND'), { httpStatus: 404 });
    });
    await expect(resolveAccount(v, 'a', ADDR, { fallbackToVenue: true })).rejects.toMatchObject({ reason: 'resolve' });
    expect(calls).toEqual(['getAccount']);
  });
});
