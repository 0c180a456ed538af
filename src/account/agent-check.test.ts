import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../obs/metrics.js';
import { FakeClock } from '../time/fake-clock.js';
import type { InfoExtraAgent } from '../venue/info-decode.js';
import { AGENT_CHECK_FIRST_DELAY_MS, AGENT_CHECK_SHED_RETRY_MS, AgentChecks, findAgent, judgeAgentCheck } from './agent-check.js';
import type { AccountState } from './keeper-types.js';
import { bareAccount } from './test-support.js';
import type { Provisioned } from './provision.js';

const AGENT = '0x00000000000000000000000000000000000000a9';
const MASTER = '0x00000000000000000000000000000000000000b1';
const DAY = 86_400_000;

describe('findAgent: our agent in the master\'s list, by address', () => {
  it('finds it whatever the case and name, with its expiry when stated', () => {
    const list: InfoExtraAgent[] = [{ address: '0x00000000000000000000000000000000000000C3', name: 'bot' }, { address: AGENT.toUpperCase().replace('0X', '0x'), name: 'other name', validUntil: 1_800_000_000_000 }];
    expect(findAgent(list, AGENT)).toEqual({ listed: true, validUntilMs: 1_800_000_000_000 });
    expect(findAgent([{ address: AGENT }], AGENT)).toEqual({ listed: true });
    expect(findAgent([], AGENT)).toEqual({ listed: false });
  });
});

describe('judgeAgentCheck: what a read means', () => {
  const T = 1_800_000_000_000;
  it.each([
    ['listed, same expiry as our record', { listed: true, validUntilMs: T }, { recordValidUntilMs: T, everListed: false, renewable: true }, { kind: 'confirmed' }],
    ['listed, within a second of it (rounding)', { listed: true, validUntilMs: T - 999 }, { recordValidUntilMs: T, everListed: true, renewable: true }, { kind: 'confirmed' }],
    ['listed with no expiry', { listed: true }, { recordValidUntilMs: T, everListed: false, renewable: true }, { kind: 'confirmed' }],
    ['the venue lapses it a day earlier: renew by it', { listed: true, validUntilMs: T - DAY }, { recordValidUntilMs: T, everListed: false, renewable: true }, { kind: 'adopt_expiry', validUntilMs: T - DAY }],
    ['the venue lapses it later: our earlier record stands', { listed: true, validUntilMs: T + DAY }, { recordValidUntilMs: T, everListed: false, renewable: true }, { kind: 'confirmed' }],
    ['a configured agent: any expiry the venue states is taken', { listed: true, validUntilMs: T + DAY }, { recordValidUntilMs: T, everListed: true, renewable: false }, { kind: 'adopt_expiry', validUntilMs: T + DAY }],
    ['no record of ours: learned', { listed: true, validUntilMs: T }, { everListed: false, renewable: false }, { kind: 'adopt_expiry', validUntilMs: T }],
    ['gone after it was listed: re-approve', { listed: false }, { recordValidUntilMs: T, everListed: true, renewable: true }, { kind: 'reprovision' }],
    ['never listed: report only (a venue that lists nothing must not rotate the agent at every read)', { listed: false }, { recordValidUntilMs: T, everListed: false, renewable: true }, { kind: 'unlisted' }],
    ['gone, but a configured agent: report only', { listed: false }, { everListed: true, renewable: false }, { kind: 'unlisted' }],
  ] as const)('%s', (_, listing, s, want) => {
    expect(judgeAgentCheck(listing, s)).toEqual(want);
  });
});

/** An account record as the keeper holds one, provisioned with an approved agent. */
function managed(over: Partial<Provisioned> = {}): AccountState {
  const provisioned = { accountType: 'main', masterAddress: MASTER, agent: { address: AGENT }, source: 'approved', agentValidUntilMs: 30 * DAY, builderFeeApproved: false, warnings: [], ...over } as unknown as Provisioned;
  return bareAccount({ name: 'acct', address: MASTER, agentName: 'dms-keeper', validDays: 30, masterKey: async () => 'k' } as unknown as AccountState['spec'], pino({ level: 'silent' }), { provisioned });
}

function setup(answers: Array<InfoExtraAgent[] | Error>, enabled = true) {
  const clock = new FakeClock(0);
  const metrics = createMetrics({ version: 't' });
  const calls: string[] = [];
  const events: string[] = [];
  const checks = new AgentChecks({
    clock,
    venueClock: clock,
    metrics,
    read: async (master) => {
      calls.push(master);
      const a = answers.shift();
      if (a === undefined) throw new Error('no more answers');
      if (a instanceof Error) throw a;
      return a;
    },
    enabled: () => enabled,
    onReadFailed: (_, f) => events.push(f.reason === 'shed' ? 'shed' : `failed ${f.reason}`),
    reprovision: async () => {
      events.push('reprovision');
      return true;
    },
    adoptExpiry: (m, ms) => {
      events.push(`adopt ${ms}`);
      m.provisioned!.agentValidUntilMs = ms;
    },
  });
  return { clock, metrics, calls, events, checks };
}

