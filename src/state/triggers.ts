import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from './atomic-file.js';

/**
 * Fired scheduled cancels per account per UTC day (the venue allows 10). Persisted so a restart
 * does not forget how much of today's budget is spent. The day key is the venue's UTC date.
 */
export function utcDay(venueMs: number): string {
  return new Date(venueMs).toISOString().slice(0, 10);
}

const FileSchema = z.object({ day: z.string(), counts: z.record(z.string(), z.number().int().nonnegative()) });

export class TriggerCounter {
  private day: string;
  private counts = new Map<string, number>();

  constructor(
    private readonly file: string | undefined,
    nowVenueMs: number,
  ) {
    this.day = utcDay(nowVenueMs);
  }

  static fileIn(stateDir: string): string {
    return join(stateDir, 'triggers.json');
  }

  /** Loads today's counts; a file from another day or an unreadable one starts at zero. */
  async load(): Promise<{ ok: boolean; problem?: string }> {
    if (!this.file) return { ok: true };
    try {
      const text = await readFileIfExists(this.file);
      if (text === undefined) return { ok: true };
      const parsed = FileSchema.safeParse(JSON.parse(text));
      if (!parsed.success) return { ok: false, problem: `${this.file}: not a trigger count file; starting from zero` };
      if (parsed.data.day === this.day) this.counts = new Map(Object.entries(parsed.data.counts));
      return { ok: true };
    } catch (e) {
      return { ok: false, problem: `${this.file}: ${(e as Error).message}; starting from zero` };
    }
  }

  get(account: string): number {
    return this.counts.get(account) ?? 0;
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
    await writeFileAtomic(this.file, `${JSON.stringify({ day: this.day, counts: Object.fromEntries(this.counts) })}\n`, 0o600);
  }
}
