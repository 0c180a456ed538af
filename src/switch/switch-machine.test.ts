import { describe, expect, it } from 'vitest';
import { HYPERLIQUID_SWITCH_FACTS } from '../venue/facts.js';
import {
  cancelSoonBaseLeadMs,
  cancelSoonLeadMs,
  initialState,
  latestRearmAfterMs,
  leaveByVenueMs,
  plannedRoute,
  retryDelayMs,
  RETRY,
  step,
  wantsArmed,
  type Effect,
  type SwitchEvent,
  type SwitchSettings,
  type SwitchState,
} from './switch-machine.js';

const VENUE = HYPERLIQUID_SWITCH_FACTS;
const LEAD = VENUE.minLeadMs;
const CANCEL_SOON_LEAD_MS = cancelSoonBaseLeadMs(LEAD);

const base: SwitchSettings = {
  venue: VENUE,
  deadlineMs: 60_000,
  rearmEveryMs: 15_000,
  minHorizonMs: 20_000,
  armWhen: 'always',
  onShutdown: 'keep',
  path: 'rest',
};

/** Feeds events at venue times and collects every effect, as the runner would. */
function timeline(settings: SwitchSettings, events: Array<[number, SwitchEvent]>, from: SwitchState = initialState()) {
  let state = from;
  const log: Array<{ atMs: number; effects: Effect[] }> = [];
  for (const [atMs, ev] of events) {
    const r = step(settings, state, ev, atMs);
    state = r.state;
    log.push({ atMs, effects: r.effects });
  }
  return { state, log, last: log[log.length - 1]?.effects ?? [] };
}

const T0 = 1_700_000_000_000;

describe('venue time corrections', () => {
  const armedAt = (): SwitchState =>
    timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest', sentAtMs: T0 }],
    ]).state;

  it('a step back keeps every plan and hold at its real instant', () => {
    const s0 = { ...armedAt(), notBeforeMs: T0 + 8_000 };
    const r = timeline(base, [[T0 + 1_000 - 30_000, { type: 'clock_step', deltaMs: -30_000 }]], s0);
    expect(r.state.nextArmAtMs).toBe(T0 + 15_000 - 30_000);
    expect(r.state.notBeforeMs).toBe(T0 + 8_000 - 30_000);
    expect(r.state.deadlineMs).toBe(T0 + 60_000); // the venue's fact does not move
    expect(r.last).toEqual([{ type: 'wake_at', atMs: T0 + 15_000 - 30_000 }]);
  });

  it('a step forward that brings the deadline near re-plans the next arm by the horizon', () => {
    // Venue time is 40 s later than we thought: the deadline is 19 s away, not 59 s.
    const r = timeline(base, [[T0 + 1_000 + 40_000, { type: 'clock_step', deltaMs: 40_000 }]], armedAt());
    expect(r.last[0]).toMatchObject({ type: 'send_arm' });
  });

  it('rearm_due moves a later regular re-arm to now, but never past a 429 hold, and not a retry', () => {
    const due = timeline(base, [[T0 + 5_000, { type: 'rearm_due' }]], armedAt());
    expect(due.last[0]).toMatchObject({ type: 'send_arm' });
    const held = timeline(base, [[T0 + 5_000, { type: 'rearm_due' }]], { ...armedAt(), notBeforeMs: T0 + 9_000 });
    expect(held.last).toEqual([{ type: 'wake_at', atMs: T0 + 9_000 }]);
    const retrying = timeline(base, [[T0 + 5_000, { type: 'rearm_due' }]], { ...armedAt(), consecutiveFailures: 1 });
    expect(retrying.last).toEqual([{ type: 'wake_at', atMs: T0 + 15_000 }]);
  });

  it('the latest re-arm leaves the retry reserve before min_horizon, never before the planned period', () => {
    expect(latestRearmAfterMs(base)).toBe(60_000 - 20_000 - 5_000);
    const tight = { ...base, deadlineMs: 30_000, rearmEveryMs: 10_000, minHorizonMs: 12_000 };
    expect(latestRearmAfterMs(tight)).toBe(30_000 - 12_000 - 4_000);
    expect(latestRearmAfterMs(tight)).toBeGreaterThanOrEqual(tight.rearmEveryMs);
  });
});

