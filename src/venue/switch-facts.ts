/**
 * What the core needs to know about an account's venue's dead man's switch, as data: the switch
 * (switch/switch-machine.ts) and the plan (plan/) take it as a parameter and import no venue facts,
 * so a second venue (another minimum lead, another daily limit, another kind of switch) is another
 * value, not another import through every layer. The port hands it out (VenuePort.switchFacts); the
 * one venue we have is `HYPERLIQUID_SWITCH_FACTS` in facts.ts.
 */

/**
 * How the venue's switch works: `scheduled_cancel`, a cancel-all at a time we keep pushing out
 * (Hyperliquid's scheduleCancel); `heartbeat`, a cancel-all the venue fires by itself when no
 * heartbeat has reached it for `timeoutMs` (Polymarket's CLOB). On a heartbeat venue the deadline
 * is not ours to choose: every accepted beat sets it to the beat plus the timeout, and a silent
 * bot's "cancel soon" is simply to stop beating.
 */
export type SwitchKind = 'scheduled_cancel' | 'heartbeat';

export interface VenueSwitchFacts {
  readonly kind: SwitchKind;
  /** The venue refuses a switch deadline less than this far ahead of its own clock. */
  readonly minLeadMs: number;
  /** Fired switches allowed per account per UTC day. */
  readonly maxTriggersPerUtcDay: number;
  /** How long to wait after the venue says the address's action budget is spent. */
  readonly addressBudgetExhaustedIntervalMs: number;
  /** How long the venue refuses a new agent's requests after it replaced another. */
  readonly pendingAgentRemovalMs: number;
  /** `heartbeat`: how long after the last accepted beat the venue cancels every order (absent on `scheduled_cancel`). */
  readonly timeoutMs?: number;
}

/** The default venue's name (the config's top-level `venue:`): the `venue` of its accounts in /status and the metrics. */
export const DEFAULT_VENUE_NAME = 'hyperliquid';

/** Whether the venue's switch is a heartbeat (its deadline is the last accepted beat plus `timeoutMs`). */
export function isHeartbeatSwitch(f: Pick<VenueSwitchFacts, 'kind'>): boolean {
  return f.kind === 'heartbeat';
}
