import type { Logger } from 'pino';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { Clock } from '../time/clock.js';
import type { VenueClock } from '../time/venue-clock.js';
import { StateWriteError } from '../state/atomic-file.js';
import type { TriggerCounter } from '../state/triggers.js';
import { decToNumber } from '../venue/decimal.js';
import { VENUE_FACTS } from '../venue/facts.js';
import type { VenuePort } from '../venue/port.js';
import { isHeartbeatSwitch, type VenueSwitchFacts } from '../venue/switch-facts.js';
import type { NotificationClientEvent } from '../venue/ws.js';
import type { RunnerReport } from '../switch/account-runner.js';
import type { ActivityReporter } from './activity.js';
import { RETRY } from '../switch/switch-machine.js';
import type { AccountState } from './keeper-types.js';
import { READ_SOURCES, type ReadFailure, type WatchReport } from './watcher.js';
import { triggersLeft } from '../liveness/liveness.js';
import { cancelledOrders, lastReadBefore, ordersSnapshot } from '../switch/fired.js';

/**
 * What the keeper tells the world about its accounts: the runners', watchers' and WebSocket's
 * reports turned into metrics, log lines and state (open orders, positions, fired cancels with what
 * they left open, the daily trigger count; the last two persisted).
 */
export interface ReportsDeps {
  clock: Clock;
  venueClock: VenueClock;
  metrics: KeeperMetrics;
  logger: Logger;
  triggers: TriggerCounter;
  activity: ActivityReporter;
  /** Warn when this many of the day's triggers are spent (the config may change on reload). */
  triggerWarnAt: () => number;
  /** The venue port: the venue's daily trigger limit (VenuePort.switchFacts). */
  venue: Pick<VenuePort, 'switchFacts'>;
  /** An account's venue's switch facts (CadenceControl.venueOf); absent: the venue port's. */
  factsOf?: (spec: AccountState['spec']) => VenueSwitchFacts;
  accounts: () => Iterable<AccountState>;
}

/** A re-arm later than this after its planned slot is logged (`arm_late`) with where the time went. */
export const ARM_LATE_WARN_MS = 1_000;

export class AccountReports {
  constructor(private readonly deps: ReportsDeps) {}


  runner(m: AccountState, r: RunnerReport): void {
    const { metrics } = this.deps;
    const account = m.spec.name;
    switch (r.type) {
      case 'arm': {
        metrics.armRequests.inc({ account, result: r.result });
        this.deps.activity.recordArm(r.result, r.reason);
        metrics.armLatency.observe({ path: r.route }, r.latencyMs / 1000);
        if (r.result === 'ok') {
          metrics.lastArmSuccess.set({ account }, this.deps.clock.nowMs() / 1000);
          if (r.lagMs !== undefined) {
            metrics.armLag.observe(Math.max(0, r.lagMs) / 1000);
            // A re-arm that left over a second after its slot is worth a line: where the time went
            // (timer: the event loop woke late; queued: the request budget or the signer's turn).
            if (r.lagMs > ARM_LATE_WARN_MS) {
              m.log.warn(
                {
                  event: 'arm_late',
                  lag_ms: Math.round(r.lagMs),
                  timer_late_ms: Math.round(r.timerLateMs ?? 0),
                  queued_ms: Math.round(r.queuedMs ?? 0),
                  // the budget's part of the queued time and what held it (the rest: the signer's turn)
                  budget_wait_ms: r.wait ? Math.round(r.wait.waitedMs) : null,
                  held_by: r.wait?.heldBy ?? null,
                  went_ahead: r.wait?.wentAhead ?? null,
                  latency_ms: Math.round(r.latencyMs),
                },
                're-arm left late',
              );
            }
          }
          if (r.soon) {
            metrics.cancelSoon.inc({ account });
            m.log.warn(
              { event: 'cancel_soon_sent', path: r.route, deadline: new Date(r.deadlineMs!).toISOString(), triggers_left: triggersLeft(this.deps.triggers.get(account), this.deps.venue.switchFacts) },
              `bot silent: the venue cancels this account's orders at ${new Date(r.deadlineMs!).toISOString()}`,
            );
            break;
          }
          // Routine: debug. The minute summary counts arms; state changes and failures are info+.
          // Its record (a Date formatted) is made only when debug is on: every arm passes here.
          if (m.log.isLevelEnabled('debug')) m.log.debug({ event: 'arm', result: 'ok', path: r.route, deadline: new Date(r.deadlineMs!).toISOString(), latency_ms: r.latencyMs, venue: { status: 'ok' } }, 'armed');
        } else {
          if (r.result === 'rate_limited') metrics.rateLimited.inc({ scope: r.scope === 'global' ? 'global' : 'endpoint' });
          if (r.result === 'rejected' && r.reason === 'ineligible') this.ineligible(m, r);
          else m.log.warn({ event: 'arm', result: r.result, path: r.route, reason: r.reason, retry_after_ms: r.retryAfterMs, venue: r.message }, 'arm failed');
        }
        break;
      }
      case 'clear':
        m.log[r.result === 'ok' ? 'info' : 'warn']({ event: 'clear', result: r.result, path: r.route, reason: r.reason, venue: r.message ?? { status: 'ok' } }, r.result === 'ok' ? 'schedule cleared' : 'clear failed');
        break;
      case 'lapsed':
        void this.lapsed(m, r.deadlineMs, r.botSilent);
        break;
      case 'phase': {
        // The way into the first arm (starting -> unarmed -> armed) is start-up, which the
        // progress records cover; every later change is news and logged at info.
        const startUp = r.from === 'starting' || (r.to === 'armed' && firstArm(m) && r.from !== 'ineligible');
        // Into `ineligible`: the refused arm's warning has just said it, and why (ineligible()).
        m.log[startUp || r.to === 'ineligible' ? 'debug' : 'info']({ event: 'phase', from: r.from, to: r.to }, `switch ${r.to}`);
        metrics.ineligible.set({ account }, r.to === 'ineligible' ? 1 : 0);
        break;
      }
      case 'reprovision_requested':
        m.log.warn({ event: 'reprovision' }, 'the venue does not know our signer; approving a new agent');
        metrics.agentApproved.set({ account }, 0);
        break;
      case 'stopped':
        m.log.debug({ event: 'stopped' }, 'switch stopped'); // the phase change says it at info
        break;
    }
  }

