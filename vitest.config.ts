import { defineConfig } from 'vitest/config';

/**
 * One project, every file in parallel on two workers. The keeper's timelines (test/support/harness.ts)
 * run in virtual time with no sockets, so their figures do not depend on what runs beside them: none
 * has to wait for a quiet machine.
 */
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // two cores: keep child-process and loopback tests from starving each other
    maxWorkers: 2,
    // The JSON report feeds the README's reliability table (scripts/reliability-table.mjs).
    reporters: ['default', ['json', { outputFile: 'artifacts/vitest.json' }]],
  },
});
