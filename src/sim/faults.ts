/**
 * Faults on demand (DESIGN.md section 6): the failures the keeper must survive, injected into the
 * simulator from tests in-process or through the admin route.
 *
 * Request faults target every endpoint or one endpoint name, optionally only one path family
 * (`rest` = everything under /v1, `exchange` = POST /exchange, `info` = POST /info), and last for `count` matching
 * requests, for `forMs` of (base clock) time, or until removed. Several may be active at once:
 * latencies of all matching faults add up; of the faults that replace or break the answer, the
 * oldest matching one wins.
 *
 * The clock offset and the WebSocket switches are plain settings; the WebSocket hub subscribes to
 * changes so that `wsDropEveryMs` takes effect without polling.
 */
import type { Clock } from '../time/clock.js';

/** `rest`: the service (`/v1`); `exchange` and `info`: the venue host's `POST /exchange` and `POST /info`. */
export type FaultPath = 'rest' | 'exchange' | 'info';

/** Which requests a fault applies to and for how long. */
export interface FaultTarget {
  /** An endpoint name (a route's `endpoint`); absent = every endpoint. */
  endpoint?: string;
  /** `rest` (/v1/...), `exchange` (POST /exchange) or `info` (POST /info); absent = all three. */
  path?: FaultPath;
  /** Applies to this many matching requests, then disappears. */
  count?: number;
  /** Applies for this long from when it was added (base clock), then disappears. */
  forMs?: number;
}

export interface LatencyFault extends FaultTarget {
  kind: 'latency';
  /** Added before the request is handled, on the injected clock (virtual time under a FakeClock). */
  ms: number;
}

/** The request is answered with this status and the spec's envelope; the handler never runs. */
export interface StatusFault extends FaultTarget {
  kind: 'status';
  status: number;
  message?: string;
  /** 503: the `dependency` detail's reason (default `upstream_unavailable`). 429: the `rate_limit` reason. */
  reason?: string;
  /** 429 only: the `rate_limit` detail. Defaults: scope global, retry 1 s, limit 1, window 60 s. */
  scope?: 'endpoint' | 'global';
  retryAfterSeconds?: number;
  limit?: number;
  windowSeconds?: number;
}

/**
 * The connection is destroyed. `mid_response` (default): the handler runs (an action is applied!),
 * the headers and `afterBytes` bytes of the body are written (default: half), then the socket is
 * destroyed, as when a proxy or the network drops an answer that was already on its way.
 * `before_handler`: destroyed without an answer and without running the handler.
 */
export interface ResetFault extends FaultTarget {
  kind: 'reset';
  phase?: 'mid_response' | 'before_handler';
  afterBytes?: number;
}

/**
 * A body the client cannot decode. `truncated`: the handler runs and its JSON is cut in half (with a
 * matching Content-Length, so the HTTP message itself is complete). `html`: an HTML error page such
 * as a proxy serves (default status 502); the handler never runs.
 */
export interface BodyFault extends FaultTarget {
  kind: 'body';
  mode: 'truncated' | 'html';
  status?: number;
  /**
   * html only: the proxy's clock minus the venue's, for its `Date` header. A proxy in front of the
   * venue stamps its own (host) time, e.g. -30 s when the venue runs 30 s ahead of the host.
   */
  dateShiftMs?: number;
}

export type RequestFaultSpec = LatencyFault | StatusFault | ResetFault | BodyFault;

export interface ClockOffsetSetting {
  kind: 'clockOffset';
  ms: number;
}
/** The WebSocket server stops answering pings and pushing anything, keeping sockets open. */
export interface WsSilentSetting {
  kind: 'wsSilent';
  on: boolean;
}
/** Every `everyMs` (injected clock) the WebSocket server drops all connections; null stops it. */
export interface WsDropSetting {
  kind: 'wsDrop';
  everyMs: number | null;
}

