import { describe, expect, it } from 'vitest';
import { VENUE_FACTS } from '../../venue/facts.js';
import { MASTER, OTHER_MASTER, SUB, AGENT_A, approveAgentBody, harness, scheduleCancelBody, wire } from './test-support.js';
import { NonceBook } from './nonces.js';

const OK = { kind: 'answer', body: { status: 'ok', response: { type: 'default' } } };
const err = (text: string) => ({ kind: 'answer', body: { status: 'err', response: text } });
const DAY = 24 * 3600 * 1000;

describe('nonces (per signer)', () => {
  it('refuses a reused nonce', async () => {
    const h = harness();
    const body = await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.clock.nowMs() });
    expect(await h.venue.handleAction(body, 'rest')).toEqual(OK);
    expect(await h.venue.handleAction(body, 'rest')).toEqual(err(`Invalid nonce: duplicate nonce ${h.clock.nowMs()}`));
  });

  it('keeps nonces per signer: two signers may use the same number', async () => {
    const h = harness();
    const n = h.clock.nowMs();
    await h.venue.handleAction(await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: n - 1 }), 'exchange');
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: n + 10_000, nonce: n }), 'rest')).toEqual(OK);
    expect(await h.venue.handleAction(await scheduleCancelBody(AGENT_A, { time: n + 10_000, nonce: n }), 'rest')).toEqual(OK);
    expect(await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: n + 10_000, nonce: n }), 'rest')).toEqual(OK);
    expect(h.venue.keptNonces(MASTER.address)).toEqual([n - 1, n]);
    expect(h.venue.keptNonces(AGENT_A.address)).toEqual([n]);
  });

  it('refuses a nonce outside (now - 2 days, now + 1 day)', async () => {
    const h = harness();
    const now = h.clock.nowMs();
    const lo = now - 2 * DAY;
    const hi = now + DAY;
    const arm = async (nonce: number) => h.venue.handleAction(await scheduleCancelBody(MASTER, { time: now + 10_000, nonce }), 'rest');
    expect(await arm(lo)).toEqual(err(`Invalid nonce: ${lo} is outside the allowed window (${lo}, ${hi})`));
    expect(await arm(hi)).toEqual(err(`Invalid nonce: ${hi} is outside the allowed window (${lo}, ${hi})`));
    expect(await arm(lo + 1)).toEqual(OK);
    expect(await arm(hi - 1)).toEqual(OK);
  });

  it('accepts out-of-order nonces: a late, older clear overwrites a newer arm', async () => {
    const h = harness();
    const n = h.clock.nowMs();
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: n + 10_000, nonce: n + 5 }), 'rest')).toEqual(OK);
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { nonce: n + 1 }), 'rest')).toEqual(OK);
    expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 0 });
  });

  it('a refused action still uses its nonce once it got past signer and nonce checks', async () => {
    const h = harness();
    const n = h.clock.nowMs();
    const early = await scheduleCancelBody(MASTER, { time: n + 1_000, nonce: n });
    expect(await h.venue.handleAction(early, 'rest')).toEqual(err('Scheduled cancel time too early, must be at least 5 seconds from now.'));
    expect(await h.venue.handleAction(early, 'rest')).toEqual(err(`Invalid nonce: duplicate nonce ${n}`));
  });

  it('keeps the 100 highest: once full, a nonce must exceed the smallest kept', () => {
    const book = new NonceBook();
    const now = 1_800_000_000_000;
    for (let i = 1; i <= VENUE_FACTS.nonceSetSize; i++) {
      expect(book.check('0xA', now + i * 10, now)).toBeUndefined();
      book.commit('0xA', now + i * 10);
    }
    expect(book.keptFor('0xa')).toHaveLength(100);
    expect(book.check('0xa', now + 5, now)).toBe(`Invalid nonce: ${now + 5} is not above the smallest of the 100 highest nonces already used (${now + 10})`);
    expect(book.check('0xa', now + 10, now)).toBe(`Invalid nonce: duplicate nonce ${now + 10}`);
    // A gap above the smallest is still fine (out of order), and it evicts the smallest.
    expect(book.check('0xa', now + 15, now)).toBeUndefined();
    book.commit('0xa', now + 15);
    expect(book.keptFor('0xa')[0]).toBe(now + 15);
    expect(book.keptFor('0xa')).toHaveLength(100);
    expect(book.check('0xa', now + 12, now)).toBe(`Invalid nonce: ${now + 12} is not above the smallest of the 100 highest nonces already used (${now + 15})`);
    // Another signer is unaffected.
    expect(book.check('0xb', now + 5, now)).toBeUndefined();
  });
});

