import { HYPERLIQUID_SWITCH_FACTS } from './facts.js';
import type { VenueSwitchFacts } from './switch-facts.js';
import type { Clock } from '../time/clock.js';
import type { ArmClass, RequestClass } from '../budget/request-class.js';
import type { RequestOptions, RequestScheduler } from '../budget/scheduler.js';
import type { VenueClock } from '../time/venue-clock.js';
import type { SharedBudget } from '../budget/shared-budget.js';
import { tokenWait } from '../budget/request-class.js';
import { RestError } from './errors.js';
import { leaveByMonoMs, RouteHealth, type ArmRoute, type RouteChoice, type VenueReading } from './routes.js';
import { ExchangeClient } from './exchange.js';
import type { HttpTransport } from './http.js';
import { DEFAULT_INFO_WEIGHTS, InfoClient, infoRequestWeight, type InfoWeights } from './info.js';
import type { InfoClearinghouseState, InfoExtraAgent, InfoOpenOrders, InfoSpotClearinghouseState, InfoUserRateLimit, InfoUserRole } from './info-decode.js';
import { REST_ENDPOINTS, RestClient } from './rest.js';
import type { Account, ActionOk, ApproveAgentAction, ApproveBuilderFeeAction, Health, OrdersPage, PositionsPage, ScheduleCancelAction, SignedRequest } from './types.js';
import type { VenueDateSample } from './venue-time.js';

/**
 * The one way to the venue (test/architecture.test.ts holds it so): each request gets its class
 * and scopes here, is admitted through the budget, holds its scope after a 429 and goes one at a
 * time per signer; the answers feed the venue clock. docs/DESIGN.md section 7 walks the path.
 */

/** The request budget's scope keys. */
export const SCOPES = {
  /** The venue's combined rolling window (spec part 8, scope `global`). */
  global: 'global',
  /** POST /v1/trading/orders/schedule-cancel's own window (scope `endpoint`). */
  scheduleCancel: 'schedule_cancel',
  /**
   * POST {exchange_url}/exchange, the venue's per-IP weight: a quota of its own. Its requests also
   * spend `global`, as a venue may count them in REST's per-IP window (our simulator does) and
   * counting them twice only ever sends less. POST {exchange_url}/info spends this scope alone, by
   * weight: the venue counts it with /exchange and the service never sees it, so spending `global`
   * would take 20 of the service's requests for an openOrders read that costs it nothing.
   */
  exchange: 'exchange',
} as const;

/** A REST endpoint's own scope key. */
export function endpointScope(endpoint: string): string {
  return `endpoint:${endpoint}`;
}

/** The scope a 429 on a route's schedule-cancel holds. */
export function holdScopeOf(route: ArmRoute): string {
  return route === 'rest' ? SCOPES.scheduleCancel : SCOPES.exchange;
}

/** Scope keys a scheduleCancel spends: `global` and its route's own. */
export function armScopes(route: ArmRoute): readonly string[] {
  return [SCOPES.global, holdScopeOf(route)];
}

/** A REST call on a keeper configured with no service (no `venue.base_url`). */
export class NoServiceError extends Error {
  readonly code = 'NO_SERVICE' as const;
  readonly reason = 'no_service' as const;
  constructor() {
    super('no REST service configured (venue.base_url absent): use the venue (watch.source: venue, switch.path: exchange)');
    this.name = 'NoServiceError';
  }
}

/** An arm still queued on its route when it had to leave: it goes by the other route. */
class RouteWithdrawn extends Error {
  constructor(route: ArmRoute) {
    super(`withdrawn from the ${route} route: not admitted in time`);
    this.name = 'RouteWithdrawn';
  }
}

/** Signs the arm once it is admitted and its signer's turn has come, so its deadline and nonce are drawn as it leaves. */
type BuildArm = () => Promise<SignedRequest<ScheduleCancelAction>>;

interface ArmOptions {
  signer: string;
  /** Orders it in the budget (request-class.ts orderKey); absent: an arm with no deadline to protect. */
  cls?: ArmClass;
  signal?: AbortSignal;
  onAdmitted?: RequestOptions['onAdmitted'];
  /** A `rest_then_exchange` account's other route, and the venue time the arm must leave by. */
  alternative?: RouteChoice;
  /**
   * The account's venue time and monotonic instant as it queued the request: what places
   * `alternative.leaveByVenueMs` on the monotonic clock (absent: the port's own reading now).
   */
  queuedAt?: VenueReading;
  /** Hears the route the arm finally waits on. */
  onRoute?: (route: ArmRoute) => void;
}

