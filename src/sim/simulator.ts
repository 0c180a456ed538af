/**
 * `startSimulator`: the venue simulator (DESIGN.md section 6) composed and listening on loopback.
 *
 * Composition: the fixture catalog and the venue state (accounts, orders, agents, nonces, scheduled
 * cancels) behind one HTTP server that also carries the WebSocket hub and the admin API. Venue time
 * is the injected clock plus an offset the faults can change at run time, so tests can model a venue
 * whose clock is ahead or behind (±3 s, ±60 s); every `Date` header, `as_of`, nonce window and
 * schedule deadline follows it. Each call builds its own instances: no module-level state, so any
 * number of simulators can run side by side in one process.
 */
import { offsetClock, systemClock, type Clock } from '../time/clock.js';
import type { AccountRef } from '../venue/types.js';
import type { SignatureRecovery } from '../venue/signing/signer.js';
import { accountRoutes } from './account-routes.js';
import { adminHandler, isLoopbackAddress } from './admin.js';
import { buildCatalog, catalogRoutes, type SimCatalog } from './catalog/index.js';
import { startRecurringSettlements } from './catalog/settlement.js';
import { FaultControl } from './faults.js';
import { parseProfile } from './profiles.js';
import { parseBudget, RateLimiter, type RateLimitConfig } from './rate-limit.js';
import { infoRoutes } from './info-routes.js';
import type { InfoWeightOverrides } from './weights.js';
import { createSimHttpHandler } from './http-handler.js';
import { IN_PROCESS_ORIGIN, InProcessLink } from './in-process.js';
import { listenSimServer, type SimServer } from './server.js';
import { ServiceSwitch, type VenueOnlyRestStatus } from './services.js';
import type { SimAccountSeed, VenueInfoState, VenueStateApi } from './types.js';
import { demoAccountSeeds } from './venue/demo.js';
import { VenueState } from './venue/index.js';
import { outcomeMarkets } from './venue/assets.js';
import { WsHub, type SimLogger } from './ws-server.js';
import { CLOB_ADMIN_PREFIX, CLOB_PREFIX, ClobVenue, type ClobVenueOptions } from './polymarket/index.js';

export interface SimulatorOptions {
  /** Loopback only (127.0.0.0/8, ::1, localhost); anything else is refused. Default 127.0.0.1. */
  host?: string;
  /** 0 (default) = an ephemeral port. */
  port?: number;
  /**
   * Listen on loopback (default true). False: no socket at all; the simulator is reached through
   * `inProcess` only (its dispatcher and WebSocket factory), and its URLs name `http://sim.in-process`.
   */
  listen?: boolean;
  /** The base clock; the real one by default. A FakeClock runs the simulator in virtual time. */
  clock?: Clock;
  /** Venue clock minus base clock at start; changeable later with `faults.setClockOffset`. */
  clockOffsetMs?: number;
  network?: 'testnet' | 'mainnet';
  /** Recover signers and enforce the venue's signer rules (default true). */
  verifySignatures?: boolean;
  /** How signers are recovered (default viem's; the benchmark plugs in libsecp256k1). */
  recoverSigner?: SignatureRecovery;
  /** Accounts seeded at start; default `demoAccountSeeds(catalog)`. Parents before subaccounts. */
  accounts?: SimAccountSeed[];
  /**
   * A named rate-limit budget (rate-limit.ts `parseBudget`): `ip_window` (default: one window of
   * 1200 per 60 s over every request, schedule-cancel 600 per 60 s) or `signed_window_100_per_5s`
   * (one window of 100 per 5 s over every signed action on both endpoints, reads not counted; any
   * `signed_window_<limit>_per_<seconds>s`), or `ip_weight_1200_per_60s` (the venue's IP weight:
   * every `/info` and `/exchange` request spends its weight, weights.ts, in one window of 1200 per
   * 60 s; REST not counted; any `ip_weight_<limit>_per_<seconds>s`). Fields of `rateLimits`
   * override it one by one.
   */
  budget?: string;
  /** The quotas, over the `budget`'s (e.g. `{ global, globalCounts: 'signed', scheduleCancel: null }`). */
  rateLimits?: RateLimitConfig;
  /**
   * Serve only the venue host (`/exchange`, `/info`, `/ws`): every `/v1` request answers
   * `venueOnlyRestStatus` (404, default, or 503), for a keeper that needs no service. Switchable at
   * run time (`sim.services`, `POST /_sim/services`).
   */
  venueOnly?: boolean;
  /** Info request weights other than the venue's published ones, by type (a venue that changed them). */
  infoWeights?: InfoWeightOverrides;
  venueOnlyRestStatus?: VenueOnlyRestStatus;
  /** Serve the loopback admin API under `/_sim/` (default true). */
  admin?: boolean;
  /** Structured log lines; silent by default. */
  logger?: SimLogger;
  /** Request body cap (default 64 KiB). */
  maxBodyBytes?: number;
  /**
   * How the venue varies within the spec (profiles.ts): a name such as `nulls`, `proxy` or
   * `random:7`, default `strict`; `spec_dialect` accepts user-signed actions naming their network
   * `venueChain`. Its clock offset applies unless `clockOffsetMs` is given.
   */
  profile?: string;
  /**
   * The Polymarket CLOB mounted under `/clob` (polymarket/clob.ts): its chain id (137 default),
   * restart and heartbeat choices, markets, rate limits. Always mounted.
   */
  clob?: Omit<ClobVenueOptions, 'clock' | 'baseClock' | 'profile'>;
  /** The CLOB's profile (polymarket/profiles.ts), e.g. `pm_weekly_restart`; default `pm_strict`. */
  clobProfile?: string;
}

