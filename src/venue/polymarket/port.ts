import type { ArmClass } from '../../budget/request-class.js';
import type { AdmissionWait, RequestOptions, RequestScheduler } from '../../budget/scheduler.js';
import type { Clock } from '../../time/clock.js';
import { POLYMARKET_SWITCH_FACTS } from './switch-facts.js';
import type { PolymarketClob } from './clob.js';
import { ClobError } from './errors.js';
import { HEARTBEAT_ENDPOINT, HEARTBEAT_PATHS, heartbeatError, type HeartbeatOutcome, type HeartbeatPath } from './heartbeat.js';
import type { OpenOrder } from './orders.js';
import type { VenueSwitchFacts } from '../switch-facts.js';

/**
 * The one way to a Polymarket CLOB venue, as venue/port.ts is to the default venue: every request
 * is admitted through the keeper's one request budget (its own scope, `clob:<venue>`, so the CLOB's
 * limit is counted apart from the other venue's), a 429 holds the scope, and each account's
 * heartbeat chain is kept here: the id the last beat returned goes with the next, and a stale id is
 * recovered from the 400's body in one more request. What the wire carries (paths, L2 headers,
 * bodies, decoding) is the client's (clob.ts); this file decides only budget and chain.
 */

/** One account's client on the wire (clob.ts: L2-signed requests for one address and its credentials). */
export type ClobClientLike = Pick<PolymarketClob, 'heartbeat' | 'openOrders'>;

/** An open order as the keeper keeps it (the venue's names; what it acts on is the count). */
export type { OpenOrder as ClobOpenOrder } from './orders.js';

/** How long a read of this venue waits for budget before it is shed. */
const CLOB_READ_MAX_WAIT_MS = 10_000;
/** A 429 without Retry-After holds the scope this long. */
const DEFAULT_HOLD_MS = 1_000;

export interface ClobVenuePortOptions {
  /** The venue's name in the config (`venues.<name>`): its scope is `clob:<name>`. */
  name: string;
  scheduler: Pick<RequestScheduler, 'run' | 'blockScope'>;
  clock: Pick<Clock, 'monoMs'>;
  /** Builds an account's client (clob.ts), given its address and credentials. */
  client: (account: { address: string; credentials: ClobCredentials }) => ClobClientLike;
}

/** An account's L2 credentials, read when the keeper starts (never held in the config). */
export interface ClobCredentials {
  key: string;
  secret: string;
  passphrase: string;
}

/** The budget scope of a CLOB venue. */
export function clobScope(venue: string): string {
  return `clob:${venue}`;
}

export class ClobVenuePort {
  readonly switchFacts: VenueSwitchFacts = POLYMARKET_SWITCH_FACTS;
  readonly scope: string;

  constructor(private readonly opts: ClobVenuePortOptions) {
    this.scope = clobScope(opts.name);
  }

  /**
   * The path heartbeats go to: the clients' (`/v1/heartbeats`) until the venue answers it 404, then
   * the API reference's (`/heartbeats`), and back the same way. The two disagree and the venue is
   * the authority: a 404 is the one answer that says the path, not the beat, is wrong.
   */
  private path: HeartbeatPath = HEARTBEAT_PATHS[0];

  get name(): string {
    return this.opts.name;
  }

  heartbeatPath(): HeartbeatPath {
    return this.path;
  }

  /** The venue said 404 on `tried`: use the other path from now on (unless another beat moved it already). */
  pathNotFound(tried: HeartbeatPath): void {
    if (this.path === tried) this.path = HEARTBEAT_PATHS.find((p) => p !== tried)!;
  }

  /** One account's session: its client and its heartbeat chain. */
  session(address: string, credentials: ClobCredentials): ClobSession {
    return new ClobSession(this, this.opts.client({ address, credentials }));
  }

  /** Admission through the budget on this venue's scope; a 429 holds the scope. */
  async admit<T>(cls: RequestOptions, fn: () => Promise<T>): Promise<T> {
    return this.opts.scheduler.run({ ...cls, scopes: [this.scope] }, fn);
  }

