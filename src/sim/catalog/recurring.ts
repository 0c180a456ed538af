/**
 * A recurring HIP-4 outcome series, as the venue runs them (testnet's 15-minute binaries, mainnet's
 * daily 06:00 UTC one): one up/down outcome per period, each settling at its close, the next one
 * already listed. The state of every outcome is a pure function of venue time, so the catalog
 * stays immutable and a test on a FakeClock can jump across a settlement: before `closeMs(n)`
 * outcome n is `active`; from then on it is `settled` with every settlement milestone at its close
 * (price-linked outcomes settle at once, in one block: no separate approval step is shown) and
 * `hl_settle_fraction` `1` (Up) or `0` (Down).
 *
 * Only the simulator's `hip4_recurring` profile adds the series (catalog option `recurring`): the
 * default catalog, which other tests count, stays as it was. What settlement does to resting orders
 * and positions is the venue state's part (settlement.ts drives it, accounts.ts applies it).
 */
import type { Event, Outcome, OutcomeSettleSide, Series } from '../../venue/types.js';
import { decSub, pow10Neg } from '../../venue/decimal.js';
import { outcomeAssetId } from './asset-id.js';
import { IMAGE_BASE, MIN_NOTIONAL_USDC, QUOTE_TOKEN, fillTemplate } from './fixtures.js';

/** A period of the simulated series: testnet's shortest recurring outcome. */
export const RECURRING_PERIOD_MS = 15 * 60_000;

/** Chain ids of the series: outcome n is chain outcome `first + n` (clear of the fixtures' 410-474). */
const FIRST_CHAIN_OUTCOME = 1_000;
/** Size decimals of the series' outcomes. */
const SZ_DECIMALS = 0;
/** How many outcomes a series holds before ids would run into another range (about 10 days of 15 min). */
const MAX_OUTCOMES = 1_000;

export const RECURRING_SERIES: Series = {
  id: 'btc-up-down-15m',
  category_id: 'bitcoin',
  topic_id: 'crypto',
  name: 'BTC Up or Down, 15 minutes',
  image_url: `${IMAGE_BASE}/series/btc-up-down-15m.png`,
  providers: [{ provider: 'pyth', id: 'Crypto.BTC/USD' }],
};

const EVENT_ID = 'evt_btc_up_down_15m';
const OUTCOME_PREFIX = 'out_btc_up_down_15m_';
const RULES = 'Resolves Up if the {asset}/USD oracle price at {close_time} is at or above its price at {open_time}; otherwise Down.';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The series from the period open at `builtAtMs` on: outcome 0 opened at the quarter hour at or
 * before it and settles at the next one; outcome n settles n periods later.
 */
export class RecurringSeries {
  readonly periodMs = RECURRING_PERIOD_MS;
  /** The series' last outcome index (ids stay clear of other ranges). */
  readonly lastIndex = MAX_OUTCOMES - 1;
  readonly firstOpenMs: number;

  constructor(builtAtMs: number) {
    this.firstOpenMs = builtAtMs - (((builtAtMs % RECURRING_PERIOD_MS) + RECURRING_PERIOD_MS) % RECURRING_PERIOD_MS);
  }

  get eventId(): string {
    return EVENT_ID;
  }

  openMs(n: number): number {
    return this.firstOpenMs + n * this.periodMs;
  }

  /** Venue time at which outcome n settles (its resting orders leave the book then). */
  closeMs(n: number): number {
    return this.openMs(n + 1);
  }

  /** The index of the outcome trading at `nowMs` (the one whose period contains it). */
  currentIndex(nowMs: number): number {
    return Math.max(0, Math.min(MAX_OUTCOMES - 1, Math.floor((nowMs - this.firstOpenMs) / this.periodMs)));
  }

  outcomeId(n: number): string {
    return `${OUTCOME_PREFIX}${n}`;
  }

  /** Outcome n's index from its id, when it is one of this series listed by `nowMs` (up to the next one). */
  indexOf(id: string, nowMs: number): number | undefined {
    if (!id.startsWith(OUTCOME_PREFIX)) return undefined;
    const rest = id.slice(OUTCOME_PREFIX.length);
    if (!/^(0|[1-9]\d{0,5})$/.test(rest)) return undefined;
    const n = Number(rest);
    return n <= Math.min(this.currentIndex(nowMs) + 1, MAX_OUTCOMES - 1) ? n : undefined;
  }

