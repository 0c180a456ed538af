/**
 * The whole keeper against the venue simulator in virtual time: one FakeClock drives both (the
 * simulator's venue clock adds an offset), and every timer waits for the work it started to finish
 * before the next one fires.
 *
 * Two carriers between them (`transport`):
 * - `in-process` (default): no sockets. The keeper's `HttpTransport` (undici `request()`, its
 *   deadlines and error classification) runs over the simulator's in-process Dispatcher, and its
 *   `NotificationClient` over in-process WebSocket pairs (src/sim/in-process.ts); the simulator's
 *   HTTP logic, profiles and faults are the ones its socket server runs. Nothing waits on real time
 *   but the state files, whose results are handed back one at a time, in the order they were asked
 *   for, when nothing else can run: every figure depends on virtual time only, to the millisecond,
 *   whatever the machine's load.
 * - `loopback`: real HTTP and WebSocket on 127.0.0.1, for a test about the wire. Virtual time then
 *   waits while answers are on their way, polling in real time (`settleStuckMs`).
 */
import { buildClobVenues, clobScopes } from '../../src/app/clob-venues.js';
import type { InfoWeights } from '../../src/venue/info.js';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import { keccak256, toHex } from 'viem';
import { expect } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { perFile } from './per-file.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/app/app.js';
import { Agent, type Dispatcher } from 'undici';
import { Keeper, type KeeperAccountSpec, type KeeperDeps, type KeeperOptions } from '../../src/keeper/keeper.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { reportBudgetLimits } from '../../src/obs/budget-limits.js';
import { monotonicView } from '../../src/time/clock.js';
import { FakeClock } from '../../src/time/fake-clock.js';
import { RequestScheduler } from '../../src/budget/scheduler.js';
import { SharedBudget, type SharedBuckets, type SharedRedisClient } from '../../src/budget/shared-budget.js';
import { VenueClock } from '../../src/time/venue-clock.js';
import { BusyCpu } from './busy-cpu.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/simulator.js';
import { AgentStore } from '../../src/state/agent-store.js';
import { TriggerCounter } from '../../src/state/triggers.js';
import { HttpTransport } from '../../src/venue/http.js';
import { loadSigningCurve } from '../../src/venue/signing/curve.js';
import { VenuePort } from '../../src/venue/port.js';
import { NotificationClient } from '../../src/venue/ws.js';
import type { SwitchConfig } from '../../src/switch/switch-machine.js';

export const T_START = Date.UTC(2026, 10, 22, 12, 0, 0);

/**
 * Where the keeper's state directories go: real files, atomic writes and fsyncs as in production,
 * on tmpfs when the machine has one (a cold start of 400 accounts writes 400 agent files, each
 * awaited before virtual time moves on; fsync on a disk shared with other work costs real seconds).
 */
const STATE_BASE = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
/**
 * Agent keys the keeper generates, from a counter rather than the system's randomness (valid
 * secp256k1 keys all the same, each one new): the venue sees the same agent addresses on every
 * run, so a timeline's every message, error text included, is the same too. The counter starts at
 * 0 in every test file (per-file.ts), whichever files ran before in the same worker.
 */
const nextAgentKey = (): `0x${string}` => keccak256(toHex(`dms-keeper harness agent ${++perFile.agentKeySeq}`));

export const DEFAULT_SWITCH: SwitchConfig = {
  deadlineMs: 60_000,
  rearmEveryMs: 15_000,
  minHorizonMs: 20_000,
  armWhen: 'always',
  onShutdown: 'keep',
  path: 'rest',
};

export interface Harness {
  clock: FakeClock;
  sim: Simulator;
  keeper: Keeper;
  logs: Array<Record<string, unknown>>;
  logText: () => string;
  metricsText: () => Promise<string>;
  metrics: ReturnType<typeof createMetrics>;
  /** The keeper's request budget (limits in force, holds). */
  scheduler: RequestScheduler;
  /** The keeper's CPU when `keeperCpuMsPerRequest` is set (requests sent, timer slip). */
  cpu: BusyCpu | undefined;
  stateDir: string;
  /** Venue-side horizon of an account now (ms), or null when none armed. */
  venueHorizonMs(address: string): number | null;
  advance(ms: number): Promise<void>;
  /** keeper.stop(), with virtual time moving while it waits. */
  stop(): Promise<void>;
  /**
   * Another keeper on this clock and simulator, with its own state directory, logs, metrics and
   * request budget (the harness's options otherwise), not yet started; close() stops it too.
   */
  addKeeper(accounts: (sim: Simulator) => KeeperAccountSpec[]): Promise<ExtraKeeper>;
  close(): Promise<void>;
}