  /** Holds the scope after a 429 (on the monotonic clock: a duration, no venue offset). */
  hold(retryAfterMs: number | undefined): void {
    this.opts.scheduler.blockScope(this.scope, this.opts.clock.monoMs() + Math.max(1, retryAfterMs ?? DEFAULT_HOLD_MS));
  }

  readMaxWaitMs(): number {
    return CLOB_READ_MAX_WAIT_MS;
  }
}

/**
 * One account on a CLOB venue: its heartbeat chain (the id the venue last returned) and its reads.
 * One beat at a time (the runner never sends two at once), so the chain is never raced from here;
 * another writer (the bot, another replica) is recovered from as the venue's 400 says.
 */
export class ClobSession {
  /** The id to send with the next beat; null: start (or restart) the chain. */
  private chainId: string | null = null;

  constructor(
    private readonly port: ClobVenuePort,
    private readonly client: ClobClientLike,
  ) {}

  /** The chain's id as it stands (tests, /status). */
  currentChainId(): string | null {
    return this.chainId;
  }

  /**
   * One heartbeat: admitted as an arm of class `cls` (ordered by the deadline it protects), then
   * sent with the chain's id. A stale id is replaced by the one the venue names and sent again at
   * once, admitted again (it is a request of its own): two requests, never a loop. Resolves
   * 'recovered' when the chain had moved on without us (another writer beat since our last).
   */
  async beat(args: { cls?: ArmClass; signal?: AbortSignal; onAdmitted?: (w: AdmissionWait) => void; onLeave?: () => void }): Promise<'accepted' | 'recovered'> {
    const request: RequestOptions = { ...(args.cls ?? { kind: 'arm' }), scopes: [], ...(args.signal ? { signal: args.signal } : {}), ...(args.onAdmitted ? { onAdmitted: args.onAdmitted } : {}) };
    const send = (): Promise<HeartbeatOutcome> => {
      const path = this.port.heartbeatPath();
      return this.client.heartbeat(this.chainId, { path, ...(args.signal ? { signal: args.signal } : {}) }).then((o) => {
        if (o.kind === 'refused' && o.httpStatus === 404) this.port.pathNotFound(path);
        return o;
      });
    };
    const { onAdmitted: _once, ...again } = request;
    let first = await this.port.admit(request, () => {
      args.onLeave?.();
      return send();
    });
    // Not found: the venue serves the other path; this beat goes there at once (a request of its own).
    if (first.kind === 'refused' && first.httpStatus === 404) first = await this.port.admit(again, send);
    if (first.kind !== 'stale') {
      this.settle(first);
      return 'accepted';
    }
    this.chainId = first.currentId ?? null;
    const second = await this.port.admit(again, send);
    if (second.kind === 'stale') {
      // Moved on again between our two requests: another writer is beating as fast as we are.
      this.chainId = second.currentId ?? null;
      throw new ClobError(HEARTBEAT_ENDPOINT, 'stale', 'the heartbeat chain moved on twice in a row: another writer (the bot, or another keeper) is sending heartbeats for this account');
    }
    this.settle(second);
    return 'recovered';
  }

  private settle(o: Exclude<HeartbeatOutcome, { kind: 'stale' }>): void {
    if (o.kind === 'accepted') {
      // An answer without an id (the API reference shows {"status":"ok"}) ends our knowledge of
      // the chain: the next beat starts from null, and a stale answer will name the id.
      this.chainId = o.heartbeatId ?? null;
      return;
    }
    if (o.kind === 'rate_limited') this.port.hold(o.retryAfterMs);
    throw heartbeatError(o);
  }

  /** The account's open orders: a read, shed when it waited too long for budget. */
  async openOrders(opts: { signal?: AbortSignal } = {}): Promise<OpenOrder[]> {
    try {
      const r = await this.port.admit({ kind: 'read', scopes: [], maxWaitMs: this.port.readMaxWaitMs(), ...(opts.signal ? { signal: opts.signal } : {}) }, () => this.client.openOrders(opts));
      return r.orders;
    } catch (e) {
      if (e instanceof ClobError && e.reason === 'rate_limited') this.port.hold(e.retryAfterMs);
      throw e;
    }
  }
}
