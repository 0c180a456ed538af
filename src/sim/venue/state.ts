import type { Clock } from '../../time/clock.js';
import { VENUE_FACTS } from '../../venue/facts.js';
import { recoverL1Signer, recoverUserSigner, type SignatureRecovery } from '../../venue/signing/signer.js';
import type { Account, Network, OpenOrder, Position } from '../../venue/types.js';
import { badRequest } from '../http-util.js';
import type {
  ActionOutcome,
  AgentInfo,
  Catalog,
  NotificationSink,
  RestingOrder,
  ScheduleInfo,
  SeedOrder,
  SeedUserRateLimit,
  SeedVenueOrder,
  SimAccountSeed,
  UserRateLimitInfo,
  UserRole,
  VenueInfoState,
  VenueOpenOrder,
  VenuePerpPosition,
  VenueSpotBalance,
  VenueStateApi,
} from '../types.js';
import { AccountBook, SeedError, SETTLED_ORDER_STATUS, type ClosedOrder, type ClosedVenueOrder } from './accounts.js';
import { parseActionBody, type ApproveAgentBody, type ApproveBuilderFeeBody, type CancelBody, type L1Body, type OrderBody, type OrderWire, type ScheduleCancelBody } from './actions.js';
import { tradableOutcomeSide } from './assets.js';
import { outcomeAssetId, outcomeIndexOf } from '../catalog/asset-id.js';
import { cmpFixed, isDecimal, isPositiveFixed, mulFixed, parseFixed } from '../../venue/decimal.js';
import { AgentBook, parseAgentName } from './agents.js';
import { NonceBook } from './nonces.js';
import { ScheduleBook } from './schedule.js';
import { scheduledCancelNotification, VENUE_TEXTS } from './texts.js';

/**
 * The venue's per-address action budget (VENUE.md): `initial` actions to start plus
 * `perUsdTraded` per USDC traded; once spent, one action per 10 s.
 */
export interface AddressBudget {
  initial: number;
  perUsdTraded: number;
}

export interface VenueStateOptions {
  /** The venue's clock (possibly offset from ours): deadlines, nonce windows and UTC days use it. */
  clock: Clock;
  network: Network;
  catalog: Catalog;
  /**
   * Default true. False accepts any well-shaped signature: a body naming a known account in
   * `vaultAddress` acts on it with no signature work (cheap, for benchmarks that build bodies
   * themselves); any other body still has its signer recovered, since nothing else says who it is.
   */
  verifySignatures?: boolean;
  /** How a signer is recovered from a digest (default viem's; see SignatureRecovery). */
  recoverSigner?: SignatureRecovery;
  /** Receives scheduled-cancel notifications, keyed by the account (never the agent). */
  onNotification?: NotificationSink;
  /** Default `{initial: 10000, perUsdTraded: 1}`; `false` disables the budget. */
  addressBudget?: AddressBudget | false;
  /** Entries kept in `actionLog()` (oldest dropped first). Default 10 000. */
  actionLogLimit?: number;
  /**
   * Accept a user-signed action in the spec's dialect (`venueChain`), the `spec_dialect` profile.
   * Default false: the venue's `hyperliquidChain` only (actions.ts, checkChain).
   */
  specChainField?: boolean;
}

export interface ActionLogEntry {
  atMs: number;
  via: 'rest' | 'exchange';
  type: string;
  account?: string;
  signer?: string;
  /** "ok", the err text, or "http <status> <field>: <reason>". */
  result: string;
}

const OK_ANSWER: ActionOutcome = { kind: 'answer', body: { status: 'ok', response: { type: 'default' } } };

/** Context gathered for one action as it goes through the rules (for the log). */
interface Trace {
  via: 'rest' | 'exchange';
  type: string;
  account?: string;
  signer?: string;
}

/**
 * The simulated venue's account-side state and rules, with no HTTP: accounts, open orders and
 * positions; agents; nonces; scheduled cancels and their timers on the injected venue clock.
 *
 * Every check that depends on the signer happens after the one `await` (signature recovery), and
 * everything after it is synchronous, so concurrent actions for one signer cannot interleave
 * between the nonce check and the nonce commit.
 */
