import type { CadenceInput } from '../plan/cadence.js';
import { longestSafePeriodMs } from '../plan/horizon.js';
import { firstArmGateMs, type ColdStartInput, type ColdStartOrder } from '../plan/cold-start.js';

/** How the plan in force orders the cold start (budget-plan.ts): the order, and the window approvals and first arms share (0: none). */
export interface ColdStartWindow {
  order: ColdStartOrder;
  perSecond: number;
}

/**
 * The keeper's bookkeeping of a cold start (the rules are plan/cold-start.ts'), in counters so an
 * event costs O(1) at 50,000 accounts. Approvals left are estimated at the ratio seen so far (one
 * each before any settles): an over-estimate opens the gate later while approvals still fill the
 * window, an under-estimate may cost a re-arm inside the cold start.
 */
export class ColdStartGate {
  /** Added, first provisioning not settled. */
  private readonly unsettled = new Set<string>();
  private settled = 0;
  private approvalsSeen = 0;
  /** Approved, first arm not yet answered (the ones parked at the gate included). */
  private readonly awaiting = new Set<string>();
  /** Parked at the gate: the account's start, released when the gate opens. */
  private readonly parked = new Map<string, () => void>();
  private readonly armed = new Set<string>();
  private armedPerSecond = 0;
  private readonly periods = new Map<string, number>();
  private shortestPeriodMs = Number.POSITIVE_INFINITY;

  /** An account is added: its provisioning is still to come. */
  added(name: string, sw: CadenceInput): void {
    this.unsettled.add(name);
    const p = longestSafePeriodMs(sw);
    this.periods.set(name, p);
    this.shortestPeriodMs = Math.min(this.shortestPeriodMs, p);
  }

  /** Its first provisioning settled: `approvals` requests it sent (0 reused a stored agent). */
  settledOk(name: string, approvals: number): void {
    if (!this.settle(name, approvals)) return;
    this.awaiting.add(name);
  }

  /** Its first provisioning failed (it retries on its own backoff, outside the cold start). */
  settledFailed(name: string): void {
    this.settle(name, 0);
  }

  /** Still waiting for its first provisioning to settle. */
  isUnsettled(name: string): boolean {
    return this.unsettled.has(name);
  }

  /** Its first arm was answered (either way): it is no longer provisioning. */
  firstArmAnswered(name: string, ok: boolean): void {
    this.awaiting.delete(name);
    if (ok && !this.armed.has(name)) {
      this.armed.add(name);
      this.armedPerSecond += 1000 / (this.periods.get(name) ?? Number.POSITIVE_INFINITY);
    }
  }

  /** Removed by a reload, or known not to want arming: it no longer counts. */
  forget(name: string): void {
    this.unsettled.delete(name);
    this.awaiting.delete(name);
    this.parked.delete(name);
    if (this.armed.delete(name)) this.armedPerSecond -= 1000 / (this.periods.get(name) ?? Number.POSITIVE_INFINITY);
    this.periods.delete(name);
  }

  /** Accounts approved whose first arm has not been answered. */
  awaitingNames(): IterableIterator<string> {
    return this.awaiting.values();
  }

  /** Provisioning is under way: approvals to come, or first arms not yet answered. */
  active(): boolean {
    return this.unsettled.size > 0 || this.awaiting.size > 0;
  }

  /** What provisioning still has to send, for the plan (plan/budget-plan.ts). */
  provisioning(): { approvalsLeft: number; firstArmsLeft: number } {
    const c = this.input(0);
    return { approvalsLeft: c.approvalsLeft, firstArmsLeft: c.firstArmsLeft };
  }

  /** Requests provisioning still has to send (approvals likely, first arms). */
  backlog(): number {
    const c = this.input(0);
    return Math.ceil(c.approvalsLeft + c.firstArmsLeft);
  }

  /** Starts the account now, or parks it until the gate opens (only a just-in-time order has one). */
  admit(name: string, nowMs: number, window: ColdStartWindow, start: () => void): void {
    if (this.gateClosed(nowMs, window)) {
      this.parked.set(name, start);
      return;
    }
    start();
  }

  /** Releases every parked account when the gate has opened; returns how many. */
  release(nowMs: number, window: ColdStartWindow): number {
    if (this.parked.size === 0) return 0;
    if (this.gateClosed(nowMs, window)) return 0;
    const starts = [...this.parked.values()];
    this.parked.clear();
    for (const start of starts) start();
    return starts.length;
  }

  private gateClosed(nowMs: number, window: ColdStartWindow): boolean {
    return window.order === 'just_in_time' && window.perSecond > 0 && firstArmGateMs(nowMs, this.input(window.perSecond)) > nowMs;
  }

  parkedCount(): number {
    return this.parked.size;
  }

  /** False when it had settled already (a later re-provisioning is not the cold start). */
  private settle(name: string, approvals: number): boolean {
    if (!this.unsettled.delete(name)) return false;
    this.settled += 1;
    this.approvalsSeen += approvals;
    return true;
  }

  private input(usablePerSecond: number): ColdStartInput {
    const perAccount = this.settled > 0 ? this.approvalsSeen / this.settled : 1;
    const approvalsLeft = this.unsettled.size * perAccount;
    return {
      approvalsLeft,
      // Every unsettled account needs a first arm too, once approved.
      firstArmsLeft: this.unsettled.size + this.awaiting.size,
      usablePerSecond,
      armedPerSecond: this.armedPerSecond,
      periodMs: Number.isFinite(this.shortestPeriodMs) ? this.shortestPeriodMs : 0,
    };
  }
}
