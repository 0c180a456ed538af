import { describe, expect, it } from 'vitest';
import { sleep, type Clock } from '../time/clock.js';
import { FakeClock } from '../time/fake-clock.js';
import { VenueClock } from '../time/venue-clock.js';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';
import { ActionError, DecodeError, RestError } from '../venue/errors.js';
import { REST_PROBE_EVERY_MS, RouteHealth, type ArmRoute } from '../venue/routes.js';
import { AccountRunner, toFailure, type RunnerReport, type ScheduleCancelSender } from './account-runner.js';
import type { SwitchSettings } from './switch-machine.js';

const settings: SwitchSettings = {
  venue: HYPERLIQUID_SWITCH_FACTS,
  deadlineMs: 60_000,
  rearmEveryMs: 15_000,
  minHorizonMs: 20_000,
  armWhen: 'always',
  onShutdown: 'keep',
  path: 'rest',
};

type Fault = (nowMs: number, route: ArmRoute) => Error | undefined;

/**
 * A fake venue that records what it accepted and can fail on a timeline. Like the port, it keeps
 * REST's health (a RouteHealth) and sends an arm with an alternative the other way while REST fails.
 */
function fakeVenue(clock: FakeClock, fault: Fault = () => undefined) {
  const accepted: Array<{ atMs: number; timeMs?: number; route: ArmRoute }> = [];
  const attempts: Array<{ atMs: number; route: ArmRoute }> = [];
  const restRoute = new RouteHealth();
  const sender: ScheduleCancelSender = {
    async send({ route: planned, timeMs, alternative, onRoute }) {
      const now = clock.nowMs();
      const route = alternative && planned === 'rest' && !restRoute.take(clock.monoMs()) ? alternative.route : planned;
      onRoute?.(route);
      const time = timeMs();
      attempts.push({ atMs: now, route });
      const go = async (): Promise<void> => {
        const e = fault(now, route);
        if (e) throw e;
        accepted.push({ atMs: now, timeMs: time, route });
      };
      await (route === 'rest' ? restRoute.track(go, () => clock.monoMs(), undefined) : go());
    },
  };
  /** The venue's view: the schedule in force at time t. */
  const deadlineAt = (t: number): number | undefined => {
    let d: number | undefined;
    for (const a of accepted) if (a.atMs <= t) d = a.timeMs;
    return d;
  };
  return { sender, accepted, attempts, deadlineAt };
}

function rateLimited(retryAfterSeconds: number): RestError {
  return new RestError('POST /v1/trading/orders/schedule-cancel', 429, {
    code: 429,
    status: 'RESOURCE_EXHAUSTED',
    message: 'quota',
    details: [{ type: 'rate_limit', limit: 600, reason: 'endpoint_quota', retry_after_seconds: retryAfterSeconds, scope: 'endpoint', window_seconds: 60 }],
  });
}

function setup(fault?: Fault, s: SwitchSettings = settings, claimSlot?: (wishMs: number, nowMs: number) => number) {
  const local = new FakeClock(Date.UTC(2026, 5, 1, 12));
  const clock = new VenueClock(local);
  const venue = fakeVenue(local, fault);
  const reports: RunnerReport[] = [];
  const runner = new AccountRunner('acct', s, {
    clock,
    sender: venue.sender,
    reprovision: async () => true,
    report: (r) => reports.push(r),
    claimSlot,
  });
  return { local, runner, venue, reports, t0: local.nowMs() };
}

/** Samples the venue-side horizon every second over [from, to). */
function minHorizon(venue: ReturnType<typeof fakeVenue>, from: number, to: number): number {
  let min = Number.POSITIVE_INFINITY;
  for (let t = from; t < to; t += 1_000) {
    const d = venue.deadlineAt(t);
    min = Math.min(min, d === undefined ? Number.NEGATIVE_INFINITY : d - t);
  }
  return min;
}