export class VenueState implements VenueStateApi, VenueInfoState {
  private readonly clock: Clock;
  private readonly network: Network;
  private readonly verify: boolean;
  private readonly notify: NotificationSink;
  private readonly budget: AddressBudget | false;
  private readonly logLimit: number;
  private readonly specChainField: boolean;
  private readonly catalog: Catalog;

  private readonly accounts: AccountBook;
  private readonly agentBook = new AgentBook();
  private readonly nonceBook = new NonceBook();
  private readonly schedules: ScheduleBook;
  /** master -> builder -> maxFeeRate. */
  private readonly builderFeeApprovals = new Map<string, Map<string, string>>();
  private readonly actionsUsed = new Map<string, number>();
  /** Seeded `nRequestsCap` per account: replaces the derived cap (reported and enforced). */
  private readonly capOverride = new Map<string, number>();
  /** Seeded `cumVlm` text per account (its number is the traded volume); cleared by setTradedVolume. */
  private readonly cumVlmText = new Map<string, string>();
  private readonly lastOverBudgetMs = new Map<string, number>();
  private readonly log: ActionLogEntry[] = [];
  private readonly recoverSigner: SignatureRecovery | undefined;

  constructor(opts: VenueStateOptions) {
    this.clock = opts.clock;
    this.network = opts.network;
    this.verify = opts.verifySignatures ?? true;
    this.recoverSigner = opts.recoverSigner;
    this.notify = opts.onNotification ?? (() => undefined);
    this.budget = opts.addressBudget ?? { initial: 10_000, perUsdTraded: 1 };
    this.logLimit = opts.actionLogLimit ?? 10_000;
    this.specChainField = opts.specChainField ?? false;
    this.catalog = opts.catalog;
    this.accounts = new AccountBook(opts.clock, opts.catalog);
    this.schedules = new ScheduleBook(opts.clock, (address) => this.fire(address));
  }

  // ---- accounts ----

  addAccount(seed: SimAccountSeed): void {
    if (seed.rateLimit !== undefined) checkRateLimitSeed(seed.rateLimit);
    this.accounts.add(seed);
    if (seed.rateLimit !== undefined) this.setUserRateLimit(seed.address, seed.rateLimit);
  }

  hasAccount(address: string): boolean {
    return this.accounts.has(address);
  }

  getAccount(address: string): Account | undefined {
    return this.accounts.account(address);
  }

  openOrders(address: string): OpenOrder[] {
    return this.accounts.openOrders(address);
  }

  positions(address: string): Position[] {
    return this.accounts.positions(address);
  }

  restingOrders(outcomeId: string): RestingOrder[] {
    return this.accounts.restingOrders(outcomeId);
  }

  placeOrder(address: string, order: SeedOrder): OpenOrder {
    return this.accounts.placeOrder(address, order);
  }

  setTradedVolume(address: string, usd: number): void {
    this.accounts.setTradedVolume(address, usd);
    this.cumVlmText.delete(address.toLowerCase());
  }

  // ---- the venue's own view (POST /info) ----

  venueOpenOrders(address: string): VenueOpenOrder[] {
    return this.accounts.venueOpenOrders(address);
  }

  placeVenueOrder(address: string, order: SeedVenueOrder): VenueOpenOrder {
    return this.accounts.placeVenueOrder(address, order);
  }

  /** Venue-only orders that the scheduled cancel (or another cancel-all) closed. */
  closedVenueOrders(address: string): readonly ClosedVenueOrder[] {
    return this.accounts.closedVenueOrders(address);
  }

  perpPositions(address: string): VenuePerpPosition[] {
    return this.accounts.perpPositions(address);
  }

  perpUsd(address: string): string {
    return this.accounts.perpUsd(address);
  }

  spotBalances(address: string): VenueSpotBalance[] {
    return this.accounts.spotBalances(address);
  }

  /** `user` (a main account), `subAccount` (with its master), `agent` (with its user), or `missing`. */
  userRole(address: string): UserRole {
    const a = address.toLowerCase();
    if (this.accounts.isMain(a)) return { role: 'user' };
    const master = this.accounts.parentOf(a);
    if (master !== undefined) return { role: 'subAccount', master };
    const user = this.agentBook.masterOf(a, this.clock.nowMs());
    if (user !== undefined) return { role: 'agent', user };
    return { role: 'missing' };
  }

