import type { ScheduleCancelSender } from '../switch/account-runner.js';
import type { ClobOpenOrder, ClobSession, ClobVenuePort } from '../venue/polymarket/port.js';
import { ClobError } from '../venue/polymarket/errors.js';
import { HEARTBEAT_ENDPOINT } from '../venue/polymarket/heartbeat.js';
import type { OpenOrder, OrdersPage, PositionsPage } from '../venue/types.js';
import type { WatchSource } from './watcher.js';
import type { KeeperAccountSpec } from './keeper-types.js';
import { DEFAULT_VENUE_NAME } from '../venue/switch-facts.js';

/**
 * An account on a CLOB venue (docs/polymarket.md), as the account object (account.ts) assembles
 * it: no agent to approve, so "provisioning" is reading its L2 credentials and opening its
 * session; the switch's sender is a heartbeat; the watcher reads the CLOB's open orders.
 */

/** An account's venue's name: its CLOB venue's, else the default venue's (`hyperliquid`). */
export function venueNameOf(spec: Pick<KeeperAccountSpec, 'clob'>): string {
  return spec.clob?.venue ?? DEFAULT_VENUE_NAME;
}

/** Its session: the credentials read now (they are not kept anywhere else), the chain with it. */
export async function openClobSession(spec: KeeperAccountSpec, venues: ReadonlyMap<string, ClobVenuePort> | undefined): Promise<ClobSession> {
  const clob = spec.clob!;
  const port = venues?.get(clob.venue);
  if (!port) throw new ClobError('session', 'refused', `venue ${clob.venue} is not configured in this keeper`);
  const [key, secret, passphrase] = await Promise.all([clob.credentials.key(), clob.credentials.secret(), clob.credentials.passphrase()]);
  return port.session(spec.address, { key, secret, passphrase });
}

/**
 * The switch's sender on a heartbeat venue. An arm is a heartbeat: the deadline the runner stamps
 * as it leaves (`timeMs()`: now + the venue's timeout) is what the venue will do by itself, so it
 * is read and not sent. The route is meaningless here. There is no clear: a heartbeat switch is
 * only ever let lapse (src/config/venues.ts gives these accounts `on_shutdown: keep`), so a clear is
 * refused as sent rather than pretended.
 */
export function makeHeartbeatSender(session: ClobSession, onOtherWriter: () => void): ScheduleCancelSender {
  return {
    send: async ({ timeMs, cls, signal, onAdmitted }) => {
      const outcome = await session.beat({
        ...(cls ? { cls } : {}),
        ...(signal ? { signal } : {}),
        ...(onAdmitted ? { onAdmitted } : {}),
        onLeave: () => {
          if (timeMs() === undefined) throw new ClobError(HEARTBEAT_ENDPOINT, 'refused', 'a heartbeat switch has no clear: the venue cancels the orders one timeout after the last heartbeat');
        },
      });
      if (outcome === 'recovered') onOtherWriter();
    },
  };
}

/** How often a lone keeper says that someone else is beating its account's chain (ms): once a minute, not once a beat. */
export const OTHER_WRITER_WARN_EVERY_MS = 60_000;

/**
 * Whether a chain that moved on without this keeper is worth a warning: not when other instances
 * heartbeat the account too (replicas meet each other's ids by design, docs/DESIGN.md), and not
 * again within a minute of the last warning. Otherwise the writer is the bot or another tool, which
 * must stop heartbeating (docs/polymarket.md): two writers on one chain waste requests and a bot
 * that keeps beating keeps its orders alive after the keeper stops.
 */
export function warnOtherWriter(coveredBy: readonly string[] | undefined, lastWarnedMs: number | undefined, nowMs: number): boolean {
  if ((coveredBy?.length ?? 0) > 1) return false;
  return lastWarnedMs === undefined || nowMs - lastWarnedMs >= OTHER_WRITER_WARN_EVERY_MS;
}

/** A CLOB order in the shape the watcher keeps (the count is what the keeper acts on). */
function toOpenOrder(o: ClobOpenOrder): OpenOrder {
  return {
    venue_order_id: o.id,
    ...(o.side != null ? { side: o.side.toUpperCase() === 'BUY' ? 0 : 1 } : {}),
    ...(o.price != null ? { price: o.price } : {}),
    status: 'open' as const,
  };
}

/** The watcher's source on a CLOB venue: open orders from the CLOB; positions are not the CLOB's to publish (the watcher reads none). */
export function clobWatchSource(session: ClobSession): WatchSource {
  const unsupported = (): never => {
    throw new ClobError('info', 'refused', 'the CLOB has no info endpoint');
  };
  return {
    async *ordersPages(_address: string, opts?: { signal?: AbortSignal }): AsyncGenerator<OrdersPage> {
      const orders = await session.openOrders(opts?.signal ? { signal: opts.signal } : {});
      yield { data: orders.map(toOpenOrder) };
    },
    // eslint-disable-next-line require-yield
    async *positionsPages(): AsyncGenerator<PositionsPage> {
      unsupported();
    },
    infoOpenOrders: async () => unsupported(),
    infoPositions: async () => unsupported(),
  };
}
