import { describe, expect, it } from 'vitest';
import { buildPlan, formatPlan } from './check-config-plan.js';
import { parse } from '../config/test-support.js';

/**
 * `check-config` with reads from the venue (issue 20): the info reads spend the venue's IP weight
 * (openOrders 20, clearinghouseState 2, spotClearinghouseState 2) on the exchange budget, beside
 * the exchange arms; they do not spend the service's global window.
 */
/** The agent check's `extraAgents` (20) once a day: per account, per minute. */
const AC = 20 / 1440;
/** `plan.venueReads` of `n` accounts whose reads weigh `each` a minute besides the agent check. */
const reads = (n: number, each: number, onlyWhileServiceFails: boolean) => ({ weightPerMinute: expect.closeTo(n * (each + AC), 9), perAccount: expect.closeTo(each + AC, 9), onlyWhileServiceFails });

const VENUE = (source: string) => `
watch: { orders_every_seconds: 30, positions_every_seconds: 60, source: ${source} }
switch: { path: exchange }
accounts:
  - { name: a1, address: "0x00000000000000000000000000000000000000a1", master_key: { env: K1 } }
  - { name: a2, address: "0x00000000000000000000000000000000000000a2", master_key: { env: K2 } }
`;

describe('buildPlan: reads from the venue, by weight', () => {
  it('watch.source venue: the reads weigh (60/30 * 20 + 60/60 * 4 + 20 / 10 for the address budget + 20 / 1440 for the agent check) = 46.01 a minute per account on the exchange budget, none on global', async () => {
    const plan = buildPlan(await parse(VENUE('venue')));
    expect(plan.venueReads).toEqual(reads(2, 46, false));
    // arms: 2 accounts * 4 a minute by the exchange route; reads 92 weight
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8 + 92 + 2 * AC, 9);
    expect(plan.global.neededPerMinute).toBeCloseTo(8, 9);
    const text = formatPlan(plan);
    expect(text).toContain('venue reads      92.03 weight (46.01 per account: open orders 20 per read, positions 2 + 2, address budget 20 every 10 min, agent check 20 every 24 h) + 8 arms = 100.03 of the exchange budget 1200: headroom 1099.97 (91.66%)');
  });

  it('watch.source service_then_venue: the service reads as before, and the venue reads shown as what a service outage costs', async () => {
    const plan = buildPlan(await parse(`venue: { base_url: "https://svc.example.com" }\n${VENUE('service_then_venue')}`));
    expect(plan.venueReads).toEqual(reads(2, 46, true));
    // the exchange arms and the address budget reads (2 a minute per account), which go to the venue always
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8 + 4 + 2 * AC, 9);
    expect(plan.global.neededPerMinute).toBeCloseTo(8 + 6, 9);
    expect(formatPlan(plan)).toContain('while the service fails: venue reads 92.03 weight + 8 arms = 100.03 of the exchange budget 1200');
  });

  it('watch.source service_then_venue: an orders_open account counts its orders on the venue while the service answers too (60/30 * 20 = 40 weight a minute), and reads no service orders', async () => {
    const yaml = `venue: { base_url: "https://svc.example.com" }\n${VENUE('service_then_venue')}`.replace('master_key: { env: K1 } }', 'master_key: { env: K1 }, switch: { arm_when: orders_open } }');
    const plan = buildPlan(await parse(yaml));
    expect(plan.ordersOpenOnVenue).toEqual({ accounts: 1, weightPerMinute: 40 });
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8 + 40 + 4 + 2 * AC, 9);
    // the service's reads: a1 positions (1), a2 orders and positions (2 + 1)
    expect(plan.global.neededPerMinute).toBeCloseTo(8 + 4, 9);
    expect(formatPlan(plan)).toContain('orders_open counts on the venue: 40 weight a minute (1 account, open orders 20 per read), also while the service answers');
  });

  it('watch.source service: no venue reads', async () => {
    const plan = buildPlan(await parse(`venue: { base_url: "https://svc.example.com" }\n${VENUE('service')}`));
    expect(plan.venueReads).toBeNull();
    expect(formatPlan(plan)).not.toContain('venue reads');
  });

  it('reads that outgrow the exchange budget are said to be stretched', async () => {
    const text = `venue: { base_url: "https://svc.example.com" }\n${VENUE('venue')}`.replace('orders_every_seconds: 30', 'orders_every_seconds: 1');
    const plan = buildPlan(await parse(text));
    // 2 * (60 * 20 + 4 + 2) = 2412 weight a minute, over 1200
    expect(plan.venueReads!.weightPerMinute).toBeCloseTo(2412 + 2 * AC, 9);
    expect(plan.warnings.join('\n')).toMatch(/venue reads need 2412.03 weight a minute.*exchange budget/);
  });
});

