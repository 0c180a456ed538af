/**
 * The baseline: a naive keeper. Every period it re-arms every account at once (one burst), with no
 * budget awareness, retrying a failure after a fixed 1 s sleep until the next period. It signs like
 * the real one (same keys, same venue, signatures checked).
 * Usage: node dist/bench/naive-keeper.js --url BASE --accounts N --period-seconds P --deadline-seconds D
 */
import { parseArgs } from 'node:util';
import { Agent, fetch } from 'undici';
import { buildScheduleCancel } from '../src/venue/actions.js';
import { toJson } from '../src/venue/json.js';
import { signerFromPrivateKey } from '../src/venue/signing/signer.js';
import { benchKey } from './keys.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { url: { type: 'string' }, accounts: { type: 'string' }, 'period-seconds': { type: 'string' }, 'deadline-seconds': { type: 'string' } },
  });
  const n = Number(values.accounts);
  const periodMs = Number(values['period-seconds']) * 1000;
  const deadlineMs = Number(values['deadline-seconds']) * 1000;
  const url = `${values.url}/v1/trading/orders/schedule-cancel`;
  // A plain client pool, as a simple bot would have (256 sockets).
  const dispatcher = new Agent({ connections: 256 });
  const signers = Array.from({ length: n }, (_, i) => signerFromPrivateKey(benchKey(i)));
  let nonce = Date.now();
  let stopped = false;
  process.on('SIGTERM', () => {
    stopped = true;
    process.exit(0);
  });

  const arm = async (i: number, until: number): Promise<void> => {
    while (!stopped && Date.now() < until) {
      try {
        const body = await buildScheduleCancel({ signer: signers[i]!, network: 'testnet', nonce: ++nonce, timeMs: Date.now() + deadlineMs });
        const r = await fetch(url, { method: 'POST', body: toJson(body), headers: { 'content-type': 'application/json' }, dispatcher });
        const text = await r.text();
        if (r.status === 200 && text.includes('"ok"')) return;
      } catch {
        // fall through to the fixed sleep
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  };

  for (;;) {
    const start = Date.now();
    await Promise.all(signers.map((_, i) => arm(i, start + periodMs)));
    const left = start + periodMs - Date.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
