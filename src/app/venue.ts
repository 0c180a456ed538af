import { monotonicView, type Clock } from '../sched/clock.js';
import { RequestScheduler, type RequestClass } from '../sched/scheduler.js';
import { VenueClock } from '../sched/venue-clock.js';
import { VENUE_FACTS } from '../venue/facts.js';
import type { HttpTransport } from '../venue/http.js';
import { VenuePort } from '../venue/port.js';
import type { AppConfig } from './app.js';

/**
 * The venue side of the composition, built the same way for the daemon and for `disarm`: the
 * venue clock, the shared request budget (on the monotonic clock, so a wall-clock step neither
 * frees nor blocks a window) and the port every request goes through.
 */
export function buildVenue(args: {
  config: Pick<AppConfig, 'rateLimits'>;
  urls: { baseUrl: string; exchangeUrl: string };
  transport: HttpTransport;
  clock: Clock;
  onThrottled?: (kind: RequestClass) => void;
}): { venueClock: VenueClock; scheduler: RequestScheduler; port: VenuePort } {
  const { rateLimits } = args.config;
  const venueClock = new VenueClock(args.clock);
  const scheduler = new RequestScheduler(
    monotonicView(args.clock),
    {
      global: { limit: rateLimits.global.requests, windowMs: rateLimits.global.perSeconds * 1000 },
      schedule_cancel: { limit: rateLimits.scheduleCancel.requests, windowMs: rateLimits.scheduleCancel.perSeconds * 1000 },
      exchange: { limit: VENUE_FACTS.ipWeightPerMinute, windowMs: 60_000 },
    },
    args.onThrottled ? { onThrottled: args.onThrottled } : {},
  );
  const port = new VenuePort({ ...args.urls, transport: args.transport, scheduler, venueClock, clock: args.clock });
  return { venueClock, scheduler, port };
}
