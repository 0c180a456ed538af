import type { KeeperAccountSpec } from '../../src/account/keeper-types.js';
import type { LivenessSpec } from '../../src/liveness/liveness.js';
import type { Simulator } from '../../src/sim/simulator.js';
import { clobSwitch } from '../../src/config/venues.js';
import { switchInMs } from '../../src/config/types.js';

/** The CLOB timelines' venue settings: the config's defaults (heartbeat every 5 s, minimum horizon 2 s). */
export const PM_MIN_HORIZON_MS = 2_000;

/**
 * An account on the harness's CLOB venue `pm`, as from-config.ts builds one: its venue's switch, its
 * credentials the simulator issues for the address, a silent bot's heartbeats simply stopped.
 */
export function clobAccount(sim: Simulator, name: string, address: string, opts: { liveness?: LivenessSpec; replica?: number } = {}): KeeperAccountSpec {
  const creds = sim.clob.createAccount(address);
  return {
    name,
    address,
    agentName: '-',
    validDays: 30,
    ...(opts.replica !== undefined ? { replica: opts.replica } : {}),
    identity: `${address}|clob:pm`,
    switch: { ...switchInMs(clobSwitch({ heartbeatEverySeconds: 5, minHorizonSeconds: PM_MIN_HORIZON_MS / 1000 })), ...(opts.liveness ? { onSilence: 'stop_rearming' as const } : {}) },
    ...(opts.liveness ? { liveness: { ...opts.liveness, onSilence: 'stop_rearming' as const } } : {}),
    clob: { venue: 'pm', credentials: { key: async () => creds.key, secret: async () => creds.secret, passphrase: async () => creds.passphrase } },
  };
}
