/**
 * What the keeper tells people about its routine work, so that the log stays readable at any
 * number of accounts: single arms are debug records, and instead
 *  - one info summary a minute (armed N of M, the accounts below the venue's volume gate, the lowest
 *    horizon, arms, failures, ineligible refusals, 429s, reads shed), and
 *  - during a long cold start, a progress record every few seconds (armed N of M, ETA), also
 *    served in /status as `start_progress`.
 * State changes and failures are logged where they happen (keeper.ts), at info or above.
 *
 * The decisions are pure functions of what the keeper passes in; `ActivityReporter` only keeps the
 * counters and the times of the last records.
 */

/** One account as the summary sees it. */
export interface AccountActivity {
  name: string;
  /** Should carry a schedule now (eligible, and arm_when says so). */
  shouldBeArmed: boolean;
  armed: boolean;
  /** Seconds to the deadline, when armed. */
  horizonSeconds: number | null;
  /** Has been armed at least once since the keeper started. */
  everArmed: boolean;
  /** Provisioning failed (it is retried; the account cannot be armed until it succeeds). */
  provisionFailed: boolean;
  /** The venue's volume gate refuses its scheduled cancel (switch phase `ineligible`): it cannot be protected. */
  ineligible?: boolean;
}

export interface ArmCounts {
  arms: number;
  /** Arms that failed, except the refusals of an ineligible account (`ineligible`). */
  failures: number;
  /**
   * Arms the venue refused because the account is below its volume gate: expected, retried every
   * 5 minutes, and said apart from failures (still `result="rejected"` in
   * `dms_keeper_arm_requests_total`, which counts attempts by the venue's answer).
   */
  ineligible: number;
  /** Arms the venue refused with 429. */
  rateLimited: number;
  /**
   * Reads our own budget dropped to keep room for arms (watcher orders/positions, health). Routine
   * under pressure, so counted here (and in `dms_keeper_reads_shed_total`), not logged one by one.
   */
  readsShed: number;
}

const NO_COUNTS: Readonly<ArmCounts> = { arms: 0, failures: 0, ineligible: 0, rateLimited: 0, readsShed: 0 };

export interface LogRecord {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  msg: string;
}

export interface StartProgress {
  accounts: number;
  /** Accounts armed at least once. */
  armed: number;
  /** Accounts that cannot be armed yet: provisioning failed (retried) . */
  failed: number;
  /** Accounts with nothing to arm (ineligible, or orders_open with no orders). */
  not_to_be_armed: number;
  /** Of `not_to_be_armed`, those the venue's volume gate refuses (they cannot be protected). */
  ineligible: number;
  /** Accounts still waiting for their first arm. */
  waiting: number;
  elapsed_seconds: number;
  /** At the rate seen so far (or the arm budget before the first arm); null when unknown. */
  eta_seconds: number | null;
  complete: boolean;
}

// The last fired cancel is persisted with the trigger counts (state/triggers.ts), so it survives a restart.
export type { LastCancelFired } from '../state/triggers.js';

const round1 = (x: number): number => Math.round(x * 10) / 10;

/**
 * The cold-start progress, `elapsedMs` after the start: `accounts` are those added so far, of
 * `total` configured (the rest are still waiting for their turn to be resolved).
 */
export function startProgress(accounts: readonly AccountActivity[], total: number, elapsedMs: number, armsPerSecondBudget?: number): StartProgress {
  let armed = 0;
  let failed = 0;
  let idle = 0;
  let ineligible = 0;
  for (const a of accounts) {
    if (a.everArmed) armed++;
    else if (a.provisionFailed) failed++;
    else if (!a.shouldBeArmed) {
      idle++;
      if (a.ineligible) ineligible++;
    }
  }
  const count = Math.max(total, accounts.length);
  const waiting = count - armed - failed - idle;
  const elapsedSeconds = elapsedMs / 1000;
  // The observed rate once a few arms landed; before that, the budget is the best guess.
  const rate = armed >= 3 && elapsedSeconds > 0 ? armed / elapsedSeconds : armsPerSecondBudget;
  const eta = waiting === 0 ? 0 : rate !== undefined && rate > 0 ? Math.ceil(waiting / rate) : null;
  return { accounts: count, armed, failed, not_to_be_armed: idle, ineligible, waiting, elapsed_seconds: round1(elapsedSeconds), eta_seconds: eta, complete: waiting === 0 };
}

const INELIGIBLE = "ineligible (below the venue's volume gate, cannot be protected)";

/** "1 ineligible (below the venue's volume gate)", "2 with nothing to arm": the accounts not to be armed, by why. */
function notToBeArmed(p: StartProgress): string[] {
  const idle = p.not_to_be_armed - p.ineligible;
  return [...(p.ineligible > 0 ? [`${p.ineligible} ${INELIGIBLE}`] : []), ...(idle > 0 ? [`${idle} with nothing to arm`] : [])];
}

export function progressRecord(p: StartProgress): LogRecord {
  const parts = [`starting: armed ${p.armed} of ${p.accounts} accounts`];
  if (p.failed > 0) parts.push(`${p.failed} failed to provision (retrying)`);
  parts.push(...notToBeArmed(p));
  const eta = p.eta_seconds === null ? '' : `, about ${p.eta_seconds} s to go`;
  return { level: 'info', fields: { event: 'start_progress', ...p }, msg: `${parts.join(', ')}${eta}` };
}

