import { describe, expect, it } from 'vitest';
import { parse, minimal } from '../config/test-support.js';
import { systemClock } from '../time/clock.js';
import type { HttpTransport } from '../venue/http.js';
import { SCOPES } from '../venue/port.js';
import { toAppConfig } from './from-config.js';
import { buildVenue } from './venue.js';

/** The scheduler's specs, built from a YAML config the way the daemon builds them. */
async function specsOf(extra: string): Promise<Record<string, { limit: number; windowMs: number } | undefined>> {
  const app = toAppConfig(await parse(minimal(extra)), {});
  // No request is sent here: the transport is never called.
  const { scheduler } = buildVenue({ config: app, urls: app.venue, transport: {} as HttpTransport, clock: systemClock() });
  return Object.fromEntries([SCOPES.global, SCOPES.scheduleCancel, SCOPES.exchange].map((k) => [k, scheduler.specOf(k)]));
}

describe('buildVenue: the request budget comes from rate_limits', () => {
  it("defaults: the exchange scope is the venue's 1200 per minute", async () => {
    expect(await specsOf('')).toEqual({
      global: { limit: 1200, windowMs: 60_000 },
      schedule_cancel: { limit: 600, windowMs: 60_000 },
      exchange: { limit: 1200, windowMs: 60_000 },
    });
  });

  it('rate_limits.exchange sets the exchange scope (approvals and exchange-path arms), and only it', async () => {
    const specs = await specsOf('rate_limits:\n  exchange: { requests: 2400, per_seconds: 30 }\n  schedule_cancel: { requests: 700 }');
    expect(specs.exchange).toEqual({ limit: 2400, windowMs: 30_000 });
    expect(specs.schedule_cancel).toEqual({ limit: 700, windowMs: 60_000 });
    expect(specs.global).toEqual({ limit: 1200, windowMs: 60_000 });
  });
});