describe('malformed bodies answer 400 with a field_violation naming the field (REST), 422 text (/exchange)', () => {
  async function valid(h: ReturnType<typeof harness>): Promise<Record<string, unknown>> {
    return (await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() })) as Record<string, unknown>;
  }
  type Mutate = (b: Record<string, unknown>) => unknown;
  const cases: Array<[string, Mutate, string, string]> = [
    ['not an object (array)', () => [1, 2], 'body', 'not_an_object'],
    ['not an object (null)', () => null, 'body', 'not_an_object'],
    ['not an object (string)', () => 'scheduleCancel', 'body', 'not_an_object'],
    ['action missing', (b) => ({ ...b, action: undefined }), 'action', 'required'],
    ['action not an object', (b) => ({ ...b, action: 'scheduleCancel' }), 'action', 'not_an_object'],
    ['action.type missing', (b) => ({ ...b, action: { time: 1 } }), 'action.type', 'required'],
    ['action.type not a string', (b) => ({ ...b, action: { type: 7 } }), 'action.type', 'not_a_string'],
    ['unknown action type', (b) => ({ ...b, action: { type: 'frobnicate' } }), 'action.type', 'unknown_action_type'],
    ['nonce missing', (b) => ({ ...b, nonce: undefined }), 'nonce', 'required'],
    ['nonce a string', (b) => ({ ...b, nonce: '1767268800000' }), 'nonce', 'not_an_integer'],
    ['nonce a fraction', (b) => ({ ...b, nonce: 1.5 }), 'nonce', 'not_an_integer'],
    ['signature missing', (b) => ({ ...b, signature: undefined }), 'signature', 'required'],
    ['signature a string', (b) => ({ ...b, signature: '0xdead' }), 'signature', 'not_an_object'],
    ['signature.r missing', (b) => ({ ...b, signature: { ...(b.signature as object), r: undefined } }), 'signature.r', 'required'],
    ['signature.s not hex', (b) => ({ ...b, signature: { ...(b.signature as object), s: '0xzz' } }), 'signature.s', 'not_hex'],
    ['signature.r too long', (b) => ({ ...b, signature: { ...(b.signature as object), r: `0x${'1'.repeat(65)}` } }), 'signature.r', 'not_hex'],
    ['signature.v 29', (b) => ({ ...b, signature: { ...(b.signature as object), v: 29 } }), 'signature.v', 'invalid'],
    ['signature.v a string', (b) => ({ ...b, signature: { ...(b.signature as object), v: '27' } }), 'signature.v', 'invalid'],
    ['time a string', (b) => ({ ...b, action: { type: 'scheduleCancel', time: '1767268810000' } }), 'action.time', 'not_an_integer'],
    ['time a float', (b) => ({ ...b, action: { type: 'scheduleCancel', time: 1767268810000.5 } }), 'action.time', 'not_an_integer'],
    ['time null', (b) => ({ ...b, action: { type: 'scheduleCancel', time: null } }), 'action.time', 'not_an_integer'],
    ['time negative', (b) => ({ ...b, action: { type: 'scheduleCancel', time: -5 } }), 'action.time', 'not_an_integer'],
    ['vaultAddress not an address', (b) => ({ ...b, vaultAddress: '0x1234' }), 'vaultAddress', 'not_an_address'],
    ['expiresAfter a string', (b) => ({ ...b, expiresAfter: 'soon' }), 'expiresAfter', 'not_an_integer'],
  ];

  for (const [name, mutate, field, reason] of cases) {
    it(name, async () => {
      const h = harness();
      const body = wire(mutate(await valid(h)));
      const r = await h.venue.handleAction(body, 'rest');
      expect(r.kind).toBe('http');
      if (r.kind !== 'http') return;
      expect(r.status).toBe(400);
      const e = (r.body as { error: { code: number; status: string; message: string; details: unknown[] } }).error;
      expect(e.code).toBe(400);
      expect(e.status).toBe('INVALID_ARGUMENT');
      expect(typeof e.message).toBe('string');
      expect(e.details).toEqual([{ type: 'field_violation', field, reason }]);
      expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 0 });
      expect(h.venue.actionLog().at(-1)?.result).toBe(`http 400 ${field}: ${reason}`);
    });
    it(`${name}: on /exchange, the venue's 422 text`, async () => {
      const h = harness();
      const r = await h.venue.handleAction(wire(mutate(await valid(h))), 'exchange');
      expect(r).toEqual({ kind: 'http', status: 422, body: null, raw: 'Failed to deserialize the JSON body into the target type' });
      expect(h.venue.schedule(MASTER.address)).toEqual({ triggersToday: 0 });
      expect(h.venue.actionLog().at(-1)?.result).toBe(`http 422 ${field}: ${reason}`);
    });
  }

  it('null vaultAddress and expiresAfter mean absent (as the Python SDK posts them)', async () => {
    const h = harness();
    const b = await valid(h);
    expect(await h.venue.handleAction({ ...b, vaultAddress: null, expiresAfter: null }, 'exchange')).toEqual(OK);
  });

  it('an unrecoverable signature (r = 0) is a 400 on the signature (REST), the venue\'s err on /exchange', async () => {
    const h = harness();
    const b = await valid(h);
    const r = await h.venue.handleAction({ ...b, signature: { r: '0x0', s: '0x0', v: 27 } }, 'rest');
    expect(r).toMatchObject({ kind: 'http', status: 400, body: { error: { details: [{ type: 'field_violation', field: 'signature', reason: 'unrecoverable' }] } } });
    const x = await h.venue.handleAction({ ...b, signature: { r: '0x0', s: '0x0', v: 27 } }, 'exchange');
    expect(x).toEqual({ kind: 'answer', body: { status: 'err', response: 'Invalid signature: no signer can be recovered' } });
  });

  it('approveAgent: action.nonce must equal the body nonce', async () => {
    const h = harness();
    const b = (await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() })) as { nonce: number };
    const r = await h.venue.handleAction({ ...b, nonce: b.nonce + 1 }, 'exchange');
    expect(r).toMatchObject({ kind: 'http', status: 422, raw: 'Failed to deserialize the JSON body into the target type' });
    expect(h.venue.actionLog().at(-1)?.result).toBe('http 422 action.nonce: must_equal_nonce');
  });

  it('approveAgent: no vaultAddress, a hex signatureChainId, an address agent', async () => {
    const h = harness();
    const b = (await approveAgentBody(MASTER, { agent: AGENT_A.address, name: 'k', nonce: h.nonce() })) as { action: Record<string, unknown> };
    // /exchange answers the venue's 422 text; the field it could not read is in the action log.
    const field = async (body: unknown) => {
      const r = await h.venue.handleAction(body, 'exchange');
      if (r.kind !== 'http') return 'answered';
      expect(r).toEqual({ kind: 'http', status: 422, body: null, raw: 'Failed to deserialize the JSON body into the target type' });
      return /^http 422 (\S+):/.exec(h.venue.actionLog().at(-1)?.result ?? '')?.[1];
    };
    expect(await field({ ...b, vaultAddress: SUB })).toBe('vaultAddress');
    expect(await field({ ...b, action: { ...b.action, signatureChainId: '66eee' } })).toBe('action.signatureChainId');
    expect(await field({ ...b, action: { ...b.action, agentAddress: 'nobody' } })).toBe('action.agentAddress');
    expect(await field({ ...b, action: { ...b.action, hyperliquidChain: 'Devnet' } })).toBe('action.hyperliquidChain');
    expect(await field({ ...b, action: { ...b.action, agentName: 5 } })).toBe('action.agentName');
  });
});