  /**
   * The address's action budget as the venue reports it: `cumVlm` its traded volume, `nRequestsUsed`
   * the actions counted (admit: every action of its signers that passed the nonce check),
   * `nRequestsCap` the cap `admit` enforces. An address that is no account reports the initial cap.
   */
  userRateLimit(address: string): UserRateLimitInfo {
    const a = address.toLowerCase();
    const known = this.accounts.has(a);
    const traded = known ? this.accounts.tradedVolume(a) : 0;
    return {
      cumVlm: this.cumVlmText.get(a) ?? venueNumber(traded),
      nRequestsUsed: this.actionsUsed.get(a) ?? 0,
      nRequestsCap: known ? this.actionCap(a) : this.budget ? this.budget.initial : 10_000,
    };
  }

  setUserRateLimit(address: string, fields: SeedUserRateLimit): void {
    checkRateLimitSeed(fields);
    const a = address.toLowerCase();
    if (!this.accounts.has(a)) throw new SeedError(`unknown account ${address}`);
    if (fields.cumVlm !== undefined) {
      this.accounts.setTradedVolume(a, Number(fields.cumVlm));
      this.cumVlmText.set(a, fields.cumVlm);
    }
    if (fields.nRequestsUsed !== undefined) this.actionsUsed.set(a, fields.nRequestsUsed);
    if (fields.nRequestsCap !== undefined) this.capOverride.set(a, fields.nRequestsCap);
  }

  /** The action cap of an account: seeded, or the venue's rule over its traded volume. */
  private actionCap(account: string): number {
    const seeded = this.capOverride.get(account);
    if (seeded !== undefined) return seeded;
    if (!this.budget) return Number.MAX_SAFE_INTEGER;
    return this.budget.initial + Math.floor(this.accounts.tradedVolume(account) * this.budget.perUsdTraded);
  }

  /**
   * An outcome settled (a recurring series' close, catalog/settlement.ts): its resting orders are
   * gone (SETTLED_ORDER_STATUS) and its positions paid out (AccountBook.settleOutcome). No
   * scheduled cancel fired: no schedule is touched, no trigger counted, no notification sent.
   */
  settleOutcome(outcomeId: string, settleFraction: string): { orders: number; positions: number } {
    return this.accounts.settleOutcome(outcomeId, settleFraction, SETTLED_ORDER_STATUS, this.clock.nowMs());
  }

  /** Orders that left the listing, with the venue status that closed them (`scheduledCancel`). */
  closedOrders(address: string): readonly ClosedOrder[] {
    return this.accounts.closedOrders(address);
  }

  // ---- inspection ----

  schedule(address: string): ScheduleInfo {
    return this.schedules.info(address.toLowerCase(), this.clock.nowMs());
  }

  agents(address: string): AgentInfo[] {
    return this.agentBook.list(address.toLowerCase(), this.clock.nowMs());
  }

  builderFees(address: string): Array<{ builder: string; maxFeeRate: string }> {
    return [...(this.builderFeeApprovals.get(address.toLowerCase())?.entries() ?? [])].map(([builder, maxFeeRate]) => ({ builder, maxFeeRate }));
  }

  /** Nonces kept for a signer, ascending. */
  keptNonces(signer: string): readonly number[] {
    return this.nonceBook.keptFor(signer);
  }

  actionLog(): ReadonlyArray<ActionLogEntry> {
    this.trimLog();
    return this.log;
  }

  stop(): void {
    this.schedules.stop();
  }

  // ---- actions ----

  async handleAction(body: unknown, via: 'rest' | 'exchange'): Promise<ActionOutcome> {
    const parsed = parseActionBody(body, via, this.network, { specChainField: this.specChainField });
    if ('error' in parsed) {
      const trace: Trace = { via, type: parsed.type ?? '?' };
      // The service's REST path answers its envelope. The venue's /exchange answers an action it
      // read but refuses with its 200 `err`, and a body it cannot read with its 422 text.
      if (via === 'rest') return this.http(trace, parsed.error.status, parsed.error.body);
      if (parsed.venueText !== undefined) return this.err(trace, parsed.venueText);
      return this.http(trace, 422, parsed.error.body, VENUE_TEXTS.undeserializable);
    }
    const p = parsed.ok;
    const trace: Trace = { via, type: p.kind };
    switch (p.kind) {
      case 'scheduleCancel':
        return this.scheduleCancel(p, trace);
      case 'approveAgent':
      case 'approveBuilderFee':
        return this.userSigned(p, trace);
      case 'order':
        return this.order(p, trace);
      case 'cancel':
        return this.cancel(p, trace);
    }
  }

