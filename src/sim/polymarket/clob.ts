/**
 * The simulated Polymarket CLOB: credentials, L1/L2 authentication, orders, the heartbeat switch,
 * rate limits and matching-engine restarts, behind one request function. The simulator mounts it
 * under `/clob` (http-handler.ts `mounts`), so a client's host is `{simulator}/clob`; the paths it
 * sees, and the paths the HMAC covers, are the venue's own (`/order`, `/v1/heartbeats`), as behind
 * a reverse proxy that strips its prefix.
 *
 * Per request, in this order: the mount's faults (http-handler.ts, `this.faults`) -> rate limits
 * (every request of an IP, 9,000 per 10 s; cancel-all also 250 per 10 s) -> route (404) ->
 * matching-engine restart (425 on the order routes, heartbeats and order reads) -> authentication
 * (401) -> a due heartbeat lapse settled -> the route.
 *
 * Keys: one per (address, nonce), as `createOrDeriveApiKey` expects (create refuses an existing
 * one, derive returns it); keys of other nonces stay valid (the venue's "one active key per
 * wallet" is not modelled).
 *
 * Time is the venue clock (injected clock plus offset): `/time`, timestamps' freshness, order
 * `created_at`, heartbeat deadlines, restart windows. Rate windows run on the base clock, as the
 * rest of the simulator's do.
 */
import { createHash } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import type { Clock } from '../../time/clock.js';
import { faultSchema } from '../admin.js';
import { FaultControl, type FaultSpec, type StatusFault } from '../faults.js';
import type { SimRequest, SimResponse } from '../http-util.js';
import { RateLimiter, type RateLimitConfig, type WindowSpec } from '../rate-limit.js';
import { verifyL1, verifyL2, type Headers } from './auth.js';
import { CredentialStore, type ClobKeyRecord } from './credentials.js';
import { HeartbeatBook, type HeartbeatFire } from './heartbeats.js';
import { RestartCalendar, type EnginePhase, type RestartWindow } from './maintenance.js';
import { MarketIndex, type ClobMarket } from './markets.js';
import { checkOrder, OrderBook, postOrderSchema, type OpenOrder } from './orders.js';
import { parseClobProfile, type ClobProfile } from './profiles.js';
import { ASSUMPTIONS, CLOB_TEXTS, type RestartHeartbeatMode } from './texts.js';

/** Where the simulator mounts the CLOB, and its admin routes. */
export const CLOB_PREFIX = '/clob';
export const CLOB_ADMIN_PREFIX = '/_sim/clob';

export const INITIAL_CURSOR = 'MA==';
export const END_CURSOR = 'LTE=';

/** The CLOB's published limits: general 9,000 per 10 s; `DELETE /cancel-all` 250 per 10 s. */
export const CLOB_GENERAL_LIMIT: WindowSpec = { limit: 9_000, windowSeconds: 10 };
export const CLOB_CANCEL_ALL_LIMIT: WindowSpec = { limit: 250, windowSeconds: 10 };
export const CANCEL_ALL_ENDPOINT = 'DELETE /cancel-all';

export interface ClobRateLimits {
  general?: WindowSpec;
  cancelAll?: WindowSpec | null;
}

export interface ClobVenueOptions {
  /** The venue clock. */
  clock: Clock;
  /** The clock rate windows are measured on (default the venue clock). */
  baseClock?: Clock;
  /** The chain orders and ClobAuth proofs are signed for: 137 (Polygon, default) or 80002 (Amoy). */
  chainId?: number;
  /** A CLOB profile name (profiles.ts), default `pm_strict`. */
  profile?: string;
  /** Overrides the profile's choice. */
  restartHeartbeats?: RestartHeartbeatMode;
  nullWhileLive?: 'reject' | 'restart';
  markets?: ClobMarket[];
  /** Seeds the deterministic credentials. */
  credentialSeed?: string;
  rateLimits?: ClobRateLimits;
  openOrdersPageSize?: number;
}

