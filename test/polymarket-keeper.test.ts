/**
 * One keeper, two venues (issue 37): accounts on the outcome service's venue (a scheduled cancel)
 * and on Polymarket's CLOB (a heartbeat), against the simulator's two venues in virtual time. The
 * CLOB's view is the venue's own (its chains, its fires, its resting orders), never the keeper's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { demoAddress, demoMasterKey } from '../src/sim/venue/demo.js';
import type { Simulator } from '../src/sim/simulator.js';
import type { KeeperAccountSpec } from '../src/account/keeper-types.js';
import type { LivenessSpec } from '../src/liveness/liveness.js';
import { clobAccount, PM_MIN_HORIZON_MS, restOrders } from './support/clob.js';
import { account, startHarness, type Harness } from './support/harness.js';

const TOKEN = 'bot-token-0123456789abcdef';
const SILENCE_MS = 5_000;
const PM_TIMEOUT_MS = 10_000;
const HL_MIN_HORIZON_MS = 20_000;

const PM1 = '0x00000000000000000000000000000000000a11ce';
const PM2 = '0x0000000000000000000000000000000000000b0b';
const HL1 = demoAddress('alice');
const HL2 = demoAddress('bob');

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const botLiveness = (): LivenessSpec => ({ silenceMs: SILENCE_MS, onSilence: 'cancel_soon', heartbeat: { token: async () => TOKEN } });


/** The CLOB's horizon for an address, as the venue holds it (null: no chain running). */
function clobHorizonMs(sim: Simulator, address: string): number | null {
  const c = sim.clob.heartbeats.chain(address);
  return c ? c.deadlineMs - sim.clock.nowMs() : null;
}

function accounts(sim: Simulator): KeeperAccountSpec[] {
  return [
    account('hl-bot', HL1, demoMasterKey('alice'), { liveness: botLiveness() }, { onSilence: 'cancel_soon' }),
    account('hl-other', HL2, demoMasterKey('bob')),
    clobAccount(sim, 'pm-bot', PM1, { liveness: botLiveness() }),
    clobAccount(sim, 'pm-other', PM2),
  ];
}

async function harness(): Promise<Harness> {
  return startHarness({ accounts, clobVenues: [{ name: 'pm' }] });
}

interface Sample {
  t: number;
  pm: Record<string, number | null>;
  hl: Record<string, number | null>;
  pmOrders: Record<string, number>;
  hlOrders: Record<string, number>;
}

/** Advances `totalMs` in 100 ms steps; the bot (naming one account on each venue) heartbeats every second while `alive()`. */
async function run(hh: Harness, totalMs: number, alive: () => boolean, lastBeat: { at: number }): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let step = 0; step < totalMs / 100; step++) {
    if (step % 10 === 0 && alive()) {
      const r = hh.keeper.heartbeat({ authorization: `Bearer ${TOKEN}`, body: JSON.stringify({ accounts: ['hl-bot', 'pm-bot'] }) });
      expect(r.status).toBe(200);
      lastBeat.at = hh.clock.monoMs();
    }
    await hh.advance(100);
    out.push({
      t: hh.clock.monoMs(),
      pm: { [PM1]: clobHorizonMs(hh.sim, PM1), [PM2]: clobHorizonMs(hh.sim, PM2) },
      hl: { [HL1]: hh.venueHorizonMs(HL1), [HL2]: hh.venueHorizonMs(HL2) },
      pmOrders: { [PM1]: hh.sim.clob.openOrders(PM1).length, [PM2]: hh.sim.clob.openOrders(PM2).length },
      hlOrders: { [HL1]: hh.sim.state.openOrders(HL1).length, [HL2]: hh.sim.state.openOrders(HL2).length },
    });
  }
  return out;
}

const min = (xs: Array<number | null>): number => Math.min(...xs.map((x) => x ?? Number.NEGATIVE_INFINITY));

