/**
 * Bot liveness, the shell (docs/liveness.md): one record per account with `liveness:`, a timer at
 * the moment it would fall silent, the probes, the heartbeat endpoint's answers, and the metrics
 * and log lines of every transition. Verdicts come from liveness.ts; what the switch does with them
 * is switch-machine.ts. Nothing here waits on I/O that an arm waits on: a heartbeat is a hash and
 * a map update, a probe has its own connection pool and a timeout on the injected clock.
 */
import type { Logger } from 'pino';
import { PROBE_RESULTS, type KeeperMetrics } from '../obs/metrics.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import {
  checkHeartbeat,
  countHeartbeat,
  isAlive,
  judge,
  probeResultOf,
  refusal,
  silentAtMs,
  tokenDigest,
  type BotRecord,
  type BotState,
  type HeartbeatRefusal,
  type HeartbeatTarget,
  type HttpAnswer,
  type LivenessSpec,
  type ProbeResult,
} from './liveness.js';

/** GETs a health URL; resolves to the HTTP status. Aborted by `signal` at the probe's timeout. */
export type ProbeFn = (url: string, signal: AbortSignal) => Promise<number>;

/**
 * Heartbeats for accounts of other shards (heartbeat-relay.ts): authenticated here against their
 * tokens, all or nothing with the rest of the request, then published to the fleet.
 */
export interface ForeignHeartbeats {
  /** Another shard's heartbeat account, as the check needs it; undefined: not one. */
  target(name: string): HeartbeatTarget | undefined;
  /** Counts an accepted heartbeat in the account's one-second window. */
  counted(name: string, nowMonoMs: number): void;
  /** Publishes them (heard now); false, nothing published, while the relay is unavailable. */
  relay(accounts: readonly string[]): boolean;
}

export interface BotLivenessDeps {
  clock: Clock;
  metrics: KeeperMetrics;
  logger: Logger;
  /** Absent: probes cannot run (every probe counts as `error`). */
  probe?: ProbeFn;
  /**
   * Where an account's bot record lives: on the account itself (account.ts), found by the name a
   * heartbeat or a relayed sighting carries; undefined: no such account here. The verdict goes to
   * the same slot (BotSlot.botVerdict), not looked up again by name.
   */
  slot: (account: string) => BotSlot | undefined;
  /** Absent: a heartbeat naming an account of another shard is refused as unknown (404). */
  foreign?: ForeignHeartbeats;
}

/** `/status` `accounts[].bot`, the liveness part (the keeper adds the switch's part). */
export interface BotView {
  liveness: 'heartbeat' | 'probe';
  state: BotState;
  last_seen: string | null;
  silent_since: string | null;
  silence_seconds: number;
  on_silence: LivenessSpec['onSilence'];
}

/** An account's place for its bot's record (the account carries it; BotLiveness keeps no map of its own). */
export interface BotSlot {
  bot?: BotEntry;
  /** The verdict changed between alive (or waiting) and silent: the account acts on it (its switch hears it). */
  botVerdict(alive: boolean): void;
}

/** What is known of one account's bot. */
export interface BotEntry {
  spec: LivenessSpec;
  rec: BotRecord;
  state: BotState;
  /** Wall-clock ms of the last sighting and of the fall into silence, for /status. */
  lastSeenWallMs: number | null;
  silentSinceWallMs: number | null;
  /** The token's digest; null until read (heartbeats are refused until then). */
  digest: Buffer | null;
  window: HeartbeatTarget['window'];
  timer: TimerHandle | null;
  log: Logger;
  /** The probe loop it is in (absent: not probed). */
  probe?: ProbeLoop;
}

interface ProbeLoop {
  url: string;
  everyMs: number;
  timeoutMs: number;
  /** The accounts it probes for, each by its slot (the record is `slot.bot`). */
  accounts: Map<string, BotSlot>;
  timer: TimerHandle | null;
  inFlight: boolean;
}

export class BotLiveness {
  /** One probe per URL and period, whatever the number of accounts its bot trades. */
  private readonly probes = new Map<string, ProbeLoop>();
  private stopped = false;

  constructor(private readonly deps: BotLivenessDeps) {}