export function startCompleteRecord(p: StartProgress): LogRecord {
  const notes: string[] = [];
  if (p.failed > 0) notes.push(`${p.failed} failed to provision (retrying; see /readyz)`);
  notes.push(...notToBeArmed(p));
  return {
    level: p.failed > 0 ? 'warn' : 'info',
    fields: { event: 'start_complete', ...p },
    msg: `start-up done in ${p.elapsed_seconds} s: armed ${p.armed} of ${p.accounts} accounts${notes.length ? `; ${notes.join(', ')}` : ''}`,
  };
}

/** The minute summary: how many accounts are protected, the lowest horizon, and the traffic. */
export function summaryRecord(accounts: readonly AccountActivity[], counts: ArmCounts, periodSeconds: number): LogRecord {
  let expected = 0;
  let armed = 0;
  let ineligible = 0;
  let min: { name: string; horizon: number } | null = null;
  for (const a of accounts) {
    if (a.ineligible) ineligible++;
    if (!a.shouldBeArmed) continue;
    expected++;
    if (!a.armed || a.horizonSeconds === null) continue;
    armed++;
    if (min === null || a.horizonSeconds < min.horizon) min = { name: a.name, horizon: a.horizonSeconds };
  }
  const fields = {
    event: 'summary',
    period_seconds: periodSeconds,
    accounts: accounts.length,
    should_be_armed: expected,
    armed,
    ineligible,
    min_horizon_seconds: min === null ? null : round1(min.horizon),
    min_horizon_account: min?.name ?? null,
    arms: counts.arms,
    arm_failures: counts.failures,
    arms_refused_ineligible: counts.ineligible,
    rate_limited: counts.rateLimited,
    reads_shed: counts.readsShed,
  };
  const horizon = min === null ? 'no horizon' : `lowest horizon ${round1(min.horizon)} s (${min.name})`;
  const shed = counts.readsShed > 0 ? `, ${counts.readsShed} reads shed for budget` : '';
  const refused = counts.ineligible ? `, ${counts.ineligible} refused as ineligible` : '';
  const traffic = `${counts.arms} arms, ${counts.failures} failed${refused}, ${counts.rateLimited} refused with 429${shed} in the last ${periodSeconds} s`;
  const gate = ineligible > 0 ? `; ${ineligible} ${INELIGIBLE}` : '';
  return { level: armed < expected ? 'warn' : 'info', fields, msg: `armed ${armed} of ${expected} accounts that should be${gate}; ${horizon}; ${traffic}` };
}

export interface ActivityTiming {
  summaryEveryMs: number;
  progressEveryMs: number;
}

export const DEFAULT_ACTIVITY_TIMING: ActivityTiming = { summaryEveryMs: 60_000, progressEveryMs: 5_000 };

/** Counters and record times; the keeper calls `tick` from its 1 s loop and logs what it returns. */
export class ActivityReporter {
  private counts: ArmCounts = { ...NO_COUNTS };
  private startedMs: number | null = null;
  private lastSummaryMs = 0;
  private lastProgressMs = 0;
  private lastLoggedSettled = 0;
  private progress: StartProgress | null = null;

  constructor(private readonly timing: ActivityTiming = DEFAULT_ACTIVITY_TIMING) {}

  /** An arm's answer; `reason` 'ineligible' (the volume gate) is counted apart from the failures. */
  recordArm(result: string, reason?: string): void {
    this.counts.arms++;
    if (result === 'rejected' && reason === 'ineligible') this.counts.ineligible++;
    else if (result !== 'ok') this.counts.failures++;
    if (result === 'rate_limited') this.counts.rateLimited++;
  }

  /** A read the request budget shed (the minute summary's `reads_shed`). */
  recordReadShed(): void {
    this.counts.readsShed++;
  }

  /** The cold start's progress as last computed (null before the first tick). */
  startProgress(): StartProgress | null {
    return this.progress;
  }

  /**
   * Called every loop while the keeper runs. `accounts` is evaluated only when a record is due
   * (it walks every account). Returns the records to log now.
   */
  tick(nowMs: number, total: number, accounts: () => readonly AccountActivity[], armsPerSecondBudget?: number): LogRecord[] {
    if (this.startedMs === null) {
      this.startedMs = nowMs;
      this.lastSummaryMs = nowMs;
      this.lastProgressMs = nowMs;
    }
    const out: LogRecord[] = [];
    // Until the start is complete, every tick (it is also /status's start_progress); a record
    // every progressEveryMs, from progressEveryMs on: a short start logs only its completion.
    if (this.progress === null || !this.progress.complete) {
      const p = startProgress(accounts(), total, nowMs - this.startedMs, armsPerSecondBudget);
      this.progress = p;
      if (p.complete) out.push(startCompleteRecord(p));
      else if (nowMs - this.lastProgressMs >= this.timing.progressEveryMs && p.armed + p.failed !== this.lastLoggedSettled) {
        // Nothing moved (a venue outage at start): the failures and the minute summary say so.
        out.push(progressRecord(p));
        this.lastProgressMs = nowMs;
        this.lastLoggedSettled = p.armed + p.failed;
      }
    }
    if (nowMs - this.lastSummaryMs >= this.timing.summaryEveryMs) {
      out.push(summaryRecord(accounts(), this.counts, Math.round((nowMs - this.lastSummaryMs) / 1000)));
      this.counts = { ...NO_COUNTS };
      this.lastSummaryMs = nowMs;
    }
    return out;
  }
}
