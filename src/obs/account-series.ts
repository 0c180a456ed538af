import { Registry } from 'prom-client';
import { aTurnOfTheLoop } from './loop-turn.js';

/**
 * Per-account series without per-series objects. prom-client keeps a hash entry, a labels object
 * and a key string for every series; at 10,000 accounts the 22 per-account series cost about
 * 25 MB of heap that lives as long as the process. Here each account has one Float64Array row
 * (a slot per series) and every family reads its slots at scrape time, so the only lasting cost
 * is 8 bytes a series; the label objects exist for the length of one scrape.
 *
 * The families speak the part of prom-client's Gauge/Counter API the keeper uses (`set`, `inc`,
 * `remove`) and register with a prom-client Registry like any metric (it reads `name`, `help`,
 * `type` and `get()`). A scrape through `KeeperRegistry` writes their lines directly instead of
 * building a labels object per series (a 10,000-account scrape made 250,000 of them, and with a
 * heap limit that scrape was what ran out of memory); the property test holds the text to
 * prom-client's own.
 */

/** A slot that was never set: the series is absent from the scrape (as with prom-client). */
const ABSENT = Number.NaN;

/** prom-client's escaping of a label value (registry.js escapeLabelValue). */
function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** prom-client's rendering of a sample value (util.js getValueAsString). */
function valueText(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

/** An account's row: its slots, and its `account="<escaped name>"` label, made once for the text path. */
interface Row {
  values: Float64Array;
  label: string;
}

/**
 * Rows are views of slabs of this many rows. A Float64Array of its own per row cost an
 * ArrayBuffer and a small block outside the heap each: 1.4 KB of RSS a row of 40 slots against
 * 0.8 to 1.0 KB as views of one slab (10,000 rows, a process of its own).
 */
const ROWS_PER_SLAB = 256;

export class AccountTable {
  private readonly rowsByName = new Map<string, Row>();
  private width = 0;
  private sealed = false;
  /** The newest slab and how many of its rows are handed out; rows of removed accounts, for reuse. */
  private slab: Float64Array | null = null;
  private slabUsed = ROWS_PER_SLAB;
  private readonly freeRows: Float64Array[] = [];

  /** Reserves `n` slots in every row; only before the first row exists. */
  reserve(n: number): number {
    if (this.sealed) throw new Error('AccountTable: slots are reserved before the first account');
    const first = this.width;
    this.width += n;
    return first;
  }

  /** The account's row, created (every slot absent) on first use. */
  row(account: string): Float64Array {
    let r = this.rowsByName.get(account);
    if (!r) {
      this.sealed = true;
      r = { values: this.newRow(), label: `account="${escapeLabelValue(account)}"` };
      this.rowsByName.set(account, r);
    }
    return r.values;
  }

  /** Every slot absent: a removed account's row, or the next of the newest slab. */
  private newRow(): Float64Array {
    const reused = this.freeRows.pop();
    if (reused) return reused.fill(ABSENT);
    if (this.slab === null || this.slabUsed === ROWS_PER_SLAB) {
      this.slab = new Float64Array(this.width * ROWS_PER_SLAB).fill(ABSENT);
      this.slabUsed = 0;
    }
    const at = this.slabUsed++ * this.width;
    return this.slab.subarray(at, at + this.width);
  }

  /** The account's row if it has one (reading never creates a row). */
  find(account: string): Float64Array | undefined {
    return this.rowsByName.get(account)?.values;
  }

  remove(account: string): void {
    const r = this.rowsByName.get(account);
    if (!r) return;
    this.rowsByName.delete(account);
    // Its slots go to the next account new to the table (rows are reached only by name, here).
    this.freeRows.push(r.values);
  }

  /** Each account's name, label and slots, in the order the accounts came. */
  entries(): IterableIterator<[string, Row]> {
    return this.rowsByName.entries();
  }

  /** Each account's label and slots, in the order the accounts came (no [name, row] pair made per account). */
  rows(): IterableIterator<Row> {
    return this.rowsByName.values();
  }

  get size(): number {
    return this.rowsByName.size;
  }
}

interface MetricValue {
  labels: Record<string, string>;
  value: number;
}

/** A piece's first size; it grows (doubling) when a line would not fit. */
const PIECE_BYTES = 32 * 1024;

/**
 * Writes `s` into `buf` at `off` as UTF-8 and returns the offset after it. An ASCII string (every
 * name, label and value the keeper writes, unless an account's name is not) is copied a byte at a
 * time: a scrape writes four short strings a line, and through `Buffer.write` the call itself was
 * most of the cost (42% of a 10,000-account scrape's CPU, `npm run bench:micro -- --only scrape`).
 * Anything else goes through `Buffer.write`, from the start of the string. The caller has made room.
 */
function putText(buf: Buffer, s: string, off: number): number {
  const n = s.length;
  for (let k = 0; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0x80) return off + buf.write(s, off);
    buf[off + k] = c;
  }
  return off + n;
}

