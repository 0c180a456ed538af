/**
 * The log line for each heartbeat client event (`dms-keeper heartbeat` logs JSON lines with pino,
 * like the keeper). Only changes reach here (heartbeat-client.ts), so each is worth a line; the
 * levels say what to look at: the keeper unreachable or the bot unhealthy is a warning, a refusal
 * an error (the heartbeat has stopped).
 */
import type { HeartbeatClientEvent } from './heartbeat-client.js';

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  record: Record<string, unknown>;
  msg: string;
}

export function heartbeatLogLine(e: HeartbeatClientEvent): LogLine {
  switch (e.type) {
    case 'ok':
      return {
        level: 'info',
        record: { event: 'heartbeat_ok', url: e.url, accounts: e.accounts, silence_seconds: e.silenceSeconds, failed_periods: e.failedPeriods, down_ms: e.downMs },
        msg: e.failedPeriods === 0 ? `heartbeats accepted by ${e.url}` : `heartbeats accepted by ${e.url} again, after ${e.failedPeriods} periods without (${(e.downMs / 1000).toFixed(1)} s)`,
      };
    case 'failing':
      return {
        level: 'warn',
        record: { event: 'heartbeat_failing', url: e.url, reason: e.reason, status: e.status, detail: e.detail },
        msg: `heartbeats not getting through to ${e.url} (${e.reason}: ${e.detail}); retrying every period`,
      };
    case 'bot_unhealthy':
      return {
        level: 'warn',
        record: { event: 'heartbeat_bot_unhealthy', check_url: e.checkUrl, reason: e.reason, status: e.status, detail: e.detail },
        msg: `the bot's health URL failed (${e.reason}: ${e.detail}): no heartbeats until it answers 2xx`,
      };
    case 'refused':
      return {
        level: 'error',
        // Not `error`: the logger's serializers take that field for an Error object.
        record: { event: 'heartbeat_refused', url: e.url, status: e.status, keeper_error: e.error, accounts: e.accounts },
        msg: `${e.url} refused the heartbeat (${e.status} ${e.error}${e.accounts ? `: ${e.accounts.join(', ')}` : ''}); retrying cannot help`,
      };
    case 'period_too_long':
      return {
        level: 'warn',
        record: { event: 'heartbeat_period_too_long', url: e.url, every_ms: e.everyMs, silence_seconds: e.silenceSeconds },
        msg: `one heartbeat every ${e.everyMs / 1000} s is fewer than two per the keeper's ${e.silenceSeconds} s of silence: one lost heartbeat reads as a dead bot`,
      };
  }
}