describe('replan (the slot calendar)', () => {
  const armed = (): SwitchState =>
    timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 100, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
    ]).state;

  it('moves the planned re-arm earlier, and the wake with it', () => {
    const r = step(base, armed(), { type: 'replan', atMs: T0 + 12_000 }, T0 + 200);
    expect(r.state.nextArmAtMs).toBe(T0 + 12_000);
    expect(r.state.plannedSlotMs).toBe(T0 + 12_000);
    expect(r.effects).toEqual([{ type: 'wake_at', atMs: T0 + 12_000 }]);
  });

  it('never later than planned, never into the past', () => {
    expect(step(base, armed(), { type: 'replan', atMs: T0 + 20_000 }, T0 + 200).state.nextArmAtMs).toBe(T0 + 15_000);
    const now = step(base, armed(), { type: 'replan', atMs: T0 - 5_000 }, T0 + 200);
    expect(now.state.nextArmAtMs).toBe(T0 + 200);
    expect(now.effects).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0 + 200 }]);
  });

  it('leaves retries, stops and unarmed accounts alone', () => {
    const failed = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 100, { type: 'arm_failed', route: 'rest', failure: { kind: 'error', reason: 'unavailable', message: '503' } }],
    ]).state;
    expect(step(base, failed, { type: 'replan', atMs: T0 + 150 }, T0 + 120).state.nextArmAtMs).toBe(failed.nextArmAtMs);
    const stopping = step(base, armed(), { type: 'stop', mode: 'keep' }, T0 + 150).state;
    expect(step(base, stopping, { type: 'replan', atMs: T0 + 1_000 }, T0 + 160).state.nextArmAtMs).toBe(stopping.nextArmAtMs);
  });
});

describe('arming on the cadence', () => {
  it('arms at start, then re-arms every period on the original slots', () => {
    const { log, state } = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 120, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
      [T0 + 15_000, { type: 'tick' }],
    ]);
    expect(log[0]!.effects).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0 }]);
    // after the success the next wake is the next slot, not success + period
    expect(log[2]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 15_000 }]);
    expect(log[3]!.effects).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0 + 15_000 }]);
    expect(state.phase).toBe('armed');
  });

  it('an arm that went out late (queued by the budget) re-bases the cadence on when it really went', () => {
    const { log } = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 7_100, { type: 'arm_ok', deadlineMs: T0 + 67_000, route: 'rest', sentAtMs: T0 + 7_000 }],
    ]);
    expect(log[2]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 7_000 + 15_000 }]);
    // a small delay keeps the original slots (no drift)
    const onTime = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 300, { type: 'arm_ok', deadlineMs: T0 + 60_020, route: 'rest', sentAtMs: T0 + 20 }],
    ]);
    expect(onTime.log[2]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 15_000 }]);
  });

  it('never sends a second arm while one is in flight', () => {
    const { last } = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 30_000, { type: 'tick' }],
    ]);
    expect(last.filter((e) => e.type === 'send_arm')).toEqual([]);
  });
});