describe('AccountRunner timelines (virtual time)', () => {
  it('arms at start and keeps the horizon >= deadline - period over 10 minutes', async () => {
    const { local, runner, venue, t0 } = setup();
    runner.start();
    await local.advance(10 * 60_000);
    expect(venue.accepted[0]!.atMs).toBe(t0);
    expect(venue.accepted.length).toBe(41); // t0 and every 15 s for 600 s
    expect(minHorizon(venue, t0 + 1, t0 + 600_000)).toBeGreaterThanOrEqual(45_000);
    expect(runner.snapshot().phase).toBe('armed');
  });

  it('a new period (a re-plan hands every runner one) keeps the timer already set for the planned re-arm', async () => {
    const { local, runner, venue, t0 } = setup();
    runner.start();
    await local.advance(1_000);
    let timersSet = 0;
    const setTimeout = local.setTimeout.bind(local);
    local.setTimeout = (fn, delayMs) => (timersSet++, setTimeout(fn, delayMs));
    // 50,000 runners re-set 50,000 timers here when the cold start ended: seconds of a starved loop.
    runner.updateSettings({ ...settings, rearmEveryMs: 14_000 });
    runner.updateSettings({ ...settings, rearmEveryMs: 13_000 });
    expect(timersSet).toBe(0);
    await local.advance(40_000);
    // The slot planned under the old period holds; the periods after it are the new one.
    expect(venue.accepted.map((a) => a.atMs - t0)).toEqual([0, 15_000, 28_000, 41_000]);
  });

  it('with a slot calendar: re-arms go at the claimed slot, never later than the period', async () => {
    const wishes: number[] = [];
    // a calendar that always finds its free slot 3 s before the wish
    const { local, runner, venue, reports, t0 } = setup(undefined, settings, (wishMs) => {
      wishes.push(wishMs);
      return wishMs - 3_000;
    });
    runner.start();
    await local.advance(60_000);
    const at = venue.accepted.map((a) => a.atMs - t0);
    expect(at).toEqual([0, 12_000, 24_000, 36_000, 48_000, 60_000]);
    expect(wishes.slice(0, 2).map((w) => w - t0)).toEqual([15_000, 27_000]);
    // lag is measured against the claimed slot: on time
    const lags = reports.flatMap((r) => (r.type === 'arm' && r.lagMs !== undefined ? [r.lagMs] : []));
    expect(Math.max(...lags)).toBeLessThanOrEqual(1);
    expect(minHorizon(venue, t0 + 1, t0 + 60_000)).toBeGreaterThanOrEqual(45_000);
  });

  it('splits each re-arm lag into the timer and the queue: a budget that holds a request 1.5 s shows as queued_ms', async () => {
    const local = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const clock = new VenueClock(local);
    const reports: RunnerReport[] = [];
    let sends = 0;
    const runner = new AccountRunner('acct', settings, {
      clock,
      // the second arm waits 1.5 s in "the budget" before its body is built (as the port does)
      sender: {
        async send({ timeMs }) {
          if (++sends === 2) await new Promise<void>((r) => local.setTimeout(r, 1_500));
          timeMs();
        },
      },
      reprovision: async () => true,
      report: (r) => reports.push(r),
    });
    runner.start();
    await local.advance(20_000);
    const arms = reports.filter((r): r is Extract<RunnerReport, { type: 'arm' }> => r.type === 'arm' && r.result === 'ok');
    expect(arms.length).toBeGreaterThanOrEqual(2);
    const late = arms[1]!;
    expect(late.lagMs).toBeCloseTo(1_500, 0);
    expect(late.queuedMs).toBeCloseTo(1_500, 0);
    expect(late.timerLateMs).toBeCloseTo(0, 0);
    expect(late.lagMs!).toBeCloseTo(late.timerLateMs! + late.queuedMs!, 6);
  });

  it('at t=14 s the venue returns 429 for 10 s (across a re-arm slot): every horizon stays >= 20 s and nothing is sent inside retry_after', async () => {
    const faultFrom = Date.UTC(2026, 5, 1, 12) + 14_000;
    const { local, runner, venue, t0, reports } = setup((now) =>
      now >= faultFrom && now < faultFrom + 10_000 ? rateLimited(4) : undefined,
    );
    runner.start();
    await local.advance(10 * 60_000);
    expect(minHorizon(venue, t0 + 1, t0 + 600_000)).toBeGreaterThanOrEqual(20_000);
    // every attempt after a 429 came at least retry_after (4 s) later
    const limited = venue.attempts.filter((a) => a.atMs >= faultFrom && a.atMs < faultFrom + 10_000);
    expect(limited.length).toBeGreaterThan(0);
    for (let i = 0; i < venue.attempts.length - 1; i++) {
      const a = venue.attempts[i]!;
      if (a.atMs >= faultFrom && a.atMs < faultFrom + 10_000) expect(venue.attempts[i + 1]!.atMs - a.atMs).toBeGreaterThanOrEqual(4_000);
    }
    expect(reports.filter((r) => r.type === 'arm' && r.result === 'rate_limited').length).toBe(limited.length);
  });

  it('503s for 30 s (shorter than the margin): horizon stays above min_horizon, retries get denser near the deadline', async () => {
    const from = Date.UTC(2026, 5, 1, 12) + 20_000;
    const unavailable = new RestError('POST /v1/trading/orders/schedule-cancel', 503, {
      code: 503,
      status: 'UNAVAILABLE',
      message: 'dependency down',
      details: [{ type: 'dependency', reason: 'upstream_unavailable' }],
    });
    const { local, runner, venue, t0 } = setup((now) => (now >= from && now < from + 30_000 ? unavailable : undefined));
    runner.start();
    await local.advance(5 * 60_000);
    expect(minHorizon(venue, t0 + 1, t0 + 300_000)).toBeGreaterThanOrEqual(20_000);
  });

  it('rest_then_exchange: REST down for 2 minutes, the exchange route carries the switch; the port, not the account, keeps REST off', async () => {
    const from = Date.UTC(2026, 5, 1, 12) + 10_000;
    const { local, runner, venue, t0 } = setup(
      (now, route) => (route === 'rest' && now >= from && now < from + 120_000 ? new Error('ECONNRESET') : undefined),
      { ...settings, path: 'rest_then_exchange' },
    );
    runner.start();
    await local.advance(5 * 60_000);
    expect(minHorizon(venue, t0 + 1, t0 + 300_000)).toBeGreaterThanOrEqual(44_000);
    expect(venue.accepted.some((a) => a.route === 'exchange')).toBe(true);
    expect(venue.accepted[venue.accepted.length - 1]!.route).toBe('rest');
    // Every failed REST arm is retried by the exchange endpoint at once (same instant, virtual time).
    const failedRest = venue.attempts.filter((a) => a.route === 'rest' && a.atMs >= from && a.atMs < from + 120_000);
    expect(failedRest.length).toBeGreaterThan(0);
    for (const f of failedRest) expect(venue.attempts.find((a) => a.atMs >= f.atMs && a.route === 'exchange')?.atMs).toBe(f.atMs);
    // REST is tried while down only as the port's probe: at most one per REST_PROBE_EVERY_MS.
    const gaps = failedRest.slice(1).map((a, i) => a.atMs - failedRest[i]!.atMs);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(REST_PROBE_EVERY_MS);
  });

  it('ineligible: reported, then retried slowly (no more than once per 5 minutes)', async () => {
    const { local, runner, venue } = setup(
      () => new ActionError('POST /v1/trading/orders/schedule-cancel', 'ineligible', 'Cannot set scheduled cancel time until enough volume traded.'),
    );
    runner.start();
    await local.advance(16 * 60_000);
    expect(venue.attempts.length).toBe(4); // t0, +5, +10, +15 min
    expect(runner.snapshot().phase).toBe('ineligible');
    expect(runner.shouldBeArmed()).toBe(false);
  });

  it('stop with clear: the clear is the last request the venue sees', async () => {
    const { local, runner, venue } = setup(undefined, { ...settings, onShutdown: 'clear' });
    runner.start();
    await local.advance(40_000);
    const stopped = runner.stop();
    await local.advance(1_000);
    await stopped;
    await local.advance(120_000);
    const last = venue.accepted[venue.accepted.length - 1]!;
    expect(last.timeMs).toBeUndefined();
    expect(venue.deadlineAt(local.nowMs())).toBeUndefined();
    expect(local.pendingTimers()).toBe(0);
  });

  it('stop with keep: no request after the stop, the deadline stays in force', async () => {
    const { local, runner, venue } = setup();
    runner.start();
    await local.advance(40_000);
    const n = venue.attempts.length;
    await runner.stop();
    await local.advance(120_000);
    expect(venue.attempts.length).toBe(n);
    expect(venue.accepted[venue.accepted.length - 1]!.timeMs).toBeGreaterThan(0);
  });

  it('hands the sender the class and route choice as decided: a first arm as first, a re-arm by its deadline, a cancel-soon arm by its queue time, the choice unchanged', async () => {
    const local = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const sent: Array<Parameters<ScheduleCancelSender['send']>[0] & { atMs: number; atMono: number }> = [];
    const sender: ScheduleCancelSender = {
      send: async (args) => {
        sent.push({ ...args, atMs: local.nowMs(), atMono: local.monoMs() });
        args.timeMs();
      },
    };
    const s: SwitchSettings = { ...settings, path: 'rest_then_exchange', onSilence: 'cancel_soon' };
    const runner = new AccountRunner('acct', s, { clock: new VenueClock(local), sender, reprovision: async () => true, report: () => undefined });
    runner.start();
    await local.advance(16_000); // the first arm and one re-arm
    runner.botLiveness(false);
    await local.advance(10);
    const [first, rearm, soon] = sent;
    expect(first!.cls).toEqual({ kind: 'arm', urgency: 'first' });
    expect(rearm!.cls).toEqual({ kind: 'arm', deadlineVenueMs: first!.atMs + 60_000 });
    expect(soon!.cls).toEqual({ kind: 'arm', urgency: 'cancel_soon', queuedVenueMs: soon!.atMs });
    for (const r of [first, rearm, soon]) {
      // Venue time, as the switch chose it, and the account's reading to place it on the monotonic clock.
      expect(r!.alternative?.route).toBe('exchange');
      expect(r!.queuedAt).toEqual({ venueMs: r!.atMs, monoMs: r!.atMono });
    }
    expect(rearm!.alternative!.leaveByVenueMs).toBeGreaterThan(rearm!.atMs);
  });

  it('reports lag for re-arms only: a first arm has no slot of the plan to be late for', async () => {
    const local = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const reports: RunnerReport[] = [];
    const sender: ScheduleCancelSender = {
      send: async (args) => {
        // every arm waits 1.5 s for the budget, as in a large cold start's queue
        await sleep(local, 1_500);
        args.timeMs();
      },
    };
    const runner = new AccountRunner('acct', settings, { clock: new VenueClock(local), sender, reprovision: async () => true, report: (r) => reports.push(r) });
    runner.start();
    await local.advance(20_000); // the first arm, then one re-arm
    const arms = reports.filter((r): r is Extract<RunnerReport, { type: 'arm' }> => r.type === 'arm' && r.result === 'ok');
    expect(arms.length).toBeGreaterThanOrEqual(2);
    expect(arms[0]!.lagMs).toBeUndefined();
    expect(arms[1]!.lagMs).toBe(1_500);
  });

  it('abortNow aborts the arm in flight (its own signal, made for that arm), and any arm after it leaves already aborted', async () => {
    const local = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const signals: AbortSignal[] = [];
    const abortedAtSend: boolean[] = [];
    let release: (() => void) | undefined;
    const sender: ScheduleCancelSender = {
      send: ({ signal, timeMs }) => {
        timeMs();
        signals.push(signal!);
        abortedAtSend.push(signal!.aborted);
        return new Promise<void>((resolve, reject) => {
          release = resolve;
          signal!.addEventListener('abort', () => reject(signal!.reason as Error), { once: true });
        });
      },
    };
    const runner = new AccountRunner('acct', settings, { clock: new VenueClock(local), sender, reprovision: async () => true, report: () => undefined });
    runner.start();
    await local.advance(10);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
    runner.abortNow();
    expect(signals[0]!.aborted).toBe(true);
    expect((signals[0]!.reason as Error).message).toBe('keeper stopping');
    release?.();
    await local.advance(120_000);
    // The aborted arm's failure plans a retry; it must not reach the venue.
    expect(abortedAtSend.length).toBeGreaterThan(1);
    expect(abortedAtSend.slice(1).every(Boolean)).toBe(true);
  });
});


