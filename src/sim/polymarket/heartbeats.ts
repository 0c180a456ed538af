/**
 * The CLOB's heartbeat dead man's switch: one chain per user, on the venue clock.
 *
 * A chain starts with `heartbeat_id: null` (or `""`); each accepted beat is answered with the next
 * id (a fresh UUID) and only that id continues the chain; any other id is refused and the refusal
 * names the current one. When `timeoutMs` pass after the last accepted beat, every open order of
 * the user is cancelled and the chain ends (a "fire", recorded with its venue time).
 *
 * As ScheduleBook does for Hyperliquid's scheduled cancel, the timer is only a wake-up: it re-reads
 * venue time and the chain's deadline (a restart may have moved it, a clock offset may have made
 * it early) and waits again if it woke early, so a chain never lapses before its time, and under a
 * FakeClock it lapses at exactly its deadline. Every request also settles a due chain first, so a
 * beat that arrives after the deadline finds the chain already lapsed, whatever the timer's delay.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, TimerHandle } from '../../time/clock.js';
import { ASSUMPTIONS } from './texts.js';

/** Node's setTimeout overflows above 2^31 - 1 ms. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export interface HeartbeatFire {
  /** Lower-case address of the user. */
  address: string;
  /** Venue time the orders were cancelled (ms). */
  atMs: number;
  /** When the chain was due to lapse (ms): `lastBeatMs + timeout`, later if a restart held it. */
  deadlineMs: number;
  lastBeatMs: number;
  /** The chain's last id (the one that would have continued it). */
  heartbeatId: string;
  /** Orders cancelled by the lapse. */
  cancelledOrderIds: string[];
}

/** One user's heartbeat figures since the simulator started (kept across lapses): what the fleet and bench tests read. */
export interface HeartbeatStats {
  address: string;
  /** Beats accepted, and beats refused for a stale or unknown id. */
  accepted: number;
  refused: number;
  /** The longest venue-time gap between two accepted beats of one chain (ms); 0 before the second. */
  maxGapMs: number;
  /** Venue time of the last accepted beat (ms). */
  lastBeatMs: number;
  /** Whether a chain is live now (false after a lapse, until a chain starts again). */
  live: boolean;
}

export type BeatResult = { ok: true; heartbeatId: string } | { ok: false; current: string };

export interface HeartbeatBookOptions {
  /** The venue clock. */
  clock: Clock;
  /** Cancels every open order of a user; returns their ids. */
  cancelAll: (address: string) => string[];
  timeoutMs?: number;
  nullWhileLive?: 'reject' | 'restart';
  /** The deadline of a chain whose last beat was at `lastBeatMs` (a restart may hold it). */
  deadline?: (lastBeatMs: number, timeoutMs: number) => number;
  newId?: () => string;
}

interface Chain {
  id: string;
  lastBeatMs: number;
  handle?: TimerHandle;
  token: object;
}

export class HeartbeatBook {
  private readonly chains = new Map<string, Chain>();
  private readonly fired: HeartbeatFire[] = [];
  private readonly counts = new Map<string, Omit<HeartbeatStats, 'address' | 'live'>>();
  private readonly timeoutMs: number;
  private nullWhileLive: 'reject' | 'restart';
  private stopped = false;

  constructor(private readonly opts: HeartbeatBookOptions) {
    this.timeoutMs = opts.timeoutMs ?? ASSUMPTIONS.heartbeatTimeoutMs;
    this.nullWhileLive = opts.nullWhileLive ?? ASSUMPTIONS.nullWhileLive;
  }

  setNullWhileLive(mode: 'reject' | 'restart'): void {
    this.nullWhileLive = mode;
  }

  /** One heartbeat of `address` carrying `id` (null or '' to start a chain). */
  beat(address: string, id: string | null): BeatResult {
    const a = address.toLowerCase();
    const now = this.opts.clock.nowMs();
    this.settle(a);
    const chain = this.chains.get(a);
    const starting = id === null || id === '';
    if (chain) {
      if (id === chain.id || (starting && this.nullWhileLive === 'restart')) return { ok: true, heartbeatId: this.accept(a, chain, now) };
      this.count(a).refused += 1;
      return { ok: false, current: chain.id };
    }
    if (!starting) {
      this.count(a).refused += 1;
      return { ok: false, current: ASSUMPTIONS.idWhenNoChain };
    }
    const fresh: Chain = { id: '', lastBeatMs: now, token: {} };
    this.chains.set(a, fresh);
    return { ok: true, heartbeatId: this.accept(a, fresh, now) };
  }

