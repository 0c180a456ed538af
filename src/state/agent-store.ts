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
    return (await this.loadChecked(account, agentName)).agent;
  }

  /**
   * The stored agent, or none; `problem` names a file that exists but cannot be used (not JSON, not
   * an agent record): a corrupt file must not be passed over in silence.
   */
  async loadChecked(account: string, agentName: string): Promise<{ agent?: StoredAgent; problem?: string }> {
    const file = this.path(account, agentName);
    const text = await readFileIfExists(file);
    if (text === undefined) return {};
    let why: string;
    try {
      const parsed = Schema.safeParse(JSON.parse(text));
      if (parsed.success) return { agent: parsed.data };
      why = 'not a stored agent record';
    } catch {
      why = 'not JSON';
    }
    return { problem: `${file}: ${why}` };
  }

  async save(agent: StoredAgent): Promise<void> {
    await writeFileAtomic(this.path(agent.account, agent.agentName), `${JSON.stringify(agent)}\n`, 0o600);
  }
}
