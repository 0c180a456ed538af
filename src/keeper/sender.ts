import { buildScheduleCancel } from '../venue/actions.js';
import type { NonceSource } from '../venue/signing/nonce.js';
import type { Signer } from '../venue/signing/signer.js';
import type { Network, ScheduleCancelAction, SignedRequest } from '../venue/types.js';
import type { ScheduleCancelSender } from './account-runner.js';
import type { ArmPath } from './switch-machine.js';

/** The two ways a scheduleCancel can reach the venue. */
export interface SenderVenue {
  scheduleCancelRest(body: SignedRequest<ScheduleCancelAction>, opts?: { signal?: AbortSignal }): Promise<unknown>;
  postExchange(body: SignedRequest<unknown>, opts?: { signal?: AbortSignal }): Promise<unknown>;
}

/**
 * One request at a time per signer: the venue accepts nonces out of order, so two requests of one
 * signer in flight together could land in the wrong order (a late arm overwriting a clear). Each
 * account normally has its own agent; this matters when a configured agent key is shared.
 */
export class SignerQueues {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(signer: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(signer) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(signer, tail);
    void tail.then(() => {
      if (this.tails.get(signer) === tail) this.tails.delete(signer);
    });
    return next;
  }
}

export function makeSender(args: {
  agent: Signer;
  vaultAddress?: string;
  network: Network;
  nonces: NonceSource;
  venue: SenderVenue;
  queues: SignerQueues;
}): ScheduleCancelSender {
  const { agent, vaultAddress, network, nonces, venue, queues } = args;
  return {
    send: ({ path, timeMs, signal }: { path: ArmPath; timeMs?: number; signal?: AbortSignal }) =>
      queues.run(agent.address, async () => {
        // The nonce is drawn inside the queue, so nonces leave in the order they were drawn.
        const nonce = nonces.next(agent.address);
        const body = await buildScheduleCancel({ signer: agent, network, nonce, timeMs, vaultAddress });
        if (path === 'rest') await venue.scheduleCancelRest(body, { signal });
        else await venue.postExchange(body, { signal });
      }),
  };
}