/** Positions and balances as the venue's info endpoint has them (`VenuePort.infoPositions`). */
export interface InfoPositions {
  /** `clearinghouseState.assetPositions[].position` of every dex read: the perp positions a fired cancel leaves open. */
  perp: InfoClearinghouseState['positions'];
  /** `spotClearinghouseState.balances`: spot tokens (outcome positions among them) and USDC. */
  balances: InfoSpotClearinghouseState['balances'];
  /** The first perp dex's `marginSummary.accountValue` (a builder dex margins on its own, maybe in another quote asset). */
  accountValue?: string;
}

export interface InfoReadOptions {
  signal?: AbortSignal;
  /** Builder-deployed perp dexes (HIP-3, `watch.perp_dexes`) read besides the default listing, one request each. */
  dexes?: readonly string[];
}

/** How long a health read (a clock sample, not urgent) may wait for room before it is shed. */
const HEALTH_MAX_WAIT_MS = 30_000;

export interface VenuePortOptions {
  /** The REST service; '' or absent: none (`watch.source: venue`), and every REST call fails at once. */
  baseUrl?: string;
  exchangeUrl: string;
  transport: HttpTransport;
  scheduler: RequestScheduler;
  venueClock: VenueClock;
  /** The local clock: 429 holds are set on its monotonic reading. */
  clock: Clock;
  /** Reads wait at most this long for budget before they are shed (the scheduler's default otherwise). */
  readMaxWaitMs?: number;
  /** The budget shared with other instances through Redis (`rate_limits.shared`), when configured. */
  shared?: Pick<SharedBudget, 'take'>;
  /** What each info request weighs (`rate_limits.info_weights`); absent: the venue's published defaults. */
  infoWeights?: InfoWeights;
  /** The venue's switch (venue/switch-facts.ts); absent: Hyperliquid's, the one venue we speak. */
  switchFacts?: VenueSwitchFacts;
}

export class VenuePort {
  private readonly restClient: RestClient | undefined;
  private readonly info: InfoClient;
  /** false when there is no REST service (`venue.base_url` absent): reads and resolves go to the venue. */
  readonly hasService: boolean;
  private readonly exchange: ExchangeClient;
  private readonly scheduler: RequestScheduler;
  private readonly venueClock: VenueClock;
  private readonly clock: Clock;
  private readonly readMaxWaitMs: number | undefined;
  private readonly signerTails = new Map<string, Promise<unknown>>();
  private readonly shared: Pick<SharedBudget, 'take'> | undefined;
  private readonly infoWeights: InfoWeights;
  /**
   * This venue's switch as the core sees it: the minimum lead, the daily trigger limit, the kind
   * of switch and the waits its refusals ask for. The one place the keeper's switch and plan get
   * them (CadenceControl.effectiveSettings, the plan's inputs); the core imports no venue facts.
   */
  readonly switchFacts: VenueSwitchFacts;
  /** REST's health over every arm and clear; the exchange endpoint, the fallback, needs none. */
  private readonly restRoute = new RouteHealth();
  /** The service's listings' health over every read (serviceReadTurn). */
  private readonly serviceReads = new RouteHealth();

  constructor(opts: VenuePortOptions) {
    const onVenueDate = (d: VenueDateSample): void => opts.venueClock.observeDateHeader(d.dateHeader, d.sendMonoMs, d.recvMonoMs);
    this.hasService = opts.baseUrl !== undefined && opts.baseUrl !== '';
    this.restClient = this.hasService ? new RestClient({ baseUrl: opts.baseUrl as string, transport: opts.transport, onVenueDate }) : undefined;
    this.exchange = new ExchangeClient({ exchangeUrl: opts.exchangeUrl, transport: opts.transport, onVenueDate });
    this.info = new InfoClient({ exchangeUrl: opts.exchangeUrl, transport: opts.transport, onVenueDate });
    this.scheduler = opts.scheduler;
    this.venueClock = opts.venueClock;
    this.clock = opts.clock;
    this.readMaxWaitMs = opts.readMaxWaitMs;
    this.shared = opts.shared;
    this.infoWeights = opts.infoWeights ?? DEFAULT_INFO_WEIGHTS;
    this.switchFacts = opts.switchFacts ?? HYPERLIQUID_SWITCH_FACTS;
  }

