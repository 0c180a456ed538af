import { describe, expect, it } from 'vitest';
import { ColdStartGate } from './cold-start-gate.js';

const SW = { deadlineMs: 20_000, rearmEveryMs: 5_000, minHorizonMs: 8_000 }; // longest safe period 11 s
const JIT = { order: 'just_in_time', perSecond: 19.4 } as const;

function gateWith(n: number): ColdStartGate {
  const g = new ColdStartGate();
  for (let i = 0; i < n; i++) g.added(`a${i}`, SW);
  return g;
}

describe('ColdStartGate', () => {
  it('parks approved accounts while the cold start is longer than a period, and releases them when it is not', () => {
    const g = gateWith(180);
    let started = 0;
    g.settledOk('a0', 1);
    g.admit('a0', 0, JIT, () => started++);
    expect(started).toBe(0);
    expect(g.parkedCount()).toBe(1);
    for (let i = 1; i <= 140; i++) g.settledOk(`a${i}`, 1);
    expect(g.release(7_300, JIT)).toBe(0); // 39 approvals + 180 first arms left: 11.3 s > 11 s
    // Once what is left fits in one period, the gate opens: 33 + 180 requests = 10.98 s.
    for (let i = 141; i <= 146; i++) g.settledOk(`a${i}`, 1);
    expect(g.release(7_600, JIT)).toBe(1);
    expect(started).toBe(1);
  });

  it('a restart that reuses stored agents needs no approval: nothing is parked', () => {
    const g = gateWith(10_000);
    let started = 0;
    for (let i = 0; i < 8; i++) {
      g.settledOk(`a${i}`, 0);
      g.admit(`a${i}`, 0, { order: 'just_in_time', perSecond: 97 }, () => started++);
    }
    expect(started).toBe(8);
  });

  it('interleaved (approvals and arms on windows of their own): every approved account starts at once', () => {
    const g = gateWith(10_000);
    let started = 0;
    g.settledOk('a0', 1);
    g.admit('a0', 0, { order: 'interleaved', perSecond: 0 }, () => started++);
    expect(started).toBe(1);
    // The same account count under just in time on a shared window is parked.
    g.settledOk('a1', 1);
    g.admit('a1', 0, { order: 'just_in_time', perSecond: 97 }, () => started++);
    expect(started).toBe(1);
    expect(g.parkedCount()).toBe(1);
  });

  it('is active until every account settled and every first arm was answered; a failure does not hold it', () => {
    const g = gateWith(2);
    g.settledOk('a0', 1);
    g.settledFailed('a1');
    expect(g.active()).toBe(true);
    g.firstArmAnswered('a0', true);
    expect(g.active()).toBe(false);
    expect(g.backlog()).toBe(0);
  });

  it('a later re-provisioning is not the cold start, and a removed account no longer counts', () => {
    const g = gateWith(3);
    g.settledOk('a0', 1);
    g.settledOk('a0', 1); // again: ignored
    expect(g.backlog()).toBe(2 + 2 + 1); // two unsettled (approval + arm each), a0's first arm
    g.forget('a1');
    g.forget('a2');
    expect(g.backlog()).toBe(1);
  });
});
