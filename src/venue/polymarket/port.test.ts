import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../time/fake-clock.js';
import { RequestScheduler } from '../../budget/scheduler.js';
import type { HeartbeatResult, OpenOrdersResult } from './clob.js';
import { ClobError } from './errors.js';
import { clobScope, ClobVenuePort, type ClobClientLike } from './port.js';

/** A client that answers each heartbeat from a script, and records the ids it was sent. */
function scripted(answers: HeartbeatResult[]): ClobClientLike & { sent: Array<string | null> } {
  const sent: Array<string | null> = [];
  return {
    sent,
    heartbeat: async (prevId) => {
      sent.push(prevId);
      const a = answers.shift();
      if (!a) throw new Error('no scripted answer left');
      return a;
    },
    openOrders: async (): Promise<OpenOrdersResult> => ({ orders: [{ id: 'o1' }], pages: 1, skippedWithoutId: 0, cursorMissing: false }),
  };
}

function setup(answers: HeartbeatResult[]) {
  const clock = new FakeClock(0);
  const scheduler = new RequestScheduler(clock, { [clobScope('pm')]: { limit: 100, windowMs: 10_000 } });
  const client = scripted(answers);
  const port = new ClobVenuePort({ name: 'pm', scheduler, clock, client: () => client });
  const session = port.session('0x00000000000000000000000000000000000000a1', { key: 'k', secret: 's', passphrase: 'p' });
  return { clock, scheduler, client, session };
}

/** Runs `p` to its end, moving virtual time on (the budget spaces requests on its grid). */
async function settle<T>(clock: FakeClock, p: Promise<T>): Promise<T | unknown> {
  let done = false;
  const out = p.then(
    (v) => ((done = true), v),
    (e: unknown) => ((done = true), e),
  );
  for (let i = 0; i < 1_000 && !done; i++) await clock.advance(100);
  return out;
}

const ok = (id?: string): HeartbeatResult => ({ kind: 'accepted', httpStatus: 200, heartbeatId: id });
const stale = (current?: string): HeartbeatResult => ({ kind: 'stale', httpStatus: 400, currentId: current, venueMessage: 'Invalid Heartbeat ID' });

describe('ClobSession: the heartbeat chain', () => {
  it('starts the chain with null and sends each beat the id the last one returned', async () => {
    const { session, client, clock } = setup([ok('h1'), ok('h2'), ok('h3')]);
    for (let i = 0; i < 3; i++) expect(await settle(clock, session.beat({}))).toBe('accepted');
    expect(client.sent).toEqual([null, 'h1', 'h2']);
    expect(session.currentChainId()).toBe('h3');
  });

  it('a stale id is replaced by the one the 400 names and sent again at once: two requests, not a loop', async () => {
    const { session, client, clock } = setup([ok('h1'), stale('theirs-7'), ok('h8')]);
    expect(await settle(clock, session.beat({}))).toBe('accepted');
    expect(await settle(clock, session.beat({}))).toBe('recovered');
    expect(client.sent).toEqual([null, 'h1', 'theirs-7']);
    expect(session.currentChainId()).toBe('h8');
  });

  it('stale twice in a row: another writer beats as fast as we do; fails as `stale` with the newest id kept, never a third request', async () => {
    const { session, client, clock } = setup([stale('a'), stale('b')]);
    const e = await settle(clock, session.beat({}));
    expect(e).toBeInstanceOf(ClobError);
    expect((e as ClobError).reason).toBe('stale');
    expect(client.sent).toEqual([null, 'a']);
    expect(session.currentChainId()).toBe('b');
  });

  it('an accepted answer without an id (the API reference shows {"status":"ok"}) restarts from null; a 400 without an id does too', async () => {
    const { session, client, clock } = setup([ok(undefined), stale(undefined), ok('h2')]);
    await settle(clock, session.beat({}));
    expect(await settle(clock, session.beat({}))).toBe('recovered');
    expect(client.sent).toEqual([null, null, null]);
    expect(session.currentChainId()).toBe('h2');
  });

  it('a 429 holds the venue scope for its Retry-After and fails as rate_limited; a 401 fails as unauthorized', async () => {
    const { session, scheduler, clock } = setup([{ kind: 'rate_limited', httpStatus: 429, retryAfterMs: 3_000 } as HeartbeatResult, { kind: 'unauthorized', httpStatus: 401 } as HeartbeatResult]);
    const e = (await session.beat({}).catch((x: unknown) => x)) as ClobError;
    expect(e.reason).toBe('rate_limited');
    const heldAt = clock.monoMs();
    expect(scheduler.blockedUntil(clobScope('pm'))).toBe(heldAt + 3_000);
    let answeredAt = 0;
    const beat = session.beat({}).catch((x: unknown) => ((answeredAt = clock.monoMs()), x));
    await clock.advance(3_100);
    expect(((await beat) as ClobError).reason).toBe('unauthorized');
    expect(answeredAt).toBeGreaterThanOrEqual(heldAt + 3_000);
  });

  it('reads go through the same scope and return the orders', async () => {
    const { session } = setup([]);
    expect(await session.openOrders()).toEqual([{ id: 'o1' }]);
  });
});
