import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { Gauge, type Registry } from 'prom-client';

/**
 * `dms_keeper_heap_live_bytes`: the V8 heap in use right after the last full (mark-compact)
 * collection, i.e. what the keeper really keeps. `nodejs_heap_size_used_bytes` also counts garbage
 * not yet collected, so it cannot size a heap limit or tell a leak from a busy minute; this can
 * (docs/operations.md, "Memory").
 */
export function watchLiveHeap(registry: Registry): { stop(): void } {
  const gauge = new Gauge({ name: 'dms_keeper_heap_live_bytes', help: 'V8 heap in use right after the last full garbage collection (live data); 0 until the first one', registers: [registry] });
  gauge.set(0);
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gauge.set(getHeapStatistics().used_heap_size);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return { stop: () => observer.disconnect() };
}
