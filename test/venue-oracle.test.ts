/**
 * What the keeper sends is what the venue accepts, with the venue's own client as the judge.
 *
 * `@nktkas/hyperliquid` (a devDependency, never a runtime one) builds and signs the same action for
 * the same inputs (key, nonce, network, fields); the keeper's body is taken where it leaves: the
 * bytes its `HttpTransport` wrote to the dispatcher, not an object the test rebuilds. The two must
 * agree on every field name, value and key order, and on the signature; and the SDK's own EIP-712
 * types and L1 hash recover the keeper's signer.
 *
 * Part 1: the builders and the exchange client, over random keys, nonces and both networks, for
 * every action the keeper sends. Part 2: the whole keeper against the simulator, its bodies taken
 * at the in-process carrier: what provisioning and the switch really post.
 *
 * Written after the keeper had signed approvals over the spec's `venueChain` while the venue and
 * the SDKs sign `hyperliquidChain`: on that code every approval here fails (0 of 12 agreed).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MockAgent, type Dispatcher } from 'undici';
import { recoverTypedDataAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { approveAgent, ApproveAgentTypes, approveBuilderFee, ApproveBuilderFeeTypes, scheduleCancel } from '@nktkas/hyperliquid/api/exchange';
import { createL1ActionHash } from '@nktkas/hyperliquid/signing';
import { buildApproveAgent, buildApproveBuilderFee, buildScheduleCancel } from '../src/venue/actions.js';
import { ExchangeClient } from '../src/venue/exchange.js';
import { VENUE_FACTS } from '../src/venue/facts.js';
import { HttpTransport } from '../src/venue/http.js';
import { signerFromPrivateKey } from '../src/venue/signing/signer.js';
import type { Network } from '../src/venue/types.js';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import { account, startHarness } from './support/harness.js';

const ORIGIN = 'http://venue.test';
/** secp256k1's group order: a private key is in [1, N). */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const ZERO = '0x0000000000000000000000000000000000000000' as const;

const keyArb = fc.bigInt(1n, N - 1n).map((k) => `0x${k.toString(16).padStart(64, '0')}` as Hex);
const addressArb = keyArb.map((k) => privateKeyToAccount(k).address.toLowerCase() as Hex);
const networkArb = fc.constantFrom<Network>('mainnet', 'testnet');
/** Unix ms from 2024 to 2030: the venue's nonces and times. */
const unixMsArb = fc.integer({ min: 1_704_067_200_000, max: 1_893_456_000_000 });

interface Posted {
  action: Record<string, unknown>;
  nonce: number;
  signature: { r: Hex; s: Hex; v: number };
  vaultAddress?: Hex;
  expiresAfter?: number;
}

/** The keeper's exchange client on a MockAgent that keeps every body it was given. */
function keeperWire(): { client: ExchangeClient; bodies: () => string[] } {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  agent
    .get(ORIGIN)
    .intercept({ path: '/exchange', method: 'POST' })
    .reply(200, JSON.stringify({ status: 'ok', response: { type: 'default' } }), { headers: { 'content-type': 'application/json' } })
    .persist();
  const transport = new HttpTransport({ requestTimeoutMs: 3_000, dispatcher: agent });
  return { client: new ExchangeClient({ exchangeUrl: ORIGIN, transport }), bodies: () => (agent.getCallHistory()?.calls() ?? []).map((c) => String(c.body)) };
}

/** The SDK's request as it would put it on the wire (its HTTP transport posts `JSON.stringify(payload)`). */
async function sdkBody(network: Network, nonce: number, run: (config: Parameters<typeof scheduleCancel>[0]) => Promise<unknown>): Promise<Posted> {
  let sent: unknown;
  const transport = {
    isTestnet: network === 'testnet',
    request: (_endpoint: string, payload: unknown) => {
      sent = payload;
      return Promise.resolve({ status: 'ok', response: { type: 'default' } } as never);
    },
  };
  // The SDK needs a wallet in its config; `run` supplies it. The nonce is ours, so both sign the same
  // thing. signatureChainId is a free choice of the signer (the venue reads it from the action):
  // we use the official Python SDK's 0x66eee, where @nktkas/hyperliquid defaults to the wallet's chain.
  await run({ transport, nonceManager: () => nonce, signatureChainId: VENUE_FACTS.userSignedChainId } as unknown as Parameters<typeof scheduleCancel>[0]);
  return JSON.parse(JSON.stringify(sent)) as Posted;
}

