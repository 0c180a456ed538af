import type { AccountConfig, Config } from '../config/types.js';
import { heartbeatHorizonSeconds, preRearmHorizonSeconds } from '../plan/horizon.js';
import { POLYMARKET_SWITCH_FACTS } from '../venue/polymarket/switch-facts.js';

/**
 * check-config's plan of each CLOB venue (config `venues:`), apart from the default venue's: its
 * accounts heartbeat at the venue's period, never stretched, and read their open orders at
 * `watch.orders_every_seconds`, all on the venue's own budget (`venues.<name>.rate_limit`).
 */
export interface ClobVenuePlan {
  name: string;
  accounts: number;
  heartbeatEverySeconds: number;
  /** The horizon just before each beat (timeout minus period) and the minimum it must keep. */
  preBeatHorizonSeconds: number;
  minHorizonSeconds: number;
  beatsPerMinute: number;
  readsPerMinute: number;
  budgetPerMinute: number;
  /** Beats and reads fit the venue's budget: every horizon holds. */
  holds: boolean;
}

/** `mine`: the accounts this instance covers (check-config-plan.ts, accountsCovered), of every venue. */
export function clobVenuePlans(config: Pick<Config, 'venues' | 'watch'>, mine: readonly AccountConfig[]): ClobVenuePlan[] {
  return config.venues.map((v) => {
    const accounts = mine.filter((a) => a.venue === v.name).length;
    const beatsPerMinute = accounts * (60 / v.heartbeatEverySeconds);
    const readsPerMinute = accounts * (60 / config.watch.ordersEverySeconds);
    const budgetPerMinute = (v.rateLimit.requests / v.rateLimit.perSeconds) * 60;
    const h = heartbeatHorizonSeconds(POLYMARKET_SWITCH_FACTS.timeoutMs!, v.heartbeatEverySeconds, v.minHorizonSeconds);
    return {
      name: v.name,
      accounts,
      heartbeatEverySeconds: v.heartbeatEverySeconds,
      preBeatHorizonSeconds: preRearmHorizonSeconds(h),
      minHorizonSeconds: v.minHorizonSeconds,
      beatsPerMinute,
      readsPerMinute,
      budgetPerMinute,
      holds: beatsPerMinute + readsPerMinute <= budgetPerMinute,
    };
  });
}

/** The printout's lines for the CLOB venues (none without `venues:`). */
export function formatClobPlans(plans: readonly ClobVenuePlan[]): string[] {
  return plans.flatMap((p) => [
    '',
    `venue ${p.name} (polymarket_clob): ${p.accounts} account(s), a heartbeat every ${p.heartbeatEverySeconds} s (horizon ${p.preBeatHorizonSeconds} s before each beat, minimum ${p.minHorizonSeconds} s)`,
    `  requests: ${Math.round(p.beatsPerMinute)} heartbeats + ${Math.round(p.readsPerMinute)} order reads per minute of ${Math.round(p.budgetPerMinute)} (${p.holds ? 'fits' : 'DOES NOT FIT: heartbeats would wait and horizons fall'})`,
  ]);
}
