import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { ClockStep } from '../time/venue-clock.js';
import type { AccountRunner } from '../switch/account-runner.js';
import { StateWriteError } from '../state/atomic-file.js';
import type { RecentCounts } from '../state/budget-log.js';
import type { KeeperDeps } from '../account/keeper-types.js';
import type { AccountReports } from '../account/reports.js';

/**
 * The keeper's upkeep beside its accounts: what a previous instance left (trigger counts, the
 * budget's recent requests) read at start, the budget's memory saved as it runs, the venue clock
 * checked, the day's trigger counts rolled at 00:00 UTC.
 */
type UpkeepDeps = Pick<KeeperDeps, 'clock' | 'venueClock' | 'scheduler' | 'metrics' | 'logger' | 'triggers' | 'budgetLog' | 'venue'>;

/** Reads what the previous instance left; a file that cannot be read is counted and said, never fatal. */
export async function loadCarriedState(deps: UpkeepDeps): Promise<void> {
  const loaded = await deps.triggers.load();
  if (!loaded.ok) {
    // Counted from zero: the venue still refuses arms once an account's cap is spent, which the
    // keeper reports (phase blocked); what it cannot know is how near the cap each account is.
    deps.metrics.stateUnreadable.inc({ file: 'triggers' });
    deps.logger.warn({ event: 'state_unreadable', file: 'triggers', problem: loaded.problem, action: "today's fired cancels counted from zero: unknown until the venue refuses an arm at its cap" }, "trigger counts not loaded: today's fired cancels are unknown, counted from zero");
  }
  // Start-up pacing: what the previous instance sent still counts in the venue's windows.
  const budget = (await deps.budgetLog?.load()) ?? { counts: {} };
  if (budget.problem) {
    deps.metrics.stateUnreadable.inc({ file: 'budget' });
    deps.logger.warn({ event: 'state_unreadable', file: 'budget', problem: budget.problem, action: "start-up paced without the previous instance's requests" }, "budget log not loaded: start-up is paced without the previous instance's requests");
  }
  const recent = budget.counts;
  // Saved in wall-clock time (it outlives the process); the scheduler counts on the monotonic clock.
  deps.scheduler.importRecent(shiftTimes(recent, deps.clock.monoMs() - deps.clock.nowMs()));
  const carried = Object.values(recent).reduce((n, l) => n + l.reduce((m, [, c]) => m + c, 0), 0);
  if (carried > 0) deps.logger.info({ event: 'budget_carried_over', requests: carried }, "pacing start-up around the previous instance's recent requests");
}

/** Saves the budget's recent admissions (wall-clock times), so a restart paces itself. */
export async function saveBudget(deps: UpkeepDeps): Promise<void> {
  try {
    await deps.budgetLog?.save(shiftTimes(deps.scheduler.exportRecent(), deps.clock.nowMs() - deps.clock.monoMs()), deps.clock.nowMs());
  } catch (e) {
    if (e instanceof StateWriteError) deps.metrics.stateWriteErrors.inc({ reason: e.reason });
  }
}

/** At 00:00 UTC (venue time): every account's trigger count starts again from 0. */
export function rollDay(deps: UpkeepDeps, accountNames: Iterable<string>): void {
  if (!deps.triggers.rollIfNewDay(deps.venueClock.nowMs())) return;
  for (const name of accountNames) deps.metrics.triggersToday.set({ account: name }, 0);
  deps.triggers.save().catch((e: unknown) => {
    if (e instanceof StateWriteError) deps.metrics.stateWriteErrors.inc({ reason: e.reason });
  });
  deps.logger.info({ event: 'trigger_day_reset', day: deps.triggers.currentDay() }, 'daily trigger counts reset (00:00 UTC)');
}

/** The venue clock's sample and the skew alarm (an error once per crossing, an info when resolved). */
export class VenueClockCheck {
  private skewLogged = false;

  constructor(
    private readonly deps: UpkeepDeps,
    private readonly reports: Pick<AccountReports, 'readShed'>,
  ) {}

  /** `/v1/health` `as_of` is the precise venue clock sample (the port takes it; Date headers refine it). */
  async check(maxClockSkewMs: number): Promise<void> {
    const { deps } = this;
    try {
      // With no service there is no /v1/health: the venue clock is sampled from the Date header of
      // every info and exchange answer the venue wrote (venue-time.ts), which the reads and arms bring.
      if (deps.venue.hasService !== false) await deps.venue.health();
    } catch (e) {
      // Shed for budget (arms first): counted, not a warning (reports.ts readShed).
      if ((e as { reason?: unknown }).reason === 'shed') this.reports.readShed(deps.logger, 'health', (e as Error).message);
      else deps.logger.warn({ event: 'venue_health_failed', err: (e as Error).message }, 'cannot read the venue clock from /v1/health');
    }
    const skewMs = Math.abs(deps.venueClock.skewSeconds() * 1000);
    const log: Logger = deps.logger;
    if (skewMs > maxClockSkewMs) {
      log.error({ event: 'clock_skew', skew_seconds: deps.venueClock.skewSeconds(), threshold_seconds: maxClockSkewMs / 1000 }, 'local clock disagrees with the venue; deadlines use venue time, but fix NTP');
      this.skewLogged = true;
    } else if (this.skewLogged) {
      log.info({ event: 'clock_skew_resolved', skew_seconds: deps.venueClock.skewSeconds() }, 'clock skew back within threshold');
      this.skewLogged = false;
    }
  }
}

/**
 * The venue clock estimate moved by more than a second: every plan made in venue time is stale.
 * Re-plan every account now (each keeps its real instants, see AccountRunner.clockStepped) and
 * say so loudly: a venue clock that jumps is worth a look even when nothing lapsed.
 */
export function venueClockStepped(deps: UpkeepDeps, step: ClockStep, accounts: Iterable<{ runner?: Pick<AccountRunner, 'clockStepped'> }>): void {
  const list = [...accounts];
  const direction = step.deltaMs > 0 ? 'forward' : 'backward';
  deps.metrics.venueClockSteps.inc({ direction });
  deps.logger.error(
    { event: 'venue_clock_step', direction, delta_ms: step.deltaMs, offset_ms: step.offsetMs, samples: step.samples, accounts: list.length },
    `venue clock estimate moved ${direction} by ${(Math.abs(step.deltaMs) / 1000).toFixed(1)} s; every account re-planned`,
  );
  for (const m of list) m.runner?.clockStepped();
}

/** Whether every one of `work` settled within `timeoutMs` (on the injected clock); false: the time ran out first. */
export async function settledWithin(clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>, work: Array<Promise<unknown>>, timeoutMs: number): Promise<boolean> {
  let timer: TimerHandle | undefined;
  const timedOut = await Promise.race([
    Promise.all(work).then(() => false),
    new Promise<boolean>((resolve) => {
      timer = clock.setTimeout(() => resolve(true), timeoutMs);
    }),
  ]);
  if (timer) clock.clearTimeout(timer);
  return !timedOut;
}

/** Moves every recorded time by `deltaMs` (between the wall and the monotonic clock). */
function shiftTimes(scopes: RecentCounts, deltaMs: number): RecentCounts {
  const out: RecentCounts = {};
  for (const [k, counts] of Object.entries(scopes)) out[k] = counts.map(([t, n]): [number, number] => [t + deltaMs, n]);
  return out;
}
