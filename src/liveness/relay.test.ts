import { describe, expect, it } from 'vitest';
import { formatRelayed, parseRelayed, relayChannel, relayVerdict, RELAY_MESSAGE_MAX_CHARS } from './relay.js';

const SILENCE = 5_000;
const ALLOW = 2_000;
const NOW = 1_800_000_000_000;

describe('relayVerdict', () => {
  it('applies a heartbeat heard just now, as heard now', () => {
    expect(relayVerdict(NOW, NOW, SILENCE, ALLOW)).toEqual({ apply: true, heardAgoMs: 0 });
  });

  it('counts an older heartbeat from when it was heard, not from its delivery', () => {
    expect(relayVerdict(NOW - 1_200, NOW, SILENCE, ALLOW)).toEqual({ apply: true, heardAgoMs: 1_200 });
    expect(relayVerdict(NOW - (SILENCE - 1), NOW, SILENCE, ALLOW)).toEqual({ apply: true, heardAgoMs: SILENCE - 1 });
  });

  it('never revives a bot with a heartbeat a silence period old or older', () => {
    expect(relayVerdict(NOW - SILENCE, NOW, SILENCE, ALLOW)).toMatchObject({ apply: false, why: 'stale', ageMs: SILENCE });
    expect(relayVerdict(NOW - 60_000, NOW, SILENCE, ALLOW)).toMatchObject({ apply: false, why: 'stale' });
  });

  it('allows the publisher a clock ahead of ours by the allowance: heard now', () => {
    expect(relayVerdict(NOW + 300, NOW, SILENCE, ALLOW)).toEqual({ apply: true, heardAgoMs: 0 });
    expect(relayVerdict(NOW + ALLOW, NOW, SILENCE, ALLOW)).toEqual({ apply: true, heardAgoMs: 0 });
  });

  it('refuses a stamp further ahead than the clocks may differ (its age is unknown)', () => {
    expect(relayVerdict(NOW + ALLOW + 1, NOW, SILENCE, ALLOW)).toMatchObject({ apply: false, why: 'future', ageMs: -(ALLOW + 1) });
  });

  it('a publisher clock behind ours shortens the credit, never lengthens it', () => {
    // Heard now on a publisher 1 s behind: counted as 1 s old, 4 s of silence left, not 6.
    const v = relayVerdict(NOW - 1_000, NOW, SILENCE, ALLOW);
    expect(v).toEqual({ apply: true, heardAgoMs: 1_000 });
  });
});

describe('relay messages', () => {
  it('round-trip without the token', () => {
    const text = formatRelayed({ account: 'mm-main', heardAtMs: NOW });
    expect(JSON.parse(text)).toEqual({ account: 'mm-main', heard_at: NOW });
    expect(parseRelayed(text)).toEqual({ account: 'mm-main', heardAtMs: NOW });
  });

  it('ignores anything else on the channel', () => {
    for (const bad of ['', 'nope', '[]', 'null', '{}', '{"account":"a"}', '{"account":"","heard_at":1}', '{"account":1,"heard_at":1}', '{"account":"a","heard_at":"1"}', '{"account":"a","heard_at":-5}', `{"account":"${'x'.repeat(65)}","heard_at":1}`, 'x'.repeat(RELAY_MESSAGE_MAX_CHARS + 1)]) {
      expect(parseRelayed(bad)).toBeUndefined();
    }
  });

  it('one channel per fleet name', () => {
    expect(relayChannel('prod')).toBe('dms-keeper:prod:heartbeats');
  });
});
