import { pino, type DestinationStream, type Logger } from 'pino';
import type { Clock } from '../time/clock.js';
import { logSerializers, redactPaths } from './log.js';
import { createRequire } from 'node:module';

/**
 * Log formats (`log.format`). `json` (the default) writes one JSON object a line, for journald and
 * log shippers (pino's numeric levels: 30 info, 40 warn, 50 error, 60 fatal). `pretty` writes
 * pino-pretty's readable lines for people; `npm start` uses it:
 *
 *   [2026-11-24 05:44:50.868Z] INFO: mm-main: switch armed {"from":"arming","to":"armed"}
 *
 * Both carry the same records: `pretty` only formats them (one line per record, the account first,
 * the remaining fields as compact JSON). Key material reaches neither: the serializers scrub
 * errors and `redact` censors key-like fields before any formatting.
 */
export type LogFormat = 'json' | 'pretty';

/**
 * pino-pretty's formatter on a synchronous stream: no worker thread, so the last lines before an
 * exit are not lost and tests can capture the output in-process. Colours only on a terminal.
 */
export function prettyStream(out: { write(line: string): unknown; isTTY?: boolean }, colorize: boolean = out.isTTY === true): DestinationStream {
  // Required here, not imported: a JSON-logging daemon never loads pino-pretty's 30 files.
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const prettify = prettyFactory({
    colorize,
    singleLine: true,
    translateTime: "UTC:yyyy-mm-dd HH:MM:ss.l'Z'",
    // The account leads the message. `event` stays in the JSON format for machines; a reader has
    // the message. `service`, `pid` and `hostname` are the same on every line.
    ignore: 'pid,hostname,service,event,account',
    messageFormat: '{if account}{account}: {end}{msg}',
    // Errors inline on the record's line like any other field (pino-pretty expands them by default).
    errorLikeObjectKeys: [],
  });
  return { write: (line: string) => void out.write(prettify(line)) };
}

/**
 * What the log to stdout may hold in memory while its reader is behind; past it, lines are dropped
 * (and counted) rather than held. Minutes of a 50,000-account keeper's warnings.
 */
export const STDOUT_LOG_BUFFER_BYTES = 8 * 2 ** 20;

/**
 * stdout as the keeper's log writes it: asynchronously (the keeper never waits for the reader), as
 * pino's default does, but bounded. pino's default holds whatever the reader has not taken, without
 * limit: a reader that stops (journald or a container's log driver under load, a pipe nobody
 * drains) grew the keeper's heap line by line toward its limit, and a heap out of memory stops
 * every account's re-arms at once. Lines still held at exit are written then (pino flushes an
 * asynchronous destination on exit). `onDropped`: a line did not fit in STDOUT_LOG_BUFFER_BYTES.
 */
export function stdoutLogDestination(onDropped: () => void = () => undefined): DestinationStream {
  const dest = pino.destination({ dest: 1, sync: false, maxLength: STDOUT_LOG_BUFFER_BYTES });
  dest.on('drop', onDropped);
  return dest;
}

/**
 * pino on our clock: log times are the same time the keeper decides with (virtual in tests).
 * `format: pretty` formats the same records with pino-pretty for people (see obs/logger.ts).
 * Without a stream: stdout, through stdoutLogDestination (`onDropped` hears its drops).
 */
export function createLogger(level: string, stream?: DestinationStream, clock?: Clock, format: LogFormat = 'json', onDropped?: () => void): Logger {
  const timestamp = clock ? () => `,"time":"${new Date(clock.nowMs()).toISOString()}"` : pino.stdTimeFunctions.isoTime;
  const dest = stream ?? stdoutLogDestination(onDropped);
  const out = format === 'pretty' ? prettyStream({ write: (line: string) => dest.write(line), isTTY: stream ? (stream as { isTTY?: boolean }).isTTY : process.stdout.isTTY }) : dest;
  return pino({ level, base: { service: 'dms-keeper' }, serializers: logSerializers, redact: { paths: redactPaths, censor: '[redacted]' }, timestamp }, out);
}
