import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from '../state/atomic-file.js';

/**
 * A fleet instance's last view (`shard.fleet`): the membership it last read and the accounts it
 * holds, each with its agent slot. Written whenever either changes, read at start: an instance
 * that restarts while Redis is away keeps protecting what it held (src/fleet/fleet.ts).
 */
export interface FleetRecord {
  instance: string;
  members: string[];
  /** Account name -> agent slot. */
  held: Record<string, number>;
}

const Schema = z.object({
  instance: z.string(),
  members: z.array(z.string()),
  held: z.record(z.string(), z.int().min(0).max(15)),
});

export class FleetFile {
  constructor(readonly path: string) {}

  static fileIn(stateDir: string): string {
    return join(stateDir, 'fleet.json');
  }

  /** The record, none (no file yet), or `problem` naming a file that exists but cannot be used. */
  async load(): Promise<{ record?: FleetRecord; problem?: string }> {
    const text = await readFileIfExists(this.path);
    if (text === undefined) return {};
    try {
      const parsed = Schema.safeParse(JSON.parse(text));
      if (parsed.success) return { record: parsed.data };
      return { problem: `${this.path}: not a fleet record` };
    } catch {
      return { problem: `${this.path}: not JSON` };
    }
  }

  save(record: FleetRecord): Promise<void> {
    return writeFileAtomic(this.path, `${JSON.stringify(record)}\n`);
  }
}