/** A request as the mount hands it over: the venue path (prefix stripped), the raw body text. */
export interface ClobRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: string;
  remoteAddress: string;
}

/** Credentials as the admin API and `createAccount` give them: usable as the SDK's `ApiKeyCreds`. */
export interface ClobAccountCreds {
  address: string;
  key: string;
  secret: string;
  passphrase: string;
}

type Auth = 'none' | 'l1' | 'l2';

interface RouteCtx {
  req: ClobRequest;
  nowMs: number;
  /** The proven API key (L2 routes). */
  key?: ClobKeyRecord;
  /** The proven (address, nonce) (L1 routes). */
  l1?: { address: string; nonce: number };
  /** The JSON body, parsed leniently ('' -> undefined). */
  json: { ok: true; value: unknown } | { ok: false };
}

interface ClobRoute {
  method: string;
  path: string;
  auth: Auth;
  /** Answered 425 while the matching engine restarts. */
  engine: boolean;
  run(ctx: RouteCtx): SimResponse | Promise<SimResponse>;
}

const answer = (status: number, body: unknown, headers?: Record<string, string>): SimResponse => (headers ? { status, body, headers } : { status, body });
const clobError = (status: number, error: string): SimResponse => answer(status, { error });

function ipOf(remote: string): string {
  return remote.toLowerCase().startsWith('::ffff:') ? remote.slice(7) : remote || 'unknown';
}

export class ClobVenue {
  readonly credentials: CredentialStore;
  readonly orders = new OrderBook();
  readonly heartbeats: HeartbeatBook;
  readonly calendar: RestartCalendar;
  readonly markets: MarketIndex;
  readonly rateLimiter: RateLimiter;
  readonly chainId: number;
  readonly profile: ClobProfile;
  /**
   * Request faults in front of the CLOB (latency, forced status, reset, broken body), its own set:
   * the Hyperliquid side's faults never reach it. Target one route by `endpointOf`'s name
   * (`POST /v1/heartbeats`); a `path` target means nothing here and is refused by the admin route.
   */
  readonly faults: FaultControl;
  private restartHeartbeats: RestartHeartbeatMode;
  private readonly pageSize: number;
  private readonly routes: ClobRoute[];

  constructor(private readonly opts: ClobVenueOptions) {
    this.profile = parseClobProfile(opts.profile ?? 'pm_strict');
    this.chainId = opts.chainId ?? 137;
    this.credentials = new CredentialStore(opts.credentialSeed);
    this.markets = new MarketIndex(opts.markets);
    this.calendar = new RestartCalendar({ weekly: this.profile.weekly });
    this.restartHeartbeats = opts.restartHeartbeats ?? this.profile.restartHeartbeats;
    this.pageSize = opts.openOrdersPageSize ?? ASSUMPTIONS.openOrdersPageSize;
    this.rateLimiter = new RateLimiter(opts.baseClock ?? opts.clock, this.limitConfig(opts.rateLimits ?? {}));
    this.faults = new FaultControl(opts.baseClock ?? opts.clock);
    this.heartbeats = new HeartbeatBook({
      clock: opts.clock,
      cancelAll: (address) => this.orders.cancelAll(address),
      ...(opts.nullWhileLive ? { nullWhileLive: opts.nullWhileLive } : {}),
      deadline: (lastBeatMs, timeoutMs) => this.deadline(lastBeatMs, timeoutMs),
    });
    this.routes = this.buildRoutes();
  }

  // ---- the API tests and the admin routes use ----

  /** L2 credentials for `address` (nonce 0 by default): issued, or the ones already issued. */
  createAccount(address: string, nonce = 0): ClobAccountCreds {
    if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new RangeError(`not an address: ${JSON.stringify(address)}`);
    if (!Number.isSafeInteger(nonce) || nonce < 0) throw new RangeError('nonce must be a non-negative integer');
    const r = this.credentials.ensure(address, nonce);
    return { address: r.address, key: r.key, secret: r.secret, passphrase: r.passphrase };
  }