  /**
   * The venue refused an arm because the account is below its volume gate: not a failure of ours
   * and not news after the first time. One warning when the account becomes ineligible, saying what
   * it means (it cannot be protected) and what happens next (asked again every 5 minutes); each
   * later refusal is debug, and the minute summary counts them apart from failures. The arm is
   * still a `rejected` attempt in `dms_keeper_arm_requests_total` (docs/DESIGN.md), and
   * `dms_keeper_account_ineligible` says it as a state.
   */
  private ineligible(m: AccountState, r: Extract<RunnerReport, { type: 'arm' }>): void {
    const retryMinutes = RETRY.ineligibleMs / 60_000;
    const fields = { event: 'arm', result: r.result, path: r.route, reason: r.reason, required_usd: VENUE_FACTS.scheduleCancelVolumeGateUsd, retry_in_seconds: RETRY.ineligibleMs / 1000, venue: r.message };
    // The refusal is reported before the switch takes it: already ineligible means asked again.
    if (m.runner?.snapshot().phase === 'ineligible') {
      m.log.debug(fields, `still below the venue's volume gate; asking again in ${retryMinutes} minutes`);
      return;
    }
    const traded = /Traded: \$([0-9][0-9.,]*[0-9])/.exec(r.message ?? '')?.[1];
    m.log.warn(
      fields,
      `ineligible: below the venue's $${VENUE_FACTS.scheduleCancelVolumeGateUsd} volume gate${traded ? ` (traded $${traded})` : ''}, ` +
        `so the venue refuses its scheduled cancel and this account cannot be protected; asking again every ${retryMinutes} minutes`,
    );
  }

  /**
   * A deadline passed: the venue cancelled the account's orders. Count it and say what is left. A
   * lapse unless its bot fell silent (`botSilent`): then the cancel is the switch doing its job.
   */
  async lapsed(m: AccountState, deadlineMs: number, botSilent = false): Promise<void> {
    const { metrics, triggers } = this.deps;
    const account = m.spec.name;
    // The last read before the deadline, not a poll that landed after it (fired.ts).
    const before = lastReadBefore(deadlineMs, m.orders?.snapshot, m.orders?.previous);
    const ordersBefore = before ? before.count : (m.orders?.snapshot ? null : (m.orders?.count ?? null));
    if (!botSilent) metrics.lapses.inc({ account });
    metrics.cancelsFired.inc({ account });
    let count = triggers.get(account) + 1;
    try {
      count = await triggers.record(account, this.deps.venueClock.nowMs());
    } catch (e) {
      if (e instanceof StateWriteError) metrics.stateWriteErrors.inc({ reason: e.reason });
      m.log.error({ event: 'state_write_failed', err: (e as Error).message }, 'could not persist the trigger count');
    }
    metrics.triggersToday.set({ account }, count);
    const seen = await m.watcher?.reconcile().catch(() => undefined);
    const positions = seen?.positions ?? m.positions;
    const facts = this.deps.factsOf?.(m.spec) ?? this.deps.venue.switchFacts;
    const cap = isHeartbeatSwitch(facts) ? null : facts.maxTriggersPerUtcDay;
    // By order id: orders gone before the deadline (an outcome that settled, a fill) are not the
    // cancel's, nor is a primary's dual a second order (fired.ts).
    const cancelled = before ? cancelledOrders(before, seen?.orders) : ordersBefore === null ? null : Math.max(0, ordersBefore - (seen?.orders?.length ?? 0));
    try {
      // Persisted beside the count: /status still says what fired after a restart.
      await triggers.recordFired(account, {
        at: new Date(deadlineMs).toISOString(),
        orders_cancelled: cancelled,
        positions_open: positions?.count ?? null,
        position_value_usdc: positions?.valueUsdc ?? null,
        unrealized_pnl_usdc: positions?.unrealizedPnlUsdc ?? null,
        triggers_today: count,
      });
    } catch (e) {
      if (e instanceof StateWriteError) metrics.stateWriteErrors.inc({ reason: e.reason });
      m.log.error({ event: 'state_write_failed', err: (e as Error).message }, 'could not persist the last fired cancel');
    }
    m.log.error(
      {
        event: 'cancel_fired',
        cause: botSilent ? 'bot_silent' : 'deadline_passed',
        deadline: new Date(deadlineMs).toISOString(),
        orders_before: ordersBefore,
        orders_after: seen?.orders?.length ?? null,
        orders_cancelled: cancelled,
        positions_open: positions?.count ?? null,
        position_value_usdc: positions?.valueUsdc ?? null,
        unrealized_pnl_usdc: positions?.unrealizedPnlUsdc ?? null,
        triggers_today: count,
        triggers_cap: cap,
      },
      positions && positions.count > 0
        ? `scheduled cancel fired: orders cancelled, ${positions.count} open position(s) remain (not flattened)`
        : 'scheduled cancel fired: orders cancelled',
    );
    // A heartbeat venue publishes no daily limit on fires: nothing to warn of.
    if (cap !== null && count >= this.deps.triggerWarnAt()) {
      m.log.warn({ event: 'trigger_budget', triggers_today: count, cap }, 'daily scheduled-cancel trigger budget nearly spent');
    }
  }

