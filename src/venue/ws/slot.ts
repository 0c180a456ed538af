/**
 * One connection's worth of state. The client owns the transitions; this file keeps the plain
 * data and the helpers that do not need the client.
 */
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { ConnectionInfo, ConnectionStateName, SocketLike } from './types.js';

export interface Slot {
  readonly id: number;
  /** Insertion order is kept so events list users predictably. */
  readonly users: Set<string>;
  readonly confirmed: Set<string>;
  state: ConnectionStateName;
  socket: SocketLike | null;
  /** Failed attempts since the connection was last healthy; the backoff exponent. */
  attempt: number;
  /** Decides `connected` vs `reconnected`; cleared when the slot goes idle. */
  hasBeenOpen: boolean;
  openedAtMs?: number;
  lastFrameAtMs?: number;
  pingTimer?: TimerHandle;
  pongTimer?: TimerHandle;
  connectTimer?: TimerHandle;
  retryTimer?: TimerHandle;
}

export type SlotTimer = 'pingTimer' | 'pongTimer' | 'connectTimer' | 'retryTimer';

export function createSlot(id: number): Slot {
  return {
    id,
    users: new Set<string>(),
    confirmed: new Set<string>(),
    state: 'idle',
    socket: null,
    attempt: 0,
    hasBeenOpen: false,
  };
}

export function clearSlotTimer(clock: Clock, slot: Slot, key: SlotTimer): void {
  const t = slot[key];
  if (t !== undefined) {
    clock.clearTimeout(t);
    slot[key] = undefined;
  }
}

export function clearSlotTimers(clock: Clock, slot: Slot): void {
  for (const key of ['pingTimer', 'pongTimer', 'connectTimer', 'retryTimer'] as const) clearSlotTimer(clock, slot, key);
}

/**
 * Where a new user goes: a connection that already carries users and has room, else an empty one.
 * Filling busy connections first keeps the number of sockets (a per-IP venue limit) low.
 */
export function pickSlot(slots: readonly Slot[], usersPerConnection: number): Slot | undefined {
  return (
    slots.find((s) => s.users.size > 0 && s.users.size < usersPerConnection) ?? slots.find((s) => s.users.size === 0)
  );
}

export function slotInfo(s: Slot): ConnectionInfo {
  return {
    id: s.id,
    state: s.state,
    users: [...s.users],
    confirmedUsers: [...s.confirmed],
    attempt: s.attempt,
    ...(s.openedAtMs !== undefined ? { openedAtMs: s.openedAtMs } : {}),
    ...(s.lastFrameAtMs !== undefined ? { lastFrameAtMs: s.lastFrameAtMs } : {}),
  };
}
