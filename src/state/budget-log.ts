import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from './atomic-file.js';

/**
 * The request budget's recent admissions per scope, as counts per second: `[atMs, count]`, each
 * bucket at its end (never past the time it was taken), ascending. Why counts: a keeper at 10,000
 * accounts holds about 12,000 admissions in its windows, and writing each one every 2 s (200 KB of
 * JSON) took 7.5 ms of CPU a save; a second's admissions counted at its end hold a carried window
 * at most a second longer than they would, the safe side.
 */
export type RecentCounts = Record<string, Array<[atMs: number, count: number]>>;

const Counts = z.record(z.string(), z.array(z.tuple([z.number(), z.number().int().positive()])));
/** The file, and the one an older keeper wrote (every admission's time): still read, as counts of one. */
const Schema = z.union([z.object({ savedAtMs: z.number(), counts: Counts }), z.object({ savedAtMs: z.number(), scopes: z.record(z.string(), z.array(z.number())) })]);

/** The request budget's recent admissions, so a restarted keeper paces itself (scheduler.importRecent). */
export class BudgetLog {
  constructor(private readonly file: string | undefined) {}

  static fileIn(stateDir: string): string {
    return join(stateDir, 'budget.json');
  }

  /** The recent admissions; `problem` names a file that exists but cannot be read as one. */
  async load(): Promise<{ counts: RecentCounts; problem?: string }> {
    if (!this.file) return { counts: {} };
    try {
      const text = await readFileIfExists(this.file);
      if (text === undefined) return { counts: {} };
      const parsed = Schema.safeParse(JSON.parse(text));
      if (!parsed.success) return { counts: {}, problem: `${this.file}: not a budget log` };
      const d = parsed.data;
      if ('counts' in d) return { counts: d.counts };
      return { counts: Object.fromEntries(Object.entries(d.scopes).map(([k, times]) => [k, times.map((t): [number, number] => [t, 1])])) };
    } catch (e) {
      return { counts: {}, problem: `${this.file}: ${(e as Error).message}` };
    }
  }

  async save(counts: RecentCounts, nowMs: number): Promise<void> {
    if (!this.file) return;
    await writeFileAtomic(this.file, JSON.stringify({ savedAtMs: nowMs, counts }), 0o600);
  }
}
