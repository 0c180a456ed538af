import { DAY_MS, type Clock } from '../time/clock.js';
import { AGENT_CHECK_EVERY_MS } from '../plan/read-plan.js';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { InfoExtraAgent } from '../venue/info-decode.js';
import type { AccountState, AgentCheckRecord as Checked } from './keeper-types.js';
import { readFailureOf, type ReadFailure } from './watcher.js';

/**
 * Whether the keeper's agent is on the venue, and when its approval lapses, from the venue's
 * `extraAgents` of the master (issue 20 item 1; docs/VENUE.md "The info endpoint"). Read once
 * after each provisioning (AGENT_CHECK_FIRST_DELAY_MS later, spread over an hour) and then every
 * AGENT_CHECK_EVERY_MS, only by a keeper that reads the venue (`watch.source` other than
 * `service`), as a read: last in the budget, shed under pressure and asked again a minute later.
 *
 * What it acts on, and why no more:
 * - **The venue's expiry is earlier than our record** (another instance or a person re-approved the
 *   same agent with a shorter `valid_until`, or a state directory restored from a backup): the
 *   renewal is planned by the venue's figure. A later one changes nothing: renewing by our earlier
 *   record only costs an approval sooner.
 * - **The agent was listed and is gone** (replaced under its name, or pruned): re-provisioned now,
 *   not at the account's next arm. That matters most for an account that is not arming
 *   (`arm_when: orders_open` with no orders): its first arm, when orders come, would otherwise find
 *   the agent gone and wait for a new approval while the orders are unprotected.
 * - **Never listed** (a venue or proxy that does not list named agents, an agent approved without a
 *   name): reported once, nothing more. The arms are the authority on whether the agent signs; a
 *   re-approval on this evidence alone could repeat at every check, against a venue that never
 *   lists anything, and each one rotates the agent.
 * A configured agent (`agent.key`) is read too (its expiry is worth an alert) but never re-approved.
 */

/**
 * After a provisioning the first read waits this long, plus a step of AGENT_CHECK_SPREAD_MS / 60
 * for each account scheduled before it (mod 60): a cold start of 20 accounts asks one a minute
 * (20 weight, under 2% of the venue's 1,200 a minute), not 400 weight at once beside the watchers'
 * first reads, which would be shed for it (measured: 6 of them at 20 accounts when the step was a
 * second). Nothing waits on this read: the approval's own answer said it landed.
 */
export const AGENT_CHECK_FIRST_DELAY_MS = 60_000;
export const AGENT_CHECK_SPREAD_MS = 60 * 60_000;
/** How long one read may wait for budget before it is shed (like the address budget's reads). */
export const AGENT_CHECK_MAX_WAIT_MS = 60_000;
/** A shed read is asked again this much later; a failed one (the venue did not answer) after AGENT_CHECK_RETRY_MS. */
export const AGENT_CHECK_SHED_RETRY_MS = 60_000;
export const AGENT_CHECK_RETRY_MS = 5 * 60_000;
/** An expiry the venue states closer than this is logged at warn, once per agent (renewal runs long before it). */
export const AGENT_EXPIRY_WARN_MS = 3 * DAY_MS;
/** Differences of our record and the venue's expiry below this are rounding, not news. */
const EXPIRY_TOLERANCE_MS = 1_000;

export type AgentListing = { listed: true; validUntilMs?: number } | { listed: false };

/** Our agent in the venue's list, by address (a configured agent may have any name, or none). */
export function findAgent(list: readonly InfoExtraAgent[], agentAddress: string): AgentListing {
  const want = agentAddress.toLowerCase();
  const hit = list.find((a) => a.address.toLowerCase() === want);
  if (!hit) return { listed: false };
  return hit.validUntil === undefined ? { listed: true } : { listed: true, validUntilMs: hit.validUntil };
}

export type AgentCheckAction =
  | { kind: 'confirmed' }
  /** The venue's expiry is earlier than the one renewal is planned by. */
  | { kind: 'adopt_expiry'; validUntilMs: number }
  /** Listed at an earlier read, gone now: approve a new agent. */
  | { kind: 'reprovision' }
  /** Not listed, and never was: report once. */
  | { kind: 'unlisted' };

/**
 * What a read means for the agent (pure). `recordValidUntilMs`: the expiry renewal is planned by
 * (our approval's), undefined when we know none; `everListed`: this agent was listed at an earlier
 * read; `renewable`: the keeper approves this account's agents (a master key, no configured agent).
 */