async function gauge(metrics: ReturnType<typeof createMetrics>, name: string): Promise<string | undefined> {
  const text = await metrics.registry.metrics();
  return text.split('\n').find((l) => l.startsWith(`${name}{account="acct"}`))?.split(' ')[1];
}

describe('AgentChecks: reads the master\'s agents after a provisioning, then daily', () => {
  it('confirms the agent a minute after the approval, and publishes its expiry', async () => {
    const h = setup([[{ address: AGENT, name: 'dms-keeper', validUntil: 30 * DAY }]]);
    const m = managed();
    h.checks.afterProvision(m);
    expect(await gauge(h.metrics, 'dms_keeper_agent_valid_until_timestamp_seconds')).toBe(String((30 * DAY) / 1000)); // our record, before any read
    expect(await gauge(h.metrics, 'dms_keeper_agent_listed')).toBeUndefined();
    await h.clock.advance(AGENT_CHECK_FIRST_DELAY_MS - 1);
    expect(h.calls).toEqual([]);
    await h.clock.advance(1);
    expect(h.calls).toEqual([MASTER]);
    expect(m.agentCheck?.view).toEqual({ listed: true, validUntilMs: 30 * DAY, checkedAtMs: AGENT_CHECK_FIRST_DELAY_MS });
    expect(await gauge(h.metrics, 'dms_keeper_agent_listed')).toBe('1');
    expect(h.events).toEqual([]);
  });

  it('an earlier expiry on the venue is adopted, and the gauge shows it', async () => {
    const h = setup([[{ address: AGENT, validUntil: 2 * DAY }]]);
    const m = managed();
    h.checks.afterProvision(m);
    await h.clock.advance(AGENT_CHECK_FIRST_DELAY_MS);
    expect(h.events).toEqual([`adopt ${2 * DAY}`]);
    expect(await gauge(h.metrics, 'dms_keeper_agent_valid_until_timestamp_seconds')).toBe(String((2 * DAY) / 1000));
  });

  it('listed, then gone a day later: re-approved at that read; never listed: reported, not re-approved', async () => {
    const h = setup([[{ address: AGENT }], []]);
    const m = managed();
    h.checks.afterProvision(m);
    await h.clock.advance(AGENT_CHECK_FIRST_DELAY_MS);
    expect(h.events).toEqual([]);
    await h.clock.advance(DAY);
    expect(h.calls.length).toBe(2);
    expect(h.events).toEqual(['reprovision']);
    expect(await gauge(h.metrics, 'dms_keeper_agent_listed')).toBe('0');

    const never = setup([[], [], []]);
    const n = managed();
    never.checks.afterProvision(n);
    await never.clock.advance(AGENT_CHECK_FIRST_DELAY_MS + 2 * DAY);
    expect(never.calls.length).toBe(3);
    expect(never.events).toEqual([]);
    expect(n.agentCheck?.view!.listed).toBe(false);
  });

  it('a keeper that does not read the venue reads nothing, and still exports its own record of the expiry', async () => {
    const h = setup([[{ address: AGENT }]], false);
    h.checks.afterProvision(managed());
    await h.clock.advance(2 * DAY);
    expect(h.calls).toEqual([]);
    expect(await gauge(h.metrics, 'dms_keeper_agent_valid_until_timestamp_seconds')).toBe(String((30 * DAY) / 1000));
    expect(await gauge(h.metrics, 'dms_keeper_agent_listed')).toBeUndefined();
  });

  it('a shed read is asked again a minute later, not a day', async () => {
    const shed = Object.assign(new Error('shed: no budget'), { reason: 'shed' });
    const h = setup([shed, [{ address: AGENT }]]);
    const m = managed();
    h.checks.afterProvision(m);
    await h.clock.advance(AGENT_CHECK_FIRST_DELAY_MS);
    expect(h.events).toEqual(['shed']);
    await h.clock.advance(AGENT_CHECK_SHED_RETRY_MS);
    expect(h.calls.length).toBe(2);
    expect(m.agentCheck?.view!.listed).toBe(true);
  });

  it('a new agent starts afresh: the old one\'s listing does not make the new one "gone"', async () => {
    const NEW = '0x00000000000000000000000000000000000000a8';
    const h = setup([[{ address: AGENT }], []]);
    const m = managed();
    h.checks.afterProvision(m);
    await h.clock.advance(AGENT_CHECK_FIRST_DELAY_MS);
    m.provisioned = { ...m.provisioned!, agent: { address: NEW } as unknown as Provisioned['agent'] };
    h.checks.afterProvision(m);
    await h.clock.advance(2 * AGENT_CHECK_FIRST_DELAY_MS);
    expect(h.events).toEqual([]); // not listed, but never was: reported only
  });
});
