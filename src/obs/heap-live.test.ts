import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { watchLiveHeap } from './heap-live.js';

describe('dms_keeper_heap_live_bytes', () => {
  it('is 0 until a full collection, then the heap a full collection left', async () => {
    const registry = new Registry();
    const w = watchLiveHeap(registry);
    try {
      expect(await registry.metrics()).toContain('dms_keeper_heap_live_bytes 0');
      // A full collection on demand, without starting the test process with --expose-gc.
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      gc();
      await new Promise((r) => setTimeout(r, 10)); // gc entries are delivered asynchronously
      const live = Number(/dms_keeper_heap_live_bytes (\d+)/.exec(await registry.metrics())?.[1]);
      expect(live).toBeGreaterThan(1_000_000);
      expect(Math.abs(live - getHeapStatistics().used_heap_size)).toBeLessThan(50 * 2 ** 20);
      expect(live).toBeLessThan(2 ** 31);
    } finally {
      w.stop();
    }
  });
});
