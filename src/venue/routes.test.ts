import { describe, expect, it } from 'vitest';
import { ActionError, RestError, TransportError } from './errors.js';
import { REST_PROBE_EVERY_MS, RouteHealth, restRouteFailed } from './routes.js';

const E = 'POST /v1/trading/orders/schedule-cancel';
const rest = (status: number) => new RestError(E, status, { code: status, status: 'UNAVAILABLE', message: 'x', details: [] } as never);

describe('restRouteFailed: what says the route fails, so the port sends the next arms by the exchange endpoint', () => {
  it.each([
    ['503', rest(503), false, true],
    ['500', rest(500), false, true],
    ['a timeout', new TransportError(E, 'timeout', 'timed out'), false, true],
    ['a refused connection', new TransportError(E, 'network', 'ECONNREFUSED'), false, true],
    ['no service configured', Object.assign(new Error('no REST service'), { reason: 'no_service' }), false, true],
    ['429: the scheduler holds the route its retry_after', rest(429), false, false],
    ['400: our request, not the route', rest(400), false, false],
    ['404', rest(404), false, false],
    ['an action the venue refused', new ActionError(E, 'invalid_nonce', 'Invalid nonce'), false, false],
    ['cancelled by us', new TransportError(E, 'aborted', 'aborted'), false, false],
    ['anything, when our signal aborted it', rest(503), true, false],
    ['shed by our budget', Object.assign(new Error('shed'), { reason: 'shed' }), false, false],
  ])('%s: %s', (_, e, aborted, want) => {
    expect(restRouteFailed(e, aborted)).toBe(want);
  });
});

describe('RouteHealth: one probe at a time while the route fails', () => {
  it('a working route is taken by every arm', () => {
    const p = new RouteHealth();
    for (let t = 0; t < 5; t++) expect(p.take(t)).toBe(true);
    p.failed(10);
    p.ok(11); // a later success: still working
    expect(p.take(12)).toBe(true);
  });

  it('after a failure: refused until REST_PROBE_EVERY_MS later, then one arm probes, the next waits again', () => {
    const p = new RouteHealth();
    p.failed(1_000);
    expect(p.take(1_001)).toBe(false);
    expect(p.take(1_000 + REST_PROBE_EVERY_MS - 1)).toBe(false);
    expect(p.take(1_000 + REST_PROBE_EVERY_MS)).toBe(true); // the probe
    expect(p.take(1_000 + REST_PROBE_EVERY_MS + 1)).toBe(false); // its answer not in yet
    p.failed(1_000 + REST_PROBE_EVERY_MS + 50); // the probe failed
    expect(p.take(1_000 + 2 * REST_PROBE_EVERY_MS + 49)).toBe(false);
    expect(p.take(1_000 + 2 * REST_PROBE_EVERY_MS + 50)).toBe(true);
  });

  it('a probe that gets through reopens the route for all', () => {
    const p = new RouteHealth();
    p.failed(0);
    expect(p.take(REST_PROBE_EVERY_MS)).toBe(true);
    p.ok(REST_PROBE_EVERY_MS + 30);
    expect(p.failing()).toBe(false);
    expect(p.take(REST_PROBE_EVERY_MS + 31)).toBe(true);
    expect(p.take(REST_PROBE_EVERY_MS + 32)).toBe(true);
  });

  it('a probe that hangs past the interval lets the next one go', () => {
    const p = new RouteHealth();
    p.failed(0);
    expect(p.take(REST_PROBE_EVERY_MS)).toBe(true);
    expect(p.take(2 * REST_PROBE_EVERY_MS)).toBe(true);
  });
});

describe('RouteHealth.track: one request on the route, its outcome recorded when it ends', () => {
  it('a success is the route working, a 503 the route failing, a 429 neither; the result and the error pass through', async () => {
    const probe = new RouteHealth();
    let now = 1_000;
    const clock = () => now;
    await expect(probe.track(async () => 'ok', clock, undefined)).resolves.toBe('ok');
    expect(probe.failing()).toBe(false);
    now = 2_000;
    const down = rest(503);
    await expect(probe.track(async () => Promise.reject(down), clock, undefined)).rejects.toBe(down);
    expect(probe.failing()).toBe(true);
    now = 3_000;
    await expect(probe.track(async () => Promise.reject(rest(429)), clock, undefined)).rejects.toBeInstanceOf(RestError);
    // Still failing since the 503, and the 429 did not move it: the probe is due 10 s after the 503.
    expect(probe.failing()).toBe(true);
    expect(probe.take(2_000 + REST_PROBE_EVERY_MS - 1)).toBe(false);
    expect(probe.take(2_000 + REST_PROBE_EVERY_MS)).toBe(true);
    const aborted = new AbortController();
    aborted.abort();
    await expect(probe.track(async () => 'late', clock, aborted.signal)).resolves.toBe('late');
    expect(probe.failing()).toBe(false);
  });
});
