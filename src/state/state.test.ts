import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentStore } from './agent-store.js';
import { BudgetLog } from './budget-log.js';
import { StateWriteError, writeFileAtomic } from './atomic-file.js';
import { TriggerCounter, utcDay } from './triggers.js';

const tmp = () => mkdtemp(join(tmpdir(), 'dmsk-state-'));

describe('writeFileAtomic', () => {
  it('writes with the given mode and replaces whole', async () => {
    const d = await tmp();
    const p = join(d, 'sub', 'f.json');
    await writeFileAtomic(p, 'one');
    await writeFileAtomic(p, 'two');
    expect(await readFile(p, 'utf8')).toBe('two');
    expect((await stat(p)).mode & 0o777).toBe(0o600);
  });

  it('many writes at once into one directory all land whole, and leave no temporary file', async () => {
    const d = join(await tmp(), 'agents');
    await Promise.all(Array.from({ length: 200 }, (_, i) => writeFileAtomic(join(d, `a${i}.json`), `{"i":${i}}`)));
    await Promise.all(Array.from({ length: 200 }, (_, i) => writeFileAtomic(join(d, `a${i}.json`), `{"i":${i},"v":2}`)));
    const names = (await readdir(d)).sort();
    expect(names).toHaveLength(200);
    expect(names.some((n) => n.endsWith('.tmp'))).toBe(false);
    for (const i of [0, 57, 199]) expect(JSON.parse(await readFile(join(d, `a${i}.json`), 'utf8'))).toEqual({ i, v: 2 });
  });

  it('makes the directory again when it was removed after the first write', async () => {
    const d = join(await tmp(), 'gone');
    await writeFileAtomic(join(d, 'a.json'), 'one');
    await rm(d, { recursive: true });
    await writeFileAtomic(join(d, 'a.json'), 'two');
    expect(await readFile(join(d, 'a.json'), 'utf8')).toBe('two');
    expect((await stat(d)).mode & 0o777).toBe(0o700);
  });

  it('a read-only directory is a typed error, not a crash', async () => {
    if (process.getuid?.() === 0) return; // root ignores directory modes; the CLI test covers EROFS
    const d = await tmp();
    await chmod(d, 0o500);
    await expect(writeFileAtomic(join(d, 'x'), 'y')).rejects.toBeInstanceOf(StateWriteError);
  });

  it('classifies errno into a small set of reasons', () => {
    expect(new StateWriteError('p', Object.assign(new Error('x'), { code: 'EROFS' })).reason).toBe('read_only');
    expect(new StateWriteError('p', Object.assign(new Error('x'), { code: 'ENOSPC' })).reason).toBe('no_space');
    expect(new StateWriteError('p', Object.assign(new Error('x'), { code: 'EACCES' })).reason).toBe('permission');
    expect(new StateWriteError('p', new Error('x')).reason).toBe('io');
  });
});

describe('TriggerCounter', () => {
  const day1 = Date.UTC(2026, 10, 22, 23, 59, 0);
  it('persists across restarts within the UTC day and resets at 00:00 UTC', async () => {
    const d = await tmp();
    const file = TriggerCounter.fileIn(d);
    const a = new TriggerCounter(file, day1);
    await a.load();
    expect(await a.record('mm', day1)).toBe(1);
    expect(await a.record('mm', day1 + 1_000)).toBe(2);
    const b = new TriggerCounter(file, day1 + 30_000);
    await b.load();
    expect(b.get('mm')).toBe(2);
    expect(b.rollIfNewDay(day1 + 60_000)).toBe(true);
    expect(b.get('mm')).toBe(0);
    expect(b.currentDay()).toBe('2026-11-23');
    // a file from yesterday does not count today
    const c = new TriggerCounter(file, day1 + 2 * 86_400_000);
    await c.load();
    expect(c.get('mm')).toBe(0);
  });

  const FIRED = { at: '2026-11-22T23:58:30.000Z', orders_cancelled: 3, positions_open: 2, position_value_usdc: '1520.5', unrealized_pnl_usdc: '-12.25', triggers_today: 1 };

  it('keeps the last fired cancel per account across restarts and past 00:00 UTC (the count resets, what fired does not)', async () => {
    const d = await tmp();
    const file = TriggerCounter.fileIn(d);
    const a = new TriggerCounter(file, day1);
    await a.load();
    expect(a.lastFired('mm')).toBeNull();
    await a.record('mm', day1);
    await a.recordFired('mm', FIRED);
    const b = new TriggerCounter(file, day1 + 30_000);
    expect((await b.load()).ok).toBe(true);
    expect(b.lastFired('mm')).toEqual(FIRED);
    expect(b.lastFired('other')).toBeNull();
    expect(b.get('mm')).toBe(1);
    // the next day: the count starts again, the last fired cancel is still the last one
    b.rollIfNewDay(day1 + 60_000);
    await b.save();
    const c = new TriggerCounter(file, day1 + 2 * 86_400_000);
    await c.load();
    expect(c.get('mm')).toBe(0);
    expect(c.lastFired('mm')).toEqual(FIRED);
  });

  it('loads a file written before last_fired existed, and keeps the counts when a last_fired entry is malformed', async () => {
    const d = await tmp();
    const file = TriggerCounter.fileIn(d);
    await writeFile(file, `${JSON.stringify({ day: '2026-11-22', counts: { mm: 4 } })}\n`);
    const old = new TriggerCounter(file, day1);
    expect(await old.load()).toEqual({ ok: true });
    expect(old.get('mm')).toBe(4);
    expect(old.lastFired('mm')).toBeNull();
    await writeFile(file, `${JSON.stringify({ day: '2026-11-22', counts: { mm: 4, ok: 1 }, last_fired: { mm: { at: 12 }, ok: FIRED } })}\n`);
    const odd = new TriggerCounter(file, day1);
    const r = await odd.load();
    expect(r.ok).toBe(false);
    expect(r.problem).toContain('last_fired');
    expect(odd.get('mm')).toBe(4);
    expect(odd.lastFired('mm')).toBeNull();
    expect(odd.lastFired('ok')).toEqual(FIRED);
  });

  it('a failed write of the last fired cancel is a StateWriteError and it is still shown from memory', async () => {
    const d = await tmp();
    const notADir = join(d, 'file');
    await writeFile(notADir, 'x'); // a state directory that cannot be created, even as root
    const t = new TriggerCounter(TriggerCounter.fileIn(notADir), day1);
    await expect(t.recordFired('mm', FIRED)).rejects.toBeInstanceOf(StateWriteError);
    expect(t.lastFired('mm')).toEqual(FIRED);
  });

  it('a corrupt file is reported and ignored', async () => {
    const d = await tmp();
    const file = TriggerCounter.fileIn(d);
    await writeFile(file, '{"day":');
    const t = new TriggerCounter(file, day1);
    const r = await t.load();
    expect(r.ok).toBe(false);
    expect(r.problem).toContain('triggers.json');
    expect(utcDay(day1)).toBe('2026-11-22');
  });
});

