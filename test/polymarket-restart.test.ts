/**
 * The CLOB's weekly matching-engine restart (Monday 20:00 New York time, about 90 s of 425 on the
 * order endpoints, then 2 minutes post-only), with both readings of what it does to heartbeats,
 * which the venue does not document (docs/polymarket.md, "The weekly restart"). The keeper's
 * decided behaviour: a 425 is a failed heartbeat, retried on the switch's schedule; once the venue
 * answers again it beats at once (a new chain when the old one lapsed). Measured here in virtual time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clobAccount } from './support/clob.js';
import { gauge, startHarness, type Harness } from './support/harness.js';

const PM = '0x00000000000000000000000000000000000a11ce';
const RESTART_MS = 90_000;
/** Once the engine answers again, the keeper's next accepted heartbeat comes within this (measured: 63 and 64 ms after the first answer, both readings). */
const BACK_WITHIN_MS = 5_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});


/** Runs through a restart started now; returns when the chain's last beat first moved after the engine came back. */
async function throughRestart(hh: Harness): Promise<{ restartAtMs: number; backAtMs: number; firstBeatAfterMs: number | null }> {
  const restartAtMs = hh.sim.clock.nowMs();
  hh.sim.clob.triggerRestart();
  let backAtMs = Number.NaN;
  let firstBeatAfterMs: number | null = null;
  for (let t = 0; t < RESTART_MS + 60_000; t += 100) {
    await hh.advance(100);
    const now = hh.sim.clock.nowMs();
    if (Number.isNaN(backAtMs) && hh.sim.clob.phase() !== 'restarting') backAtMs = now;
    const c = hh.sim.clob.heartbeats.chain(PM);
    if (!Number.isNaN(backAtMs) && firstBeatAfterMs === null && c && c.lastBeatMs >= backAtMs) firstBeatAfterMs = c.lastBeatMs;
  }
  return { restartAtMs, backAtMs, firstBeatAfterMs };
}

describe('the weekly matching-engine restart', () => {
  it('lapse (the stricter reading, the simulator default): the venue cancels 10 s into the restart, whatever any keeper does; the keeper beats again within 5 s of the engine answering, on a new chain', async () => {
    h = await startHarness({ accounts: (sim) => [clobAccount(sim, 'pm', PM)], clobVenues: [{ name: 'pm' }], sim: { clobProfile: 'pm_weekly_restart' } });
    await h.keeper.start();
    await h.advance(30_000);
    expect(h.sim.clob.fires()).toEqual([]);
    const before = h.sim.clob.heartbeats.chain(PM)!;
    const r = await throughRestart(h);
    const fires = h.sim.clob.fires(PM);
    expect(fires).toHaveLength(1);
    expect(fires[0]!.atMs - before.lastBeatMs).toBeLessThanOrEqual(15_000);
    expect(r.backAtMs - r.restartAtMs).toBeGreaterThanOrEqual(RESTART_MS);
    expect(r.firstBeatAfterMs).not.toBeNull();
    expect(r.firstBeatAfterMs! - r.backAtMs).toBeLessThanOrEqual(BACK_WITHIN_MS);
    expect(h.sim.clob.heartbeats.chain(PM)!.heartbeatId).not.toBe(before.heartbeatId);
    expect(h.keeper.status().accounts[0]!.armed).toBe(true);
  });

  it('suspend (the timer stops while the engine restarts): nothing fires; the keeper beats within 5 s of the engine answering, inside the 10 s the chain has left', async () => {
    h = await startHarness({ accounts: (sim) => [clobAccount(sim, 'pm', PM)], clobVenues: [{ name: 'pm' }], sim: { clobProfile: 'pm_weekly_restart_suspend' } });
    await h.keeper.start();
    await h.advance(30_000);
    const r = await throughRestart(h);
    expect(h.sim.clob.fires()).toEqual([]);
    // Retried on the switch's backoff while the engine answers 425: 49 requests over the 90 s
    // (measured), about one every 1.8 s for the account, not a hot loop.
    expect(gauge(await h.metricsText(), 'dms_keeper_venue_requests_total{endpoint="POST /v1/heartbeats",code="425"}')).toBeLessThanOrEqual(60);
    expect(r.firstBeatAfterMs).not.toBeNull();
    expect(r.firstBeatAfterMs! - r.backAtMs).toBeLessThanOrEqual(BACK_WITHIN_MS);
    expect(h.keeper.status().accounts[0]!.armed).toBe(true);
  });
});
