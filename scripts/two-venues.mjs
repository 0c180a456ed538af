// One bot, two venues, as built processes (issue 37's "done when"): the built keeper on its embedded
// simulator with two accounts on the outcome venue and two on the Polymarket CLOB, one demo bot
// heartbeating the keeper for one account on each venue. The bot falls silent, then comes back.
// Measured from the venue's side (the simulator's admin API), every 100 ms:
//   - when each venue's orders of the bot's accounts are gone, after the bot's last heartbeat;
//   - that the other two accounts lose nothing;
//   - when both of the bot's accounts are armed again after its first heartbeat back.
//   node scripts/two-venues.mjs            (after npm run build)
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { fetch } from 'undici';
import { writeDemoCredentials } from './demo-credentials.mjs';
import { demoAddress } from '../dist/src/sim/venue/demo.js';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const SILENT_AFTER_S = 25;
const SILENT_FOR_S = 30;
const SILENCE_S = 5;
const dir = await mkdtemp(join(tmpdir(), 'dmsk-two-venues-'));
const creds = join(dir, 'credentials');
await writeDemoCredentials(creds);
const port = 20000 + Math.floor(Math.random() * 20000);
const config = `
venue: { simulator: true }
venues:
  pm: { kind: polymarket_clob }
accounts:
  - { name: hl-bot, address: "${demoAddress('alice')}", master_key: { file: alice.master }, liveness: { heartbeat: { token: { file: bot-arb.token } }, silence_seconds: ${SILENCE_S} } }
  - { name: hl-other, address: "${demoAddress('bob')}", master_key: { file: bob.master } }
  - { name: pm-bot, venue: pm, address: "${demoAddress('alice')}", clob_credentials: { key: { file: alice.clob-key }, secret: { file: alice.clob-secret }, passphrase: { file: alice.clob-passphrase } }, liveness: { heartbeat: { token: { file: bot-arb.token } }, silence_seconds: ${SILENCE_S} } }
  - { name: pm-other, venue: pm, address: "${demoAddress('bob')}", clob_credentials: { key: { file: bob.clob-key }, secret: { file: bob.clob-secret }, passphrase: { file: bob.clob-passphrase } } }
demo:
  bots:
    - { accounts: [hl-bot, pm-bot], silent_after_seconds: ${SILENT_AFTER_S}, silent_for_seconds: ${SILENT_FOR_S} }
state_dir: ${join(dir, 'state')}
server: { listen: 127.0.0.1:${port} }
log: { level: info }
`;
await writeFile(join(dir, 'config.yaml'), config);
const keeper = spawn(process.execPath, [join(root, 'dist/src/main.js'), 'run', '--config', join(dir, 'config.yaml')], { env: { ...process.env, CREDENTIALS_DIRECTORY: creds }, stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
keeper.stdout.on('data', (d) => (out += d));
const line = async (re) => {
  for (;;) {
    const m = out.split('\n').map((l) => { try { return JSON.parse(l); } catch { return null; } }).find((o) => o && re(o));
    if (m) return m;
    await sleep(50);
  }
};
const sim = (await line((o) => o.event === 'simulator_started')).base_url.replace(/\/v1\/?$/, '');
const get = async (path) => (await fetch(`${sim}${path}`)).json();
const hlOrders = async (name) => (await get(`/_sim/state?account=${demoAddress(name)}`)).account.openOrders;
const pmOrders = async (name) => (await get(`/_sim/clob/orders?address=${demoAddress(name)}`)).orders.length;
const status = async () => (await fetch(`http://127.0.0.1:${port}/status`)).json();

const silentAt = await line((o) => o.event === 'demo_bot_crash');
// The bot beats every second: its last heartbeat was at most a second before it fell silent.
const lastBeatMs = Date.parse(silentAt.time) - 1000;
const seen = { hl: null, pm: null, hlOther: null, pmOther: null };
const t0 = Date.now();
while (Date.now() - t0 < (SILENT_FOR_S - 2) * 1000) {
  const [h, p, ho, po] = await Promise.all([hlOrders('alice'), pmOrders('alice'), hlOrders('bob'), pmOrders('bob')]);
  if (seen.hl === null && h === 0) seen.hl = Date.now() - lastBeatMs;
  if (seen.pm === null && p === 0) seen.pm = Date.now() - lastBeatMs;
  seen.hlOther = Math.min(seen.hlOther ?? ho, ho);
  seen.pmOther = Math.min(seen.pmOther ?? po, po);
  await sleep(100);
}
const backMs = Date.parse((await line((o) => o.event === 'demo_bot_back')).time);
let armedBoth = null;
while (Date.now() - backMs < 10_000) {
  const s = await status();
  const a = Object.fromEntries(s.accounts.map((x) => [x.name, x]));
  if (a['hl-bot'].armed && a['pm-bot'].armed && a['hl-bot'].bot?.state === 'alive') { armedBoth = Date.now() - backMs; break; }
  await sleep(100);
}
keeper.kill('SIGTERM');
console.log(JSON.stringify({ silence_seconds: SILENCE_S, outcome_orders_gone_after_last_heartbeat_ms: seen.hl, clob_orders_gone_after_last_heartbeat_ms: seen.pm, other_accounts_lowest_orders: { outcome: seen.hlOther, clob: seen.pmOther }, both_armed_after_back_ms: armedBoth }));