  /**
   * The demo's resting orders (`npm start`): `count` bids of the minimum size on the first fixture
   * market, as a bot with the account's credentials would have posted them (its API key the owner).
   * Demo only: a test places orders with the SDK, as a bot does.
   */
  seedDemoOrders(address: string, count = 2): OpenOrder[] {
    const creds = this.createAccount(address);
    const market = this.markets.markets[0]!;
    const placed: OpenOrder[] = [];
    for (let i = 0; i < count; i++) {
      const order: OpenOrder = {
        id: `0x${createHash('sha256').update(`demo:${creds.address}:${i}`).digest('hex')}`,
        status: 'LIVE',
        owner: creds.key,
        maker_address: creds.address,
        market: market.conditionId,
        asset_id: market.tokens[i % 2]!.tokenId,
        side: 'BUY',
        original_size: String(market.minOrderSize),
        size_matched: '0',
        price: (0.3 + i * 0.01).toFixed(2),
        associate_trades: [],
        outcome: market.tokens[i % 2]!.outcome,
        created_at: Math.floor(this.opts.clock.nowMs() / 1000),
        expiration: '0',
        order_type: 'GTC',
      };
      if (!this.orders.has(creds.address, order.id)) this.orders.place(creds.address, order);
      placed.push(order);
    }
    return placed;
  }

  /** The open orders of `address` (after settling a due heartbeat lapse). */
  openOrders(address: string): OpenOrder[] {
    this.heartbeats.settle(address);
    return this.orders.open(address, {}, this.opts.clock.nowMs());
  }

  /** Heartbeat lapses so far (each with its venue time and the orders it cancelled). */
  fires(address?: string): HeartbeatFire[] {
    return this.heartbeats.fires(address);
  }

  /** Starts a matching-engine restart now (venue time): 425 for `restartMs`, then post-only. */
  triggerRestart(): RestartWindow {
    const w = this.calendar.trigger(this.opts.clock.nowMs());
    this.heartbeats.reschedule();
    return w;
  }

  phase(): EnginePhase {
    return this.calendar.phase(this.opts.clock.nowMs());
  }

  restartHeartbeatMode(): RestartHeartbeatMode {
    return this.restartHeartbeats;
  }

  setRestartHeartbeats(mode: RestartHeartbeatMode): void {
    this.restartHeartbeats = mode;
    this.heartbeats.reschedule();
  }

  configureRateLimits(limits: ClobRateLimits): void {
    this.rateLimiter.configure(this.limitConfig(limits));
  }

  stop(): void {
    this.heartbeats.stop();
  }

  // ---- the venue ----

  /** The endpoint name of a request (rate limits, fault targets): `POST /order`, `GET /data/order/*`. */
  endpointOf(method: string, path: string): string {
    const route = this.route(method, path);
    return route ? `${route.method} ${route.path}` : `${method} (unknown)`;
  }

  /** A forced status in the CLOB's format: `{"error": text}` (429 with Retry-After). */
  faultAnswer(f: StatusFault): SimResponse {
    const error = f.message ?? (f.status === 429 ? CLOB_TEXTS.tooManyRequests : (STATUS_CODES[f.status] ?? 'error'));
    return f.status === 429 ? answer(429, { error }, { 'Retry-After': String(f.retryAfterSeconds ?? 1) }) : clobError(f.status, error);
  }

  private route(method: string, path: string): ClobRoute | undefined {
    return this.routes.find((r) => r.method === method && (r.path === path || (r.path.endsWith('/*') && path.startsWith(r.path.slice(0, -1)) && path.length > r.path.length - 1)));
  }

