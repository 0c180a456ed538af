import { describe, expect, it } from 'vitest';
import { buildApproveAgent, buildApproveBuilderFee, buildScheduleCancel } from './actions.js';
import { toJson } from './json.js';
import { l1ActionHash } from './signing/l1.js';
import { recoverL1Signer, recoverUserSigner, signerFromPrivateKey } from './signing/signer.js';

// Public test keys (VENUE.md): K1 and an arbitrary agent key.
const K1 = '0x0123456789012345678901234567890123456789012345678901234567890123';
const K1_ADDRESS = '0x14791697260e4c9a71f18484c9f997b308e59325';
const AGENT_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

const master = signerFromPrivateKey(K1);
const agent = signerFromPrivateKey(AGENT_KEY);

describe('buildScheduleCancel', () => {
  it('arms: time is a bigint, posted as a bare integer, signature recovers to the agent', async () => {
    const body = await buildScheduleCancel({ signer: agent, network: 'mainnet', nonce: 1767268800000, timeMs: 1767268830000 });
    expect(body.action).toEqual({ type: 'scheduleCancel', time: 1767268830000n });
    expect(Object.keys(body.action)).toEqual(['type', 'time']);
    expect(typeof body.action.time).toBe('bigint');
    expect(body.nonce).toBe(1767268800000);
    expect(Object.keys(body)).toEqual(['action', 'nonce', 'signature']);
    const json = toJson(body);
    expect(json).toMatch(/^\{"action":\{"type":"scheduleCancel","time":1767268830000\},"nonce":1767268800000,"signature":\{"r":"0x[0-9a-f]{64}","s":"0x[0-9a-f]{64}","v":(27|28)\}\}$/);
    const posted = JSON.parse(json) as { action: unknown; nonce: number; signature: typeof body.signature };
    // What the venue sees (the parsed JSON, time a JS number) hashes like what we signed.
    expect(await recoverL1Signer({ action: posted.action, nonce: posted.nonce, network: 'mainnet', signature: posted.signature })).toBe(agent.address);
  });

  it('clears: no time key at all (never null), and the signature covers the keyless action', async () => {
    const body = await buildScheduleCancel({ signer: agent, network: 'testnet', nonce: 5 });
    expect(body.action).toEqual({ type: 'scheduleCancel' });
    expect('time' in body.action).toBe(false);
    const json = toJson(body);
    expect(json).not.toContain('time');
    expect(json.startsWith('{"action":{"type":"scheduleCancel"},"nonce":5,')).toBe(true);
    expect(await recoverL1Signer({ action: { type: 'scheduleCancel' }, nonce: 5, network: 'testnet', signature: body.signature })).toBe(agent.address);
    // signed for testnet: recovering as mainnet gives someone else
    expect(await recoverL1Signer({ action: { type: 'scheduleCancel' }, nonce: 5, network: 'mainnet', signature: body.signature })).not.toBe(agent.address);
  });

  it('reproduces the published clear vector (K1, no time, nonce 0, mainnet)', async () => {
    const body = await buildScheduleCancel({ signer: master, network: 'mainnet', nonce: 0 });
    expect(BigInt(body.signature.r)).toBe(BigInt('0x6cdfb286702f5917e76cd9b3b8bf678fcc49aec194c02a73e6d4f16891195df9'));
    expect(BigInt(body.signature.s)).toBe(BigInt('0x6557ac307fa05d25b8d61f21fb8a938e703b3d9bf575f6717ba21ec61261b2a0'));
    expect(body.signature.v).toBe(27);
  });

  it('hashes an armed action to the published uint64 connection id', async () => {
    const body = await buildScheduleCancel({ signer: master, network: 'mainnet', nonce: 1234567890, timeMs: 1735689600000 });
    expect(l1ActionHash(body.action, body.nonce)).toBe('0x3a66628d6aee0f0234d97afedeac15d09b6a753f864d2f03b6396d5fee9d8182');
  });

  it('refuses a time below 2^32 (seconds instead of ms; and bigint would hash it as uint64)', async () => {
    await expect(buildScheduleCancel({ signer: master, network: 'mainnet', nonce: 0, timeMs: 1767268830 })).rejects.toThrow(/seconds/);
  });

  it('with a vault and expiresAfter: lower-cased, in the body, and covered by the signature', async () => {
    const vault = '0x1719884EB866CB12B2287399B15F7DB5E7D775EA';
    const body = await buildScheduleCancel({
      signer: agent,
      network: 'mainnet',
      nonce: 1767268800000,
      timeMs: 1767268830000,
      vaultAddress: vault,
      expiresAfter: 1767268860000,
    });
    expect(body.vaultAddress).toBe(vault.toLowerCase());
    expect(body.expiresAfter).toBe(1767268860000);
    expect(Object.keys(body)).toEqual(['action', 'nonce', 'signature', 'vaultAddress', 'expiresAfter']);
    const posted = JSON.parse(toJson(body)) as { action: unknown; nonce: number; signature: typeof body.signature; vaultAddress: string; expiresAfter: number };
    expect(
      await recoverL1Signer({
        action: posted.action,
        nonce: posted.nonce,
        network: 'mainnet',
        signature: posted.signature,
        vaultAddress: posted.vaultAddress,
        expiresAfter: posted.expiresAfter,
      }),
    ).toBe(agent.address);
    // without the vault the same signature names another signer
    expect(await recoverL1Signer({ action: posted.action, nonce: posted.nonce, network: 'mainnet', signature: posted.signature, expiresAfter: posted.expiresAfter })).not.toBe(
      agent.address,
    );
  });

  it.each([
    [{ nonce: -1 }],
    [{ nonce: 1.5 }],
    [{ nonce: 1, timeMs: Number.NaN }],
    [{ nonce: 1, timeMs: 2 ** 60 }],
    [{ nonce: 1, vaultAddress: '0x1234' }],
  ])('refuses bad arguments before signing: %j', async (bad) => {
    await expect(buildScheduleCancel({ signer: agent, network: 'mainnet', ...bad })).rejects.toThrow();
  });
});