  /**
   * `order` on outcome assets. Each order is judged on its own and answered with its own status
   * (`resting` with its oid, or an `error` in the venue's words), in the action's order. There is no
   * matching engine: a Gtc or Alo order rests even where it would cross the book (the venue would
   * fill it, or refuse the Alo); an Ioc finds nothing to match and is refused. No funds are
   * modelled, so no order is refused for want of balance. Resting orders are the same orders the
   * seeds and the admin API place: `/info` openOrders, the service's orders listing and the
   * scheduled cancel all see them.
   */
  private async order(p: OrderBody, trace: Trace): Promise<ActionOutcome> {
    const taken = await this.takeL1(p, trace);
    if ('kind' in taken) return taken;
    const { signer, account } = taken;
    if (p.builder !== undefined) {
      const master = this.accounts.parentOf(account) ?? account;
      const approved = this.builderFeeApprovals.get(master)?.get(p.builder.b);
      if (approved === undefined || !feeWithin(p.builder.f, approved)) return this.err(trace, VENUE_TEXTS.builderFeeNotApproved);
    }
    const statuses = p.orders.map((o) => this.placeOne(account, signer, o));
    this.record(trace, `ok: ${statuses.map((x) => ('resting' in x ? 'resting' : 'error')).join(',')}`);
    return { kind: 'answer', body: { status: 'ok', response: { type: 'order', data: { statuses } } } };
  }

  private placeOne(account: string, signer: string, o: OrderWire): { resting: { oid: number; cloid?: string } } | { error: string } {
    const a = o.a;
    const found = tradableOutcomeSide(this.catalog, a);
    if (found === undefined) return { error: VENUE_TEXTS.unknownAsset(a) };
    if (!('limit' in o.t)) return { error: VENUE_TEXTS.triggerUnsupported(a) };
    if (o.r) return { error: VENUE_TEXTS.reduceOnlyUnsupported(a) };
    const { market, side } = found;
    // An outcome side's price is a probability: strictly between 0 and 1, on the tick.
    if (!isDecimal(o.p) || !isPositiveFixed(parseFixed(o.p)) || cmpFixed(parseFixed(o.p), parseFixed('1')) >= 0 || !isMultiple(o.p, market.tickSize)) {
      return { error: VENUE_TEXTS.badPrice(a) };
    }
    if (!isDecimal(o.s) || !isPositiveFixed(parseFixed(o.s)) || !isMultiple(o.s, market.lotSize)) return { error: VENUE_TEXTS.badSize(a) };
    if (cmpFixed(mulFixed(parseFixed(o.p), parseFixed(o.s)), parseFixed(market.minNotional)) < 0) return { error: VENUE_TEXTS.minValue(market.minNotional, a) };
    const tif = o.t.limit.tif;
    if (tif === 'Ioc' || tif === 'FrontendMarket') return { error: VENUE_TEXTS.iocNoMatch(a) };
    const placed = this.accounts.placeOrder(account, {
      outcome_id: market.outcomeId,
      side,
      direction: o.b ? 'buy' : 'sell',
      price: o.p,
      quantity: o.s,
      order_type: 'limit',
      time_in_force: tif === 'Alo' ? 'alo' : 'gtc',
      ...(o.c !== undefined ? { client_order_id: o.c } : {}),
      submitted_by: signer,
    });
    return { resting: { oid: Number(placed.venue_order_id), ...(o.c !== undefined ? { cloid: o.c } : {}) } };
  }