describe('AgentStore', () => {
  it('round-trips a generated agent with mode 0600', async () => {
    const d = await tmp();
    const s = new AgentStore(d);
    const agent = {
      account: 'mm-main',
      agentName: 'dms-keeper',
      masterAddress: '0x' + '1'.repeat(40),
      agentAddress: '0x' + '2'.repeat(40),
      privateKey: '0x' + 'ab'.repeat(32),
      approvedAtMs: 1,
      validUntilMs: 2,
    };
    await s.save(agent);
    expect(await s.load('mm-main', 'dms-keeper')).toEqual(agent);
    expect(await s.load('mm-main', 'other')).toBeUndefined();
  });
});

describe('unreadable state files are named, not passed over', () => {
  it('a corrupt stored agent: no agent, and the problem names the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dmsk-state-'));
    const store = new AgentStore(dir);
    expect(await store.loadChecked('a1', 'k')).toEqual({});
    await mkdir(join(dir, 'agents'), { recursive: true });
    await writeFile(join(dir, 'agents', 'a1.k.json'), '{"account":');
    expect(await store.loadChecked('a1', 'k')).toEqual({ problem: `${join(dir, 'agents', 'a1.k.json')}: not JSON` });
    await writeFile(join(dir, 'agents', 'a1.k.json'), '{"account":"a1"}');
    expect(await store.loadChecked('a1', 'k')).toEqual({ problem: `${join(dir, 'agents', 'a1.k.json')}: not a stored agent record` });
    expect(await store.load('a1', 'k')).toBeUndefined();
  });

  it('a corrupt budget log: no pacing memory, and the problem names the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dmsk-state-'));
    const log = new BudgetLog(BudgetLog.fileIn(dir));
    expect(await log.load()).toEqual({ counts: {} });
    await writeFile(BudgetLog.fileIn(dir), 'garbage');
    expect(await log.load()).toEqual({ counts: {}, problem: expect.stringContaining(BudgetLog.fileIn(dir)) });
    await writeFile(BudgetLog.fileIn(dir), '{"savedAtMs":"x"}');
    expect(await log.load()).toEqual({ counts: {}, problem: `${BudgetLog.fileIn(dir)}: not a budget log` });
    await writeFile(BudgetLog.fileIn(dir), '{"savedAtMs":1,"counts":{"global":[[1000,-2]]}}');
    expect(await log.load()).toEqual({ counts: {}, problem: `${BudgetLog.fileIn(dir)}: not a budget log` });
  });

  it('a budget log: counts per second, saved and read back; an older keeper\'s log of every admission read as counts of one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dmsk-state-'));
    const log = new BudgetLog(BudgetLog.fileIn(dir));
    await log.save({ global: [[1_000, 3], [2_000, 1]] }, 2_500);
    expect(await log.load()).toEqual({ counts: { global: [[1_000, 3], [2_000, 1]] } });
    await writeFile(BudgetLog.fileIn(dir), '{"savedAtMs":5000,"scopes":{"global":[4000.5,4100]}}');
    expect(await log.load()).toEqual({ counts: { global: [[4000.5, 1], [4100, 1]] } });
  });
});
