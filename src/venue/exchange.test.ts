import { describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { buildApproveAgent, buildApproveBuilderFee, buildScheduleCancel } from './actions.js';
import { ACTION_REASONS, ActionError, DecodeError, RestError, TransportError } from './errors.js';
import { ExchangeClient } from './exchange.js';
import { HttpTransport, type ResponseObservation } from './http.js';
import { FakeClock } from '../time/fake-clock.js';
import { signerFromPrivateKey } from './signing/signer.js';

const ORIGIN = 'http://exchange.test';
const master = signerFromPrivateKey('0x0123456789012345678901234567890123456789012345678901234567890123');
const agentSigner = signerFromPrivateKey('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

function harness(clock?: FakeClock) {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  const seen: ResponseObservation[] = [];
  const transport = new HttpTransport({ requestTimeoutMs: 3_000, dispatcher: agent, onResponse: (o) => seen.push(o), ...(clock ? { clock } : {}) });
  const exchange = new ExchangeClient({ exchangeUrl: `${ORIGIN}/`, transport });
  const reply = (status: number, body: unknown, delayMs = 0): void => {
    const scope = agent
      .get(ORIGIN)
      .intercept({ path: '/exchange', method: 'POST' })
      .reply(status, typeof body === 'string' ? body : JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
    if (delayMs) scope.delay(delayMs);
  };
  return { agent, exchange, seen, reply };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const arm = () => buildScheduleCancel({ signer: agentSigner, network: 'testnet', nonce: 1767268800000, timeMs: 1767268830000 });

describe('ExchangeClient.post', () => {
  it('posts to {exchange_url}/exchange with time bare; ok -> the answer', async () => {
    const h = harness();
    h.reply(200, { status: 'ok', response: { type: 'default' } });
    const res = await h.exchange.post(await arm());
    expect(res).toEqual({ status: 'ok', response: { type: 'default' } });
    const call = h.agent.getCallHistory()?.lastCall();
    expect(call?.fullUrl).toBe(`${ORIGIN}/exchange`);
    expect(call?.method).toBe('POST');
    expect(String(call?.body)).toContain('"action":{"type":"scheduleCancel","time":1767268830000},"nonce":1767268800000');
    expect(h.seen).toMatchObject([{ endpoint: 'exchange:scheduleCancel', method: 'POST', status: 200 }]);
  });

  it('labels each action kind by its type', async () => {
    const h = harness();
    h.reply(200, { status: 'ok' });
    h.reply(200, { status: 'ok' });
    await h.exchange.post(await buildApproveAgent({ signer: master, network: 'testnet', nonce: 1, agentAddress: agentSigner.address, agentName: 'dms-keeper' }));
    await h.exchange.post(await buildApproveBuilderFee({ signer: master, network: 'testnet', nonce: 2, builder: agentSigner.address, maxFeeRate: '0.001%' }));
    expect(h.seen.map((o) => o.endpoint)).toEqual(['exchange:approveAgent', 'exchange:approveBuilderFee']);
    const bodies = (h.agent.getCallHistory()?.calls() ?? []).map((c) => JSON.parse(String(c.body)) as { action: { type: string; hyperliquidChain: string } });
    expect(bodies.map((b) => [b.action.type, b.action.hyperliquidChain])).toEqual([
      ['approveAgent', 'Testnet'],
      ['approveBuilderFee', 'Testnet'],
    ]);
  });

  it.each([
    ['Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $999999.99.', 'ineligible'],
    ['User or API Wallet 0x1111111111111111111111111111111111111111 does not exist.', 'unknown_signer'],
    ['Must deposit before performing actions. User: 0xabc', 'unfunded'],
    ['Invalid nonce: duplicate nonce', 'invalid_nonce'],
    ['Too many cumulative requests sent (10001 > 10000) for cumulative volume traded $5.', 'address_budget'],
    ['User has pending agent removal', 'pending_agent_removal'],
    ['Action already expired', 'expired'],
    ['Something else entirely', 'other'],
  ] as const)('HTTP 200 status err %j -> ActionError %s, never success', async (text, reason) => {
    const h = harness();
    h.reply(200, { status: 'err', response: text });
    let resolved: unknown;
    let caught: unknown;
    try {
      resolved = await h.exchange.post(await arm());
    } catch (e) {
      caught = e;
    }
    expect(resolved).toBeUndefined();
    expect(caught).toBeInstanceOf(ActionError);
    expect(ACTION_REASONS).toContain((caught as ActionError).reason);
    expect(caught).toMatchObject({ reason, venueMessage: text, endpoint: 'exchange:scheduleCancel' });
    // the observer saw a complete HTTP 200: the refusal is the decoder's finding
    expect(h.seen.map((o) => o.status)).toEqual([200]);
  });

  it.each([[{ status: 'unknown', response: 'x' }], [{}], [[]], ['"ok"']])('any other body -> DecodeError: %j', async (body) => {
    const h = harness();
    h.reply(200, body);
    const e = await rejection(h.exchange.post(await arm()));
    expect(e).toBeInstanceOf(DecodeError);
    expect((e as DecodeError).reason).toBe('bad_shape');
  });

  it('200 with a non-JSON body -> not_json', async () => {
    const h = harness();
    h.reply(200, 'Failed to deserialize the JSON body');
    expect(await rejection(h.exchange.post(await arm()))).toMatchObject({ reason: 'not_json' });
  });

  it('non-2xx with the envelope -> RestError', async () => {
    const h = harness();
    h.reply(500, { error: { code: 500, status: 'INTERNAL', message: 'boom', details: [] } });
    const e = await rejection(h.exchange.post(await arm()));
    expect(e).toBeInstanceOf(RestError);
    expect(e).toMatchObject({ reason: 'server', httpStatus: 500, endpoint: 'exchange:scheduleCancel' });
  });

  it('non-2xx without the envelope -> DecodeError bad_status carrying the status', async () => {
    const h = harness();
    h.reply(422, 'Failed to deserialize the JSON body into the target type');
    const e = await rejection(h.exchange.post(await arm()));
    expect(e).toBeInstanceOf(DecodeError);
    expect(e).toMatchObject({ reason: 'bad_status', httpStatus: 422 });
    expect((e as Error).message).not.toContain('deserialize');
  });

  it('a non-2xx that looks like an ok answer is still not a success', async () => {
    const h = harness();
    h.reply(502, { status: 'ok', response: { type: 'default' } });
    expect(await rejection(h.exchange.post(await arm()))).toMatchObject({ reason: 'bad_status', httpStatus: 502 });
  });

  it('timeout and abort -> TransportError', async () => {
    const clock = new FakeClock();
    const h = harness(clock);
    h.reply(200, { status: 'ok' }, 60_000);
    const p = rejection(h.exchange.post(await arm()));
    await clock.advance(3_000);
    expect(await p).toMatchObject({ code: 'VENUE_TRANSPORT_ERROR', reason: 'timeout' });

    const e = await rejection(h.exchange.post(await arm(), { signal: AbortSignal.abort() }));
    expect(e).toBeInstanceOf(TransportError);
    expect((e as TransportError).reason).toBe('aborted');
  });

  it('no error message carries the signature or the body', async () => {
    const h = harness();
    h.reply(400, '<html>bad request</html>');
    const body = await arm();
    const e = (await rejection(h.exchange.post(body))) as Error;
    expect(e.message).not.toContain(body.signature.r.slice(2, 20));
    expect(e.message).not.toContain('1767268830000');
  });
});
