import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { KeeperMetrics } from '../obs/metrics.js';
import type { FleetFile } from './fleet-file.js';
import { StateWriteError } from '../state/atomic-file.js';
import type { AccountCover } from '../account/keeper-types.js';
import { coverOf, fleetStep, handedOver, movedAccounts, ownersOf } from './fleet-step.js';
import type { FleetStore } from './fleet-redis.js';
import { mapLimited } from '../budget/pool.js';

/** Stored agents looked up at once when accounts are gained (files, like provisioning's). */
const SLOT_LOOKUPS = 64;

export interface FleetOptions {
  instance: string;
  leaseMs: number;
  replication: number;
  candidates: ReadonlyArray<{ name: string; address: string }>;
}

export interface FleetDeps {
  clock: Clock;
  store: FleetStore;
  file: FleetFile;
  logger: Logger;
  metrics: KeeperMetrics;
  /** The accounts this instance has settled: armed, or judged not to be armed (Keeper.settledAccounts). */
  settled: () => readonly string[];
  /**
   * The agent slot this instance already has a usable agent in for the account (a configured key,
   * or a stored agent still valid), -1 for none: claimed first when free, so an account that comes
   * back costs no approval.
   */
  preferredSlot?: (account: string) => Promise<number>;
  /** Told the number of instances whenever the membership changes (the shared budget's fallback share). */
  onMembers?: (count: number) => void;
  /** Makes the keeper hold exactly these accounts, each covered so (a reload of its accounts). */
  apply: (held: ReadonlyMap<string, AccountCover>) => Promise<void>;
}

/**
 * A fleet instance's shell (`shard.fleet`; docs/DESIGN.md section 7, "Fleet"): every lease / 3 it
 * renews its lease in Redis, reads the live instances, publishes what it has settled (armed, or judged not to be armed), claims agent
 * slots for the accounts it gains and lets go of the ones it hands over once their new owners
 * have armed them. The decisions are fleet/fleet-step.ts's.
 *
 * Without Redis it keeps the last membership it read (and, across a restart, the one in
 * `fleet.json`) and keeps arming what it holds: the loss of the coordination service never stops
 * protection. After Redis answers again (or at a first start) it waits one renewal before it gains
 * anything, so that the other instances have renewed their leases and the membership it reads is
 * whole; gaining early would only cost approvals it would hand back.
 */
export class Fleet {
  /** Account -> agent slot. */
  private held = new Map<string, number>();
  private members: string[] = [];
  private owners = new Map<string, string[]>();
  private connected = false;
  private gainFromMs = Infinity;
  private published = new Set<string>();
  private republish = true;
  private reclaim = false;
  private timer: TimerHandle | null = null;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  /** Accounts reported as waiting for an agent slot (logged once each). */
  private slotless = new Set<string>();
  /** The coverage the keeper was last given. */
  private applied = new Map<string, AccountCover>();

  constructor(
    private options: FleetOptions,
    private readonly deps: FleetDeps,
  ) {}

  private get renewMs(): number {
    return Math.max(1_000, Math.floor(this.options.leaseMs / 3));
  }

  /**
   * What this instance held when it stopped (fleet.json), checked against Redis when it answers:
   * its agent slots claimed again (one taken by another instance meanwhile is not signed in: that
   * would revoke the other's agent), and what its new owners have settled let go. Without Redis, all
   * of it is armed again as it was.
   */
  async restore(): Promise<ReadonlyMap<string, AccountCover>> {
    const { deps, options } = this;
    const loaded = await deps.file.load().catch((e: unknown) => ({ problem: `${deps.file.path}: ${(e as Error).message}`, record: undefined }));
    if (loaded.problem) {
      deps.metrics.stateUnreadable.inc({ file: 'fleet' });
      deps.logger.warn({ event: 'state_unreadable', file: 'fleet', problem: loaded.problem, action: 'started holding no account; the membership in Redis gives this instance its accounts' }, 'fleet state not loaded: this instance starts holding no account until Redis answers');
    }
    const r = loaded.record;
    if (r && r.instance === options.instance) {
      const known = new Set(options.candidates.map((c) => c.name));
      for (const [name, slot] of Object.entries(r.held)) if (known.has(name)) this.held.set(name, slot);
      this.setMembers(r.members);
    }
    // The first step before the keeper starts: nothing is gained yet (the membership is not known
    // whole), but slots are checked and handed-over accounts let go.
    await this.membershipStep().catch((e: unknown) => deps.logger.warn({ event: 'fleet_step_failed', err: e }, 'fleet step failed at start; arming what fleet.json holds'));
    this.report();
    this.applied = this.covers();
    return this.applied;
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running.catch(() => undefined);
  }