export function judgeAgentCheck(listing: AgentListing, s: { recordValidUntilMs?: number; everListed: boolean; renewable: boolean }): AgentCheckAction {
  if (!listing.listed) return s.everListed && s.renewable ? { kind: 'reprovision' } : { kind: 'unlisted' };
  const v = listing.validUntilMs;
  if (v === undefined) return { kind: 'confirmed' };
  const r = s.recordValidUntilMs;
  // Renewable: only an earlier expiry matters (renewing by our earlier record costs one approval
  // sooner). A configured agent's expiry is only ever the venue's: any change is taken.
  const differs = r === undefined || (s.renewable ? v < r - EXPIRY_TOLERANCE_MS : Math.abs(v - r) > EXPIRY_TOLERANCE_MS);
  return differs ? { kind: 'adopt_expiry', validUntilMs: v } : { kind: 'confirmed' };
}


export interface AgentCheckDeps {
  /** Local clock: timers. */
  clock: Clock;
  /** Venue time: expiries are venue ms. */
  venueClock: Pick<Clock, 'nowMs'>;
  metrics: KeeperMetrics;
  /** The port's `extraAgents` read of a master (weight 20, `exchange` scope); absent: no reads. */
  read?: (master: string, opts: { maxWaitMs: number }) => Promise<InfoExtraAgent[]>;
  /** Whether to read now (the keeper reads the venue: `watch.source` venue or service_then_venue). */
  enabled: () => boolean;
  /** A read that failed (AccountReports.readFailed: a shed one counted like every shed read, another a warning). */
  onReadFailed: (m: AccountState, f: ReadFailure) => void;
  /** Approve a new agent for the account (AgentLifecycle.provision with force). */
  reprovision: (m: AccountState) => Promise<boolean>;
  /** Plan the account's renewal by this expiry (AgentLifecycle.adoptVenueExpiry). */
  adoptExpiry: (m: AccountState, validUntilMs: number) => void;
}


/**
 * The checks' shared part (the spread of first reads); each account's record is its own
 * (`AccountState.agentCheck`).
 */
export class AgentChecks {
  /** First reads scheduled so far: the position of the next in the spread. */
  private scheduledFirst = 0;

  constructor(private readonly deps: AgentCheckDeps) {}

  /** The account's agent was provisioned (any source): read the venue's list about it soon. */
  afterProvision(m: AccountState): void {
    const p = m.provisioned;
    if (!this.deps.read || !p || m.removed) return;
    const before = m.agentCheck;
    if (before?.timer) this.deps.clock.clearTimeout(before.timer);
    const c: Checked = before && before.agent === p.agent.address ? { ...before, timer: undefined } : { agent: p.agent.address, everListed: false, warnedUnlisted: false, warnedExpiring: false };
    m.agentCheck = c;
    this.publishExpiry(m, c);
    // A keeper that does not read the venue plans no read (no timer per account for nothing), as the address budget.
    if (!this.deps.enabled()) return;
    const spread = (this.scheduledFirst++ % 60) * (AGENT_CHECK_SPREAD_MS / 60);
    this.schedule(m, c, AGENT_CHECK_FIRST_DELAY_MS + spread);
  }

  /** Stops the account's checks (removed, or the keeper stopping); `forget`: its record goes too. */
  stop(m: AccountState, forget = false): void {
    const c = m.agentCheck;
    if (c?.timer) this.deps.clock.clearTimeout(c.timer);
    if (c) c.timer = undefined;
    if (forget) m.agentCheck = undefined;
  }

  private schedule(m: AccountState, c: Checked, afterMs: number): void {
    if (m.removed || m.agentCheck !== c) return;
    c.timer = this.deps.clock.setTimeout(() => void this.readNow(m, c), afterMs);
  }

  private async readNow(m: AccountState, c: Checked): Promise<void> {
    c.timer = undefined;
    let nextMs = AGENT_CHECK_EVERY_MS;
    const p = m.provisioned;
    try {
      if (!this.deps.enabled() || !p || p.agent.address !== c.agent) return;
      const list = await this.deps.read!(p.masterAddress, { maxWaitMs: AGENT_CHECK_MAX_WAIT_MS });
      if (m.removed || m.agentCheck !== c || m.provisioned?.agent.address !== c.agent) return;
      if (this.observe(m, c, findAgent(list, c.agent)) === 'reprovisioning') return; // afterProvision plans the next read
    } catch (e) {
      const f = readFailureOf(e);
      this.deps.onReadFailed(m, f);
      nextMs = f.reason === 'shed' ? AGENT_CHECK_SHED_RETRY_MS : AGENT_CHECK_RETRY_MS;
    }
    this.schedule(m, c, nextMs);
  }

