/**
 * The simulator in its own process for the benchmark (signature checks on), seeded with N accounts
 * whose keys derive from fixed strings (bench/keys.ts), plus a venue-side sampler reporting over
 * IPC (the CLOB's requests counted too: the Polymarket row, bench/polymarket.ts). Every second it reads each account's scheduled cancel:
 *   - the horizon (deadline minus venue now) and lapses (below min_horizon after the first arm);
 *   - each arm's send time, recovered from the deadline itself (time = venue now + deadline at
 *     send), hence the gaps between consecutive arms of an account;
 *   - 429s and schedule-cancel requests, counted where the simulator's rate limiter decides.
 * Usage: node dist/bench/sim-process.js --accounts N --budget-per-minute B --global-per-minute G
 *        --deadline-seconds D --min-horizon-seconds M [--profile NAME]
 * (profile: how the simulator varies its answers within the spec, src/sim/profiles.ts)
 */
import { parseArgs } from 'node:util';
import { startSimulator } from '../src/sim/simulator.js';
import { benchAddresses } from './keys.js';
import { nativeRecovery } from './native-recovery.js';

export interface SamplerReport {
  type: 'report';
  tMs: number;
  armed: number;
  accounts: number;
  minHorizonS: number | null;
  lapses: number;
  /** When the venue received the first arm of any account (its own clock, ms), null before. */
  firstArmMs: number | null;
  /** When it received the first arm of the last account to be armed, once every account was. */
  allArmedMs: number | null;
  /** The first arms' receipt times (host clock, ms) summed, and how many: the unprotected account-seconds follow. */
  firstArmsSumMs: number;
  firstArms: number;
  /** Gaps (ms) between consecutive arms of one account, since the last report. */
  gapsMs: number[];
  rateLimited: number;
  scheduleCancelRequests: number;
  /** POST /exchange requests (approveAgent at start-up; arms go by REST in the benchmark). */
  exchangeRequests: number;
  requests: number;
  /** Requests the CLOB (mounted under /clob) received, counted where its rate limiter decides, and its 429s. */
  clobRequests: number;
  clobRateLimited: number;
  /** Accounts (their index among the bench's addresses) in a lapse sample for the first time in this report. */
  newlyLapsed: number[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      accounts: { type: 'string' },
      'budget-per-minute': { type: 'string' },
      'global-per-minute': { type: 'string' },
      'deadline-seconds': { type: 'string' },
      'min-horizon-seconds': { type: 'string' },
      profile: { type: 'string' },
    },
  });
  const n = Number(values.accounts);
  const deadlineMs = Number(values['deadline-seconds']) * 1000;
  const minHorizonMs = Number(values['min-horizon-seconds']) * 1000;
  const addresses = benchAddresses(n);
  const sim = await startSimulator({
    port: 0,
    verifySignatures: true,
    recoverSigner: nativeRecovery,
    profile: values.profile ?? 'strict',
    accounts: addresses.map((address) => ({ address, tradedVolumeUsd: 50_000_000 })),
    rateLimits: {
      global: { limit: Number(values['global-per-minute']), windowSeconds: 60 },
      scheduleCancel: { limit: Number(values['budget-per-minute']), windowSeconds: 60 },
    },
  });

  let rateLimited = 0;
  let scheduleCancelRequests = 0;
  let exchangeRequests = 0;
  let requests = 0;
  const check = sim.rateLimiter.check.bind(sim.rateLimiter);
  sim.rateLimiter.check = (ip, endpoint) => {
    const d = check(ip, endpoint);
    requests++;
    if (endpoint === 'POST /v1/trading/orders/schedule-cancel') scheduleCancelRequests++;
    if (endpoint === 'POST /exchange') exchangeRequests++;
    if (!d.ok) rateLimited++;
    return d;
  };
  let clobRequests = 0;
  let clobRateLimited = 0;
  const clobCheck = sim.clob.rateLimiter.check.bind(sim.clob.rateLimiter);
  sim.clob.rateLimiter.check = (...args) => {
    const d = clobCheck(...args);
    clobRequests++;
    if (!d.ok) clobRateLimited++;
    return d;
  };

  const lastTime = new Map<string, number>();
  const everLapsed = new Set<number>();
  const lastSend = new Map<string, number>();
  // Exact, not the 1 s sampling: an arm's send time is its deadline minus deadline_seconds.
  let firstArmMs: number | null = null;
  let allArmedMs: number | null = null;
  let latestFirstArmMs = Number.NEGATIVE_INFINITY;
  let firstArmsSumMs = 0;
  process.send?.({ type: 'ready', baseUrl: sim.baseUrl, exchangeUrl: sim.exchangeUrl, wsUrl: sim.wsUrl, clobUrl: sim.clobUrl });

  const timer = setInterval(() => {
    const now = sim.clock.nowMs();
    let armed = 0;
    let lapses = 0;
    let min: number | null = null;
    const gapsMs: number[] = [];
    const newlyLapsed: number[] = [];
    const lapsed = (i: number): void => {
      lapses++;
      if (!everLapsed.has(i)) {
        everLapsed.add(i);
        newlyLapsed.push(i);
      }
    };
    for (let i = 0; i < addresses.length; i++) {
      const a = addresses[i]!;
      const t = sim.state.schedule(a).timeMs;
      if (t === undefined) {
        if (lastTime.has(a)) lapsed(i); // was armed, now nothing: it fired
        continue;
      }
      armed++;
      const h = t - now;
      min = min === null ? h : Math.min(min, h);
      if (h < minHorizonMs) lapsed(i);
      if (lastTime.get(a) !== t) {
        const sentAt = t - deadlineMs;
        const prev = lastSend.get(a);
        if (prev !== undefined) gapsMs.push(sentAt - prev);
        else {
          firstArmMs = Math.min(firstArmMs ?? sentAt, sentAt);
          latestFirstArmMs = Math.max(latestFirstArmMs, sentAt);
          firstArmsSumMs += sentAt - (now - Date.now());
        }
        lastSend.set(a, sentAt);
        lastTime.set(a, t);
      }
    }
    if (allArmedMs === null && lastSend.size === n) allArmedMs = latestFirstArmMs;
    const report: SamplerReport = {
      type: 'report',
      tMs: Date.now(),
      // The simulator's clock is the host's here (no offset in the benchmark's profiles).
      firstArmMs: firstArmMs === null ? null : firstArmMs - (now - Date.now()),
      allArmedMs: allArmedMs === null ? null : allArmedMs - (now - Date.now()),
      firstArmsSumMs,
      firstArms: lastSend.size,
      armed,
      accounts: n,
      minHorizonS: min === null ? null : min / 1000,
      lapses,
      gapsMs,
      rateLimited,
      scheduleCancelRequests,
      exchangeRequests,
      requests,
      clobRequests,
      clobRateLimited,
      newlyLapsed,
    };
    process.send?.(report);
  }, 1_000);

  process.on('message', (m: unknown) => {
    // The CLOB's request counters now, for a phase's exact bounds (the Polymarket row).
    if ((m as { type?: string })?.type === 'counters') process.send?.({ type: 'counters', tMs: Date.now(), clobRequests, clobRateLimited });
    if ((m as { type?: string })?.type === 'stop') {
      clearInterval(timer);
      void sim.stop().then(() => process.exit(0));
    }
  });
  process.on('disconnect', () => process.exit(0));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