  /** The REST client, private so nothing reaches the service past the budget; with no service, an error (never a request to a made-up URL). */
  private get rest(): RestClient {
    if (!this.restClient) throw new NoServiceError();
    return this.restClient;
  }

  /** Resolves an account, as work that prepares its first arm. */
  getAccount(address: string): Promise<Account> {
    if (!this.hasService) return Promise.reject(new NoServiceError());
    return this.admitRest({ kind: 'prepare' }, REST_ENDPOINTS.account, undefined, () => this.rest.getAccount(address));
  }

  /**
   * The venue's role for an address, and a subaccount's master: resolves an account without the
   * service. It weighs 60 of the IP's 1,200 a minute, so it is read once per account, at provisioning.
   */
  infoUserRole(user: string, opts: { signal?: AbortSignal } = {}): Promise<InfoUserRole> {
    return this.admitInfo({ kind: 'prepare' }, 'userRole', opts.signal, (signal) => this.info.userRole(user, signal ? { signal } : {}));
  }

  /**
   * Every open order the scheduled cancel hits, as the venue counts them: the default listing (the
   * first perp dex, spot included) and one read per dex of `dexes`, each of weight 20. A builder
   * dex's coin is `dex:COIN`; the count is the sum. All or nothing (everyDex).
   */
  async infoOpenOrders(user: string, opts: InfoReadOptions = {}): Promise<InfoOpenOrders> {
    const answers = await this.everyDex(opts, (dex, signal) =>
      this.admitInfo({ kind: 'read' }, this.info.openOrdersType, signal, (s) => this.info.openOrders(user, { ...(s ? { signal: s } : {}), ...(dex !== undefined ? { dex } : {}) })),
    );
    const [first] = answers as [InfoOpenOrders, ...InfoOpenOrders[]];
    if (answers.length === 1) return first;
    return { type: first.type, orders: answers.flatMap((a) => a.orders), count: answers.reduce((n, a) => n + a.count, 0) };
  }

  /**
   * `clearinghouseState` of the first perp dex and of each of `dexes`, then `spotClearinghouseState`
   * once (spot is not per dex), each of weight 2. All or nothing (everyDex).
   */
  async infoPositions(user: string, opts: InfoReadOptions = {}): Promise<InfoPositions> {
    const perps = await this.everyDex(opts, (dex, signal) =>
      this.admitInfo({ kind: 'read' }, 'clearinghouseState', signal, (s) => this.info.clearinghouseState(user, { ...(s ? { signal: s } : {}), ...(dex !== undefined ? { dex } : {}) })),
    );
    const spot = await this.admitInfo({ kind: 'read' }, 'spotClearinghouseState', opts.signal, (signal) => this.info.spotClearinghouseState(user, signal ? { signal } : {}));
    const first = perps[0]!;
    return { perp: perps.flatMap((p) => p.positions), balances: spot.balances, ...(first.accountValue !== undefined ? { accountValue: first.accountValue } : {}) };
  }

  /**
   * One read of the default listing (`dex` undefined) and one per dex of `opts.dexes`, together.
   * All or nothing, so no partial answer passes for complete: the first failure is the whole read's,
   * and the reads still waiting for admission are withdrawn so they spend no budget.
   */
  private async everyDex<T>(opts: InfoReadOptions, read: (dex: string | undefined, signal: AbortSignal | undefined) => Promise<T>): Promise<T[]> {
    const dexes = opts.dexes ?? [];
    if (dexes.length === 0) return [await read(undefined, opts.signal)];
    const outer = opts.signal;
    const inner = new AbortController();
    const onOuter = (): void => inner.abort(outer?.reason);
    if (outer?.aborted) onOuter();
    else outer?.addEventListener('abort', onOuter, { once: true });
    try {
      return await Promise.all(
        [undefined, ...dexes].map((dex) =>
          read(dex, inner.signal).catch((e: unknown) => {
            inner.abort(e);
            throw e;
          }),
        ),
      );
    } finally {
      outer?.removeEventListener('abort', onOuter);
    }
  }

