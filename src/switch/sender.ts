import { buildScheduleCancel } from '../venue/actions.js';
import type { NonceSource } from '../venue/signing/nonce.js';
import type { Signer } from '../venue/signing/signer.js';
import type { VenuePort } from '../venue/port.js';
import type { Network } from '../venue/types.js';
import type { ScheduleCancelSender } from './account-runner.js';

/** The venue port as a sender needs it. */
export type SenderVenue = Pick<VenuePort, 'scheduleCancel'>;

/**
 * An account's scheduleCancel sender: the port admits the request, then `timeMs()` is read and the
 * body signed by the account's agent (as the request leaves, so the deadline is fresh).
 */
export function makeSender(args: { agent: Signer; vaultAddress?: string; network: Network; nonces: NonceSource; venue: SenderVenue }): ScheduleCancelSender {
  const { agent, vaultAddress, network, nonces, venue } = args;
  return {
    send: async ({ route, timeMs, cls, signal, onAdmitted, alternative, queuedAt, onRoute }: Parameters<ScheduleCancelSender['send']>[0]) => {
      await venue.scheduleCancel(
        route,
        // The nonce is drawn in the signer's turn, so nonces leave in the order they were drawn.
        () => buildScheduleCancel({ signer: agent, network, nonce: nonces.next(agent.address), timeMs: timeMs(), vaultAddress }),
        {
          signer: agent.address,
          ...(cls ? { cls } : {}),
          ...(signal ? { signal } : {}),
          ...(onAdmitted ? { onAdmitted } : {}),
          ...(alternative ? { alternative } : {}),
          ...(queuedAt ? { queuedAt } : {}),
          ...(onRoute ? { onRoute } : {}),
        },
      );
    },
  };
}
