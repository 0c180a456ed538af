import type { Clock, TimerHandle } from '../time/clock.js';
import { rearmsPerDay } from '../plan/cadence.js';
import { ADDRESS_BUDGET_READ_EVERY_MS } from '../plan/read-plan.js';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { InfoUserRateLimit } from '../venue/info-decode.js';
import { VENUE_FACTS } from '../venue/facts.js';
import type { AccountState } from './keeper-types.js';
import { readFailureOf, type ReadFailure } from './watcher.js';

/**
 * The address's own action budget and the volume gate, from the venue's `userRateLimit` (issue 20
 * item 5; docs/VENUE.md "Rate limits"). Every re-arm spends one of the address's actions, which
 * the trader's bot shares: `dms_keeper_address_actions_left{account}` is `nRequestsCap -
 * nRequestsUsed` at the last read (negative: exhausted, one action per 10 s), and
 * `address_budget_low` is logged at warn once per crossing when a day of re-arms at the planned
 * period would take more than `watch.address_budget_warn_share` of it.
 *
 * `cumVlm` below the gate is reported up front (`below_volume_gate` at warn,
 * `dms_keeper_account_ineligible` 1, `/status` `problem`), before the account's first arm when the
 * budget admits the read promptly: the keeper waits for the first read (at most FIRST_READ_WAIT_MS)
 * before starting its switch. The
 * first arm is still sent: the venue's refusal is the authority (our read may be stale by then, and
 * a subaccount's gate may not be the figure its own `cumVlm` shows), a refused arm costs one
 * request, and holding arms on a reading of ours would leave an account unprotected whenever that
 * reading is wrong. After the refusal the switch asks every 5 minutes, as before.
 */

/**
 * How long one of these reads may wait for budget before it is shed: longer than a watcher's read
 * (10 s), because a cold start asks them of every account at once (20 weight each: 20 accounts
 * are 20 s of a 1,200-a-minute budget, and with 10 s more than half were shed), and a shed one
 * is asked again only after SHED_RETRY_MS. Arms never wait behind them (reads go last).
 */
export const ADDRESS_BUDGET_READ_MAX_WAIT_MS = 60_000;
/** A read our budget shed is asked again this much later, not a whole ADDRESS_BUDGET_READ_EVERY_MS. */
export const SHED_RETRY_MS = 60_000;

/**
 * The first read may hold an account's first arm this long, so a report of the volume gate comes
 * before the arm: enough for an answer on a healthy link, not for a queue. At the venue's 1,200
 * weight a minute a read of 20 takes a second of the budget, so when many accounts start at once
 * most reads wait their turn, and holding every first arm for them would leave the accounts
 * unprotected that much longer (2 s measured against test/venue-source.test.ts's 20 accounts): past
 * this bound the switch starts and the report comes with the read. During a cold start the gate
 * holds first arms anyway, and the read runs meanwhile.
 */
export const FIRST_READ_WAIT_MS = 250;


export interface AddressBudgetDeps {
  clock: Clock;
  metrics: KeeperMetrics;
  /** The port's read (weight 20, `exchange` scope), waiting at most `maxWaitMs`; absent: no reads (a venue without info). */
  read?: (user: string, opts: { maxWaitMs: number }) => Promise<InfoUserRateLimit>;
  /** The account's planned re-arm period now (CadenceControl.effectiveSettings). */
  periodMs: (m: AccountState) => number;
  /** Whether to read now (the keeper reads the venue: watch.source venue or service_then_venue). */
  enabled: () => boolean;
  /** `watch.address_budget_warn_share` (the config may change on reload). */
  warnShare: () => number;
  /** A read that failed (AccountReports.readFailed: a shed one counted like every shed read, another a warning). */
  onReadFailed: (m: AccountState, f: ReadFailure) => void;
}

/**
 * A day of re-arms at `periodMs` by each of `replicas` instances (`shard.replication`: every
 * replica's arms spend the same address budget), and whether it takes more than `share` of `left`.
 */
export function budgetLow(left: number, periodMs: number, share: number, replicas = 1): { rearmsPerDay: number; low: boolean } {
  const perDay = rearmsPerDay(periodMs, replicas);
  return { rearmsPerDay: perDay, low: left <= 0 || perDay > share * left };
}

/** `cumVlm` (a decimal text) below the venue's volume gate. */
export function belowVolumeGate(cumVlm: string): boolean {
  const v = Number(cumVlm);
  return Number.isFinite(v) && v < VENUE_FACTS.scheduleCancelVolumeGateUsd;
}

/** The reads' shell; each account's last read and next timer are its own (`AccountState.addressActions`). */
export class AddressActions {
  constructor(private readonly deps: AddressBudgetDeps) {}