  /** The chain outcome number of outcome n (its `hl_id`). */
  chainOutcome(n: number): number {
    return FIRST_CHAIN_OUTCOME + n;
  }

  /** How outcome n settles: `1` pays Up (side 0), `0` pays Down; alternating, so both are exercised. */
  settleFraction(n: number): string {
    return n % 2 === 0 ? '1' : '0';
  }

  /** What is listed at `nowMs`: the last settled outcome, the one trading, and the next one. */
  listedIndexes(nowMs: number): number[] {
    const c = this.currentIndex(nowMs);
    return [c - 1, c, c + 1].filter((n) => n >= 0 && n < MAX_OUTCOMES);
  }

  /** Outcome n as the service shows it at venue time `nowMs`. */
  outcome(n: number, nowMs: number): Outcome {
    const open = this.openMs(n);
    const close = this.closeMs(n);
    const settled = nowMs >= close;
    const chain = this.chainOutcome(n);
    const keywords = { asset: 'BTC', open_time: iso(open), close_time: iso(close) };
    const listedAt = open - this.periodMs;
    const o: Outcome = {
      id: this.outcomeId(n),
      slug: `btc-up-or-down-15m-${iso(open).slice(0, 16).replace(/[-:]/g, '').replace('T', '-')}`,
      event_id: EVENT_ID,
      title: `BTC up or down, ${iso(open)} to ${iso(close)}`,
      status: settled ? 'settled' : 'active',
      hl_question_id: String(chain),
      hl_id: String(chain),
      created_at: iso(listedAt),
      updated_at: iso(settled ? close : listedAt),
      hl_template_id: 'tpl_up_down',
      hl_keywords: keywords,
      hl_settle_fraction: settled ? this.settleFraction(n) : null,
      hl_rules: fillTemplate(RULES, keywords),
      question_id: null,
    };
    if (settled) {
      // Price-linked: initiated, approved and confirmed on chain in the same block.
      o.settlement_initiated_at = iso(close);
      o.settlement_approved_at = iso(close);
      o.settled_at = iso(close);
    }
    o.settlement = settled ? settleSides(this.settleFraction(n)) : [];
    o.hl_settlement = settled ? settleSides(this.settleFraction(n)) : [];
    o.sides = [
      { side: 0, label: 'Up', abbreviation: null, hl_asset_id: String(outcomeAssetId(chain, 0)) },
      { side: 1, label: 'Down', abbreviation: null, hl_asset_id: String(outcomeAssetId(chain, 1)) },
    ];
    o.trading = { quote: QUOTE_TOKEN, min_notional: MIN_NOTIONAL_USDC, tick_size: pow10Neg(8 - SZ_DECIMALS), lot_size: pow10Neg(SZ_DECIMALS) };
    o.providers = [{ provider: 'pyth', id: 'Crypto.BTC/USD' }];
    o.sports_market = null;
    return o;
  }

  /** The series' event at `nowMs`, with the listed outcomes nested. */
  event(nowMs: number): Event {
    return {
      id: EVENT_ID,
      slug: 'btc-up-or-down-15m',
      title: 'BTC up or down, every 15 minutes',
      start_time: iso(this.firstOpenMs),
      status: 'active',
      created_at: iso(this.firstOpenMs - this.periodMs),
      updated_at: iso(this.openMs(this.currentIndex(nowMs))),
      image_url: `${IMAGE_BASE}/events/btc-up-or-down-15m.png`,
      topic_id: 'crypto',
      category: { id: 'bitcoin', name: 'Bitcoin', image_url: `${IMAGE_BASE}/categories/crypto-bitcoin.png` },
      series: { id: RECURRING_SERIES.id, name: RECURRING_SERIES.name, image_url: RECURRING_SERIES.image_url },
      providers: [],
      outcomes: this.listedIndexes(nowMs).map((n) => this.outcome(n, nowMs)),
      questions: [],
    };
  }
}

function settleSides(side0: string): OutcomeSettleSide[] {
  return [
    { side: 0, fraction: side0 },
    { side: 1, fraction: decSub('1', side0) },
  ];
}