describe('per-address action budget', () => {
  it('refuses beyond the budget, then allows one action per 10 s', async () => {
    const h = harness({ addressBudget: { initial: 3, perUsdTraded: 0 } });
    const arm = async () => h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 60_000, nonce: h.nonce() }), 'rest');
    for (let i = 0; i < 3; i++) expect(await arm()).toEqual(OK);
    // Exhausted: one action now, then one per 10 s.
    expect(await arm()).toEqual(OK);
    const text = 'Too many cumulative requests sent (5 > 3) for cumulative volume traded $5000000. Place taker orders to free up 1 request per USDC traded.';
    expect(await arm()).toEqual(err(text));
    await h.clock.advance(9_999);
    expect(await arm()).toEqual(err(text));
    await h.clock.advance(1);
    expect(await arm()).toEqual(OK);
    // Other addresses keep their own budget.
    expect(await h.venue.handleAction(await scheduleCancelBody(OTHER_MASTER, { time: h.clock.nowMs() + 60_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
  });

  it('a budget refusal leaves the nonce unused', async () => {
    const h = harness({ addressBudget: { initial: 0, perUsdTraded: 0 } });
    const n = h.clock.nowMs();
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: n + 60_000, nonce: n }), 'rest')).toEqual(OK);
    const body = await scheduleCancelBody(MASTER, { time: n + 60_000, nonce: n + 1 });
    expect((await h.venue.handleAction(body, 'rest')).kind).toBe('answer');
    expect(h.venue.keptNonces(MASTER.address)).toEqual([n]);
    await h.clock.advance(10_000);
    expect(await h.venue.handleAction(body, 'rest')).toEqual(OK);
  });

  it('grows with volume traded (default: 10 000 plus 1 per USD)', async () => {
    const h = harness({ addressBudget: { initial: 1, perUsdTraded: 1 } });
    h.venue.setTradedVolume(MASTER.address, 1_000_001.9);
    const r = await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 60_000, nonce: h.nonce() }), 'rest');
    expect(r).toEqual(OK);
  });
});

