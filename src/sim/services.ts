/**
 * Which of the simulator's two faces it serves: the service (REST under `/v1`) and the venue host
 * (`POST /exchange`, `POST /info`, `/ws`). Venue-only (issue 20): a keeper that needs no service can
 * be tested against a simulator where the service does not exist: every `/v1` request answers 404
 * (`restStatus: 404`, default: no such path on this host) or 503 (`restStatus: 503`: like a
 * service that refuses connections behind a proxy), before routing, faults and rate limits. The
 * admin API (`/_sim/`) keeps answering. For a service that fails for a while instead, use the fault
 * `FaultControl.restUnavailable(forMs)` (503 on `/v1` for a duration, counted like any fault).
 */

export type VenueOnlyRestStatus = 404 | 503;

export interface ServiceSettings {
  venueOnly: boolean;
  restStatus: VenueOnlyRestStatus;
}

export class ServiceSwitch {
  private settings: ServiceSettings;

  constructor(initial: Partial<ServiceSettings> = {}) {
    this.settings = ServiceSwitch.check({ venueOnly: initial.venueOnly ?? false, restStatus: initial.restStatus ?? 404 });
  }

  /** Serve only the venue host (or both again); `restStatus` is what `/v1` answers meanwhile. */
  set(venueOnly: boolean, restStatus: VenueOnlyRestStatus = this.settings.restStatus): ServiceSettings {
    this.settings = ServiceSwitch.check({ venueOnly, restStatus });
    return this.get();
  }

  get(): ServiceSettings {
    return { ...this.settings };
  }

  /** The status a `/v1` request gets instead of an answer; undefined while the service is served. */
  restRefusal(): VenueOnlyRestStatus | undefined {
    return this.settings.venueOnly ? this.settings.restStatus : undefined;
  }

  private static check(s: ServiceSettings): ServiceSettings {
    if (typeof s.venueOnly !== 'boolean') throw new RangeError('venueOnly must be a boolean');
    if (s.restStatus !== 404 && s.restStatus !== 503) throw new RangeError('restStatus must be 404 or 503');
    return s;
  }
}