  /**
   * Starts judging an account (or applies a reload): a new account gets one silence period from
   * now; an account already judged keeps what was seen of its bot. `spec` undefined: not judged.
   * Resolves once the token is read (a token that cannot be read refuses every heartbeat, loudly).
   */
  async configure(account: string, spec: LivenessSpec | undefined, log: Logger): Promise<void> {
    if (!spec) {
      this.forget(account);
      return;
    }
    const slot = this.deps.slot(account);
    if (!slot) return;
    const now = this.deps.clock.monoMs();
    const old = slot.bot;
    const e: BotEntry = old ?? {
      spec,
      rec: { lastSeenMonoMs: null, judgingSinceMonoMs: now },
      state: 'waiting',
      lastSeenWallMs: null,
      silentSinceWallMs: null,
      digest: null,
      window: { startMs: -Infinity, count: 0 },
      timer: null,
      log,
    };
    e.spec = spec;
    e.log = log;
    slot.bot = e;
    if (!old) this.deps.metrics.botAlive.set({ account }, 1);
    for (const result of PROBE_RESULTS) this.deps.metrics.botProbes.inc({ account, result }, 0);
    for (const f of [this.deps.metrics.botSilences, this.deps.metrics.cancelSoon, this.deps.metrics.heartbeats]) f.inc({ account }, 0);
    this.placeProbe(account, slot, e, spec.probe);
    this.arm(account, slot, e);
    if (spec.heartbeat) {
      try {
        e.digest = tokenDigest(await spec.heartbeat.token());
      } catch (err) {
        e.digest = null;
        log.error({ event: 'heartbeat_token_unreadable', err: (err as Error).message }, 'cannot read the heartbeat token: every heartbeat for this account is refused');
      }
    } else e.digest = null;
  }

  /**
   * Stops judging an account (removed by a reload, or its liveness block removed); `slot`: the
   * account's own, when it is no longer found by name (a removed account).
   */
  forget(account: string, slot: BotSlot | undefined = this.deps.slot(account)): void {
    const e = slot?.bot;
    if (!slot || !e) return;
    if (e.timer) this.deps.clock.clearTimeout(e.timer);
    slot.bot = undefined;
    this.placeProbe(account, slot, e, undefined);
    for (const f of [this.deps.metrics.botAlive, this.deps.metrics.botLastSeen, this.deps.metrics.botSilences, this.deps.metrics.cancelSoon, this.deps.metrics.heartbeats, this.deps.metrics.botProbes]) f.remove({ account });
  }

  /** Whether the account's bot counts as alive now; true for an account without liveness. */
  alive(account: string): boolean {
    const e = this.entry(account);
    return e === undefined || isAlive(e.state);
  }

  judged(account: string): boolean {
    return (this.entry(account) !== undefined);
  }

  view(account: string): BotView | null {
    const e = this.entry(account);
    if (!e) return null;
    const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
    return {
      liveness: e.spec.heartbeat ? 'heartbeat' : 'probe',
      state: e.state,
      last_seen: iso(e.lastSeenWallMs),
      silent_since: iso(e.silentSinceWallMs),
      silence_seconds: e.spec.silenceMs / 1000,
      on_silence: e.spec.onSilence,
    };
  }

  /** `POST /heartbeat`: the answer, all or nothing (liveness.ts checkHeartbeat), counted either way. */
  heartbeat(input: { authorization: string | undefined; body: string }): HttpAnswer {
    const now = this.deps.clock.monoMs();
    const foreign = this.deps.foreign;
    const r = checkHeartbeat(input, (name) => this.target(name) ?? foreign?.target(name), now);
    if (!r.ok) return this.refused(r.reason, r);
    // Each named account looked up once: this shard's (heard here), the rest another shard's.
    const own: string[] = [];
    const echo: string[] = [];
    const away: string[] = [];
    for (const account of r.accounts) {
      const slot = this.deps.slot(account);
      const e = slot?.bot;
      if (!slot || !e) {
        away.push(account);
        continue;
      }
      own.push(account);
      e.window = countHeartbeat(e.window, now);
      this.deps.metrics.heartbeats.inc({ account });
      this.seen(account, slot, e, now, 'heartbeat');
      if (e.spec.echo) echo.push(account);
    }
    // This shard's accounts another replica arms too: published for it, best effort (heard here already).
    if (echo.length > 0) foreign?.relay(echo);
    if (away.length === 0 || !foreign) return { status: 200, body: { status: 'ok', accounts: r.accounts, silence_seconds: r.silenceMs / 1000 } };
    for (const account of away) foreign.counted(account, now);
    // Redis out of reach: this shard's accounts were heard (their bot is alive, the token proved
    // it); the others must be retried, perhaps on the pod that holds them.
    if (!foreign.relay(away)) return this.refused('relay_unavailable', refusal('relay_unavailable', { accounts: away.slice(0, 16), applied: own, retry_after_seconds: 1 }));
    return { status: 200, body: { status: 'ok', accounts: r.accounts, relayed: away, silence_seconds: r.silenceMs / 1000 } };
  }

