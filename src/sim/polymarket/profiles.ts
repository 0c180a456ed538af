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
 *  - `pm_heartbeat_error_msg`: a refused heartbeat names its text under `error_msg` rather than
 *    `error` (`{"error_msg": "Invalid Heartbeat ID", "heartbeat_id": ...}`): the venue's own example
 *    shows `error`, several third-party clients parse `error_msg`; a reader must take either.
 */
import { DEFAULT_WEEKLY_RESTART, type WeeklyRestart } from './maintenance.js';
import { ASSUMPTIONS, type RestartHeartbeatMode } from './texts.js';

export const CLOB_PROFILES = ['pm_strict', 'pm_weekly_restart', 'pm_weekly_restart_suspend', 'pm_heartbeats_v1_only', 'pm_heartbeats_docs_only', 'pm_heartbeat_error_msg'] as const;

export const HEARTBEAT_PATHS = ['/v1/heartbeats', '/heartbeats'] as const;
export type HeartbeatPath = (typeof HEARTBEAT_PATHS)[number];

export interface ClobProfile {
  readonly name: string;
  readonly weekly: WeeklyRestart | undefined;
  readonly restartHeartbeats: RestartHeartbeatMode;
  readonly heartbeatPaths: readonly HeartbeatPath[];
  /** The key a refused heartbeat's text is under. */
  readonly heartbeatErrorKey: 'error' | 'error_msg';
}

export class UnknownClobProfileError extends Error {
  readonly code = 'SIM_UNKNOWN_CLOB_PROFILE' as const;
}

export function parseClobProfile(name: string): ClobProfile {
  let weekly: WeeklyRestart | undefined;
  let restartHeartbeats: RestartHeartbeatMode = ASSUMPTIONS.restartHeartbeats;
  let heartbeatPaths: readonly HeartbeatPath[] = HEARTBEAT_PATHS;
  let heartbeatErrorKey: ClobProfile['heartbeatErrorKey'] = 'error';
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
      case 'pm_heartbeat_error_msg':
        heartbeatErrorKey = 'error_msg';
        break;
      default:
        throw new UnknownClobProfileError(`unknown CLOB profile '${part}'; one of: ${CLOB_PROFILES.join(', ')} (combine with '+')`);
    }
  }
  return { name, weekly, restartHeartbeats, heartbeatPaths, heartbeatErrorKey };
}
