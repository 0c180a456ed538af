import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from './atomic-file.js';

/**
 * Fired scheduled cancels per account per UTC day (the venue allows 10), and the last one that fired
 * with what it left (`/status`'s `last_cancel_fired`). Persisted so a restart does not forget how much
 * of today's budget is spent, nor what fired. The day key is the venue's UTC date.
 */
export function utcDay(venueMs: number): string {
  return new Date(venueMs).toISOString().slice(0, 10);
}

/** The last scheduled cancel that fired on an account, as `/status` shows it. */
export interface LastCancelFired {
  /** Venue time of the deadline that fired. */
  at: string;
  /** Orders the venue cancelled, as far as the keeper saw them (before minus after); null if unknown. */
  orders_cancelled: number | null;
  /** Positions left open (a dead man's switch cancels orders; it does not flatten positions). */
  positions_open: number | null;
  position_value_usdc: string | null;
  unrealized_pnl_usdc: string | null;
  triggers_today: number;
}

const count = z.number().int().nonnegative();
const FiredSchema = z.object({
  at: z.string(),
  orders_cancelled: count.nullable(),
  positions_open: count.nullable(),
  position_value_usdc: z.string().nullable(),
  unrealized_pnl_usdc: z.string().nullable(),
  triggers_today: count,
});
// `last_fired` came later: a file without it loads (and an older keeper ignores it). It is read
// entry by entry, so one bad entry costs only itself, never the day's counts.
const FileSchema = z.object({ day: z.string(), counts: z.record(z.string(), count), last_fired: z.record(z.string(), z.unknown()).optional() });

export class TriggerCounter {
  private day: string;
  private counts = new Map<string, number>();
  /** Not per day: the last fired cancel stays the last one past 00:00 UTC. */
  private fired = new Map<string, LastCancelFired>();

  constructor(
    private readonly file: string | undefined,
    nowVenueMs: number,
  ) {
    this.day = utcDay(nowVenueMs);
  }

  static fileIn(stateDir: string): string {
    return join(stateDir, 'triggers.json');
  }

  /** Loads today's counts and the last fired cancels; a file from another day or an unreadable one starts at zero. */
  async load(): Promise<{ ok: boolean; problem?: string }> {
    if (!this.file) return { ok: true };
    try {
      const text = await readFileIfExists(this.file);
      if (text === undefined) return { ok: true };
      const parsed = FileSchema.safeParse(JSON.parse(text));
      if (!parsed.success) return { ok: false, problem: `${this.file}: not a trigger count file; starting from zero` };
      if (parsed.data.day === this.day) this.counts = new Map(Object.entries(parsed.data.counts));
      const bad: string[] = [];
      for (const [account, entry] of Object.entries(parsed.data.last_fired ?? {})) {
        const f = FiredSchema.safeParse(entry);
        if (f.success) this.fired.set(account, f.data);
        else bad.push(account);
      }
      if (bad.length > 0) return { ok: false, problem: `${this.file}: malformed last_fired for ${bad.join(', ')}; ignored` };
      return { ok: true };
    } catch (e) {
      return { ok: false, problem: `${this.file}: ${(e as Error).message}; starting from zero` };
    }
  }

  get(account: string): number {
    return this.counts.get(account) ?? 0;
  }

  lastFired(account: string): LastCancelFired | null {
    return this.fired.get(account) ?? null;
  }

  /** Keeps what a fired cancel left; persists. Throws StateWriteError when the disk refuses (it stays in memory). */
  async recordFired(account: string, fired: LastCancelFired): Promise<void> {
    this.fired.set(account, fired);
    await this.save();
  }

  currentDay(): string {
    return this.day;
  }

  /** Counts one fired cancel; persists. Throws StateWriteError when the disk refuses (the count in memory stays). */
  async record(account: string, nowVenueMs: number): Promise<number> {
    this.rollIfNewDay(nowVenueMs);
    const n = this.get(account) + 1;
    this.counts.set(account, n);
    await this.save();
    return n;
  }

  /** At 00:00 UTC (or on the first event of a new day): every count starts again. */
  rollIfNewDay(nowVenueMs: number): boolean {
    const day = utcDay(nowVenueMs);
    if (day === this.day) return false;
    this.day = day;
    this.counts.clear();
    return true;
  }

  async save(): Promise<void> {
    if (!this.file) return;
    const file = { day: this.day, counts: Object.fromEntries(this.counts), last_fired: Object.fromEntries(this.fired) };
    await writeFileAtomic(this.file, `${JSON.stringify(file)}\n`, 0o600);
  }
}