  /** The silence of this shard's account whose bot heartbeats; undefined: no such account here. */
  heartbeatSilenceMs(account: string): number | undefined {
    const e = this.entry(account);
    return e?.spec.heartbeat ? e.spec.silenceMs : undefined;
  }

  /**
   * A heartbeat another instance heard `heardAgoMs` ago (relayed, and judged fresh by relay.ts):
   * applied as if received here then, the same silence timer. False: not an account of this shard
   * with heartbeats.
   */
  relayedHeartbeat(account: string, heardAgoMs: number): boolean {
    const slot = this.deps.slot(account);
    const e = slot?.bot;
    if (!slot || !e?.spec.heartbeat) return false;
    const at = this.deps.clock.monoMs() - heardAgoMs;
    this.deps.metrics.heartbeats.inc({ account });
    // Never moves the last sighting back (a heartbeat received here since is newer).
    if (e.rec.lastSeenMonoMs === null || at > e.rec.lastSeenMonoMs) this.seen(account, slot, e, at, 'relay');
    return true;
  }

  /** A request the HTTP layer refused before it could be read (too large). */
  refusedEarly(reason: HeartbeatRefusal): HttpAnswer {
    return this.refused(reason, refusal(reason));
  }

  /** The keeper stops: no more timers or probes (`slots`: every account's, whose silence timers are cleared). */
  stop(slots: Iterable<BotSlot> = []): void {
    this.stopped = true;
    for (const slot of slots) if (slot.bot?.timer) this.deps.clock.clearTimeout(slot.bot.timer);
    for (const p of this.probes.values()) if (p.timer) this.deps.clock.clearTimeout(p.timer);
  }

  private refused(reason: HeartbeatRefusal, answer: HttpAnswer): HttpAnswer {
    this.deps.metrics.heartbeatsRefused.inc({ reason });
    return { status: answer.status, body: answer.body, ...(answer.headers ? { headers: answer.headers } : {}) };
  }

  /** The record of the account's bot, on the account (`deps.slot`); undefined: not judged here. */
  private entry(account: string): BotEntry | undefined {
    return this.deps.slot(account)?.bot;
  }

  private target(name: string): HeartbeatTarget | undefined {
    const e = this.entry(name);
    if (!e || !e.spec.heartbeat) return undefined;
    // A token not (yet) read matches nothing: an all-zero digest no SHA-256 output equals in practice.
    return { digest: e.digest ?? Buffer.alloc(32), window: e.window, silenceMs: e.spec.silenceMs };
  }

  private seen(account: string, slot: BotSlot, e: BotEntry, atMonoMs: number, how: 'heartbeat' | 'probe' | 'relay'): void {
    e.rec = { ...e.rec, lastSeenMonoMs: atMonoMs };
    e.lastSeenWallMs = this.deps.clock.nowMs() - (this.deps.clock.monoMs() - atMonoMs);
    this.deps.metrics.botLastSeen.set({ account }, e.lastSeenWallMs / 1000);
    if (e.state !== 'alive') this.transition(account, slot, e, 'alive', how);
    // The silence timer is not moved on every heartbeat (thousands a second): when it fires, it
    // finds the newer sighting and sets itself again (arm()).
  }

  private arm(account: string, slot: BotSlot, e: BotEntry): void {
    if (this.stopped) return;
    if (e.timer) this.deps.clock.clearTimeout(e.timer);
    e.timer = null;
    if (e.state === 'silent') return; // a sighting (seen) brings it back
    const delay = Math.max(0, silentAtMs(e.spec, e.rec) - this.deps.clock.monoMs());
    e.timer = this.deps.clock.setTimeout(() => {
      e.timer = null;
      const state = judge(e.spec, e.rec, this.deps.clock.monoMs());
      if (state === 'silent') this.transition(account, slot, e, 'silent', 'silence');
      else this.arm(account, slot, e);
    }, delay);
  }