/**
 * The bytes of one piece of a family's text, written part by part into one buffer (sample lines
 * by `putText`, the HELP and TYPE lines by Buffer's `write`), then reused. A piece is handed out as
 * an exact copy, or lent: a view of the buffer itself, good until the next piece is written
 * (KeeperRegistry.metricsPieces says who may borrow). Room is checked for the most a string can
 * take in UTF-8 (3 bytes a UTF-16 unit), so no write truncates.
 */
class PieceWriter {
  private buf = Buffer.allocUnsafe(PIECE_BYTES);
  private off = 0;

  /** `lends`: `take` hands out views of the buffer (one writer for a whole scrape), not copies. */
  constructor(private readonly lends: boolean) {}

  write(s: string): void {
    this.room(s.length * 3);
    this.off += this.buf.write(s, this.off);
  }

  /** One sample line: `<a><b><c><value>\n`, the value ASCII (valueText). */
  line(a: string, b: string, c: string, value: string): void {
    this.room((a.length + b.length + c.length) * 3 + value.length + 1);
    const buf = this.buf;
    let off = putText(buf, a, this.off);
    off = putText(buf, b, off);
    off = putText(buf, c, off);
    off = putText(buf, value, off);
    buf[off++] = 0x0a;
    this.off = off;
  }

  empty(): boolean {
    return this.off === 0;
  }

  /** The bytes written since the last take: lent (a view, overwritten by the next piece) or copied out. */
  take(): Buffer {
    const piece = this.buf.subarray(0, this.off);
    this.off = 0;
    return this.lends ? piece : Buffer.from(piece);
  }

  private room(bytes: number): void {
    if (this.off + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.off + bytes));
    this.buf.copy(next, 0, 0, this.off);
    this.buf = next;
  }
}

interface FamilyOptions<L extends string> {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  table: AccountTable;
  /** A second label and its fixed values (e.g. `result`: ok, rate_limited, ...); one slot each. */
  label?: { name: L; values: readonly string[] };
  /**
   * Run before the values are read, at every scrape (derived gauges refresh here). It may do its
   * work in steps (return a generator): a scrape written in pieces gives the event loop a turn
   * between two steps (KeeperRegistry.metricsPieces); every other reader runs them all at once.
   */
  beforeCollect?: () => Iterable<unknown> | void;
  registers?: Registry[];
}

type Labels<L extends string> = { account: string } & Partial<Record<L, string>>;

/** One metric family labelled by `account` (and optionally one more fixed label). */
export class AccountFamily<L extends string = never> {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  /** prom-client's registry sums per-worker values with this in cluster mode. */
  readonly aggregator = 'sum';
  private readonly table: AccountTable;
  private readonly first: number;
  private readonly label: { name: L; values: readonly string[] } | undefined;
  private readonly beforeCollect: (() => Iterable<unknown> | void) | undefined;

  constructor(opts: FamilyOptions<L>) {
    this.name = opts.name;
    this.help = opts.help;
    this.type = opts.type;
    this.table = opts.table;
    this.label = opts.label;
    this.beforeCollect = opts.beforeCollect;
    this.first = opts.table.reserve(opts.label ? opts.label.values.length : 1);
    for (const r of opts.registers ?? []) {
      if (r instanceof KeeperRegistry) r.addAccountFamily(this as AccountFamily<string>);
      else r.registerMetric(this as never);
    }
  }

