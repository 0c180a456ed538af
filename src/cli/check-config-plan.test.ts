import { describe, expect, it } from 'vitest';
import { buildPlan, formatPlan } from './check-config-plan.js';
import { accountsForShard } from '../config/shard.js';
import { parse } from '../config/test-support.js';
import type { AccountConfig, Config, SwitchConfig } from '../config/types.js';

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
    expect(plan.armsPerMinute).toBeCloseTo(20, 9);
    expect(plan.readsPerMinute).toBeCloseTo(9, 9);
    expect(plan.scheduleCancel.budgetPerMinute).toBe(50);
    expect(plan.scheduleCancel.headroomPerMinute).toBeCloseTo(30, 9);
    // global: 100 per 30 s = 200 per minute; needed 20 + 9
    expect(plan.global.budgetPerMinute).toBe(200);
    expect(plan.global.neededPerMinute).toBeCloseTo(29, 9);
    expect(plan.tier).toBe('configured');
    expect(plan.readStretch).toBe(1);
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

  it("prints the network field's name approvals are signed under: the venue's by default, the spec's dialect only by venue.chain_field, warned", async () => {
    const plan = buildPlan(await parse(KNOWN));
    expect(plan.venue).toEqual({ network: 'testnet', chainField: 'hyperliquidChain' });
    expect(formatPlan(plan)).toContain('approvals (approveAgent, approveBuilderFee) carry and sign the network as hyperliquidChain');
    expect(plan.warnings.some((w) => w.includes('chain_field'))).toBe(false);
    const dialect = buildPlan(await parse(KNOWN.replace('venue: { base_url: "https://svc.example.com" }', 'venue: { base_url: "https://svc.example.com", chain_field: venueChain }')));
    expect(dialect.venue.chainField).toBe('venueChain');
    expect(formatPlan(dialect)).toContain("carry and sign the network as venueChain (the spec's dialect");
    expect(dialect.warnings.some((w) => w.includes("venue.chain_field is venueChain") && w.includes('refuses'))).toBe(true);
    await expect(parse(KNOWN.replace('venue: { base_url: "https://svc.example.com" }', 'venue: { base_url: "https://svc.example.com", chain_field: chain }'))).rejects.toThrow(/chain_field/);
  });

  it('counts only the accounts of this shard', async () => {
    const config = await parse(KNOWN + 'shard: { index: 1, count: 2 }\n');
    const plan = buildPlan(config);
    expect(plan.accounts.map((a) => a.name)).toEqual(accountsForShard(config.accounts, config.shard).map((a) => a.name));
    expect(plan.accounts.map((a) => a.name)).toEqual(['a1']); // see shard.test.ts: a1 -> 1, a2 -> 0, a3 -> 0 (of 2)
    expect(plan.armsPerMinute).toBe(4);
    expect(plan.accountsTotal).toBe(3);
  });

  it('never refuses: over the budget it names who keeps the min horizon, who is short, who is over_budget', async () => {
    const base = await parse(KNOWN);
    // So tight that not even the longest periods that keep the deadlines fit every account.
    const tight: Config = { ...base, rateLimits: { ...base.rateLimits, global: { requests: 28, perSeconds: 60 }, scheduleCancel: { requests: 2, perSeconds: 60 } } };
    const plan = buildPlan(tight);
    expect(plan.problems).toEqual([]);
    expect(plan.canHoldEveryHorizon).toBe(false);
    expect(plan.tier).toBe('over_budget');
    // a1 first (config order among equal priorities); then neither a2 nor a3 fits beside it.
    expect(plan.accounts.map((a) => [a.name, a.verdict])).toEqual([
      ['a1', 'keeps_min_horizon'],
      ['a2', 'over_budget'],
      ['a3', 'over_budget'],
    ]);
    expect(plan.armsPerMinute).toBeLessThanOrEqual(2 * 0.97 + 1e-9);
    // A higher priority is protected first.
    const prio = buildPlan({ ...tight, accounts: tight.accounts.map((a) => (a.name === 'a2' ? { ...a, priority: 5 } : a)) });
    expect(prio.accounts.map((a) => a.verdict)).toEqual(['over_budget', 'keeps_min_horizon', 'over_budget']);
    // Reads are stretched first when arms and reads outgrow the global budget.
    const reads = buildPlan({ ...base, rateLimits: { ...base.rateLimits, global: { requests: 25, perSeconds: 60 }, scheduleCancel: { requests: 50, perSeconds: 60 } } });
    expect(reads.readStretch).toBeGreaterThan(1);
    expect(reads.global.neededPerMinute).toBeLessThanOrEqual(25 * 0.97 + 1e-9);
  });

  it('warns: clear, low headroom, env keys, open listen, simulator URLs, empty shard, shared agent file', async () => {
    const base = await parse(KNOWN);
    const sw = (a: AccountConfig, s: Partial<SwitchConfig>): AccountConfig => ({ ...a, switch: { ...a.switch, ...s } });
    const accounts = base.accounts.map((a, i) => (i === 0 ? sw(a, { onShutdown: 'clear' }) : a));
    const agentFile = { kind: 'file' as const, path: '/creds/shared.agent', yamlPath: 'x' };
    const plan = buildPlan({
      ...base,
      venue: { simulator: true, network: 'testnet', requestTimeoutMs: 5000, chainField: 'hyperliquidChain', baseUrl: 'https://x.example' },
      accounts: [
        { ...accounts[0]!, agent: { ...accounts[0]!.agent, key: agentFile } },
        { ...accounts[1]!, agent: { ...accounts[1]!.agent, key: agentFile } },
        accounts[2]!,
      ],
      rateLimits: { ...base.rateLimits, global: { requests: 22, perSeconds: 60 }, scheduleCancel: { requests: 2000, perSeconds: 60 } },
      server: { listen: '0.0.0.0:9464', host: '0.0.0.0', port: 9464 },
    });
    const w = plan.warnings.join('\n');
    expect(w).toMatch(/on_shutdown: clear for a1: .*disarms its peer/);
    // the arms alone (20 a minute) leave 9% of 22; the reads are stretched out of the way
    expect(w).toMatch(/rate_limits.global: only 9.09% headroom/);
    expect(w).toMatch(/keys from environment variables for a1 \(K1\), a2 \(K2\), a3 \(K1\)/);
    expect(w).toMatch(/accounts a1, a2 share one agent key file/);
    expect(w).toMatch(/server.listen 0.0.0.0:9464 is not loopback/);
    expect(w).toMatch(/venue.simulator is true: base_url, exchange_url and ws_url are ignored/);

    const empty = buildPlan({ ...base, shard: { index: 2, count: 3, replication: 1 } });
    expect(empty.accounts).toEqual([]);
    expect(empty.warnings.join('\n')).toMatch(/shard 2 of 3 holds none of the 3 accounts/);

    const over = buildPlan({ ...base, rateLimits: { ...base.rateLimits, global: { requests: 1300, perSeconds: 60 } } });
    expect(over.warnings.join('\n')).toMatch(/above the venue's 1200 weight per minute per IP/);
  });

  it('shard.fleet: planned for one instance holding every account, replicas counted on the address budget, the lease bound warned', async () => {
    const base = await parse(KNOWN);
    const fleet = { ...base.shard, replication: 2, fleet: { instance: 'k0', leaseSeconds: 10, fallbackShareFollows: true } };
    const plan = buildPlan({ ...base, shard: fleet });
    expect(plan.accounts).toHaveLength(base.accounts.length);
    const text = formatPlan(plan);
    expect(text).toMatch(/^Fleet instance k0 \(shard.fleet, lease 10 s\): 3 of 3 accounts protected here as the last instance standing; the live instances share them, each account armed by 2 of them/);
    // Two owners' re-arms spend the address's budget: twice the one-instance figure.
    const single = buildPlan(base);
    expect(plan.accounts[0]!.actionsPerDay).toBe(2 * single.accounts[0]!.actionsPerDay);
    expect(plan.warnings.join('\n')).not.toMatch(/shard.replication is 2 but shard.count|holds none/);
    expect(plan.warnings.join('\n')).not.toMatch(/lease_seconds/);
    // 60 - 15 - 30 - 10 < 20: a lost pair of owners would run below the minimum before new ones arm.
    const long = buildPlan({ ...base, shard: { ...fleet, fleet: { ...fleet.fleet, leaseSeconds: 30 } } });
    expect(long.warnings.join('\n')).toMatch(/shard.fleet.lease_seconds 30: for a1, a2, a3 deadline - rearm_every - lease - lease \/ 3 is below min_horizon/);
  });

  it('rate_limits.exchange: its own budget, spent by path: exchange arms and the approvals at start-up', async () => {
    const base = await parse(KNOWN);
    const sw = (a: AccountConfig, s: Partial<SwitchConfig>): AccountConfig => ({ ...a, switch: { ...a.switch, ...s } });
    // Default: the venue's 1200 per minute; no account arms by the exchange route; 3 approveAgent.
    const plan = buildPlan(base);
    expect(plan.exchange).toEqual({ budgetPerMinute: 1200, neededPerMinute: 0, headroomPerMinute: 1200, headroomPercent: 100 });
    expect(plan.startupApprovals).toBe(3);
    expect(plan.warnings.join('\n')).not.toMatch(/rate_limits.exchange/);

    // a3 arms by the exchange route (12 per minute); a1 has its agent already (no approveAgent) and a builder fee.
    const builderFee = { builder: '0x0000000000000000000000000000000000000b01' as const, maxFeeRate: '0.01%' };
    const agentKey = { kind: 'env' as const, name: 'K2', yamlPath: 'accounts[0].agent.key' };
    const mixed = buildPlan({
      ...base,
      accounts: base.accounts.map((a) =>
        a.name === 'a3' ? sw(a, { path: 'exchange' }) : a.name === 'a1' ? { ...a, builderFee, agent: { ...a.agent, key: agentKey } } : a,
      ),
      rateLimits: { ...base.rateLimits, exchange: { requests: 10, perSeconds: 5 } },
    });
    expect(mixed.exchange.budgetPerMinute).toBe(120);
    expect(mixed.exchange.neededPerMinute).toBe(12);
    expect(mixed.startupApprovals).toBe(3); // a1: approveBuilderFee; a2, a3: approveAgent
    const text = formatPlan(mixed);
    expect(text).toContain('exchange         need 12 arms (routed there) of 120: headroom 108 (90%)');
    expect(text).toContain('approvals at start-up: up to 3 on the exchange budget, about 1.5 s');

    const tight = buildPlan({ ...base, accounts: base.accounts.map((a) => sw(a, { path: 'exchange' })), rateLimits: { ...base.rateLimits, exchange: { requests: 22, perSeconds: 60 } } });
    expect(tight.warnings.join('\n')).toMatch(/rate_limits.exchange: only 9.09% headroom/);

    const higherTier = buildPlan({ ...base, rateLimits: { ...base.rateLimits, exchange: { requests: 2400, perSeconds: 60 } } });
    expect(higherTier.warnings.join('\n')).toMatch(/rate_limits.exchange allows 2400 requests per minute, above the venue's published 1200 .*right only when your venue tier grants more/);
  });
});

