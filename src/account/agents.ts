import type { ChainField } from '../venue/signing/user-signed.js';
import { DAY_MS, type Clock } from '../time/clock.js';
import type { VenueClock } from '../time/venue-clock.js';
import type { AgentStore } from '../state/agent-store.js';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { NonceSource } from '../venue/signing/nonce.js';
import type { Network } from '../venue/types.js';
import type { AccountState } from './keeper-types.js';
import { ProvisionError, provisionAccount, renewAtMs, type ProvisionVenue } from './provision.js';
import type { SigningCurve } from '../venue/signing/curve.js';

/** Retries of a failed provisioning, then every 5 minutes. */
const PROVISION_RETRY_MS = [5_000, 15_000, 30_000, 60_000, 120_000, 300_000];

export interface AgentLifecycleDeps {
  clock: Clock;
  venueClock: VenueClock;
  venue: ProvisionVenue;
  agentStore: AgentStore;
  metrics: KeeperMetrics;
  nonces: NonceSource;
  generateKey?: () => `0x${string}`;
  /** The secp256k1 implementation signers use (venue/signing/curve.ts); absent: viem's. */
  curve?: SigningCurve;
  network: () => Network;
  /** `venue.chain_field`; absent: the venue's own name. */
  chainField?: () => ChainField | undefined;
  /** `watch.source: service_then_venue`: accounts resolve by the venue's userRole while the service fails. */
  resolveFallbackToVenue?: () => boolean;
  hasAccount: (name: string) => boolean;
  /** False once the keeper is stopping: no more retries are planned. */
  accepting: () => boolean;
}

/**
 * Each account's agent: provisioned at start (reused, configured, or approved by the master),
 * retried with backoff when that fails, renewed before its approval lapses, and one agent name per
 * master so two accounts never rotate each other's agent away.
 */
export class AgentLifecycle {
  /** `master|agentName` -> the account that uses that agent slot. */
  private readonly agentNames = new Map<string, string>();

  constructor(private readonly deps: AgentLifecycleDeps) {}

  /**
   * Two accounts under one master must not share an agent name: approving a name replaces the
   * agent that had it, so they would prune each other's agent forever.
   */
  private claimAgentName(m: AccountState, masterAddress: string): string | undefined {
    if (m.spec.agentKey) return undefined; // a configured agent is managed elsewhere
    const key = `${masterAddress}|${m.spec.agentName}`;
    const holder = this.agentNames.get(key);
    if (holder !== undefined && holder !== m.spec.name && this.deps.hasAccount(holder)) return holder;
    // Claimed synchronously: accounts provision concurrently.
    this.agentNames.set(key, m.spec.name);
    return undefined;
  }

  /**
   * One provisioning per account at a time: the arm that finds the signer gone and the agent check
   * that finds it unlisted may both ask, and two approvals would rotate the agent twice.
   */
  provision(m: AccountState, force: boolean): Promise<boolean> {
    if (m.provisioning) return m.provisioning;
    const p = this.provisionOnce(m, force).finally(() => {
      m.provisioning = undefined;
    });
    m.provisioning = p;
    return p;
  }

