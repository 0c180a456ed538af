/**
 * Keeps notification subscriptions for up to `capacity` accounts alive over as few WebSocket
 * connections as `usersPerConnection` allows. Each connection ("slot") reconnects on its own with
 * jittered backoff; the keeper hears about every gap (`disconnected`/`reconnected`) and reconciles
 * from REST, because notifications are hints and a gap may have swallowed some.
 *
 * Everything that can fire later (ping, pong deadline, connect deadline, retry, stop deadline) is a
 * timer on the injected clock, so unit tests drive it with FakeClock.
 */
import { backoffDelayMs } from './backoff.js';
import {
  attributeNotification,
  encodePing,
  encodeSubscription,
  normalizeAddress,
  parseServerFrame,
  userNamedIn,
  type SubscriptionMethod,
} from './frames.js';
import { clearSlotTimer, clearSlotTimers, createSlot, pickSlot, slotInfo, type Slot, type SlotTimer } from './slot.js';
import { closeQuietly, LiveSockets, sendQuietly, terminateQuietly } from './sockets.js';
import {
  DISCONNECT_REASONS,
  resolveOptions,
  type ConnectionInfo,
  type DisconnectReason,
  type NotificationClientCounters,
  type NotificationClientEvent,
  type NotificationClientOptions,
  type ResolvedOptions,
  type SocketLike,
  type SubscribeResult,
} from './types.js';

type Lifecycle = 'new' | 'running' | 'stopping' | 'stopped';

export class NotificationClient {
  private readonly opts: ResolvedOptions;
  private readonly slots: Slot[];
  private readonly userSlot = new Map<string, Slot>();
  private readonly overCap = new Set<string>();
  /** Every socket created and not yet `close`d, current or abandoned: stop() waits for these. */
  private readonly liveSockets = new LiveSockets();
  private lifecycle: Lifecycle = 'new';
  private stopping: Promise<void> | null = null;
  private readonly counters: NotificationClientCounters = {
    greetings: 0,
    unparsedFrames: 0,
    notifications: 0,
    serverErrors: 0,
    listenerErrors: 0,
    connectAttempts: 0,
    disconnects: Object.fromEntries(DISCONNECT_REASONS.map((r) => [r, 0])) as Record<DisconnectReason, number>,
  };

  constructor(options: NotificationClientOptions) {
    this.opts = resolveOptions(options);
    this.slots = Array.from({ length: this.opts.maxConnections }, (_, id) => createSlot(id));
  }

  /** The endpoint connected to (`${wsUrl}/ws`). */
  get url(): string {
    return this.opts.url;
  }

  /** Opens a connection for every slot that has users. Idempotent. */
  start(): void {
    if (this.lifecycle === 'running') return;
    if (this.lifecycle === 'stopping') throw new Error('NotificationClient.start() called while stop() is in progress');
    this.lifecycle = 'running';
    for (const slot of this.slots) if (slot.users.size > 0 && slot.state === 'idle') this.connect(slot);
  }

