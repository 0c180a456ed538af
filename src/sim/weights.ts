/**
 * The venue's IP weights as the simulator charges them (issue 20; VENUE.md "Rate limits"): each IP
 * has 1,200 weight per minute, shared by `POST /info` and `POST /exchange`. The figures are the
 * venue's published defaults and live in one place, `VENUE_FACTS.infoWeights` (src/venue/facts.ts,
 * which the keeper's budget reads too):
 *  - an exchange action weighs 1 (on the venue a batch of n orders or cancels weighs
 *    1 + floor(n / 40); the simulator charges every action 1, batches of 40 or more included, a
 *    simplification: no test here sends such a batch);
 *  - `clearinghouseState`, `spotClearinghouseState` (and `l2Book`, `allMids`, `orderStatus`,
 *    `exchangeStatus`, which the simulator does not serve) weigh 2;
 *  - `userRole` weighs 60;
 *  - every other info request weighs 20.
 * The simulator's `ip_weight_<limit>_per_<seconds>s` budget (rate-limit.ts) spends these. A body
 * that does not parse, or names a type the venue does not know, is charged the default **(assumed)**:
 * the venue does not say what it charges for a request it refuses to deserialize.
 */
import { VENUE_FACTS } from '../venue/facts.js';
import { publishedWeight } from '../venue/info.js';

/** Weight of one `POST /exchange` action. */
export const ACTION_WEIGHT: number = VENUE_FACTS.infoWeights.exchangeAction;

/**
 * Weights by info request type over the published ones: a venue that changed them (the simulator's
 * `infoWeights` option), to prove the keeper's `rate_limits.info_weights` keeps its budget right.
 */
export type InfoWeightOverrides = Readonly<Record<string, number>>;

/** The weight of a `POST /info` body (by its `type`); the default when it has none. */
export function infoWeight(body: unknown, overrides: InfoWeightOverrides = {}): number {
  const type = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') return VENUE_FACTS.infoWeights.other;
  return Object.hasOwn(overrides, type) ? (overrides[type] as number) : publishedWeight(type);
}