  /**
   * `cancel` by asset and oid: each one `"success"`, or the venue's error when the account has no
   * such open outcome order on that asset (never placed, already cancelled, filled, or another
   * account's). The venue-only seeded orders (perps, spot) have no asset id here and cannot be
   * cancelled this way.
   */
  private async cancel(p: CancelBody, trace: Trace): Promise<ActionOutcome> {
    const taken = await this.takeL1(p, trace);
    if ('kind' in taken) return taken;
    const { account, now } = taken;
    const statuses = p.cancels.map(({ a, o }): 'success' | { error: string } => {
      const open = this.accounts.openOrders(account).find((x) => x.venue_order_id === String(o));
      const n = outcomeIndexOf(this.catalog.outcome(open?.outcome_id ?? '')?.hl_id);
      const side = open?.side;
      if (open === undefined || n === undefined || (side !== 0 && side !== 1) || outcomeAssetId(n, side) !== a) return { error: VENUE_TEXTS.cancelMissingOrder(a) };
      this.accounts.cancelOrder(account, String(o), 'canceled', now);
      return 'success';
    });
    this.record(trace, `ok: ${statuses.map((x) => (x === 'success' ? 'success' : 'error')).join(',')}`);
    return { kind: 'answer', body: { status: 'ok', response: { type: 'cancel', data: { statuses } } } };
  }

  /**
   * Who acts on which account for an L1 action (scheduleCancel, order, cancel): the signer is the
   * account's master or an approved agent of it; `vaultAddress` names a subaccount of the master.
   * Unverified mode with a known vault skips recovery altogether. An outcome is a refusal.
   */
  private async l1Actor(p: L1Body, trace: Trace): Promise<{ signer: string; account: string } | ActionOutcome> {
    if (p.expiresAfter !== undefined && this.clock.nowMs() > p.expiresAfter) return this.err(trace, VENUE_TEXTS.actionExpired);

    let signer: string;
    if (!this.verify && p.vaultAddress !== undefined && this.accounts.has(p.vaultAddress)) {
      signer = this.accounts.parentOf(p.vaultAddress) ?? p.vaultAddress;
    } else {
      const recovered = await this.recover(() =>
        recoverL1Signer({
          action: p.action,
          nonce: p.nonce,
          network: this.network,
          signature: p.signature,
          vaultAddress: p.vaultAddress,
          expiresAfter: p.expiresAfter,
        }, this.recoverSigner),
      );
      if (recovered === undefined) return this.unrecoverable(trace);
      signer = recovered;
    }
    trace.signer = signer;
    const now = this.clock.nowMs();

    let account: string;
    if (p.vaultAddress !== undefined) {
      const vault = p.vaultAddress;
      const master = this.accounts.parentOf(vault);
      const unverifiedAny = !this.verify && this.accounts.has(vault);
      if (master === undefined && !unverifiedAny) return this.err(trace, VENUE_TEXTS.vaultNotRegistered(vault));
      if (!unverifiedAny && signer !== master && this.agentBook.masterOf(signer, now) !== master) {
        return this.err(trace, VENUE_TEXTS.unknownSigner(signer));
      }
      account = vault;
    } else if (this.accounts.isMain(signer)) {
      account = signer;
    } else {
      const master = this.agentBook.masterOf(signer, now);
      if (master === undefined) return this.err(trace, VENUE_TEXTS.unknownSigner(signer));
      account = master;
    }
    trace.account = account;
    return { signer, account };
  }

  /**
   * An L1 action taken in: its actor found (l1Actor), then its nonce and the address's action budget
   * spent (admit), as every L1 action is charged before its own rules judge it. A refusal is an outcome.
   */
  private async takeL1(p: L1Body, trace: Trace): Promise<{ signer: string; account: string; now: number } | ActionOutcome> {
    const actor = await this.l1Actor(p, trace);
    if ('kind' in actor) return actor;
    const now = this.clock.nowMs();
    const refused = this.admit(actor.signer, actor.account, p.nonce, now);
    if (refused !== undefined) return this.err(trace, refused);
    return { ...actor, now };
  }

