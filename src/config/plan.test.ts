import { describe, expect, it } from 'vitest';
import { buildPlan, formatPlan } from './plan.js';
import { accountsForShard } from './shard.js';
import { parse } from './test-support.js';
import type { AccountConfig, Config, SwitchConfig } from './types.js';

const KNOWN = `
venue: { base_url: "https://svc.example.com" }
watch: { orders_every_seconds: 30, positions_every_seconds: 60 }
rate_limits:
  global: { requests: 100, per_seconds: 30 }
  schedule_cancel: { requests: 50, per_seconds: 60 }
accounts:
  - { name: a1, address: "0x00000000000000000000000000000000000000a1", master_key: { env: K1 } }
  - { name: a2, address: "0x00000000000000000000000000000000000000a2", master_key: { env: K2 } }
  - name: a3
    address: "0x00000000000000000000000000000000000000a3"
    master_key: { env: K1 }
    agent: { name: other }
    switch: { deadline_seconds: 30, rearm_every_seconds: 5, min_horizon_seconds: 10 }
`;

describe('buildPlan', () => {
  it('exact figures for a known config', async () => {
    const plan = buildPlan(await parse(KNOWN));
    // arms: 60/15 + 60/15 + 60/5 = 4 + 4 + 12; reads: 3 * (60/30 + 60/60) = 9
    expect(plan.armsPerMinute).toBe(20);
    expect(plan.readsPerMinute).toBe(9);
    expect(plan.scheduleCancel).toEqual({ budgetPerMinute: 50, neededPerMinute: 20, headroomPerMinute: 30, headroomPercent: 60 });
    // global: 100 per 30 s = 200 per minute; needed 20 + 9
    expect(plan.global).toEqual({ budgetPerMinute: 200, neededPerMinute: 29, headroomPerMinute: 171, headroomPercent: 85.5 });
    expect(plan.canHoldEveryHorizon).toBe(true);
    expect(plan.problems).toEqual([]);
    expect(plan.accountsTotal).toBe(3);
    expect(plan.accounts.map((a) => [a.name, a.armsPerMinute, a.readsPerMinute, a.actionsPerDay, a.retriesThatFit])).toEqual([
      ['a1', 4, 3, 5760, 4], // (60 - 15 - 20) / 6 = 4.17
      ['a2', 4, 3, 5760, 4],
      ['a3', 12, 3, 17280, 2], // (30 - 5 - 10) / 6 = 2.5: close to the limit
    ]);
    expect(plan.warnings).toEqual([
      expect.stringMatching(/^rearm_every_seconds is close to the limit for a3 \(2 retries\)/),
      expect.stringMatching(/^keys from environment variables for a1 \(K1\), a2 \(K2\), a3 \(K1\): prefer files/),
    ]);
  });

  it('counts only the accounts of this shard', async () => {
    const config = await parse(KNOWN + 'shard: { index: 1, count: 2 }\n');
    const plan = buildPlan(config);
    expect(plan.accounts.map((a) => a.name)).toEqual(accountsForShard(config.accounts, config.shard).map((a) => a.name));
    expect(plan.accounts.map((a) => a.name)).toEqual(['a1']); // see shard.test.ts: a1 -> 1, a2 -> 0, a3 -> 0 (of 2)
    expect(plan.armsPerMinute).toBe(4);
    expect(plan.accountsTotal).toBe(3);
  });

  it('refuses a plan over the schedule_cancel budget, and over the global budget, naming each', async () => {
    const base = await parse(KNOWN);
    // So tight that even the longest periods the margins allow cannot fit.
    const tight: Config = { ...base, rateLimits: { global: { requests: 28, perSeconds: 60 }, scheduleCancel: { requests: 2, perSeconds: 60 } } };
    const plan = buildPlan(tight);
    expect(plan.canHoldEveryHorizon).toBe(false);
    expect(plan.global.headroomPerMinute).toBe(-1);
    expect(plan.problems.map((p) => p.path)).toEqual(['rate_limits.schedule_cancel', 'rate_limits.global']);
    expect(plan.problems[0]!.message).toMatch(/3 accounts need [\d.]+ arms per minute even at the longest periods their margins allow, the usable budget is 1.94/);
    expect(plan.problems[1]!.message).toMatch(/20 arms \+ 9 reads = 29 requests per minute, the budget is 28/);
    // Exactly at the budget holds.
    const exact = buildPlan({ ...base, rateLimits: { global: { requests: 29, perSeconds: 60 }, scheduleCancel: { requests: 20, perSeconds: 60 } } });
    expect(exact.canHoldEveryHorizon).toBe(true);
  });

  it('warns: clear, low headroom, env keys, open listen, simulator URLs, empty shard, shared agent file', async () => {
    const base = await parse(KNOWN);
    const sw = (a: AccountConfig, s: Partial<SwitchConfig>): AccountConfig => ({ ...a, switch: { ...a.switch, ...s } });
    const accounts = base.accounts.map((a, i) => (i === 0 ? sw(a, { onShutdown: 'clear' }) : a));
    const agentFile = { kind: 'file' as const, path: '/creds/shared.agent', yamlPath: 'x' };
    const plan = buildPlan({
      ...base,
      venue: { simulator: true, network: 'testnet', requestTimeoutMs: 5000, baseUrl: 'https://x.example' },
      accounts: [
        { ...accounts[0]!, agent: { ...accounts[0]!.agent, key: agentFile } },
        { ...accounts[1]!, agent: { ...accounts[1]!.agent, key: agentFile } },
        accounts[2]!,
      ],
      rateLimits: { global: { requests: 30, perSeconds: 60 }, scheduleCancel: { requests: 2000, perSeconds: 60 } },
      server: { listen: '0.0.0.0:9464', host: '0.0.0.0', port: 9464 },
    });
    const w = plan.warnings.join('\n');
    expect(w).toMatch(/on_shutdown: clear for a1: .*disarms its peer/);
    expect(w).toMatch(/rate_limits.global: only 3.33% headroom/);
    expect(w).toMatch(/keys from environment variables for a1 \(K1\), a2 \(K2\), a3 \(K1\)/);
    expect(w).toMatch(/accounts a1, a2 share one agent key file/);
    expect(w).toMatch(/server.listen 0.0.0.0:9464 is not loopback/);
    expect(w).toMatch(/venue.simulator is true: base_url, exchange_url and ws_url are ignored/);

    const empty = buildPlan({ ...base, shard: { index: 2, count: 3 } });
    expect(empty.accounts).toEqual([]);
    expect(empty.warnings.join('\n')).toMatch(/shard 2 of 3 holds none of the 3 accounts/);

    const over = buildPlan({ ...base, rateLimits: { ...base.rateLimits, global: { requests: 1300, perSeconds: 60 } } });
    expect(over.warnings.join('\n')).toMatch(/above the venue's 1200 weight per minute per IP/);
  });
});

describe('formatPlan', () => {
  it('prints accounts, budget use and the verdict', async () => {
    const text = formatPlan(buildPlan(await parse(KNOWN)));
    expect(text).toContain('Shard 0 of 1: 3 of 3 accounts protected here.');
    expect(text).toMatch(/a3 +0x00000000000000000000000000000000000000a3 +5 s +30 s +10 s +2 +rest +always +keep +12 +3/);
    expect(text).toContain('schedule_cancel  need 20 arms of 50: headroom 30 (60%)');
    expect(text).toContain('global           need 20 arms + 9 reads = 29 of 200: headroom 171 (85.5%)');
    expect(text).toContain('venue actions per address: up to 17280 per day');
    expect(text).toContain('OK: the budget holds every horizon.');
    expect(text).toContain('Warnings:');
  });

  it('says plainly when the budget cannot hold', async () => {
    const base = await parse(KNOWN);
    const text = formatPlan(buildPlan({ ...base, rateLimits: { ...base.rateLimits, scheduleCancel: { requests: 2, perSeconds: 60 } } }));
    expect(text).toContain('CANNOT hold every horizon:');
    expect(text).toMatch(/- rate_limits\.schedule_cancel: cannot hold every horizon: 3 accounts need [\d.]+ arms per minute even at the longest periods/);
  });

  it('a configured cadence over the arm budget that the margins can absorb holds, stretched, and says so', async () => {
    const base = await parse(KNOWN);
    const plan = buildPlan({ ...base, rateLimits: { ...base.rateLimits, scheduleCancel: { requests: 10, perSeconds: 60 } } });
    expect(plan.configuredArmsPerMinute).toBe(20);
    expect(plan.canHoldEveryHorizon).toBe(true);
    expect(plan.cadence.stretch).toBeGreaterThan(1);
    expect(plan.armsPerMinute).toBeLessThanOrEqual(10 * 0.97 + 1e-9);
    const text = formatPlan(plan);
    expect(text).toContain('adaptive cadence: the configured periods need 20 arms per minute; the keeper will stretch every period');
    expect(text).toContain('OK: the budget holds every horizon.');
  });
});
