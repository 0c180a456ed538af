import { describe, expect, it } from 'vitest';
import { whatLimited, windowCarryPerS, type PhaseFigures } from './limited.js';

const base: PhaseFigures = {
  phase: 'steady',
  wallS: 40,
  keeperCpuPct: 40,
  simCpuPct: 30,
  machineBusyPct: 40,
  cores: 2,
  sendsPerS: 193,
  plannedPerS: 193,
  late: { count: 0, timerMs: 0, budgetMs: 0, heldBy: new Map() },
};

describe('what held a bench phase back', () => {
  it('the plan kept, nothing late: held by nothing', () => {
    const v = whatLimited(base);
    expect(v.causes).toEqual([]);
    expect(v.text).toBe('steady: sent 193.0/s of 193.0 planned (keeper 40%, simulator 30% of a core; machine 40% busy): held by nothing');
  });

  it("the issue's 50,000-account run: the machine first, then the budget the late re-arms waited for", () => {
    const v = whatLimited({
      ...base,
      sendsPerS: 175.5,
      plannedPerS: 193,
      keeperCpuPct: 97,
      simCpuPct: 85,
      machineBusyPct: 99,
      late: { count: 7419, timerMs: 4_000, budgetMs: 60_000, heldBy: new Map([['schedule_cancel', 7314], ['global', 105]]) },
    });
    expect(v.causes[0]).toBe("the machine's CPU (99% of 2 cores busy)");
    expect(v.causes[1]).toBe("the keeper's CPU (97% of a core)");
    expect(v.causes[2]).toMatch(/^the request budget \(late re-arms waited 60\.0 s in all; held by schedule_cancel x7314, global x105\)$/);
    expect(v.causes[3]).toMatch(/^the event loop/);
    expect(v.text).toMatch(/: limited by the machine's CPU/);
  });

  it('the simulator alone at its core is named, not the keeper', () => {
    const v = whatLimited({ ...base, sendsPerS: 150, simCpuPct: 100, machineBusyPct: 70 });
    expect(v.causes).toEqual(["the simulator's CPU (100% of a core)"]);
    expect(v.text).toMatch(/limited by the simulator's CPU/);
  });

  it('short of the plan with no figure over its bound says so rather than guess', () => {
    expect(whatLimited({ ...base, sendsPerS: 150 }).text).toMatch(/short of the plan, with no cause the bench can see$/);
  });

  it('at the plan but with late re-arms: says the plan was kept and where the waits went', () => {
    const v = whatLimited({ ...base, late: { count: 3, timerMs: 2_500, budgetMs: 0, heldBy: new Map() } });
    expect(v.text).toMatch(/kept the plan; the busiest part was the event loop \(late re-arms' timers 2\.5 s late in all\)$/);
  });

  it('a detail follows the pace and changes no verdict: the cold start read as twice its plan, its first arms short of B', () => {
    const cold = { ...base, phase: 'cold start' as const, sendsPerS: 352.4, plannedPerS: 181.8, detail: 'first arms 175.0/s from the first to the last (B = 200)' };
    expect(whatLimited(cold).text).toMatch(/^cold start: sent 352\.4\/s of 181\.8 planned, first arms 175\.0\/s from the first to the last \(B = 200\) \(keeper 40%.*\): held by nothing$/);
    expect(whatLimited({ ...cold, detail: undefined }).text).toBe(whatLimited(cold).text.replace(', first arms 175.0/s from the first to the last (B = 200)', ''));
  });

  it('unreadable CPU figures are n/a, never a cause', () => {
    const v = whatLimited({ ...base, keeperCpuPct: null, simCpuPct: null, machineBusyPct: null });
    expect(v.causes).toEqual([]);
    expect(v.text).toContain('keeper n/a, simulator n/a of a core; machine n/a busy');
  });

  it("the window at the answers' latency: named when it carries less than 1% over the plan", () => {
    // 200/s over 60 s, counted for 60.25 s after each answer: at 2 s a request, 192.8/s.
    const slow = whatLimited({ ...base, plannedPerS: 193.8, armWindow: { limitPerS: 200, windowMs: 60_000, meanLatencyMs: 2_000 } });
    expect(slow.causes).toEqual(["the budget's window at the answers' latency (192.8/s carried, 193.8 planned)"]);
    expect(slow.text).toContain('arms answered in 2000 ms on average, so the 60 s window carries 192.8/s of its 200');
    // At 50 ms: 199.0/s, room to drain.
    const fast = whatLimited({ ...base, plannedPerS: 193.8, armWindow: { limitPerS: 200, windowMs: 60_000, meanLatencyMs: 50 } });
    expect(fast.causes).toEqual([]);
    expect(fast.text).toContain('carries 199.0/s of its 200');
  });

  it('the carry follows the scheduler: the window plus its arrival margin plus the latency', () => {
    expect(windowCarryPerS(200, 60_000, 0)).toBeCloseTo((12_000 * 1000) / 60_250, 9);
    expect(windowCarryPerS(10, 1_000, 100)).toBeCloseTo(10 / 1.105, 9);
    expect(windowCarryPerS(200, 60_000, -5)).toBe(windowCarryPerS(200, 60_000, 0));
  });
});