describe('buildPlan: the budget as the venue counts it', () => {
  it('the cold start counts approvals and first arms on every scope they spend: 180 on one window of 100 per 5 s take 18.6 s at the usable 0.97, just in time', async () => {
    const base = await parse(KNOWN);
    const one = base.accounts[0]!;
    const accounts = Array.from({ length: 180 }, (_, i) => ({
      ...one,
      name: `n${i}`,
      address: `0x${(0xa000 + i).toString(16).padStart(40, '0')}` as `0x${string}`,
      switch: { ...one.switch, deadlineSeconds: 20, minHorizonSeconds: 8, rearmEverySeconds: 5 },
    }));
    const window = { requests: 100, perSeconds: 5 };
    const plan = buildPlan({ ...base, accounts, rateLimits: { ...base.rateLimits, global: window, scheduleCancel: window } });
    expect(plan.startupApprovals).toBe(180);
    // (180 + 180) / (20 x 0.97): the ideal on the usable window, what the keeper paces to (the
    // one_window timeline arms the last at 18.2 s).
    expect(plan.coldStartSeconds).toBeCloseTo(360 / (20 * 0.97), 6);
    expect(plan.coldStartOrder).toBe('just_in_time');
    expect(formatPlan(plan)).toContain('cold start: 180 approvals and 180 first arms, all armed in about 18.56 s, first arms held until the rest fits in one period');
  });

  it('rest_then_exchange plans on both routes: a low REST limit leaves the rest to the exchange endpoint', async () => {
    const base = await parse(KNOWN);
    const lowRest = { ...base.rateLimits, scheduleCancel: { requests: 3, perSeconds: 10 } }; // 0.3/s; three accounts at 5 s need 0.6
    const rest = buildPlan({ ...base, rateLimits: lowRest });
    const both = buildPlan({ ...base, rateLimits: lowRest, accounts: base.accounts.map((a) => ({ ...a, switch: { ...a.switch, path: 'rest_then_exchange' as const } })) });
    expect(rest.cadence.stretch).toBeGreaterThan(1);
    expect(both.cadence.stretch).toBe(1);
    expect(both.canHoldEveryHorizon).toBe(true);
  });
});