  private transition(account: string, slot: BotSlot, e: BotEntry, to: BotState, how: 'heartbeat' | 'probe' | 'relay' | 'silence'): void {
    const from = e.state;
    e.state = to;
    const alive = isAlive(to);
    this.deps.metrics.botAlive.set({ account }, alive ? 1 : 0);
    if (to === 'silent') {
      e.silentSinceWallMs = this.deps.clock.nowMs();
      this.deps.metrics.botSilences.inc({ account });
      const lastSeen = e.lastSeenWallMs === null ? null : new Date(e.lastSeenWallMs).toISOString();
      e.log.warn(
        { event: 'bot_silent', last_seen: lastSeen, silence_seconds: e.spec.silenceMs / 1000, on_silence: e.spec.onSilence },
        e.spec.onSilence === 'cancel_soon' ? 'bot silent: cancelling its orders soon, no more re-arms until it is back' : 'bot silent: no more re-arms; the venue cancels at the last deadline',
      );
      slot.botVerdict(false);
      return;
    }
    e.silentSinceWallMs = null;
    e.log.info({ event: 'bot_alive', from, via: how }, from === 'silent' ? 'bot back: re-arming at the normal horizon' : 'bot alive');
    if (from === 'silent') {
      this.arm(account, slot, e);
      slot.botVerdict(true);
    }
  }

  // ---- probes ----

  /** Moves the account to the probe loop of its URL (creating or dropping loops as needed). */
  private placeProbe(account: string, slot: BotSlot, e: BotEntry, probe: LivenessSpec['probe']): void {
    const current = e.probe;
    if (current && probe && current.url === probe.url && current.everyMs === probe.everyMs && current.timeoutMs === probe.timeoutMs) return;
    if (current) {
      e.probe = undefined;
      current.accounts.delete(account);
      if (current.accounts.size === 0) {
        if (current.timer) this.deps.clock.clearTimeout(current.timer);
        this.probes.delete(current.url);
      }
    }
    if (!probe) return;
    let loop = this.probes.get(probe.url);
    // Another account's loop for the URL with other timings: the first account's timings win (one probe per URL).
    if (!loop) {
      loop = { url: probe.url, everyMs: probe.everyMs, timeoutMs: probe.timeoutMs, accounts: new Map(), timer: null, inFlight: false };
      this.probes.set(probe.url, loop);
      this.scheduleProbe(loop, 0);
    }
    loop.accounts.set(account, slot);
    e.probe = loop;
  }

  private scheduleProbe(loop: ProbeLoop, delayMs: number): void {
    if (this.stopped) return;
    loop.timer = this.deps.clock.setTimeout(() => {
      loop.timer = null;
      if (this.probes.get(loop.url) !== loop) return;
      this.scheduleProbe(loop, loop.everyMs);
      // A probe still out (it has its timeout) is not doubled by the next period's.
      if (!loop.inFlight) void this.runProbe(loop);
    }, delayMs);
  }

  private async runProbe(loop: ProbeLoop): Promise<void> {
    loop.inFlight = true;
    const ac = new AbortController();
    let timedOut = false;
    const timer = this.deps.clock.setTimeout(() => {
      timedOut = true;
      ac.abort(new Error('probe timeout'));
    }, loop.timeoutMs);
    let result: ProbeResult;
    try {
      if (!this.deps.probe) throw new Error('no probe transport');
      const status = await Promise.race([
        this.deps.probe(loop.url, ac.signal),
        new Promise<never>((_, reject) => ac.signal.addEventListener('abort', () => reject(ac.signal.reason as Error), { once: true })),
      ]);
      result = timedOut ? 'timeout' : probeResultOf(status);
    } catch {
      result = timedOut ? 'timeout' : 'error';
    } finally {
      this.deps.clock.clearTimeout(timer);
      loop.inFlight = false;
    }
    const now = this.deps.clock.monoMs();
    for (const [account, slot] of loop.accounts) {
      this.deps.metrics.botProbes.inc({ account, result });
      // The record is there while the slot is in the loop (forget() takes it out of both at once).
      if (result === 'ok' && slot.bot) this.seen(account, slot, slot.bot, now, 'probe');
    }
  }
}
