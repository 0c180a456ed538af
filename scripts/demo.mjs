// The demo: what `npm start` runs (after its build), and the container image's demo:
//   node scripts/demo.mjs
//   docker run --rm -p 127.0.0.1:9464:9464 --entrypoint node dms-keeper scripts/demo.mjs
// Writes the demo's public throwaway keys (scripts/demo-credentials.mjs) to
// $STATE_DIRECTORY/demo-credentials (./state/demo-credentials without it, as npm start does), then
// runs the keeper on config/dms-keeper.example.yaml against its embedded simulator, with readable
// logs (DMS_KEEPER_LOG__FORMAT=json for JSON). The keeper runs in this process, so it gets the
// signals itself (Ctrl-C, docker stop) and its exit code is this script's; and Node.js starts once
// (keys and keeper in one process: about a second less to a ready demo on a busy 2-core machine).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeDemoCredentials } from './demo-credentials.mjs';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const credentials = join(process.env.STATE_DIRECTORY?.split(':')[0] || 'state', 'demo-credentials');
await writeDemoCredentials(credentials);
process.env.CREDENTIALS_DIRECTORY = credentials;
process.env.DMS_KEEPER_LOG__FORMAT ||= 'pretty';
const main = join(root, 'dist', 'src', 'main.js');
process.argv = [process.argv[0], main, 'run', '--config', join(root, 'config', 'dms-keeper.example.yaml')];
await import(main);
