import { spawn } from 'node:child_process';

/**
 * systemd readiness and watchdog through `systemd-notify` (Node cannot open the notify datagram
 * socket itself, and the npm sd-notify packages are native addons). Active only when systemd set
 * NOTIFY_SOCKET; the watchdog is pinged only from the keeper's healthy loop, at half the interval
 * systemd asked for.
 */
export interface Notifier {
  ready(): void;
  stopping(): void;
  /** Call on every healthy tick; pings at most every WATCHDOG_USEC / 2. */
  healthy(nowMs: number): void;
  status(text: string): void;
}

type Spawn = (cmd: string, args: string[]) => void;

const defaultSpawn: Spawn = (cmd, args) => {
  const child = spawn(cmd, args, { stdio: 'ignore', env: process.env });
  child.on('error', () => undefined);
  child.unref();
};

export function createNotifier(env: Record<string, string | undefined>, run: Spawn = defaultSpawn): Notifier {
  if (!env.NOTIFY_SOCKET) {
    return { ready: () => undefined, stopping: () => undefined, healthy: () => undefined, status: () => undefined };
  }
  const usec = Number(env.WATCHDOG_USEC);
  const pingEveryMs = Number.isFinite(usec) && usec > 0 ? usec / 1000 / 2 : undefined;
  let lastPingMs = Number.NEGATIVE_INFINITY;
  return {
    ready: () => run('systemd-notify', ['--ready']),
    stopping: () => run('systemd-notify', ['STOPPING=1']),
    status: (text) => run('systemd-notify', [`STATUS=${text.replace(/\n/g, ' ').slice(0, 200)}`]),
    healthy: (nowMs) => {
      if (pingEveryMs === undefined || nowMs - lastPingMs < pingEveryMs) return;
      lastPingMs = nowMs;
      run('systemd-notify', ['WATCHDOG=1']);
    },
  };
}