  async handle(req: ClobRequest): Promise<SimResponse> {
    const route = this.route(req.method, req.path);
    const endpoint = this.endpointOf(req.method, req.path);
    const decision = this.rateLimiter.check(ipOf(req.remoteAddress), endpoint, 'read');
    if (!decision.ok) return answer(429, { error: CLOB_TEXTS.tooManyRequests }, { 'Retry-After': String(decision.detail.retry_after_seconds) });
    if (!route) return clobError(404, 'not found');
    const nowMs = this.opts.clock.nowMs();
    if (route.engine && this.calendar.phase(nowMs) === 'restarting') return clobError(425, ASSUMPTIONS.restartText);

    let json: RouteCtx['json'];
    try {
      json = { ok: true, value: req.body.trim() === '' ? undefined : (JSON.parse(req.body) as unknown) };
    } catch {
      json = { ok: false };
    }
    const ctx: RouteCtx = { req, nowMs, json };
    if (route.auth === 'l2') {
      const key = verifyL2(this.credentials, { method: req.method, path: req.path, body: req.body, headers: req.headers, nowMs });
      if (!key) return clobError(401, CLOB_TEXTS.unauthorized);
      ctx.key = key;
      this.heartbeats.settle(key.address);
    } else if (route.auth === 'l1') {
      const l1 = await verifyL1(this.chainId, req.headers, nowMs);
      if (!l1) return clobError(401, CLOB_TEXTS.invalidL1);
      ctx.l1 = l1;
    }
    return route.run(ctx);
  }

  private buildRoutes(): ClobRoute[] {
    const ok = (): SimResponse => answer(200, 'OK');
    const tokenRead = (read: (m: ClobMarket, tokenId: string) => unknown) => (ctx: RouteCtx): SimResponse => {
      const id = ctx.req.query.get('token_id');
      if (!id || !/^\d{1,78}$/.test(id)) return clobError(400, CLOB_TEXTS.invalidTokenId);
      const found = this.markets.token(id);
      return found ? answer(200, read(found.market, id)) : clobError(404, CLOB_TEXTS.marketNotFound);
    };
    const creds = (r: ClobKeyRecord): SimResponse => answer(200, { apiKey: r.key, secret: r.secret, passphrase: r.passphrase });
    const routes: ClobRoute[] = [
      { method: 'GET', path: '/', auth: 'none', engine: false, run: ok },
      { method: 'GET', path: '/ok', auth: 'none', engine: false, run: ok },
      { method: 'GET', path: '/time', auth: 'none', engine: false, run: (ctx) => answer(200, Math.floor(ctx.nowMs / 1000)) },
      { method: 'GET', path: '/tick-size', auth: 'none', engine: false, run: tokenRead((m) => ({ minimum_tick_size: Number(m.tickSize) })) },
      { method: 'GET', path: '/neg-risk', auth: 'none', engine: false, run: tokenRead((m) => ({ neg_risk: m.negRisk })) },
      { method: 'GET', path: '/fee-rate', auth: 'none', engine: false, run: tokenRead((m) => ({ base_fee: m.baseFeeBps })) },
      {
        method: 'GET',
        path: '/book',
        auth: 'none',
        engine: false,
        // No matching and no other traders: the book is empty but for its parameters.
        run: tokenRead((m, tokenId) => ({ market: m.conditionId, asset_id: tokenId, bids: [], asks: [], tick_size: m.tickSize, min_order_size: String(m.minOrderSize), neg_risk: m.negRisk })),
      },
      {
        method: 'POST',
        path: '/auth/api-key',
        auth: 'l1',
        engine: false,
        run: (ctx) => {
          const l1 = ctx.l1 as { address: string; nonce: number };
          const r = this.credentials.create(l1.address, l1.nonce);
          return r ? creds(r) : clobError(400, CLOB_TEXTS.couldNotCreate);
        },
      },
      {
        method: 'GET',
        path: '/auth/derive-api-key',
        auth: 'l1',
        engine: false,
        run: (ctx) => {
          const l1 = ctx.l1 as { address: string; nonce: number };
          const r = this.credentials.existing(l1.address, l1.nonce);
          return r ? creds(r) : clobError(400, CLOB_TEXTS.couldNotDerive);
        },
      },
      { method: 'GET', path: '/auth/api-keys', auth: 'l2', engine: false, run: (ctx) => answer(200, { apiKeys: [(ctx.key as ClobKeyRecord).key] }) },
      { method: 'POST', path: '/order', auth: 'l2', engine: true, run: (ctx) => this.postOrder(ctx) },
      { method: 'DELETE', path: '/order', auth: 'l2', engine: true, run: (ctx) => this.cancelOne(ctx) },
      { method: 'DELETE', path: '/orders', auth: 'l2', engine: true, run: (ctx) => this.cancelMany(ctx) },
      {
        method: 'DELETE',
        path: '/cancel-all',
        auth: 'l2',
        engine: true,
        run: (ctx) => answer(200, { canceled: this.orders.cancelAll((ctx.key as ClobKeyRecord).address), not_canceled: {} }),
      },
      { method: 'GET', path: '/data/orders', auth: 'l2', engine: ASSUMPTIONS.restartBlocksReads, run: (ctx) => this.listOrders(ctx) },
      { method: 'GET', path: '/data/order/*', auth: 'l2', engine: ASSUMPTIONS.restartBlocksReads, run: (ctx) => this.getOrder(ctx) },
    ];
    for (const path of this.profile.heartbeatPaths) routes.push({ method: 'POST', path, auth: 'l2', engine: true, run: (ctx) => this.heartbeat(ctx) });
    return routes;
  }