describe('buildApproveAgent', () => {
  it("carries the venue's fields in its clients' order, signs hyperliquidChain, action nonce == body nonce, recovers to the master", async () => {
    const body = await buildApproveAgent({
      signer: master,
      network: 'mainnet',
      nonce: 1687816341423,
      agentAddress: '0x1D9470D4B963F552E6F671A81619D395877BF409',
      agentName: 'dms-keeper',
    });
    expect(body.action).toEqual({
      type: 'approveAgent',
      signatureChainId: '0x66eee',
      hyperliquidChain: 'Mainnet',
      agentAddress: '0x1d9470d4b963f552e6f671a81619d395877bf409',
      agentName: 'dms-keeper',
      nonce: 1687816341423,
    });
    expect(Object.keys(body.action)).toEqual(['type', 'signatureChainId', 'hyperliquidChain', 'agentAddress', 'agentName', 'nonce']);
    expect(body.nonce).toBe(body.action.nonce);
    expect(Object.keys(body)).toEqual(['action', 'nonce', 'signature']);
    const posted = JSON.parse(toJson(body)) as { action: Record<string, unknown>; signature: typeof body.signature };
    expect(await recoverUserSigner('approveAgent', posted.action, posted.signature, { chainField: 'hyperliquidChain' })).toBe(K1_ADDRESS);
    // signed under the venue's field name: read under the spec's, it recovers to someone else
    const { hyperliquidChain: _hc, ...withoutVenueName } = posted.action;
    expect(await recoverUserSigner('approveAgent', { ...withoutVenueName, venueChain: 'Mainnet' }, posted.signature, { chainField: 'venueChain' })).not.toBe(K1_ADDRESS);
  });

  it('venue.chain_field venueChain: the spec dialect, sent and signed under that name only', async () => {
    const body = await buildApproveAgent({ signer: master, network: 'testnet', nonce: 9, agentAddress: agent.address, agentName: 'x', chainField: 'venueChain' });
    expect(Object.keys(body.action)).toEqual(['type', 'signatureChainId', 'venueChain', 'agentAddress', 'agentName', 'nonce']);
    expect(await recoverUserSigner('approveAgent', { ...body.action }, body.signature, { chainField: 'venueChain' })).toBe(K1_ADDRESS);
    const fee = await buildApproveBuilderFee({ signer: master, network: 'testnet', nonce: 10, builder: agent.address, maxFeeRate: '0.01%', chainField: 'venueChain' });
    expect(fee.action).toMatchObject({ venueChain: 'Testnet' });
    expect('hyperliquidChain' in fee.action).toBe(false);
  });

  it('without a name: the key is absent, signed as "" (the unnamed agent)', async () => {
    const body = await buildApproveAgent({ signer: master, network: 'testnet', nonce: 7, agentAddress: agent.address });
    expect('agentName' in body.action).toBe(false);
    expect(body.action.hyperliquidChain).toBe('Testnet');
    expect(await recoverUserSigner('approveAgent', { ...body.action }, body.signature)).toBe(K1_ADDRESS);
    expect(await recoverUserSigner('approveAgent', { ...body.action, agentName: '' }, body.signature)).toBe(K1_ADDRESS);
    expect(await recoverUserSigner('approveAgent', { ...body.action, agentName: 'x' }, body.signature)).not.toBe(K1_ADDRESS);
  });

  it('accepts a valid_until suffix, refuses a name over 16 characters', async () => {
    const ok = await buildApproveAgent({ signer: master, network: 'mainnet', nonce: 1, agentAddress: agent.address, agentName: 'dms-keeper valid_until 1767268800000' });
    expect(ok.action.agentName).toBe('dms-keeper valid_until 1767268800000');
    await expect(buildApproveAgent({ signer: master, network: 'mainnet', nonce: 1, agentAddress: agent.address, agentName: 'x'.repeat(17) })).rejects.toThrow(RangeError);
    await expect(buildApproveAgent({ signer: master, network: 'mainnet', nonce: 1, agentAddress: 'nope' })).rejects.toThrow(TypeError);
  });
});

