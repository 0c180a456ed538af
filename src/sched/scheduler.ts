import type { Clock, TimerHandle } from './clock.js';
import { admitWouldDelay, earliestAdmitMs, newScope, recordDone, recordAdmit, spacingMs, usedInWindow, type ScopeState, type WindowSpec } from './admission.js';

/**
 * The one shared request budget. Every venue request goes through `run`, declaring its class
 * (`arm` or `read`) and the rate scopes it spends. Arms go first, most urgent first (shortest
 * horizon); reads only use what arms leave, keep a reserve free for arms, and are shed (rejected
 * with `ShedError`) when they have waited too long. After a 429, `blockScope` holds back every
 * request of that scope until `retry_after` has passed, and `adoptLimit` takes the venue's
 * announced numbers when they are tighter than ours.
 *
 * Why not bottleneck: its reservoir and timers read the wall clock itself, so its admission cannot
 * run in virtual time, and a 429 window must be obeyed to the millisecond on our clock. The
 * admission rule is small and pure (`admission.ts`); this class only queues and wakes.
 */
export type RequestClass = 'arm' | 'read';

export interface RequestOptions {
  kind: RequestClass;
  /** Scope keys this request spends, e.g. ['global', 'schedule_cancel']. */
  scopes: readonly string[];
  /**
   * Lower goes first among arms: the venue time of the account's current deadline (0 = none, a
   * first arm). Work that only prepares an arm (resolving an account) uses PREPARE_URGENCY.
   */
  urgency?: number;
  /** Reads: reject with ShedError after waiting this long. Default 10 s. */
  maxWaitMs?: number;
  signal?: AbortSignal;
}

/** After every arm, before every read: start-up work such as resolving an account. */
export const PREPARE_URGENCY = Number.MAX_SAFE_INTEGER;

export class ShedError extends Error {
  readonly code = 'REQUEST_SHED' as const;
  readonly reason = 'shed' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ShedError';
  }
}

interface Pending {
  opts: RequestOptions;
  /** Requests with the same class and scopes wait for the same reasons (see drain). */
  sig: string;
  throttled?: boolean;
  enqueuedMs: number;
  seq: number;
  /** Runs the request; `admittedMs` is the time its window entries were recorded at. */
  start: (admittedMs: number) => void;
  fail: (e: Error) => void;
}

export interface SchedulerStats {
  queuedArms: number;
  queuedReads: number;
  admitted: { arm: number; read: number };
  shed: number;
  scopes: Record<string, { limit: number; windowMs: number; used: number; blockedForMs: number }>;
}

export class RequestScheduler {
  private readonly scopes = new Map<string, ScopeState>();
  private arms: Pending[] = [];
  private reads: Pending[] = [];
  /** Queued requests per signature (class + scopes), per queue. */
  private readonly sigs = { arm: new Map<string, number>(), read: new Map<string, number>() };
  private seq = 0;
  private timer: TimerHandle | null = null;
  private timerAtMs = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly admitted = { arm: 0, read: 0 };
  private shed = 0;

  constructor(
    private readonly clock: Clock,
    specs: Record<string, WindowSpec>,
    private readonly opts: {
      /** Share of the global scope reads may not touch (kept for arms). Default 0.2. */
      armReserve?: number;
      /** Spec given to scopes that appear only in 429 answers (per-endpoint scopes). */
      defaultSpec?: WindowSpec;
      /** Called once per request that had to wait for our own budget (not for a 429 block). */
      onThrottled?: (kind: RequestClass) => void;
    } = {},
  ) {
    for (const [k, spec] of Object.entries(specs)) this.scopes.set(k, newScope(spec));
  }

