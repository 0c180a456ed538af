/**
 * The heartbeat relay, the shell (docs/liveness.md, "Fleets"): a fleet's instances share the Redis
 * of `rate_limits.shared`, so a bot sends its heartbeats to one address (a Kubernetes Service) and
 * whichever instance receives one for another shard's account authenticates it here and publishes
 * `{account, heard_at}` (never the token); every instance applies those of its own accounts, if
 * fresh (relay.ts relayVerdict). The bus (Redis pub/sub in production, app/heartbeat-bus.ts) is
 * injected; nothing here waits on it: a heartbeat is answered from memory, a publish is sent and
 * not awaited, and while the bus is down foreign heartbeats are refused (503, retried) and the
 * outage is logged once.
 */
import type { Logger } from 'pino';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { Clock } from '../time/clock.js';
import type { ForeignHeartbeats } from './bot-liveness.js';
import { countHeartbeat, tokenDigest, type HeartbeatTarget } from './liveness.js';
import { formatRelayed, parseRelayed, relayVerdict } from './relay.js';

/** The fleet's channel, as the relay uses it (one publishing and one subscribed connection). */
export interface HeartbeatBus {
  /** Both connections ready: a publish goes out, relayed heartbeats come in. */
  up(): boolean;
  /** Sends at once (never queued while disconnected); a failure is reported through `onState`. */
  publish(message: string): void;
  /** Every message of the channel from now on; `onState` hears each change of `up()`. */
  start(handlers: { onMessage: (message: string) => void; onState: (up: boolean, detail: string) => void }): void;
}

/** Another shard's account whose bot heartbeats: its token (read at start and on each reload, kept as a digest only). */
export interface ForeignAccountSpec {
  name: string;
  silenceMs: number;
  token: () => Promise<string>;
}

export interface HeartbeatRelayDeps {
  bus: HeartbeatBus;
  clock: Clock;
  metrics: KeeperMetrics;
  logger: Logger;
  /** How far two instances' clocks may differ (the keeper's `maxClockSkewMs`). */
  clockAllowanceMs: () => number;
  /** The silence of this shard's heartbeat account; undefined: not one of ours (ignored). */
  silenceOf: (account: string) => number | undefined;
  /** Applies a fresh relayed heartbeat to this shard's account (BotLiveness.relayedHeartbeat). */
  apply: (account: string, heardAgoMs: number) => void;
}

interface Foreign {
  digest: Buffer | null;
  silenceMs: number;
  window: HeartbeatTarget['window'];
}

/** Ignored relayed heartbeats are logged at most this often (a wrong clock would log every second). */
const IGNORED_LOG_EVERY_MS = 60_000;

export class HeartbeatRelay implements ForeignHeartbeats {
  private readonly foreign = new Map<string, Foreign>();
  private stopped = false;
  /** The bus as last reported: null before its first report. An outage is logged once, on its way down. */
  private busUp: boolean | null = null;
  private lastIgnoredLogMs = -Infinity;

  constructor(private readonly deps: HeartbeatRelayDeps) {}

  /**
   * The other shards' heartbeat accounts (at start and on each reload): each token is read now and
   * kept only as its SHA-256 digest, as for this shard's own accounts. A token that cannot be read
   * refuses that account's heartbeats here (401), loudly.
   */
  async configure(specs: readonly ForeignAccountSpec[]): Promise<void> {
    const next = new Map<string, Foreign>();
    await Promise.all(
      specs.map(async (s) => {
        let digest: Buffer | null = null;
        try {
          digest = tokenDigest(await s.token());
        } catch (err) {
          this.deps.logger.error({ event: 'heartbeat_token_unreadable', account: s.name, relay: true, err: (err as Error).message }, "cannot read the heartbeat token of another shard's account: its heartbeats are refused here");
        }
        next.set(s.name, { digest, silenceMs: s.silenceMs, window: this.foreign.get(s.name)?.window ?? { startMs: -Infinity, count: 0 } });
      }),
    );
    this.foreign.clear();
    for (const [k, v] of next) this.foreign.set(k, v);
  }

  start(): void {
    this.deps.bus.start({ onMessage: (m) => this.received(m), onState: (up, detail) => this.state(up, detail) });
  }

  stop(): void {
    this.stopped = true;
  }

  target(name: string): HeartbeatTarget | undefined {
    const f = this.foreign.get(name);
    if (!f) return undefined;
    return { digest: f.digest ?? Buffer.alloc(32), window: f.window, silenceMs: f.silenceMs };
  }

  counted(name: string, nowMonoMs: number): void {
    const f = this.foreign.get(name);
    if (f) f.window = countHeartbeat(f.window, nowMonoMs);
  }

  relay(accounts: readonly string[]): boolean {
    if (this.stopped || !this.deps.bus.up()) {
      // Logged once per outage (state()); a bus that never reported is down from the start.
      if (this.busUp === null) this.state(false, 'not connected yet');
      return false;
    }
    const heardAtMs = this.deps.clock.nowMs();
    for (const account of accounts) this.deps.bus.publish(formatRelayed({ account, heardAtMs }));
    this.deps.metrics.heartbeatsRelayed.inc({ direction: 'out' }, accounts.length);
    return true;
  }

  private received(message: string): void {
    if (this.stopped) return;
    const h = parseRelayed(message);
    if (!h) return;
    const silenceMs = this.deps.silenceOf(h.account);
    if (silenceMs === undefined) return; // another shard's: its own instance applies it
    const v = relayVerdict(h.heardAtMs, this.deps.clock.nowMs(), silenceMs, this.deps.clockAllowanceMs());
    if (!v.apply) {
      const now = this.deps.clock.monoMs();
      if (now - this.lastIgnoredLogMs >= IGNORED_LOG_EVERY_MS) {
        this.lastIgnoredLogMs = now;
        this.deps.logger.warn(
          { event: 'relayed_heartbeat_ignored', account: h.account, why: v.why, age_ms: v.ageMs },
          v.why === 'stale' ? 'a relayed heartbeat came a silence period or more after it was heard: not applied (slow Redis or a clock difference between instances?)' : "a relayed heartbeat is stamped later than this instance's clock allows: not applied (check the instances' clocks)",
        );
      }
      return;
    }
    this.deps.metrics.heartbeatsRelayed.inc({ direction: 'in' });
    this.deps.apply(h.account, v.heardAgoMs);
  }

  private state(up: boolean, detail: string): void {
    if (this.stopped || up === this.busUp) return;
    const was = this.busUp;
    this.busUp = up;
    if (!up) this.deps.logger.warn({ event: 'heartbeat_relay_down', detail }, "heartbeat relay unavailable: heartbeats for other shards' accounts are refused (503, retried) and this shard's accounts hear only heartbeats sent to this instance");
    else if (was === false) this.deps.logger.info({ event: 'heartbeat_relay_up' }, 'heartbeat relay back');
  }
}