  private async scheduleCancel(p: ScheduleCancelBody, trace: Trace): Promise<ActionOutcome> {
    const taken = await this.takeL1(p, trace);
    if ('kind' in taken) return taken;
    const { account, now } = taken;

    // From here the action has been taken in (nonce used, budget spent) whatever the outcome.
    const traded = this.accounts.tradedVolume(account);
    if (traded < VENUE_FACTS.scheduleCancelVolumeGateUsd) return this.err(trace, VENUE_TEXTS.volumeGate(traded));
    if (p.time === undefined) {
      this.schedules.clear(account);
      return this.ok(trace);
    }
    if (p.time < now + VENUE_FACTS.scheduleCancelMinLeadMs) return this.err(trace, VENUE_TEXTS.tooEarly);
    // (assumed) the daily cap refuses arming only; clearing stays possible (see above).
    if (this.schedules.triggersToday(account, now) >= VENUE_FACTS.maxTriggersPerUtcDay) {
      return this.err(trace, VENUE_TEXTS.tooManyTriggers);
    }
    this.schedules.arm(account, p.time);
    return this.ok(trace);
  }

  private async userSigned(p: ApproveAgentBody | ApproveBuilderFeeBody, trace: Trace): Promise<ActionOutcome> {
    const signer = await this.recover(() => recoverUserSigner(p.kind, p.action, p.signature, { chainField: p.chainField }, this.recoverSigner));
    if (signer === undefined) return this.unrecoverable(trace);
    trace.signer = signer;
    const now = this.clock.nowMs();
    // Only the master key signs these. An agent is a wallet with no account of its own.
    if (!this.accounts.isMain(signer)) {
      if (this.agentBook.masterOf(signer, now) !== undefined) return this.err(trace, VENUE_TEXTS.mustDeposit(signer));
      return this.err(trace, VENUE_TEXTS.unknownSigner(signer));
    }
    const master = signer;
    trace.account = master;
    const refused = this.admit(signer, master, p.nonce, now);
    if (refused !== undefined) return this.err(trace, refused);

    if (p.kind === 'approveBuilderFee') {
      let approvals = this.builderFeeApprovals.get(master);
      if (!approvals) {
        approvals = new Map();
        this.builderFeeApprovals.set(master, approvals);
      }
      if (!approvals.has(p.builder) && approvals.size >= VENUE_FACTS.maxBuilderFeeApprovals) {
        return this.err(trace, VENUE_TEXTS.builderFeeLimit);
      }
      approvals.set(p.builder, p.maxFeeRate);
      return this.ok(trace);
    }

    if (this.agentBook.pendingRemoval(master, now)) return this.err(trace, VENUE_TEXTS.pendingAgentRemoval);
    const name = parseAgentName(p.agentName, now);
    if ('error' in name) return this.err(trace, name.error);
    if (this.accounts.has(p.agentAddress)) return this.err(trace, VENUE_TEXTS.agentAddressIsUser);
    const namedCap = VENUE_FACTS.namedAgentsPerMaster + VENUE_FACTS.extraNamedAgentsPerSubaccount * this.accounts.subaccountCount(master);
    const refusal = this.agentBook.approve({
      master,
      agent: p.agentAddress,
      name: name.name,
      validUntilMs: name.validUntilMs,
      namedCap,
      nowMs: now,
    });
    if (refusal !== undefined) return this.err(trace, refusal);
    return this.ok(trace);
  }

  /**
   * Nonce and address budget, then commit both. A refusal here leaves the nonce unused (the
   * action never got in); every later refusal has used it, as on the venue.
   */
  private admit(signer: string, account: string, nonce: number, now: number): string | undefined {
    const nonceRefusal = this.nonceBook.check(signer, nonce, now);
    if (nonceRefusal !== undefined) return nonceRefusal;
    let overBudget = false;
    if (this.budget || this.capOverride.has(account)) {
      const used = this.actionsUsed.get(account) ?? 0;
      const traded = this.accounts.tradedVolume(account);
      const cap = this.actionCap(account);
      if (used >= cap) {
        const last = this.lastOverBudgetMs.get(account);
        if (last !== undefined && now - last < VENUE_FACTS.addressBudgetExhaustedIntervalMs) {
          return VENUE_TEXTS.addressBudget(used + 1, cap, traded);
        }
        overBudget = true;
      }
    }
    this.nonceBook.commit(signer, nonce);
    this.actionsUsed.set(account, (this.actionsUsed.get(account) ?? 0) + 1);
    if (overBudget) this.lastOverBudgetMs.set(account, now);
    return undefined;
  }

