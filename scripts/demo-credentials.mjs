// Writes the simulator's demo master keys as credential files (mode 0600) for `npm start`.
// These keys are PUBLIC (keccak256 of fixed strings, see src/sim/venue/demo.ts): they exist only
// so the example config runs offline against the embedded simulator, and protect nothing.
//   node scripts/demo-credentials.mjs [DIR]      (default state/demo-credentials)
import { mkdir, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_ACCOUNTS, demoAddress, demoMasterKey } from '../dist/src/sim/venue/demo.js';
import { CredentialStore } from '../dist/src/sim/polymarket/credentials.js';

/** Writes the demo's key files and heartbeat tokens into `dir` (created 0700). */
export async function writeDemoCredentials(dir) {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const a of DEMO_ACCOUNTS) {
    if (a.parent) continue; // a subaccount is signed for by its master
    const file = join(dir, `${a.name}.master`);
    await writeFile(file, `${demoMasterKey(a.name)}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
  }
  // alice's and bob's CLOB credentials: the ones the embedded simulator issues for their addresses
  // (deterministic, as the venue's derive-api-key), so public too.
  const clob = new CredentialStore();
  for (const name of ['alice', 'bob']) {
    const c = clob.derive(demoAddress(name), 0);
    for (const [part, value] of [['key', c.key], ['secret', c.secret], ['passphrase', c.passphrase]]) {
      const file = join(dir, `${name}.clob-${part}`);
      await writeFile(file, `${value}\n`, { mode: 0o600 });
      await chmod(file, 0o600);
    }
  }
  // The demo bots' heartbeat tokens (docs/liveness.md): public too, fixed strings for the demo only.
  for (const bot of ['bot-mm', 'bot-arb']) {
    const file = join(dir, `${bot}.token`);
    await writeFile(file, `demo-${bot}-token-public-not-secret\n`, { mode: 0o600 });
    await chmod(file, 0o600);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? 'state/demo-credentials';
  await writeDemoCredentials(dir);
  console.error(`demo credentials (public throwaway keys) in ${dir}`);
}
