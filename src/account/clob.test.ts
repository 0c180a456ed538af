import { describe, expect, it } from 'vitest';
import { OTHER_WRITER_WARN_EVERY_MS, warnOtherWriter } from './clob.js';

describe('warnOtherWriter: when a chain that moved on without us is worth saying', () => {
  it('a lone keeper (no coverage, or covered by itself alone) warns at the first, then once a minute', () => {
    expect(warnOtherWriter(undefined, undefined, 1_000)).toBe(true);
    expect(warnOtherWriter(['shard-0'], undefined, 1_000)).toBe(true);
    expect(warnOtherWriter(undefined, 1_000, 1_000 + OTHER_WRITER_WARN_EVERY_MS - 1)).toBe(false);
    expect(warnOtherWriter(undefined, 1_000, 1_000 + OTHER_WRITER_WARN_EVERY_MS)).toBe(true);
  });

  it("replicas meet each other's ids by design: never a warning when other instances cover the account", () => {
    expect(warnOtherWriter(['shard-0', 'shard-1'], undefined, 1_000)).toBe(false);
    expect(warnOtherWriter(['a', 'b', 'c'], 0, 10 * OTHER_WRITER_WARN_EVERY_MS)).toBe(false);
  });
});
