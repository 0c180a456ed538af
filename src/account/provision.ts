import type { ChainField } from '../venue/signing/user-signed.js';
import type { VenuePort } from '../venue/port.js';
import { ADDRESS_RE } from '../venue/address.js';
import { generatePrivateKey } from 'viem/accounts';
import type { Clock } from '../time/clock.js';
import { DAY_MS, sleep } from '../time/clock.js';
import type { AgentStore, StoredAgent } from '../state/agent-store.js';
import { StateWriteError } from '../state/atomic-file.js';
import { buildApproveAgent, buildApproveBuilderFee } from '../venue/actions.js';
import { ActionError } from '../venue/errors.js';
import { VENUE_FACTS } from '../venue/facts.js';
import type { NonceSource } from '../venue/signing/nonce.js';
import type { SigningCurve } from '../venue/signing/curve.js';
import { signerFromPrivateKey, type Signer } from '../venue/signing/signer.js';
import type { Account, Network } from '../venue/types.js';

/**
 * Provisioning at start: resolve the account, get an agent that may sign for it, approve the
 * builder fee if asked, and never hold the master key longer than one approval.
 *
 * Key handling: the master key is read from its source (file or env) only inside `withMaster`,
 * used to sign, and the reference dropped; re-provisioning before expiry reads it again.
 */
export type KeyLoader = () => Promise<string>;

export interface ProvisionSpec {
  name: string;
  address: string;
  agentName: string;
  validDays: number;
  masterKey?: KeyLoader;
  agentKey?: KeyLoader;
  builderFee?: { builder: string; maxFeeRate: string };
}

/** The venue port as provisioning needs it (approvals are admitted after arms, before reads). */
/** `hasService: false` (no `venue.base_url`): accounts are resolved by the venue's `userRole`. */
export type ProvisionVenue = Pick<VenuePort, 'getAccount' | 'approve'> & Partial<Pick<VenuePort, 'infoUserRole' | 'hasService'>>;

export interface Provisioned {
  accountType: 'main' | 'subaccount';
  /** The main account whose master approves agents (the address itself for a main account). */
  masterAddress: string;
  /** Set for a subaccount: L1 actions carry it as `vaultAddress`. */
  vaultAddress?: string;
  agent: Signer;
  /** Venue time when the approval lapses; undefined for a configured (externally managed) agent. */
  agentValidUntilMs?: number;
  /** What happened: reused a stored agent, approved a new one, or took the configured key. */
  source: 'configured' | 'stored' | 'approved';
  builderFeeApproved: boolean;
  /** Problems that did not stop provisioning (e.g. the agent could not be saved). */
  warnings: string[];
  /** Set when the generated agent could not be saved: the StateWriteError reason. */
  stateWriteFailure?: string;
  /** The stored agent's file was unreadable (corrupt): named here; a new agent was approved instead. */
  stateUnreadable?: string;
}

