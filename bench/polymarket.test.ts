import { describe, expect, it } from 'vitest';
import { codesBetween, FirstBeats, requestsByEndpoint, GapTracker, peakPerReport, summariseHeartbeats, type VenueHeartbeats } from './polymarket.js';

const hb = (address: string, accepted: number, refused: number, maxGapMs: number, lastBeatMs: number, live = true): VenueHeartbeats => ({ address, accepted, refused, maxGapMs, lastBeatMs, live });

describe('the Polymarket row: the venue heartbeat figures summed', () => {
  it('counts beats between the two snapshots (an account new in the second from 0), takes the largest and the median largest gap, and the live chains', () => {
    const before = [hb('0xa', 10, 1, 5_010, 50_000), hb('0xb', 12, 0, 5_200, 50_100)];
    const after = [hb('0xa', 22, 1, 5_030, 110_000), hb('0xb', 24, 3, 7_900, 110_100), hb('0xc', 5, 0, 5_001, 110_200, false)];
    expect(summariseHeartbeats(before, after)).toEqual({ accounts: 3, live: 2, accepted: 12 + 12 + 5, refused: 3, maxGapMs: 7_900, medianMaxGapMs: 5_030 });
  });

  it('no accounts: zeros, not NaN', () => {
    expect(summariseHeartbeats([], [])).toEqual({ accounts: 0, live: 0, accepted: 0, refused: 0, maxGapMs: 0, medianMaxGapMs: 0 });
  });
});

describe('the Polymarket row: when every account had its first accepted heartbeat', () => {
  it('is null while one account has none, then the latest first beat: exact for an account first seen with one beat, the poll time for one seen with more', () => {
    const first = new FirstBeats(['0xa', '0xb', '0xc']);
    first.observe(1_000, [hb('0xa', 1, 0, 0, 900), hb('0xb', 0, 2, 0, 0)]);
    expect(first.allAtMs()).toBeNull();
    expect(first.count).toBe(1);
    // 0xb's one beat is its first; 0xc was seen late with two: its first is at most the poll's time
    first.observe(7_000, [hb('0xa', 2, 0, 5_000, 5_900), hb('0xb', 1, 2, 0, 6_500), hb('0xc', 2, 0, 5_000, 6_800)]);
    expect(first.allAtMs()).toBe(7_000);
    // later snapshots change nothing
    first.observe(9_000, [hb('0xa', 3, 0, 5_000, 8_900), hb('0xb', 2, 2, 5_000, 8_950), hb('0xc', 3, 0, 5_000, 8_990)]);
    expect(first.allAtMs()).toBe(7_000);
  });

  it('ignores accounts it was not asked about', () => {
    const first = new FirstBeats(['0xa']);
    first.observe(1_000, [hb('0xz', 1, 0, 0, 500), hb('0xa', 1, 0, 0, 800)]);
    expect(first.allAtMs()).toBe(800);
  });
});

describe('the Polymarket row: the most requests in one simulator report', () => {
  it('is the largest count difference per second between consecutive reports; none with fewer than two', () => {
    expect(peakPerReport([])).toBe(0);
    expect(peakPerReport([{ tMs: 0, clobRequests: 5 }])).toBe(0);
    expect(peakPerReport([{ tMs: 0, clobRequests: 0 }, { tMs: 1_000, clobRequests: 200 }, { tMs: 2_000, clobRequests: 1_200 }, { tMs: 2_500, clobRequests: 1_300 }])).toBe(1_000);
  });
});

describe('the Polymarket row: the largest gap within the steady phase', () => {
  it('takes each new gap from consecutive snapshots (not the gaps before the first one), and a span holding more than one beat whole, counted', () => {
    const g = new GapTracker();
    // the first snapshot: its accounts' earlier gaps (the cold start's) are not the phase's
    g.observe([hb('0xa', 3, 0, 9_000, 10_000), hb('0xb', 3, 0, 5_000, 10_500)]);
    expect(g.maxGapMs).toBe(0);
    g.observe([hb('0xa', 3, 0, 9_000, 10_000), hb('0xb', 4, 0, 5_000, 15_600)]);
    expect(g.maxGapMs).toBe(5_100);
    g.observe([hb('0xa', 4, 0, 9_000, 15_200), hb('0xb', 4, 0, 5_100, 15_600)]);
    expect(g.maxGapMs).toBe(5_200);
    expect(g.spans).toBe(0);
    // two beats since the last look: 0xb's span is counted whole (each gap in it is at most that)
    g.observe([hb('0xa', 4, 0, 9_000, 15_200), hb('0xb', 6, 0, 5_100, 25_100)]);
    expect(g.maxGapMs).toBe(9_500);
    expect(g.spans).toBe(1);
  });

  it('an account first seen mid-phase starts its own count there', () => {
    const g = new GapTracker();
    g.observe([]);
    g.observe([hb('0xc', 1, 0, 0, 1_000)]);
    g.observe([hb('0xc', 2, 0, 5_000, 6_000)]);
    expect(g.maxGapMs).toBe(5_000);
  });
});

describe('the Polymarket row: counters between two snapshots', () => {
  it('subtracts by key, a new key from 0, and leaves out the unchanged', () => {
    expect(codesBetween({ '200': 100, error: 4 }, { '200': 350, error: 4, '400': 2 })).toEqual({ '200': 250, '400': 2 });
  });
});

describe("the Polymarket row: the keeper's requests by endpoint", () => {
  it('sums every code of an endpoint from the metrics text, and reads nothing else', () => {
    const text = [
      '# HELP dms_keeper_venue_requests_total Requests to the venue by endpoint and HTTP status (or error)',
      'dms_keeper_venue_requests_total{endpoint="POST /v1/heartbeats",code="200"} 1200',
      'dms_keeper_venue_requests_total{endpoint="POST /v1/heartbeats",code="400"} 3',
      'dms_keeper_venue_requests_total{endpoint="GET /time",code="200"} 12',
      'dms_keeper_other_total{endpoint="GET /time",code="200"} 99',
    ].join('\n');
    expect(requestsByEndpoint(text)).toEqual({ 'POST /v1/heartbeats': 1203, 'GET /time': 12 });
  });
});