describe('one keeper, two venues (Polymarket CLOB heartbeat + scheduled cancel)', () => {
  it('keeps both venues armed; the bot falls silent: its CLOB orders are gone within silence + timeout + 1 s and its outcome-venue orders within 13 s, the others lose nothing; back: both re-armed within 2 s', async () => {
    h = await harness();
    restOrders(h.sim, PM1, 3);
    restOrders(h.sim, PM2, 2);
    let alive = true;
    const lastBeat = { at: 0 };
    await h.keeper.start();
    const warm = await run(h, 40_000, () => alive, lastBeat);

    // Steady: every CLOB horizon at or above its minimum once its chain began, and no lapse.
    const steady = warm.filter((s) => s.t >= 10_000);
    expect(min(steady.flatMap((s) => [s.pm[PM1]!, s.pm[PM2]!]))).toBeGreaterThanOrEqual(PM_MIN_HORIZON_MS);
    expect(min(steady.flatMap((s) => [s.hl[HL1]!, s.hl[HL2]!]))).toBeGreaterThanOrEqual(HL_MIN_HORIZON_MS);
    expect(h.sim.clob.fires()).toEqual([]);
    expect(h.sim.clob.openOrders(PM1)).toHaveLength(3);
    const hlBotOrders = h.sim.state.openOrders(HL1).length;
    expect(hlBotOrders).toBeGreaterThan(0);
    const status = h.keeper.status();
    expect(status.accounts.map((a) => [a.name, a.venue, a.armed])).toEqual([
      ['hl-bot', 'hyperliquid', true],
      ['hl-other', 'hyperliquid', true],
      ['pm-bot', 'pm', true],
      ['pm-other', 'pm', true],
    ]);
    const pmStatus = status.accounts.find((a) => a.name === 'pm-bot')!;
    expect(pmStatus.open_orders).toBe(3);
    expect(pmStatus.horizon_seconds).toBeLessThanOrEqual(PM_TIMEOUT_MS / 1000);

    // The bot stops.
    alive = false;
    const silentFrom = lastBeat.at;
    const silent = await run(h, 30_000, () => alive, lastBeat);
    const pmGoneAt = silent.find((s) => s.pmOrders[PM1] === 0)?.t;
    const hlGoneAt = silent.find((s) => s.hlOrders[HL1] === 0)?.t;
    expect(pmGoneAt).toBeDefined();
    expect(hlGoneAt).toBeDefined();
    expect(pmGoneAt! - silentFrom).toBeLessThanOrEqual(SILENCE_MS + PM_TIMEOUT_MS + 1_000);
    expect(hlGoneAt! - silentFrom).toBeLessThanOrEqual(13_000);
    const fires = h.sim.clob.fires();
    expect(fires.map((f) => f.address)).toEqual([PM1]);
    expect(fires[0]!.cancelledOrderIds).toHaveLength(3);
    // The others lose nothing.
    expect(h.sim.clob.openOrders(PM2)).toHaveLength(2);
    expect(min(silent.map((s) => s.pm[PM2]!))).toBeGreaterThanOrEqual(PM_MIN_HORIZON_MS);
    expect(min(silent.map((s) => s.hl[HL2]!))).toBeGreaterThanOrEqual(HL_MIN_HORIZON_MS);
    // The keeper saw the fire on the CLOB and says so.
    await h.advance(35_000);
    expect(h.keeper.status().accounts.find((a) => a.name === 'pm-bot')!.last_cancel_fired).not.toBeNull();

    // Back: both venues re-armed within 2 s of its first heartbeat.
    alive = true;
    const back = await run(h, 5_000, () => alive, lastBeat);
    const t0 = back[0]!.t - 100;
    const pmArmedAt = back.find((s) => (s.pm[PM1] ?? 0) > 0)?.t;
    const hlArmedAt = back.find((s) => (s.hl[HL1] ?? 0) > HL_MIN_HORIZON_MS)?.t;
    expect(pmArmedAt! - t0).toBeLessThanOrEqual(2_000);
    expect(hlArmedAt! - t0).toBeLessThanOrEqual(2_000);
  });
});
