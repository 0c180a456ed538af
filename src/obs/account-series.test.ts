import { Counter, Gauge, Registry } from 'prom-client';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AccountFamily, AccountTable, KeeperRegistry } from './account-series.js';

const RESULTS = ['ok', 'rate_limited', 'rejected', 'error'] as const;

/** The same families twice: ours over one table, and prom-client's own (the oracle). */
function pair() {
  const ours = new KeeperRegistry();
  const theirs = new Registry();
  const table = new AccountTable();
  const a = {
    horizon: new AccountFamily({ name: 't_horizon_seconds', help: 'h', type: 'gauge', table, registers: [ours] }),
    arms: new AccountFamily({ name: 't_arm_requests_total', help: 'a', type: 'counter', table, label: { name: 'result', values: RESULTS }, registers: [ours] }),
    fired: new AccountFamily({ name: 't_fired_total', help: 'f', type: 'counter', table, registers: [ours] }),
  };
  const b = {
    horizon: new Gauge({ name: 't_horizon_seconds', help: 'h', labelNames: ['account'], registers: [theirs] }),
    arms: new Counter({ name: 't_arm_requests_total', help: 'a', labelNames: ['account', 'result'], registers: [theirs] }),
    fired: new Counter({ name: 't_fired_total', help: 'f', labelNames: ['account'], registers: [theirs] }),
  };
  return { ours, theirs, table, a, b };
}

type Op =
  | { op: 'set'; account: string; value: number }
  | { op: 'arm'; account: string; result: (typeof RESULTS)[number]; by: number }
  | { op: 'fire'; account: string }
  | { op: 'removeHorizon'; account: string };