  private async provisionOnce(m: AccountState, force: boolean): Promise<boolean> {
    const { deps } = this;
    m.provisionAttempts += 1;
    try {
      const p = await provisionAccount(m.spec, {
        venue: deps.venue,
        network: this.deps.network(),
        chainField: this.deps.chainField?.(),
        clock: deps.venueClock,
        nonces: this.deps.nonces,
        store: deps.agentStore,
        generateKey: deps.generateKey,
        curve: deps.curve,
        resolveFallbackToVenue: this.deps.resolveFallbackToVenue?.() ?? false,
      }, {
        force,
        beforeApprove: (masterAddress) => {
          const other = this.claimAgentName(m, masterAddress);
          if (other) {
            throw new ProvisionError(m.spec.name, 'agent_name_collision', `agent name '${m.spec.agentName}' is already used by account '${other}' under the same master ${masterAddress}; approving it again would replace that account's agent. Give each account its own agent.name`);
          }
        },
      });
      if (m.removed) return false;
      m.provisioned = p;
      m.provisionError = undefined;
      m.provisionAttempts = 0;
      deps.metrics.agentApproved.set({ account: m.spec.name }, 1);
      m.log.info(
        { event: 'provision', result: 'ok', source: p.source, account_type: p.accountType, agent: p.agent.address, valid_until: p.agentValidUntilMs ? new Date(p.agentValidUntilMs).toISOString() : null, builder_fee: p.builderFeeApproved },
        `agent ${p.source === 'approved' ? 'approved' : p.source === 'stored' ? 'reused' : 'configured'}`,
      );
      for (const w of p.warnings) m.log.warn({ event: 'provision_warning' }, w);
      if (p.stateWriteFailure) deps.metrics.stateWriteErrors.inc({ reason: p.stateWriteFailure });
      if (p.stateUnreadable) {
        // Once: the approval just made saved a good record over the unreadable one.
        deps.metrics.stateUnreadable.inc({ file: 'agent' });
        m.log.warn({ event: 'state_unreadable', file: 'agent', problem: p.stateUnreadable, action: 'approved a new agent' }, `state file unreadable (${p.stateUnreadable}): a new agent was approved instead`);
      }
      this.scheduleRenewal(m);
      // The account starts or re-keys its switch (account.ts).
      m.agentReady();
      return true;
    } catch (e) {
      if (m.removed) return false;
      const message = (e as Error).message;
      m.provisionError = message;
      deps.metrics.agentApproved.set({ account: m.spec.name }, 0);
      const delay = PROVISION_RETRY_MS[Math.min(m.provisionAttempts - 1, PROVISION_RETRY_MS.length - 1)]!;
      m.log.error({ event: 'provision', result: 'error', reason: (e as { reason?: string }).reason ?? 'internal', retry_in_ms: delay, err: message }, 'provisioning failed; this account is not protected');
      if (this.deps.accepting()) {
        m.provisionTimer = deps.clock.setTimeout(() => void this.provision(m, force), delay);
      }
      return false;
    }
  }

  /**
   * When the account's agent is to be re-approved (venue time), checked by `renewDue`. A sweep and
   * not a timer per account: 10,000 timers of different lengths, each waiting weeks, cost 10,000
   * Timeout objects and as many timer lists (2.5 MB of heap) for one event a month.
   */
  private scheduleRenewal(m: AccountState): void {
    m.renewAtMs = renewalOf(m);
  }

  /**
   * The venue states an expiry for the account's agent (agent-check.ts): it is the one shown, and
   * renewal is planned by it (for an agent the keeper approves), at the same share of the validity
   * before the lapse as after an approval of its own, and never later than planned already.
   */
  adoptVenueExpiry(m: AccountState, validUntilMs: number): void {
    const p = m.provisioned;
    if (!p) return;
    p.agentValidUntilMs = validUntilMs;
    const at = renewalOf(m);
    if (at !== undefined) m.renewAtMs = m.renewAtMs === undefined ? at : Math.min(m.renewAtMs, at);
  }

  /** Re-approves every agent whose renewal time has come (the keeper calls this every minute). */
  renewDue(accounts: Iterable<AccountState>): void {
    if (!this.deps.accepting()) return;
    const now = this.deps.venueClock.nowMs();
    for (const m of accounts) {
      if (m.renewAtMs === undefined || now < m.renewAtMs || m.removed) continue;
      m.renewAtMs = undefined; // provision() plans the next one
      void this.provision(m, true);
    }
  }
}

/**
 * When the account's agent is re-approved (venue time): a fifth of `valid_days` before its expiry;
 * undefined for an agent the keeper does not approve (configured, or no master key) or whose expiry
 * it does not know.
 */
function renewalOf(m: AccountState): number | undefined {
  const p = m.provisioned;
  if (!p || p.source === 'configured' || p.agentValidUntilMs === undefined || !m.spec.masterKey) return undefined;
  return renewAtMs(p.agentValidUntilMs - m.spec.validDays * DAY_MS, p.agentValidUntilMs);
}