  private async postOrder(ctx: RouteCtx): Promise<SimResponse> {
    const key = ctx.key as ClobKeyRecord;
    if (!ctx.json.ok) return clobError(400, CLOB_TEXTS.invalidPayload);
    const parsed = postOrderSchema.safeParse(ctx.json.value);
    if (!parsed.success) return clobError(400, CLOB_TEXTS.invalidPayload);
    const checked = await checkOrder(parsed.data, {
      chainId: this.chainId,
      markets: this.markets,
      apiKey: key.key,
      address: key.address,
      nowMs: ctx.nowMs,
      postOnlyPhase: this.calendar.phase(ctx.nowMs) === 'post_only',
    });
    if (!checked.ok) return clobError(checked.status, checked.error);
    if (this.orders.has(key.address, checked.order.id)) return clobError(400, CLOB_TEXTS.invalidPayload);
    this.orders.place(key.address, checked.order);
    return answer(200, { success: true, errorMsg: '', orderID: checked.order.id, transactionsHashes: [], status: 'live', takingAmount: '', makingAmount: '' });
  }

  private cancelOne(ctx: RouteCtx): SimResponse {
    const body = ctx.json.ok ? (ctx.json.value as { orderID?: unknown } | undefined) : undefined;
    if (!body || typeof body !== 'object' || typeof body.orderID !== 'string' || body.orderID === '') return clobError(400, CLOB_TEXTS.invalidPayload);
    return answer(200, this.orders.cancel((ctx.key as ClobKeyRecord).address, [body.orderID]));
  }

  private cancelMany(ctx: RouteCtx): SimResponse {
    const ids = ctx.json.ok ? ctx.json.value : undefined;
    if (!Array.isArray(ids) || !ids.every((i): i is string => typeof i === 'string' && i !== '')) return clobError(400, CLOB_TEXTS.invalidPayload);
    return answer(200, this.orders.cancel((ctx.key as ClobKeyRecord).address, ids));
  }

