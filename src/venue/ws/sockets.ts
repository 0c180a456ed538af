/**
 * Socket chores that must never throw into a callback, and the set of sockets not yet closed, so
 * `stop()` can wait for every one of them (abandoned ones included) within a bound.
 */
import type { Clock } from '../../time/clock.js';
import type { SocketLike } from './types.js';

export function sendQuietly(sock: SocketLike, text: string): void {
  try {
    // A failed write surfaces as the socket's own error/close; the callback only keeps `ws` from
    // reporting it a second time.
    sock.send(text, () => undefined);
  } catch {
    /* same: the socket's close handler takes it from here */
  }
}

export function terminateQuietly(sock: SocketLike): void {
  try {
    sock.terminate();
  } catch {
    /* already gone */
  }
}

/** Asks for a close handshake; falls back to dropping the connection. */
export function closeQuietly(sock: SocketLike, code = 1000): void {
  try {
    sock.close(code);
  } catch {
    terminateQuietly(sock);
  }
}

export class LiveSockets {
  private readonly live = new Set<SocketLike>();

  /** Call right after creating a socket, before anything can close it. */
  track(sock: SocketLike): void {
    this.live.add(sock);
    sock.on('close', () => this.live.delete(sock));
  }

  get size(): number {
    return this.live.size;
  }

  /**
   * Resolves when every tracked socket has emitted `close`, or after `timeoutMs` on `clock`, when
   * the stragglers are terminated and forgotten. Leaves no timer behind either way.
   */
  awaitAllClosed(clock: Clock, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.live.size === 0) {
        resolve();
        return;
      }
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clock.clearTimeout(deadline);
        for (const s of this.live) terminateQuietly(s);
        this.live.clear();
        resolve();
      };
      const deadline = clock.setTimeout(finish, timeoutMs);
      // Registered after track()'s own listener, so the set is already updated when these run.
      for (const s of [...this.live]) {
        s.on('close', () => {
          if (this.live.size === 0) finish();
        });
      }
    });
  }
}
