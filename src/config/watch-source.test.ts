import { describe, expect, it } from 'vitest';
import { toAppConfig } from '../app/from-config.js';
import { minimal, parse, paths, problemsOf } from './test-support.js';

/** `watch.source` (issue 20): where the keeper's reads of orders and positions come from. */
describe('watch.source', () => {
  it('defaults to the service, as before', async () => {
    const c = await parse(minimal());
    expect(c.watch.source).toBe('service');
    expect(toAppConfig(c, {}).keeper.watch.source).toBe('service');
  });

  it.each(['service', 'venue', 'service_then_venue'] as const)('takes %s and hands it to the keeper', async (source) => {
    const c = await parse(minimal(`watch:\n  source: ${source}`));
    expect(c.watch.source).toBe(source);
    expect(toAppConfig(c, {}).keeper.watch.source).toBe(source);
  });

  it('refuses anything else, naming the YAML path', async () => {
    const problems = await problemsOf(minimal('watch:\n  source: exchange'));
    expect(paths(problems)).toEqual(['watch.source']);
  });
});

/** `watch.perp_dexes`: builder-deployed perp dexes (HIP-3) the venue lists only when asked by name. */
describe('watch.perp_dexes', () => {
  it('defaults to none, and hands the list to the keeper', async () => {
    expect((await parse(minimal())).watch.perpDexes).toEqual([]);
    const c = await parse(minimal('watch:\n  source: venue\n  perp_dexes: [xyz, flx, km2]'));
    expect(c.watch.perpDexes).toEqual(['xyz', 'flx', 'km2']);
    expect(toAppConfig(c, {}).keeper.watch.perpDexes).toEqual(['xyz', 'flx', 'km2']);
  });

  it.each([
    ['the empty name', "['']", 'watch.perp_dexes[0]', /first perp dex .* always read/],
    ['upper case', '[XYZ]', 'watch.perp_dexes[0]', /1 to 6 lower-case letters or digits/],
    ['too long', '[abcdefg]', 'watch.perp_dexes[0]', /1 to 6 lower-case letters or digits/],
    ['a coin, not a dex', "['xyz:TSLA']", 'watch.perp_dexes[0]', /1 to 6 lower-case letters or digits/],
    ['not a string', '[12]', 'watch.perp_dexes[0]', /string/],
    ['a duplicate', '[xyz, flx, xyz]', 'watch.perp_dexes[2]', /duplicate of perp_dexes\[0\] \(xyz\)/],
    ['more than 16', `[${Array.from({ length: 17 }, (_, i) => `d${i}`).join(', ')}]`, 'watch.perp_dexes', /at most 16/],
    ['not a list', 'xyz', 'watch.perp_dexes', /array|list/],
  ])('refuses %s, naming the YAML path', async (_what, value, path, message) => {
    const problems = await problemsOf(minimal(`watch:\n  perp_dexes: ${value}`));
    expect(paths(problems)).toEqual([path]);
    expect(problems[0]!.message).toMatch(message);
  });

  it('16 is allowed', async () => {
    const list = Array.from({ length: 16 }, (_, i) => `d${i}`);
    expect((await parse(minimal(`watch:\n  perp_dexes: [${list.join(', ')}]`))).watch.perpDexes).toEqual(list);
  });
});

/** A keeper that needs no service (issue 20): `watch.source: venue` and no `venue.base_url`. */
describe('no venue.base_url', () => {
  const noService = (extra: string) =>
    ['accounts:', '  - name: a1', '    address: "0x00000000000000000000000000000000000000A1"', '    master_key: { env: K1 }', extra].join('\n');

  it('loads with watch.source venue when every account arms through the exchange endpoint', async () => {
    const c = await parse(noService('watch: { source: venue }\nswitch: { path: exchange }'));
    expect(c.venue.simulator).toBe(false);
    expect(c.venue.baseUrl).toBeUndefined();
    expect(c.venue.exchangeUrl).toBe('https://api.hyperliquid-testnet.xyz');
    expect(toAppConfig(c, {}).venue.baseUrl).toBe('');
  });

  it('needs switch.path exchange: the top-level path when accounts inherit it, each override that is not', async () => {
    let problems = await problemsOf(noService('watch: { source: venue }'));
    expect(paths(problems)).toEqual(['switch.path']);
    expect(problems[0]!.message).toMatch(/exchange.*venue\.base_url/);
    problems = await problemsOf(
      [
        'watch: { source: venue }',
        'switch: { path: exchange }',
        'accounts:',
        '  - name: a1',
        '    address: "0x00000000000000000000000000000000000000A1"',
        '    master_key: { env: K1 }',
        '    switch: { path: rest_then_exchange }',
        '  - name: a2',
        '    address: "0x00000000000000000000000000000000000000A2"',
        '    master_key: { env: K2 }',
      ].join('\n'),
    );
    expect(paths(problems)).toEqual(['accounts[0].switch.path']);
    // the top-level path is not the problem when every account overrides it
    problems = await problemsOf(['watch: { source: venue }', 'accounts:', '  - name: a1', '    address: "0x00000000000000000000000000000000000000A1"', '    master_key: { env: K1 }', '    switch: { path: rest }'].join('\n'));
    expect(paths(problems)).toEqual(['accounts[0].switch.path']);
  });

  it.each(['service', 'service_then_venue'])('is still required when reads use the service (watch.source %s)', async (source) => {
    const problems = await problemsOf(noService(`watch: { source: ${source} }\nswitch: { path: exchange }`));
    expect(paths(problems)).toEqual(['venue.base_url']);
    expect(problems[0]!.message).toMatch(/watch\.source: venue/);
  });
});
