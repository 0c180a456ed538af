/**
 * docs/rehearsal.md, as a test: a bot written with the venue's own SDK (`@nktkas/hyperliquid`) trades
 * on `dms-keeper simulate`, heartbeats a keeper that follows it (`liveness.heartbeat`, silence 5 s,
 * `cancel_soon`), then stops. Its orders must be gone within 13 s of its last accepted heartbeat:
 * 5 s of silence, the keeper's arm at the venue's earliest (5 s lead + 1 s margin), a poll's slack.
 *
 * Real processes and real time (the simulator and the keeper as built CLIs, the bot in this process
 * over loopback), because what is rehearsed is exactly that: three programs, one machine, no network.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExchangeClient, HttpTransport, InfoClient } from '@nktkas/hyperliquid';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { freePort, getJson, startCli, tempDir, writeKey, type Proc } from './support/cli.js';
import { seedAccounts, simAccount, startSim } from './support/keeper-process.js';

const procs: Proc[] = [];
const track = (p: Proc): Proc => {
  procs.push(p);
  return p;
};
afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
});

const TOKEN = 'rehearsal-token-0123456789abcdef';

async function heartbeat(ops: string): Promise<boolean> {
  try {
    const r = await fetch(`${ops}/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ accounts: ['desk'] }),
      signal: AbortSignal.timeout(1_000),
    });
    return r.status === 200;
  } catch {
    return false;
  }
}

describe('rehearsal: an SDK bot, the keeper following it, the switch firing', () => {
  it("the bot rests orders, heartbeats, stops: its orders are gone within 13 s of its last heartbeat", async () => {
    const sim = await startSim(track);
    const masterKey = generatePrivateKey();
    const master = privateKeyToAccount(masterKey);
    expect(await seedAccounts(sim.url, [master.address])).toEqual([]);

    // The keeper, following the bot.
    const dir = await tempDir('dmsk-rehearsal-');
    const creds = join(dir, 'creds');
    await writeKey(creds, 'desk.master', masterKey);
    await writeKey(creds, 'bot.token', TOKEN);
    const listen = await freePort();
    const ops = `http://127.0.0.1:${listen}`;
    const file = join(dir, 'keeper.yaml');
    await writeFile(
      file,
      `venue:
  network: testnet
  base_url: ${sim.url}
  exchange_url: ${sim.url}
  ws_url: ${sim.url.replace('http', 'ws')}
  request_timeout_ms: 1000
watch: { orders_every_seconds: 1, positions_every_seconds: 5 }
accounts:
  - name: desk
    address: "${master.address}"
    master_key: { file: desk.master }
    liveness:
      heartbeat: { token: { file: bot.token } }
      silence_seconds: 5
      on_silence: cancel_soon
state_dir: ${join(dir, 'state')}
server:
  listen: 127.0.0.1:${listen}
`,
    );
    const keeper = track(startCli(['run', '--config', file], { env: { CREDENTIALS_DIRECTORY: creds } }));

    // The bot, on the venue's SDK: its own agent, an outcome order on each side of the first outcome.
    const transport = new HttpTransport({ apiUrl: sim.url, isTestnet: true, timeout: 5_000 });
    const info = new InfoClient({ transport });
    const agent = privateKeyToAccount(generatePrivateKey());
    await new ExchangeClient({ transport, wallet: master, signatureChainId: '0x66eee' }).approveAgent({ agentAddress: agent.address, agentName: 'bot' });
    const bot = new ExchangeClient({ transport, wallet: agent });
    const { outcomes } = await info.outcomeMeta();
    const outcome = outcomes[0]!.outcome;
    await bot.order({
      orders: [
        { a: 100_000_000 + 10 * outcome, b: true, p: '0.41', s: '30', r: false, t: { limit: { tif: 'Gtc' } } },
        { a: 100_000_000 + 10 * outcome + 1, b: true, p: '0.52', s: '25', r: false, t: { limit: { tif: 'Gtc' } } },
      ],
      grouping: 'na',
    });
    expect((await info.openOrders({ user: master.address })).length).toBe(2);

    // Heartbeating until the keeper has armed the account.
    let lastAcceptedMs = 0;
    let beating = true;
    const loop = (async () => {
      while (beating) {
        if (await heartbeat(ops)) lastAcceptedMs = Date.now();
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const armedDeadline = Date.now() + 30_000;
    while ((await simAccount(sim.url, master.address)).schedule.timeMs === null && Date.now() < armedDeadline) await new Promise((r) => setTimeout(r, 200));
    expect((await simAccount(sim.url, master.address)).schedule.timeMs).not.toBeNull();
    await new Promise((r) => setTimeout(r, 3_000)); // a few heartbeats and re-arms while the bot trades
    expect((await info.openOrders({ user: master.address })).length).toBe(2);

    // The bot "crashes".
    beating = false;
    await loop;
    expect(lastAcceptedMs).toBeGreaterThan(0);
    let goneMs: number | undefined;
    while (goneMs === undefined && Date.now() - lastAcceptedMs < 20_000) {
      if ((await info.openOrders({ user: master.address })).length === 0) goneMs = Date.now() - lastAcceptedMs;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(goneMs, 'orders gone after the last heartbeat (ms)').toBeDefined();
    console.log(`rehearsal: the bot's 2 orders gone ${goneMs} ms after its last accepted heartbeat (bound 13,000)`);
    expect(goneMs!).toBeLessThanOrEqual(13_000);
    // Not before the silence: the keeper waited silence_seconds, then the venue's minimum lead.
    expect(goneMs!).toBeGreaterThanOrEqual(5_000);
    const venue = await simAccount(sim.url, master.address);
    expect(venue.schedule.triggersToday).toBe(1);

    // The keeper says what happened: the bot silent, the cancel fired.
    await keeper.waitFor(() => keeper.logs().some((l) => l.event === 'cancel_fired'), 10_000, 'cancel_fired');
    const status = (await getJson(`${ops}/status`)).body as { accounts: Array<{ name: string; bot?: { state?: string } }> };
    expect(status.accounts.find((a) => a.name === 'desk')?.bot?.state).toBe('silent');
  }, 60_000);
});
