import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MIN_NODE_VERSION, nodeVersionProblem } from './node-version.js';

describe('nodeVersionProblem', () => {
  it('matches engines.node in package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${MIN_NODE_VERSION.replace(/\.0$/, '')}`);
  });

  it.each([
    ['18.20.4', true],
    ['20.18.3', true],
    ['v20.19.0', false],
    ['20.20.2', false],
    ['22.1.0', false],
  ])('%s refused: %s', (v, refused) => {
    const p = nodeVersionProblem(v);
    expect(p !== null).toBe(refused);
    if (p) expect(p).toMatch(/^needs Node\.js >= 20\.19, this is v\d+\.\d+\.\d+ /);
  });
});
