import type { Clock, TimerHandle } from '../time/clock.js';
import { admitWouldDelay, earliestAdmitMs, fillLimit, newScope, recentCounts, recordDone, recordAdmit, spacingMs, spanMs, usedInWindow, weightUnits, type ScopeState, type WindowSpec } from './admission.js';
import type { RecentCounts } from '../state/budget-log.js';
import { ACHIEVED_PLAN_SHARE, holdMeter, meterStep, newPaceMeter, paceWindowMs, type PaceMeter } from './achieved-pace.js';
import {
  inForceOf,
  initialLimit,
  limitChangeOf,
  onAchievedQuiet,
  onAnnounced,
  onBaseline,
  onQuiet,
  onRefusal,
  onShortfall,
  probeDueMs,
  ratePerSecond,
  sameSpec,
  scopeLimitOf,
  sourceOf,
  validSpec,
  type LimitChange,
  type LimitChangeKind,
  type LimitState,
  type LimitStep,
  type ScopeLimit,
} from './limits.js';
import { ARM_RESERVE_SHARE, DEFAULT_READ_MAX_WAIT_MS, isFirstArm, orderKey, queueOf, type RequestClass, type RequestQueue } from './request-class.js';

/**
 * The one request budget. Every venue request goes through `run` with its class (request-class.ts)
 * and the scopes it spends: arms by deadline, then approvals and prepares; reads use what those
 * leave and are shed (`ShedError`) when they waited too long. After a 429 `blockScope` holds the
 * scope until `retry_after`, and `adoptLimit` takes tighter announced numbers (limits.ts decides).
 * It measures the pace each scope achieves while arms wait for it (achieved-pace.ts): one short of
 * the limit in force is in force over it (limits.ts onShortfall), for the plan, not for admission.
 * Not bottleneck: its timers read the wall clock, so it cannot run in virtual time, and a 429's
 * window must be obeyed to the millisecond on our clock. The rule is pure (admission.ts); this
 * class only queues and wakes.
 */

/** A request as the budget admits it: its class, and what it spends. */
export type RequestOptions = RequestClass & AdmissionOptions;

export interface AdmissionOptions {
  /** Scope keys this request spends, e.g. ['global', 'schedule_cancel']. */
  scopes: readonly string[];
  /** Units it spends in each scope (a positive integer, default 1): an info request's IP weight (admission.ts). */
  weight?: number;
  /** Reads: reject with ShedError after waiting this long. Default DEFAULT_READ_MAX_WAIT_MS. */
  maxWaitMs?: number;
  signal?: AbortSignal;
  /** Told, as the request is admitted, where its wait went (for the late-arm log). */
  onAdmitted?: (wait: AdmissionWait) => void;
}

/**
 * Where a request's wait went: `heldBy`, the last reason its lane was held (a scope: window full;
 * `<scope>:429`: a venue block; `<scope>:reserved`: a more urgent request's turn; null: never), and
 * `wentAhead`, how many of its own queue and scopes were admitted while it waited.
 */
export interface AdmissionWait {
  waitedMs: number;
  heldBy: string | null;
  wentAhead: number;
}

/** When a queued read is shed: after it waited its maxWaitMs. */
function shedAtMs(p: Pending): number {
  return p.enqueuedMs + (p.opts.maxWaitMs ?? DEFAULT_READ_MAX_WAIT_MS);
}

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
  queue: RequestQueue;
  /** Requests with the same queue and scopes (and first arm or not: isFirstArm) wait for the same reasons (see drain). */
  sig: string;
  /** Admissions of its signature when it was queued (AdmissionWait.wentAhead). */
  sigAdmittedAtEnqueue: number;
  /**
   * orderKey of its class: the order lanes admit in. Arms go by the venue time they are due: a
   * re-arm at its deadline, a cancel-soon arm at the time it was queued (ahead of every re-arm whose
   * deadline lies later), an arm with none to protect first.
   */
  key: number;
  throttled?: boolean;
  enqueuedMs: number;
  seq: number;
  /** Runs the request; `admittedMs` is the time its window entries were recorded at. */
  start: (admittedMs: number) => void;
  fail: (e: Error) => void;
}

/** For tests: what was admitted and shed, and each scope's use of its window now. */
export interface SchedulerStats {
  admitted: { arm: number; read: number };
  shed: number;
  scopes: Record<string, { used: number }>;
}