describe('AccountFamily', () => {
  it('scrapes exactly as prom-client does for any sequence of set, inc and remove', async () => {
    // Names past ASCII (UTF-8 of 2 to 4 bytes a character) and one longer than a piece's first buffer.
    const account = fc.constantFrom('a0', 'desk "b"', 'c\\d', 'mm-main', 'désk 🦊', `long-${'ü'.repeat(20_000)}`);
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('set' as const), account, value: fc.double({ noNaN: true, min: -1e9, max: 1e9 }) }),
      fc.record({ op: fc.constant('arm' as const), account, result: fc.constantFrom(...RESULTS), by: fc.constantFrom(0, 1, 3) }),
      fc.record({ op: fc.constant('fire' as const), account }),
      fc.record({ op: fc.constant('removeHorizon' as const), account }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const { ours, theirs, a, b } = pair();
        for (const o of ops) {
          if (o.op === 'set') {
            a.horizon.set({ account: o.account }, o.value);
            b.horizon.set({ account: o.account }, o.value);
          } else if (o.op === 'arm') {
            a.arms.inc({ account: o.account, result: o.result }, o.by);
            b.arms.inc({ account: o.account, result: o.result }, o.by);
          } else if (o.op === 'fire') {
            a.fired.inc({ account: o.account });
            b.fired.inc({ account: o.account });
          } else {
            a.horizon.remove({ account: o.account });
            b.horizon.remove({ account: o.account });
          }
        }
        // Series order may differ (ours: by account, then label); the set of lines may not. Both of
        // our paths: the text the keeper serves, and get() as prom-client's own registry reads it.
        const lines = (t: string) => t.split('\n').filter(Boolean).sort();
        const want = lines(await theirs.metrics());
        expect(lines(await ours.metrics())).toEqual(want);
        const plain = new Registry();
        for (const f of Object.values(a)) plain.registerMetric(f as never);
        expect(lines(await plain.metrics())).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });

  it('gives /metrics its body as pieces: the families\' texts, then prom-client\'s own, a blank line between two; with families alone, with neither', async () => {
    const { ours, a } = pair();
    // What the body must be, made here from the parts: each family's text, then prom-client's own.
    const expected = async (r: KeeperRegistry, families: ReadonlyArray<AccountFamily<string>>): Promise<string> => {
      const rest = await Registry.prototype.metrics.call(r);
      const parts = [...families.map((f) => f.text()), ...(rest.trim() === '' ? [] : [rest.slice(0, -1)])];
      return parts.length === 0 ? '' : `${parts.join('\n\n')}\n`;
    };
    const families = [a.horizon, a.arms, a.fired] as ReadonlyArray<AccountFamily<string>>;
    a.horizon.set({ account: 'é"x\\n' }, 1.5);
    a.fired.inc({ account: 'y' });
    const body = async (r: KeeperRegistry): Promise<string> => {
      const pieces: Buffer[] = [];
      for await (const p of r.metricsPieces()) pieces.push(p);
      return Buffer.concat(pieces).toString('utf8');
    };
    expect(await body(ours)).toBe(await expected(ours, families)); // families only
    new Gauge({ name: 't_other', help: 'o', registers: [ours] }).set(3);
    expect(await body(ours)).toBe(await expected(ours, families)); // families, then prom-client's own
    expect(await body(ours)).toMatch(/t_fired_total\{account="y"\} 1\n\n# HELP t_other o\n# TYPE t_other gauge\nt_other 3\n$/);
    for (let i = 0; i < 1200; i++) a.arms.inc({ account: `acct-${i}`, result: 'ok' }, i); // families of several pieces
    expect(await body(ours)).toBe(await expected(ours, families));
    expect(await ours.metrics()).toBe(await body(ours));
    for (const per of [1, 2, 3, 7]) expect(Buffer.concat([...a.arms.textPieces(per)]).toString('utf8')).toBe(`${a.arms.text()}\n`);
    const other = new KeeperRegistry();
    new Gauge({ name: 't_alone', help: 'a', registers: [other] }).set(1);
    expect(await body(other)).toBe(await expected(other, [])); // no families
    expect(await body(new KeeperRegistry())).toBe(''); // nothing at all: an empty body, as before
  });

  it('lends /metrics the families\' pieces as views of one buffer (no Buffer made per piece), each good until the next is asked for: copied as they come, the same body', async () => {
    const registry = new KeeperRegistry();
    const table = new AccountTable();
    const a = new AccountFamily({ name: 't_a', help: 'a', type: 'gauge', table, registers: [registry] });
    const b = new AccountFamily({ name: 't_b_total', help: 'b', type: 'counter', table, label: { name: 'result', values: ['ok', 'error'] }, registers: [registry] });
    new Gauge({ name: 't_other', help: 'o', registers: [registry] }).set(2);
    for (let i = 0; i < 3 * 512; i++) {
      a.set({ account: `acct-${i}` }, i / 7);
      b.inc({ account: `acct-é${i}`, result: i % 2 === 0 ? 'ok' : 'error' }, i);
    }
    const copies: Buffer[] = [];
    const stores = new Set<ArrayBufferLike>();
    let familyPieces = 0;
    for await (const p of registry.metricsPieces({ lent: true })) {
      copies.push(Buffer.from(p));
      const text = p.toString('utf8');
      if (text.includes('t_a{') || text.includes('t_b_total{')) {
        stores.add(p.buffer);
        familyPieces += 1;
      }
    }
    expect(familyPieces).toBeGreaterThan(4);
    expect(stores.size).toBe(1);
    expect(Buffer.concat(copies).toString('utf8')).toBe(await registry.metrics());
  });

  it('gives the event loop a turn between two pieces of one family, so a timer due during a large scrape runs before it ends', async () => {
    // At 50,000 accounts a scrape is 70 MB of text; one family of it in one turn held every re-arm
    // timer due meanwhile for seconds on a busy machine (a reader as fast as the socket never lets
    // the response wait for 'drain', so nothing else yields).
    const registry = new KeeperRegistry();
    const table = new AccountTable();
    const g = new AccountFamily({ name: 't_big', help: 'b', type: 'gauge', table, registers: [registry] });
    for (let i = 0; i < 4 * 512; i++) g.set({ account: `acct-${i}` }, i); // one family, five pieces
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const turnsAtPiece: number[] = [];
    for await (const _ of registry.metricsPieces()) turnsAtPiece.push(turns);
    ticking = false;
    expect(turnsAtPiece.length).toBe(5);
    // Every piece after the first was made after at least one more turn of the loop.
    for (let i = 1; i < turnsAtPiece.length; i++) expect(turnsAtPiece[i]).toBeGreaterThan(turnsAtPiece[i - 1]!);
  });

  it('runs beforeCollect at each scrape, before any value is read', async () => {
    const registry = new KeeperRegistry();
    const table = new AccountTable();
    let now = 5;
    const g: AccountFamily = new AccountFamily({ name: 't_g', help: 'g', type: 'gauge', table, registers: [registry], beforeCollect: () => g.set({ account: 'x' }, now) });
    expect(await registry.metrics()).toContain('t_g{account="x"} 5');
    now = 7;
    expect(await registry.metrics()).toContain('t_g{account="x"} 7');
  });

  it('runs a beforeCollect made of steps whole, with a turn of the event loop between two steps when /metrics is written in pieces', async () => {
    // At 50,000 accounts the refresh of every account's gauges was one loop in one turn, tenths
    // of a second on a starved machine. Steps let the re-arm timers in between.
    const registry = new KeeperRegistry();
    const table = new AccountTable();
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    const turnsAtStep: number[] = [];
    const g: AccountFamily = new AccountFamily({
      name: 't_stepped',
      help: 's',
      type: 'gauge',
      table,
      registers: [registry],
      beforeCollect: function* () {
        for (let i = 0; i < 3; i++) {
          turnsAtStep.push(turns);
          g.set({ account: `a${i}` }, 10 + i);
          if (i < 2) yield;
        }
      },
    });
    setImmediate(tick);
    const pieces: Buffer[] = [];
    for await (const p of registry.metricsPieces()) pieces.push(p);
    const text = Buffer.concat(pieces).toString('utf8');
    ticking = false;
    expect(text).toContain('t_stepped{account="a0"} 10\nt_stepped{account="a1"} 11\nt_stepped{account="a2"} 12\n');
    expect(turnsAtStep).toHaveLength(3);
    for (let i = 1; i < 3; i++) expect(turnsAtStep[i]).toBeGreaterThan(turnsAtStep[i - 1]!);
    // Every other reader runs the steps at once.
    turnsAtStep.length = 0;
    expect(g.get().values.map((v) => v.value)).toEqual([10, 11, 12]);
    expect(g.text()).toContain('t_stepped{account="a2"} 12');
    expect(turnsAtStep).toHaveLength(6);
  });

  it('refuses what prom-client refuses: a label value out of its set, a counter going down or being set', () => {
    const table = new AccountTable();
    const c = new AccountFamily({ name: 't_c', help: 'c', type: 'counter', table, label: { name: 'result', values: RESULTS } });
    expect(() => c.inc({ account: 'x', result: 'maybe' })).toThrow(/not one of/);
    expect(() => c.inc({ account: 'x', result: 'ok' }, -1)).toThrow(/only increases/);
    expect(() => c.set({ account: 'x', result: 'ok' }, 1)).toThrow(/only incremented/);
  });

  it('keeps one 8-byte slot per series; dropping an account drops every family of it', async () => {
    const { ours, table, a } = pair();
    a.horizon.set({ account: 'x' }, 1);
    a.fired.inc({ account: 'y' });
    expect(table.find('x')!.length).toBe(1 + RESULTS.length + 1);
    table.remove('x');
    const text = await ours.metrics();
    expect(text).not.toContain('account="x"');
    expect(text).toContain('t_fired_total{account="y"} 1');
    expect(() => a.horizon.remove({ account: 'nobody' })).not.toThrow();
    expect(table.find('nobody')).toBeUndefined();
    expect(() => new AccountFamily({ name: 't_late', help: 'l', type: 'gauge', table })).toThrow(/before the first account/);
  });
});