export type FaultSpec = RequestFaultSpec | ClockOffsetSetting | WsSilentSetting | WsDropSetting;

interface ActiveFault {
  id: string;
  spec: RequestFaultSpec;
  remaining: number | undefined;
  expiresAtMs: number | undefined;
}

/** What to do with one request. */
export interface FaultPlan {
  latencyMs: number;
  /** Replaces or breaks the answer; undefined = answer normally. */
  action?: StatusFault | ResetFault | BodyFault;
}

export interface FaultSnapshot {
  clockOffsetMs: number;
  wsSilent: boolean;
  wsDropEveryMs: number | null;
  requestFaults: Array<RequestFaultSpec & { id: string; remaining?: number; expiresAtMs?: number }>;
}

function checkTarget(t: FaultTarget): void {
  if (t.count !== undefined && (!Number.isSafeInteger(t.count) || t.count < 1)) throw new RangeError('count must be a positive integer');
  if (t.forMs !== undefined && (!Number.isFinite(t.forMs) || t.forMs <= 0)) throw new RangeError('forMs must be positive');
  if (t.path !== undefined && t.path !== 'rest' && t.path !== 'exchange' && t.path !== 'info') throw new RangeError('path must be rest, exchange or info');
}

export class FaultControl {
  private readonly faults: ActiveFault[] = [];
  private seq = 0;
  private offsetMs: number;
  private silent = false;
  private dropEveryMs: number | null = null;
  private readonly listeners = new Set<() => void>();

  /**
   * @param clock the base (un-offset) clock: fault spans must not move when the offset does.
   * @param initialClockOffsetMs the offset `reset()` returns to (the simulator's configured one).
   */
  constructor(
    private readonly clock: Clock,
    private readonly initialClockOffsetMs = 0,
  ) {
    this.offsetMs = initialClockOffsetMs;
  }

  /** Adds a request fault (returns its id) or applies a setting (returns undefined). */
  add(spec: FaultSpec): string | undefined {
    switch (spec.kind) {
      case 'clockOffset':
        this.setClockOffset(spec.ms);
        return undefined;
      case 'wsSilent':
        this.setWsSilent(spec.on);
        return undefined;
      case 'wsDrop':
        this.setWsDropEveryMs(spec.everyMs);
        return undefined;
      case 'latency':
        if (!Number.isFinite(spec.ms) || spec.ms < 0) throw new RangeError('latency ms must be >= 0');
        break;
      case 'status':
        if (!Number.isSafeInteger(spec.status) || spec.status < 400 || spec.status > 599) throw new RangeError('status must be 400..599');
        break;
      case 'reset':
      case 'body':
        break;
      default:
        throw new RangeError(`unknown fault kind ${(spec as { kind: unknown }).kind as string}`);
    }
    checkTarget(spec);
    const id = `f${++this.seq}`;
    this.faults.push({
      id,
      spec: { ...spec },
      remaining: spec.count,
      expiresAtMs: spec.forMs !== undefined ? this.clock.nowMs() + spec.forMs : undefined,
    });
    this.changed();
    return id;
  }

  remove(id: string): boolean {
    const i = this.faults.findIndex((f) => f.id === id);
    if (i < 0) return false;
    this.faults.splice(i, 1);
    this.changed();
    return true;
  }

  // ---- conveniences for in-process tests ----

  latency(ms: number, target: FaultTarget = {}): string {
    return this.add({ ...target, kind: 'latency', ms }) as string;
  }

  /** Forces `status` (with the spec's envelope) on matching requests. */
  forceStatus(status: number, opts: Omit<StatusFault, 'kind' | 'status'> = {}): string {
    return this.add({ ...opts, kind: 'status', status }) as string;
  }

  /** A 429 storm with a chosen scope and retry_after. */
  rateLimitStorm(opts: Omit<StatusFault, 'kind' | 'status'> = {}): string {
    return this.forceStatus(429, opts);
  }