/** A keeper that addKeeper() added to a harness. */
export interface ExtraKeeper {
  keeper: Keeper;
  logs: Array<Record<string, unknown>>;
  stateDir: string;
  /** keeper.stop(), with virtual time moving while it waits; with on_shutdown keep, the venue keeps its schedules. */
  stop(): Promise<void>;
}

export function account(name: string, address: string, key: string, over: Partial<KeeperAccountSpec> = {}, sw: Partial<SwitchConfig> = {}): KeeperAccountSpec {
  return {
    name,
    address,
    agentName: 'dms-keeper',
    validDays: 30,
    masterKey: async () => key,
    identity: `${address}|dms-keeper`,
    switch: { ...DEFAULT_SWITCH, ...sw },
    ...over,
  };
}

/** One sample of a `/metrics` text by its series (`name{labels}`); undefined when absent. */
export function gauge(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * Drives virtual time in 250 ms steps until every address has a schedule in the venue's future:
 * the ms from `t0Ms` (monotonic) to the first step that found them all armed, or Infinity when
 * `maxMs` of steps did not.
 */
export async function advanceUntilAllArmed(h: Harness, addresses: readonly string[], t0Ms: number, maxMs: number): Promise<number> {
  for (let t = 0; t < maxMs; t += 250) {
    await h.advance(250);
    if (addresses.every((a) => (h.venueHorizonMs(a) ?? 0) > 0)) return h.clock.monoMs() - t0Ms;
  }
  return Number.POSITIVE_INFINITY;
}

/**
 * The cold start as the venue saw it, exact (its action log, not sampled): from `t0VenueMs` (the
 * venue's clock), when the first and the last of `addresses` got their first accepted arm, and the
 * account-seconds left unprotected (each account's time to its first arm, summed).
 */
export function coldStartFigures(h: Harness, addresses: readonly string[], t0VenueMs: number): { firstArmedMs: number; allArmedMs: number; unprotectedAccountSeconds: number } {
  const wanted = new Set(addresses.map((a) => a.toLowerCase()));
  const armedAt = new Map<string, number>();
  for (const x of h.sim.state.actionLog()) {
    const who = x.account?.toLowerCase();
    if (x.type !== 'scheduleCancel' || x.result !== 'ok' || !who || !wanted.has(who) || armedAt.has(who)) continue;
    armedAt.set(who, x.atMs - t0VenueMs);
  }
  const times = [...armedAt.values()];
  const all = armedAt.size === wanted.size;
  return {
    firstArmedMs: times.length ? Math.min(...times) : Number.POSITIVE_INFINITY,
    allArmedMs: all ? Math.max(...times) : Number.POSITIVE_INFINITY,
    unprotectedAccountSeconds: all ? times.reduce((sum, t) => sum + t, 0) / 1000 : Number.POSITIVE_INFINITY,
  };
}

/**
 * A SharedBudget whose Redis never answers (status `connecting`, every command failing): the
 * keeper runs on `fallbackShare` of each budget, as a shard does while Redis is away.
 */
function unreachableSharedBudget(clock: FakeClock, scheduler: RequestScheduler, fallbackShare: number): SharedBudget {
  const redis: SharedRedisClient = {
    status: 'connecting',
    on: () => undefined,
    eval: () => Promise.reject(new Error('redis: not connected')),
    hdel: () => Promise.reject(new Error('redis: not connected')),
    disconnect: () => undefined,
  };
  const buckets: SharedBuckets = {
    open: () => ({ take: () => Promise.reject(new Error('redis: not connected')), stop: async () => undefined }),
    onError: () => undefined,
    close: async () => undefined,
  };
  return new SharedBudget({
    redis,
    buckets,
    clock,
    name: 'harness',
    fallbackShare,
    specs: Object.fromEntries(['global', 'schedule_cancel', 'exchange'].map((k) => [k, scheduler.specOf(k)!])),
    setLocalSpec: (scope, spec) => scheduler.setLimit(scope, spec),
  });
}

export async function startHarness(opts: {
  accounts: (sim: Simulator) => KeeperAccountSpec[];
  sim?: SimulatorOptions;
  /** Requests per `windowMs` (default 60 s) of each scope; exchange defaults to 1,200 per 60 s. */
  rateLimits?: { global: number; scheduleCancel: number; exchange?: number; windowMs?: number };
  notifications?: boolean;
  watch?: Partial<KeeperOptions['watch']>;
  stateDir?: string;
  requestTimeoutMs?: number;
  /** No REST service configured (`venue.base_url` absent): the port reads and resolves on the venue. */
  noService?: boolean;
  /** `rate_limits.info_weights` (the port's admission and the read plan); absent: the published weights. */
  infoWeights?: InfoWeights;
  /** `rate_limits.shared.fallback_share`: a shared budget whose Redis never answers, so the keeper runs on this share. */
  sharedFallbackShare?: number;
  /** How the keeper reaches the simulator: `in-process` (default, no sockets) or `loopback` (real HTTP and WebSocket). */
  transport?: 'in-process' | 'loopback';
  /**
   * Loopback only (in-process needs no guess: it knows which requests wait on the venue clock).
   * How long (real ms) requests in flight may make no progress before virtual time goes on anyway.
   * Default: 40 polls (about 40-80 ms), for scenarios that hold requests on virtual-time latency
   * faults. Scenarios without such faults that measure time bounds set more: on two loaded cores a
   * loopback answer can take longer, and letting virtual time run ahead of it stretches the run.
   */
  settleStuckMs?: number;
  /** Real ms added to every read of the state files (a slow disk), for the harness's own test. */
  stateReadDelayMs?: number;
  /** The keeper short of CPU (support/busy-cpu.ts): each request it sends takes its one thread this long (virtual ms), and its timers wait for the thread. */
  keeperCpuMsPerRequest?: number;
  /** The bots' health probes (liveness.probe); absent: every probe fails as `error`. */
  probe?: KeeperDeps['probe'];
  /** Wraps the keeper's dispatcher (an undici interceptor, e.g. to keep every body it sends); the carrier is unchanged. */
  wrapDispatcher?: (dispatcher: Dispatcher) => Dispatcher;
  /** `venue.chain_field`; absent: the venue's own name. */
  chainField?: KeeperOptions['chainField'];
  /** CLOB venues (config `venues:`), all served by the simulator's CLOB; their accounts name them in `clob.venue`. */
  clobVenues?: Array<{ name: string; requestTimeoutMs?: number; rateLimit?: { requests: number; perSeconds: number } }>;
}): Promise<Harness> {
  const inProcess = (opts.transport ?? 'in-process') === 'in-process';
  /** Requests in the keeper's transport, and state-file reads and writes not yet handed back. */
  let inflight = 0;
  // Loopback: a request the simulator holds on a virtual-time latency fault cannot finish until time
  // moves: when the in-flight count stops changing for a while, let the clock go on.
  const settleLoopback = async (): Promise<void> => {
    let idle = 0;
    let stuck = 0;
    let last = inflight;
    let progressAt = Date.now();
    const patient = opts.settleStuckMs;
    const stuckOver = (): boolean => (patient === undefined ? stuck >= 40 : Date.now() - progressAt >= patient);
    for (let i = 0; (patient !== undefined || i < 2_000) && idle < 3 && !stuckOver(); i++) {
      await new Promise<void>((r) => setImmediate(r));
      if (inflight === 0) idle++;
      else {
        idle = 0;
        if (inflight === last) stuck++;
        else {
          stuck = 0;
          progressAt = Date.now();
        }
        last = inflight;
        await new Promise<void>((r) => setTimeout(r, 1));
      }
    }
  };
  // In process: every request and frame progresses in promise continuations and setImmediate
  // callbacks, so "nothing left to run" is known exactly: no request that is not held on the venue
  // clock, no frame on its way. Only then is the oldest state-file result handed back (its real I/O
  // awaited), one at a time: the order of events never depends on how fast the disk or the machine is.
  interface DiskResult {
    finished: boolean;
    done: Promise<void>;
    deliver: () => void;
  }
  const disk: DiskResult[] = [];
  let settling = false;
  const settleInProcess = async (): Promise<void> => {
    settling = true;
    try {
      let idle = 0;
      for (let round = 0; idle < 3; round++) {
        if (round > 1_000_000) throw new Error('harness: in-process work did not settle in 1,000,000 rounds');
        await new Promise<void>((r) => setImmediate(r));
        const requests = inflight - disk.length;
        if (requests > sim.inProcess.dispatcher.waitingOnClock() || sim.inProcess.framesInFlight() > 0) {
          idle = 0;
          continue;
        }
        const head = disk.shift();
        if (head) {
          await head.done;
          head.deliver();
          idle = 0;
          continue;
        }
        idle++;
      }
    } finally {
      settling = false;
    }
  };
  const clock = new FakeClock(T_START, inProcess ? settleInProcess : settleLoopback);
  // The curve the keeper runs on in production (libsecp256k1 when its binary loads), and the same
  // library for the simulator's signer recovery (as the benchmark's): the bytes are viem's to the
  // bit, at a tenth of the CPU (pure-JS recovery was a third of a timeline's time).
  const curve = loadSigningCurve();
  const recoverSigner = curve.fallbackReason === null ? (await import('../../bench/native-recovery.js')).nativeRecovery : undefined;
  const sim = await startSimulator({ clock, listen: !inProcess, ...(recoverSigner ? { recoverSigner } : {}), ...opts.sim });
  let stateDir = opts.stateDir;
  if (stateDir === undefined) {
    stateDir = await mkdtemp(join(STATE_BASE, 'dmsk-harness-'));
    perFile.madeDirs.push(stateDir); // removed after the test file (per-file.ts)
  }

  const dispatcher = inProcess ? sim.inProcess.dispatcher : new Agent({ connections: 32 });
  /**
   * One keeper on this harness's clock and simulator, with its own logs, metrics, request budget and
   * state directory: the harness's keeper, and each one addKeeper() adds (several keepers arming the
   * same venue, as the instances of a replicated fleet do).
   */
  const makeKeeper = (accounts: KeeperAccountSpec[], keeperStateDir: string) => {
    // The keeper logs at debug, thousands of lines a timeline, and most tests read few of them: each
    // line is parsed when `logs` is next read, not as it is written (parsing every line as it came was
    // 2 s of a 400-account file's CPU). The array behind the proxy is the same one every read sees.
    const parsed: Array<Record<string, unknown>> = [];
    const lines: string[] = [];
    let parsedLines = 0;
    const parsePending = (): void => {
      for (; parsedLines < lines.length; parsedLines++) for (const l of lines[parsedLines]!.split('\n')) if (l) parsed.push(JSON.parse(l) as Record<string, unknown>);
    };
    const logs = new Proxy(parsed, {
      get(target, key, receiver) {
        parsePending();
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    // pino writes each line synchronously to any object with write(): a Writable stream's machinery
    // (its state, a tick per write) did nothing here but cost a second of CPU a large timeline.
    const stream = { write: (line: string): void => void lines.push(line) };
    const logger = createLogger('debug', stream, clock);
    const metrics = createMetrics({ version: 'test', defaultMetrics: false });
    // Short of CPU: the keeper's timers and sends wait for its one thread; the simulator's do not.
    const cpu = opts.keeperCpuMsPerRequest === undefined ? undefined : new BusyCpu(clock, opts.keeperCpuMsPerRequest);
    const kclock = cpu ? cpu.clock() : clock;
    const venueClock = new VenueClock(kclock);
    class TrackedTransport extends HttpTransport {
      override async request(r: Parameters<HttpTransport['request']>[0]) {
        // Waiting for the thread is waiting on a timer, not a request in flight (settling would never end).
        if (cpu) await cpu.turn(r.endpoint);
        inflight++;
        try {
          return await super.request(r);
        } finally {
          inflight--;
        }
      }
    }
    const transport = new TrackedTransport({
      dispatcher: opts.wrapDispatcher ? opts.wrapDispatcher(dispatcher) : dispatcher,
      clock: kclock,
      requestTimeoutMs: opts.requestTimeoutMs ?? 5_000,
      onResponse: (o) => metrics.venueRequests.inc({ endpoint: o.endpoint, code: String(o.status) }),
    });

    // State reads and writes are real I/O too: virtual time must not run ahead of them (an untracked
    // read of the state files at start let it run on by up to 6.6 s before the first request).
    const track = <T>(p: Promise<T>): Promise<T> => {
      if (!inProcess) {
        inflight++;
        return p.finally(() => inflight--);
      }
      // In process: the result waits in `disk` until settleInProcess hands it back (or, when nothing
      // is driving the clock, as soon as it is the oldest one done).
      inflight++;
      return new Promise<T>((resolve, reject) => {
        let outcome: (() => void) | undefined;
        const entry: DiskResult = {
          finished: false,
          done: p.then(
            (v) => void (outcome = () => resolve(v)),
            (e: unknown) => void (outcome = () => reject(e as Error)),
          ),
          deliver: () => {
            inflight--;
            outcome!();
          },
        };
        disk.push(entry);
        void entry.done.then(() => {
          entry.finished = true;
          if (settling) return;
          while (disk[0]?.finished) disk.shift()!.deliver();
        });
      });
    };
    const slowDisk = async <T>(read: () => Promise<T>): Promise<T> => {
      if (opts.stateReadDelayMs) await new Promise((r) => setTimeout(r, opts.stateReadDelayMs));
      return read();
    };
    class TrackedStore extends AgentStore {
      // loadChecked is the store's one read (load goes through it): what provisioning calls.
      override loadChecked(...a: Parameters<AgentStore['loadChecked']>) {
        return track(slowDisk(() => super.loadChecked(...a)));
      }
      override save(a: Parameters<AgentStore['save']>[0]) {
        return track(super.save(a));
      }
    }
    class TrackedTriggers extends TriggerCounter {
      override load() {
        return track(slowDisk(() => super.load()));
      }
      override save() {
        return track(super.save());
      }
    }
    const rl = opts.rateLimits ?? { global: 1200, scheduleCancel: 600 };
    const windowMs = rl.windowMs ?? 60_000;
    const clobVenueConfigs = (opts.clobVenues ?? []).map((v) => ({ name: v.name, clobUrl: sim.clobUrl, requestTimeoutMs: v.requestTimeoutMs ?? 1_000, rateLimit: v.rateLimit ?? { requests: 9_000, perSeconds: 10 } }));
    const scheduler = new RequestScheduler(monotonicView(kclock), {
      global: { limit: rl.global, windowMs },
      schedule_cancel: { limit: rl.scheduleCancel, windowMs },
      exchange: rl.exchange === undefined ? { limit: 1200, windowMs: 60_000 } : { limit: rl.exchange, windowMs },
      ...clobScopes(clobVenueConfigs),
    });
    const clobVenues = buildClobVenues({
      venues: clobVenueConfigs,
      urlOf: (v) => v.clobUrl,
      dispatcher,
      clock: kclock,
      scheduler,
      transportFor: (requestTimeoutMs) => new TrackedTransport({ dispatcher: opts.wrapDispatcher ? opts.wrapDispatcher(dispatcher) : dispatcher, clock: kclock, requestTimeoutMs, onResponse: (o) => metrics.venueRequests.inc({ endpoint: o.endpoint, code: String(o.status) }) }),
    });
    reportBudgetLimits(scheduler, { logger, metrics });
    // rate_limits.shared with Redis out of reach: the real SharedBudget, on its fallback share.
    const shared = opts.sharedFallbackShare === undefined ? undefined : unreachableSharedBudget(clock, scheduler, opts.sharedFallbackShare);
    const venue = new VenuePort({ ...(opts.noService ? {} : { baseUrl: sim.baseUrl }), exchangeUrl: sim.exchangeUrl, transport, scheduler, venueClock, clock: kclock, ...(opts.infoWeights ? { infoWeights: opts.infoWeights } : {}), ...(shared ? { shared } : {}) });
    const keeperOptions: KeeperOptions = {
      network: 'testnet',
      ...(opts.chainField ? { chainField: opts.chainField } : {}),
      accounts,
      watch: { ordersEveryMs: 30_000, positionsEveryMs: 60_000, notifications: opts.notifications ?? false, ...opts.watch },
      maxClockSkewMs: 2_000,
      triggerWarnAt: 8,
      armBudgetPerSecond: (rl.scheduleCancel * 1000) / windowMs,
      ...(opts.infoWeights ? { infoWeights: opts.infoWeights } : {}),
    };
    const keeper = new Keeper(keeperOptions, {
      ...(shared ? { sharedDemand: shared, budgetMode: () => shared.mode() } : {}),
      clock: kclock,
      curve: curve.curve,
      generateKey: nextAgentKey,
      venueClock,
      scheduler,
      venue,
      ...(clobVenues.size > 0 ? { clobVenues } : {}),
      notifications: opts.notifications
        ? (onEvent) =>
            new NotificationClient({
              wsUrl: sim.wsUrl,
              clock,
              onEvent,
              usersPerConnection: 1,
              random: () => 0.5,
              ...(inProcess ? { socketFactory: sim.inProcess.socketFactory } : {}),
            })
        : undefined,
      metrics,
      logger,
      agentStore: new TrackedStore(keeperStateDir),
      triggers: new TrackedTriggers(TriggerCounter.fileIn(keeperStateDir), sim.clock.nowMs()),
      ...(opts.probe ? { probe: opts.probe } : {}),
    });
    return { keeper, logs, lines, metrics, scheduler, transport, cpu };
  };
  const main = makeKeeper(opts.accounts(sim), stateDir);
  const { keeper, logs, lines, metrics, scheduler } = main;
  const transports = [main.transport];

  // start() waits for every account's first provisioning, which the port admits through the budget
  // (spaced on virtual timers): keep time moving, in small steps, until it resolves.
  // reload() likewise waits for the accounts it adds, and stop() for budget spacing and its bound.
  const driving = async <T>(work: Promise<T>, stepMs = 10, maxSteps = 20_000): Promise<T> => {
    let done = false;
    const tracked = work.finally(() => (done = true));
    for (let i = 0; i < maxSteps && !done; i++) await clock.advance(stepMs);
    return tracked;
  };
  const start = keeper.start.bind(keeper);
  const reload = keeper.reload.bind(keeper);
  keeper.start = () => driving(start());
  keeper.reload = (next) => driving(reload(next));

  const stopMoving = (): Promise<void> => driving(keeper.stop(5_000).catch(() => undefined), 50, 200);
  const extras: ExtraKeeper[] = [];
  const addKeeper = async (accounts: (s: Simulator) => KeeperAccountSpec[]): Promise<ExtraKeeper> => {
    const dir = await mkdtemp(join(STATE_BASE, 'dmsk-harness-'));
    perFile.madeDirs.push(dir); // removed after the test file (per-file.ts)
    const made = makeKeeper(accounts(sim), dir);
    transports.push(made.transport);
    const startMade = made.keeper.start.bind(made.keeper);
    made.keeper.start = () => driving(startMade());
    const extra: ExtraKeeper = { keeper: made.keeper, logs: made.logs, stateDir: dir, stop: () => driving(made.keeper.stop(5_000).catch(() => undefined), 50, 200) };
    extras.push(extra);
    return extra;
  };

  /**
   * With DMSK_TIMELINE_DIGESTS=<file>: one JSON line per harness run, a digest of what happened at
   * the venue (every signed action: when, which account, which route, its result) and of the keeper's
   * request counts by endpoint and status. Two runs of a timeline agree to the millisecond exactly
   * when their digests are equal (scripts/timeline-digests.mjs compares runs).
   */
  const recordDigest = async (): Promise<void> => {
    const out = process.env.DMSK_TIMELINE_DIGESTS;
    if (!out) return;
    const actions = sim.state.actionLog().map((a) => `${a.atMs} ${a.type} ${a.account ?? '-'} ${a.via} ${a.result}`);
    const { values } = await metrics.venueRequests.get();
    const requests = values.map((v) => `${v.labels.endpoint} ${v.labels.code} ${v.value}`).sort();
    const digest = createHash('sha256').update(actions.join('\n')).update('\n--\n').update(requests.join('\n')).digest('hex');
    const state = expect.getState();
    // A profile drawn at random (a property test's seed) names its run: only runs of one seed compare.
    const profile = opts.sim?.profile?.startsWith('random:') ? ` [${opts.sim.profile}]` : '';
    const test = `${(state.testPath ?? '').replace(`${process.cwd()}/`, '')} > ${state.currentTestName ?? '?'}${profile}`;
    appendFileSync(out, `${JSON.stringify({ test, transport: inProcess ? 'in-process' : 'loopback', endMonoMs: clock.monoMs() - T_START, actions: actions.length, digest })}\n`);
  };

  return {
    clock,
    sim,
    keeper,
    cpu: main.cpu,
    logs,
    logText: () => lines.join(''),
    metricsText: () => metrics.registry.metrics(),
    metrics,
    scheduler,
    stateDir,
    venueHorizonMs: (address) => {
      const t = sim.state.schedule(address).timeMs;
      return t === undefined ? null : t - sim.clock.nowMs();
    },
    advance: (ms) => clock.advance(ms),
    stop: () => stopMoving(),
    addKeeper,
    close: async () => {
      await stopMoving();
      for (const x of extras) await x.stop();
      await recordDigest();
      for (const t of transports) await t.close();
      if (!inProcess) await dispatcher.destroy();
      await sim.stop();
    },
  };
}
