/**
 * One venue port: nothing in src/ reaches the venue except through src/venue/port.ts, so every
 * request is admitted by the shared budget, held after a 429 and sampled for the venue clock in
 * one place. The simulator (its own server) and tests are exempt.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [p] : [];
  });
}

/** Who may do what: the port builds the clients (REST, exchange, info) and admits requests; the clients use the transport. */
const RULES: Array<{ what: string; pattern: RegExp; allowed: string[] }> = [
  { what: 'builds a REST, exchange or info client', pattern: /new (RestClient|ExchangeClient|InfoClient)\(/, allowed: ['src/venue/port.ts'] },
  { what: 'admits a request through the budget', pattern: /\bscheduler\.run\(|\.run\(\{ kind: '(arm|read)'/, allowed: ['src/venue/port.ts'] },
  { what: 'sends on the HTTP transport', pattern: /transport\.request\(/, allowed: ['src/venue/rest.ts', 'src/venue/exchange.ts', 'src/venue/info.ts'] },
];

describe('architecture', () => {
  const files = sources(join(ROOT, 'src')).filter((f) => !relative(ROOT, f).startsWith('src/sim/'));

  it.each(RULES)('only $allowed $what', ({ pattern, allowed }) => {
    const offenders = files.filter((f) => pattern.test(readFileSync(f, 'utf8'))).map((f) => relative(ROOT, f));
    expect(offenders.filter((f) => !allowed.includes(f))).toEqual([]);
    expect(offenders.length).toBeGreaterThan(0); // the rule still matches something: not vacuous
  });
});