  /** The address's cumulative volume (the volume gate) and action budget (a read of weight 20). */
  infoUserRateLimit(user: string, opts: { signal?: AbortSignal; maxWaitMs?: number } = {}): Promise<InfoUserRateLimit> {
    return this.admitInfo({ kind: 'read' }, 'userRateLimit', opts.signal, (signal) => this.info.userRateLimit(user, signal ? { signal } : {}), opts.maxWaitMs);
  }

  /**
   * The named agents `user` (a master) has approved, with their expiry (a read of weight 20):
   * whether the keeper's approval is on the venue and when it lapses (account/agent-check.ts).
   */
  infoExtraAgents(user: string, opts: { signal?: AbortSignal; maxWaitMs?: number } = {}): Promise<InfoExtraAgent[]> {
    return this.admitInfo({ kind: 'read' }, 'extraAgents', opts.signal, (signal) => this.info.extraAgents(user, signal ? { signal } : {}), opts.maxWaitMs);
  }

  /** `/v1/health`; its `as_of` is the venue clock's precise sample. */
  async health(): Promise<Health> {
    if (!this.hasService) throw new NoServiceError();
    let sentMono = this.clock.monoMs();
    const get = (): Promise<Health> => {
      sentMono = this.clock.monoMs();
      return this.rest.getHealth();
    };
    const h = await this.admitRest({ kind: 'read' }, REST_ENDPOINTS.health, undefined, get, HEALTH_MAX_WAIT_MS);
    if (h.as_of) this.venueClock.observeTimestamp(h.as_of, sentMono, this.clock.monoMs());
    return h;
  }

  /** Every page of an account's open orders, each admitted as a read. */
  ordersPages(address: string, opts: { signal?: AbortSignal } = {}): AsyncGenerator<OrdersPage> {
    return this.readPages(REST_ENDPOINTS.orders, () => this.rest.ordersPages(address, {}, opts), opts.signal);
  }

  /** Every page of an account's positions, each admitted as a read. */
  positionsPages(address: string, opts: { signal?: AbortSignal } = {}): AsyncGenerator<PositionsPage> {
    return this.readPages(REST_ENDPOINTS.positions, () => this.rest.positionsPages(address, {}, opts), opts.signal);
  }

  /**
   * Arms or clears one account's switch. With `opts.alternative`, the one place an arm leaves its
   * planned route (docs/DESIGN.md section 7, "Routes"): it goes by `route` only when that is not held
   * by a 429, not a failing REST (unless this arm is the probe) and admits it in time, and moves
   * over if still queued at its leave-by time (a 429 held the route meanwhile, or its limit fell).
   */
  scheduleCancel(route: ArmRoute, build: BuildArm, opts: ArmOptions): Promise<ActionOk> {
    const alt = opts.alternative;
    if (!alt || alt.route === route) {
      opts.onRoute?.(route);
      return this.armOn(route, build, opts);
    }
    const now = this.clock.monoMs();
    // The port's timers and the budget's estimates are monotonic: the leave-by goes there once, here.
    const leaveByMono = leaveByMonoMs(alt, opts.queuedAt ?? { venueMs: this.venueClock.nowMs(), monoMs: now });
    const estimate = (r: ArmRoute): number => this.scheduler.estimateAdmitMs({ ...this.armClass(opts), scopes: armScopes(r) });
    const held = (r: ArmRoute): boolean => this.scheduler.blockedUntil(holdScopeOf(r)) > now;
    const primary = estimate(route);
    const inTime = !held(route) && primary <= leaveByMono;
    const notProbe = inTime && route === 'rest' && !this.restRoute.take(now);
    if (inTime && !notProbe) return this.armWithdrawable(route, alt.route, leaveByMono, build, opts);
    const other = estimate(alt.route);
    // The alternative when it is free and in time (or REST fails and this is not the probe), else the sooner one.
    const go = (!held(alt.route) && (other <= leaveByMono || notProbe)) || other < primary ? alt.route : route;
    opts.onRoute?.(go);
    return this.armOn(go, build, opts);
  }

