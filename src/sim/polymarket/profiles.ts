/**
 * How the simulated CLOB varies within what the venue has shown (as ../profiles.ts does for the
 * Hyperliquid side), by name, combinable with `+`:
 *
 *  - `pm_strict` (default): both heartbeat paths served, no scheduled restart.
 *  - `pm_weekly_restart`: the matching engine restarts every Monday 20:00 America/New_York: 90 s
 *    of 425 on the order routes and heartbeats, then 2 min post-only (maintenance.ts). What the
 *    heartbeat timeout does meanwhile is `restartHeartbeats` (texts.ts ASSUMPTIONS), `lapse` unless
 *    the name says otherwise:
 *  - `pm_weekly_restart_suspend`: the same with the timeout held during the restart.
 *  - `pm_heartbeats_v1_only`: only `POST /v1/heartbeats` exists (what the clients call);
 *    `POST /heartbeats` is 404.
 *  - `pm_heartbeats_docs_only`: only `POST /heartbeats` exists (what the API reference shows).
 */
import { DEFAULT_WEEKLY_RESTART, type WeeklyRestart } from './maintenance.js';
import { ASSUMPTIONS, type RestartHeartbeatMode } from './texts.js';

export const CLOB_PROFILES = ['pm_strict', 'pm_weekly_restart', 'pm_weekly_restart_suspend', 'pm_heartbeats_v1_only', 'pm_heartbeats_docs_only'] as const;

export const HEARTBEAT_PATHS = ['/v1/heartbeats', '/heartbeats'] as const;
export type HeartbeatPath = (typeof HEARTBEAT_PATHS)[number];

export interface ClobProfile {
  readonly name: string;
  readonly weekly: WeeklyRestart | undefined;
  readonly restartHeartbeats: RestartHeartbeatMode;
  readonly heartbeatPaths: readonly HeartbeatPath[];
}

export class UnknownClobProfileError extends Error {
  readonly code = 'SIM_UNKNOWN_CLOB_PROFILE' as const;
}

export function parseClobProfile(name: string): ClobProfile {
  let weekly: WeeklyRestart | undefined;
  let restartHeartbeats: RestartHeartbeatMode = ASSUMPTIONS.restartHeartbeats;
  let heartbeatPaths: readonly HeartbeatPath[] = HEARTBEAT_PATHS;
  for (const part of name.split('+')) {
    switch (part) {
      case 'pm_strict':
        break;
      case 'pm_weekly_restart':
        weekly = DEFAULT_WEEKLY_RESTART;
        break;
      case 'pm_weekly_restart_suspend':
        weekly = DEFAULT_WEEKLY_RESTART;
        restartHeartbeats = 'suspend';
        break;
      case 'pm_heartbeats_v1_only':
        heartbeatPaths = ['/v1/heartbeats'];
        break;
      case 'pm_heartbeats_docs_only':
        heartbeatPaths = ['/heartbeats'];
        break;
      default:
        throw new UnknownClobProfileError(`unknown CLOB profile '${part}'; one of: ${CLOB_PROFILES.join(', ')} (combine with '+')`);
    }
  }
  return { name, weekly, restartHeartbeats, heartbeatPaths };
}
