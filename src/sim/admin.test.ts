/** The admin API's loopback check, unit-tested (over a socket every peer is loopback). */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { adminHandler, isLoopbackAddress } from './admin.js';
import { FaultControl } from './faults.js';
import { RateLimiter } from './rate-limit.js';
import type { VenueStateApi } from './types.js';

describe('isLoopbackAddress', () => {
  it('accepts 127.0.0.0/8, ::1 and their IPv4-mapped forms', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) expect(isLoopbackAddress(a)).toBe(true);
  });
  it('refuses everything else', () => {
    for (const a of [undefined, '', '10.0.0.1', '192.168.1.1', '::ffff:10.0.0.1', '128.0.0.1', '127.0.0.256', '127.0.0.1.5', 'fe80::1', '::', '0.0.0.0', 'localhost']) {
      expect(isLoopbackAddress(a)).toBe(false);
    }
  });
});

describe('adminHandler', () => {
  it('answers 403 to a non-loopback peer before touching anything', async () => {
    const clock = new FakeClock();
    const faults = new FaultControl(clock);
    // A state that throws on any use proves the refusal comes first.
    const state = new Proxy({} as VenueStateApi, {
      get: () => {
        throw new Error('state touched');
      },
    });
    const handle = adminHandler({ state, faults, rateLimiter: new RateLimiter(clock), clock });
    const req = (remoteAddress: string, method = 'DELETE', path = '/_sim/faults') => ({
      method,
      path,
      query: new URLSearchParams(),
      headers: {},
      body: undefined,
      nowMs: clock.nowMs(),
      remoteAddress,
    });
    faults.setWsSilent(true);
    const r = await handle(req('10.1.2.3'));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED' } });
    expect(faults.wsSilent()).toBe(true); // not reset
    const ok = await handle(req('::ffff:127.0.0.1'));
    expect(ok.status).toBe(200);
    expect(faults.wsSilent()).toBe(false);
  });
});