  private armClass(opts: ArmOptions): ArmClass {
    return opts.cls ?? { kind: 'arm' };
  }

  /** An arm on `route`, moved to `other` if it is still queued at `leaveByMono` (monotonic ms). */
  private async armWithdrawable(route: ArmRoute, other: ArmRoute, leaveByMono: number, build: BuildArm, opts: ArmOptions): Promise<ActionOk> {
    const outer = opts.signal;
    const inner = new AbortController();
    // Made only when the arm is withdrawn: an Error captures its stack as it is made, and made for
    // every arm it was 2.7 % of a route-fault soak's CPU, for arms almost all admitted in time.
    let withdrawn: RouteWithdrawn | undefined;
    const onOuter = (): void => inner.abort(outer?.reason);
    // Aborted already (its account removed meanwhile): no abort event will come, so abort now.
    if (outer?.aborted) onOuter();
    else outer?.addEventListener('abort', onOuter, { once: true });
    let admitted = false;
    const timer = this.clock.setTimeout(() => {
      if (!admitted) inner.abort((withdrawn = new RouteWithdrawn(route)));
    }, leaveByMono - this.clock.monoMs());
    opts.onRoute?.(route);
    try {
      return await this.armOn(route, build, {
        ...opts,
        signal: inner.signal,
        onAdmitted: (w) => {
          admitted = true;
          this.clock.clearTimeout(timer);
          opts.onAdmitted?.(w);
        },
      });
    } catch (e) {
      if (withdrawn === undefined || e !== withdrawn || outer?.aborted) throw e;
      opts.onRoute?.(other);
      return this.armOn(other, build, opts);
    } finally {
      this.clock.clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    }
  }

  private armOn(route: ArmRoute, build: BuildArm, opts: ArmOptions): Promise<ActionOk> {
    const endpoint = route === 'rest' ? REST_ENDPOINTS.scheduleCancel : 'exchange:scheduleCancel';
    const request: RequestOptions = {
      ...this.request(this.armClass(opts), armScopes(route), opts.signal),
      ...(opts.onAdmitted ? { onAdmitted: opts.onAdmitted } : {}),
    };
    return this.admit(request, endpoint, holdScopeOf(route), () =>
      this.bySigner(opts.signer, async () => {
        const body = await build();
        if (route === 'exchange') return this.exchange.post(body, { signal: opts.signal });
        return this.restRoute.track(() => this.rest.scheduleCancel(body, { signal: opts.signal }), () => this.clock.monoMs(), opts.signal);
      }),
    );
  }

  /**
   * Whether a `watch.source: service_then_venue` read asks the service now: while it answers, yes;
   * while it fails, only the due probe (which must then ask it), and every other read goes to the
   * venue at once instead of spending a request and a wait on the service first.
   */
  serviceReadTurn(): boolean {
    return this.hasService && this.serviceReads.take(this.clock.monoMs());
  }

  /** approveAgent / approveBuilderFee, signed by the master: after arms, before reads. */
  approve(body: SignedRequest<ApproveAgentAction | ApproveBuilderFeeAction>, opts: { signer: string; signal?: AbortSignal }): Promise<ActionOk> {
    const endpoint = `exchange:${body.action.type}`;
    const request = this.request({ kind: 'approval' }, [SCOPES.global, SCOPES.exchange], opts.signal);
    return this.admit(request, endpoint, SCOPES.exchange, () => this.bySigner(opts.signer, () => this.exchange.post(body, { signal: opts.signal })));
  }

  /** Opens the listing at its first page (with no service, `rest` fails that page); every page counts in serviceReads. */
  private async *readPages<P>(endpoint: string, open: () => AsyncGenerator<P>, signal: AbortSignal | undefined): AsyncGenerator<P> {
    const pages = open();
    try {
      for (;;) {
        const r = await this.serviceReads.track(() => this.admitRest({ kind: 'read' }, endpoint, signal, () => pages.next()), () => this.clock.monoMs(), signal);
        if (r.done) return;
        yield r.value;
      }
    } finally {
      await pages.return?.(undefined).catch(() => undefined);
    }
  }