  /**
   * The first read of an account (after provisioning); resolves when it answered or failed, or
   * after FIRST_READ_WAIT_MS, whichever comes first. Later reads follow every
   * ADDRESS_BUDGET_READ_EVERY_MS until `stop`.
   */
  first(m: AccountState): Promise<void> {
    if (!this.deps.read || !this.deps.enabled() || m.addressActions.reading) return Promise.resolve();
    m.addressActions.reading = true;
    const read = this.readNow(m);
    let timer: TimerHandle | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = this.deps.clock.setTimeout(resolve, FIRST_READ_WAIT_MS);
    });
    return Promise.race([read, bound]).finally(() => {
      if (timer) this.deps.clock.clearTimeout(timer);
    });
  }

  /** No more reads of the account (removed, or the keeper stopping); `forget`: its last read goes too. */
  stop(m: AccountState, forget = false): void {
    const b = m.addressActions;
    if (b.timer) this.deps.clock.clearTimeout(b.timer);
    b.timer = undefined;
    b.reading = false;
    if (forget) b.view = undefined;
  }

  private schedule(m: AccountState, afterMs: number): void {
    if (m.removed || !m.addressActions.reading) return;
    m.addressActions.timer = this.deps.clock.setTimeout(() => void this.readNow(m), afterMs);
  }

  private async readNow(m: AccountState): Promise<void> {
    let nextMs = ADDRESS_BUDGET_READ_EVERY_MS;
    try {
      if (!this.deps.enabled()) return;
      const r = await this.deps.read!(m.spec.address, { maxWaitMs: ADDRESS_BUDGET_READ_MAX_WAIT_MS });
      if (!m.removed) this.observe(m, r);
    } catch (e) {
      const f = readFailureOf(e);
      this.deps.onReadFailed(m, f);
      if (f.reason === 'shed') nextMs = SHED_RETRY_MS;
    } finally {
      this.schedule(m, nextMs);
    }
  }

  private observe(m: AccountState, r: InfoUserRateLimit): void {
    const account = m.spec.name;
    const left = r.nRequestsCap - r.nRequestsUsed;
    const before = m.addressActions.view;
    const periodMs = this.deps.periodMs(m);
    const share = this.deps.warnShare();
    const { rearmsPerDay, low } = budgetLow(left, periodMs, share, m.spec.coveredBy?.length ?? 1);
    const below = belowVolumeGate(r.cumVlm);
    m.addressActions.view = { cumVlm: r.cumVlm, used: r.nRequestsUsed, cap: r.nRequestsCap, left, belowVolumeGate: below, low };
    this.deps.metrics.addressActionsLeft.set({ account }, left);
    const fields = { actions_left: left, n_requests_used: r.nRequestsUsed, n_requests_cap: r.nRequestsCap, rearm_every_seconds: periodMs / 1000, rearms_per_day: rearmsPerDay, warn_share: share };
    if (low && !before?.low) {
      m.log.warn({ event: 'address_budget_low', ...fields }, `a day of re-arms (${rearmsPerDay}) would take more than ${share * 100}% of the address's ${left} actions left (the trader's bot spends the same budget)`);
    } else if (!low && before?.low) {
      m.log.info({ event: 'address_budget_ok', ...fields }, "the address's action budget holds a day of re-arms again");
    } else {
      m.log.debug({ event: 'address_budget', ...fields }, 'address action budget read');
    }
    if (below) {
      this.deps.metrics.ineligible.set({ account }, 1);
      if (!before?.belowVolumeGate) {
        const s = m.runner?.snapshot();
        m.log.warn(
          // before_first_arm: no arm of this account had left yet (the report came first)
          { event: 'below_volume_gate', cum_vlm: r.cumVlm, required_usd: VENUE_FACTS.scheduleCancelVolumeGateUsd, before_first_arm: !s || (s.lastResult === null && s.inFlight === null) },
          `the venue reports $${r.cumVlm} traded, below its $${VENUE_FACTS.scheduleCancelVolumeGateUsd} volume gate: it will refuse the scheduled cancel`,
        );
      }
    } else if (before?.belowVolumeGate) {
      // The switch's own phase says ineligible until the venue accepts an arm again.
      if (m.runner?.snapshot().phase !== 'ineligible') this.deps.metrics.ineligible.set({ account }, 0);
      m.log.info({ event: 'volume_gate_passed', cum_vlm: r.cumVlm, required_usd: VENUE_FACTS.scheduleCancelVolumeGateUsd }, 'the venue reports enough volume traded for the scheduled cancel');
    }
  }
}