/** The queued requests of one signature (queue + scopes), by key then arrival: they wait for the same reasons, so only the head is looked at. */
class Lane {
  private items: Pending[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  peek(): Pending | undefined {
    return this.items[this.head];
  }

  shift(): Pending {
    const p = this.items[this.head++]!;
    // Compact now and then instead of shifting a long array on every admission.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return p;
  }

  /** Queued requests whose key is at most `key` (binary search). */
  countAtMost(key: number): number {
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.key <= key) lo = mid + 1;
      else hi = mid;
    }
    return lo - this.head;
  }

  /** After every queued request whose key is at most `p.key` (binary search). */
  insert(p: Pending): void {
    let lo = this.head;
    let hi = this.items.length;
    if (hi === lo || this.items[hi - 1]!.key <= p.key) {
      this.items.push(p);
      return;
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.key <= p.key) lo = mid + 1;
      else hi = mid;
    }
    this.items.splice(lo, 0, p);
  }

  remove(p: Pending): boolean {
    const i = this.items.indexOf(p, this.head);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }

  /** Keeps only what `keep` accepts; returns the dropped ones. */
  filter(keep: (p: Pending) => boolean): Pending[] {
    const dropped: Pending[] = [];
    const kept: Pending[] = [];
    for (let i = this.head; i < this.items.length; i++) (keep(this.items[i]!) ? kept : dropped).push(this.items[i]!);
    this.items = kept;
    this.head = 0;
    return dropped;
  }

  drainAll(): Pending[] {
    const all = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return all;
  }
}

/**
 * Of what a pace achieved leaves after the plan's share, the part reads may take (readGapMs). The
 * rest stays idle: a thread kept 100% busy queues without bound (in the model, kept accounts dipped
 * to 18.4 s against a 20 s minimum with reads taking all of it).
 */
const READ_SHARE_OF_REST = 0.5;

/**
 * A request the keeper itself gave up on (its own timeout, or aborted): no answer came in time, so
 * it is not a request the keeper could carry. Read by the errors' stable `reason` (venue/errors.ts
 * TRANSPORT_REASONS), without importing the venue: budget/ ranks below it.
 */
function gaveUp(e: unknown): boolean {
  const reason = (e as { reason?: unknown } | null)?.reason;
  return reason === 'timeout' || reason === 'aborted';
}

/** Which of two lane heads goes first: lower key, then earlier arrival. */
function before(a: Pending, b: Pending): boolean {
  return a.key < b.key || (a.key === b.key && a.seq < b.seq);
}

