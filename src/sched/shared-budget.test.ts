/**
 * The shared budget against a real Redis (Debian's redis-server on a loopback port, started here):
 * two instances with one name spend one budget; Redis killed, both keep going on their local
 * share; Redis back, the shared budget resumes. Real time (Bottleneck's clustering runs on Redis's
 * clock and real timers), a few seconds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { findRedisServer, noRedisMessage, startRedis, type TestRedis } from '../../test/support/redis.js';
import type { WindowSpec } from './admission.js';
import { SharedBudget, type BudgetMode } from './shared-budget.js';

const SPEC: WindowSpec = { limit: 40, windowMs: 2_000 }; // 20 per second
const binary = findRedisServer();
if (!binary) process.stderr.write(noRedisMessage());

let redis: TestRedis | undefined;
const budgets: SharedBudget[] = [];
afterEach(async () => {
  await Promise.all(budgets.splice(0).map((b) => b.stop()));
  await redis?.stop();
  redis = undefined;
});

function instance(url: string, name = 'shard-pair') {
  const local: WindowSpec[] = [];
  const modes: BudgetMode[] = [];
  const b = new SharedBudget({ redisUrl: url, name, specs: { global: SPEC }, fallbackShare: 0.5, setLocalSpec: (_s, spec) => local.push(spec), onModeChange: (m) => modes.push(m), maxWaitMs: 10_000 });
  budgets.push(b);
  return { b, local, modes };
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

// In CI a missing redis-server fails the run (startRedis throws) instead of skipping it.
describe.skipIf(!binary && !process.env.CI)('SharedBudget on a real Redis', () => {
  it('two instances with one name spend one budget; Redis killed: local shares; Redis back: shared again', async () => {
    redis = await startRedis(binary ? { binary } : {});
    const a = instance(redis.url);
    const c = instance(redis.url);
    await until(() => a.b.mode() === 'shared' && c.b.mode() === 'shared', 5_000);
    expect([a.b.mode(), c.b.mode()]).toEqual(['shared', 'shared']);
    expect(a.local.at(-1)).toEqual(SPEC); // shared: the whole budget locally, the bucket caps the sum

    // 60 tokens each, at once: 120 in all through a bucket of 20 per second.
    const times: number[] = [];
    const t0 = Date.now();
    await Promise.all([a, c].flatMap((x) => Array.from({ length: 60 }, () => x.b.take(['global'], 'arm').then(() => times.push(Date.now() - t0)))));
    times.sort((x, y) => x - y);
    const elapsed = times.at(-1)!;
    expect(a.b.timeouts + c.b.timeouts).toBe(0);
    // Never more than the venue's window allows in any 2 s span (the bucket's bound).
    for (let i = 0; i < times.length; i++) {
      const inSpan = times.filter((t) => t >= times[i]! && t < times[i]! + SPEC.windowMs).length;
      expect(inSpan).toBeLessThanOrEqual(SPEC.limit);
    }
    // and close to the whole budget: 120 tokens at 20/s less the starting bucket.
    expect(elapsed).toBeGreaterThan(4_000);
    expect(elapsed).toBeLessThan(8_000);

    await redis.kill();
    await until(() => a.b.mode() === 'local_fallback' && c.b.mode() === 'local_fallback', 5_000);
    expect(a.local.at(-1)).toEqual({ limit: 20, windowMs: 2_000 }); // half each
    const t1 = Date.now();
    await a.b.take(['global'], 'arm'); // no Redis: goes at once, on the local share
    expect(Date.now() - t1).toBeLessThan(100);

    await redis.restart();
    await until(() => a.b.mode() === 'shared' && c.b.mode() === 'shared', 10_000);
    expect([a.b.mode(), c.b.mode()]).toEqual(['shared', 'shared']);
    expect(a.modes).toEqual(['local_fallback', 'shared', 'local_fallback', 'shared']);
  }, 40_000);
});
