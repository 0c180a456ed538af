import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { CredentialStore } from '../sim/polymarket/credentials.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';
import { buildPlan, formatPlan } from '../cli/check-config-plan.js';
import { KEY1, KEY2 } from './test-support.js';
import { demoAddress } from '../sim/venue/demo.js';

const EXAMPLE = fileURLToPath(new URL('../../config/dms-keeper.example.yaml', import.meta.url));

/** The example names these files in $CREDENTIALS_DIRECTORY (`npm start` writes the demo keys there). */
async function demoCredentials(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dmsk-example-'));
  for (const [name, key] of [
    ['alice.master', KEY1],
    ['bob.master', KEY2],
    ['carol.master', KEY2],
  ] as const) {
    const p = join(dir, name);
    await writeFile(p, `${key}\n`, { mode: 0o600 });
    await chmod(p, 0o600);
  }
  const clob = new CredentialStore();
  for (const name of ['alice', 'bob']) {
    const c = clob.derive(demoAddress(name), 0);
    for (const part of ['key', 'secret', 'passphrase'] as const) {
      const p = join(dir, `${name}.clob-${part}`);
      await writeFile(p, `${c[part]}\n`, { mode: 0o600 });
    }
  }
  for (const bot of ['bot-mm', 'bot-arb']) {
    const p = join(dir, `${bot}.token`);
    await writeFile(p, `demo-${bot}-token-public-not-secret\n`, { mode: 0o600 });
    await chmod(p, 0o600);
  }
  return dir;
}

describe('config/dms-keeper.example.yaml', () => {
  it('loads against the simulator with the four demo accounts and two on its Polymarket CLOB', async () => {
    const creds = await demoCredentials();
    const c = await loadConfig({ path: EXAMPLE, env: { CREDENTIALS_DIRECTORY: creds } });
    expect(c.venue).toEqual({ simulator: true, network: 'testnet', requestTimeoutMs: 5000, chainField: 'hyperliquidChain' });
    expect(c.accounts.map((a) => a.name)).toEqual(['mm-main', 'mm-sub', 'arb-desk', 'small-desk', 'pm-arb', 'pm-mm']);
    expect(c.accounts.map((a) => a.venue)).toEqual(['hyperliquid', 'hyperliquid', 'hyperliquid', 'hyperliquid', 'polymarket', 'polymarket']);
    expect(c.accounts.map((a) => a.masterKey?.kind === 'file' && a.masterKey.path)).toEqual([
      join(creds, 'alice.master'),
      join(creds, 'alice.master'), // the subaccount's agent is approved by its main account's master
      join(creds, 'bob.master'),
      join(creds, 'carol.master'),
      false, // a CLOB account: its L2 credentials sign, no master key
      false,
    ]);
    // the addresses are the simulator's demo accounts, so `npm start` arms them
    expect(c.accounts.map((a) => a.address)).toEqual(['alice', 'alice-sub', 'bob', 'carol', 'bob', 'alice'].map(demoAddress));
    // the CLOB credentials the demo writes are the ones the embedded simulator issues for the address
    const issued = new CredentialStore().derive(demoAddress('bob'), 0);
    expect((await readFile(join(creds, 'bob.clob-secret'), 'utf8')).trim()).toBe(issued.secret);
    expect(c.venues).toEqual([{ name: 'polymarket', kind: 'polymarket_clob', clobUrl: 'https://clob.polymarket.com', heartbeatEverySeconds: 5, minHorizonSeconds: 2, requestTimeoutMs: 1000, rateLimit: { requests: 9000, perSeconds: 10 } }]);
    for (const a of c.accounts) expect(a.address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(c.accounts[2]!.switch).toMatchObject({ deadlineSeconds: 30, rearmEverySeconds: 5, minHorizonSeconds: 10 });
    expect(c.accounts[2]!.switchOverrides).toEqual(['deadlineSeconds', 'rearmEverySeconds', 'minHorizonSeconds']);
    expect(c.server).toEqual({ listen: '127.0.0.1:9464', host: '127.0.0.1', port: 9464 });
    expect(c.stateDir).toBe('./state');
    expect(c.shard).toEqual({ index: 0, count: 1, replication: 1 });
    // the demo's bots: mm-main and mm-sub share one, arb-desk's falls silent 90 s in, for a minute
    expect(c.accounts.map((a) => a.liveness?.silenceSeconds ?? null)).toEqual([5, 5, 5, null, 5, 5]);
    // one bot trades both venues: its heartbeat names an account on each
    expect(c.demo).toEqual({ bots: [{ accounts: ['mm-main', 'mm-sub', 'pm-mm'] }, { accounts: ['arb-desk', 'pm-arb'], silentAfterSeconds: 90, silentForSeconds: 60 }] });

    const plan = buildPlan(c);
    expect(plan.canHoldEveryHorizon).toBe(true);
    expect(plan.armsPerMinute).toBe(4 + 4 + 12 + 4);
    expect(plan.clobVenues).toEqual([expect.objectContaining({ name: 'polymarket', accounts: 2, beatsPerMinute: 24, holds: true })]);
    expect(formatPlan(plan)).toContain('venue polymarket (polymarket_clob): 2 account(s), a heartbeat every 5 s');
    expect(formatPlan(plan)).toContain('OK: the budget holds every horizon.');
  });

  it('documents every top-level key and the env override rule', async () => {
    const text = await readFile(EXAMPLE, 'utf8');
    for (const key of ['venue:', 'switch:', 'watch:', 'rate_limits:', 'accounts:', 'shard:', 'server:', 'log:']) {
      expect(text).toMatch(new RegExp(`^${key}`, 'm'));
    }
    // shown commented out at its default, so $STATE_DIRECTORY (systemd) is not overridden
    expect(text).toMatch(/^# state_dir: \.\/state$/m);
    expect(text).toContain('DMS_KEEPER_SWITCH__DEADLINE_SECONDS');
    expect(text).not.toMatch(/0x[0-9a-fA-F]{64}/); // no key material in the reference config
  });
});