describe('formatPlan', () => {
  it('prints accounts, budget use and the verdict', async () => {
    const text = formatPlan(buildPlan(await parse(KNOWN)));
    expect(text).toContain('Shard 0 of 1: 3 of 3 accounts protected here.');
    expect(text).toMatch(/a3 +0x00000000000000000000000000000000000000a3 +5 s +5 s +30 s +10 s +0 +keeps_min_horizon +2 +rest +always +keep +12 +3/);
    expect(text).toContain('schedule_cancel  need 20 arms of 50: headroom 30 (60%)');
    expect(text).toContain('global           need 20 arms + 9 reads = 29 of 200: headroom 171 (85.5%)');
    expect(text).toContain('exchange         need 0 arms (routed there) of 1200: headroom 1200 (100%)');
    expect(text).toContain('approvals at start-up: up to 3 on the exchange budget, about 0.15 s');
    expect(text).toContain('venue actions per address: up to 17280 per day');
    expect(text).toContain('OK: the budget holds every horizon.');
    expect(text).toContain('Warnings:');
  });

  it('says plainly when the budget cannot hold', async () => {
    const base = await parse(KNOWN);
    const text = formatPlan(buildPlan({ ...base, rateLimits: { ...base.rateLimits, scheduleCancel: { requests: 2, perSeconds: 60 } } }));
    expect(text).toContain('NOT EVERY HORIZON HOLDS (only the highest-priority accounts can be armed); the keeper still runs');
    expect(text).toMatch(/- over_budget, not armed \(lowest priority\): a2, a3/);
  });

  it('a configured cadence over the arm budget that the margins can absorb holds, stretched, and says so', async () => {
    const base = await parse(KNOWN);
    const plan = buildPlan({ ...base, rateLimits: { ...base.rateLimits, scheduleCancel: { requests: 10, perSeconds: 60 } } });
    expect(plan.configuredArmsPerMinute).toBe(20);
    expect(plan.canHoldEveryHorizon).toBe(true);
    expect(plan.cadence.stretch).toBeGreaterThan(1);
    expect(plan.armsPerMinute).toBeLessThanOrEqual(10 * 0.97 + 1e-9);
    const text = formatPlan(plan);
    expect(text).toContain('adaptive cadence: the configured periods need 20 arms per minute; the keeper stretches them up to x');
    expect(text).toContain('OK: the budget holds every horizon.');
  });
});
