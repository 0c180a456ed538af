import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from './atomic-file.js';

/**
 * Generated agent keys, one file per (account, agent name), mode 0600 in the state directory, so a
 * restart reuses the approved agent instead of approving a new one each time.
 */
export interface StoredAgent {
  account: string;
  agentName: string;
  /** The master (main account) that approved it. */
  masterAddress: string;
  agentAddress: string;
  privateKey: string;
  approvedAtMs: number;
  validUntilMs: number;
}

const Schema = z.object({
  account: z.string(),
  agentName: z.string(),
  masterAddress: z.string(),
  agentAddress: z.string(),
  privateKey: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  approvedAtMs: z.number(),
  validUntilMs: z.number(),
});

export class AgentStore {
  constructor(private readonly dir: string) {}

  private path(account: string, agentName: string): string {
    // Names are validated as label-safe in the config; the agent name may hold spaces.
    return join(this.dir, 'agents', `${account}.${agentName.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`);
  }

  async load(account: string, agentName: string): Promise<StoredAgent | undefined> {
    const text = await readFileIfExists(this.path(account, agentName));
    if (text === undefined) return undefined;
    try {
      const parsed = Schema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  async save(agent: StoredAgent): Promise<void> {
    await writeFileAtomic(this.path(agent.account, agent.agentName), `${JSON.stringify(agent)}\n`, 0o600);
  }
}
