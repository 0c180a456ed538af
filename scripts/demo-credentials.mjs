// Writes the simulator's demo master keys as credential files (mode 0600) for `npm start`.
// These keys are PUBLIC (keccak256 of fixed strings, see src/sim/venue/demo.ts): they exist only
// so the example config runs offline against the embedded simulator, and protect nothing.
import { mkdir, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { DEMO_ACCOUNTS, demoMasterKey } from '../dist/src/sim/venue/demo.js';

const dir = process.argv[2] ?? 'state/demo-credentials';
await mkdir(dir, { recursive: true, mode: 0o700 });
for (const a of DEMO_ACCOUNTS) {
  if (a.parent) continue; // a subaccount is signed for by its master
  const file = join(dir, `${a.name}.master`);
  await writeFile(file, `${demoMasterKey(a.name)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}
// The demo bots' heartbeat tokens (docs/liveness.md): public too, fixed strings for the demo only.
for (const bot of ['bot-mm', 'bot-arb']) {
  const file = join(dir, `${bot}.token`);
  await writeFile(file, `demo-${bot}-token-public-not-secret\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}
console.error(`demo credentials (public throwaway keys) in ${dir}`);
