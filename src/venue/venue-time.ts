import { ActionError, RestError } from './errors.js';
import type { HttpResponse } from './http.js';

/**
 * Which answers may tell us the venue's time. Only one the venue wrote: a 2xx body that decoded,
 * the venue's RESTError envelope, or an action answer (`ok` or `err`). Never an HTML page, a body
 * that failed to decode, or a network error: a proxy or cache answering in the venue's place stamps
 * its own clock in `Date`, and one such header once moved venue time back 30 s.
 */
export interface VenueDateSample {
  dateHeader: string;
  /** Local monotonic clock when the request left and when its answer arrived. */
  sendMonoMs: number;
  recvMonoMs: number;
}

export type VenueDateSink = (sample: VenueDateSample) => void;

/**
 * Runs `decode` on `res` and reports the answer's `Date` to `sink` when the venue wrote the answer:
 * `decode` returned, or threw a RestError (its envelope decoded) or an ActionError (an `err`
 * answer decoded). Anything else it threw (a DecodeError) passes through unsampled.
 */
export function decodeWitnessed<T>(res: HttpResponse, sink: VenueDateSink | undefined, decode: () => T): T {
  let venueWrote = false;
  try {
    const out = decode();
    venueWrote = true;
    return out;
  } catch (e) {
    venueWrote = (e instanceof RestError && e.venueWrote) || e instanceof ActionError;
    throw e;
  } finally {
    if (venueWrote && sink && res.dateHeader !== undefined) {
      try {
        sink({ dateHeader: res.dateHeader, sendMonoMs: res.sentMonoMs, recvMonoMs: res.recvMonoMs });
      } catch {
        // A clock observer's bug must not turn a good answer into a failure.
      }
    }
  }
}
