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
