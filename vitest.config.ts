import { defineConfig } from 'vitest/config';

/**
 * The budget timelines measure a cold start against bounds in virtual time, but the harness trades
 * real loopback I/O (and, for the shards, real processes and Redis) for it: run beside the suite's
 * other process tests on two cores they stretched (228 accounts armed at 30.5 s in CI against 23 s on
 * every quiet run). So each runs after the rest, alone: one project per file, in its own group.
 */
const TIMELINES = ['test/budget-one-window.test.ts', 'test/budget-tiers.test.ts', 'test/shared-budget-processes.test.ts'];

export default defineConfig({
  test: {
    exclude: ['node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // two cores: keep child-process and loopback tests from starving each other
    maxWorkers: 2,
    // The JSON report feeds the README's reliability table (scripts/reliability-table.mjs).
    reporters: ['default', ['json', { outputFile: 'artifacts/vitest.json' }]],
    projects: [
      {
        extends: true,
        test: { name: 'suite', include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'], exclude: ['node_modules/**', 'dist/**', ...TIMELINES] },
      },
      ...TIMELINES.map((file, i) => ({
        extends: true as const,
        test: { name: `timeline-${i + 1}`, include: [file], sequence: { groupOrder: i + 1 } },
      })),
    ],
  },
});
