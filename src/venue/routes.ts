import { ActionError, refusesRequest, RestError } from './errors.js';

/**
 * Which way an arm or a clear reaches the venue, and REST's health, which decides it while REST
 * fails (docs/DESIGN.md section 7, "Routes"). In venue/, the lowest folder that needs the route:
 * the port sends by it; the plan, the switch and the metrics name it.
 */

/** The service's `POST /v1/trading/orders/schedule-cancel`, or the venue's exchange endpoint. */
export const ARM_ROUTES = ['rest', 'exchange'] as const;
export type ArmRoute = (typeof ARM_ROUTES)[number];

/** Where a `rest_then_exchange` arm may go instead. */
export function otherRoute(route: ArmRoute): ArmRoute {
  return route === 'rest' ? 'exchange' : 'rest';
}

/**
 * A `rest_then_exchange` request's other route, and the venue time it must leave its planned route
 * by: the port sends it the other way instead when the planned route is held by a 429, failing, or
 * would keep it queued past then. Built once, by the switch (switch/switch-machine.ts), and passed
 * down as it is. Venue time, because that is the clock it is decided on: the switch is pure and
 * plans in venue time, and the leave-by follows from the account's deadline, a venue time
 * (plan/horizon.ts leaveByAtMs). The port, whose timers and budget estimates run on the monotonic
 * clock, places it there once, with leaveByMonoMs.
 */
export interface RouteChoice {
  route: ArmRoute;
  leaveByVenueMs: number;
}

/** Venue time as an account read it (its own floor included, AccountRunner.venueNowMs) and the monotonic instant of that reading. */
export interface VenueReading {
  venueMs: number;
  monoMs: number;
}

/**
 * The one place a route choice's leave-by moves from venue to monotonic time: by the account's own
 * reading taken as it queued the request, not the shared estimate read later, so a correction of the
 * estimate in between moves neither.
 */
export function leaveByMonoMs(choice: RouteChoice, queuedAt: VenueReading): number {
  return queuedAt.monoMs + (choice.leaveByVenueMs - queuedAt.venueMs);
}

/**
 * How often one request of the whole keeper probes a failing route; every other goes the other way
 * at once. When each account probed REST on its own clock, a service outage cost 204 failed REST
 * arms in 5 minutes at 20 accounts (bench:venue), each spending the global budget and writing a
 * warning, with nothing learned that the first had not.
 */
export const REST_PROBE_EVERY_MS = 10_000;

/**
 * Whether a REST failure says the route fails (the service down or unreachable): not a 429 (the
 * scheduler holds the route its retry_after), not a request the venue refused, not one we cancelled
 * or shed.
 */
export function restRouteFailed(e: unknown, aborted: boolean): boolean {
  if (aborted) return false;
  if (e instanceof ActionError) return false;
  if (e instanceof RestError) return e.httpStatus !== 429 && !refusesRequest(e.httpStatus);
  const err = e as { name?: unknown; reason?: unknown } | null;
  return err?.name !== 'AbortError' && err?.name !== 'RouteWithdrawn' && err?.reason !== 'shed' && err?.reason !== 'aborted';
}

/** A route's health over every request the port sends on it, kept once for the whole keeper (monotonic ms). */
export class RouteHealth {
  private failedMono = 0;
  private okMono = 0;
  private probeMono = 0;

  ok(nowMono: number): void {
    this.okMono = Math.max(this.okMono, nowMono);
  }

  failed(nowMono: number): void {
    this.failedMono = Math.max(this.failedMono, nowMono);
  }

  /** Runs one request on the route and records its outcome at the time it ended, not began. */
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

  failing(): boolean {
    return this.failedMono > this.okMono;
  }

  /** Whether a request may take the route now: it works, or this request is the probe that is due. */
  take(nowMono: number): boolean {
    if (!this.failing()) return true;
    if (nowMono < Math.max(this.failedMono, this.probeMono) + REST_PROBE_EVERY_MS) return false;
    this.probeMono = nowMono;
    return true;
  }
}