  private slot(labels: Labels<L>): number {
    if (!this.label) return this.first;
    const v = labels[this.label.name];
    const i = v === undefined ? -1 : this.label.values.indexOf(v);
    if (i < 0) throw new Error(`${this.name}: label ${this.label.name}=${String(v)} is not one of ${this.label.values.join(', ')}`);
    return this.first + i;
  }

  set(labels: Labels<L>, value: number): void {
    if (this.type === 'counter') throw new Error(`${this.name}: a counter is only incremented`);
    this.table.row(labels.account)[this.slot(labels)] = value;
  }

  /** Counters: adds `by` (0 creates the series at 0). Gauges: adds to the value (absent counts as 0). */
  inc(labels: Labels<L>, by = 1): void {
    if (this.type === 'counter' && !(by >= 0)) throw new Error(`${this.name}: a counter only increases`);
    const row = this.table.row(labels.account);
    const i = this.slot(labels);
    row[i] = (Number.isNaN(row[i]!) ? 0 : row[i]!) + by;
  }

  /** Drops the account's series of this family (the row stays for the others). */
  remove(labels: { account: string }): void {
    const n = this.label ? this.label.values.length : 1;
    this.table.find(labels.account)?.fill(ABSENT, this.first, this.first + n);
  }

  /** The family's exposition, as prom-client's registry would write it. */
  text(): string {
    return Buffer.concat([...this.textPieces()]).toString('utf8').slice(0, -1);
  }

  /**
   * `text()` and a newline after it, as bytes in pieces of at most `linesPerPiece` lines, each made
   * when the one before has been taken. Each line is written straight into the piece's bytes, its
   * parts one after the other (the family's name, the row's label, the second label, the value):
   * no string is made for a line, only the value's text. Built as strings (a line's template
   * added to the piece, the piece flattened and encoded at the end), a 10,000-account scrape of
   * 18 MB allocated 111 MB of heap, now 23 MB. Alone it costs more CPU (217 against 157 to 175 ms,
   * `npm run bench:micro -- --only scrape`: four writes a line); inside the keeper the garbage it
   * no longer makes is collected while re-arms wait. What that does to late re-arms at 50,000
   * accounts is within the runs' spread (0, 26 and 52 late: docs/benchmarks.md, 2026-12-04).
   * A piece is a few tens of KB outside the heap; the buffer it is written in is reused.
   */
  *textPieces(linesPerPiece?: number): Generator<Buffer> {
    this.refresh();
    yield* this.piecesAsTheyAre(linesPerPiece);
  }

  /**
   * `textPieces` without running `beforeCollect` (KeeperRegistry.metricsPieces runs its steps
   * first). Written by `w`: a lending writer (a scrape's one) hands out views of its buffer, each
   * good until the next is asked for; by default the pieces are copies.
   */
  *piecesAsTheyAre(linesPerPiece = 512, w = new PieceWriter(false)): Generator<Buffer> {
    w.write(`# HELP ${this.name} ${this.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${this.name} ${this.type}\n`);
    let lines = 2;
    const n = this.label ? this.label.values.length : 1;
    const suffixes = this.label ? this.label.values.map((v) => `,${this.label!.name}="${escapeLabelValue(v)}"} `) : ['} '];
    const open = `${this.name}{`;
    for (const row of this.table.rows()) {
      const values = row.values;
      for (let i = 0; i < n; i++) {
        const value = values[this.first + i]!;
        if (Number.isNaN(value)) continue;
        w.line(open, row.label, suffixes[i]!, valueText(value));
        if (++lines >= linesPerPiece) {
          yield w.take();
          lines = 0;
        }
      }
    }
    if (!w.empty()) yield w.take();
  }

  /** `beforeCollect`'s steps, one at a time (the caller may give the event loop a turn between two). */
  *refreshSteps(): Generator<void> {
    const steps = this.beforeCollect?.();
    if (steps) for (const _ of steps) yield;
  }