describe('retries are planned against the deadline', () => {
  it('retries sooner as the horizon shrinks', () => {
    // long horizon: backoff dominates; short horizon: a third of what is left above the 5 s lead
    expect(retryDelayMs(1, 50_000, LEAD)).toBe(1_000);
    expect(retryDelayMs(4, 50_000, LEAD)).toBe(8_000);
    expect(retryDelayMs(6, 50_000, LEAD)).toBe(15_000);
    expect(retryDelayMs(6, 20_000, LEAD)).toBe(5_000);
    expect(retryDelayMs(6, 8_000, LEAD)).toBe(1_000);
    expect(retryDelayMs(6, 5_100, LEAD)).toBe(RETRY.floorMs);
    expect(retryDelayMs(6, -1_000, LEAD)).toBe(RETRY.floorMs);
  });

  it('after a transient error it retries within the horizon, repeatedly', () => {
    const armed = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
    ]).state;
    let state = armed;
    let now = T0 + 15_000;
    const sendTimes: number[] = [];
    // the venue fails every attempt: the keeper keeps trying, ever faster, until the deadline
    for (let i = 0; i < 40 && now < T0 + 60_000; i++) {
      let r = step(base, state, { type: 'tick' }, now);
      state = r.state;
      const send = r.effects.find((e) => e.type === 'send_arm');
      if (send) {
        sendTimes.push(now);
        state = step(base, state, { type: 'arm_sent', route: 'rest' }, now).state;
        r = step(base, state, { type: 'arm_failed', route: 'rest', failure: { kind: 'error', reason: 'timeout', message: 't' } }, now + 100);
        state = r.state;
      }
      const wake = r.effects.find((e) => e.type === 'wake_at');
      now = wake && wake.type === 'wake_at' ? wake.atMs : now + 1;
    }
    expect(sendTimes.length).toBeGreaterThanOrEqual(8);
    const gaps = sendTimes.slice(1).map((t, i) => t - sendTimes[i]!);
    // gaps grow with backoff, then shrink as the deadline nears
    expect(Math.max(...gaps)).toBeLessThanOrEqual(16_000);
    expect(gaps[gaps.length - 1]!).toBeLessThan(2_000);
    // every retry happens before the deadline's 5 s minimum lead runs out, save the floor
    expect(sendTimes.filter((t) => t < T0 + 55_000).length).toBeGreaterThanOrEqual(6);
  });

  it('obeys retry_after after a 429: no arm before it', () => {
    const { state, last } = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 50, { type: 'arm_failed', route: 'rest', failure: { kind: 'rate_limited', retryAfterMs: 7_000 } }],
    ]);
    expect(last).toEqual([{ type: 'wake_at', atMs: T0 + 7_050 }]);
    expect(step(base, state, { type: 'tick' }, T0 + 7_049).effects.some((e) => e.type === 'send_arm')).toBe(false);
    expect(step(base, state, { type: 'tick' }, T0 + 7_050).effects.some((e) => e.type === 'send_arm')).toBe(true);
  });

  it('a 429 window also holds back the next cadence slot', () => {
    const { state } = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_failed', route: 'rest', failure: { kind: 'rate_limited', retryAfterMs: 30_000 } }],
      [T0 + 15_000, { type: 'orders_observed', count: 3 }],
    ]);
    expect(state.nextArmAtMs).toBe(T0 + 30_010);
  });
});

