import type { Dispatcher } from 'undici';
import type { Clock } from '../time/clock.js';
import type { RequestScheduler } from '../budget/scheduler.js';
import { HttpTransport, type ResponseObservation } from '../venue/http.js';
import { clobScope, ClobVenuePort } from '../venue/polymarket/port.js';
import { PolymarketClob } from '../venue/polymarket/clob.js';
import type { AppConfig } from './app-config.js';

/** A CLOB venue as the app builds it (config `venues:`): its URL resolved (the embedded simulator's, or the configured one). */
export type ClobVenueConfig = AppConfig['clobVenues'][number];

/** Each CLOB venue's scope of the one request budget (`clob:<name>`), for buildVenue. */
export function clobScopes(venues: readonly ClobVenueConfig[]): Record<string, { limit: number; windowMs: number }> {
  return Object.fromEntries(venues.map((v) => [clobScope(v.name), { limit: v.rateLimit.requests, windowMs: v.rateLimit.perSeconds * 1000 }]));
}

/**
 * The CLOB venues' ports, by name: each with its own transport (its own request timeout) over the
 * app's dispatcher, its accounts' clients built on it (venue/polymarket/clob.ts), its scope in the
 * one budget.
 */
export function buildClobVenues(args: {
  venues: readonly ClobVenueConfig[];
  /** The CLOB's base URL each venue uses (the embedded simulator's under `venue.simulator`). */
  urlOf: (v: ClobVenueConfig) => string;
  dispatcher: Dispatcher;
  clock: Clock;
  /** The transport for a venue of that request timeout; absent: one over `dispatcher` (the harness passes its tracked one). */
  transportFor?: (requestTimeoutMs: number) => Pick<HttpTransport, 'request'>;
  scheduler: Pick<RequestScheduler, 'run' | 'blockScope'>;
  onResponse?: (o: ResponseObservation) => void;
}): Map<string, ClobVenuePort> {
  const out = new Map<string, ClobVenuePort>();
  for (const v of args.venues) {
    const transport =
      args.transportFor?.(v.requestTimeoutMs) ??
      new HttpTransport({ dispatcher: args.dispatcher, clock: args.clock, requestTimeoutMs: v.requestTimeoutMs, ...(args.onResponse ? { onResponse: args.onResponse } : {}) });
    const baseUrl = args.urlOf(v);
    out.set(
      v.name,
      new ClobVenuePort({
        name: v.name,
        scheduler: args.scheduler,
        clock: args.clock,
        client: ({ address, credentials }) => new PolymarketClob({ baseUrl, transport, address, creds: credentials, nowSeconds: () => Math.floor(args.clock.nowMs() / 1000) }),
      }),
    );
  }
  return out;
}
