import { VENUE_FACTS } from '../../venue/facts.js';
import type { AgentInfo } from '../types.js';
import { VENUE_TEXTS } from './texts.js';

/** One approved agent wallet. `name` is "" for the account's single unnamed agent. */
interface AgentRecord {
  address: string;
  master: string;
  name: string;
  validUntilMs?: number;
}

const DAY_MS = 24 * 3600 * 1000;
const VALID_UNTIL_RE = /^(.*) valid_until (\d+)$/s;

/**
 * Splits `"<name> valid_until <ms>"` (VENUE.md). The name is limited to 16 characters before the
 * suffix; the expiry must be in the future and at most 180 days ahead.
 */
export function parseAgentName(raw: string, nowMs: number): { name: string; validUntilMs?: number } | { error: string } {
  const m = VALID_UNTIL_RE.exec(raw);
  const name = m ? (m[1] ?? '') : raw;
  if ([...name].length > VENUE_FACTS.agentNameMaxChars) return { error: VENUE_TEXTS.agentNameTooLong };
  if (!m) return { name };
  const validUntilMs = Number(m[2]);
  if (!Number.isSafeInteger(validUntilMs) || validUntilMs <= nowMs || validUntilMs > nowMs + VENUE_FACTS.agentValidMaxDays * DAY_MS) {
    return { error: VENUE_TEXTS.agentValidUntilInvalid };
  }
  return { name, validUntilMs };
}

/**
 * Agent approvals, as the venue keeps them:
 * - an agent acts for exactly one master (so an L1 signature without a vault names one account);
 * - approving a name that is taken replaces that agent: the old address stops working at once,
 *   may never be approved again, and the master enters a short "pending agent removal" window;
 * - an agent past its `valid_until` is pruned when next looked at (it no longer exists).
 */
export class AgentBook {
  private readonly byAddress = new Map<string, AgentRecord>();
  /** master -> name -> record. */
  private readonly byMaster = new Map<string, Map<string, AgentRecord>>();
  /** Addresses replaced by a later approval: never valid again. */
  private readonly retired = new Set<string>();
  private readonly pendingUntilMs = new Map<string, number>();

  /** The master `agent` currently signs for; undefined when unknown, replaced or expired. */
  masterOf(agent: string, nowMs: number): string | undefined {
    const rec = this.byAddress.get(agent.toLowerCase());
    if (!rec) return undefined;
    if (this.expired(rec, nowMs)) {
      this.remove(rec);
      return undefined;
    }
    return rec.master;
  }

  pendingRemoval(master: string, nowMs: number): boolean {
    const until = this.pendingUntilMs.get(master);
    return until !== undefined && nowMs < until;
  }

  /**
   * Applies an approval; returns the refusal text or undefined on success. `namedCap` is the number
   * of named slots the master has (3, +2 per subaccount). Callers check the pending-removal window
   * first.
   */
  approve(args: { master: string; agent: string; name: string; validUntilMs?: number; namedCap: number; nowMs: number }): string | undefined {
    const { master, name, namedCap, nowMs } = args;
    const agent = args.agent.toLowerCase();
    this.pruneExpired(master, nowMs);
    if (this.retired.has(agent)) return VENUE_TEXTS.agentAddressReused;
    const existing = this.byAddress.get(agent);
    if (existing && this.expired(existing, nowMs)) this.remove(existing);
    const current = this.byAddress.get(agent);
    if (current) {
      // Re-approving the same agent under the same name refreshes its expiry; anything else would
      // make one address act for two masters or two names.
      if (current.master !== master || current.name !== name) return VENUE_TEXTS.agentAddressInUse;
      current.validUntilMs = args.validUntilMs;
      return undefined;
    }
    const slots = this.slots(master);
    const replaced = slots.get(name);
    if (!replaced && name !== '') {
      let named = 0;
      for (const n of slots.keys()) if (n !== '') named++;
      if (named >= namedCap) return VENUE_TEXTS.agentSlotsFull(namedCap);
    }
    if (replaced) {
      this.remove(replaced);
      this.retired.add(replaced.address);
      this.pendingUntilMs.set(master, nowMs + VENUE_FACTS.pendingAgentRemovalMs);
    }
    const rec: AgentRecord = { address: agent, master, name };
    if (args.validUntilMs !== undefined) rec.validUntilMs = args.validUntilMs;
    slots.set(name, rec);
    this.byAddress.set(agent, rec);
    return undefined;
  }

  /** Live agents of `master`: unnamed first, then named in approval order. */
  list(master: string, nowMs: number): AgentInfo[] {
    this.pruneExpired(master, nowMs);
    const recs = [...(this.byMaster.get(master)?.values() ?? [])];
    recs.sort((a, b) => (a.name === '' ? -1 : 0) - (b.name === '' ? -1 : 0));
    return recs.map((r) => {
      const info: AgentInfo = { address: r.address, name: r.name };
      if (r.validUntilMs !== undefined) info.validUntilMs = r.validUntilMs;
      return info;
    });
  }

  isRetired(agent: string): boolean {
    return this.retired.has(agent.toLowerCase());
  }

  private slots(master: string): Map<string, AgentRecord> {
    let m = this.byMaster.get(master);
    if (!m) {
      m = new Map();
      this.byMaster.set(master, m);
    }
    return m;
  }

  private expired(rec: AgentRecord, nowMs: number): boolean {
    return rec.validUntilMs !== undefined && nowMs >= rec.validUntilMs;
  }

  private pruneExpired(master: string, nowMs: number): void {
    for (const rec of [...(this.byMaster.get(master)?.values() ?? [])]) {
      if (this.expired(rec, nowMs)) this.remove(rec);
    }
  }

  private remove(rec: AgentRecord): void {
    this.byAddress.delete(rec.address);
    const slots = this.byMaster.get(rec.master);
    if (slots?.get(rec.name) === rec) slots.delete(rec.name);
  }
}