describe('buildApproveBuilderFee', () => {
  it("carries the venue's fields in its clients' order and recovers to the master", async () => {
    const body = await buildApproveBuilderFee({
      signer: master,
      network: 'mainnet',
      nonce: 1687816341423,
      builder: '0x1D9470D4B963F552E6F671A81619D395877BF409',
      maxFeeRate: '0.001%',
    });
    expect(body.action).toEqual({
      type: 'approveBuilderFee',
      signatureChainId: '0x66eee',
      hyperliquidChain: 'Mainnet',
      maxFeeRate: '0.001%',
      builder: '0x1d9470d4b963f552e6f671a81619d395877bf409',
      nonce: 1687816341423,
    });
    expect(Object.keys(body.action)).toEqual(['type', 'signatureChainId', 'hyperliquidChain', 'maxFeeRate', 'builder', 'nonce']);
    expect(body.nonce).toBe(body.action.nonce);
    expect(await recoverUserSigner('approveBuilderFee', { ...body.action }, body.signature)).toBe(K1_ADDRESS);
    expect(await recoverUserSigner('approveBuilderFee', { ...body.action, maxFeeRate: '0.01%' }, body.signature)).not.toBe(K1_ADDRESS);
  });

  it.each(['0.001', '1e-3%', '%', 'abc%'])('refuses maxFeeRate %j', async (maxFeeRate) => {
    await expect(
      buildApproveBuilderFee({ signer: master, network: 'mainnet', nonce: 1, builder: agent.address, maxFeeRate }),
    ).rejects.toThrow(TypeError);
  });
});
