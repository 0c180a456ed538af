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

  async load(): Promise<Record<string, number[]>> {
    if (!this.file) return {};
    try {
      const text = await readFileIfExists(this.file);
      if (text === undefined) return {};
      const parsed = Schema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data.scopes : {};
    } catch {
      return {};
    }
  }

  async save(scopes: Record<string, number[]>, nowMs: number): Promise<void> {
    if (!this.file) return;
    await writeFileAtomic(this.file, JSON.stringify({ savedAtMs: nowMs, scopes }), 0o600);
  }
}
