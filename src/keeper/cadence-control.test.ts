import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../obs/metrics.js';
import { CadenceControl } from './cadence-control.js';
import type { KeeperAccountSpec, KeeperOptions } from './keeper-types.js';

const SWITCH = { deadlineMs: 60_000, rearmEveryMs: 15_000, minHorizonMs: 20_000, armWhen: 'always', onShutdown: 'keep', path: 'rest' } as const;

function control(queued: () => number) {
  const c = new CadenceControl({
    scheduler: { specOf: () => ({ limit: 6_000, windowMs: 60_000 }), queuedOn: (scope) => (scope === 'schedule_cancel' ? queued() : 0) },
    metrics: createMetrics({ version: 't', defaultMetrics: false }),
    logger: pino({ level: 'silent' }),
  });
  const accounts = Array.from({ length: 100 }, (_, i) => ({ name: `a${i}`, address: `0x${String(i).padStart(40, '0')}`, agentName: 'k', validDays: 30, switch: { ...SWITCH }, identity: `a${i}` }) as KeeperAccountSpec);
  const options = { network: 'testnet', accounts, watch: { ordersEveryMs: 30_000, positionsEveryMs: 60_000, notifications: false }, maxClockSkewMs: 2_000, triggerWarnAt: 8 } as KeeperOptions;
  c.apply(options, []);
  return c;
}

describe('CadenceControl.claimSlot', () => {
  it('never hands a re-arm a slot the queued arms will still be using', () => {
    let queued = 0;
    const c = control(() => queued);
    const now = 1_000_000;
    // nothing queued: the latest free slot at or before the wish
    expect(c.claimSlot(now + 15_000, now)).toBeLessThanOrEqual(now + 15_000);
    expect(c.claimSlot(now + 15_000, now)).toBeGreaterThan(now + 14_000);
    // 500 arms queued at 100/s drain in 5 s: every slot claimed lies after that
    queued = 500;
    for (let i = 0; i < 200; i++) expect(c.claimSlot(now + 6_000, now)).toBeGreaterThanOrEqual(now + 5_000);
    // when no slot is left between the drain and the wish, the wish itself (unclaimed)
    queued = 2_000;
    expect(c.claimSlot(now + 6_000, now)).toBe(now + 6_000);
  });
});