  private listOrders(ctx: RouteCtx): SimResponse {
    const q = ctx.req.query;
    const cursor = q.get('next_cursor') || INITIAL_CURSOR;
    if (cursor === END_CURSOR) return answer(200, { data: [], next_cursor: END_CURSOR, limit: this.pageSize, count: 0 });
    const offsetText = Buffer.from(cursor, 'base64').toString('utf8');
    if (!/^\d{1,9}$/.test(offsetText)) return clobError(400, 'invalid next_cursor');
    const offset = Number(offsetText);
    const all = this.orders.open(
      (ctx.key as ClobKeyRecord).address,
      { id: q.get('id') ?? undefined, market: q.get('market') ?? undefined, asset_id: q.get('asset_id') ?? undefined },
      ctx.nowMs,
    );
    const data = all.slice(offset, offset + this.pageSize);
    const next = offset + this.pageSize < all.length ? Buffer.from(String(offset + this.pageSize), 'utf8').toString('base64') : END_CURSOR;
    return answer(200, { data, next_cursor: next, limit: this.pageSize, count: data.length });
  }

  private getOrder(ctx: RouteCtx): SimResponse {
    const id = decodeURIComponent(ctx.req.path.slice('/data/order/'.length));
    const found = this.orders.open((ctx.key as ClobKeyRecord).address, { id }, ctx.nowMs)[0];
    return found ? answer(200, found) : clobError(404, 'order not found');
  }

  private heartbeat(ctx: RouteCtx): SimResponse {
    if (!ctx.json.ok) return clobError(400, 'Invalid payload');
    const body = ctx.json.value;
    let id: string | null = null;
    if (body !== undefined && body !== null) {
      if (typeof body !== 'object' || Array.isArray(body)) return clobError(400, 'Invalid payload');
      const raw = (body as { heartbeat_id?: unknown }).heartbeat_id;
      if (raw !== undefined && raw !== null && typeof raw !== 'string') return clobError(400, 'Invalid payload');
      id = raw ?? null;
    }
    const r = this.heartbeats.beat((ctx.key as ClobKeyRecord).address, id);
    return r.ok ? answer(200, { heartbeat_id: r.heartbeatId }) : answer(400, { [this.profile.heartbeatErrorKey]: CLOB_TEXTS.invalidHeartbeat, heartbeat_id: r.current });
  }

  /** A chain's deadline: last beat + timeout, held past a restart in `suspend` mode. */
  private deadline(lastBeatMs: number, timeoutMs: number): number {
    let d = lastBeatMs + timeoutMs;
    if (this.restartHeartbeats !== 'suspend') return d;
    let from = lastBeatMs;
    for (let i = 0; i < 8; i++) {
      const w = this.calendar.firstStartBetween(from, d);
      if (!w) break;
      d = Math.max(d, w.backMs + timeoutMs);
      from = w.startMs;
    }
    return d;
  }

  private limitConfig(l: ClobRateLimits): RateLimitConfig {
    const cancelAll = l.cancelAll === undefined ? CLOB_CANCEL_ALL_LIMIT : l.cancelAll;
    return { global: l.general ?? CLOB_GENERAL_LIMIT, globalCounts: 'all', scheduleCancel: null, endpoints: cancelAll ? { [CANCEL_ALL_ENDPOINT]: cancelAll } : {} };
  }

  // ---- admin (`/_sim/clob/...`, loopback only: the simulator's admin gate applies) ----