export class RequestScheduler {
  private readonly scopes = new Map<string, ScopeState>();
  /** Queued requests per queue, one lane per signature. */
  private readonly lanes = { arm: new Map<string, Lane>(), read: new Map<string, Lane>() };
  private readonly queued = { arm: 0, read: 0 };
  /** The earliest time a queued read may be shed (no scan of the reads before it). */
  private shedCheckAtMs = Number.POSITIVE_INFINITY;
  private seq = 0;
  private timer: TimerHandle | null = null;
  private timerAtMs = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly admitted = { arm: 0, read: 0 };
  private shed = 0;
  /** Per signature: admissions so far and the last reason its lane head was held. */
  private readonly bySig = new Map<string, { admitted: number; heldBy: string | null }>();
  /** Per scope: its baseline, and a learned limit with its next probe (limits.ts). */
  private readonly limitsOf = new Map<string, LimitState>();
  private readonly limitListeners = new Set<(c: LimitChange) => void>();
  private probeTimer: TimerHandle | null = null;
  /** Under a pace achieved: no read before this (readGapMs). */
  private readNextMs = Number.NEGATIVE_INFINITY;
  /** Per scope: units admitted so far (a running count) and the pace meter (achieved-pace.ts). */
  private readonly paceOf = new Map<string, { units: number; meter: PaceMeter }>();
  /** Scopes an arm waited for at this pump (their own window, not a 429): the pace meters' `pressed`. */
  private readonly pressed = new Set<string>();
  /** Other scopes of an arm that waited for a window at this pump (none under a 429 block): neither pressed nor broken. */
  private readonly heldElsewhere = new Set<string>();
  /**
   * Scopes whose arms the keeper reports overdue before they ever reach the queue (their timers
   * fired late: a keeper short of CPU), until when (scheduler clock): pressed as a waiting arm is.
   */
  private readonly overdueUntil = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    specs: Record<string, WindowSpec>,
    private readonly opts: {
      /** Called once per request that had to wait for our own budget (not for a 429 block). */
      onThrottled?: (queue: RequestQueue) => void;
    } = {},
  ) {
    for (const [k, spec] of Object.entries(specs)) {
      this.scopes.set(k, newScope(spec));
      this.limitsOf.set(k, initialLimit(spec, true));
    }
  }

  /** Hears every change of a limit in force (logs, metrics); returns the unsubscribe. */
  onLimitChange(fn: (c: LimitChange) => void): () => void {
    this.limitListeners.add(fn);
    return () => this.limitListeners.delete(fn);
  }

  /** Whether the limit in force on `scope` is the pace the keeper achieved (not the venue's): the plan then keeps its margins. */
  achievedOn(scope: string): boolean {
    const s = this.scopes.get(scope);
    const l = this.limitsOf.get(scope);
    return s !== undefined && l !== undefined && sourceOf(l, s.spec) === 'achieved';
  }

  /** Every configured scope's limit in force, and every scope a learned or achieved limit holds. */
  limits(): ScopeLimit[] {
    const out: ScopeLimit[] = [];
    for (const [scope, l] of this.limitsOf) {
      const shown = scopeLimitOf(scope, l, this.scope(scope).spec);
      if (shown) out.push(shown);
    }
    return out;
  }

  /** When a request queued now would be admitted: its scopes' earliest, plus a spacing per queued request ahead (an estimate). */
  estimateAdmitMs(opts: RequestClass & Pick<AdmissionOptions, 'scopes'>): number {
    const now = this.clock.nowMs();
    const key = orderKey(opts);
    let at = now;
    for (const k of opts.scopes) {
      const s = this.scopes.get(k);
      if (!s) continue;
      let ahead = 0;
      for (const [sig, lane] of this.lanes.arm) if (lane.size > 0 && sig.split('|').includes(k)) ahead += lane.countAtMost(key);
      if (queueOf(opts) === 'read') for (const [sig, lane] of this.lanes.read) if (sig.split('|').includes(k)) ahead += lane.size;
      at = Math.max(at, earliestAdmitMs(s, now) + ahead * spacingMs(s.spec));
    }
    return at;
  }

  run<T>(opts: RequestOptions, fn: () => Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(new ShedError('scheduler stopped'));
    const weight = opts.weight ?? 1;
    if (!Number.isSafeInteger(weight) || weight < 1) return Promise.reject(new RangeError(`request weight must be a positive integer, got ${weight}`));
    return new Promise<T>((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = (): void => {
        if (this.remove(p)) reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const queue = queueOf(opts);
      // A first arm may wait for a reason a re-arm on the same scopes does not (achievedFill): its own lane.
      const sig = `${queue}|${opts.scopes.join('|')}${isFirstArm(opts) ? '|first' : ''}`;
      const p: Pending = {
        opts,
        queue,
        sig,
        sigAdmittedAtEnqueue: this.sigStats(sig).admitted,
        key: orderKey(opts),
        enqueuedMs: this.clock.nowMs(),
        seq: ++this.seq,
        start: (admittedMs) => {
          signal?.removeEventListener('abort', onAbort);
          fn()
            .then(
              (v) => {
                this.paced(opts.scopes, weight);
                return v;
              },
              (e: unknown) => {
                if (!gaveUp(e)) this.paced(opts.scopes, weight);
                throw e;
              },
            )
            .finally(() => {
              const doneMs = this.clock.nowMs();
              for (const key of opts.scopes) recordDone(this.scope(key), admittedMs, doneMs, weight);
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
      this.enqueue(p);
      this.pump();
    });
  }

  /**
   * The keeper's re-arms for `scope` are overdue before they are queued (their timers fired late),
   * for the next `forMs`: the scope counts as pressed for its pace meter (achieved-pace.ts) as if
   * they waited here. Why: a keeper short of CPU holds its re-arms in late timers, not in this
   * queue, so a meter that only saw the queue never measured the pace it fell short of (issue 36,
   * the starved keeper). Its admissions while overdue are what it can send.
   */
  pressOverdue(scope: string, forMs: number): void {
    if (!this.scopes.has(scope)) return;
    const until = this.clock.nowMs() + forMs;
    if (until > (this.overdueUntil.get(scope) ?? Number.NEGATIVE_INFINITY)) this.overdueUntil.set(scope, until);
  }

  /** A 429 said: nothing on this scope before `untilMs` (local clock); the refusal also steps a learned limit (limits.ts onRefusal). */
  blockScope(scope: string, untilMs: number): void {
    const s = this.scope(scope);
    s.blockedUntilMs = Math.max(s.blockedUntilMs, untilMs);
    const step = onRefusal(this.limitOf(scope), s.spec, this.clock.nowMs());
    this.applyVenueLimit(scope, step);
    if (step.state.learned) this.scheduleProbe();
    this.pump();
  }

  /** The venue announced a scope's numbers (limits.ts onAnnounced). */
  adoptLimit(scope: string, spec: WindowSpec): void {
    if (!validSpec(spec)) return;
    const step = onAnnounced(this.limitOf(scope), this.scope(scope).spec, spec, this.clock.nowMs());
    this.applyVenueLimit(scope, step);
    if (step.change) this.scheduleProbe();
  }

  /** Sets a scope's baseline (the shared budget's cut); a lower learned limit stays, admissions in the window still count. */
  setLimit(scope: string, spec: WindowSpec): void {
    if (!validSpec(spec)) return;
    const l = this.limitOf(scope);
    const s = this.scope(scope);
    const next = onBaseline(l, s.spec, spec);
    this.limitsOf.set(scope, next.state);
    if (ratePerSecond(next.inForce) < ratePerSecond(s.spec)) this.holdPace(scope, next.inForce);
    s.spec = next.inForce;
    this.pump();
  }

  /** Admissions still inside each scope's window (local ms), counted per second (admission.ts recentCounts): persisted across restarts. */
  exportRecent(): RecentCounts {
    const now = this.clock.nowMs();
    const out: RecentCounts = {};
    for (const [k, s] of this.scopes) {
      const counts = recentCounts(s, now);
      if (counts.length > 0) out[k] = counts;
    }
    return out;
  }

  /**
   * What a previous instance sent still counts in the venue's window: a restart loop must not spend
   * it again. Counts beyond a scope's limit are the limit (a corrupt file cannot make us allocate
   * more than a full window).
   */
  importRecent(recent: Readonly<RecentCounts>): void {
    const now = this.clock.nowMs();
    for (const [k, counts] of Object.entries(recent)) {
      const s = this.scopes.get(k);
      if (!s) continue;
      const keep: number[] = [];
      for (const [t, n] of counts) {
        if (!Number.isFinite(t) || t <= now - s.spec.windowMs || t > now) continue;
        for (let i = Math.min(n, s.spec.limit - keep.length); i > 0; i--) keep.push(t);
      }
      keep.sort((a, b) => a - b);
      s.log = [...keep, ...s.log].sort((a, b) => a - b);
      if (keep.length > 0) s.lastSlotMs = Math.max(s.lastSlotMs, keep[keep.length - 1]!);
      // What a previous instance sent holds the window a while: not the pace this one can achieve.
      if (keep.length > 0) this.holdPace(k, s.spec);
    }
  }

  /** Arms queued that will spend `scope` (a count over the lanes, not the requests). */
  queuedOn(scope: string): number {
    let n = 0;
    for (const [sig, lane] of this.lanes.arm) if (sig.split('|').includes(scope)) n += lane.size;
    return n;
  }

  /** The limit in force for a scope (configured, adopted from a 429, or the pace achieved): what the plan is made for. */
  specOf(scope: string): WindowSpec | undefined {
    const s = this.scopes.get(scope);
    const l = this.limitsOf.get(scope);
    return s ? { ...(l ? inForceOf(l, s.spec) : s.spec) } : undefined;
  }

  blockedUntil(scope: string): number {
    return this.scopes.get(scope)?.blockedUntilMs ?? 0;
  }

  stats(): SchedulerStats {
    const now = this.clock.nowMs();
    const scopes: SchedulerStats['scopes'] = {};
    for (const [k, s] of this.scopes) {
      scopes[k] = { used: usedInWindow(s, now) };
    }
    return { admitted: { ...this.admitted }, shed: this.shed, scopes };
  }

  /** Rejects everything still queued; in-flight requests finish on their own. */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = null;
    const all: Pending[] = [];
    for (const lanes of [this.lanes.arm, this.lanes.read]) {
      for (const lane of lanes.values()) all.push(...lane.drainAll());
      lanes.clear();
    }
    this.queued.arm = 0;
    this.queued.read = 0;
    all.sort((a, b) => a.seq - b.seq);
    for (const p of all) p.fail(new ShedError('scheduler stopped'));
  }

  private scope(key: string): ScopeState {
    let s = this.scopes.get(key);
    if (!s) {
      // A scope only 429s named (a per-endpoint one): unlimited until the venue announces its numbers.
      s = newScope({ limit: 1_000_000, windowMs: 60_000 });
      this.scopes.set(key, s);
    }
    return s;
  }

  private limitOf(key: string): LimitState {
    let l = this.limitsOf.get(key);
    if (!l) {
      l = initialLimit(this.scope(key).spec, false);
      this.limitsOf.set(key, l);
    }
    return l;
  }

  /**
   * Keeps a transition of the venue's limit (limits.ts): a changed one is admitted by at once, and
   * the listeners hear it when it changed the limit in force (an achieved one may stay lower).
   */
  private applyVenueLimit(scope: string, step: LimitStep): void {
    const before = this.limitOf(scope);
    this.limitsOf.set(scope, step.state);
    if (!step.change) return;
    const s = this.scope(scope);
    const from = s.spec;
    const fromInForce = inForceOf(before, from);
    const fromSource = sourceOf(before, from);
    s.spec = step.change.to;
    // A lower limit's window still holds what the old one let out: no pace measured until it has passed.
    if (ratePerSecond(s.spec) < ratePerSecond(from)) this.holdPace(scope, s.spec);
    const to = inForceOf(step.state, s.spec);
    if (!sameSpec(fromInForce, to) || fromSource !== sourceOf(step.state, s.spec)) this.tell(scope, step.state, step.change.kind, fromInForce, to);
    this.pump();
  }

  /** Keeps a transition of the achieved limit (limits.ts onShortfall, onAchievedQuiet): only the limit in force moves, not admission. */
  private applyAchievedLimit(scope: string, step: LimitStep): void {
    const before = this.limitOf(scope);
    this.limitsOf.set(scope, step.state);
    if (!step.change) return;
    this.tell(scope, step.state, step.change.kind, inForceOf(before, this.scope(scope).spec), step.change.to);
    this.scheduleProbe();
  }

  private tell(scope: string, state: LimitState, kind: LimitChangeKind, from: WindowSpec, to: WindowSpec): void {
    const change = limitChangeOf(scope, state, kind, from, to, this.scope(scope).spec);
    for (const fn of this.limitListeners) {
      try {
        fn(change);
      } catch {
        // a listener's failure must not change the budget
      }
    }
  }

  private paceState(scope: string): { units: number; meter: PaceMeter } {
    let p = this.paceOf.get(scope);
    if (!p) {
      p = { units: 0, meter: newPaceMeter() };
      this.paceOf.set(scope, p);
    }
    return p;
  }

  /** No pace measured on the scope for one span of `spec`'s window from now. */
  private holdPace(scope: string, spec: WindowSpec): void {
    const p = this.paceState(scope);
    p.meter = holdMeter(p.meter, this.clock.nowMs() + spanMs(spec));
  }

  /**
   * Each scope's pace meter after a pump: pressed or not (this.pressed), and a stretch measured is
   * judged against the limit in force (limits.ts onShortfall). O(scopes) a pump, O(1) an admission.
   */
  private measurePace(now: number): void {
    for (const [scope, s] of this.scopes) {
      const isPressed = this.pressed.has(scope) || now < (this.overdueUntil.get(scope) ?? Number.NEGATIVE_INFINITY);
      // A scope is counted from the first time it is pressed: most never are.
      const p = this.paceOf.get(scope) ?? (isPressed ? this.paceState(scope) : undefined);
      if (!p) continue;
      const l = this.limitOf(scope);
      const { meter, perSecond } = meterStep(p.meter, isPressed, now, p.units, paceWindowMs(inForceOf(l, s.spec)), this.heldElsewhere.has(scope));
      p.meter = meter;
      if (perSecond !== undefined) this.applyAchievedLimit(scope, onShortfall(l, s.spec, perSecond, now));
    }
    this.pressed.clear();
    this.heldElsewhere.clear();
  }

  /** One timer for the next probe of any learned or achieved limit. */
  private scheduleProbe(): void {
    if (this.stopped) return;
    let next = Number.POSITIVE_INFINITY;
    for (const l of this.limitsOf.values()) next = Math.min(next, probeDueMs(l));
    if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = null;
    if (next === Number.POSITIVE_INFINITY) return;
    this.probeTimer = this.clock.setTimeout(() => {
      this.probeTimer = null;
      this.probe();
    }, Math.max(0, next - this.clock.nowMs()));
  }

  /** Every learned or achieved limit whose quiet spell is over takes its probe step (limits.ts onQuiet, onAchievedQuiet). */
  private probe(): void {
    const now = this.clock.nowMs();
    for (const [scope, l] of this.limitsOf) {
      this.applyVenueLimit(scope, onQuiet(l, this.scope(scope).spec, now));
      this.applyAchievedLimit(scope, onAchievedQuiet(this.limitOf(scope), this.scope(scope).spec, now));
    }
    this.scheduleProbe();
  }

  private enqueue(p: Pending): void {
    const lanes = this.lanes[p.queue];
    let lane = lanes.get(p.sig);
    if (!lane) {
      lane = new Lane();
      lanes.set(p.sig, lane);
    }
    lane.insert(p);
    this.queued[p.queue] += 1;
    if (p.queue === 'read') this.shedCheckAtMs = Math.min(this.shedCheckAtMs, shedAtMs(p));
  }

  private remove(p: Pending): boolean {
    const lane = this.lanes[p.queue].get(p.sig);
    if (!lane?.remove(p)) return false;
    this.queued[p.queue] -= 1;
    if (lane.size === 0) this.lanes[p.queue].delete(p.sig);
    return true;
  }

  /** How much of the scope's window a first arm may fill under a pace achieved (counted over the scope's own window); null: none in force. */
  private achievedFill(key: string, s: ScopeState): number | null {
    const l = this.limitsOf.get(key);
    if (!l || sourceOf(l, s.spec) !== 'achieved') return null;
    const f = inForceOf(l, s.spec);
    return fillLimit(f.windowMs === s.spec.windowMs ? f.limit : (f.limit * s.spec.windowMs) / f.windowMs);
  }

  /**
   * When the request may go, and the scope that holds it longest (`<scope>:429` for a venue block,
   * `<scope>:achieved` for a first arm held to a pace achieved, achievedFill; 'none').
   */
  private earliest(p: Pending, nowMs: number): { atMs: number; heldBy: string } {
    let atMs = nowMs;
    let heldBy = 'none';
    for (const key of p.opts.scopes) {
      const t = this.scopeEarliest(p, key, nowMs);
      if (t > atMs) {
        atMs = t;
        const s = this.scope(key);
        heldBy = s.blockedUntilMs >= t ? `${key}:429` : isFirstArm(p.opts) && t > earliestAdmitMs(s, nowMs, 1, p.opts.weight ?? 1) ? `${key}:achieved` : key;
      }
    }
    return { atMs, heldBy };
  }

  private scopeEarliest(p: Pending, key: string, nowMs: number): number {
    const s = this.scope(key);
    // Under a pace achieved, a first arm fills the window only to the share of that pace the plan
    // spends (admission.ts fillLimit): admitted at the venue's limit, the first arms of a cold start
    // go on at the old pace, and a period later the accounts they armed come due together at it,
    // faster than the keeper sends.
    const fill = isFirstArm(p.opts) ? this.achievedFill(key, s) : null;
    if (fill !== null) return earliestAdmitMs(s, nowMs, 1, p.opts.weight ?? 1, fill);
    // Reads pace themselves more slowly on the shared global scope, leaving a reserve for arms.
    const factor = p.queue === 'read' && key === 'global' ? 1 / (1 - ARM_RESERVE_SHARE) : 1;
    const t = earliestAdmitMs(s, nowMs, factor, p.opts.weight ?? 1);
    if (p.queue !== 'read') return t;
    return Math.max(t, this.readGapMs() !== null ? this.readNextMs : Number.NEGATIVE_INFINITY, this.overdueEndMs(nowMs));
  }

  /**
   * Until when the keeper's re-arms are overdue on some scope (pressOverdue; now or earlier: none).
   * Reads wait meanwhile: a keeper whose re-arm timers fire late is short of CPU, and a read takes
   * the thread from the arms as an arm does. Held back, they leave the pace meter the arms' own
   * pace to measure: with steady reads going on (a read every 2 s on a thread carrying 4 requests
   * a second), it measured 3.6 arms/s where the arms could have 4, and the plan gave up 18
   * accounts, not 4 (test/budget-starved-cpu.test.ts). Reads that wait too long are shed, as always.
   */
  private overdueEndMs(nowMs: number): number {
    let end = Number.NEGATIVE_INFINITY;
    for (const until of this.overdueUntil.values()) if (until > nowMs) end = Math.max(end, until);
    return end;
  }

  /**
   * While a pace achieved is in force on any scope, reads get part of what the plan leaves of the
   * lowest such pace (READ_SHARE_OF_REST of 1 - ACHIEVED_PLAN_SHARE), one after another: the keeper
   * cannot send more, and reads admitted at the venue's pace queue for the CPU ahead of the re-arms
   * (in test/budget-starved-cpu.test.ts the reads of 49 lapses, at once, sank the accounts kept).
   * Those that wait too long are shed, as always. Arms keep the venue's spacing: the plan already
   * holds them to the pace (achieved-pace.ts says why admitting arms by the measured pace would
   * measure less each window). Null: no pace achieved in force, reads as always.
   */
  private readGapMs(): number | null {
    let lowest = Number.POSITIVE_INFINITY;
    for (const [scope, l] of this.limitsOf) if (this.achievedOn(scope)) lowest = Math.min(lowest, ratePerSecond(l.achieved!.inForce));
    return Number.isFinite(lowest) ? 1000 / (lowest * (1 - ACHIEVED_PLAN_SHARE) * READ_SHARE_OF_REST) : null;
  }

  /**
   * A request answered (or refused by the venue): it counts in its scopes' pace (achieved-pace.ts).
   * Counted when answered, not when admitted: a keeper short of CPU admits at its plan's pace and
   * then times out a third of what it sent (1,388 arms in 40 s of the starved-keeper test, 108/s
   * admitted for 32/s that reached the venue), and what it can carry is what is answered.
   */
  private paced(scopes: readonly string[], weight: number): void {
    for (const key of scopes) {
      const pace = this.paceOf.get(key);
      if (pace) pace.units += weightUnits(weight, this.scope(key).spec.limit);
    }
  }

  private sigStats(sig: string): { admitted: number; heldBy: string | null } {
    let st = this.bySig.get(sig);
    if (!st) {
      st = { admitted: 0, heldBy: null };
      this.bySig.set(sig, st);
    }
    return st;
  }

  private admit(p: Pending, nowMs: number): void {
    for (const key of p.opts.scopes) {
      const s = this.scope(key);
      recordAdmit(s, nowMs, p.opts.weight ?? 1);
    }
    if (p.queue === 'read') {
      const gapMs = this.readGapMs();
      if (gapMs !== null) this.readNextMs = Math.max(nowMs, this.readNextMs) + gapMs;
    }
    this.admitted[p.queue] += 1;
    const st = this.sigStats(p.sig);
    if (p.opts.onAdmitted) {
      const waitedMs = nowMs - p.enqueuedMs;
      try {
        p.opts.onAdmitted({ waitedMs, heldBy: waitedMs > 0 ? st.heldBy : null, wentAhead: st.admitted - p.sigAdmittedAtEnqueue });
      } catch {
        // a diagnostic must not stop the request
      }
    }
    st.admitted += 1;
    // Its lane has emptied: whatever held it is over.
    if (!this.lanes[p.queue].has(p.sig)) st.heldBy = null;
    p.start(nowMs);
  }

  private pump(): void {
    if (this.stopped) return;
    const now = this.clock.nowMs();
    let wake = Number.POSITIVE_INFINITY;

    // Shed reads that waited too long for budget: under pressure they go first.
    if (now > this.shedCheckAtMs) this.shedReads(now);
    if (this.queued.read > 0) wake = Math.min(wake, this.shedCheckAtMs + 1);

    // The arm queue, then reads. A request that must wait reserves its time on each of its scopes;
    // a later one goes now only if that moves no reservation.
    const reserved = new Map<string, number>();
    const waiting = new Set<string>();
    wake = Math.min(wake, this.drain('arm', now, reserved, waiting));
    wake = Math.min(wake, this.drain('read', now, reserved, waiting));
    this.measurePace(now);
    this.schedule(wake);
  }

  private shedReads(now: number): void {
    let next = Number.POSITIVE_INFINITY;
    const shed: Pending[] = [];
    for (const [sig, lane] of this.lanes.read) {
      shed.push(
        ...lane.filter((r) => {
          if (now > shedAtMs(r)) return false;
          next = Math.min(next, shedAtMs(r));
          return true;
        }),
      );
      if (lane.size === 0) this.lanes.read.delete(sig);
    }
    this.shedCheckAtMs = next;
    this.queued.read -= shed.length;
    shed.sort((a, b) => a.seq - b.seq);
    for (const r of shed) {
      this.shed += 1;
      r.fail(new ShedError(`read shed after waiting ${now - r.enqueuedMs} ms for budget`));
    }
  }

  /**
   * Admits what may go now from one queue's lane heads, in order; returns the earliest retry. A lane
   * whose head waits waits whole. A pump costs the lanes, not the requests (a scan of 10,000 queued
   * was 12% of the cold start's CPU).
   */
  private drain(queue: RequestQueue, now: number, reserved: Map<string, number>, waiting: Set<string>): number {
    let wake = Number.POSITIVE_INFINITY;
    const lanes = this.lanes[queue];
    for (;;) {
      let lane: Lane | undefined;
      let p: Pending | undefined;
      for (const [sig, l] of lanes) {
        if (waiting.has(sig)) continue;
        const h = l.peek()!;
        if (!p || before(h, p)) {
          p = h;
          lane = l;
        }
      }
      if (!p || !lane) return wake;
      const { atMs: t, heldBy } = this.earliest(p, now);
      if (t > now) {
        this.sigStats(p.sig).heldBy = heldBy;
        // An arm waiting for a scope's own window presses it (a 429's block does not: `<scope>:429`);
        // its other scopes were held elsewhere at this pump (achieved-pace.ts meterStep).
        if (queue === 'arm' && !heldBy.includes(':')) {
          this.pressed.add(heldBy);
          for (const k of p.opts.scopes) if (k !== heldBy && this.scope(k).blockedUntilMs <= now) this.heldElsewhere.add(k);
        }
        wake = Math.min(wake, t);
        if (!p.throttled && p.opts.scopes.every((k) => this.scope(k).blockedUntilMs <= now)) {
          p.throttled = true;
          this.opts.onThrottled?.(queue);
        }
        for (const k of p.opts.scopes) reserved.set(k, Math.min(reserved.get(k) ?? Number.POSITIVE_INFINITY, t));
        waiting.add(p.sig);
        continue;
      }
      const taken = p.opts.scopes.find((k) => reserved.has(k) && admitWouldDelay(this.scope(k), now, reserved.get(k)!, p.opts.weight ?? 1));
      if (taken !== undefined) {
        // It could go, but only by taking a slot a more urgent request is waiting for; it is
        // looked at again when that one has gone.
        this.sigStats(p.sig).heldBy = `${taken}:reserved`;
        waiting.add(p.sig);
        continue;
      }
      lane.shift();
      if (lane.size === 0) lanes.delete(p.sig);
      this.queued[queue] -= 1;
      this.admit(p, now);
    }
  }

  private schedule(atMs: number): void {
    if (atMs === Number.POSITIVE_INFINITY) return;
    if (this.timer && atMs >= this.timerAtMs) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timerAtMs = atMs;
    // Precise: the pump paces sends to the budget's slots (time/clock.ts TIMER_SLACK_MS says why).
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.timerAtMs = Number.POSITIVE_INFINITY;
        this.pump();
      },
      atMs - this.clock.nowMs(),
      { precise: true },
    );
  }
}