  private refresh(): void {
    for (const _ of this.refreshSteps());
  }

  get(): { name: string; help: string; type: string; values: MetricValue[]; aggregator: string } {
    this.refresh();
    const values: MetricValue[] = [];
    const n = this.label ? this.label.values.length : 1;
    for (const [account, { values: row }] of this.table.entries()) {
      for (let i = 0; i < n; i++) {
        const value = row[this.first + i]!;
        if (Number.isNaN(value)) continue;
        values.push({ labels: this.label ? { account, [this.label.name]: this.label.values[i]! } : { account }, value });
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

/**
 * prom-client's Registry plus the account families, which it writes by their own text path first
 * (the first family's beforeCollect refreshes the gauges every other metric reads), then every
 * other metric through prom-client unchanged. Only prom-client's public API is used.
 */
export class KeeperRegistry extends Registry {
  private readonly families: Array<AccountFamily<string>> = [];

  addAccountFamily(f: AccountFamily<string>): void {
    if (this.getSingleMetric(f.name) || this.families.some((x) => x.name === f.name)) throw new Error(`A metric with the name ${f.name} has already been registered.`);
    this.families.push(f);
  }

  /** The exposition: `metricsPieces` joined (one layout for the string and for /metrics' written body). */
  override async metrics(): Promise<string> {
    const pieces: Buffer[] = [];
    for await (const p of this.metricsPieces()) pieces.push(p);
    return Buffer.concat(pieces).toString('utf8');
  }

  /**
   * The exposition as pieces of bytes made one after the other, for a response written as it is
   * made (http-server.ts): the families' pieces (`textPieces`), a blank line between two families,
   * then prom-client's own metrics. The event loop gets a turn before every piece after the first,
   * not only between families: at 50,000 accounts a scrape is 70 MB of text, its largest family
   * several MB, and with a reader as fast as the socket the response never waits for 'drain', so a
   * family made in one turn held every re-arm timer due meanwhile (up to 4.4 s with the CPU shared,
   * and the queue took a minute to catch up). A piece is a fraction of a millisecond of work.
   * A scrape then holds a piece or two
   * and what the socket has not sent. Made whole before the first byte was written (strings, then
   * the Buffers the socket made of them), a 10,000-account scrape (10.8 MB) raised the heap by
   * 25 MB and RSS by 55 to 58 MB, with a client in the same process reading after 200 ms.
   *
   * `lent`: the families' pieces are views of one buffer the whole scrape writes in, each good
   * only until the next piece is asked for (the socket writer waits until each has been written,
   * http-server.ts). Copied, a piece is a Buffer outside the heap that lives until the collector
   * finds it: three 10,000-account scrapes (18 MB each) of a process serving nothing else, read by
   * curl, raised its external memory by up to 4 MB and its peak RSS by 14 to 15 MB; lent, by
   * nothing and 10.5 to 11 MB (at 50,000 accounts: 23 against 19 MB). Inside the bench's keeper the
   * difference is within the spread of its runs.
   */
  async *metricsPieces({ lent = false }: { lent?: boolean } = {}): AsyncGenerator<Buffer> {
    if (this.contentType !== Registry.PROMETHEUS_CONTENT_TYPE) throw new Error('KeeperRegistry writes the Prometheus text format only');
    let blankDue = false;
    let first = true;
    const lender = lent ? new PieceWriter(true) : undefined;
    for (const f of this.families) {
      if (blankDue) yield BLANK_LINE;
      for (const _ of f.refreshSteps()) await aTurnOfTheLoop();
      for (const piece of f.piecesAsTheyAre(undefined, lender)) {
        if (!first) await aTurnOfTheLoop();
        first = false;
        yield piece;
      }
      blankDue = true;
    }
    const rest = await super.metrics();
    if (rest.trim() === '') return;
    if (blankDue) yield BLANK_LINE;
    yield Buffer.from(`${rest.slice(0, -1)}\n`, 'utf8');
  }
}

/** The blank line between two families (written as often as needed: the socket only reads it). */
const BLANK_LINE = Buffer.from('\n');
