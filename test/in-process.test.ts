/**
 * The simulator in process is the simulator over loopback, minus the sockets: the keeper's
 * `HttpTransport` gets the same answer, or the same typed error, for every kind of fault through
 * either carrier (src/sim/in-process.ts, src/sim/server.ts share src/sim/http-handler.ts); and the
 * notification client works over the in-process WebSocket pairs as over `ws`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { systemClock } from '../src/time/clock.js';
import { FakeClock } from '../src/time/fake-clock.js';
import type { RequestFaultSpec } from '../src/sim/faults.js';
import { startSimulator, type Simulator } from '../src/sim/simulator.js';
import { demoAccountSeeds } from '../src/sim/venue/demo.js';
import { HttpTransport, type HttpRequest } from '../src/venue/http.js';
import { NotificationClient, type NotificationClientEvent } from '../src/venue/ws.js';

const sims: Simulator[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.destroy()));
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

/** What the keeper sees of one request: the answer, or the error's class, reason and message. */
async function outcome(t: HttpTransport, req: HttpRequest): Promise<Record<string, unknown>> {
  try {
    const r = await t.request(req);
    return {
      status: r.status,
      body: r.body.toString('utf8'),
      contentType: r.headers['content-type'],
      retryAfter: r.headers['retry-after'],
      dated: typeof r.dateHeader === 'string',
    };
  } catch (e) {
    const err = e as Error & { reason?: string; code?: string };
    return { error: err.constructor.name, code: err.code, reason: err.reason, message: err.message };
  }
}

/**
 * One request through each carrier, the fault armed for it. The venue clock stands still (answers
 * carry their `as_of`) unless the fault is a latency, which needs it to run.
 */
async function both(fault: RequestFaultSpec | undefined, req: (baseUrl: string) => HttpRequest, timeoutMs = 2_000) {
  const sim = await startSimulator({ clock: fault?.kind === 'latency' ? systemClock() : new FakeClock() });
  sims.push(sim);
  const agent = new Agent();
  agents.push(agent);
  const overSocket = new HttpTransport({ dispatcher: agent, requestTimeoutMs: timeoutMs });
  const inProcess = new HttpTransport({ dispatcher: sim.inProcess.dispatcher, requestTimeoutMs: timeoutMs });
  const run = async (t: HttpTransport, base: string) => {
    if (fault) sim.faults.add({ ...fault, count: 1 });
    return outcome(t, req(base));
  };
  const socket = await run(overSocket, sim.baseUrl);
  const direct = await run(inProcess, 'http://sim.in-process');
  return { socket, direct };
}

const health = (base: string): HttpRequest => ({ endpoint: 'GET /v1/health', method: 'GET', url: `${base}/v1/health` });
const info = (base: string): HttpRequest => ({ endpoint: 'POST /info', method: 'POST', url: `${base}/info`, json: { type: 'userRole', user: '0x' + '11'.repeat(20) } });

describe('in-process carrier: the same answers and errors as over loopback', () => {
  const cases: Array<[string, RequestFaultSpec | undefined, (base: string) => HttpRequest]> = [
    ['no fault', undefined, health],
    ['a 503 with its dependency detail', { kind: 'status', status: 503 }, health],
    ['a 429 storm with retry_after', { kind: 'status', status: 429, retryAfterSeconds: 7, scope: 'endpoint' }, health],
    ['a proxy HTML page', { kind: 'body', mode: 'html', status: 502 }, health],
    ['a truncated body', { kind: 'body', mode: 'truncated' }, health],
    ['a reset before the handler (network error)', { kind: 'reset', phase: 'before_handler' }, health],
    ['a reset mid-response (network error while reading the body)', { kind: 'reset', phase: 'mid_response' }, health],
    ['latency within the deadline', { kind: 'latency', ms: 30 }, info],
    ['the venue host: /info', undefined, info],
    ['an unknown path: 404 envelope', undefined, (base) => ({ endpoint: 'GET /v1/nope', method: 'GET', url: `${base}/v1/nope` })],
    ['a wrong method: 405', undefined, (base) => ({ endpoint: 'POST /v1/health', method: 'POST', url: `${base}/v1/health`, json: {} })],
  ];
  it.each(cases)('%s', async (_name, fault, req) => {
    const { socket, direct } = await both(fault, req);
    expect(direct).toEqual(socket);
  });

  it('latency past the deadline :: the transport times out the same way', async () => {
    const { socket, direct } = await both({ kind: 'latency', ms: 400 }, health, 100);
    expect(socket).toMatchObject({ error: 'TransportError', reason: 'timeout' });
    expect(direct).toEqual(socket);
  });

  it('the rate limiter counts in-process requests as one loopback IP', async () => {
    const sim = await startSimulator({ clock: systemClock(), rateLimits: { global: { limit: 2, windowSeconds: 60 } } });
    sims.push(sim);
    const t = new HttpTransport({ dispatcher: sim.inProcess.dispatcher, requestTimeoutMs: 2_000 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request(health('http://sim.in-process'))).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe('in-process WebSocket pairs', () => {
  it('greeting, subscription ack, a pushed notification, and a reconnect after the hub drops every connection', async () => {
    const clock = new FakeClock();
    const sim = await startSimulator({ clock, listen: false });
    sims.push(sim);
    const user = demoAccountSeeds(sim.catalog)[0]!.address;
    const events: NotificationClientEvent[] = [];
    const client = new NotificationClient({ wsUrl: sim.wsUrl, clock, onEvent: (e) => events.push(e), socketFactory: sim.inProcess.socketFactory, random: () => 0.5 });
    client.start();
    client.subscribe(user);
    await clock.advance(100);
    expect(events.map((e) => e.type)).toEqual(['connected', 'subscribed']);
    expect(sim.ws.connectionCount()).toBe(1);

    sim.ws.notify(user, 'Scheduled cancel fired');
    await clock.advance(10);
    expect(events.at(-1)).toMatchObject({ type: 'notification', text: 'Scheduled cancel fired', user: user.toLowerCase() });

    sim.ws.dropAll();
    await clock.advance(10);
    expect(events.at(-1)).toMatchObject({ type: 'disconnected', reason: 'closed' });
    await clock.advance(30_000);
    expect(events.map((e) => e.type)).toContain('reconnected');
    expect(sim.ws.connectionCount()).toBe(1);
    await client.stop();
    await clock.advance(10);
    expect(sim.ws.connectionCount()).toBe(0);
  });
});
