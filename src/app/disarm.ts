import { resolveAccount, type ProvisionVenue } from '../account/provision.js';
import type { KeeperAccountSpec } from '../keeper/keeper.js';
import { NonceSource } from '../venue/signing/nonce.js';
import { signerFromPrivateKey, type Signer } from '../venue/signing/signer.js';
import type { SigningCurve } from '../venue/signing/curve.js';
import { buildScheduleCancel } from '../venue/actions.js';
import type { AgentStore } from '../state/agent-store.js';
import type { Clock } from '../time/clock.js';
import type { Network } from '../venue/types.js';
import type { VenuePort } from '../venue/port.js';
import type { ArmRoute } from '../venue/routes.js';

/**
 * `dms-keeper disarm`: clears the scheduled cancel of one or every account (planned maintenance).
 * Signs with the account's configured agent, else the agent the keeper stored, else the master key
 * (the master may sign L1 actions too): it never approves a new agent just to disarm.
 */
export type DisarmVenue = ProvisionVenue & Pick<VenuePort, 'scheduleCancel'>;

export interface DisarmResult {
  account: string;
  address: string;
  /** `no_clear`: an account on a heartbeat venue (a CLOB's): there is nothing to clear, see `message`. */
  result: 'cleared' | 'failed' | 'no_clear';
  signer?: 'agent' | 'stored_agent' | 'master';
  route?: ArmRoute;
  message?: string;
}

async function pickSigner(spec: KeeperAccountSpec, masterAddress: string, store: AgentStore, curve: SigningCurve | undefined): Promise<{ signer: Signer; kind: DisarmResult['signer'] }> {
  if (spec.agentKey) return { signer: signerFromPrivateKey((await spec.agentKey()).trim(), 'agent key', curve), kind: 'agent' };
  const stored = await store.load(spec.name, spec.agentName).catch(() => undefined);
  if (stored && stored.masterAddress === masterAddress) return { signer: signerFromPrivateKey(stored.privateKey, 'stored agent key', curve), kind: 'stored_agent' };
  if (spec.masterKey) return { signer: signerFromPrivateKey((await spec.masterKey()).trim(), 'master key', curve), kind: 'master' };
  throw new Error('no key can sign for this account (no agent key, no stored agent, no master key)');
}

export async function disarmAccounts(args: {
  accounts: KeeperAccountSpec[];
  only?: string;
  network: Network;
  venue: DisarmVenue;
  store: AgentStore;
  clock: Clock;
  /** The secp256k1 implementation to sign with (venue/signing/curve.ts); absent: viem's. */
  curve?: SigningCurve;
}): Promise<DisarmResult[]> {
  const targets = args.only === undefined ? args.accounts : args.accounts.filter((a) => a.name === args.only);
  if (args.only !== undefined && targets.length === 0) throw new Error(`no account named '${args.only}' in the config`);
  const nonces = new NonceSource(args.clock);
  const results: DisarmResult[] = [];
  for (const spec of targets) {
    if (spec.clob) {
      // Nothing is scheduled to clear: the venue cancels every order one timeout after the last heartbeat.
      results.push({ account: spec.name, address: spec.address, result: 'no_clear', message: `on ${spec.clob.venue}, a heartbeat venue: nothing to clear; its orders are cancelled 10 s after the last heartbeat of any keeper (docs/polymarket.md)` });
      continue;
    }
    try {
      const where = await resolveAccount(args.venue, spec.name, spec.address);
      const { signer, kind } = await pickSigner(spec, where.masterAddress, args.store, args.curve);
      // A clear: no time. Signed when the port lets it leave, with a fresh nonce each time.
      const clear = () => buildScheduleCancel({ signer, network: args.network, nonce: nonces.next(signer.address), vaultAddress: where.vaultAddress });
      const opts = { signer: signer.address };
      const route: ArmRoute = spec.switch.path === 'exchange' ? 'exchange' : 'rest';
      try {
        await args.venue.scheduleCancel(route, clear, opts);
        results.push({ account: spec.name, address: spec.address, result: 'cleared', signer: kind, route });
      } catch (e) {
        if (spec.switch.path !== 'rest_then_exchange') throw e;
        await args.venue.scheduleCancel('exchange', clear, opts);
        results.push({ account: spec.name, address: spec.address, result: 'cleared', signer: kind, route: 'exchange' });
      }
    } catch (e) {
      results.push({ account: spec.name, address: spec.address, result: 'failed', message: (e as Error).message });
    }
  }
  return results;
}