describe('routes (rest_then_exchange): the switch names the plan\'s route, the port moves it', () => {
  const s: SwitchSettings = { ...base, path: 'rest_then_exchange' };
  const error = { kind: 'error', reason: 'unavailable', message: '503' } as const;
  const sends = (log: Array<{ effects: Effect[] }>) => log.flatMap((l) => l.effects.filter((e) => e.type === 'send_arm'));

  it('a REST failure is retried at once with the exchange endpoint as its alternative; the next re-arm names REST again (no stay of its own)', () => {
    const { log, state } = timeline(s, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 100, { type: 'arm_failed', route: 'rest', failure: error }],
      // the port, which saw REST fail, sent the retry by the exchange endpoint
      [T0 + 100, { type: 'arm_sent', route: 'rest' }],
      [T0 + 200, { type: 'arm_ok', deadlineMs: T0 + 60_200, route: 'exchange', sentAtMs: T0 + 100 }],
      [T0 + 5_000, { type: 'replan', atMs: T0 + 5_000 }],
    ]);
    // unarmed (no deadline yet): leave now, by whichever route admits it soonest
    expect(log[2]!.effects).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0, alternative: { route: 'exchange', leaveByVenueMs: T0 + 100 } }]);
    expect(sends(log).map((e) => e.type === 'send_arm' && e.route)).toEqual(['rest', 'rest', 'rest']);
    expect(state.lastResult).toMatchObject({ result: 'ok', route: 'exchange' });
  });

  it('a 429 on REST: retried at once (the port holds REST for its retry_after and sends it the other way); the account keeps no hold of its own', () => {
    const { log, state } = timeline(s, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 100, { type: 'arm_failed', route: 'rest', failure: { kind: 'rate_limited', retryAfterMs: 4_000 } }],
    ]);
    expect(log[2]!.effects).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0, alternative: { route: 'exchange', leaveByVenueMs: T0 + 100 } }]);
    expect(state.notBeforeMs).toBe(0);
  });

  it('a retry that failed on REST again (the port kept it there: not the route failing) backs off, never a loop at once', () => {
    const { log, state } = timeline(s, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 100, { type: 'arm_failed', route: 'rest', failure: error }],
      [T0 + 100, { type: 'arm_sent', route: 'rest' }],
      [T0 + 200, { type: 'arm_failed', route: 'rest', failure: error }],
    ]);
    expect(log[4]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 200 + retryDelayMs(2, null, LEAD) }]);
    // a 429 twice in a row on REST: its retry_after is honoured like any fixed route's
    const limited = step(s, { ...state, inFlight: { op: 'arm', route: 'rest', sentAtMs: T0 + 300 } }, { type: 'arm_failed', route: 'rest', failure: { kind: 'rate_limited', retryAfterMs: 7_000 } }, T0 + 400);
    expect(limited.state.notBeforeMs).toBe(T0 + 7_400);
    expect(limited.effects).toEqual([{ type: 'wake_at', atMs: T0 + 7_400 }]);
  });

  it('a failure on the exchange endpoint, then one on REST: the REST one is retried at once again', () => {
    const { log } = timeline(s, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 100, { type: 'arm_failed', route: 'exchange', failure: error }], // the port had moved it
      [T0 + 100 + retryDelayMs(1, null, LEAD), { type: 'tick' }],
      [T0 + 100 + retryDelayMs(1, null, LEAD), { type: 'arm_sent', route: 'rest' }],
      [T0 + 200 + retryDelayMs(1, null, LEAD), { type: 'arm_failed', route: 'rest', failure: error }], // the probe of REST
    ]);
    expect(log[2]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 100 + retryDelayMs(1, null, LEAD) }]);
    expect(log[5]!.effects).toMatchObject([{ type: 'send_arm', route: 'rest', alternative: { route: 'exchange' } }]);
  });

  it('preferredRoute (the plan) names the route of every arm; a fixed config path is its own route', () => {
    expect(plannedRoute({ ...s, preferredRoute: 'exchange' })).toBe('exchange');
    expect(plannedRoute({ ...s, preferredRoute: 'rest' })).toBe('rest');
    expect(plannedRoute(s)).toBe('rest');
    expect(plannedRoute({ ...base, preferredRoute: 'exchange' })).toBe('rest'); // path: rest is rest
    expect(plannedRoute({ ...base, path: 'exchange' })).toBe('exchange');
    const onExchange = timeline({ ...s, preferredRoute: 'exchange' }, [[T0, { type: 'start' }]]);
    expect(onExchange.last).toEqual([{ type: 'send_arm', route: 'exchange', plannedSlotMs: T0, alternative: { route: 'rest', leaveByVenueMs: T0 } }]);
  });

  it('a clear names the planned route too, with the other as its alternative, to leave now', () => {
    const r = timeline({ ...s, onShutdown: 'clear' }, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
      [T0 + 1_000, { type: 'stop' }],
    ]);
    expect(r.last).toEqual([{ type: 'send_clear', route: 'rest', alternative: { route: 'exchange', leaveByVenueMs: T0 + 1_000 } }]);
  });

  it('each arm carries the other route and when it must leave by: min_horizon plus the retry reserve before its deadline', () => {
    const armed = timeline(s, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest', sentAtMs: T0 }],
      [T0 + 15_000, { type: 'tick' }],
    ]);
    // deadline 60 s, min horizon 20 s, reserve min(5 s, (60 - 20 - 15) / 2): leave by T0 + 35 s
    expect(armed.last).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0 + 15_000, alternative: { route: 'exchange', leaveByVenueMs: T0 + 35_000 } }]);
    expect(leaveByVenueMs(s, armed.state, T0 + 40_000)).toBe(T0 + 40_000); // already past: whichever route is sooner
    // other policies carry no alternative
    const rest = timeline(base, [[T0, { type: 'start' }]]);
    expect(rest.last).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0 }]);
  });
});

