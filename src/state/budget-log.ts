import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from './atomic-file.js';

/** The request budget's recent admissions, so a restarted keeper paces itself (scheduler.importRecent). */
const Schema = z.object({ savedAtMs: z.number(), scopes: z.record(z.string(), z.array(z.number())) });

export class BudgetLog {
  constructor(private readonly file: string | undefined) {}

  static fileIn(stateDir: string): string {
    return join(stateDir, 'budget.json');
  }

  /** The recent admissions; `problem` names a file that exists but cannot be read as one. */
  async load(): Promise<{ scopes: Record<string, number[]>; problem?: string }> {
    if (!this.file) return { scopes: {} };
    try {
      const text = await readFileIfExists(this.file);
      if (text === undefined) return { scopes: {} };
      const parsed = Schema.safeParse(JSON.parse(text));
      return parsed.success ? { scopes: parsed.data.scopes } : { scopes: {}, problem: `${this.file}: not a budget log` };
    } catch (e) {
      return { scopes: {}, problem: `${this.file}: ${(e as Error).message}` };
    }
  }

  async save(scopes: Record<string, number[]>, nowMs: number): Promise<void> {
    if (!this.file) return;
    await writeFileAtomic(this.file, JSON.stringify({ savedAtMs: nowMs, scopes }), 0o600);
  }
}
