import { describe, expect, it } from 'vitest';
import { buildPlan, formatPlan } from './plan.js';
import { parse } from './test-support.js';

/**
 * `check-config` with reads from the venue (issue 20): the info reads spend the venue's IP weight
 * (openOrders 20, clearinghouseState 2, spotClearinghouseState 2) on the exchange budget, beside
 * the exchange arms; they do not spend the service's global window.
 */
const VENUE = (source: string) => `
watch: { orders_every_seconds: 30, positions_every_seconds: 60, source: ${source} }
switch: { path: exchange }
accounts:
  - { name: a1, address: "0x00000000000000000000000000000000000000a1", master_key: { env: K1 } }
  - { name: a2, address: "0x00000000000000000000000000000000000000a2", master_key: { env: K2 } }
`;

describe('buildPlan: reads from the venue, by weight', () => {
  it('watch.source venue: the reads weigh (60/30 * 20 + 60/60 * 4) = 44 a minute per account on the exchange budget, none on global', async () => {
    const plan = buildPlan(await parse(VENUE('venue')));
    expect(plan.venueReads).toEqual({ weightPerMinute: 88, perAccount: 44, onlyWhileServiceFails: false });
    // arms: 2 accounts * 4 a minute by the exchange path; reads 88 weight
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8 + 88, 9);
    expect(plan.global.neededPerMinute).toBeCloseTo(8, 9);
    const text = formatPlan(plan);
    expect(text).toContain('venue reads      88 weight (44 per account: open orders 20 per read, positions 2 + 2) + 8 arms = 96 of the exchange budget 1200: headroom 1104 (92%)');
  });

  it('watch.source service_then_venue: the service reads as before, and the venue reads shown as what a service outage costs', async () => {
    const plan = buildPlan(await parse(`venue: { base_url: "https://svc.example.com" }\n${VENUE('service_then_venue')}`));
    expect(plan.venueReads).toEqual({ weightPerMinute: 88, perAccount: 44, onlyWhileServiceFails: true });
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8, 9);
    expect(plan.global.neededPerMinute).toBeCloseTo(8 + 6, 9);
    expect(formatPlan(plan)).toContain('while the service fails: venue reads 88 weight + 8 arms = 96 of the exchange budget 1200');
  });

  it('watch.source service_then_venue: an orders_open account counts its orders on the venue while the service answers too (60/30 * 20 = 40 weight a minute), and reads no service orders', async () => {
    const yaml = `venue: { base_url: "https://svc.example.com" }\n${VENUE('service_then_venue')}`.replace('master_key: { env: K1 } }', 'master_key: { env: K1 }, switch: { arm_when: orders_open } }');
    const plan = buildPlan(await parse(yaml));
    expect(plan.ordersOpenOnVenue).toEqual({ accounts: 1, weightPerMinute: 40 });
    expect(plan.exchange.neededPerMinute).toBeCloseTo(8 + 40, 9);
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
    // 2 * (60 * 20 + 4) = 2408 weight a minute, over 1200
    expect(plan.venueReads!.weightPerMinute).toBe(2408);
    expect(plan.warnings.join('\n')).toMatch(/venue reads need 2408 weight a minute.*exchange budget/);
  });
});

describe('formatPlan: the exchange line says what it counts', () => {
  it('with reads from the venue it counts weight, not only arms', async () => {
    const text = formatPlan(buildPlan(await parse(VENUE('venue'))));
    expect(text).toContain('exchange         need 96 weight (arms of path: exchange, venue reads) of 1200: headroom 1104 (92%)');
  });
});
