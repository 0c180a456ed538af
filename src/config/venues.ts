import { HEARTBEAT_RETRIES_BEFORE_MIN_HORIZON, heartbeatHorizonSeconds, minPreRearmHorizonSeconds, preRearmHorizonSeconds, rearmLeavesRetries } from '../plan/horizon.js';
import { POLYMARKET_SWITCH_FACTS } from '../venue/polymarket/switch-facts.js';
import { checkUrl, type RuleProblem } from './rules.js';
import type { RawAccount, RawPolymarketVenue } from './schema.js';
import type { PolymarketVenueConfig, SwitchConfig } from './types.js';
import { DEFAULT_VENUE_NAME, isClobAccount, venueNameOf } from './names.js';

/**
 * `venues:` and each account's `venue:` (docs/configuration.md, "Venues"). The default venue is
 * the top-level `venue:` (the outcome service and the venue's exchange endpoint), named
 * DEFAULT_VENUE_NAME; `venues:` adds named venues of another kind, today Polymarket's CLOB. A
 * config without these keys means what it meant before: every account on `venue:`.
 */

export { DEFAULT_VENUE_NAME, isClobAccount, venueNameOf };

/** What an account on a `polymarket_clob` venue may not set: its switch is the venue's heartbeat, it has no agent. */
const NOT_ON_CLOB = ['master_key', 'builder_fee', 'switch'] as const;


/** `venues:` as the keeper runs with it, in file order. */
export function toVenues(raw: Readonly<Record<string, RawPolymarketVenue>> | undefined): PolymarketVenueConfig[] {
  return Object.entries(raw ?? {}).map(([name, v]) => ({
    name,
    kind: v.kind,
    ...(v.clob_url !== undefined ? { clobUrl: (checkUrl(v.clob_url, 'http', false) as { url: string }).url } : {}),
    heartbeatEverySeconds: v.heartbeat_every_seconds,
    minHorizonSeconds: v.min_horizon_seconds,
    requestTimeoutMs: v.request_timeout_ms,
    rateLimit: { requests: v.rate_limit.requests, perSeconds: v.rate_limit.per_seconds },
  }));
}

/**
 * A heartbeat account's switch: the deadline is the venue's timeout (each accepted beat sets it to
 * the beat plus the timeout), the period and minimum horizon are its venue's. It keeps its orders'
 * fate on a clean stop only as `keep` does elsewhere: the venue cancels them a timeout after the
 * last beat (there is nothing to clear), and it beats whether or not orders are open, so a bot's
 * first order is never placed outside a running chain.
 */
export function clobSwitch(v: Pick<PolymarketVenueConfig, 'heartbeatEverySeconds' | 'minHorizonSeconds'>): SwitchConfig {
  const h = heartbeatHorizonSeconds(POLYMARKET_SWITCH_FACTS.timeoutMs!, v.heartbeatEverySeconds, v.minHorizonSeconds);
  return { ...h, armWhen: 'always', onShutdown: 'keep', path: 'rest' };
}

/**
 * `venues:` rules: the default venue's name is taken; a CLOB URL is required outside the simulator
 * (https, or loopback); the heartbeat period leaves one failed beat room above the minimum horizon.
 */
export function venuesProblems(raw: Readonly<Record<string, RawPolymarketVenue>>, simulator: boolean | undefined): RuleProblem[] {
  const out: RuleProblem[] = [];
  for (const [name, v] of Object.entries(raw)) {
    if (name === DEFAULT_VENUE_NAME) out.push({ segments: ['venues', name], message: `the name ${DEFAULT_VENUE_NAME} is the top-level venue: section's; give this venue another name` });
    if (v.clob_url === undefined) {
      if (simulator === false) out.push({ segments: ['venues', name, 'clob_url'], message: 'is required (e.g. https://clob.polymarket.com) unless venue.simulator is true' });
    } else {
      const u = checkUrl(v.clob_url, 'http', simulator === false);
      if ('problem' in u) out.push({ segments: ['venues', name, 'clob_url'], message: u.problem });
    }
    const h = heartbeatHorizonSeconds(POLYMARKET_SWITCH_FACTS.timeoutMs!, v.heartbeat_every_seconds, v.min_horizon_seconds);
    if (!rearmLeavesRetries(h, v.request_timeout_ms, HEARTBEAT_RETRIES_BEFORE_MIN_HORIZON)) {
      const least = minPreRearmHorizonSeconds(h.minHorizonSeconds, v.request_timeout_ms, HEARTBEAT_RETRIES_BEFORE_MIN_HORIZON);
      out.push({
        segments: ['venues', name, 'heartbeat_every_seconds'],
        message:
          `${v.heartbeat_every_seconds} s leaves a horizon of ${preRearmHorizonSeconds(h)} s before the next beat (the venue's ${h.deadlineSeconds} s timeout minus the period); ` +
          `it must be at least min_horizon_seconds + one retry (request_timeout_ms + 1 s) = ${least} s, so that one failed beat still leaves the minimum`,
      });
    }
  }
  return out;
}

/**
 * Each account's `venue:` names a venue of this config (`venueNames`: the keys of `venues:`, even
 * when a venue's own keys failed, so one mistake is reported once); an account on a `polymarket_clob` venue has
 * its L2 credentials and none of what only the default venue uses; one on the default venue has no
 * CLOB credentials.
 */
export function accountVenueProblems(accounts: ReadonlyArray<RawAccount | undefined>, venueNames: readonly string[]): RuleProblem[] {
  const out: RuleProblem[] = [];
  const names = [DEFAULT_VENUE_NAME, ...venueNames.filter((n) => n !== DEFAULT_VENUE_NAME)];
  accounts.forEach((a, i) => {
    if (a === undefined) return;
    const name = venueNameOf(a);
    if (!names.includes(name)) {
      out.push({ segments: ['accounts', i, 'venue'], message: `names no venue of this config; known: ${names.join(', ')}` });
      return;
    }
    if (name === DEFAULT_VENUE_NAME) {
      if (a.clob_credentials !== undefined) out.push({ segments: ['accounts', i, 'clob_credentials'], message: `are for a polymarket_clob venue; this account is on ${DEFAULT_VENUE_NAME} (set venue:)` });
      return;
    }
    if (a.clob_credentials === undefined) out.push({ segments: ['accounts', i, 'clob_credentials'], message: `are required on ${name} (polymarket_clob): key, secret and passphrase, each {file: ...} or {env: ...}` });
    for (const k of NOT_ON_CLOB) {
      if (a[k] !== undefined) out.push({ segments: ['accounts', i, k], message: `has no meaning on ${name} (polymarket_clob): its switch is the venue's heartbeat (venues.${name}.heartbeat_every_seconds), signed with the L2 credentials, no agent` });
    }
    if (a.agent.key !== undefined) out.push({ segments: ['accounts', i, 'agent', 'key'], message: `has no meaning on ${name} (polymarket_clob): heartbeats are signed with the L2 credentials` });
  });
  return out;
}
