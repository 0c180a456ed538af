import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configReference, referenceProblems } from './reference.js';

describe('docs/configuration.md', () => {
  it('has a meaning for every key of the schema, and none for keys it lacks', () => {
    expect(referenceProblems()).toEqual([]);
  });

  it('is what the schema generates (node scripts/config-reference.mjs --write after a change)', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(doc).toBe(configReference());
  });

  it('carries types, defaults and env names from the schema', () => {
    const doc = configReference();
    expect(doc).toContain('| `switch.deadline_seconds` | integer >= 1 | `60` | `DMS_KEEPER_SWITCH__DEADLINE_SECONDS` |');
    expect(doc).toContain('| `log.format` | `json` \\| `pretty` | `json` | `DMS_KEEPER_LOG__FORMAT` |');
    expect(doc).toContain('| `accounts[].address` | address (`0x` + 40 hex digits) | **required** |');
  });
});
