import { ActionError, refusesRequest, RestError } from './errors.js';

/**
 * The two ways an arm or a clear reaches the venue: the service's REST trading endpoint
 * (`POST /v1/trading/orders/schedule-cancel`) or the venue's exchange endpoint. Declared here, the
 * lowest folder that needs it (the port sends by it); the plan, the switch and the metrics name it.
 */
export const ARM_ROUTES = ['rest', 'exchange'] as const;
export type ArmRoute = (typeof ARM_ROUTES)[number];

/** The route that is not `route`: where a `rest_then_exchange` arm may go instead. */
export function otherRoute(route: ArmRoute): ArmRoute {
  return route === 'rest' ? 'exchange' : 'rest';
}

/**
 * REST's health for the whole keeper, kept once: the port's, which sees every account's arms.
 *
 * Each account kept its own once (a stay on the exchange endpoint after its REST arm failed, then
 * a try of REST on its own clock): during a service outage that was one failed REST arm per
 * account every 30 s at most, 185 in 5 minutes at 20 accounts (bench:venue), each spending the
 * global budget and writing a warning, with nothing learned that the first had not. Here, once a
 * REST arm failed and none succeeded since, an arm meant for REST takes it only as the probe, one
 * every REST_PROBE_EVERY_MS; every other goes by its alternative at once (the retry of the arm
 * that failed among them). A probe that gets through reopens the route for all.
 *
 * The service's listings are probed the same way for `watch.source: service_then_venue` (port.ts
 * serviceReadTurn): while they fail, one read every REST_PROBE_EVERY_MS asks the service first and
 * every other goes to the venue at once, instead of each read spending a failed request on the
 * service before its fallback.
 */
export const REST_PROBE_EVERY_MS = 10_000;

/**
 * Whether a REST arm's failure says the route fails (the service is down or unreachable): not a
 * 429 (the scheduler holds the route its retry_after), not a request the venue refused (400, 404,
 * 405, an action error), not one we cancelled. The switch retries such an arm at once, trusting
 * the port to send the retry the other way (switch-machine.ts planRetry).
 */
export function restRouteFailed(e: unknown, aborted: boolean): boolean {
  if (aborted) return false;
  if (e instanceof ActionError) return false;
  if (e instanceof RestError) return e.httpStatus !== 429 && !refusesRequest(e.httpStatus);
  const err = e as { name?: unknown; reason?: unknown } | null;
  return err?.name !== 'AbortError' && err?.name !== 'RouteWithdrawn' && err?.reason !== 'shed' && err?.reason !== 'aborted';
}

/** A route's health as the port sees every arm on it (monotonic ms). */
export class RouteProbe {
  private failedMono = 0;
  private okMono = 0;
  private probeMono = 0;

  constructor(private readonly everyMs = REST_PROBE_EVERY_MS) {}

  ok(nowMono: number): void {
    this.okMono = Math.max(this.okMono, nowMono);
  }

  failed(nowMono: number): void {
    this.failedMono = Math.max(this.failedMono, nowMono);
  }

  /**
   * Runs one request on the route and records how it went: a success, or a failure that says the
   * route fails (restRouteFailed), each at the monotonic time it ended.
   */
  async track<T>(work: () => Promise<T>, nowMono: () => number, signal: AbortSignal | undefined): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (e) {
      if (restRouteFailed(e, signal?.aborted === true)) this.failed(nowMono());
      throw e;
    }
    this.ok(nowMono());
    return result;
  }

  /** A failure came after the last success. */
  failing(): boolean {
    return this.failedMono > this.okMono;
  }

  /**
   * Whether an arm may take the route now: it works, or a probe is due (then this arm is the probe,
   * and the next is due REST_PROBE_EVERY_MS after it or after a later failure).
   */
  take(nowMono: number): boolean {
    if (!this.failing()) return true;
    if (nowMono < Math.max(this.failedMono, this.probeMono) + this.everyMs) return false;
    this.probeMono = nowMono;
    return true;
  }
}
