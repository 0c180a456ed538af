/**
 * How much heap a keeper needs, and the V8 limits to run it with. Measured by `npm run bench`
 * (docs/benchmark-results.md, "Memory per account"): the live heap is about a fixed part plus a
 * share per account. Node's default heap limit is a quarter of the machine's memory or more, and
 * V8 grows the heap under a cold start's allocation rate long before it collects: without a limit
 * a 10,000-account keeper peaked at 550 MB of RSS for 110 MB of live data. With one, V8 collects
 * sooner and the peak follows the live heap.
 *
 * The limit is 1.5 times the expected live heap: room for the cold start (thousands of requests
 * queued at once) and for a scrape of every series, without the collector running back to back.
 * Too small a limit kills the process with "heap out of memory", and its schedules then fire:
 * `run` logs an error at start when the limit in force is below what the config needs.
 */

/** Live heap with no accounts (modules, code, metrics registry), MB. Measured: 20 to 24 MB. */
export const HEAP_BASE_MB = 24;
/**
 * Live heap per account, KB. Measured 9.8 KB at 10,000 accounts before signing moved to native code
 * and the per-account abort controllers went; 6.3 KB since; 4.9 KB at 10,000 and 5.3 KB at 50,000
 * on 2026-12-07 (docs/benchmarks.md, "What a keeper holds per account"). Kept at 10: a cold start
 * holds thousands of queued requests on top, the config's parse at start needs several times the
 * file's size while it lasts, and a limit too tight costs the lag tail (128 MB at 10,000 accounts
 * gave a p99 of 500 ms).
 */
export const HEAP_PER_ACCOUNT_KB = 10;
/**
 * The young generation's semi-space, MB. Node's default (16 MB, three of them) is sized for
 * throughput; the keeper's garbage is short-lived and small, and 4 MB cost no measurable CPU.
 */
export const SEMI_SPACE_MB = 4;

/** The live heap expected for `accounts` accounts, MB. */
export function expectedLiveHeapMb(accounts: number): number {
  return HEAP_BASE_MB + (Math.max(0, accounts) * HEAP_PER_ACCOUNT_KB) / 1024;
}

/** `--max-old-space-size` for `accounts` accounts: 1.5 x the live heap, in steps of 32 MB, at least 128. */
export function heapLimitMb(accounts: number): number {
  return Math.max(128, Math.ceil((1.5 * expectedLiveHeapMb(accounts)) / 32) * 32);
}

/** The Node.js options to run a keeper of `accounts` accounts with (NODE_OPTIONS). */
export function nodeOptionsFor(accounts: number): string {
  return `--max-old-space-size=${heapLimitMb(accounts)} --max-semi-space-size=${SEMI_SPACE_MB}`;
}

/**
 * The V8 heap limit in force is below what `accounts` accounts need: the words for the log line,
 * or undefined when it is enough. `heapSizeLimitBytes`: v8.getHeapStatistics().heap_size_limit
 * (old space plus the young generation, so compared with a little slack).
 */
export function heapLimitProblem(accounts: number, heapSizeLimitBytes: number): string | undefined {
  const haveMb = heapSizeLimitBytes / 2 ** 20;
  const needMb = heapLimitMb(accounts);
  if (haveMb >= needMb) return undefined;
  return `the V8 heap limit is ${Math.floor(haveMb)} MB, below the ${needMb} MB that ${accounts} accounts need; run Node with NODE_OPTIONS="${nodeOptionsFor(accounts)}" (an out-of-memory crash stops every re-arm)`;
}
