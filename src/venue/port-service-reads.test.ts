import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { RequestScheduler } from '../budget/scheduler.js';
import { VenueClock } from '../time/venue-clock.js';
import type { HttpRequest, HttpResponse, HttpTransport } from './http.js';
import { VenuePort } from './port.js';
import { REST_PROBE_EVERY_MS } from './routes.js';

/**
 * The service's listings as one route for every account's reads (`watch.source:
 * service_then_venue`): after a failed read, one read per REST_PROBE_EVERY_MS is let ask the
 * service; a read that gets through reopens it for all.
 */
const USER = '0x' + '1'.repeat(40);
const STATUS: Record<number, string> = { 404: 'NOT_FOUND', 503: 'UNAVAILABLE' };

function setup() {
  const clock = new FakeClock(1_700_000_000_000);
  const scheduler = new RequestScheduler(clock, { global: { limit: 1_200, windowMs: 60_000 }, exchange: { limit: 1_200, windowMs: 60_000 } });
  const state = { status: 503 };
  const sent: HttpRequest[] = [];
  const transport = {
    request: async (req: HttpRequest): Promise<HttpResponse> => {
      sent.push(req);
      const now = clock.monoMs();
      const json = state.status === 200 ? { data: [{ order_id: 'o1' }] } : { error: { code: state.status, status: STATUS[state.status], message: 'no' } };
      const date = new Date(clock.nowMs()).toUTCString();
      return { status: state.status, headers: { date, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(json)), dateHeader: date, latencyMs: 0, sentMonoMs: now, recvMonoMs: now } as HttpResponse;
    },
  } as unknown as HttpTransport;
  const port = new VenuePort({ baseUrl: 'http://service.invalid', exchangeUrl: 'http://venue.invalid', transport, scheduler, venueClock: new VenueClock(clock), clock });
  /** One read to its end, the clock moving meanwhile (the port's admission and retries wait on it). */
  const readOrders = async (): Promise<{ result: string }> => {
    let result: string | undefined;
    void (async () => {
      try {
        for await (const page of port.ordersPages(USER)) void page;
        result = 'ok';
      } catch (e) {
        result = (e as { reason?: string }).reason ?? 'error';
      }
    })();
    while (result === undefined) await clock.advance(10);
    return { result };
  };
  return { clock, state, sent, port, readOrders };
}

describe('VenuePort.serviceReadTurn: one probe of a failing service for every read', () => {
  it('open while the service answers; after a 503, closed but for one probe every 10 s; open again once a probe gets through', async () => {
    const { clock, state, port, readOrders } = setup();
    expect([port.serviceReadTurn(), port.serviceReadTurn()]).toEqual([true, true]);
    expect((await readOrders()).result).toBe('unavailable');
    // failing: every other read goes to the venue
    expect([port.serviceReadTurn(), port.serviceReadTurn()]).toEqual([false, false]);
    await clock.advance(REST_PROBE_EVERY_MS - 20);
    expect(port.serviceReadTurn()).toBe(false);
    await clock.advance(20);
    // the probe, and only one
    expect([port.serviceReadTurn(), port.serviceReadTurn()]).toEqual([true, false]);
    expect((await readOrders()).result).toBe('unavailable');
    expect(port.serviceReadTurn()).toBe(false);
    await clock.advance(REST_PROBE_EVERY_MS);
    expect([port.serviceReadTurn(), port.serviceReadTurn()]).toEqual([true, false]);
    state.status = 200;
    expect((await readOrders()).result).toBe('ok');
    expect([port.serviceReadTurn(), port.serviceReadTurn()]).toEqual([true, true]);
  });

  it('a refused request (404) is about the account, not the service: the route stays open', async () => {
    const { state, port, readOrders } = setup();
    state.status = 404;
    expect((await readOrders()).result).toBe('not_found');
    expect(port.serviceReadTurn()).toBe(true);
  });

  it('no service configured: never its turn', () => {
    const clock = new FakeClock(1_700_000_000_000);
    const scheduler = new RequestScheduler(clock, { global: { limit: 1_200, windowMs: 60_000 } });
    const port = new VenuePort({ exchangeUrl: 'http://venue.invalid', transport: {} as HttpTransport, scheduler, venueClock: new VenueClock(clock), clock });
    expect(port.serviceReadTurn()).toBe(false);
  });
});