/** r and s as numbers: one side may print leading zeros the other drops. */
function sameSignature(a: Posted['signature'], b: Posted['signature']): void {
  expect(BigInt(a.r)).toBe(BigInt(b.r));
  expect(BigInt(a.s)).toBe(BigInt(b.s));
  expect(a.v).toBe(b.v);
}

/** `@nktkas/hyperliquid` posts an unnamed agent's `agentName` as null; the official Python SDK leaves it out, as we do. Both sign "". */
function withoutNullName(action: Record<string, unknown>): Record<string, unknown> {
  if (action.agentName !== null) return action;
  const { agentName: _n, ...rest } = action;
  return rest;
}

async function recoverUserSigned(types: Record<string, ReadonlyArray<{ name: string; type: string }>>, action: Record<string, unknown>, signature: Posted['signature']): Promise<string> {
  const primaryType = Object.keys(types)[0]!;
  const message: Record<string, unknown> = {};
  for (const { name, type } of types[primaryType]!) message[name] = type === 'uint64' ? BigInt(action[name] as number) : (action[name] ?? '');
  // viem's generics cannot follow a types table chosen at run time; the values are checked by the recovery itself.
  const typed = {
    domain: { name: 'HyperliquidSignTransaction', version: '1', chainId: Number.parseInt(action.signatureChainId as string, 16), verifyingContract: ZERO },
    types,
    primaryType,
    message,
    signature: { r: signature.r, s: signature.s, v: BigInt(signature.v) },
  } as unknown as Parameters<typeof recoverTypedDataAddress>[0];
  const address = await recoverTypedDataAddress(typed);
  return address.toLowerCase();
}

/** The L1 signer under the SDK's own action hash (phantom agent, source "a" mainnet / "b" testnet). */
async function recoverL1(posted: Posted, network: Network): Promise<string> {
  const connectionId = createL1ActionHash({
    action: posted.action,
    nonce: posted.nonce,
    ...(posted.vaultAddress !== undefined ? { vaultAddress: posted.vaultAddress } : {}),
    ...(posted.expiresAfter !== undefined ? { expiresAfter: posted.expiresAfter } : {}),
  });
  const address = await recoverTypedDataAddress({
    domain: { name: 'Exchange', version: '1', chainId: 1337, verifyingContract: ZERO },
    types: { Agent: [{ name: 'source', type: 'string' }, { name: 'connectionId', type: 'bytes32' }] },
    primaryType: 'Agent',
    message: { source: network === 'mainnet' ? 'a' : 'b', connectionId },
    signature: { r: posted.signature.r, s: posted.signature.s, v: BigInt(posted.signature.v) },
  });
  return address.toLowerCase();
}

const RUNS = 12;