  /** A reload's new candidates (SIGHUP): applied at the next step. */
  reconfigure(options: FleetOptions): Promise<void> {
    this.options = options;
    this.applied = new Map();
    this.setMembers(this.members, true);
    return this.runStep();
  }

  /** For /status. */
  view(): { instance: string; members: string[]; connected: boolean; held: number; handing_over: number } {
    return { instance: this.options.instance, members: [...this.members], connected: this.connected, held: this.held.size, handing_over: this.handingOver().length };
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => {
      void this.runStep().finally(() => this.schedule(this.renewMs));
    }, delayMs);
  }

  /** One step at a time: a reload's step waits for the timer's. */
  private runStep(): Promise<void> {
    const next = this.running.then(() => this.step()).catch((e: unknown) => this.deps.logger.error({ event: 'fleet_step_failed', err: e }, 'fleet step failed; the accounts held stay armed'));
    this.running = next;
    return next;
  }

  private async step(): Promise<void> {
    if (this.stopped) return;
    await this.membershipStep();
    // Coverage (who else arms an account, which replica this is) follows every membership change.
    const covers = this.covers();
    if (!sameCovers(covers, this.applied)) {
      await this.deps.apply(covers);
      this.applied = covers;
    }
  }

  private async membershipStep(): Promise<void> {
    const { deps, options } = this;
    const me = options.instance;
    let renewed: { members: string[]; fresh: boolean };
    try {
      renewed = await deps.store.renew(me, options.leaseMs);
    } catch (e) {
      if (this.connected) deps.logger.warn({ event: 'fleet_membership', connected: false, err: (e as Error).message, members: this.members, held: this.held.size }, 'fleet membership unreachable: keeping the last membership known and arming every account held');
      this.connected = false;
      this.report();
      return;
    }
    if (!this.connected) {
      this.connected = true;
      this.gainFromMs = deps.clock.monoMs() + this.renewMs;
      deps.logger.info({ event: 'fleet_membership', connected: true, members: renewed.members }, 'fleet membership read from Redis');
    }
    if (renewed.fresh) {
      this.republish = true;
      this.reclaim = true;
    }
    const before = this.owners;
    const membersChanged = this.setMembers(renewed.members);
    if (membersChanged) {
      deps.logger.info({ event: 'fleet_members', members: this.members, moved: movedAccounts(before, this.owners), of: this.owners.size }, `fleet membership changed: ${this.members.length} instance(s)`);
    }
    let changed = false;
    try {
      await this.publishSettled();
      if (this.reclaim) changed = (await this.reclaimSlots()) || changed;
      const step = fleetStep(this.held, this.owners, me);
      for (const name of step.drop) {
        this.held.delete(name);
        changed = true;
      }
      if (step.drop.length) await deps.store.release(me, step.drop);
      if (deps.clock.monoMs() >= this.gainFromMs) changed = (await this.gain(step.gain)) || changed;
      changed = (await this.letGo(step.handOver)) || changed;
    } catch (e) {
      deps.logger.warn({ event: 'fleet_membership', connected: false, err: (e as Error).message }, 'fleet step interrupted (Redis); nothing held is let go');
    }
    if (changed || membersChanged || renewed.fresh) await this.persist();
    this.report();
  }

  /** Sets the membership (this instance always in it) and the owners under it; whether it changed. */
  private setMembers(members: readonly string[], force = false): boolean {
    const next = [...new Set([...members, this.options.instance])].sort();
    if (!force && next.length === this.members.length && next.every((m, i) => m === this.members[i])) return false;
    this.members = next;
    this.owners = ownersOf(this.options.candidates, next, this.options.replication);
    this.deps.onMembers?.(next.length);
    return true;
  }

  private async publishSettled(): Promise<void> {
    const now = new Set(this.deps.settled().filter((a) => this.held.has(a)));
    const ttlMs = 3 * this.options.leaseMs;
    if (this.republish) {
      await this.deps.store.publishSettled(this.options.instance, { add: [...now], remove: [], replace: true }, ttlMs);
      this.republish = false;
    } else {
      const add = [...now].filter((a) => !this.published.has(a));
      const remove = [...this.published].filter((a) => !now.has(a));
      await this.deps.store.publishSettled(this.options.instance, { add, remove, replace: false }, ttlMs);
    }
    this.published = now;
  }

  /** After Redis lost this lease (or at a start): claim again the slots held, the same ones when free. */
  private async reclaimSlots(): Promise<boolean> {
    const names = [...this.held.keys()];
    const slots = await this.deps.store.claim(this.options.instance, names, names.map((n) => this.held.get(n)!));
    this.reclaim = false;
    let changed = false;
    names.forEach((name, i) => {
      const slot = slots[i]!;
      if (slot === this.held.get(name)) return;
      if (slot < 0) {
        // Every slot is another live instance's now: this one may not sign for the account (gained again when a slot frees).
        this.deps.logger.warn({ event: 'fleet_agent_slot_lost', account: name, slot: this.held.get(name) }, 'agent slot taken while Redis was away and no other free: no longer arming this account here');
        this.held.delete(name);
        changed = true;
        return;
      }
      // Another instance signs in the old slot now: a new agent in this one (re-provisioned by the reload).
      this.deps.logger.warn({ event: 'fleet_agent_slot_moved', account: name, from: this.held.get(name), to: slot }, 'agent slot taken while Redis was away: approving an agent in another slot');
      this.held.set(name, slot);
      changed = true;
    });
    return changed;
  }

  private async gain(names: readonly string[]): Promise<boolean> {
    if (names.length === 0) return false;
    const prefer = this.deps.preferredSlot;
    const preferred = prefer ? await mapLimited(names, SLOT_LOOKUPS, (n) => prefer(n).catch(() => -1)) : names.map(() => -1);
    const slots = await this.deps.store.claim(this.options.instance, names, preferred);
    let gained = 0;
    names.forEach((name, i) => {
      const slot = slots[i]!;
      if (slot < 0) {
        if (!this.slotless.has(name)) this.deps.logger.warn({ event: 'fleet_agent_slot_unavailable', account: name }, 'every agent slot of this account is held by a live instance: gaining it later');
        this.slotless.add(name);
        return;
      }
      this.slotless.delete(name);
      this.held.set(name, slot);
      gained++;
    });
    if (gained) {
      this.deps.metrics.fleetMoves.inc({ direction: 'gained' }, gained);
      this.deps.logger.info({ event: 'fleet_accounts_gained', count: gained }, `gained ${gained} account(s)`);
    }
    return gained > 0;
  }

  /** Lets go of the accounts every new owner has settled; the rest stay held and armed. */
  private async letGo(names: readonly string[]): Promise<boolean> {
    if (names.length === 0) return false;
    const me = this.options.instance;
    const pairs: Array<[string, string]> = [];
    for (const name of names) for (const o of this.owners.get(name) ?? []) if (o !== me) pairs.push([o, name]);
    const answers = await this.deps.store.settled(pairs);
    const settled = new Set(pairs.filter((_, i) => answers[i]).map(([o, n]) => `${o}\n${n}`));
    const go = names.filter((name) => handedOver(this.owners.get(name) ?? [], me, (o) => settled.has(`${o}\n${name}`)));
    if (go.length === 0) return false;
    await this.deps.store.release(me, go);
    for (const name of go) this.held.delete(name);
    this.deps.metrics.fleetMoves.inc({ direction: 'released' }, go.length);
    this.deps.logger.info({ event: 'fleet_accounts_released', count: go.length }, `let go of ${go.length} account(s): their new owners have settled them`);
    return true;
  }

  private handingOver(): string[] {
    const me = this.options.instance;
    return [...this.held.keys()].filter((n) => !(this.owners.get(n) ?? []).includes(me));
  }

  private covers(): Map<string, AccountCover> {
    const me = this.options.instance;
    const out = new Map<string, AccountCover>();
    for (const c of this.options.candidates) {
      const slot = this.held.get(c.name);
      if (slot !== undefined) out.set(c.name, coverOf(this.owners.get(c.name) ?? [], me, slot));
    }
    return out;
  }

  private async persist(): Promise<void> {
    const held = Object.fromEntries(this.held);
    await this.deps.file.save({ instance: this.options.instance, members: this.members, held }).catch((e: unknown) => {
      // Counted like every other state file, so DmsKeeperStateWriteErrors sees it too.
      if (e instanceof StateWriteError) this.deps.metrics.stateWriteErrors.inc({ reason: e.reason });
      this.deps.logger.warn({ event: 'state_write_failed', file: 'fleet', err: (e as Error).message }, 'fleet state not saved: a restart without Redis would start holding an older set');
    });
  }

  private report(): void {
    const m = this.deps.metrics;
    m.fleetMembers.set(this.members.length);
    m.fleetConnected.set(this.connected ? 1 : 0);
    m.fleetHandovers.set(this.handingOver().length);
  }
}

function sameCovers(a: ReadonlyMap<string, AccountCover>, b: ReadonlyMap<string, AccountCover>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, x] of a) {
    const y = b.get(name);
    if (!y || x.slot !== y.slot || x.replica !== y.replica || x.coveredBy.length !== y.coveredBy.length || x.coveredBy.some((c, i) => c !== y.coveredBy[i])) return false;
  }
  return true;
}
