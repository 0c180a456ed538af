import { monotonicView, type Clock } from '../time/clock.js';
import type { RequestKind, RequestQueue } from '../budget/request-class.js';
import { RequestScheduler } from '../budget/scheduler.js';
import { VenueClock } from '../time/venue-clock.js';
import type { HttpTransport } from '../venue/http.js';
import { VenuePort } from '../venue/port.js';
import { SharedBudget } from '../budget/shared-budget.js';
import type { BudgetMode } from '../budget/shared-share.js';
import { connectSharedRedis } from './shared-redis.js';
import type { AppConfig } from './app-config.js';

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
  onThrottled?: (queue: RequestQueue) => void;
  /** More scopes of the one budget: each CLOB venue's (`clob:<name>`, clob-venues.ts), counted apart from this venue's. */
  extraScopes?: Readonly<Record<string, { limit: number; windowMs: number }>>;
  /** `rate_limits.shared`, its password already read; absent: this instance's budget only. */
  shared?: {
    redisUrl: string;
    name: string;
    fallbackShare: number;
    password?: string;
    onModeChange?: (mode: BudgetMode, reason: string) => void;
    onMiss?: (miss: 'bypass' | 'shed', cls: RequestKind) => void;
  };
}): { venueClock: VenueClock; scheduler: RequestScheduler; port: VenuePort; shared?: SharedBudget } {
  const { rateLimits } = args.config;
  const venueClock = new VenueClock(args.clock);
  const scheduler = new RequestScheduler(
    monotonicView(args.clock),
    {
      global: { limit: rateLimits.global.requests, windowMs: rateLimits.global.perSeconds * 1000 },
      schedule_cancel: { limit: rateLimits.scheduleCancel.requests, windowMs: rateLimits.scheduleCancel.perSeconds * 1000 },
      exchange: { limit: rateLimits.exchange.requests, windowMs: rateLimits.exchange.perSeconds * 1000 },
      ...args.extraScopes,
    },
    args.onThrottled ? { onThrottled: args.onThrottled } : {},
  );
  const s = args.shared;
  const shared = s
    ? new SharedBudget({
        ...connectSharedRedis(s.redisUrl, s.password),
        clock: args.clock,
        name: s.name,
        fallbackShare: s.fallbackShare,
        specs: Object.fromEntries(['global', 'schedule_cancel', 'exchange'].map((k) => [k, scheduler.specOf(k)!])),
        setLocalSpec: (scope, spec) => scheduler.setLimit(scope, spec),
        ...(s.onModeChange ? { onModeChange: s.onModeChange } : {}),
        ...(s.onMiss ? { onMiss: s.onMiss } : {}),
      })
    : undefined;
  const port = new VenuePort({ ...args.urls, transport: args.transport, scheduler, venueClock, clock: args.clock, ...(rateLimits.infoWeights ? { infoWeights: rateLimits.infoWeights } : {}), ...(shared ? { shared } : {}) });
  return { venueClock, scheduler, port, ...(shared ? { shared } : {}) };
}