describe('rejections', () => {
  const failWith = (reason: Parameters<typeof step>[2] extends never ? never : string) =>
    timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_failed', route: 'rest', failure: { kind: 'rejected', reason: reason as never, message: 'x' } }],
    ]);

  it('volume gate: ineligible, slow retry', () => {
    const { state, last } = failWith('ineligible');
    expect(state.phase).toBe('ineligible');
    expect(last).toEqual([{ type: 'wake_at', atMs: T0 + 10 + RETRY.ineligibleMs }]);
  });

  it('unknown signer: re-provision once, then slow retries, never a tight loop', () => {
    const first = failWith('unknown_signer');
    expect(first.state.phase).toBe('blocked');
    expect(first.last).toEqual([{ type: 'reprovision' }]);
    const afterReprov = step(base, first.state, { type: 'reprovisioned', ok: true }, T0 + 500);
    expect(afterReprov.effects[0]).toMatchObject({ type: 'send_arm' });
    let st = step(base, afterReprov.state, { type: 'arm_sent', route: 'rest' }, T0 + 500).state;
    const again = step(base, st, { type: 'arm_failed', route: 'rest', failure: { kind: 'rejected', reason: 'unknown_signer', message: 'x' } }, T0 + 600);
    expect(again.effects).toEqual([{ type: 'wake_at', atMs: T0 + 600 + RETRY.blockedMs }]);
    st = again.state;
    expect(st.phase).toBe('blocked');
  });

  it('pruned again soon after a re-provision: no second re-provision within 10 minutes (no rotation war)', () => {
    const first = failWith('unknown_signer');
    let st = step(base, first.state, { type: 'reprovisioned', ok: true }, T0 + 500).state;
    st = step(base, st, { type: 'arm_sent', route: 'rest' }, T0 + 500).state;
    st = step(base, st, { type: 'arm_ok', deadlineMs: T0 + 60_500, route: 'rest' }, T0 + 600).state;
    // pruned again 40 s later
    st = step(base, st, { type: 'arm_sent', route: 'rest' }, T0 + 40_000).state;
    const again = step(base, st, { type: 'arm_failed', route: 'rest', failure: { kind: 'rejected', reason: 'unknown_signer', message: 'x' } }, T0 + 40_010);
    expect(again.effects.some((e) => e.type === 'reprovision')).toBe(false);
    expect(again.state.nextArmAtMs).toBe(T0 + 40_010 + RETRY.blockedMs);
    // ...but after 10 minutes it may re-provision again
    st = step(base, again.state, { type: 'arm_sent', route: 'rest' }, T0 + 11 * 60_000).state;
    const later = step(base, st, { type: 'arm_failed', route: 'rest', failure: { kind: 'rejected', reason: 'unknown_signer', message: 'x' } }, T0 + 11 * 60_000);
    expect(later.effects).toContainEqual({ type: 'reprovision' });
  });

  it('invalid nonce: one immediate retry, then backoff', () => {
    const first = failWith('invalid_nonce');
    expect(first.last[0]).toMatchObject({ type: 'send_arm' });
    const st = step(base, first.state, { type: 'arm_sent', route: 'rest' }, T0 + 20).state;
    const second = step(base, st, { type: 'arm_failed', route: 'rest', failure: { kind: 'rejected', reason: 'invalid_nonce', message: 'x' } }, T0 + 30);
    expect(second.effects[0]).toEqual({ type: 'wake_at', atMs: T0 + 30 + retryDelayMs(2, null, LEAD) });
  });

  it('daily trigger cap: blocked, asks again only every 5 minutes', () => {
    const { state, last } = failWith('trigger_cap');
    expect(state.phase).toBe('blocked');
    expect(last).toEqual([{ type: 'wake_at', atMs: T0 + 10 + RETRY.ineligibleMs }]);
  });

  it('pending agent removal waits about 5 s; address budget 10 s', () => {
    expect(failWith('pending_agent_removal').last).toEqual([{ type: 'wake_at', atMs: T0 + 10 + VENUE.pendingAgentRemovalMs + RETRY.pendingAgentRemovalExtraMs }]);
    expect(failWith('address_budget').last).toEqual([{ type: 'wake_at', atMs: T0 + 10 + 10_000 }]);
  });
});

describe('arm_when: orders_open', () => {
  const s: SwitchSettings = { ...base, armWhen: 'orders_open' };
  it('arms while orders are unknown (fail safe), idles at zero orders, re-arms when they return', () => {
    const r = timeline(s, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
      [T0 + 1_000, { type: 'orders_observed', count: 0 }],
      [T0 + 15_000, { type: 'tick' }],
      [T0 + 61_000, { type: 'tick' }],
      [T0 + 70_000, { type: 'orders_observed', count: 2 }],
    ]);
    expect(r.log[0]!.effects[0]).toMatchObject({ type: 'send_arm' });
    expect(r.log[3]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 60_000 }]);
    expect(r.log[4]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 60_000 }]);
    // the schedule lapses on its own: no clear is ever sent for lack of orders
    expect(r.log.flatMap((l) => l.effects).some((e) => e.type === 'send_clear')).toBe(false);
    expect(r.log[5]!.effects).toEqual([{ type: 'lapsed', deadlineMs: T0 + 60_000, botSilent: false }]);
    expect(r.log[6]!.effects[0]).toMatchObject({ type: 'send_arm' });
  });

  it('a failed orders read makes the count unknown: an idle account arms again', () => {
    const r = timeline(s, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
      [T0 + 1_000, { type: 'orders_observed', count: 0 }],
      [T0 + 30_000, { type: 'orders_observed', count: null }],
    ]);
    expect(r.log[3]!.effects).toEqual([{ type: 'wake_at', atMs: T0 + 60_000 }]);
    expect(r.state.openOrders).toBeNull();
    expect(r.last[0]).toMatchObject({ type: 'send_arm' });
  });
});