  admin(req: SimRequest): SimResponse {
    const sub = req.path.slice(CLOB_ADMIN_PREFIX.length) || '/';
    const body = (req.body ?? {}) as Record<string, unknown>;
    const address = (req.query.get('address') ?? undefined)?.toLowerCase();
    try {
      if (req.method === 'POST' && sub === '/accounts') {
        const nonce = body.nonce === undefined ? 0 : body.nonce;
        if (typeof body.address !== 'string' || typeof nonce !== 'number') return clobError(400, 'body must be {address: 0x.., nonce?: number}');
        return answer(200, this.createAccount(body.address, nonce));
      }
      if (req.method === 'GET' && sub === '/orders') {
        if (!address) return clobError(400, 'address query parameter required');
        return answer(200, { orders: this.openOrders(address) });
      }
      if (req.method === 'GET' && sub === '/fires') return answer(200, { fires: this.fires(address) });
      if (req.method === 'GET' && sub === '/heartbeats') return answer(200, { venueTimeMs: this.opts.clock.nowMs(), heartbeats: this.heartbeats.stats(address) });
      if (req.method === 'GET' && sub === '/state') return answer(200, this.state(address));
      if (req.method === 'POST' && sub === '/restart') return answer(200, { window: this.triggerRestart() });
      if (req.method === 'POST' && sub === '/settings') {
        const mode = body.restartHeartbeats;
        if (mode !== undefined && mode !== 'lapse' && mode !== 'suspend') return clobError(400, "restartHeartbeats must be 'lapse' or 'suspend'");
        const nullMode = body.nullWhileLive;
        if (nullMode !== undefined && nullMode !== 'reject' && nullMode !== 'restart') return clobError(400, "nullWhileLive must be 'reject' or 'restart'");
        if (mode) this.setRestartHeartbeats(mode);
        if (nullMode) this.heartbeats.setNullWhileLive(nullMode);
        return answer(200, this.state(undefined));
      }
      if (req.method === 'POST' && sub === '/rate-limits') {
        this.configureRateLimits({
          ...(body.general !== undefined ? { general: body.general as WindowSpec } : {}),
          ...(body.cancelAll !== undefined ? { cancelAll: body.cancelAll as WindowSpec | null } : {}),
        });
        return answer(200, this.rateLimiter.describe());
      }
      if (req.method === 'POST' && sub === '/faults') {
        const parsed = Array.isArray(req.body) ? z.array(faultSchema).safeParse(req.body) : faultSchema.safeParse(req.body);
        if (!parsed.success) return clobError(400, `invalid fault: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
        const specs = (Array.isArray(parsed.data) ? parsed.data : [parsed.data]) as FaultSpec[];
        const misfit = specs.find((f) => !['latency', 'status', 'reset', 'body'].includes(f.kind) || 'path' in f);
        if (misfit) return clobError(400, 'CLOB faults are request faults (latency, status, reset, body) targeted by endpoint, without a path');
        const ids = specs.map((f) => this.faults.add(f));
        return answer(200, { ids, faults: this.faults.snapshot().requestFaults });
      }
      if (req.method === 'DELETE' && sub === '/faults') {
        const id = req.query.get('id');
        if (id === null) this.faults.reset();
        else if (!this.faults.remove(id)) return clobError(404, 'fault not found');
        return answer(200, { faults: this.faults.snapshot().requestFaults });
      }
      if (req.method === 'DELETE' && sub === '/rate-limits') {
        this.rateLimiter.reset();
        return answer(200, {});
      }
    } catch (err) {
      return clobError(400, err instanceof Error ? err.message : String(err));
    }
    return clobError(404, `admin route ${req.method} ${req.path} not found`);
  }

  /** The venue clock, engine phase, restart settings; with an address its chain, orders and fires. */
  state(address: string | undefined): Record<string, unknown> {
    const nowMs = this.opts.clock.nowMs();
    return {
      venueTimeMs: nowMs,
      phase: this.calendar.phase(nowMs),
      window: this.calendar.windowAt(nowMs) ?? null,
      nextWeeklyRestartMs: this.calendar.nextWeeklyAfter(nowMs) ?? null,
      restartHeartbeats: this.restartHeartbeats,
      heartbeatPaths: this.profile.heartbeatPaths,
      profile: this.profile.name,
      chainId: this.chainId,
      ...(address
        ? { heartbeat: this.heartbeats.chain(address) ?? null, openOrders: this.openOrders(address).length, fires: this.fires(address) }
        : { fires: this.fires().length }),
    };
  }
}