describe('AccountTable', () => {
  it('keeps rows as views of shared slabs, and gives a removed account\'s slots to the next new one with every series absent', async () => {
    const registry = new KeeperRegistry();
    const table = new AccountTable();
    const g = new AccountFamily({ name: 't_h', help: 'h', type: 'gauge', table, registers: [registry] });
    const c = new AccountFamily({ name: 't_c_total', help: 'c', type: 'counter', table, label: { name: 'result', values: ['ok', 'error'] }, registers: [registry] });
    for (let i = 0; i < 600; i++) {
      g.set({ account: `a${i}` }, i);
      c.inc({ account: `a${i}`, result: 'error' }, 2);
    }
    // 600 rows in 3 slabs, not 600 buffers of their own.
    expect(new Set([...table.rows()].map((r) => r.values.buffer)).size).toBe(3);
    table.remove('a7');
    table.remove('a300');
    c.inc({ account: 'new-1', result: 'ok' });
    g.set({ account: 'new-2' }, 5);
    const text = await registry.metrics();
    expect(text).not.toMatch(/account="a7"|account="a300"/);
    // The new accounts have only the series set for them: nothing of the removed ones' values.
    expect(text.split('\n').filter((l) => l.includes('new-'))).toEqual(['t_h{account="new-2"} 5', 't_c_total{account="new-1",result="ok"} 1']);
    expect(text).toContain('t_h{account="a8"} 8');
    expect(text).toContain('t_c_total{account="a301",result="error"} 2');
    expect(table.size).toBe(600);
  });
});