describe('toFailure', () => {
  it('reads the venue\'s 422 text (a body /exchange cannot read) as a refused request, like the service\'s 400', () => {
    const venue422 = new DecodeError('exchange:scheduleCancel', 'bad_status', 'HTTP 422 without a RESTError envelope (text/plain, 55 bytes)', 422);
    expect(toFailure(venue422)).toMatchObject({ kind: 'rejected', reason: 'invalid_request' });
    // Any other status without an envelope (a proxy's 502 page) stays an error to retry.
    expect(toFailure(new DecodeError('exchange:scheduleCancel', 'bad_status', 'HTTP 502 without a RESTError envelope', 502))).toMatchObject({ kind: 'error', reason: 'bad_status' });
  });
});

describe('onQueued: how late the timer that sent a re-arm fired (the budget presses its pace with it)', () => {
  /** `lateMs`: every timer of the runner fires that much after it was due (a starved event loop). */
  function runnerWith(lateMs: number, fault?: Fault) {
    const local = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const late: Clock = {
      nowMs: () => local.nowMs(),
      monoMs: () => local.monoMs(),
      setTimeout: (fn, delayMs) => local.setTimeout(fn, delayMs + lateMs),
      clearTimeout: (h) => local.clearTimeout(h),
    };
    const venue = fakeVenue(local, fault);
    const heard: number[] = [];
    const runner = new AccountRunner('acct', settings, {
      clock: new VenueClock(late),
      sender: venue.sender,
      reprovision: async () => true,
      report: () => undefined,
      onQueued: (_route, timerLateMs) => heard.push(timerLateMs),
    });
    return { local, runner, heard };
  }

  it('timers on time: 0, even for retries after failed arms, which are late on their slot by design', async () => {
    const t0 = Date.UTC(2026, 5, 1, 12);
    const down = (now: number): boolean => now > t0 + 10_000 && now < t0 + 40_000;
    const { local, runner, heard } = runnerWith(0, (now) => (down(now) ? new RestError('POST /v1/trading/orders/schedule-cancel', 503, { code: 503, status: 'UNAVAILABLE', message: 'down', details: [] }) : undefined));
    runner.start();
    await local.advance(60_000);
    runner.stop();
    expect(heard.length).toBeGreaterThan(3);
    expect(heard.every((ms) => ms === 0)).toBe(true);
  });

  it('timers 1.5 s late: each re-arm a timer sent is heard 1.5 s late', async () => {
    const { local, runner, heard } = runnerWith(1_500);
    runner.start();
    await local.advance(60_000);
    runner.stop();
    expect(heard.length).toBeGreaterThanOrEqual(3);
    expect(heard.filter((ms) => ms === 1_500).length).toBe(heard.length - 1); // the first arm is sent at start, by no timer
    expect(heard[0]).toBe(0);
  });
});