export class ProvisionError extends Error {
  readonly code = 'PROVISION_FAILED' as const;
  constructor(
    readonly account: string,
    readonly reason: 'resolve' | 'no_master_key' | 'bad_key' | 'approve_agent' | 'approve_builder_fee' | 'state' | 'agent_name_collision',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${account}: ${message}`, options);
    this.name = 'ProvisionError';
  }
}

export interface ProvisionDeps {
  venue: ProvisionVenue;
  network: Network;
  /** The network field's name in approvals (`venue.chain_field`); absent: the venue's own. */
  chainField?: ChainField | undefined;
  /** Venue time. */
  clock: Clock;
  nonces: NonceSource;
  store: AgentStore;
  generateKey?: () => `0x${string}`;
  /** The secp256k1 implementation signers use (signing/curve.ts); absent: viem's. */
  curve?: SigningCurve;
  /** `watch.source: service_then_venue`: resolve by the venue's userRole while the service fails. */
  resolveFallbackToVenue?: boolean;
  /** Re-approve when less than this share of the validity is left (default 0.2). */
  renewFraction?: number;
}

/** The `agentName` field: the name, plus the expiry suffix the venue understands. */
export function agentNameWithExpiry(name: string, validUntilMs: number): string {
  return `${name} valid_until ${validUntilMs}`;
}

/** When a stored or fresh approval should be renewed (venue time). */
export function renewAtMs(approvedAtMs: number, validUntilMs: number, renewFraction = 0.2): number {
  return validUntilMs - Math.max(60_000, (validUntilMs - approvedAtMs) * renewFraction);
}

/**
 * Resolves an account: the service's `GET /v1/accounts/{address}`, or with no service the venue's
 * `userRole`. `fallbackToVenue` (`watch.source: service_then_venue`): `userRole` also when the
 * service fails (no answer, a 5xx, a 429); a 4xx other than 429 is the service's answer and stands.
 */
export async function resolveAccount(
  venue: ProvisionVenue,
  name: string,
  address: string,
  opts: { fallbackToVenue?: boolean } = {},
): Promise<Pick<Provisioned, 'accountType' | 'masterAddress' | 'vaultAddress'>> {
  if (venue.hasService === false && venue.infoUserRole) return resolveByRole(venue.infoUserRole.bind(venue), name, address);
  let acct: Account;
  try {
    acct = await venue.getAccount(address);
  } catch (e) {
    if (opts.fallbackToVenue && venue.infoUserRole && serviceFailed(e)) return resolveByRole(venue.infoUserRole.bind(venue), name, address);
    throw new ProvisionError(name, 'resolve', `cannot resolve ${address}: ${(e as Error).message}`, { cause: e });
  }
  if (acct.account_type === 'subaccount') {
    const parent = acct.parent?.address?.toLowerCase();
    if (!parent || !ADDRESS_RE.test(parent)) throw new ProvisionError(name, 'resolve', `${address} is a subaccount but the venue names no parent address`);
    return { accountType: 'subaccount', masterAddress: parent, vaultAddress: address.toLowerCase() };
  }
  // Never "main" by default: arming a subaccount without its vault address would arm the wrong account.
  if (acct.account_type !== 'main') throw new ProvisionError(name, 'resolve', `the venue did not say whether ${address} is a main account or a subaccount`);
  return { accountType: 'main', masterAddress: address.toLowerCase() };
}

/** The service did not answer (a transport error, a 5xx, a 429): not an answer about the account. */
function serviceFailed(e: unknown): boolean {
  const err = e as { httpStatus?: unknown; reason?: unknown; name?: unknown } | null;
  if (err?.reason === 'shed' || err?.name === 'AbortError') return false;
  const status = typeof err?.httpStatus === 'number' ? err.httpStatus : undefined;
  return status === undefined || status >= 500 || status === 429;
}

/**
 * With no service: the venue's `userRole` (weight 60, once per account). `user` is a main
 * account; `subAccount` is armed through its vault address and signed for its master
 * (`data.master`, checked by the decoder). Every other role (`missing`, `agent`, `vault`, one we do
 * not know) fails closed: arming an address as a main account on a guess could arm the wrong one.
 */
async function resolveByRole(userRole: NonNullable<ProvisionVenue['infoUserRole']>, name: string, address: string): Promise<Pick<Provisioned, 'accountType' | 'masterAddress' | 'vaultAddress'>> {
  let r: Awaited<ReturnType<typeof userRole>>;
  try {
    r = await userRole(address);
  } catch (e) {
    throw new ProvisionError(name, 'resolve', `cannot resolve ${address} (userRole): ${(e as Error).message}`, { cause: e });
  }
  if (r.role === 'user') return { accountType: 'main', masterAddress: address.toLowerCase() };
  if (r.role === 'subAccount' && r.master && ADDRESS_RE.test(r.master.toLowerCase())) {
    return { accountType: 'subaccount', masterAddress: r.master.toLowerCase(), vaultAddress: address.toLowerCase() };
  }
  throw new ProvisionError(name, 'resolve', `the venue's role for ${address} is ${r.roleText.slice(0, 40)}: neither a user (main account) nor a subaccount with its master`);
}

/**
 * A master key whose address is the account's own proves a main account: a subaccount has no key
 * of its own. Then no resolve is sent, and the cold start spends the window on approvals and arms
 * only (one request in three saved when every account is new). Anything else (another address: a
 * subaccount or a wrong key; no master key) is asked of the venue.
 */
async function whereFromKey(spec: ProvisionSpec, curve: SigningCurve | undefined): Promise<Pick<Provisioned, 'accountType' | 'masterAddress'> | undefined> {
  if (!spec.masterKey || spec.agentKey) return undefined;
  let master: Signer | undefined;
  try {
    master = await loadSigner(spec.name, 'master key', spec.masterKey, curve);
  } catch {
    return undefined; // the venue's answer first; the key's problem is reported where it is used
  }
  const address = master.address;
  master = undefined;
  return address === spec.address.toLowerCase() ? { accountType: 'main', masterAddress: address } : undefined;
}

async function loadSigner(name: string, what: string, loader: KeyLoader, curve: SigningCurve | undefined): Promise<Signer> {
  let text: string;
  try {
    text = (await loader()).trim();
  } catch (e) {
    throw new ProvisionError(name, 'bad_key', `cannot read the ${what}: ${(e as Error).message}`);
  }
  try {
    return signerFromPrivateKey(text, what, curve);
  } catch {
    throw new ProvisionError(name, 'bad_key', `the ${what} is not a private key`);
  }
}

/**
 * Provisions one account. `force` approves a new agent even when a stored one looks valid (the
 * venue said the signer does not exist: the agent was pruned or replaced elsewhere).
 */
export async function provisionAccount(
  spec: ProvisionSpec,
  deps: ProvisionDeps,
  opts: { force?: boolean; beforeApprove?: (masterAddress: string) => void } = {},
): Promise<Provisioned> {
  const where: Pick<Provisioned, 'accountType' | 'masterAddress' | 'vaultAddress'> = (await whereFromKey(spec, deps.curve)) ?? (await resolveAccount(deps.venue, spec.name, spec.address, { fallbackToVenue: deps.resolveFallbackToVenue ?? false }));
  opts.beforeApprove?.(where.masterAddress);
  const now = deps.clock.nowMs();

  let agent: Signer;
  let validUntil: number | undefined;
  let source: Provisioned['source'];
  const warnings: string[] = [];
  let stateWriteFailure: string | undefined;
  let stateUnreadable: string | undefined;

  if (spec.agentKey) {
    agent = await loadSigner(spec.name, 'agent key', spec.agentKey, deps.curve);
    source = 'configured';
  } else {
    const checked = opts.force ? {} : await deps.store.loadChecked(spec.name, spec.agentName).catch(() => ({}) as { agent?: undefined; problem?: undefined });
    const stored = checked.agent;
    if (checked.problem) stateUnreadable = checked.problem;
    if (stored && stored.masterAddress === where.masterAddress && now < renewAtMs(stored.approvedAtMs, stored.validUntilMs, deps.renewFraction)) {
      agent = signerFromPrivateKey(stored.privateKey, 'stored agent key', deps.curve);
      validUntil = stored.validUntilMs;
      source = 'stored';
    } else {
      if (!spec.masterKey) {
        throw new ProvisionError(spec.name, 'no_master_key', 'no agent key is configured and no master key is available to approve one');
      }
      const approved = await approveNewAgent(spec, where.masterAddress, deps);
      if (approved.saveProblem) warnings.push(approved.saveProblem);
      stateWriteFailure = approved.saveReason;
      agent = approved.agent;
      validUntil = approved.validUntilMs;
      source = 'approved';
    }
  }

  let builderFeeApproved = false;
  if (spec.builderFee && spec.masterKey && source !== 'stored') {
    await withMaster(spec, where.masterAddress, deps.curve, async (master) => {
      const nonce = deps.nonces.next(master.address);
      const body = await buildApproveBuilderFee({ signer: master, network: deps.network, ...chainFieldOf(deps), nonce, builder: spec.builderFee!.builder, maxFeeRate: spec.builderFee!.maxFeeRate });
      try {
        await deps.venue.approve(body, { signer: master.address });
      } catch (e) {
        throw new ProvisionError(spec.name, 'approve_builder_fee', `approveBuilderFee refused: ${(e as Error).message}`, { cause: e });
      }
    });
    builderFeeApproved = true;
  }

  // Named one by one, not spread from `where`: V8 gave a literal that opens with a spread of an
  // object made elsewhere a map of its own per call (one account in ten shared one), and the
  // accounts' provisioned records held 38,000 maps at 10,000 accounts (heap snapshot, 2026-12-07).
  return {
    accountType: where.accountType,
    masterAddress: where.masterAddress,
    ...(where.vaultAddress !== undefined ? { vaultAddress: where.vaultAddress } : {}),
    agent,
    agentValidUntilMs: validUntil,
    source,
    builderFeeApproved,
    warnings,
    stateWriteFailure,
    ...(stateUnreadable ? { stateUnreadable } : {}),
  };
}

async function withMaster<T>(spec: ProvisionSpec, masterAddress: string, curve: SigningCurve | undefined, fn: (master: Signer) => Promise<T>): Promise<T> {
  let master: Signer | undefined = await loadSigner(spec.name, 'master key', spec.masterKey!, curve);
  try {
    if (master.address !== masterAddress) {
      throw new ProvisionError(spec.name, 'bad_key', `the master key belongs to ${master.address}, but ${spec.address} is controlled by ${masterAddress}`);
    }
    return await fn(master);
  } finally {
    // Drop our only reference; the key's closure becomes garbage once the signature is sent.
    master = undefined;
  }
}

async function approveNewAgent(
  spec: ProvisionSpec,
  masterAddress: string,
  deps: ProvisionDeps,
): Promise<{ agent: Signer; validUntilMs: number; saveProblem?: string; saveReason?: string }> {
  const key = (deps.generateKey ?? generatePrivateKey)();
  const agent = signerFromPrivateKey(key, 'generated agent key', deps.curve);
  // Whole ms: the venue's "<name> valid_until <ms>" takes digits only, and a venue-time estimate
  // (local clock plus a measured offset) is fractional.
  const approvedAtMs = Math.floor(deps.clock.nowMs());
  const validUntilMs = approvedAtMs + Math.min(spec.validDays, VENUE_FACTS.agentValidMaxDays) * DAY_MS;

  await withMaster(spec, masterAddress, deps.curve, async (master) => {
    // A replacement leaves the venue answering "pending agent removal" for ~5 s: wait it out.
    for (let attempt = 1; ; attempt++) {
      const nonce = deps.nonces.next(master.address);
      const body = await buildApproveAgent({
        signer: master,
        network: deps.network,
        ...chainFieldOf(deps),
        nonce,
        agentAddress: agent.address,
        agentName: agentNameWithExpiry(spec.agentName, validUntilMs),
      });
      try {
        await deps.venue.approve(body, { signer: master.address });
        return;
      } catch (e) {
        if (e instanceof ActionError && e.reason === 'pending_agent_removal' && attempt < 4) {
          await sleep(deps.clock, VENUE_FACTS.pendingAgentRemovalMs + 500);
          continue;
        }
        throw new ProvisionError(spec.name, 'approve_agent', `approveAgent refused: ${(e as Error).message}`, { cause: e });
      }
    }
  });

  const stored: StoredAgent = {
    account: spec.name,
    agentName: spec.agentName,
    masterAddress,
    agentAddress: agent.address,
    privateKey: key,
    approvedAtMs,
    validUntilMs,
  };
  try {
    await deps.store.save(stored);
  } catch (e) {
    // The agent works; only a restart will have to approve another (same name: a rotation, so
    // no slot is lost).
    const saveReason = e instanceof StateWriteError ? e.reason : 'io';
    return { agent, validUntilMs, saveProblem: `agent approved but not saved, a restart will approve another: ${(e as Error).message}`, saveReason };
  }
  return { agent, validUntilMs };
}

/** The builders' `chainField` argument, present only when configured (exactOptionalPropertyTypes). */
function chainFieldOf(deps: Pick<ProvisionDeps, 'chainField'>): { chainField?: ChainField } {
  return deps.chainField !== undefined ? { chainField: deps.chainField } : {};
}
