import { open } from 'node:fs/promises';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';

/**
 * Writes a fresh agent private key: `0x` + 64 hex digits and a newline, mode 0600, created
 * exclusively (an existing file is never overwritten unless `force`). Returns the address only:
 * the key itself is never printed.
 */
export async function keygen(out: string, force: boolean, generate: () => `0x${string}` = generatePrivateKey): Promise<{ address: string }> {
  const key = generate();
  const fh = await open(out, force ? 'w' : 'wx', 0o600);
  try {
    // open() applies the mode only on creation; a forced overwrite must tighten it too.
    await fh.chmod(0o600);
    await fh.writeFile(`${key}\n`, 'utf8');
  } finally {
    await fh.close();
  }
  return { address: privateKeyToAddress(key).toLowerCase() };
}
