import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keygen } from './keygen.js';

describe('keygen', () => {
  it('writes 0x + 64 hex + newline with mode 0600 and returns only the address', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dmsk-keygen-'));
    const out = join(dir, 'agent.key');
    const r = await keygen(out, false);
    const text = await readFile(out, 'utf8');
    expect(text).toMatch(/^0x[0-9a-f]{64}\n$/);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    expect(r.address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(JSON.stringify(r)).not.toContain(text.trim().slice(2));
  });

  it('refuses to overwrite without --force, and tightens the mode with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dmsk-keygen-'));
    const out = join(dir, 'agent.key');
    await writeFile(out, 'old', { mode: 0o644 });
    await expect(keygen(out, false)).rejects.toMatchObject({ code: 'EEXIST' });
    await keygen(out, true);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
  });
});
