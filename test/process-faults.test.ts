/**
 * Process faults with the built CLI (child processes, real time, loopback): a state directory the
 * keeper cannot write, and a restart loop against a venue with a small schedule-cancel budget.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoAddress } from '../src/sim/venue/demo.js';
import { getJson, startCli, tempDir, tracker } from './support/cli.js';
import { keeperConfig, simAccount, startSim } from './support/keeper-process.js';

const BOB = demoAddress('bob');

// Each test has its own simulator, keeper and directories: the three run at once (the restart
// loop's window, WINDOW_S, leaves room for ten starts on a busy machine).
describe.concurrent('process faults', () => {
  it('a state directory that cannot be written (a path under a regular file) :: the keeper keeps arming, reports the write failure, does not crash', async ({ onTestFinished }) => {
    const track = tracker(onTestFinished);
    const sim = await startSim(track);
    const dir = await tempDir();
    const blocker = join(dir, 'not-a-directory');
    await writeFile(blocker, 'x');
    // ENOTDIR for every write, even as root (chmod does not stop root; this does)
    const cfg = await keeperConfig(sim.url, { stateDir: join(blocker, 'state') });
    const k = track(startCli(['run', '--config', cfg.file], { env: { CREDENTIALS_DIRECTORY: cfg.creds } }));
    await k.waitFor(() => k.logs().filter((l) => l.event === 'arm' && l.result === 'ok').length >= 3, 20_000, 'three arms');
    expect(k.logs().some((l) => l.event === 'provision_warning' && String(l.msg).includes('not saved'))).toBe(true);
    const metrics = await getJson(`${cfg.ops}/metrics`);
    expect(metrics.text).toMatch(/^dms_keeper_state_write_errors_total\{reason="io"\} [1-9]/m);
    expect((await getJson(`${cfg.ops}/readyz`)).status).toBe(200);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  }, 40_000);

});

describe.concurrent('corrupt state', () => {
  it('every state file corrupted while the keeper was stopped (agent, trigger counts, budget log) :: it starts and re-arms within 20 s, one warning and one count per file', async ({ onTestFinished }) => {
    const track = tracker(onTestFinished);
    const { readdir, writeFile: write, mkdir } = await import('node:fs/promises');
    const sim = await startSim(track);
    const dir = await tempDir();
    const stateDir = join(dir, 'state');
    const cfg = await keeperConfig(sim.url, { stateDir });
    const first = track(startCli(['run', '--config', cfg.file], { env: { CREDENTIALS_DIRECTORY: cfg.creds } }));
    await first.waitFor(() => first.logs().filter((l) => l.event === 'arm' && l.result === 'ok').length >= 2, 20_000, 'armed');
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    const agents = (await readdir(join(stateDir, 'agents'))).map((f) => join(stateDir, 'agents', f));
    expect(agents.length).toBe(1);
    await mkdir(stateDir, { recursive: true });
    for (const f of [...agents, join(stateDir, 'triggers.json'), join(stateDir, 'budget.json')]) await write(f, '{"truncated": ');

    const t0 = Date.now();
    const k = track(startCli(['run', '--config', cfg.file], { env: { CREDENTIALS_DIRECTORY: cfg.creds } }));
    await k.waitFor(() => k.logs().some((l) => l.event === 'arm' && l.result === 'ok'), 20_000, 're-armed');
    expect(Date.now() - t0).toBeLessThan(20_000);
    const acct = await simAccount(sim.url, BOB);
    expect(acct.schedule.timeMs! - acct.nowMs).toBeGreaterThan(6_000);
    const warnings = k.logs().filter((l) => l.event === 'state_unreadable');
    expect(warnings.map((l) => l.file).sort()).toEqual(['agent', 'budget', 'triggers']);
    // each names its file and what the keeper did instead
    expect(warnings.map((l) => String(l.problem)).sort()).toEqual([expect.stringContaining(agents[0]!), expect.stringContaining('budget.json'), expect.stringContaining('triggers.json')]);
    expect(warnings.every((l) => typeof l.action === 'string' && String(l.action).length > 0)).toBe(true);
    const metrics = (await getJson(`${cfg.ops}/metrics`)).text;
    for (const file of ['agent', 'triggers', 'budget']) expect(metrics).toMatch(new RegExp(`^dms_keeper_state_unreadable_total\\{file="${file}"\\} 1$`, 'm'));
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  }, 60_000);
});

/**
 * The venue's schedule-cancel window in the restart loop: ten starts must fall inside one window
 * for the budget to bind. Three minutes, not one: ten starts took 86 to 116 s on two cores loaded
 * by other work, and a one-minute window then let arms of two windows add up past the 8.
 */
const WINDOW_S = 180;

describe.concurrent('process faults', () => {
  it('a restart loop (killed 10 times within the window) against a venue granting 8 arms per 3 minutes :: start-up pacing keeps every arm inside the budget (no 429)', async ({ onTestFinished }) => {
    const track = tracker(onTestFinished);
    const sim = await startSim(track);
    const limit = await fetch(`${sim.url}/_sim/rate-limits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ scheduleCancel: { limit: 8, windowSeconds: WINDOW_S } }),
    });
    expect(limit.status).toBe(200);
    // re-armed every 30 s: 6 arms a window, inside the 8
    const cfg = await keeperConfig(sim.url, { deadline: 60, rearm: 30, minHorizon: 20, scheduleCancelPerMinute: 8, scheduleCancelWindowSeconds: WINDOW_S });
    let rateLimited = 0;
    let arms = 0;
    let paced = 0;
    // Without pacing each start would arm at once: 10 arms in well under the window, over the 8.
    // Each life lasts at least LIFE_MS from its spawn, however fast the keeper starts: the 10 lives
    // then span 40 s or more, past the 22.5 s the venue's budget grants per arm (180 s / 8), so a
    // keeper that paced its arms right armed at least twice. Lives timed from 'started' alone lasted
    // 2 s each once the command was bundled (it starts in half the CPU): one arm in 20 s, correctly.
    const LIFE_MS = 4_000;
    for (let i = 0; i < 10; i++) {
      const bornAt = Date.now();
      const k = track(startCli(['run', '--config', cfg.file], { env: { CREDENTIALS_DIRECTORY: cfg.creds } }));
      await k.waitFor(() => k.logs().some((l) => l.event === 'started'), 20_000, 'started');
      // 1.5 s at least: time for an unpaced arm, and for the keeper's loop to save the budget log after it
      await new Promise((r) => setTimeout(r, Math.max(1_500, LIFE_MS - (Date.now() - bornAt))));
      if (k.logs().some((l) => l.event === 'budget_carried_over')) paced++;
      k.child.kill('SIGKILL');
      await k.exited;
      rateLimited += k.logs().filter((l) => l.event === 'arm' && l.result === 'rate_limited').length;
      arms += k.logs().filter((l) => l.event === 'arm' && l.result === 'ok').length;
    }
    expect(rateLimited).toBe(0);
    expect(paced).toBeGreaterThanOrEqual(9);
    expect(arms).toBeGreaterThanOrEqual(2);
    expect(arms).toBeLessThanOrEqual(8);
    // and the account stayed protected throughout: its last deadline is still ahead
    const acct = await simAccount(sim.url, BOB);
    expect(acct.schedule.timeMs! - acct.nowMs).toBeGreaterThan(20_000);
  }, 120_000);
});
