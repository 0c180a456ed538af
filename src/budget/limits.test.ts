import { describe, expect, it } from 'vitest';
import type { WindowSpec } from './admission.js';
import { initialLimit, LIMIT_QUIET_MAX_MS, LIMIT_QUIET_MS, limitChangeOf, onAnnounced, onBaseline, onQuiet, onRefusal, probeDueMs, scopeLimitOf, type LimitState, type LimitStep } from './limits.js';

const CONFIGURED: WindowSpec = { limit: 200, windowMs: 10_000 };
const ANNOUNCED: WindowSpec = { limit: 10, windowMs: 10_000 };

/** Carries the limit in force along a run of transitions, as the scheduler does. */
function run(state: LimitState, inForce: WindowSpec) {
  const changes: Array<NonNullable<LimitStep['change']>> = [];
  const take = (step: LimitStep): LimitStep => {
    state = step.state;
    if (step.change) {
      changes.push(step.change);
      inForce = step.change.to;
    }
    return step;
  };
  return {
    refusal: (nowMs: number) => take(onRefusal(state, inForce, nowMs)),
    announced: (spec: WindowSpec, nowMs: number) => take(onAnnounced(state, inForce, spec, nowMs)),
    quiet: (nowMs: number) => take(onQuiet(state, inForce, nowMs)),
    get state() {
      return state;
    },
    get inForce() {
      return inForce;
    },
    changes,
  };
}

/** A scope configured at CONFIGURED that learned ANNOUNCED at t = 0. */
function learnedAtZero() {
  const r = run(initialLimit(CONFIGURED, true), CONFIGURED);
  r.announced(ANNOUNCED, 0);
  return r;
}

