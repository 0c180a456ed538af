import { describe, expect, it } from 'vitest';
import { heartbeatLogLine } from './heartbeat-log.js';

describe('heartbeatLogLine', () => {
  it('names each change by event, at the level that says what to look at', () => {
    const url = 'http://127.0.0.1:9464/';
    expect(heartbeatLogLine({ type: 'ok', url, accounts: ['a'], silenceSeconds: 5, failedPeriods: 0, downMs: 0 })).toMatchObject({ level: 'info', record: { event: 'heartbeat_ok' }, msg: `heartbeats accepted by ${url}` });
    expect(heartbeatLogLine({ type: 'ok', url, accounts: ['a'], failedPeriods: 4, downMs: 4000 }).msg).toContain('again, after 4 periods without (4.0 s)');
    expect(heartbeatLogLine({ type: 'failing', url, reason: 'unreachable', detail: 'ECONNREFUSED' })).toMatchObject({ level: 'warn', record: { event: 'heartbeat_failing', reason: 'unreachable' } });
    expect(heartbeatLogLine({ type: 'bot_unhealthy', checkUrl: 'http://127.0.0.1:8080/healthz', reason: 'http_status', status: 500, detail: 'HTTP 500' })).toMatchObject({ level: 'warn', record: { event: 'heartbeat_bot_unhealthy', status: 500 } });
    expect(heartbeatLogLine({ type: 'refused', url, status: 404, error: 'unknown_account', accounts: ['b'] })).toMatchObject({ level: 'error', record: { event: 'heartbeat_refused', accounts: ['b'] }, msg: expect.stringContaining('404 unknown_account: b') });
    expect(heartbeatLogLine({ type: 'period_too_long', url, everyMs: 3000, silenceSeconds: 5 })).toMatchObject({ level: 'warn', record: { event: 'heartbeat_period_too_long' } });
  });
});