describe('buildPlan: builder-deployed perp dexes (watch.perp_dexes) multiply the open orders and clearinghouseState reads', () => {
  const withDexes = (source: string, dexes: string) => VENUE(source).replace(`source: ${source} }`, `source: ${source}, perp_dexes: ${dexes} }`);

  it('two dexes: (60/30 * 20 * 3 + 60/60 * (2 * 3 + 2) + 20 / 10 + 20 / 1440) = 130.01 a minute per account, and the printed line says why', async () => {
    const plan = buildPlan(await parse(withDexes('venue', '[xyz, flx]')));
    expect(plan.perpDexes).toEqual(['xyz', 'flx']);
    expect(plan.readWeights).toEqual({ openOrders: 20, clearinghouseState: 2, spotClearinghouseState: 2, userRateLimit: 20, extraAgents: 20 });
    expect(plan.venueReads).toEqual(reads(2, 130, false));
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8 + 260 + 2 * AC, 9);
    expect(plan.global.neededPerMinute).toBeCloseTo(8, 9);
    expect(formatPlan(plan)).toContain(
      'venue reads      260.03 weight (130.01 per account: open orders 20 x 3 per read, positions 2 x 3 + 2, address budget 20 every 10 min, agent check 20 every 24 h; x 3: the first perp dex and xyz, flx) + 8 arms = 268.03 of the exchange budget 1200: headroom 931.97 (77.66%)',
    );
  });

  it('one dex: (60/30 * 40 + 60/60 * (4 + 2) + 20 / 10 + 20 / 1440) = 88.01 a minute per account', async () => {
    const plan = buildPlan(await parse(withDexes('venue', '[xyz]')));
    expect(plan.venueReads).toEqual(reads(2, 88, false));
    expect(formatPlan(plan)).toContain('venue reads      176.03 weight (88.01 per account: open orders 20 x 2 per read, positions 2 x 2 + 2, address budget 20 every 10 min, agent check 20 every 24 h; x 2: the first perp dex and xyz) + 8 arms');
  });

  it('service_then_venue: an orders_open account counts its orders on every dex (60/30 * 20 * 2 = 80 weight a minute)', async () => {
    const yaml = `venue: { base_url: "https://svc.example.com" }\n${withDexes('service_then_venue', '[xyz]')}`.replace('master_key: { env: K1 } }', 'master_key: { env: K1 }, switch: { arm_when: orders_open } }');
    const plan = buildPlan(await parse(yaml));
    expect(plan.ordersOpenOnVenue).toEqual({ accounts: 1, weightPerMinute: 80 });
    // the exchange arms, a1's open orders on two listings, the address budget reads
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8 + 80 + 4 + 2 * AC, 9);
    expect(plan.venueReads).toEqual(reads(2, 88, true));
    expect(formatPlan(plan)).toContain('orders_open counts on the venue: 80 weight a minute (1 account, open orders 20 x 2 per read; x 2: the first perp dex and xyz), also while the service answers');
  });

  it('with the configured weights: (60/30 * 40 * 2 + 60/60 * (4 * 2 + 5) + 20 / 10 + 20 / 1440) = 175.01 a minute per account', async () => {
    const plan = buildPlan(await parse(`rate_limits: { info_weights: { open_orders: 40, clearinghouse_state: 4, spot_clearinghouse_state: 5 } }\n${withDexes('venue', '[xyz]')}`));
    expect(plan.venueReads).toEqual(reads(2, 175, false));
  });

  it('20 accounts reading orders every 20 s with one dex need 20 * (3 * 40 + 6 + 2) = 2,560 weight a minute: stretched x2.91 to fit the 880 the arms leave', async () => {
    const accounts = Array.from({ length: 20 }, (_, i) => `  - { name: a${i}, address: "0x${(i + 1).toString(16).padStart(40, '0')}", master_key: { env: K1 }, agent: { name: ag${i} } }`).join('\n');
    const yaml = `watch: { orders_every_seconds: 20, positions_every_seconds: 60, source: venue, perp_dexes: [xyz] }\nswitch: { path: exchange }\naccounts:\n${accounts}\n`;
    const plan = buildPlan(await parse(yaml));
    expect(plan.venueReads!.weightPerMinute).toBeCloseTo(2560 + 20 * AC, 9);
    expect(plan.readStretch).toBeCloseTo((2560 + 20 * AC) / 880, 9);
  });

  it('watch.source service never reads them: said so', async () => {
    const plan = buildPlan(await parse(`venue: { base_url: "https://svc.example.com" }\n${withDexes('service', '[xyz]')}`));
    expect(plan.venueReads).toBeNull();
    expect(plan.warnings.join('\n')).toContain('watch.perp_dexes (xyz) is read on the venue only: with watch.source service the keeper never reads it');
  });
});