describe('limits', () => {
  it('learns a lower limit the venue announced, at once, and holds it for a quiet spell', () => {
    const r = run(initialLimit(CONFIGURED, true), CONFIGURED);
    const step = r.announced(ANNOUNCED, 1_000);
    expect(step.change).toEqual({ kind: 'learned', to: ANNOUNCED });
    expect(r.state).toMatchObject({ learned: ANNOUNCED, quietMs: LIMIT_QUIET_MS, nextProbeMs: 1_000 + LIMIT_QUIET_MS });
    expect(probeDueMs(r.state)).toBe(1_000 + LIMIT_QUIET_MS);
    expect(scopeLimitOf('schedule_cancel', r.state, r.inForce)).toEqual({ scope: 'schedule_cancel', configured: CONFIGURED, inForce: ANNOUNCED, source: 'learned' });
  });

  it('takes nothing looser than the limit in force, and a configured limit with nothing learned has no probe', () => {
    const r = run(initialLimit(CONFIGURED, true), CONFIGURED);
    expect(r.announced({ limit: 400, windowMs: 10_000 }, 0)).toEqual({ state: initialLimit(CONFIGURED, true) });
    expect(r.refusal(0).change).toBeUndefined();
    expect(probeDueMs(r.state)).toBe(Number.POSITIVE_INFINITY);
  });

  it('holds while the venue keeps refusing: each 429 restarts the quiet spell, and the quiet tick waits for it', () => {
    const r = learnedAtZero();
    r.refusal(200_000);
    r.announced(ANNOUNCED, 250_000); // the same numbers again: nothing tighter, the spell restarts
    expect(r.state.nextProbeMs).toBe(250_000 + LIMIT_QUIET_MS);
    expect(r.quiet(LIMIT_QUIET_MS).change).toBeUndefined();
    expect(r.quiet(250_000 + LIMIT_QUIET_MS - 1).change).toBeUndefined();
    expect(r.inForce).toEqual(ANNOUNCED);
    expect(r.changes).toEqual([{ kind: 'learned', to: ANNOUNCED }]);
  });

  it('probes up by steps of LIMIT_PROBE_FACTOR after each quiet spell, then restores the configured limit', () => {
    const r = learnedAtZero();
    let t = 0;
    for (const limit of [20, 40, 80, 160]) {
      t += LIMIT_QUIET_MS;
      expect(r.quiet(t).change).toEqual({ kind: 'probed', to: { limit, windowMs: 10_000 } });
      expect(r.state.nextProbeMs).toBe(t + LIMIT_QUIET_MS);
    }
    t += LIMIT_QUIET_MS;
    expect(r.quiet(t).change).toEqual({ kind: 'restored', to: CONFIGURED });
    expect(r.state).toMatchObject({ learned: null, restoredAtMs: t });
    expect(probeDueMs(r.state)).toBe(Number.POSITIVE_INFINITY);
    expect(limitChangeOf('global', r.state, 'restored', { limit: 160, windowMs: 10_000 }, CONFIGURED)).toEqual({
      scope: 'global',
      kind: 'restored',
      from: { limit: 160, windowMs: 10_000 },
      to: CONFIGURED,
      configured: CONFIGURED,
      source: 'configured',
    });
  });

  it('a refused probe goes back to the announced limit and doubles the spell, up to LIMIT_QUIET_MAX_MS', () => {
    const r = learnedAtZero();
    let t = LIMIT_QUIET_MS;
    let spell = LIMIT_QUIET_MS;
    while (spell < LIMIT_QUIET_MAX_MS) {
      expect(r.quiet(t).change).toEqual({ kind: 'probed', to: { limit: 20, windowMs: 10_000 } });
      t += 1_000;
      expect(r.refusal(t).change).toEqual({ kind: 'learned', to: ANNOUNCED });
      spell = Math.min(LIMIT_QUIET_MAX_MS, spell * 2);
      expect(r.state).toMatchObject({ quietMs: spell, nextProbeMs: t + spell });
      t += spell;
    }
    // Capped: one more refused probe leaves the spell at the maximum.
    r.quiet(t);
    r.refusal(t + 1_000);
    expect(r.state.quietMs).toBe(LIMIT_QUIET_MAX_MS);
  });

  it('a probe refused by a 429 that announces the same limit again doubles the spell as well', () => {
    const r = learnedAtZero();
    r.quiet(LIMIT_QUIET_MS);
    expect(r.announced(ANNOUNCED, LIMIT_QUIET_MS + 1_000).change).toEqual({ kind: 'learned', to: ANNOUNCED });
    expect(r.state).toMatchObject({ quietMs: 2 * LIMIT_QUIET_MS, nextProbeMs: LIMIT_QUIET_MS + 1_000 + 2 * LIMIT_QUIET_MS });
  });

  it('a refusal soon after a restore doubles the next spell; one long after starts a new episode', () => {
    const announced = { limit: 100, windowMs: 10_000 };
    const r = run(initialLimit(CONFIGURED, true), CONFIGURED);
    r.announced(announced, 0);
    expect(r.quiet(LIMIT_QUIET_MS).change).toEqual({ kind: 'restored', to: CONFIGURED }); // 2 x 100 = 200
    r.announced(announced, LIMIT_QUIET_MS + 1_000);
    expect(r.state.quietMs).toBe(2 * LIMIT_QUIET_MS);
    const soonAgain = r.state.nextProbeMs;
    expect(r.quiet(soonAgain).change).toEqual({ kind: 'restored', to: CONFIGURED });
    r.announced(announced, soonAgain + 2 * LIMIT_QUIET_MS);
    expect(r.state.quietMs).toBe(LIMIT_QUIET_MS);
  });

  it('a new baseline: in force at once and the learned limit dropped, unless the learned one is lower', () => {
    const l = learnedAtZero().state;
    expect(onBaseline(l, ANNOUNCED, { limit: 100, windowMs: 10_000 })).toEqual({ state: { ...l, base: { limit: 100, windowMs: 10_000 } }, inForce: ANNOUNCED });
    const share = { limit: 5, windowMs: 10_000 };
    expect(onBaseline(l, ANNOUNCED, share)).toEqual({ state: { ...l, base: share, learned: null }, inForce: share });
    // a probed limit above the new baseline comes down to it; the learned one stays
    expect(onBaseline(l, { limit: 160, windowMs: 10_000 }, { limit: 100, windowMs: 10_000 }).inForce).toEqual({ limit: 100, windowMs: 10_000 });
  });

  it('a scope only 429s named shows only while a learned limit holds it', () => {
    const l = initialLimit({ limit: 1_000_000, windowMs: 60_000 }, false);
    expect(scopeLimitOf('endpoint:x', l, l.base)).toBeNull();
    const step = onAnnounced(l, l.base, ANNOUNCED, 0);
    expect(scopeLimitOf('endpoint:x', step.state, ANNOUNCED)).toEqual({ scope: 'endpoint:x', inForce: ANNOUNCED, source: 'learned' });
  });
});