  watch(m: AccountState, r: WatchReport): void {
    const { metrics } = this.deps;
    const account = m.spec.name;
    switch (r.type) {
      case 'orders':
        m.orders = { count: r.count, atMs: r.atMs, source: r.source, snapshot: ordersSnapshot(r.orders, r.count, this.deps.venueClock.nowMs()), ...(m.orders?.snapshot ? { previous: m.orders.snapshot } : {}) };
        metrics.openOrders.set({ account }, r.count);
        for (const source of READ_SOURCES) metrics.ordersSource.set({ account, source }, source === r.source ? 1 : 0);
        m.runner?.observeOrders(r.count);
        break;
      case 'positions':
        m.positions = { ...r };
        metrics.positions.set({ account }, r.count);
        metrics.positionValue.set({ account }, decToNumber(r.valueUsdc));
        metrics.unrealizedPnl.set({ account }, decToNumber(r.unrealizedPnlUsdc));
        break;
      case 'read_failed':
        if (r.what === 'orders') {
          // A count we could not read is unknown, not the last one we saw: `orders_open` arms.
          m.orders = undefined;
          m.runner?.observeOrders(null);
        }
        this.readFailed(m.log, r.what, r);
        break;
    }
  }

  /** A read that failed: shed by our budget (counted, readShed), or not answered (a warning). */
  readFailed(log: Logger, what: string, f: ReadFailure): void {
    if (f.reason === 'shed') this.readShed(log, what, f.message);
    else log.warn({ event: 'read_failed', what, reason: f.reason, err: f.message }, `could not read ${what}`);
  }

  /**
   * A read our own budget shed to keep room for arms (scheduler.ts `ShedError`, DESIGN.md invariant
   * 3): routine under pressure, and thousands of them at a large cold start. Counted, exactly, in
   * `dms_keeper_reads_shed_total` and the minute summary's `reads_shed`; one debug line each.
   */
  readShed(log: Logger, what: string, message: string): void {
    this.deps.metrics.readsShed.inc();
    this.deps.activity.recordReadShed();
    log.debug({ event: 'read_shed', what, err: message }, `${what} read shed for budget`);
  }

  notification(e: NotificationClientEvent): void {
    const byAddress = (addr: string) => [...this.deps.accounts()].find((m) => m.spec.address === addr);
    switch (e.type) {
      case 'notification': {
        const targets = (e.user ? [e.user] : e.users).map(byAddress).filter((m): m is AccountState => m !== undefined);
        for (const m of targets) {
          this.deps.metrics.notifications.inc({ account: m.spec.name });
          m.log.info({ event: 'notification', text: e.text.slice(0, 500), attributed: e.user !== undefined }, 'venue notification');
          void m.watcher?.reconcile();
        }
        break;
      }
      case 'reconnected':
        for (const u of e.users) void byAddress(u)?.watcher?.reconcile();
        this.deps.logger.info({ event: 'ws_reconnected', users: e.users.length }, 'notification WebSocket reconnected');
        break;
      case 'disconnected':
        this.deps.logger.warn({ event: 'ws_disconnected', reason: e.reason, retry_in_ms: e.retryInMs }, 'notification WebSocket lost');
        break;
      case 'server_error':
        this.deps.logger.warn({ event: 'ws_error', message: e.message.slice(0, 500) }, 'WebSocket error channel');
        break;
      default:
        break;
    }
  }
}

/** True the first time the account is armed since it was added (then false). */
function firstArm(m: AccountState): boolean {
  if (m.everArmed) return false;
  m.everArmed = true;
  return true;
}