  /** An info request: the `exchange` scope alone, by its weight; a 429 holds `exchange`. */
  private admitInfo<T>(
    cls: RequestClass,
    type: Parameters<typeof infoRequestWeight>[0],
    signal: AbortSignal | undefined,
    fn: (signal: AbortSignal | undefined) => Promise<T>,
    maxWaitMs?: number,
  ): Promise<T> {
    const request: RequestOptions = { ...this.request(cls, [SCOPES.exchange], signal, maxWaitMs), weight: infoRequestWeight(type, this.infoWeights) };
    return this.admit(request, `info:${type}`, SCOPES.exchange, () => fn(signal));
  }

  /** A REST request: `global` and its endpoint's own scope, the one its 429 holds. */
  private admitRest<T>(cls: RequestClass, endpoint: string, signal: AbortSignal | undefined, fn: () => Promise<T>, maxWaitMs?: number): Promise<T> {
    const scope = endpointScope(endpoint);
    return this.admit(this.request(cls, [SCOPES.global, scope], signal, maxWaitMs), endpoint, scope, fn);
  }

  /** A request of class `cls` spending `scopes`; a read is shed after `maxWaitMs`. */
  private request(cls: RequestClass, scopes: readonly string[], signal: AbortSignal | undefined, maxWaitMs: number | undefined = this.readMaxWaitMs): RequestOptions {
    return { ...cls, scopes, ...(cls.kind === 'read' && maxWaitMs !== undefined ? { maxWaitMs } : {}), ...(signal ? { signal } : {}) };
  }

  /** Admission through the budget; a 429 holds `holdScope` (or `global`, as the venue says). */
  private async admit<T>(request: RequestOptions, endpoint: string, holdScope: string, fn: () => Promise<T>): Promise<T> {
    const shared = this.shared;
    // This instance's budget, then (when shared) a token of the common one, waited for as tokenWait says.
    const go = shared
      ? async (): Promise<T> => {
          const wait = tokenWait({
            cls: request,
            venueNowMs: this.venueClock.nowMs(),
            minLeadMs: this.switchFacts.minLeadMs,
            readMaxWaitMs: request.maxWaitMs ?? this.readMaxWaitMs,
          });
          await shared.take(request.scopes, request.kind, wait, request.weight ?? 1);
          return fn();
        }
      : fn;
    try {
      return await this.scheduler.run(request, go);
    } catch (e) {
      if (e instanceof RestError && e.httpStatus === 429) this.hold(e, endpoint, holdScope);
      throw e;
    }
  }

  private hold(e: RestError, endpoint: string, holdScope: string): void {
    const rl = e.rateLimit;
    const venueScope = rl?.scope === 'endpoint' ? 'endpoint' : 'global';
    // `exchange` is a quota of its own unless its 429 announced the combined window (a venue whose one
    // window counts every signed action: holding `exchange` alone would let REST arms run into it). A
    // detail we completed ourselves (no limit) announced nothing; an info 429 is the weight budget's,
    // whatever its detail names.
    const announcedGlobal = venueScope === 'global' && rl !== undefined && rl.limit > 0 && !endpoint.startsWith('info:');
    const scope = holdScope === SCOPES.exchange && !announcedGlobal ? SCOPES.exchange : venueScope === 'global' ? SCOPES.global : holdScope;
    const retryAfterMs = Math.max(1, rl?.retry_after_seconds ?? 1) * 1000;
    // retry_after is a duration: held on the monotonic clock, no venue offset applies.
    this.scheduler.blockScope(scope, this.clock.monoMs() + retryAfterMs);
    // Only numbers the venue announced: a 429 completed from Retry-After carries none (limit 0).
    if (rl && rl.limit > 0 && rl.window_seconds > 0) this.scheduler.adoptLimit(scope, { limit: rl.limit, windowMs: rl.window_seconds * 1000 });
  }

  /**
   * One request at a time per signer: the venue accepts nonces out of order, so two requests of one
   * signer in flight together could land in the wrong order (a late arm overwriting a clear).
   */
  private bySigner<T>(signer: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.signerTails.get(signer) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.signerTails.set(signer, tail);
    void tail.then(() => {
      if (this.signerTails.get(signer) === tail) this.signerTails.delete(signer);
    });
    return next;
  }
}