export interface Simulator {
  /** `{base_url}`: REST under `/v1`. */
  readonly baseUrl: string;
  /** `{exchange_url}`: `POST {exchangeUrl}/exchange`. */
  readonly exchangeUrl: string;
  /** `{ws_url}`, without `/ws`. */
  readonly wsUrl: string;
  readonly host: string;
  /** The loopback port; 0 when not listening. */
  readonly port: number;
  /**
   * The same venue without sockets (in-process.ts): an undici Dispatcher for `HttpTransport` and a
   * `SocketFactory` for `NotificationClient`. Available whether or not it listens.
   */
  readonly inProcess: InProcessLink;
  readonly state: VenueStateApi & VenueInfoState;
  readonly catalog: SimCatalog;
  /** Venue-only or both (services.ts). */
  readonly services: ServiceSwitch;
  readonly faults: FaultControl;
  readonly rateLimiter: RateLimiter;
  readonly ws: WsHub;
  /** The venue clock: the injected clock plus the current offset. */
  readonly clock: Clock;
  /** The Polymarket CLOB: accounts and credentials, open orders, heartbeat fires, restarts. */
  readonly clob: ClobVenue;
  /** The CLOB's host for its clients: `{http base}/clob` (loopback, or the in-process origin). */
  readonly clobUrl: string;
  /** Closes the server, every socket and WebSocket client, and the venue state's timers. Idempotent. */
  stop(): Promise<void>;
}

