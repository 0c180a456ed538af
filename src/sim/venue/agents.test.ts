import { describe, expect, it } from 'vitest';
import { VENUE_FACTS } from '../../venue/facts.js';
import { signerFromPrivateKey } from '../../venue/signing/signer.js';
import {
  AGENT_A,
  AGENT_B,
  AGENT_C,
  MASTER,
  OTHER_MASTER,
  STRANGER,
  SUB,
  approveAgentBody,
  approveBuilderFeeBody,
  harness,
  scheduleCancelBody,
  testKey,
} from './test-support.js';

const OK = { kind: 'answer', body: { status: 'ok', response: { type: 'default' } } };
const err = (text: string) => ({ kind: 'answer', body: { status: 'err', response: text } });
const DAY = 24 * 3600 * 1000;

describe('approveAgent', () => {
  it('an approved agent may then arm the master account', async () => {
    const h = harness();
    const arm = async () => h.venue.handleAction(await scheduleCancelBody(AGENT_A, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() }), 'rest');
    expect(await arm()).toEqual(err(`User or API Wallet ${AGENT_A.address} does not exist.`));
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'dms-keeper', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    expect(h.venue.agents(MASTER.address)).toEqual([{ address: AGENT_A.address, name: 'dms-keeper' }]);
    expect(await arm()).toEqual(OK);
    expect(h.venue.schedule(MASTER.address).timeMs).toBe(h.clock.nowMs() + 10_000);
    expect(h.venue.actionLog().at(-1)).toMatchObject({ type: 'scheduleCancel', account: MASTER.address, signer: AGENT_A.address, result: 'ok' });
  });

  it('accepts the venue SDK field name hyperliquidChain as well as venueChain', async () => {
    const h = harness();
    const body = await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce(), chainField: 'hyperliquidChain' });
    expect(await h.venue.handleAction(body, 'exchange')).toEqual(OK);
    expect(h.venue.agents(MASTER.address)).toEqual([{ address: AGENT_A.address, name: 'k' }]);
  });

  it('a replaced agent stops working at once; the master is then in pending agent removal for 5 s', async () => {
    const h = harness();
    await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() }), 'exchange');
    await h.clock.advance(10_000);
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_B.address, name: 'k', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    expect(h.venue.agents(MASTER.address)).toEqual([{ address: AGENT_B.address, name: 'k' }]);
    const t = h.clock.nowMs() + 10_000;
    expect(await h.venue.handleAction(await scheduleCancelBody(AGENT_A, { time: t, nonce: h.nonce() }), 'rest')).toEqual(
      err(`User or API Wallet ${AGENT_A.address} does not exist.`),
    );
    expect(await h.venue.handleAction(await scheduleCancelBody(AGENT_B, { time: t, nonce: h.nonce() }), 'rest')).toEqual(OK);

    // Any approveAgent for this master inside the window is refused, even for another name.
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_C.address, name: 'other', nonce: h.nonce() }), 'exchange')).toEqual(
      err('User has pending agent removal'),
    );
    await h.clock.advance(VENUE_FACTS.pendingAgentRemovalMs - 1);
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_C.address, name: 'other', nonce: h.nonce() }), 'exchange')).toEqual(
      err('User has pending agent removal'),
    );
    // Other masters are not affected.
    expect(await h.venue.handleAction(await approveAgentBody(OTHER_MASTER, { agent: STRANGER.address, name: 'k', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    await h.clock.advance(1);
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_C.address, name: 'other', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    // A replaced address can never be approved again, under any name.
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'fresh', nonce: h.nonce() }), 'exchange')).toEqual(
      err('Agent address was already used and cannot be approved again'),
    );
  });

  it('replaces the single unnamed agent (absent agentName) the same way', async () => {
    const h = harness();
    await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, nonce: h.nonce() }), 'exchange');
    await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_C.address, name: 'named', nonce: h.nonce() }), 'exchange');
    expect(h.venue.agents(MASTER.address)).toEqual([
      { address: AGENT_A.address, name: '' },
      { address: AGENT_C.address, name: 'named' },
    ]);
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_B.address, nonce: h.nonce() }), 'exchange')).toEqual(OK);
    expect(h.venue.agents(MASTER.address)).toEqual([
      { address: AGENT_B.address, name: '' },
      { address: AGENT_C.address, name: 'named' },
    ]);
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: STRANGER.address, name: 'x', nonce: h.nonce() }), 'exchange')).toEqual(
      err('User has pending agent removal'),
    );
  });

  it('an agent past valid_until no longer exists', async () => {
    const h = harness();
    const until = h.clock.nowMs() + 60_000;
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: `k valid_until ${until}`, nonce: h.nonce() }), 'exchange')).toEqual(OK);
    expect(h.venue.agents(MASTER.address)).toEqual([{ address: AGENT_A.address, name: 'k', validUntilMs: until }]);
    await h.clock.advance(59_999);
    expect(await h.venue.handleAction(await scheduleCancelBody(AGENT_A, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
    await h.clock.advance(1);
    expect(await h.venue.handleAction(await scheduleCancelBody(AGENT_A, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() }), 'rest')).toEqual(
      err(`User or API Wallet ${AGENT_A.address} does not exist.`),
    );
    expect(h.venue.agents(MASTER.address)).toEqual([]);
  });

  it('checks the name length (16) and the valid_until horizon (180 days)', async () => {
    const h = harness();
    const now = h.clock.nowMs();
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'x'.repeat(17), nonce: h.nonce() }), 'exchange')).toEqual(
      err('Invalid agent name: at most 16 characters before " valid_until"'),
    );
    const tooLate = `k valid_until ${now + 180 * DAY + 1}`;
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: tooLate, nonce: h.nonce() }), 'exchange')).toEqual(
      err('Invalid agent valid_until: must be in the future and at most 180 days ahead'),
    );
    const past = `k valid_until ${now}`;
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: past, nonce: h.nonce() }), 'exchange')).toEqual(
      err('Invalid agent valid_until: must be in the future and at most 180 days ahead'),
    );
    const ok = `${'y'.repeat(16)} valid_until ${now + 180 * DAY}`;
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: ok, nonce: h.nonce() }), 'exchange')).toEqual(OK);
  });

  it('named slots: 3 per master plus 2 per subaccount; the unnamed slot is extra', async () => {
    const h = harness();
    // OTHER_MASTER has no subaccount: 3 named.
    for (let i = 1; i <= 3; i++) {
      const agent = signerFromPrivateKey(testKey(0x80 + i)).address;
      expect(await h.venue.handleAction(await approveAgentBody(OTHER_MASTER, { agent, name: `n${i}`, nonce: h.nonce() }), 'exchange')).toEqual(OK);
    }
    const fourth = signerFromPrivateKey(testKey(0x84)).address;
    expect(await h.venue.handleAction(await approveAgentBody(OTHER_MASTER, { agent: fourth, name: 'n4', nonce: h.nonce() }), 'exchange')).toEqual(
      err('Too many named agents: at most 3 for this user'),
    );
    expect(await h.venue.handleAction(await approveAgentBody(OTHER_MASTER, { agent: fourth, nonce: h.nonce() }), 'exchange')).toEqual(OK);
    expect(h.venue.agents(OTHER_MASTER.address).map((a) => a.name)).toEqual(['', 'n1', 'n2', 'n3']);

    // MASTER has one subaccount: 5 named.
    for (let i = 1; i <= 5; i++) {
      const agent = signerFromPrivateKey(testKey(0x90 + i)).address;
      expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent, name: `m${i}`, nonce: h.nonce() }), 'exchange')).toEqual(OK);
    }
    const sixth = signerFromPrivateKey(testKey(0x96)).address;
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: sixth, name: 'm6', nonce: h.nonce() }), 'exchange')).toEqual(
      err('Too many named agents: at most 5 for this user'),
    );
  });

  it('one agent address serves one master under one name; an account address cannot be an agent', async () => {
    const h = harness();
    await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() }), 'exchange');
    expect(await h.venue.handleAction(await approveAgentBody(OTHER_MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() }), 'exchange')).toEqual(
      err('Agent address is already approved for another user or under another name'),
    );
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k2', nonce: h.nonce() }), 'exchange')).toEqual(
      err('Agent address is already approved for another user or under another name'),
    );
    // Same address, same name: a refresh, not a replacement (no pending-removal window).
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: SUB, name: 's', nonce: h.nonce() }), 'exchange')).toEqual(
      err('Agent address cannot be an existing user'),
    );
    expect(await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_B.address, name: 'k3', nonce: h.nonce() }), 'exchange')).toEqual(OK);
  });

  it('only the master key may sign it: an agent gets "Must deposit", a stranger "does not exist"', async () => {
    const h = harness();
    await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() }), 'exchange');
    expect(await h.venue.handleAction(await approveAgentBody(AGENT_A, { agent: AGENT_B.address, name: 'x', nonce: h.nonce() }), 'exchange')).toEqual(
      err(`Must deposit before performing actions. User: ${AGENT_A.address}`),
    );
    expect(await h.venue.handleAction(await approveAgentBody(STRANGER, { agent: AGENT_B.address, name: 'x', nonce: h.nonce() }), 'exchange')).toEqual(
      err(`User or API Wallet ${STRANGER.address} does not exist.`),
    );
    expect(h.venue.agents(MASTER.address)).toEqual([{ address: AGENT_A.address, name: 'k' }]);
  });

  it('a body signed for Mainnet is refused by a testnet venue with a field violation', async () => {
    const h = harness();
    const r = await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce(), chain: 'Mainnet' }), 'exchange');
    expect(r).toMatchObject({ kind: 'http', status: 400, body: { error: { code: 400, status: 'INVALID_ARGUMENT', details: [{ type: 'field_violation', field: 'action.hyperliquidChain', reason: 'wrong_network' }] } } });
  });

  it('is refused on the REST schedule-cancel path', async () => {
    const h = harness();
    const r = await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() }), 'rest');
    expect(r).toMatchObject({ kind: 'http', status: 400, body: { error: { details: [{ type: 'field_violation', field: 'action.type', reason: 'unsupported_action_type' }] } } });
  });
});

