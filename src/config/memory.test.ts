import { describe, expect, it } from 'vitest';
import { expectedLiveHeapMb, heapLimitMb, heapLimitProblem, nodeOptionsFor } from './memory.js';

describe('heap sizing', () => {
  it('is 1.5 x the expected live heap in 32 MB steps, never below 128 MB', () => {
    expect(heapLimitMb(0)).toBe(128);
    expect(heapLimitMb(1_000)).toBe(128);
    expect(heapLimitMb(10_000)).toBe(192); // live about 122 MB
    expect(heapLimitMb(50_000)).toBe(800); // live about 512 MB
    for (const n of [1, 10, 5_000, 20_000, 100_000]) expect(heapLimitMb(n)).toBeGreaterThanOrEqual(1.5 * expectedLiveHeapMb(n));
  });

  it('names the options to run with', () => {
    expect(nodeOptionsFor(10_000)).toBe('--max-old-space-size=192 --max-semi-space-size=4');
  });

  it('says when the limit in force is too small, and only then', () => {
    expect(heapLimitProblem(10_000, 4096 * 2 ** 20)).toBeUndefined();
    expect(heapLimitProblem(10_000, 200 * 2 ** 20)).toBeUndefined();
    expect(heapLimitProblem(50_000, 200 * 2 ** 20)).toMatch(/200 MB, below the 800 MB that 50000 accounts need; run Node with NODE_OPTIONS="--max-old-space-size=800 --max-semi-space-size=4"/);
  });
});