  /** Lapses the chain of `address` now if its deadline has come (before any request is served). */
  settle(address: string): void {
    const chain = this.chains.get(address.toLowerCase());
    if (chain && this.opts.clock.nowMs() >= this.deadlineOf(chain)) this.lapse(address.toLowerCase(), chain);
  }

  /** The live chain of a user: its current id, last beat and deadline. */
  chain(address: string): { heartbeatId: string; lastBeatMs: number; deadlineMs: number } | undefined {
    this.settle(address);
    const c = this.chains.get(address.toLowerCase());
    return c ? { heartbeatId: c.id, lastBeatMs: c.lastBeatMs, deadlineMs: this.deadlineOf(c) } : undefined;
  }

  /** Every lapse so far, oldest first (a copy). */
  fires(address?: string): HeartbeatFire[] {
    const a = address?.toLowerCase();
    return this.fired.filter((f) => a === undefined || f.address === a).map((f) => ({ ...f, cancelledOrderIds: [...f.cancelledOrderIds] }));
  }

  /** Every user's heartbeat figures (or one user's), lapses settled first. */
  stats(address?: string): HeartbeatStats[] {
    const a = address?.toLowerCase();
    const out: HeartbeatStats[] = [];
    for (const [who, c] of this.counts) {
      if (a !== undefined && who !== a) continue;
      this.settle(who);
      out.push({ address: who, ...c, live: this.chains.has(who) });
    }
    return out;
  }

  /** Re-reads every chain's deadline (a restart began or ended: `suspend` moves deadlines). */
  reschedule(): void {
    for (const [a, c] of this.chains) {
      this.settle(a);
      if (this.chains.get(a) === c) this.wait(a, c);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const c of this.chains.values()) this.cancelTimer(c);
  }

  private accept(address: string, chain: Chain, now: number): string {
    const c = this.count(address);
    c.accepted += 1;
    // A fresh chain has no gap yet: its id is '' until this first accept.
    if (chain.id !== '') c.maxGapMs = Math.max(c.maxGapMs, now - chain.lastBeatMs);
    c.lastBeatMs = now;
    chain.id = (this.opts.newId ?? randomUUID)();
    chain.lastBeatMs = now;
    chain.token = {};
    this.wait(address, chain);
    return chain.id;
  }

  private deadlineOf(c: Chain): number {
    return this.opts.deadline ? this.opts.deadline(c.lastBeatMs, this.timeoutMs) : c.lastBeatMs + this.timeoutMs;
  }

  private wait(address: string, chain: Chain): void {
    this.cancelTimer(chain);
    if (this.stopped) return;
    const token = chain.token;
    const delay = Math.min(Math.max(0, this.deadlineOf(chain) - this.opts.clock.nowMs()), MAX_TIMER_DELAY_MS);
    chain.handle = this.opts.clock.setTimeout(() => {
      if (chain.token !== token || this.chains.get(address) !== chain) return;
      delete chain.handle;
      if (this.opts.clock.nowMs() < this.deadlineOf(chain)) {
        this.wait(address, chain);
        return;
      }
      this.lapse(address, chain);
    }, delay);
  }

  private lapse(address: string, chain: Chain): void {
    this.cancelTimer(chain);
    this.chains.delete(address);
    const cancelled = this.opts.cancelAll(address);
    this.fired.push({
      address,
      atMs: this.opts.clock.nowMs(),
      deadlineMs: this.deadlineOf(chain),
      lastBeatMs: chain.lastBeatMs,
      heartbeatId: chain.id,
      cancelledOrderIds: cancelled,
    });
  }

  private count(address: string): Omit<HeartbeatStats, 'address' | 'live'> {
    let c = this.counts.get(address);
    if (!c) this.counts.set(address, (c = { accepted: 0, refused: 0, maxGapMs: 0, lastBeatMs: 0 }));
    return c;
  }

  private cancelTimer(c: Chain): void {
    if (c.handle !== undefined) this.opts.clock.clearTimeout(c.handle);
    delete c.handle;
  }
}