describe('approveBuilderFee', () => {
  it('records up to 10 builders per master; updating one is not a new approval', async () => {
    const h = harness();
    const builders = Array.from({ length: 11 }, (_v, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
    for (const b of builders.slice(0, 10)) {
      expect(await h.venue.handleAction(await approveBuilderFeeBody(MASTER, { builder: b, maxFeeRate: '0.001%', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    }
    expect(await h.venue.handleAction(await approveBuilderFeeBody(MASTER, { builder: builders[10] as string, maxFeeRate: '0.001%', nonce: h.nonce() }), 'exchange')).toEqual(
      err('Too many builder fee approvals: at most 10'),
    );
    expect(await h.venue.handleAction(await approveBuilderFeeBody(MASTER, { builder: builders[0] as string, maxFeeRate: '0.05%', nonce: h.nonce() }), 'exchange')).toEqual(OK);
    expect(h.venue.builderFees(MASTER.address)).toHaveLength(10);
    expect(h.venue.builderFees(MASTER.address)[0]).toEqual({ builder: builders[0], maxFeeRate: '0.05%' });
  });

  it('refuses a malformed fee rate and an agent signer', async () => {
    const h = harness();
    const r = await h.venue.handleAction(await approveBuilderFeeBody(MASTER, { builder: AGENT_B.address, maxFeeRate: '0.001', nonce: h.nonce() }), 'exchange');
    expect(r).toMatchObject({ kind: 'http', status: 400, body: { error: { details: [{ type: 'field_violation', field: 'action.maxFeeRate', reason: 'invalid_fee_rate' }] } } });
    await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() }), 'exchange');
    expect(await h.venue.handleAction(await approveBuilderFeeBody(AGENT_A, { builder: AGENT_B.address, maxFeeRate: '0.001%', nonce: h.nonce() }), 'exchange')).toEqual(
      err(`Must deposit before performing actions. User: ${AGENT_A.address}`),
    );
  });
});
