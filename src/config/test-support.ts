import { ConfigError, type ConfigProblem } from './errors.js';
import { parseConfig } from './load.js';
import type { Config } from './types.js';

/**
 * Shared by the config tests (not shipped API). Keys come from env variables by default, so most
 * tests need no files; the file tests build their own temp dirs.
 */

/** K1 from VENUE.md's test vectors: a public test key. */
export const KEY1 = '0x0123456789012345678901234567890123456789012345678901234567890123';
export const KEY2 = '0xe908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e';

export const BASE_ENV = { K1: KEY1, K2: KEY2 } as const;

/** A minimal valid production config; `extra` is appended as more top-level YAML. */
export function minimal(extra = ''): string {
  return [
    'venue:',
    '  base_url: https://svc.example.com',
    'accounts:',
    '  - name: a1',
    '    address: "0x00000000000000000000000000000000000000A1"',
    '    master_key: { env: K1 }',
    extra,
  ].join('\n');
}

export async function parse(text: string, env: Record<string, string | undefined> = {}): Promise<Config> {
  return parseConfig(text, { env: { ...BASE_ENV, ...env }, baseDir: '/nonexistent-config-dir' });
}

/** The problems a config yields; fails the test when it loads. */
export async function problemsOf(text: string, env: Record<string, string | undefined> = {}): Promise<ConfigProblem[]> {
  try {
    await parse(text, env);
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  throw new Error('expected a ConfigError, but the config loaded');
}

export function paths(problems: readonly ConfigProblem[]): string[] {
  return problems.map((p) => p.path);
}