  private observe(m: AccountState, c: Checked, listing: AgentListing): 'reprovisioning' | 'done' {
    const p = m.provisioned!;
    const account = m.spec.name;
    const nowMs = this.deps.venueClock.nowMs();
    const renewable = p.source !== 'configured' && m.spec.masterKey !== undefined;
    const action = judgeAgentCheck(listing, { recordValidUntilMs: p.agentValidUntilMs, everListed: c.everListed, renewable });
    c.view = listing.listed ? { listed: true, checkedAtMs: nowMs, ...(listing.validUntilMs !== undefined ? { validUntilMs: listing.validUntilMs } : {}) } : { listed: false, checkedAtMs: nowMs };
    this.deps.metrics.agentListed.set({ account }, listing.listed ? 1 : 0);
    const fields = { agent: c.agent, master: p.masterAddress, source: p.source };
    switch (action.kind) {
      case 'confirmed':
        c.everListed = true;
        m.log.debug({ event: 'agent_check', result: 'listed', ...fields, venue_valid_until: iso(listing.listed ? listing.validUntilMs : undefined) }, 'agent listed on the venue');
        break;
      case 'adopt_expiry': {
        c.everListed = true;
        const record = p.agentValidUntilMs;
        // A configured agent's expiry is news, not a disagreement: we had none, or the venue's own.
        const learned = record === undefined || !renewable;
        const level = learned ? 'info' : 'warn';
        m.log[level](
          { event: 'agent_expiry', result: learned ? 'learned' : 'earlier_than_recorded', ...fields, venue_valid_until: iso(action.validUntilMs), recorded_valid_until: iso(record), renewable },
          learned ? `the venue says the agent's approval lapses at ${iso(action.validUntilMs)}` : `the venue says the agent's approval lapses at ${iso(action.validUntilMs)}, before our record (${iso(record)}): renewal planned by the venue's`,
        );
        this.deps.adoptExpiry(m, action.validUntilMs);
        break;
      }
      case 'reprovision':
        m.log.error({ event: 'agent_check', result: 'gone', ...fields }, 'the agent is no longer on the venue (replaced under its name, or pruned): approving a new one now, before an arm finds out');
        void this.deps.reprovision(m);
        return 'reprovisioning';
      case 'unlisted':
        if (!c.warnedUnlisted) {
          c.warnedUnlisted = true;
          m.log.warn({ event: 'agent_check', result: 'not_listed', ...fields }, "the master's approved agents on the venue do not list this agent; the arms will say whether it signs (nothing is re-approved on this alone)");
        }
        break;
    }
    this.publishExpiry(m, c);
    const lapseMs = c.view?.validUntilMs;
    if (lapseMs !== undefined && lapseMs - nowMs < AGENT_EXPIRY_WARN_MS && !c.warnedExpiring && (m.renewAtMs === undefined || m.renewAtMs > lapseMs - 60_000)) {
      c.warnedExpiring = true;
      m.log.warn({ event: 'agent_expiring', ...fields, venue_valid_until: iso(lapseMs), renewable }, renewable ? `the agent's approval lapses at ${iso(lapseMs)} and no renewal is planned before it` : `the agent's approval lapses at ${iso(lapseMs)}; the keeper cannot renew a configured agent: approve a new one and update agent.key`);
    }
    return 'done';
  }

  /** `dms_keeper_agent_valid_until_timestamp_seconds`: the earlier of the venue's expiry (when read) and our record; absent when neither states one. */
  private publishExpiry(m: AccountState, c: Checked): void {
    const account = m.spec.name;
    const venue = c.view?.listed ? c.view.validUntilMs : undefined;
    const record = m.provisioned?.agentValidUntilMs;
    const ms = venue !== undefined && record !== undefined ? Math.min(venue, record) : (venue ?? record);
    if (ms === undefined) this.deps.metrics.agentValidUntil.remove({ account });
    else this.deps.metrics.agentValidUntil.set({ account }, ms / 1000);
  }
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}