  /** The deadline came: cancel every open order of exactly this account, count, notify. */
  private fire(address: string): void {
    const now = this.clock.nowMs();
    const cancelled = this.accounts.cancelAll(address, 'scheduledCancel', now);
    this.schedules.recordTrigger(address, now);
    try {
      this.notify(address, scheduledCancelNotification(cancelled));
    } catch {
      // A failing sink (a closed socket) must not stop the venue's own bookkeeping.
    }
  }

  private async recover(fn: () => Promise<`0x${string}`>): Promise<string | undefined> {
    try {
      return await fn();
    } catch {
      return undefined;
    }
  }

  // ---- answers (each one logged) ----

  private ok(trace: Trace): ActionOutcome {
    this.record(trace, 'ok');
    return OK_ANSWER;
  }

  private err(trace: Trace, text: string): ActionOutcome {
    this.record(trace, text);
    return { kind: 'answer', body: { status: 'err', response: text } };
  }

  /**
   * An HTTP-level answer. `body` is the service's envelope (its field violation is logged either
   * way); `raw`, when given, is sent in its place as plain text (the venue's 422).
   */
  private http(trace: Trace, status: number, body: unknown, raw?: string): ActionOutcome {
    const detail = (body as { error?: { details?: Array<{ field?: string; reason?: string }> } }).error?.details?.[0];
    this.record(trace, `http ${status} ${detail?.field ?? ''}: ${detail?.reason ?? ''}`);
    return raw === undefined ? { kind: 'http', status, body } : { kind: 'http', status, body: null, raw };
  }

  /** No signer: the service's 400 on its REST path, the venue's `err` (assumed text) on /exchange. */
  private unrecoverable(trace: Trace): ActionOutcome {
    if (trace.via === 'exchange') return this.err(trace, VENUE_TEXTS.signatureUnrecoverable);
    const r = badRequest('signature', 'unrecoverable', 'no signer can be recovered from this signature');
    return this.http(trace, r.status, r.body);
  }

  private record(trace: Trace, result: string): void {
    const entry: ActionLogEntry = { atMs: this.clock.nowMs(), via: trace.via, type: trace.type, result };
    if (trace.account !== undefined) entry.account = trace.account;
    if (trace.signer !== undefined) entry.signer = trace.signer;
    this.log.push(entry);
    // Trimmed to the limit when read, and here only past twice it: dropping the oldest entry at
    // every action moved the whole array each time (a 20-minute soak spent 0.4 s of its 24 s in it).
    if (this.log.length > 2 * this.logLimit) this.trimLog();
  }

  /** Keeps the newest `actionLogLimit` entries. */
  private trimLog(): void {
    if (this.log.length > this.logLimit) this.log.splice(0, this.log.length - this.logLimit);
  }
}

function checkRateLimitSeed(f: SeedUserRateLimit): void {
  if (f.cumVlm !== undefined && (!isDecimal(f.cumVlm) || f.cumVlm.startsWith('-') || !Number.isFinite(Number(f.cumVlm)))) {
    throw new SeedError('cumVlm must be a non-negative decimal');
  }
  for (const k of ['nRequestsUsed', 'nRequestsCap'] as const) {
    const v = f[k];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) throw new SeedError(`${k} must be a non-negative integer`);
  }
}

/** Whether decimal `value` is a whole multiple of the positive decimal `step`. */
function isMultiple(value: string, step: string): boolean {
  const v = parseFixed(value);
  const st = parseFixed(step);
  const scale = Math.max(v.scale, st.scale);
  const sc = st.coef * 10n ** BigInt(scale - st.scale);
  return sc > 0n && (v.coef * 10n ** BigInt(scale - v.scale)) % sc === 0n;
}

/** Whether a builder fee `f` (tenths of a basis point: 1 = 0.001%) is within an approved percent rate ("0.01%"). */
function feeWithin(f: number, maxFeeRate: string): boolean {
  return cmpFixed(parseFixed(String(f)), mulFixed(parseFixed(maxFeeRate.slice(0, -1)), parseFixed('1000'))) <= 0;
}

/** A number as the venue writes its float strings: "25000000.0", "4643.5". */
function venueNumber(n: number): string {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}