  /**
   * Closes every socket, cancels every timer and never reconnects. Resolves once all sockets have
   * closed, or after `stopTimeoutMs` (then they are terminated). Idempotent. Subscriptions are kept,
   * so a later `start()` resumes them.
   */
  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.lifecycle !== 'running') {
      this.lifecycle = this.lifecycle === 'new' ? 'new' : 'stopped';
      return Promise.resolve();
    }
    this.lifecycle = 'stopping';
    for (const slot of this.slots) this.goIdle(slot);
    this.stopping = this.liveSockets.awaitAllClosed(this.opts.clock, this.opts.stopTimeoutMs).finally(() => {
      this.lifecycle = 'stopped';
      this.stopping = null;
    });
    return this.stopping;
  }

  subscribe(rawUser: string): SubscribeResult {
    const user = normalizeAddress(rawUser);
    if (user === undefined) return { subscribed: false, reason: 'invalid_address' };
    const existing = this.userSlot.get(user);
    if (existing) return { subscribed: true, connection: existing.id };
    const slot = this.userSlot.size < this.opts.capacity ? pickSlot(this.slots, this.opts.usersPerConnection) : undefined;
    if (!slot) {
      this.overCap.add(user);
      return { subscribed: false, reason: 'user_cap' };
    }
    this.overCap.delete(user);
    slot.users.add(user);
    this.userSlot.set(user, slot);
    if (this.lifecycle === 'running') {
      if (slot.state === 'open') this.sendSubscription(slot, 'subscribe', user);
      else if (slot.state === 'idle') this.connect(slot);
      // connecting/backoff: the open handler subscribes every user of the slot.
    }
    return { subscribed: true, connection: slot.id };
  }

  /**
   * Drops a user. A connection left without users is closed. The freed place is not handed to a
   * user in `overCapUsers()` by itself: the caller decides, by calling `subscribe` again.
   * Returns whether the user was known (subscribed or over the cap).
   */
  unsubscribe(rawUser: string): boolean {
    const user = normalizeAddress(rawUser);
    if (user === undefined) return false;
    if (this.overCap.delete(user)) return true;
    const slot = this.userSlot.get(user);
    if (!slot) return false;
    this.userSlot.delete(user);
    slot.users.delete(user);
    slot.confirmed.delete(user);
    if (slot.state === 'open') this.sendSubscription(slot, 'unsubscribe', user);
    if (slot.users.size === 0) this.goIdle(slot);
    return true;
  }

  /** True when any connection is open. */
  connected(): boolean {
    return this.slots.some((s) => s.state === 'open');
  }

  subscribedUsers(): string[] {
    return [...this.userSlot.keys()];
  }

  /** Users refused for the per-IP cap: poll these over REST instead. */
  overCapUsers(): string[] {
    return [...this.overCap];
  }

  /** Users whose subscription the venue has acknowledged on the current socket. */
  isConfirmed(rawUser: string): boolean {
    const user = normalizeAddress(rawUser);
    return user !== undefined && (this.userSlot.get(user)?.confirmed.has(user) ?? false);
  }

  /** Per-connection state, for the `dms_keeper_ws_connected` gauge and /health. */
  connections(): ConnectionInfo[] {
    return this.slots.map(slotInfo);
  }

  stats(): NotificationClientCounters {
    return { ...this.counters, disconnects: { ...this.counters.disconnects } };
  }

  // ---- slots ---------------------------------------------------------------------------------

  private connect(slot: Slot): void {
    if (this.lifecycle !== 'running' || slot.users.size === 0) {
      slot.state = 'idle';
      return;
    }
    slot.state = 'connecting';
    this.counters.connectAttempts++;
    let sock: SocketLike;
    try {
      sock = this.opts.socketFactory(this.opts.url);
    } catch {
      this.onSocketDown(slot, null, 'error');
      return;
    }
    slot.socket = sock;
    this.liveSockets.track(sock);
    sock.on('open', () => this.guarded(slot, sock, () => this.onOpen(slot, sock)));
    sock.on('message', (data, isBinary) => this.guarded(slot, sock, () => this.onMessage(slot, data, isBinary)));
    sock.on('close', () => this.guarded(slot, sock, () => this.onSocketDown(slot, sock, 'closed')));
    // An error listener must stay attached for the socket's whole life: `ws` emits `error` after
    // terminate() of a connecting socket, and an unheard `error` would crash the process.
    sock.on('error', () => this.guarded(slot, sock, () => this.onSocketDown(slot, sock, 'error')));
    slot.connectTimer = this.opts.clock.setTimeout(() => {
      slot.connectTimer = undefined;
      this.guarded(slot, sock, () => this.onSocketDown(slot, sock, 'connect_timeout'));
    }, this.opts.connectTimeoutMs);
  }

  /** Runs `fn` only for the slot's current socket; never lets an exception out of a callback. */
  private guarded(slot: Slot, sock: SocketLike, fn: () => void): void {
    if (slot.socket !== sock) return;
    try {
      fn();
    } catch {
      // Our own handlers do not throw by design; if one does, failing the connection is safer
      // than leaving it in a half-updated state.
      if (slot.socket === sock) {
        try {
          this.onSocketDown(slot, sock, 'error');
        } catch {
          /* nothing sensible left to do */
        }
      }
    }
  }

  private onOpen(slot: Slot, sock: SocketLike): void {
    this.clear(slot, 'connectTimer');
    const now = this.opts.clock.nowMs();
    slot.state = 'open';
    slot.openedAtMs = now;
    slot.lastFrameAtMs = undefined;
    slot.confirmed.clear();
    for (const user of slot.users) sendQuietly(sock, encodeSubscription('subscribe', user));
    this.schedulePing(slot, sock);
    const users = [...slot.users];
    const wasOpenBefore = slot.hasBeenOpen;
    slot.hasBeenOpen = true;
    this.emit(
      wasOpenBefore
        ? { type: 'reconnected', connection: slot.id, users, atMs: now }
        : { type: 'connected', connection: slot.id, users, atMs: now },
    );
  }

  private onMessage(slot: Slot, data: unknown, isBinary: boolean): void {
    const now = this.opts.clock.nowMs();
    slot.lastFrameAtMs = now;
    // Any frame proves the peer alive, not only a pong.
    this.clear(slot, 'pongTimer');
    const frame = parseServerFrame(data, isBinary);
    switch (frame.kind) {
      case 'greeting':
        this.counters.greetings++;
        return;
      case 'pong':
        slot.attempt = 0;
        return;
      case 'subscription_ack': {
        slot.attempt = 0;
        const user = frame.user;
        if (frame.method !== 'unsubscribe' && user !== undefined && slot.users.has(user)) {
          slot.confirmed.add(user);
          this.emit({ type: 'subscribed', connection: slot.id, user, atMs: now });
        }
        return;
      }
      case 'error': {
        this.counters.serverErrors++;
        const user = userNamedIn(frame.message, [...slot.users]);
        this.emit({
          type: 'server_error',
          connection: slot.id,
          message: frame.message,
          ...(user !== undefined ? { user } : {}),
          atMs: now,
        });
        return;
      }
      case 'notification': {
        this.counters.notifications++;
        const users = [...slot.users];
        const user = attributeNotification(frame.text, frame.user, users);
        this.emit({
          type: 'notification',
          connection: slot.id,
          text: frame.text,
          users,
          ...(user !== undefined ? { user } : {}),
          receivedAtMs: now,
        });
        return;
      }
      case 'unparsed':
        this.counters.unparsedFrames++;
        this.emit({ type: 'unparsed_frame', connection: slot.id, reason: frame.reason, sample: frame.sample, atMs: now });
        return;
    }
  }

  private schedulePing(slot: Slot, sock: SocketLike): void {
    slot.pingTimer = this.opts.clock.setTimeout(() => {
      slot.pingTimer = undefined;
      this.guarded(slot, sock, () => {
        if (slot.state !== 'open') return;
        sendQuietly(sock, encodePing());
        // The deadline runs from the oldest unanswered ping, so a later ping must not extend it.
        if (slot.pongTimer === undefined) {
          slot.pongTimer = this.opts.clock.setTimeout(() => {
            slot.pongTimer = undefined;
            this.guarded(slot, sock, () => this.onSocketDown(slot, sock, 'pong_timeout'));
          }, this.opts.pongTimeoutMs);
        }
        this.schedulePing(slot, sock);
      });
    }, this.opts.pingEveryMs);
  }

  /** The current socket failed (or `sock` is null: the factory threw). Schedules the retry. */
  private onSocketDown(slot: Slot, sock: SocketLike | null, reason: DisconnectReason): void {
    const wasOpen = slot.state === 'open';
    this.clearTimers(slot);
    slot.socket = null;
    // A dead peer gets no close handshake: we would only wait for it to time out.
    if (sock) terminateQuietly(sock);
    slot.confirmed.clear();
    slot.openedAtMs = undefined;
    this.counters.disconnects[reason]++;
    if (this.lifecycle !== 'running' || slot.users.size === 0) {
      slot.state = 'idle';
      return;
    }
    const attempt = slot.attempt;
    const retryInMs = backoffDelayMs(attempt, this.opts.random, this.opts.backoff);
    slot.attempt = attempt + 1;
    slot.state = 'backoff';
    slot.retryTimer = this.opts.clock.setTimeout(() => {
      slot.retryTimer = undefined;
      if (slot.state === 'backoff') this.connect(slot);
    }, retryInMs);
    const now = this.opts.clock.nowMs();
    this.emit(
      wasOpen
        ? { type: 'disconnected', connection: slot.id, reason, users: [...slot.users], retryInMs, atMs: now }
        : { type: 'connect_failed', connection: slot.id, reason, attempt, retryInMs, atMs: now },
    );
  }

  /** No users left, or stopping: close politely and forget the connection. */
  private goIdle(slot: Slot): void {
    this.clearTimers(slot);
    const sock = slot.socket;
    slot.socket = null;
    slot.state = 'idle';
    slot.attempt = 0;
    slot.hasBeenOpen = false;
    slot.confirmed.clear();
    slot.openedAtMs = undefined;
    if (sock) closeQuietly(sock, 1000);
  }

  // ---- small helpers -------------------------------------------------------------------------

  private sendSubscription(slot: Slot, method: SubscriptionMethod, user: string): void {
    if (slot.socket) sendQuietly(slot.socket, encodeSubscription(method, user));
  }

  private clear(slot: Slot, key: SlotTimer): void {
    clearSlotTimer(this.opts.clock, slot, key);
  }

  private clearTimers(slot: Slot): void {
    clearSlotTimers(this.opts.clock, slot);
  }

  private emit(e: NotificationClientEvent): void {
    try {
      this.opts.onEvent(e);
    } catch {
      this.counters.listenerErrors++;
    }
  }
}
