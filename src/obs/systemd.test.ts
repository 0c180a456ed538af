import { describe, expect, it } from 'vitest';
import { createNotifier } from './systemd.js';

describe('systemd notifier', () => {
  it('does nothing outside systemd', () => {
    const calls: string[][] = [];
    const n = createNotifier({}, (c, a) => calls.push([c, ...a]));
    n.ready();
    n.healthy(0);
    expect(calls).toEqual([]);
  });

  it('signals ready and pings the watchdog at half its interval, only when told it is healthy', () => {
    const calls: string[][] = [];
    const n = createNotifier({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '20000000' }, (c, a) => calls.push([c, ...a]));
    n.ready();
    n.healthy(0);
    n.healthy(5_000);
    n.healthy(10_000);
    n.healthy(19_999);
    n.healthy(20_000);
    expect(calls).toEqual([
      ['systemd-notify', '--ready'],
      ['systemd-notify', 'WATCHDOG=1'],
      ['systemd-notify', 'WATCHDOG=1'],
      ['systemd-notify', 'WATCHDOG=1'],
    ]);
  });
});