describe('stop', () => {
  const armed = (settings: SwitchSettings) =>
    timeline(settings, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
    ]).state;

  it('keep: no request at all, stopped at once', () => {
    const r = step(base, armed(base), { type: 'stop' }, T0 + 1_000);
    expect(r.effects).toEqual([{ type: 'stopped' }]);
  });

  it('clear: one clear, then stopped, and no arm ever after', () => {
    const s: SwitchSettings = { ...base, onShutdown: 'clear' };
    const r = timeline(s, [
      [T0 + 1_000, { type: 'stop' }],
      [T0 + 1_000, { type: 'clear_sent', route: 'rest' }],
      [T0 + 1_100, { type: 'clear_ok', route: 'rest' }],
      [T0 + 15_000, { type: 'tick' }],
      [T0 + 16_000, { type: 'orders_observed', count: 4 }],
    ], armed(s));
    const all = r.log.flatMap((l) => l.effects);
    expect(r.log[0]!.effects).toEqual([{ type: 'send_clear', route: 'rest' }]);
    expect(r.log[2]!.effects).toEqual([{ type: 'stopped' }]);
    expect(all.filter((e) => e.type === 'send_arm')).toEqual([]);
    expect(r.state.deadlineMs).toBeNull();
  });

  it('clear waits for an in-flight arm to settle, so the clear is the last request', () => {
    const s: SwitchSettings = { ...base, onShutdown: 'clear' };
    const r = timeline(s, [
      [T0 + 15_000, { type: 'tick' }],
      [T0 + 15_000, { type: 'arm_sent', route: 'rest' }],
      [T0 + 15_010, { type: 'stop' }],
      [T0 + 15_200, { type: 'arm_ok', deadlineMs: T0 + 75_000, route: 'rest' }],
    ], armed(s));
    expect(r.log[2]!.effects).toEqual([]);
    expect(r.log[3]!.effects).toEqual([{ type: 'send_clear', route: 'rest' }]);
  });

  it('a refused clear is not retried; a transient failure is retried a bounded number of times', () => {
    const s: SwitchSettings = { ...base, onShutdown: 'clear' };
    const refused = timeline(s, [
      [T0 + 1, { type: 'stop' }],
      [T0 + 1, { type: 'clear_sent', route: 'rest' }],
      [T0 + 2, { type: 'clear_failed', route: 'rest', failure: { kind: 'rejected', reason: 'ineligible', message: 'x' } }],
    ], armed(s));
    expect(refused.last).toEqual([{ type: 'stopped' }]);
    let st = step(s, armed(s), { type: 'stop' }, T0 + 1).state;
    let sends = 1;
    let now = T0 + 1;
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      st = step(s, st, { type: 'clear_sent', route: 'rest' }, now).state;
      let r = step(s, st, { type: 'clear_failed', route: 'rest', failure: { kind: 'error', reason: 'timeout', message: 't' } }, now);
      st = r.state;
      const wake = r.effects.find((e) => e.type === 'wake_at');
      if (wake?.type === 'wake_at') {
        // A transient failure waits before the next clear (0.5 s, doubling): a short outage passes.
        waits.push(wake.atMs - now);
        now = wake.atMs;
        r = step(s, st, { type: 'tick' }, now);
        st = r.state;
      }
      if (r.effects.some((e) => e.type === 'send_clear')) sends++;
      if (r.effects.some((e) => e.type === 'stopped')) break;
    }
    expect(sends).toBe(RETRY.maxClearAttempts);
    expect(waits).toEqual([500, 1_000, 2_000]);
    expect(st.phase).toBe('stopped');
  });

  it('stop is idempotent', () => {
    const s: SwitchSettings = { ...base, onShutdown: 'clear' };
    const once = step(s, armed(s), { type: 'stop' }, T0 + 1);
    const twice = step(s, once.state, { type: 'stop', mode: 'keep' }, T0 + 2);
    expect(twice.state.stopMode).toBe('clear');
  });
});