describe("the keeper's bodies equal the venue's own client's, taken at the transport", () => {
  it('scheduleCancel: with and without time, with and without a vault and expiresAfter', async () => {
    await fc.assert(
      fc.asyncProperty(
        keyArb,
        networkArb,
        unixMsArb,
        fc.option(fc.integer({ min: 10_000, max: 120_000 }), { nil: undefined }),
        fc.option(addressArb, { nil: undefined }),
        fc.option(fc.integer({ min: 1_000, max: 60_000 }), { nil: undefined }),
        async (key, network, nonce, leadMs, vaultAddress, expiresInMs) => {
          const timeMs = leadMs === undefined ? undefined : nonce + leadMs;
          const expiresAfter = expiresInMs === undefined ? undefined : nonce + expiresInMs;
          const wire = keeperWire();
          const body = await buildScheduleCancel({
            signer: signerFromPrivateKey(key),
            network,
            nonce,
            ...(timeMs !== undefined ? { timeMs } : {}),
            ...(vaultAddress !== undefined ? { vaultAddress } : {}),
            ...(expiresAfter !== undefined ? { expiresAfter } : {}),
          });
          await wire.client.post(body);
          const [sentText] = wire.bodies();
          const ours = JSON.parse(sentText!) as Posted;
          const theirs = await sdkBody(network, nonce, (config) =>
            scheduleCancel({ ...config, wallet: privateKeyToAccount(key) }, ...((timeMs !== undefined ? [{ time: timeMs }] : []) as []), {
              ...(vaultAddress !== undefined ? { vaultAddress } : {}),
              ...(expiresAfter !== undefined ? { expiresAfter } : {}),
            }),
          );
          expect(ours.action).toEqual(theirs.action);
          expect(Object.keys(ours.action)).toEqual(Object.keys(theirs.action));
          expect(ours.nonce).toBe(theirs.nonce);
          expect(ours.vaultAddress).toBe(theirs.vaultAddress);
          expect(ours.expiresAfter).toBe(theirs.expiresAfter);
          sameSignature(ours.signature, theirs.signature);
          expect(await recoverL1(ours, network)).toBe(privateKeyToAccount(key).address.toLowerCase());
        },
      ),
      { numRuns: RUNS * 3, seed: 34 },
    );
  });

  it('approveAgent: unnamed, named, and named with valid_until', async () => {
    await fc.assert(
      fc.asyncProperty(
        keyArb,
        addressArb,
        networkArb,
        unixMsArb,
        fc.constantFrom<'unnamed' | 'named' | 'valid_until'>('unnamed', 'named', 'valid_until'),
        fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
        async (key, agentAddress, network, nonce, naming, name) => {
          const agentName = naming === 'unnamed' ? undefined : naming === 'named' ? name : `${name} valid_until ${nonce + 30 * 86_400_000}`;
          const wire = keeperWire();
          await wire.client.post(
            await buildApproveAgent({ signer: signerFromPrivateKey(key), network, nonce, agentAddress, ...(agentName !== undefined ? { agentName } : {}) }),
          );
          const ours = JSON.parse(wire.bodies()[0]!) as Posted;
          const theirs = await sdkBody(network, nonce, (config) => approveAgent({ ...config, wallet: privateKeyToAccount(key) }, { agentAddress, agentName: agentName ?? null }));
          const sdkAction = withoutNullName(theirs.action);
          expect(ours.action).toEqual(sdkAction);
          expect(Object.keys(ours.action)).toEqual(Object.keys(sdkAction));
          expect(ours.nonce).toBe(theirs.nonce);
          expect(Object.keys(ours)).toEqual(['action', 'nonce', 'signature']);
          sameSignature(ours.signature, theirs.signature);
          expect(await recoverUserSigned(ApproveAgentTypes, ours.action, ours.signature)).toBe(privateKeyToAccount(key).address.toLowerCase());
        },
      ),
      { numRuns: RUNS * 3, seed: 34 },
    );
  });

  it('approveBuilderFee', async () => {
    await fc.assert(
      fc.asyncProperty(keyArb, addressArb, networkArb, unixMsArb, fc.constantFrom('0.001%', '0.01%', '0.1%', '1%'), async (key, builder, network, nonce, maxFeeRate) => {
        const wire = keeperWire();
        await wire.client.post(await buildApproveBuilderFee({ signer: signerFromPrivateKey(key), network, nonce, builder, maxFeeRate }));
        const ours = JSON.parse(wire.bodies()[0]!) as Posted;
        const theirs = await sdkBody(network, nonce, (config) => approveBuilderFee({ ...config, wallet: privateKeyToAccount(key) }, { builder, maxFeeRate }));
        expect(ours.action).toEqual(theirs.action);
        expect(Object.keys(ours.action)).toEqual(Object.keys(theirs.action));
        sameSignature(ours.signature, theirs.signature);
        expect(await recoverUserSigned(ApproveBuilderFeeTypes, ours.action, ours.signature)).toBe(privateKeyToAccount(key).address.toLowerCase());
      }),
      { numRuns: RUNS, seed: 34 },
    );
  });
});

/** Records every request body that leaves through `inner` (an interceptor: the carrier is unchanged). */
function recording(inner: Dispatcher, into: Array<{ path: string; body: string }>): Dispatcher {
  return inner.compose((dispatch) => (opts, handler) => {
    if (opts.method === 'POST' && typeof opts.body === 'string') into.push({ path: opts.path, body: opts.body });
    return dispatch(opts, handler);
  });
}

