/**
 * The sliding-log rate limiter on its own: exact window edges, retry_after rounding, scopes, per-IP
 * isolation, and run-time reconfiguration.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../sched/fake-clock.js';
import { RateLimiter, SCHEDULE_CANCEL_ENDPOINT, type RateDecision } from './rate-limit.js';

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