describe('lapse detection', () => {
  it('reports a deadline that passed and arms again at once', () => {
    const { last, state } = timeline(base, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest' }],
      [T0 + 10, { type: 'arm_failed' as const, route: 'rest', failure: { kind: 'rate_limited', retryAfterMs: 70_000 } }],
      [T0 + 60_000, { type: 'tick' }],
    ]);
    expect(last[0]).toEqual({ type: 'lapsed', deadlineMs: T0 + 60_000, botSilent: false });
    expect(state.phase).toBe('unarmed');
    // ...but still not before retry_after
    expect(last.some((e) => e.type === 'send_arm')).toBe(false);
  });
});

describe('the bot falls silent (liveness)', () => {
  const soonSettings: SwitchSettings = { ...base, onSilence: 'cancel_soon' };
  const armed = (settings: SwitchSettings): SwitchState =>
    timeline(settings, [
      [T0, { type: 'start' }],
      [T0, { type: 'arm_sent', route: 'rest' }],
      [T0 + 10, { type: 'arm_ok', deadlineMs: T0 + 60_000, route: 'rest', sentAtMs: T0 }],
    ]).state;

  it('cancel_soon: one arm at the venue minimum lead plus the margin, then no re-arm; its deadline fires as a cancel, not a lapse', () => {
    const r = timeline(soonSettings, [[T0 + 5_000, { type: 'bot', alive: false }]], armed(soonSettings));
    expect(r.state.phase).toBe('bot_silent');
    expect(r.last).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: null, soonLeadMs: CANCEL_SOON_LEAD_MS }]);
    const after = timeline(
      soonSettings,
      [
        [T0 + 5_000, { type: 'arm_sent', route: 'rest', soon: true }],
        [T0 + 5_050, { type: 'arm_ok', deadlineMs: T0 + 5_000 + CANCEL_SOON_LEAD_MS, route: 'rest', sentAtMs: T0 + 5_000 }],
      ],
      r.state,
    );
    expect(after.state.silence).toEqual({ sinceMs: T0 + 5_000, cancelAtMs: T0 + 5_000 + CANCEL_SOON_LEAD_MS });
    expect(after.last).toEqual([{ type: 'wake_at', atMs: T0 + 5_000 + CANCEL_SOON_LEAD_MS }]);
    const fired = timeline(soonSettings, [[T0 + 5_000 + CANCEL_SOON_LEAD_MS, { type: 'tick' }]], after.state);
    expect(fired.last).toEqual([{ type: 'lapsed', deadlineMs: T0 + 5_000 + CANCEL_SOON_LEAD_MS, botSilent: true }]);
    // nothing more is sent while it stays silent, however long
    expect(timeline(soonSettings, [[T0 + 600_000, { type: 'tick' }]], fired.state).last).toEqual([]);
  });

  it('cancel_soon: a deadline already nearer than the minimum lead is left to fire; nothing is sent', () => {
    const r = timeline(soonSettings, [[T0 + 55_000, { type: 'bot', alive: false }]], armed(soonSettings));
    expect(r.last).toEqual([{ type: 'wake_at', atMs: T0 + 60_000 }]);
    expect(r.state.silence!.cancelAtMs).toBe(T0 + 60_000);
  });

  it('cancel_soon: a re-arm in flight when the bot falls silent is followed by the cancel-soon arm', () => {
    const s = timeline(soonSettings, [[T0 + 15_000, { type: 'tick' }], [T0 + 15_000, { type: 'arm_sent', route: 'rest' }], [T0 + 15_010, { type: 'bot', alive: false }]], armed(soonSettings));
    expect(s.last.some((e) => e.type === 'send_arm')).toBe(false); // waits for the arm in flight
    const r = timeline(soonSettings, [[T0 + 15_100, { type: 'arm_ok', deadlineMs: T0 + 75_000, route: 'rest', sentAtMs: T0 + 15_000 }]], s.state);
    expect(r.last).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: null, soonLeadMs: CANCEL_SOON_LEAD_MS }]);
  });

  it('cancel_soon: a refused cancel-soon arm is retried with a second more of lead', () => {
    const s = timeline(soonSettings, [[T0 + 5_000, { type: 'bot', alive: false }], [T0 + 5_000, { type: 'arm_sent', route: 'rest', soon: true }]], armed(soonSettings));
    const r = timeline(soonSettings, [[T0 + 5_050, { type: 'arm_failed', route: 'rest', failure: { kind: 'rejected', reason: 'other', message: 'time too soon' } }]], s.state);
    const retry = r.last.find((e) => e.type === 'wake_at') as { atMs: number };
    const again = timeline(soonSettings, [[retry.atMs, { type: 'tick' }]], r.state);
    expect(again.last).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: null, soonLeadMs: cancelSoonLeadMs(1, LEAD) }]);
    expect(cancelSoonLeadMs(1, LEAD)).toBe(CANCEL_SOON_LEAD_MS + 1_000);
  });

  it('stop_rearming: nothing is sent; the last deadline fires', () => {
    const settings: SwitchSettings = { ...base, onSilence: 'stop_rearming' };
    const r = timeline(settings, [[T0 + 5_000, { type: 'bot', alive: false }]], armed(settings));
    expect(r.state.phase).toBe('bot_silent');
    expect(r.last).toEqual([{ type: 'wake_at', atMs: T0 + 60_000 }]);
    expect(wantsArmed(settings, r.state)).toBe(false);
    // the regular re-arm time passes without an arm
    expect(timeline(settings, [[T0 + 15_000, { type: 'rearm_due' }]], r.state).last).toEqual([{ type: 'wake_at', atMs: T0 + 60_000 }]);
  });

  it('back: armed at its normal horizon at once', () => {
    const silent = timeline(soonSettings, [[T0 + 5_000, { type: 'bot', alive: false }], [T0 + 5_000, { type: 'arm_sent', route: 'rest', soon: true }], [T0 + 5_050, { type: 'arm_ok', deadlineMs: T0 + 11_000, route: 'rest', sentAtMs: T0 + 5_000 }]], armed(soonSettings)).state;
    const r = timeline(soonSettings, [[T0 + 8_000, { type: 'bot', alive: true }]], silent);
    expect(r.state.phase).toBe('armed');
    expect(r.state.silence).toBeNull();
    expect(r.last).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: T0 + 8_000 }]);
  });

  it('without onSilence a silent verdict changes nothing (the account has no liveness)', () => {
    const r = timeline(base, [[T0 + 5_000, { type: 'bot', alive: false }]], armed(base));
    expect(r.state.silence).toBeNull();
    expect(r.state.phase).toBe('armed');
  });

  it('a stop while silent sends nothing more (keep)', () => {
    const r = timeline(soonSettings, [[T0 + 5_000, { type: 'stop' }], [T0 + 5_001, { type: 'bot', alive: false }]], armed(soonSettings));
    expect(r.state.silence).toBeNull();
    expect(r.log.flatMap((l) => l.effects).some((e) => e.type === 'send_arm')).toBe(false);
  });
});