  run<T>(opts: RequestOptions, fn: () => Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(new ShedError('scheduler stopped'));
    return new Promise<T>((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = (): void => {
        if (this.remove(p)) reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const p: Pending = {
        opts,
        sig: `${opts.kind}|${opts.scopes.join('|')}`,
        enqueuedMs: this.clock.nowMs(),
        seq: ++this.seq,
        start: (admittedMs) => {
          signal?.removeEventListener('abort', onAbort);
          fn()
            .finally(() => {
              const doneMs = this.clock.nowMs();
              for (const key of opts.scopes) recordDone(this.scope(key), admittedMs, doneMs);
            })
            .then(resolve, reject);
        },
        fail: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      if (signal) {
        if (signal.aborted) {
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });
      }
      if (opts.kind === 'arm') this.insertArm(p);
      else this.reads.push(p);
      this.countSig(p, 1);
      this.pump();
    });
  }

  /** A 429 said: nothing on this scope before `untilMs` (local clock). */
  blockScope(scope: string, untilMs: number): void {
    const s = this.scope(scope);
    s.blockedUntilMs = Math.max(s.blockedUntilMs, untilMs);
    this.pump();
  }

  /** The venue announced its own numbers for a scope; take them when tighter than ours. */
  adoptLimit(scope: string, spec: WindowSpec): void {
    if (!(spec.limit > 0) || !(spec.windowMs > 0)) return;
    const s = this.scope(scope);
    if (spacingMs(spec) > spacingMs(s.spec) || spec.limit < s.spec.limit) s.spec = spec;
  }

  /**
   * Sets a scope's budget outright (the shared budget's local share when Redis is unreachable, the
   * whole budget when it is back). Admissions already in the window still count.
   */
  setLimit(scope: string, spec: WindowSpec): void {
    if (!(spec.limit > 0) || !(spec.windowMs > 0)) return;
    this.scope(scope).spec = spec;
    this.pump();
  }

  /** Admissions still inside each scope's window (local ms): persisted across restarts. */
  exportRecent(): Record<string, number[]> {
    const now = this.clock.nowMs();
    const out: Record<string, number[]> = {};
    for (const [k, s] of this.scopes) {
      const recent = s.log.filter((t) => t > now - s.spec.windowMs);
      if (recent.length > 0) out[k] = recent;
    }
    return out;
  }

  /**
   * Start-up pacing: what a previous instance sent still counts in the venue's window, so a
   * restart (or a restart loop) must not spend that budget again.
   */
  importRecent(recent: Record<string, readonly number[]>): void {
    const now = this.clock.nowMs();
    for (const [k, times] of Object.entries(recent)) {
      const s = this.scopes.get(k);
      if (!s) continue;
      const keep = times.filter((t) => Number.isFinite(t) && t > now - s.spec.windowMs && t <= now).sort((a, b) => a - b);
      s.log = [...keep, ...s.log].sort((a, b) => a - b);
      if (keep.length > 0) s.lastSlotMs = Math.max(s.lastSlotMs, keep[keep.length - 1]!);
    }
  }

  /** The window in force for a scope (configured, or adopted from a 429). */
  specOf(scope: string): WindowSpec | undefined {
    const s = this.scopes.get(scope);
    return s ? { ...s.spec } : undefined;
  }

  blockedUntil(scope: string): number {
    return this.scopes.get(scope)?.blockedUntilMs ?? 0;
  }

  stats(): SchedulerStats {
    const now = this.clock.nowMs();
    const scopes: SchedulerStats['scopes'] = {};
    for (const [k, s] of this.scopes) {
      scopes[k] = { limit: s.spec.limit, windowMs: s.spec.windowMs, used: usedInWindow(s, now), blockedForMs: Math.max(0, s.blockedUntilMs - now) };
    }
    return { queuedArms: this.arms.length, queuedReads: this.reads.length, admitted: { ...this.admitted }, shed: this.shed, scopes };
  }

  /** Rejects everything still queued; in-flight requests finish on their own. */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const all = [...this.arms, ...this.reads];
    this.arms = [];
    this.reads = [];
    this.sigs.arm.clear();
    this.sigs.read.clear();
    for (const p of all) p.fail(new ShedError('scheduler stopped'));
  }

  private scope(key: string): ScopeState {
    let s = this.scopes.get(key);
    if (!s) {
      s = newScope(this.opts.defaultSpec ?? { limit: 1_000_000, windowMs: 60_000 });
      this.scopes.set(key, s);
    }
    return s;
  }

  private insertArm(p: Pending): void {
    const u = p.opts.urgency ?? 0;
    let i = this.arms.length;
    while (i > 0 && (this.arms[i - 1]!.opts.urgency ?? 0) > u) i--;
    this.arms.splice(i, 0, p);
  }

  private remove(p: Pending): boolean {
    for (const q of [this.arms, this.reads]) {
      const i = q.indexOf(p);
      if (i >= 0) {
        q.splice(i, 1);
        this.countSig(p, -1);
        return true;
      }
    }
    return false;
  }

