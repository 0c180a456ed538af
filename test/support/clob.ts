import type { KeeperAccountSpec } from '../../src/account/keeper-types.js';
import type { LivenessSpec } from '../../src/liveness/liveness.js';
import type { Simulator } from '../../src/sim/simulator.js';
import type { OpenOrder } from '../../src/sim/polymarket/orders.js';
import { clobSwitch } from '../../src/config/venues.js';
import { switchInMs } from '../../src/config/types.js';

/** The CLOB timelines' venue settings: the config's defaults (heartbeat every 5 s, minimum horizon 2 s). */
export const PM_MIN_HORIZON_MS = 2_000;

/**
 * An account on the harness's CLOB venue `pm`, as from-config.ts builds one: its venue's switch, its
 * credentials the simulator issues for the address, a silent bot's heartbeats simply stopped.
 */
export function clobAccount(sim: Simulator, name: string, address: string, opts: { liveness?: LivenessSpec; replica?: number; coveredBy?: string[] } = {}): KeeperAccountSpec {
  const creds = sim.clob.createAccount(address);
  return {
    name,
    address,
    agentName: '-',
    validDays: 30,
    ...(opts.replica !== undefined ? { replica: opts.replica } : {}),
    ...(opts.coveredBy ? { coveredBy: opts.coveredBy } : {}),
    identity: `${address}|clob:pm`,
    switch: { ...switchInMs(clobSwitch({ heartbeatEverySeconds: 5, minHorizonSeconds: PM_MIN_HORIZON_MS / 1000 })), ...(opts.liveness ? { onSilence: 'stop_rearming' as const } : {}) },
    ...(opts.liveness ? { liveness: { ...opts.liveness, onSilence: 'stop_rearming' as const } } : {}),
    clob: { venue: 'pm', credentials: { key: async () => creds.key, secret: async () => creds.secret, passphrase: async () => creds.passphrase } },
  };
}

/** Resting orders on the CLOB for an address, placed straight into the simulator's book (a bot's orders). */
export function restOrders(sim: Simulator, address: string, n: number): void {
  for (let i = 0; i < n; i++) {
    const order: OpenOrder = {
      id: `0x${address.slice(-8)}${String(i).padStart(4, '0')}`,
      status: 'LIVE',
      owner: 'test',
      maker_address: address,
      market: '0xmarket',
      asset_id: '1',
      side: 'BUY',
      original_size: '10',
      size_matched: '0',
      price: '0.5',
      associate_trades: [],
      outcome: 'Yes',
      created_at: Math.floor(sim.clock.nowMs() / 1000),
      expiration: '0',
      order_type: 'GTC',
    };
    sim.clob.orders.place(address.toLowerCase(), order);
  }
}
