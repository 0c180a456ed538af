/**
 * The markets the simulated CLOB lists: a few binary markets with their two outcome tokens, tick
 * size, neg-risk flag and fee, enough for a bot built on the venue's SDK to price, sign and rest
 * orders (`createOrder` reads `/tick-size`, `/neg-risk` and `/fee-rate` first). Token ids are the
 * venue's kind (256-bit decimal strings), derived from a name so they are the same in every run.
 */
import { keccak256, stringToHex, type Hex } from 'viem';

export interface ClobToken {
  /** Decimal string of a uint256, as the venue writes token ids. */
  tokenId: string;
  outcome: 'Yes' | 'No';
}

export interface ClobMarket {
  slug: string;
  /** The market's condition id (`market` in an open order). */
  conditionId: Hex;
  question: string;
  /** Orders on a neg-risk market are signed for the neg-risk exchange. */
  negRisk: boolean;
  /** '0.1' | '0.01' | '0.001' | '0.0001' */
  tickSize: string;
  baseFeeBps: number;
  /** The smallest order in shares (the venue's `minimum_order_size`; 5 on most markets). */
  minOrderSize: number;
  tokens: [ClobToken, ClobToken];
}

function tokenId(slug: string, outcome: string): string {
  return BigInt(keccak256(stringToHex(`dms-keeper-sim:${slug}:${outcome}`))).toString();
}

function market(slug: string, question: string, negRisk: boolean, tickSize = '0.01'): ClobMarket {
  return {
    slug,
    conditionId: keccak256(stringToHex(`dms-keeper-sim:${slug}`)),
    question,
    negRisk,
    tickSize,
    baseFeeBps: 0,
    minOrderSize: 5,
    tokens: [
      { tokenId: tokenId(slug, 'Yes'), outcome: 'Yes' },
      { tokenId: tokenId(slug, 'No'), outcome: 'No' },
    ],
  };
}

/** The fixture markets: one plain, one neg-risk, one with a finer tick. */
export function fixtureMarkets(): ClobMarket[] {
  return [
    market('sim-rain-tomorrow', 'Will it rain in the simulator tomorrow?', false),
    market('sim-election-a', 'Will candidate A win the simulated election?', true),
    market('sim-fine-tick', 'Will the fine-tick market resolve Yes?', false, '0.001'),
  ];
}

export class MarketIndex {
  private readonly byToken = new Map<string, { market: ClobMarket; token: ClobToken }>();

  constructor(readonly markets: ClobMarket[] = fixtureMarkets()) {
    for (const m of markets) for (const t of m.tokens) this.byToken.set(t.tokenId, { market: m, token: t });
  }

  token(tokenId: string): { market: ClobMarket; token: ClobToken } | undefined {
    return this.byToken.get(tokenId);
  }
}