  private countSig(p: Pending, d: number): void {
    const m = this.sigs[p.opts.kind];
    const n = (m.get(p.sig) ?? 0) + d;
    if (n > 0) m.set(p.sig, n);
    else m.delete(p.sig);
  }

  private earliest(p: Pending, nowMs: number): number {
    let t = nowMs;
    for (const key of p.opts.scopes) t = Math.max(t, this.scopeEarliest(p, key, nowMs));
    return t;
  }

  private scopeEarliest(p: Pending, key: string, nowMs: number): number {
    // Reads pace themselves more slowly on the shared global scope, leaving a reserve for arms.
    const factor = p.opts.kind === 'read' && key === 'global' ? 1 / (1 - (this.opts.armReserve ?? 0.2)) : 1;
    return earliestAdmitMs(this.scope(key), nowMs, factor);
  }

  private admit(p: Pending, nowMs: number): void {
    for (const key of p.opts.scopes) recordAdmit(this.scope(key), nowMs);
    this.admitted[p.opts.kind] += 1;
    p.start(nowMs);
  }

  private pump(): void {
    if (this.stopped) return;
    const now = this.clock.nowMs();
    let wake = Number.POSITIVE_INFINITY;

    // Shed reads that waited too long for budget: under pressure they go first.
    const kept: Pending[] = [];
    for (const r of this.reads) {
      if (now - r.enqueuedMs > (r.opts.maxWaitMs ?? 10_000)) {
        this.shed += 1;
        this.countSig(r, -1);
        r.fail(new ShedError(`read shed after waiting ${now - r.enqueuedMs} ms for budget`));
      } else {
        kept.push(r);
        wake = Math.min(wake, r.enqueuedMs + (r.opts.maxWaitMs ?? 10_000) + 1);
      }
    }
    this.reads = kept;

    // Arms in urgency order, then reads. A request that must wait reserves the time it will go on
    // each of its scopes; a later request goes now only if that moves no reservation.
    const reserved = new Map<string, number>();
    const waiting = new Set<string>();
    wake = Math.min(wake, this.drain(this.arms, this.sigs.arm, now, reserved, waiting));
    wake = Math.min(wake, this.drain(this.reads, this.sigs.read, now, reserved, waiting));
    this.schedule(wake);
  }

  /**
   * Admits what may go now from `queue` (in order); returns the earliest retry time. `waiting`
   * holds the signatures already found waiting: every later request with the same class and scopes
   * waits too, so it is skipped without a look, and once every signature waits the scan stops.
   * That keeps a pump cheap with tens of thousands of requests queued at start-up.
   */
  private drain(queue: Pending[], sigs: ReadonlyMap<string, number>, now: number, reserved: Map<string, number>, waiting: Set<string>): number {
    let wake = Number.POSITIVE_INFINITY;
    let waitingHere = 0;
    let i = 0;
    while (i < queue.length && waitingHere < sigs.size) {
      const p = queue[i]!;
      if (waiting.has(p.sig)) {
        i++;
        continue;
      }
      const t = this.earliest(p, now);
      if (t > now) {
        wake = Math.min(wake, t);
        if (!p.throttled && p.opts.scopes.every((k) => this.scope(k).blockedUntilMs <= now)) {
          p.throttled = true;
          this.opts.onThrottled?.(p.opts.kind);
        }
        for (const k of p.opts.scopes) reserved.set(k, Math.min(reserved.get(k) ?? Number.POSITIVE_INFINITY, t));
        waiting.add(p.sig);
        waitingHere++;
        i++;
        continue;
      }
      if (p.opts.scopes.some((k) => reserved.has(k) && admitWouldDelay(this.scope(k), now, reserved.get(k)!))) {
        // It could go, but only by taking a slot a more urgent request is waiting for; it is
        // looked at again when that one has gone.
        waiting.add(p.sig);
        waitingHere++;
        i++;
        continue;
      }
      queue.splice(i, 1);
      this.countSig(p, -1);
      this.admit(p, now);
    }
    return wake;
  }

  private schedule(atMs: number): void {
    if (atMs === Number.POSITIVE_INFINITY) return;
    if (this.timer && atMs >= this.timerAtMs) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timerAtMs = atMs;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.timerAtMs = Number.POSITIVE_INFINITY;
      this.pump();
    }, atMs - this.clock.nowMs());
  }
}