function loopbackHost(host: string): string {
  if (host === 'localhost') return '127.0.0.1';
  if (!isLoopbackAddress(host)) throw new Error(`simulator host must be a loopback address, got ${JSON.stringify(host)}`);
  return host;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = loopbackHost(opts.host ?? '127.0.0.1');
  const baseClock = opts.clock ?? systemClock();
  const profile = parseProfile(opts.profile ?? 'strict');
  const faults = new FaultControl(baseClock, opts.clockOffsetMs ?? profile.clockOffsetMs);
  const clock = offsetClock(baseClock, () => faults.clockOffsetMs());
  // Before anything that holds timers or sockets: an unknown CLOB profile throws here.
  const clob = new ClobVenue({ ...opts.clob, clock, baseClock, profile: opts.clobProfile ?? 'pm_strict' });
  // Windows are measured on the base clock: an offset step must not open or close a window.
  const rateLimiter = new RateLimiter(baseClock, { ...parseBudget(opts.budget ?? 'ip_window'), ...opts.rateLimits });
  const ws = new WsHub({ clock: baseClock, faults, logger: opts.logger });
  const catalog = buildCatalog({ nowMs: clock.nowMs(), ...(profile.recurringOutcomes ? { recurring: { nowMs: () => clock.nowMs() } } : {}) });
  const services = new ServiceSwitch({ venueOnly: opts.venueOnly ?? false, restStatus: opts.venueOnlyRestStatus ?? 404 });
  const state = new VenueState({
    clock,
    network: opts.network ?? 'testnet',
    catalog,
    verifySignatures: opts.verifySignatures ?? true,
    specChainField: profile.specChainField,
    ...(opts.recoverSigner ? { recoverSigner: opts.recoverSigner } : {}),
    onNotification: (user: string, text: string) => {
      ws.notify(user, text);
    },
  });

  try {
    for (const seed of opts.accounts ?? demoAccountSeeds(catalog)) state.addAccount(seed);

    const accountRef = (address: string): AccountRef | undefined => {
      const a = state.getAccount(address);
      if (!a) return undefined;
      return {
        address: a.address,
        account_type: a.account_type,
        ...(a.username !== undefined ? { username: a.username } : {}),
        ...(a.image_url !== undefined ? { image_url: a.image_url } : {}),
        ...(a.venue_name !== undefined ? { venue_name: a.venue_name } : {}),
      };
    };
    const routes = [
      ...accountRoutes({ state, catalog }),
      ...catalogRoutes(catalog, {
        nowMs: () => clock.nowMs(),
        restingOrders: (outcomeId) => state.restingOrders(outcomeId),
        accountRef,
      }),
      ...infoRoutes({ state, nowMs: () => clock.nowMs(), markets: () => outcomeMarkets(catalog), ...(opts.infoWeights ? { weights: opts.infoWeights } : {}) }),
    ];
    const handler = createSimHttpHandler({
      clock,
      routes,
      faults,
      rateLimiter,
      services,
      admin: opts.admin === false ? undefined : adminHandler({ state, faults, rateLimiter, clock, info: state, services }),
      logger: opts.logger,
      ...(opts.maxBodyBytes !== undefined ? { maxBodyBytes: opts.maxBodyBytes } : {}),
      mounts: [
        {
          prefix: CLOB_PREFIX,
          handle: (req) => clob.handle(req),
          adminPrefix: CLOB_ADMIN_PREFIX,
          admin: (req) => clob.admin(req),
          faults: { faults: clob.faults, endpoint: (method, path) => clob.endpointOf(method, path), answer: (f) => clob.faultAnswer(f) },
        },
      ],
      transform: (endpoint, r) => {
        const out = profile.transform(endpoint, r.status, r.body, { venueNowMs: clock.nowMs(), hostNowMs: baseClock.nowMs() });
        return out.dateMs === undefined ? { ...r, body: out.body } : { ...r, body: out.body, headers: { ...r.headers, Date: new Date(out.dateMs).toUTCString() } };
      },
    });
    const inProcess = new InProcessLink(handler, ws);
    const server: SimServer | undefined =
      opts.listen === false ? undefined : await listenSimServer({ host, port: opts.port ?? 0, clock, routes, faults, rateLimiter, ws, handler, logger: opts.logger });
    const uninstallProfile = profile.install(faults, baseClock);
    // A recurring outcome series settles on the venue clock (catalog/settlement.ts).
    const stopSettlements = catalog.recurring
      ? startRecurringSettlements({ clock, series: catalog.recurring, settle: (outcomeId, fraction) => state.settleOutcome(outcomeId, fraction) })
      : () => undefined;
    const uninstall = (): void => {
      stopSettlements();
      uninstallProfile();
    };

    const hostPart = host.includes(':') ? `[${host}]` : host;
    const httpBase = server ? `http://${hostPart}:${server.port}` : IN_PROCESS_ORIGIN;
    let stopping: Promise<void> | undefined;
    return {
      baseUrl: httpBase,
      exchangeUrl: httpBase,
      wsUrl: server ? `ws://${hostPart}:${server.port}` : IN_PROCESS_ORIGIN.replace(/^http/, 'ws'),
      host,
      port: server?.port ?? 0,
      inProcess,
      state,
      catalog,
      services,
      faults,
      rateLimiter,
      ws,
      clock,
      clob,
      clobUrl: `${httpBase}${CLOB_PREFIX}`,
      stop: () => {
        stopping ??= (async () => {
          uninstall();
          try {
            handler.stop();
            if (server) await server.close();
            else await ws.close();
          } finally {
            clob.stop();
            state.stop();
          }
        })();
        return stopping;
      },
    };
  } catch (err) {
    await ws.close().catch(() => undefined);
    clob.stop();
    state.stop();
    throw err;
  }
}
