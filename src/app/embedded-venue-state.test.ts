import { mkdir, mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_VENUE_STATE, freshEmbeddedVenueState } from './embedded-venue-state.js';

describe('freshEmbeddedVenueState', () => {
  it("empties the last embedded venue's state (agents, pacing, triggers) and leaves the rest of state_dir alone", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'dmsk-embedded-'));
    const old = join(stateDir, EMBEDDED_VENUE_STATE);
    await mkdir(join(old, 'agents'), { recursive: true });
    await writeFile(join(old, 'agents', 'mm-main.dms-keeper.json'), '{}');
    await writeFile(join(old, 'budget.json'), '{}');
    await mkdir(join(stateDir, 'demo-credentials'));
    await writeFile(join(stateDir, 'demo-credentials', 'alice.master'), 'k', { mode: 0o600 });
    await writeFile(join(stateDir, 'budget.json'), 'a real venue keeper would own this');

    const dir = await freshEmbeddedVenueState(stateDir);
    expect(dir).toBe(old);
    expect(await readdir(dir)).toEqual([]);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await readdir(stateDir)).sort()).toEqual(['budget.json', 'demo-credentials', EMBEDDED_VENUE_STATE]);
    expect(await readdir(join(stateDir, 'demo-credentials'))).toEqual(['alice.master']);
  });

  it('creates state_dir itself on a first start', async () => {
    const stateDir = join(await mkdtemp(join(tmpdir(), 'dmsk-embedded-')), 'state');
    expect(await readdir(await freshEmbeddedVenueState(stateDir))).toEqual([]);
  });
});