describe('the bot falls silent with arm_when: orders_open', () => {
  const settings: SwitchSettings = { ...base, armWhen: 'orders_open', onSilence: 'cancel_soon' };

  it('no open orders: no cancel-soon arm (nothing to cancel, no trigger spent); orders appearing: the cancel-soon is sent', () => {
    const idle = timeline(settings, [[T0, { type: 'start' }], [T0, { type: 'orders_observed', count: 0 }]]).state;
    expect(idle.phase).toBe('idle');
    const silent = timeline(settings, [[T0 + 5_000, { type: 'bot', alive: false }]], idle);
    expect(silent.state.phase).toBe('bot_silent');
    expect(silent.last.some((e) => e.type === 'send_arm')).toBe(false);
    const appeared = timeline(settings, [[T0 + 9_000, { type: 'orders_observed', count: 2 }]], silent.state);
    expect(appeared.last).toEqual([{ type: 'send_arm', route: 'rest', plannedSlotMs: null, soonLeadMs: CANCEL_SOON_LEAD_MS }]);
    const unknown = timeline(settings, [[T0 + 9_000, { type: 'orders_observed', count: null }]], silent.state);
    expect(unknown.last[0]).toMatchObject({ type: 'send_arm', soonLeadMs: CANCEL_SOON_LEAD_MS });
  });
});
