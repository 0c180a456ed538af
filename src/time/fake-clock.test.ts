import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TimerHandle } from './clock.js';
import { FakeClock } from './fake-clock.js';

describe('FakeClock', () => {
  it('runs due timers in due order, ties in the order set, never a cleared one, timers set by a timer included', async () => {
    const clock = new FakeClock(0);
    const ran: string[] = [];
    clock.setTimeout(() => ran.push('b@20'), 20);
    clock.setTimeout(() => ran.push('a@10'), 10);
    const cleared = clock.setTimeout(() => ran.push('cleared@15'), 15);
    clock.setTimeout(() => {
      ran.push('c@20');
      clock.setTimeout(() => ran.push('d@25 (set at 20)'), 5);
      clock.setTimeout(() => ran.push('late@40'), 20);
    }, 20);
    clock.clearTimeout(cleared);
    await clock.advance(30);
    expect(ran).toEqual(['a@10', 'b@20', 'c@20', 'd@25 (set at 20)']);
    expect(clock.monoMs()).toBe(30);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('agrees with a plain sort of the live timers, whatever is set and cleared between advances', async () => {
    // Each op: set a timer (delay), clear the k-th timer set so far, or advance.
    const op = fc.oneof(
      fc.record({ set: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ clear: fc.nat() }),
      fc.record({ advance: fc.integer({ min: 0, max: 40 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 300 }), async (ops) => {
        const clock = new FakeClock(0);
        const ran: number[] = [];
        const handles: TimerHandle[] = [];
        const model = new Map<number, number>(); // timer index -> due
        const expected: number[] = [];
        let now = 0;
        for (const o of ops) {
          if ('set' in o) {
            const idx = handles.length;
            handles.push(clock.setTimeout(() => ran.push(idx), o.set));
            model.set(idx, now + o.set);
          } else if ('clear' in o) {
            if (handles.length === 0) continue;
            const idx = o.clear % handles.length;
            clock.clearTimeout(handles[idx]!);
            model.delete(idx);
          } else {
            now += o.advance;
            const due = [...model].filter(([, d]) => d <= now).sort((a, b) => a[1] - b[1] || a[0] - b[0]);
            for (const [idx] of due) model.delete(idx);
            expected.push(...due.map(([idx]) => idx));
            await clock.advance(o.advance);
          }
        }
        expect(ran).toEqual(expected);
        expect(clock.pendingTimers()).toBe(model.size);
      }),
      { numRuns: 200 },
    );
  });
});