describe('buildPlan: the venue read weights come from rate_limits.info_weights, and the read periods fit the exchange budget', () => {
  it('a venue that doubled its weights: the plan counts the configured ones (60/30 * 40 + 60/60 * (4 + 5) + 20 / 10 + 20 / 1440) = 91.01 a minute per account', async () => {
    const plan = buildPlan(await parse(`rate_limits: { info_weights: { open_orders: 40, clearinghouse_state: 4, spot_clearinghouse_state: 5 } }\n${VENUE('venue')}`));
    expect(plan.readWeights).toEqual({ openOrders: 40, clearinghouseState: 4, spotClearinghouseState: 5, userRateLimit: 20, extraAgents: 20 });
    expect(plan.venueReads).toEqual(reads(2, 91, false));
    expect(formatPlan(plan)).toContain('venue reads      182.03 weight (91.01 per account: open orders 40 per read, positions 4 + 5, address budget 20 every 10 min, agent check 20 every 24 h) + 8 arms');
  });

  it('20 accounts reading orders every 20 s need 1,320.28 weight a minute: stretched to fit what the arms leave of 1,200 (x 1.5), each account\'s read periods printed', async () => {
    const accounts = Array.from({ length: 20 }, (_, i) => `  - { name: a${i}, address: "0x${(i + 1).toString(16).padStart(40, '0')}", master_key: { env: K1 }, agent: { name: ag${i} } }`).join('\n');
    const yaml = `watch: { orders_every_seconds: 20, positions_every_seconds: 60, source: venue }\nswitch: { path: exchange }\naccounts:\n${accounts}\n`;
    const plan = buildPlan(await parse(yaml));
    // reads 20 * (3 * 20 + 4 + 2 + 20 / 1440) = 1,320.28 weight a minute; arms 20 * 4 = 80; room 1,200 * 0.8 - 80 = 880
    expect(plan.venueReads!.weightPerMinute).toBeCloseTo(1320 + 20 * AC, 9);
    const stretch = (1320 + 20 * AC) / 880; // x1.5003
    expect(plan.readStretch).toBeCloseTo(stretch, 9);
    expect(plan.readPeriods.ordersEverySeconds).toBeCloseTo(20 * stretch, 9);
    // the exchange budget as the keeper will spend it: arms + the stretched reads, leaving the 20 % headroom
    expect(plan.exchange.neededPerMinute).toBeCloseTo(80 + 880, 6);
    expect(plan.accounts[0]!.readsPerMinute).toBeCloseTo(4 / stretch, 9);
    const text = formatPlan(plan);
    expect(text).toContain('  reads: stretched x1.5 to fit beside the arms: orders every 30.01 s, positions every 90.02 s per account');
    expect(text).not.toContain('headroom; retries');
  });

  it('reads that fit are printed as configured', async () => {
    expect(formatPlan(buildPlan(await parse(VENUE('venue'))))).toContain('  reads: as configured, orders every 30 s, positions every 60 s per account');
  });
});

