/**
 * The sliding-log rate limiter on its own: exact window edges, retry_after rounding, scopes, per-IP
 * isolation, and run-time reconfiguration.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../time/fake-clock.js';
import { parseBudget, RateLimiter, SCHEDULE_CANCEL_ENDPOINT, UnknownBudgetError, type RateDecision } from './rate-limit.js';

function refused(d: RateDecision): Extract<RateDecision, { ok: false }>['detail'] {
  if (d.ok) throw new Error('expected a refusal');
  return d.detail;
}

describe('RateLimiter', () => {
  it('admits `limit` requests per rolling window and frees a slot exactly when the oldest expires', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, { global: { limit: 3, windowSeconds: 10 } });
    expect(rl.check('1.1.1.1', 'e').ok).toBe(true); // t=0
    await clock.advance(4_000);
    expect(rl.check('1.1.1.1', 'e').ok).toBe(true); // t=4
    expect(rl.check('1.1.1.1', 'e').ok).toBe(true); // t=4
    const d = refused(rl.check('1.1.1.1', 'e'));
    expect(d).toEqual({ type: 'rate_limit', limit: 3, reason: 'global_quota', retry_after_seconds: 6, scope: 'global', window_seconds: 10 });
    await clock.advance(5_999);
    expect(refused(rl.check('1.1.1.1', 'e')).retry_after_seconds).toBe(1);
    await clock.advance(1);
    expect(rl.check('1.1.1.1', 'e').ok).toBe(true); // t=10: the t=0 entry left the window
    // The next two free at t=14.
    expect(refused(rl.check('1.1.1.1', 'e')).retry_after_seconds).toBe(4);
  });

  it('never answers retry_after below 1 and rounds up partial seconds', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, { global: { limit: 1, windowSeconds: 1 } });
    expect(rl.check('ip', 'e').ok).toBe(true);
    await clock.advance(999);
    expect(refused(rl.check('ip', 'e')).retry_after_seconds).toBe(1);
    await clock.advance(1);
    expect(rl.check('ip', 'e').ok).toBe(true);
    await clock.advance(1);
    expect(refused(rl.check('ip', 'e')).retry_after_seconds).toBe(1); // 999 ms away
  });

  it('does not count refused requests', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, { global: { limit: 1, windowSeconds: 5 } });
    expect(rl.check('ip', 'e').ok).toBe(true);
    for (let i = 0; i < 10; i++) {
      await clock.advance(100);
      expect(rl.check('ip', 'e').ok).toBe(false);
    }
    await clock.advance(5_000 - 1_000);
    expect(rl.check('ip', 'e').ok).toBe(true);
  });

  it('keeps endpoint quotas apart and reports the scope that frees last when both are exhausted', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, {
      global: { limit: 3, windowSeconds: 60 },
      endpoints: { a: { limit: 1, windowSeconds: 10 } },
    });
    expect(rl.check('ip', 'a').ok).toBe(true);
    const d1 = refused(rl.check('ip', 'a'));
    expect(d1).toMatchObject({ scope: 'endpoint', reason: 'endpoint_quota', limit: 1, window_seconds: 10, retry_after_seconds: 10 });
    expect(rl.check('ip', 'b').ok).toBe(true);
    expect(rl.check('ip', 'b').ok).toBe(true);
    // Now both a's endpoint quota (frees in 10 s) and the global one (frees in 60 s) are spent.
    const d2 = refused(rl.check('ip', 'a'));
    expect(d2).toMatchObject({ scope: 'global', reason: 'global_quota', retry_after_seconds: 60 });
    await clock.advance(10_000);
    expect(refused(rl.check('ip', 'a')).scope).toBe('global');
    await clock.advance(50_000);
    expect(rl.check('ip', 'a').ok).toBe(true);
  });

  it('counts per client IP', () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, { global: { limit: 1, windowSeconds: 60 } });
    expect(rl.check('10.0.0.1', 'e').ok).toBe(true);
    expect(rl.check('10.0.0.1', 'e').ok).toBe(false);
    expect(rl.check('10.0.0.2', 'e').ok).toBe(true);
  });

  it('has generous defaults: global 1200/60 s, schedule-cancel 600/60 s, other endpoints only global', () => {
    const rl = new RateLimiter(new FakeClock());
    expect(rl.globalSpec()).toEqual({ limit: 1200, windowSeconds: 60 });
    expect(rl.endpointSpec(SCHEDULE_CANCEL_ENDPOINT)).toEqual({ limit: 600, windowSeconds: 60 });
    expect(rl.endpointSpec('GET /v1/health')).toBeUndefined();
    const withDefault = new RateLimiter(new FakeClock(), { defaultEndpoint: { limit: 5, windowSeconds: 1 } });
    expect(withDefault.endpointSpec('GET /v1/health')).toEqual({ limit: 5, windowSeconds: 1 });
  });

  it('applies a lowered limit at once against traffic already admitted, and reset forgets it', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, { global: { limit: 10, windowSeconds: 10 } });
    for (let i = 0; i < 4; i++) {
      expect(rl.check('ip', 'e').ok).toBe(true);
      await clock.advance(1_000);
    }
    rl.configure({ global: { limit: 2, windowSeconds: 10 } });
    // Entries at 0,1,2,3 s; now 4 s. Below the limit once entries 0,1,2 are gone: at 12 s.
    expect(refused(rl.check('ip', 'e')).retry_after_seconds).toBe(8);
    rl.reset();
    expect(rl.check('ip', 'e').ok).toBe(true);
  });

  it('refuses nonsense quotas', () => {
    expect(() => new RateLimiter(new FakeClock(), { global: { limit: 0, windowSeconds: 60 } })).toThrow(RangeError);
    expect(() => new RateLimiter(new FakeClock(), { endpoints: { x: { limit: 1, windowSeconds: 0.5 } } })).toThrow(RangeError);
  });
});

const REST_ARM = SCHEDULE_CANCEL_ENDPOINT;
const EXCHANGE = 'POST /exchange';
const READS = ['GET /v1/accounts/{address}', 'GET /v1/accounts/{address}/orders', 'GET /v1/accounts/{address}/positions', 'GET /v1/health', 'GET /v1/events'];

describe('RateLimiter, one window over every signed action (globalCounts: signed)', () => {
  it('signed_window_100_per_5s: 100 signed actions in 5 s pass, the 101st is refused with the exact retry_after', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, parseBudget('signed_window_100_per_5s'));
    // 100 signed actions spread over [0, 4.95 s]: REST arms and exchange actions alike.
    for (let i = 0; i < 100; i++) {
      expect(rl.check('ip', i % 2 === 0 ? REST_ARM : EXCHANGE, 'signed').ok).toBe(true);
      if (i < 99) await clock.advance(50);
    }
    // t = 4.95 s; the t=0 entry leaves the window at exactly 5 s.
    expect(refused(rl.check('ip', REST_ARM, 'signed'))).toEqual({ type: 'rate_limit', limit: 100, reason: 'global_quota', retry_after_seconds: 1, scope: 'global', window_seconds: 5 });
    expect(refused(rl.check('ip', EXCHANGE, 'signed'))).toMatchObject({ scope: 'global', reason: 'global_quota' });
    await clock.advance(49);
    expect(rl.check('ip', EXCHANGE, 'signed').ok).toBe(false); // t = 4.999 s
    await clock.advance(1);
    expect(rl.check('ip', EXCHANGE, 'signed').ok).toBe(true); // t = 5 s: one slot freed, one taken
    expect(rl.check('ip', EXCHANGE, 'signed').ok).toBe(false);
  });

  it('states retry_after to the second the oldest slot frees, rounded up, after a burst', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, parseBudget('signed_window_100_per_5s'));
    for (let i = 0; i < 100; i++) expect(rl.check('ip', REST_ARM, 'signed').ok).toBe(true); // all at t=0
    await clock.advance(1_200);
    const d = refused(rl.check('ip', EXCHANGE, 'signed'));
    expect(d).toEqual({ type: 'rate_limit', limit: 100, reason: 'global_quota', retry_after_seconds: 4, scope: 'global', window_seconds: 5 });
    await clock.advance(3_799);
    expect(refused(rl.check('ip', EXCHANGE, 'signed')).retry_after_seconds).toBe(1);
    await clock.advance(1); // t = 5 s: the whole burst leaves the window (a client told 4 s at 1.2 s comes at 5.2 s)
    for (let i = 0; i < 100; i++) expect(rl.check('ip', EXCHANGE, 'signed').ok).toBe(true);
    expect(rl.check('ip', REST_ARM, 'signed').ok).toBe(false);
  });

  it('never refuses or counts a read, even with the window full', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, parseBudget('signed_window_100_per_5s'));
    for (let i = 0; i < 1_000; i++) expect(rl.check('ip', READS[i % READS.length] as string, 'read').ok).toBe(true);
    // The reads took nothing from the window: all 100 signed actions still fit.
    for (let i = 0; i < 100; i++) expect(rl.check('ip', REST_ARM, 'signed').ok).toBe(true);
    expect(rl.check('ip', REST_ARM, 'signed').ok).toBe(false);
    for (const r of READS) expect(rl.check('ip', r, 'read').ok).toBe(true);
  });

  it('counts REST arms and exchange approvals together in the one window', () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, parseBudget('signed_window_100_per_5s'));
    for (let i = 0; i < 60; i++) expect(rl.check('ip', REST_ARM, 'signed').ok).toBe(true);
    // approveAgent, approveBuilderFee, exchange scheduleCancel: all POST /exchange.
    for (let i = 0; i < 40; i++) expect(rl.check('ip', EXCHANGE, 'signed').ok).toBe(true);
    expect(refused(rl.check('ip', EXCHANGE, 'signed')).scope).toBe('global');
    expect(refused(rl.check('ip', REST_ARM, 'signed')).scope).toBe('global');
  });

  it('keeps endpoint quotas for reads when configured, and the default counting is unchanged', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, { ...parseBudget('signed_window_100_per_5s'), endpoints: { 'GET /v1/health': { limit: 2, windowSeconds: 10 } } });
    expect(rl.check('ip', 'GET /v1/health', 'read').ok).toBe(true);
    expect(rl.check('ip', 'GET /v1/health', 'read').ok).toBe(true);
    expect(refused(rl.check('ip', 'GET /v1/health', 'read'))).toMatchObject({ scope: 'endpoint', reason: 'endpoint_quota', limit: 2, retry_after_seconds: 10 });
    // globalCounts 'all' (the default): a read spends the global window like anything else.
    const all = new RateLimiter(clock, { global: { limit: 2, windowSeconds: 5 } });
    expect(all.globalCounting()).toBe('all');
    expect(all.check('ip', 'GET /v1/health', 'read').ok).toBe(true);
    expect(all.check('ip', EXCHANGE, 'signed').ok).toBe(true);
    expect(refused(all.check('ip', 'GET /v1/health', 'read')).scope).toBe('global');
  });

  it('parses budgets by name, and refuses unknown ones', () => {
    expect(parseBudget('ip_window')).toEqual({});
    expect(parseBudget('signed_window_100_per_5s')).toEqual({ globalCounts: 'signed', global: { limit: 100, windowSeconds: 5 }, scheduleCancel: null });
    expect(parseBudget('signed_window_10_per_10s')).toMatchObject({ global: { limit: 10, windowSeconds: 10 } });
    expect(() => parseBudget('lavish')).toThrow(UnknownBudgetError);
    expect(() => parseBudget('signed_window_0_per_5s')).toThrow(RangeError);
    // scheduleCancel: null drops the endpoint's own quota; the REST arms spend the window only.
    const rl = new RateLimiter(new FakeClock(), parseBudget('signed_window_100_per_5s'));
    expect(rl.endpointSpec(SCHEDULE_CANCEL_ENDPOINT)).toBeUndefined();
    expect(rl.describe()).toEqual({ global: { limit: 100, windowSeconds: 5 }, globalCounts: 'signed', endpoints: {} });
    expect(() => new RateLimiter(new FakeClock(), { globalCounts: 'some' as 'all' })).toThrow(RangeError);
  });
});

describe('RateLimiter, the venue host by weight (globalCounts: weight)', () => {
  it('ip_weight_1200_per_60s: admits while the weight in the window plus its own stays within the limit; retry_after to when enough frees', async () => {
    const clock = new FakeClock();
    const rl = new RateLimiter(clock, parseBudget('ip_weight_1200_per_60s'));
    expect(rl.describe()).toEqual({ global: { limit: 1200, windowSeconds: 60 }, globalCounts: 'weight', endpoints: {} });
    for (let i = 0; i < 10; i++) expect(rl.check('ip', 'POST /info', 'read', 60).ok).toBe(true); // t=0: 600
    await clock.advance(10_000);
    for (let i = 0; i < 29; i++) expect(rl.check('ip', 'POST /info', 'read', 20).ok).toBe(true); // t=10: 1180
    expect(rl.check('ip', 'POST /info', 'read', 20).ok).toBe(true); // 1200: the boundary
    expect(rl.globalUsed('ip')).toBe(1200);
    // One more weight-1 action: it waits for the t=0 entries (60 s after t=0, 50 s from now).
    expect(refused(rl.check('ip', 'POST /exchange', 'signed', 1))).toEqual({
      type: 'rate_limit',
      limit: 1200,
      reason: 'global_quota',
      retry_after_seconds: 50,
      scope: 'global',
      window_seconds: 60,
    });
    // The service's REST routes carry no weight: neither counted nor refused.
    expect(rl.check('ip', 'GET /v1/accounts/{address}', 'read').ok).toBe(true);
    expect(rl.check('ip', 'POST /v1/trading/orders/schedule-cancel', 'signed').ok).toBe(true);
    expect(rl.globalUsed('ip')).toBe(1200);
    await clock.advance(49_999);
    expect(rl.check('ip', 'POST /exchange', 'signed', 1).ok).toBe(false);
    await clock.advance(1);
    expect(rl.globalUsed('ip')).toBe(600);
    expect(rl.check('ip', 'POST /info', 'read', 600).ok).toBe(true);
    expect(rl.check('ip', 'POST /exchange', 'signed', 1).ok).toBe(false);
    // A request heavier than the whole limit never fits.
    expect(refused(new RateLimiter(clock, parseBudget('ip_weight_10_per_1s')).check('ip', 'POST /info', 'read', 11)).retry_after_seconds).toBe(1);
  });

  it('parses ip_weight budgets by name and refuses malformed ones', () => {
    expect(parseBudget('ip_weight_300_per_10s')).toEqual({ globalCounts: 'weight', global: { limit: 300, windowSeconds: 10 }, scheduleCancel: null });
    expect(() => parseBudget('ip_weight_0_per_10s')).toThrow(RangeError);
    expect(() => parseBudget('ip_weight_1200')).toThrow(UnknownBudgetError);
  });
});
