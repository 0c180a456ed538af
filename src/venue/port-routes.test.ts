import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { RequestScheduler } from '../budget/scheduler.js';
import { VenueClock } from '../time/venue-clock.js';
import { buildScheduleCancel } from './actions.js';
import type { HttpRequest, HttpResponse, HttpTransport } from './http.js';
import { VenuePort } from './port.js';
import { REST_PROBE_EVERY_MS, type ArmRoute } from './routes.js';
import { signerFromPrivateKey } from './signing/signer.js';

/**
 * REST's health is the port's alone: the switch names the plan's route (REST) on every arm of a
 * `rest_then_exchange` account, and the port sends it by the exchange endpoint while REST fails,
 * but for one probe of the whole keeper every REST_PROBE_EVERY_MS.
 */
const agent = signerFromPrivateKey('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

function setup() {
  const clock = new FakeClock(1_700_000_000_000);
  const scheduler = new RequestScheduler(clock, {
    global: { limit: 1_200, windowMs: 60_000 },
    schedule_cancel: { limit: 600, windowMs: 60_000 },
    exchange: { limit: 1_200, windowMs: 60_000 },
  });
  const state = { restStatus: 503 };
  const sent: ArmRoute[] = [];
  const transport = {
    request: async (req: HttpRequest): Promise<HttpResponse> => {
      const route: ArmRoute = req.url.startsWith('http://service.invalid') ? 'rest' : 'exchange';
      sent.push(route);
      const status = route === 'rest' ? state.restStatus : 200;
      const json = status === 200 ? { status: 'ok', response: { type: 'default' } } : { error: { code: status, status: 'UNAVAILABLE', message: 'down' } };
      const now = clock.monoMs();
      const date = new Date(clock.nowMs()).toUTCString();
      return { status, headers: { date, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(json)), dateHeader: date, latencyMs: 0, sentMonoMs: now, recvMonoMs: now } as HttpResponse;
    },
  } as unknown as HttpTransport;
  const port = new VenuePort({ baseUrl: 'http://service.invalid', exchangeUrl: 'http://venue.invalid', transport, scheduler, venueClock: new VenueClock(clock), clock });
  let nonce = 1_767_268_800_000;
  /** One arm named REST with the exchange endpoint as its alternative, to its end: the route it went by and how. */
  const arm = async (timeMs: number | undefined = clock.nowMs() + 60_000): Promise<{ route: ArmRoute; result: string }> => {
    let route: ArmRoute = 'rest';
    let result: string | undefined;
    void port
      .scheduleCancel('rest', () => buildScheduleCancel({ signer: agent, network: 'testnet', nonce: nonce++, timeMs }), {
        signer: agent.address,
        // The account's reading as it queues the arm; it must leave REST within 30 s of it.
        alternative: { route: 'exchange', leaveByVenueMs: clock.nowMs() + 30_000 },
        queuedAt: { venueMs: clock.nowMs(), monoMs: clock.monoMs() },
        onRoute: (r) => (route = r),
      })
      .then(
        () => (result = 'ok'),
        (e: unknown) => (result = (e as { reason?: string }).reason ?? 'error'),
      );
    while (result === undefined) await clock.advance(10);
    return { route, result };
  };
  return { clock, state, sent, arm, port };
}

describe('VenuePort.scheduleCancel: the one place a rest_then_exchange arm leaves its planned route', () => {
  it('an arm whose signal was aborted before the call is sent by no route, with or without an alternative', async () => {
    const { state, sent, port } = setup();
    state.restStatus = 200;
    const aborted = AbortSignal.abort(new Error('account removed'));
    const build = () => buildScheduleCancel({ signer: agent, network: 'testnet', nonce: 1_767_268_800_000, timeMs: 1_700_000_060_000 });
    await expect(port.scheduleCancel('rest', build, { signer: agent.address, signal: aborted })).rejects.toThrow('account removed');
    await expect(port.scheduleCancel('rest', build, { signer: agent.address, signal: aborted, alternative: { route: 'exchange', leaveByVenueMs: Number.MAX_SAFE_INTEGER } })).rejects.toThrow('account removed');
    expect(sent).toEqual([]);
  });

  it('after a REST failure the next arm (the failed one\'s retry) goes by the exchange endpoint; one probe of REST per 10 s; a probe that gets through reopens REST', async () => {
    const { clock, state, arm } = setup();
    expect(await arm()).toEqual({ route: 'rest', result: 'unavailable' });
    // the retry, at once: by the exchange endpoint, and so is every arm until the probe is due
    expect(await arm()).toEqual({ route: 'exchange', result: 'ok' });
    expect(await arm()).toEqual({ route: 'exchange', result: 'ok' });
    await clock.advance(REST_PROBE_EVERY_MS);
    expect(await arm()).toEqual({ route: 'rest', result: 'unavailable' }); // the probe
    expect(await arm()).toEqual({ route: 'exchange', result: 'ok' });
    state.restStatus = 200;
    await clock.advance(REST_PROBE_EVERY_MS);
    expect(await arm()).toEqual({ route: 'rest', result: 'ok' }); // the probe gets through
    expect(await arm()).toEqual({ route: 'rest', result: 'ok' });
  });

  it('a clear follows REST\'s health the same way', async () => {
    const { sent, arm } = setup();
    expect((await arm()).route).toBe('rest');
    expect(await arm(undefined)).toEqual({ route: 'exchange', result: 'ok' });
    expect(sent).toEqual(['rest', 'exchange']);
  });
});