describe('service_then_venue: what a service outage costs the exchange budget', () => {
  it('counts the rest_then_exchange arms, which go to the exchange endpoint while the service fails', async () => {
    const yaml = `venue: { base_url: "https://svc.example.com" }\n${VENUE('service_then_venue')}`.replace('switch: { path: exchange }', 'switch: { path: rest_then_exchange }');
    const plan = buildPlan(await parse(yaml));
    // reads 92 weight, and both accounts' 4 arms a minute move from REST to the exchange endpoint
    expect(formatPlan(plan)).toContain('while the service fails: venue reads 92.03 weight + 8 arms = 100.03 of the exchange budget 1200');
  });
});

describe('formatPlan: the exchange line says what it counts', () => {
  it('with reads from the venue it counts weight, not only arms', async () => {
    const text = formatPlan(buildPlan(await parse(VENUE('venue'))));
    expect(text).toContain('exchange         need 100.03 weight (arms routed there, venue reads) of 1200: headroom 1099.97 (91.66%)');
  });
});

describe('buildPlan: an instance whose accounts are all on a CLOB venue', () => {
  const PM_ENV = { PM_KEY: '2f7c1d9e-1111-4a4a-9b9b-0123456789ab', PM_SECRET: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=', PM_PASS: 'a'.repeat(64) };
  const clobOnly = (shard: string) => `
venue: { base_url: "https://svc.example.com" }
venues:
  pm: { kind: polymarket_clob, clob_url: "https://clob.example.com" }
${shard}
accounts:
  - { name: p1, venue: pm, address: "0x00000000000000000000000000000000000000a1", clob_credentials: { key: { env: PM_KEY }, secret: { env: PM_SECRET }, passphrase: { env: PM_PASS } } }
  - { name: p2, venue: pm, address: "0x00000000000000000000000000000000000000a2", clob_credentials: { key: { env: PM_KEY }, secret: { env: PM_SECRET }, passphrase: { env: PM_PASS } } }
`;

  it('counts them as protected here (shard summary, no "protects nothing"), with replication 2 each covered by both instances', async () => {
    for (const index of [0, 1]) {
      const plan = buildPlan(await parse(clobOnly(`shard: { index: ${index}, count: 2, replication: 2 }`), PM_ENV));
      const text = formatPlan(plan);
      expect(text).toContain(`Shard ${index} of 2: 2 of 2 accounts protected here`);
      expect(plan.warnings.filter((w) => w.includes('protects nothing'))).toEqual([]);
      expect(plan.clobVenues.map((v) => [v.name, v.accounts])).toEqual([['pm', 2]]);
    }
  });

  it('a shard that holds none of them still says it protects nothing', async () => {
    const one = `
venue: { base_url: "https://svc.example.com" }
venues:
  pm: { kind: polymarket_clob, clob_url: "https://clob.example.com" }
shard: { index: 1, count: 4 }
accounts:
  - { name: p1, venue: pm, address: "0x00000000000000000000000000000000000000a1", clob_credentials: { key: { env: PM_KEY }, secret: { env: PM_SECRET }, passphrase: { env: PM_PASS } } }
`;
    const plans = await Promise.all([0, 1, 2, 3].map(async (i) => buildPlan(await parse(one.replace('index: 1', `index: ${i}`), PM_ENV))));
    const holding = plans.filter((p) => p.clobVenues[0]!.accounts === 1);
    expect(holding).toHaveLength(1);
    expect(holding[0]!.warnings.filter((w) => w.includes('protects nothing'))).toEqual([]);
    for (const p of plans.filter((x) => x !== holding[0])) expect(p.warnings.some((w) => w.includes('protects nothing'))).toBe(true);
  });
});