describe('verifySignatures: false', () => {
  it('accepts any well-shaped signature when vaultAddress names the account (no recovery)', async () => {
    const h = harness({ verifySignatures: false });
    const junk = { r: `0x${'1'.repeat(64)}`, s: `0x${'2'.repeat(64)}`, v: 27 };
    const time = h.clock.nowMs() + 10_000;
    const body = { action: { type: 'scheduleCancel', time }, nonce: h.nonce(), signature: junk, vaultAddress: SUB };
    expect(await h.venue.handleAction(body, 'rest')).toEqual(OK);
    expect(h.venue.schedule(SUB)).toEqual({ timeMs: time, triggersToday: 0 });
    expect(h.venue.actionLog().at(-1)).toMatchObject({ account: SUB, signer: MASTER.address, result: 'ok' });
    // A main account named as the vault works too in this mode.
    const mainBody = { action: { type: 'scheduleCancel', time }, nonce: h.nonce(), signature: junk, vaultAddress: OTHER_MASTER.address };
    expect(await h.venue.handleAction(mainBody, 'rest')).toEqual(OK);
    expect(h.venue.schedule(OTHER_MASTER.address).timeMs).toBe(time);
  });

  it('still requires the shape, and still applies the venue rules', async () => {
    const h = harness({ verifySignatures: false });
    const junk = { r: `0x${'1'.repeat(64)}`, s: `0x${'2'.repeat(64)}`, v: 27 };
    const noSig = await h.venue.handleAction({ action: { type: 'scheduleCancel' }, nonce: h.nonce(), vaultAddress: SUB }, 'rest');
    expect(noSig).toMatchObject({ kind: 'http', status: 400 });
    const early = { action: { type: 'scheduleCancel', time: h.clock.nowMs() + 1 }, nonce: h.nonce(), signature: junk, vaultAddress: SUB };
    expect(await h.venue.handleAction(early, 'rest')).toEqual(err('Scheduled cancel time too early, must be at least 5 seconds from now.'));
  });

  it('recovers the signer when no vault names the account (a real client body behaves as verified)', async () => {
    const h = harness({ verifySignatures: false });
    expect(await h.venue.handleAction(await scheduleCancelBody(MASTER, { time: h.clock.nowMs() + 10_000, nonce: h.nonce() }), 'rest')).toEqual(OK);
  });
});

describe('action log', () => {
  it('is bounded by actionLogLimit, newest last', async () => {
    const h = harness({ actionLogLimit: 2 });
    for (let i = 0; i < 3; i++) await h.venue.handleAction({ nope: i }, 'rest');
    await h.venue.handleAction(await scheduleCancelBody(MASTER, { nonce: h.nonce() }), 'exchange');
    expect(h.venue.actionLog()).toEqual([
      { atMs: h.clock.nowMs(), via: 'rest', type: '?', result: 'http 400 action: required' },
      { atMs: h.clock.nowMs(), via: 'exchange', type: 'scheduleCancel', account: MASTER.address, signer: MASTER.address, result: 'ok' },
    ]);
  });
});
