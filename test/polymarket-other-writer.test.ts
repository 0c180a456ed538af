/**
 * Another writer on a CLOB account's heartbeat chain (issue 37): the bot's own stray heartbeat, or
 * a bot that keeps heartbeating although the keeper owns the chain. The venue accepts the other
 * writer's beat and refuses the keeper's next one as stale, naming the current id; the keeper
 * recovers within its period, nothing is cancelled, and a lone keeper says that someone else is
 * beating (a replica would not: test/polymarket-fleet.test.ts). The venue's view is the simulator's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clobAccount, PM_MIN_HORIZON_MS, restOrders } from './support/clob.js';
import { startHarness, type Harness } from './support/harness.js';

const PM = '0x00000000000000000000000000000000000a11ce';
const PERIOD_MS = 5_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function keeper(): Promise<Harness> {
  const hh = await startHarness({ accounts: (sim) => [clobAccount(sim, 'pm-a', PM)], clobVenues: [{ name: 'pm' }] });
  restOrders(hh.sim, PM, 3);
  await hh.keeper.start();
  await hh.advance(20_000);
  return hh;
}

/** The other writer's beat: the chain's current id, accepted by the venue as the bot's would be. */
function strayBeat(hh: Harness): string {
  const current = hh.sim.clob.heartbeats.chain(PM)!.heartbeatId;
  const r = hh.sim.clob.heartbeats.beat(PM, current);
  if (!r.ok) throw new Error('the stray beat was refused');
  return r.heartbeatId;
}

/** Every 100 ms for `totalMs`: the venue's horizon and chain id; `each` runs before each step. */
async function watch(hh: Harness, totalMs: number, each: (tMs: number) => void = () => undefined) {
  const out: Array<{ tMs: number; horizonMs: number; id: string | null }> = [];
  for (let t = 0; t < totalMs; t += 100) {
    each(t);
    await hh.advance(100);
    const c = hh.sim.clob.heartbeats.chain(PM);
    out.push({ tMs: t + 100, horizonMs: c ? c.deadlineMs - hh.sim.clock.nowMs() : Number.NEGATIVE_INFINITY, id: c?.heartbeatId ?? null });
  }
  return out;
}

const warnings = (hh: Harness) => hh.logs.filter((l) => l.event === 'clob_other_writer');

describe('another writer on a CLOB chain', () => {
  it("the bot's one stray heartbeat: the keeper's next beat recovers the chain within one period, nothing cancelled, one warning", async () => {
    h = await keeper();
    expect(warnings(h)).toEqual([]);
    const theirs = strayBeat(h);
    const after = await watch(h, 15_000);
    // The first id after the stray one is the keeper's: it beat on the chain again.
    const recoveredAt = after.find((s) => s.id !== theirs)?.tMs;
    expect(recoveredAt).toBeDefined();
    expect(recoveredAt!).toBeLessThanOrEqual(PERIOD_MS);
    expect(Math.min(...after.map((s) => s.horizonMs))).toBeGreaterThanOrEqual(PM_MIN_HORIZON_MS);
    expect(h.sim.clob.fires()).toEqual([]);
    expect(h.sim.clob.openOrders(PM)).toHaveLength(3);
    expect(warnings(h)).toEqual([expect.objectContaining({ account: 'pm-a' })]);
    expect(h.keeper.status().accounts[0]!.armed).toBe(true);
  });

  it('a bot that keeps heartbeating every 2 s for a minute: the chain never lapses, the keeper stays armed, one warning a minute', async () => {
    h = await keeper();
    const both = await watch(h, 60_000, (t) => {
      if (t % 2_000 === 0) strayBeat(h!);
    });
    expect(Math.min(...both.map((s) => s.horizonMs))).toBeGreaterThanOrEqual(PM_MIN_HORIZON_MS);
    expect(h.sim.clob.fires()).toEqual([]);
    expect(h.sim.clob.openOrders(PM)).toHaveLength(3);
    expect(warnings(h).length).toBeGreaterThanOrEqual(1);
    expect(warnings(h).length).toBeLessThanOrEqual(2);
    // The bot stops; the keeper alone keeps the chain, as before.
    const alone = await watch(h, 30_000);
    expect(Math.min(...alone.map((s) => s.horizonMs))).toBeGreaterThanOrEqual(PM_MIN_HORIZON_MS);
    expect(h.sim.clob.fires()).toEqual([]);
    expect(h.keeper.status().accounts[0]!.armed).toBe(true);
  });
});