  /** 503 with a `dependency` detail. */
  unavailable(reason = 'upstream_unavailable', target: FaultTarget = {}): string {
    return this.forceStatus(503, { ...target, reason });
  }

  /**
   * The service is down: every REST request (`/v1`) answers 503 with a `dependency` detail for
   * `forMs`, while `/info`, `/exchange` and `/ws` keep working (issue 20's fallback scenario).
   */
  restUnavailable(forMs: number, reason = 'upstream_unavailable'): string {
    return this.forceStatus(503, { path: 'rest', forMs, reason });
  }

  resetConnection(opts: Omit<ResetFault, 'kind'> = {}): string {
    return this.add({ ...opts, kind: 'reset' }) as string;
  }

  badBody(mode: BodyFault['mode'], opts: Omit<BodyFault, 'kind' | 'mode'> = {}): string {
    return this.add({ ...opts, kind: 'body', mode }) as string;
  }

  setClockOffset(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError('clock offset must be finite');
    this.offsetMs = ms;
    this.changed();
  }

  clockOffsetMs(): number {
    return this.offsetMs;
  }

  setWsSilent(on: boolean): void {
    this.silent = on;
    this.changed();
  }

  wsSilent(): boolean {
    return this.silent;
  }

  setWsDropEveryMs(ms: number | null | undefined): void {
    if (ms !== null && ms !== undefined && (!Number.isFinite(ms) || ms <= 0)) throw new RangeError('wsDrop everyMs must be positive');
    this.dropEveryMs = ms ?? null;
    this.changed();
  }

  wsDropEveryMs(): number | null {
    return this.dropEveryMs;
  }

  /** Clears every fault; the clock offset returns to the simulator's configured one. */
  reset(): void {
    this.faults.length = 0;
    this.offsetMs = this.initialClockOffsetMs;
    this.silent = false;
    this.dropEveryMs = null;
    this.changed();
  }

  /** Called on any change; returns an unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Decides what happens to one request and consumes one use of every fault that applies. A
   * latency fault and a breaking fault can both apply to the same request.
   */
  plan(endpoint: string, path: FaultPath): FaultPlan {
    const now = this.clock.nowMs();
    const plan: FaultPlan = { latencyMs: 0 };
    for (const f of [...this.faults]) {
      if (f.expiresAtMs !== undefined && now >= f.expiresAtMs) {
        this.drop(f);
        continue;
      }
      const s = f.spec;
      if (s.endpoint !== undefined && s.endpoint !== endpoint) continue;
      if (s.path !== undefined && s.path !== path) continue;
      if (s.kind === 'latency') {
        plan.latencyMs += s.ms;
      } else if (!plan.action) {
        plan.action = s;
      } else {
        continue; // an older breaking fault already won; this one keeps its count
      }
      if (f.remaining !== undefined && --f.remaining <= 0) this.drop(f);
    }
    // No change notification here: listeners care about settings, not about counts running down.
    return plan;
  }

  snapshot(): FaultSnapshot {
    const now = this.clock.nowMs();
    return {
      clockOffsetMs: this.offsetMs,
      wsSilent: this.silent,
      wsDropEveryMs: this.dropEveryMs,
      requestFaults: this.faults
        .filter((f) => f.expiresAtMs === undefined || now < f.expiresAtMs)
        .map((f) => ({
          ...f.spec,
          id: f.id,
          ...(f.remaining !== undefined ? { remaining: f.remaining } : {}),
          ...(f.expiresAtMs !== undefined ? { expiresAtMs: f.expiresAtMs } : {}),
        })),
    };
  }

  private drop(f: ActiveFault): void {
    const i = this.faults.indexOf(f);
    if (i >= 0) this.faults.splice(i, 1);
  }

  private changed(): void {
    for (const l of this.listeners) {
      try {
        l();
      } catch {
        // a listener's failure must not break fault control
      }
    }
  }
}