describe('the whole keeper: what provisioning and the switch post', () => {
  it("every approval and arm the keeper sent equals the SDK's for the same inputs and recovers to its signer", async () => {
    const sent: Array<{ path: string; body: string }> = [];
    const alice = demoMasterKey('alice') as Hex;
    const bob = demoMasterKey('bob') as Hex;
    const h = await startHarness({
      accounts: () => [
        account('mm-main', demoAddress('alice'), alice),
        // a subaccount: its arms carry the vault
        account('mm-sub', demoAddress('alice-sub'), alice, { agentName: 'dms-keeper-sub' }),
        account('arb-desk', demoAddress('bob'), bob, {}, { path: 'exchange' }),
      ],
      wrapDispatcher: (d) => recording(d, sent),
    });
    try {
      await h.keeper.start();
      await h.advance(40_000); // the first arms and a re-arm or two each
    } finally {
      await h.close();
    }
    const network: Network = 'testnet';
    const approvals = sent.filter((x) => x.path === '/exchange' && x.body.includes('"approveAgent"')).map((x) => JSON.parse(x.body) as Posted);
    const arms = sent.filter((x) => x.body.includes('"scheduleCancel"')).map((x) => ({ via: x.path, posted: JSON.parse(x.body) as Posted }));
    expect(approvals.length).toBe(3);
    expect(new Set(arms.map((a) => a.via))).toEqual(new Set(['/exchange', '/v1/trading/orders/schedule-cancel']));
    expect(arms.some((a) => a.posted.vaultAddress === demoAddress('alice-sub').toLowerCase())).toBe(true);

    const agents = new Set<string>();
    for (const mine of approvals) {
      const signer = await recoverUserSigned(ApproveAgentTypes, mine.action, mine.signature);
      const key = [alice, bob].find((k) => privateKeyToAccount(k).address.toLowerCase() === signer);
      expect(key, 'an approval recovers to a master under the SDK\'s types').toBeDefined();
      const theirs = await sdkBody(network, mine.nonce, (config) =>
        approveAgent({ ...config, wallet: privateKeyToAccount(key!) }, { agentAddress: mine.action.agentAddress as Hex, agentName: (mine.action.agentName as string | undefined) ?? null }),
      );
      expect(mine.action).toEqual(withoutNullName(theirs.action));
      expect(Object.keys(mine.action)).toEqual(Object.keys(withoutNullName(theirs.action)));
      sameSignature(mine.signature, theirs.signature);
      agents.add(mine.action.agentAddress as string);
    }
    expect(arms.length).toBeGreaterThanOrEqual(6);
    for (const { posted } of arms) {
      // Each arm is signed by an agent the keeper approved: the SDK's hash of the posted bytes recovers it.
      expect(agents.has(await recoverL1(posted, network))).toBe(true);
    }
  });
});

describe('venue.chain_field: the named option for a service that speaks the spec\'s dialect', () => {
  it('venueChain is refused by the venue as it is (no account armed) and served by a spec_dialect service', async () => {
    const accounts = () => [account('mm-main', demoAddress('alice'), demoMasterKey('alice'))];
    const run = async (profile: 'strict' | 'spec_dialect', chainField: 'hyperliquidChain' | 'venueChain') => {
      const h = await startHarness({ accounts, chainField, sim: { profile } });
      try {
        await h.keeper.start().catch(() => undefined);
        await h.advance(20_000);
        return { horizonMs: h.venueHorizonMs(demoAddress('alice')), approvals: h.sim.state.actionLog().filter((a) => a.type === 'approveAgent').map((a) => a.result) };
      } finally {
        await h.close();
      }
    };
    const refused = await run('strict', 'venueChain');
    expect(refused.horizonMs).toBeNull();
    expect(refused.approvals.length).toBeGreaterThan(0);
    expect(refused.approvals.every((r) => r !== 'ok')).toBe(true);
    const served = await run('spec_dialect', 'venueChain');
    expect(served.approvals).toContain('ok');
    expect(served.horizonMs).toBeGreaterThan(20_000);
    const venue = await run('spec_dialect', 'hyperliquidChain');
    expect(venue.horizonMs).toBeGreaterThan(20_000);
  }, 60_000);
});
