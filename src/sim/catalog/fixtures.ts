/**
 * The simulator's fixture catalog: a small but realistic venue (politics, crypto, sports) chosen so
 * that every nullable and omitted-key rule of the spec (parts 2 and 3) occurs at least once. Tests
 * of the keeper and of the catalog routes depend on these shapes, so the data is deterministic: a
 * pure function of the `nowMs` it is built at, with every timestamp an offset from that instant.
 *
 * Chain identifiers (`hl_*`) are invented but internally consistent; `hl_asset_id` is the venue's
 * HIP-4 asset id of the side, `100000000 + 10 * outcome + side` (asset-id.ts).
 */
import type {
  Category,
  Contest,
  Event,
  EventParticipant,
  ExternalID,
  LifecycleStatus,
  MarketTemplate,
  Named,
  Outcome,
  OutcomeSettleSide,
  OutcomeSide,
  Participant,
  PriceTarget,
  Question,
  Series,
  SportsMarket,
  Topic,
} from '../../venue/types.js';
import { decSub, pow10Neg } from '../../venue/decimal.js';
import { outcomeAssetId } from './asset-id.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** `.invalid` is reserved (RFC 2606): the URLs are absolute, as the spec requires, yet never resolve. */
export const IMAGE_BASE = 'https://static.sim.dms-keeper.invalid';
export const QUOTE_TOKEN = 'USDC';
export const MIN_NOTIONAL_USDC = '10';
/** Size decimals an outcome gets before deployment; deployment may overwrite them. */
export const DEFAULT_SZ_DECIMALS = 0;

/** Numbers the stats route serves when the exchange reports none of its own. */
export interface OutcomeFixtureStats {
  volume_usdc: string;
  trade_count: number;
  /** Holders of side 0 and side 1. */
  holder_count: readonly [number, number];
}

export interface CatalogData {
  /** Topics with categories and their series nested, as GET /v1/topics/{id} serves them. */
  topics: Topic[];
  participants: Participant[];
  templates: MarketTemplate[];
  /** Events with every outcome and question nested, as GET /v1/events/{id} serves them. */
  events: Event[];
  stats: Record<string, OutcomeFixtureStats>;
}

/** Kebab token from a display name: "Atlético Madrid" gives "atletico-madrid". */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Replaces `{name}` tokens; an unknown token stays visible rather than silently vanishing. */
export function fillTemplate(text: string, keywords: Readonly<Record<string, string>>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => keywords[name] ?? whole);
}

function img(kind: string, slug: string): string {
  return `${IMAGE_BASE}/${kind}/${slug}.png`;
}

// ---- taxonomy ----

interface SeriesRow {
  id: string;
  name: string;
  providers: ExternalID[];
}
interface CategoryRow {
  id: string;
  name: string;
  series: SeriesRow[];
}
interface TopicRow {
  id: string;
  name: string;
  categories: CategoryRow[];
}

const TAXONOMY: readonly TopicRow[] = [
  {
    id: 'politics',
    name: 'Politics',
    categories: [
      {
        id: 'us-elections',
        name: 'US Elections',
        series: [{ id: 'us-presidential-2028', name: '2028 Presidential Election', providers: [{ provider: 'ap', id: '2028-11-07-US-P' }] }],
      },
      // A category with no series: its events carry `series: null`.
      { id: 'international', name: 'International', series: [] },
    ],
  },
  {
    id: 'crypto',
    name: 'Crypto',
    categories: [
      {
        id: 'bitcoin',
        name: 'Bitcoin',
        series: [{ id: 'btc-price-targets', name: 'BTC Price Targets', providers: [{ provider: 'pyth', id: 'Crypto.BTC/USD' }] }],
      },
      {
        id: 'ethereum',
        name: 'Ethereum',
        series: [{ id: 'eth-weekly', name: 'ETH Weekly', providers: [{ provider: 'pyth', id: 'Crypto.ETH/USD' }] }],
      },
    ],
  },
  {
    id: 'sports',
    name: 'Sports',
    categories: [
      {
        id: 'soccer',
        name: 'Soccer',
        series: [
          {
            id: 'premier-league',
            name: 'Premier League',
            providers: [
              { provider: 'sportradar', id: 'sr:competition:17' },
              { provider: 'opta', id: '8' },
            ],
          },
          { id: 'la-liga', name: 'LaLiga', providers: [{ provider: 'sportradar', id: 'sr:competition:8' }] },
        ],
      },
      {
        id: 'basketball',
        name: 'Basketball',
        series: [{ id: 'nba', name: 'NBA', providers: [{ provider: 'sportradar', id: 'sr:competition:132' }] }],
      },
    ],
  },
];

function buildTopics(): Topic[] {
  return TAXONOMY.map((t) => ({
    id: t.id,
    name: t.name,
    image_url: img('topics', t.id),
    categories: t.categories.map(
      (c): Category => ({
        id: c.id,
        topic_id: t.id,
        name: c.name,
        image_url: img('categories', `${t.id}-${c.id}`),
        series: c.series.map(
          (s): Series => ({
            id: s.id,
            category_id: c.id,
            topic_id: t.id,
            name: s.name,
            image_url: img('series', s.id),
            providers: s.providers.map((p) => ({ ...p })),
          }),
        ),
      }),
    ),
  }));
}

// ---- participants ----

/** name, abbreviation, colour (null: none curated), sportradar competitor number (none for politicians). */
type ParticipantRow = readonly [string, string, string | null, number | null];

interface ParticipantGroup {
  topic: string;
  category: string;
  series: string;
  rows: readonly ParticipantRow[];
}

/** 38 participants: enough that a page of 10 or 25 leaves a cursor. */
const PARTICIPANT_GROUPS: readonly ParticipantGroup[] = [
  {
    topic: 'politics',
    category: 'us-elections',
    series: 'us-presidential-2028',
    rows: [
      ['Gavin Newsom', 'NEWSOM', '#1f4e9c', null],
      ['J. D. Vance', 'VANCE', '#c8102e', null],
      ['Marco Rubio', 'RUBIO', '#c8102e', null],
      ['Josh Shapiro', 'SHAPIRO', '#1f4e9c', null],
      ['Alexandria Ocasio-Cortez', 'AOC', '#1f4e9c', null],
      ['Pete Buttigieg', 'BUTTIGIEG', '#1f4e9c', null],
    ],
  },
  {
    topic: 'sports',
    category: 'soccer',
    series: 'premier-league',
    rows: [
      ['Arsenal', 'ARS', '#ef0107', 42],
      ['Aston Villa', 'AVL', '#670e36', 40],
      ['AFC Bournemouth', 'BOU', '#da291c', 60],
      ['Brentford', 'BRE', '#e30613', 50],
      ['Brighton & Hove Albion', 'BHA', '#0057b8', 30],
      ['Burnley', 'BUR', '#6c1d45', 6],
      // No curated colour: Participant.color is null, EventParticipant omits it.
      ['Chelsea', 'CHE', null, 38],
      ['Crystal Palace', 'CRY', '#1b458f', 7],
      ['Everton', 'EVE', '#003399', 48],
      ['Fulham', 'FUL', '#000000', 43],
      ['Leeds United', 'LEE', '#ffcd00', 34],
      ['Liverpool', 'LIV', '#c8102e', 44],
      ['Manchester City', 'MCI', '#6cabdd', 17],
      ['Manchester United', 'MUN', '#da291c', 35],
      ['Newcastle United', 'NEW', '#241f20', 39],
      ['Nottingham Forest', 'NFO', '#dd0000', 14],
      ['Sunderland', 'SUN', '#eb172b', 41],
      ['Tottenham Hotspur', 'TOT', '#132257', 33],
      ['West Ham United', 'WHU', '#7a263a', 37],
      ['Wolverhampton Wanderers', 'WOL', '#fdb913', 3],
    ],
  },
  {
    topic: 'sports',
    category: 'soccer',
    series: 'la-liga',
    rows: [
      ['Real Madrid', 'RMA', '#febe10', 2829],
      ['FC Barcelona', 'BAR', '#a50044', 2817],
      ['Atlético Madrid', 'ATM', '#cb3524', 2836],
      ['Athletic Club', 'ATH', '#ee2523', 2825],
    ],
  },
  {
    topic: 'sports',
    category: 'basketball',
    series: 'nba',
    rows: [
      ['Los Angeles Lakers', 'LAL', '#552583', 3427],
      ['Boston Celtics', 'BOS', '#007a33', 3422],
      ['Golden State Warriors', 'GSW', '#1d428a', 3428],
      ['Denver Nuggets', 'DEN', '#0e2240', 3417],
      ['Milwaukee Bucks', 'MIL', '#00471b', 3410],
      ['Oklahoma City Thunder', 'OKC', '#007ac1', 3418],
      ['New York Knicks', 'NYK', '#f58426', 3421],
      ['Miami Heat', 'MIA', '#98002e', 3435],
    ],
  },
];

export function participantId(name: string): string {
  return `prt_${slugify(name).replace(/-/g, '_')}`;
}

function buildParticipants(): Participant[] {
  const out: Participant[] = [];
  for (const g of PARTICIPANT_GROUPS) {
    for (const [name, abbreviation, color, sr] of g.rows) {
      const slug = slugify(name);
      out.push({
        id: participantId(name),
        name,
        abbreviation,
        image_url: img('participants', slug),
        color,
        providers: sr === null ? [] : [{ provider: 'sportradar', id: `sr:competitor:${sr}` }],
        topic_id: g.topic,
        category_id: g.category,
        series_id: g.series,
        slug,
      });
    }
  }
  return out;
}

// ---- templates ----

function kw(name: string, hint: string): { name: string; hint: string } {
  return { name, hint };
}

function buildTemplates(): MarketTemplate[] {
  return [
    {
      id: 'tpl_binary',
      kind: 'standalone',
      side_names: ['Yes', 'No'],
      keywords: [kw('question', 'the question, ending in ?'), kw('condition', 'what must happen for Yes'), kw('deadline', 'ISO 8601 datetime, UTC')],
      name: '{question}',
      description: 'Resolves Yes if {condition} before {deadline}; otherwise No.',
      parent: null,
    },
    {
      id: 'tpl_price_target',
      kind: 'standalone',
      side_names: ['Yes', 'No'],
      keywords: [
        kw('asset', 'ticker, e.g. BTC'),
        kw('comparator', 'above, below or at'),
        kw('strike', 'USD price, decimal'),
        kw('deadline', 'ISO 8601 datetime, UTC'),
      ],
      name: '{asset} {comparator} {strike} at {deadline}?',
      description: 'Resolves Yes if the {asset}/USD oracle price is {comparator} {strike} at {deadline}; otherwise No.',
      parent: null,
    },
    {
      id: 'tpl_up_down',
      kind: 'standalone',
      side_names: ['Up', 'Down'],
      keywords: [kw('asset', 'ticker, e.g. ETH'), kw('open_time', 'ISO 8601 datetime, UTC'), kw('close_time', 'ISO 8601 datetime, UTC')],
      name: '{asset} up or down, {open_time} to {close_time}',
      description: 'Resolves Up if the {asset}/USD oracle price at {close_time} is at or above its price at {open_time}; otherwise Down.',
      parent: null,
    },
    {
      id: 'tpl_election_winner',
      kind: 'question',
      side_names: [],
      keywords: [kw('office', 'office contested'), kw('year', 'election year')],
      name: 'Who will win the {year} {office} election?',
      description: 'Resolves to the candidate certified as winner of the {year} {office} election; Other if no listed candidate wins.',
      parent: null,
    },
    {
      id: 'tpl_election_candidate',
      kind: 'question_outcome',
      side_names: ['Yes', 'No'],
      keywords: [kw('candidate', 'candidate full name')],
      name: '{candidate}',
      description: 'Resolves Yes if {candidate} is certified as the winner; otherwise No.',
      parent: 'tpl_election_winner',
    },
    {
      id: 'tpl_match_result',
      kind: 'question',
      side_names: [],
      keywords: [kw('home', 'home team'), kw('away', 'away team'), kw('kickoff', 'ISO 8601 datetime, UTC')],
      name: '{home} vs {away}: full-time result',
      description: 'Full-time result (90 minutes plus stoppage time) of {home} vs {away}, kick-off {kickoff}.',
      parent: null,
    },
    {
      id: 'tpl_match_result_leg',
      kind: 'question_outcome',
      side_names: ['Yes', 'No'],
      keywords: [kw('result', 'e.g. "Arsenal win" or "Draw"')],
      name: '{result}',
      description: 'Resolves Yes if the full-time result is: {result}; otherwise No.',
      parent: 'tpl_match_result',
    },
    {
      id: 'tpl_match_total',
      kind: 'standalone',
      side_names: ['Over', 'Under'],
      keywords: [kw('home', 'home team'), kw('away', 'away team'), kw('line', 'goals, decimal ending in .5')],
      name: '{home} vs {away}: total goals over/under {line}',
      description: 'Resolves Over if {home} vs {away} ends with more than {line} goals in regulation; otherwise Under.',
      parent: null,
    },
    {
      id: 'tpl_two_way_moneyline',
      kind: 'standalone',
      side_names: ['Home', 'Away'],
      keywords: [kw('home', 'home team'), kw('away', 'away team'), kw('tipoff', 'ISO 8601 datetime, UTC')],
      name: '{home} vs {away}: winner',
      description: 'Resolves to the winner of {home} vs {away} (tip-off {tipoff}), overtime included.',
      parent: null,
    },
    {
      id: 'tpl_spread',
      kind: 'standalone',
      side_names: ['Home', 'Away'],
      keywords: [kw('home', 'home team'), kw('away', 'away team'), kw('line', 'home handicap, e.g. -4.5')],
      name: '{home} {line} vs {away}',
      description: 'Resolves Home if {home} wins by more than the handicap {line}, overtime included; otherwise Away.',
      parent: null,
    },
    {
      id: 'tpl_tournament_winner',
      kind: 'question',
      side_names: [],
      keywords: [kw('tournament', 'competition name'), kw('season', 'e.g. 2025/26')],
      name: '{tournament} {season} winner',
      description: 'Resolves to the champion of the {tournament} {season}; Other if no listed team wins.',
      parent: null,
    },
    {
      id: 'tpl_tournament_team',
      kind: 'question_outcome',
      side_names: ['Yes', 'No'],
      keywords: [kw('team', 'team name')],
      name: '{team}',
      description: 'Resolves Yes if {team} is champion; otherwise No.',
      parent: 'tpl_tournament_winner',
    },
  ];
}

// ---- events and outcomes ----

type SideSpec = string | { participant: string };

interface SettlementSpec {
  initiatedAgoMs: number;
  /** With `approvedFraction`: the approved payout of side 0 ("1", "0" or a split). */
  approvedAgoMs?: number;
  approvedFraction?: string;
  /** With `chainFraction`: the fraction exactly as the chain reported it (may be "0.0"). */
  settledAgoMs?: number;
  chainFraction?: string;
}

interface OutcomeSpec {
  key: string;
  slug: string;
  title: string;
  status?: LifecycleStatus;
  /** Chain identifiers; absent until deployed. */
  chain?: { outcome: number; question: number };
  template?: { id: string; keywords: Record<string, string> };
  /** Operator-written rules; defaults to the template description with the keywords filled in. */
  rules?: string;
  question?: string;
  sides: readonly [SideSpec, SideSpec];
  szDecimals?: number;
  participant?: string;
  sportsMarket?: SportsMarket;
  priceTarget?: PriceTarget;
  providers?: ExternalID[];
  createdAgoMs: number;
  updatedAgoMs: number;
  settlement?: SettlementSpec;
  /** volume, trades, holders of side 0, holders of side 1. */
  stats: readonly [string, number, number, number];
}

interface QuestionSpec {
  key: string;
  chainQuestion: number;
  /** Key of the outcome the chain falls back to (an "Other" or the draw). */
  fallback: string;
  template: { id: string; keywords: Record<string, string> };
  deployerFeeScale: string;
}

interface EventSpec {
  key: string;
  slug: string;
  title: string;
  startMs: number;
  status: LifecycleStatus;
  createdAgoMs: number;
  updatedAgoMs: number;
  image: boolean;
  topic: string;
  category: string;
  /** A series of the category, or null when the event is not placed under one. */
  series: string | null;
  providers: ExternalID[];
  /** Participant names; `side` only on contests (home 0, away 1). */
  participants?: ReadonlyArray<{ name: string; side?: number }>;
  contest?: Contest;
  questions: QuestionSpec[];
  outcomes: OutcomeSpec[];
  milestones?: { initiatedAgoMs?: number; approvedAgoMs?: number; settledAgoMs?: number };
}

function settleSides(side0: string): OutcomeSettleSide[] {
  // Side 1 is paid the complement; side 0 keeps the chain's spelling ("0.0" stays "0.0").
  return [
    { side: 0, fraction: side0 },
    { side: 1, fraction: decSub('1', side0) },
  ];
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Builds the whole catalog. `nowMs` is rounded down to the hour for the schedule so that kick-off
 * and deadline times look like the venue's (on the hour); every timestamp is at or before `nowMs`
 * except future schedule times (start_time, deadlines).
 */
export function buildFixtures(nowMs: number): CatalogData {
  const base = nowMs - (((nowMs % HOUR_MS) + HOUR_MS) % HOUR_MS);
  const iso = (ms: number): string => new Date(ms).toISOString();
  const ago = (ms: number): string => iso(base - ms);

  const topics = buildTopics();
  const participants = buildParticipants();
  const templates = buildTemplates();
  const templateById = new Map(templates.map((t) => [t.id as string, t]));
  const participantByName = new Map(participants.map((p) => [p.name as string, p]));
  const stats: Record<string, OutcomeFixtureStats> = {};

  const person = (name: string): Participant => {
    const p = participantByName.get(name);
    if (!p) throw new Error(`fixture participant missing: ${name}`);
    return p;
  };
  const rulesOf = (t: { id: string; keywords: Record<string, string> }): string => {
    const tpl = templateById.get(t.id);
    if (!tpl) throw new Error(`fixture template missing: ${t.id}`);
    return fillTemplate(tpl.description ?? '', t.keywords);
  };
  const seriesNamed = (s: SeriesRow): Named => ({ id: s.id, name: s.name, image_url: img('series', s.id) });

  const categoryRow = (topic: string, category: string): CategoryRow => {
    const c = TAXONOMY.find((t) => t.id === topic)?.categories.find((x) => x.id === category);
    if (!c) throw new Error(`fixture category missing: ${topic}/${category}`);
    return c;
  };

  const buildOutcome = (eventId: string, qids: Map<string, string>, s: OutcomeSpec): Outcome => {
    const id = `out_${s.key}`;
    const sz = s.szDecimals ?? DEFAULT_SZ_DECIMALS;
    const sides = s.sides.map((spec, i): OutcomeSide => {
      const side: OutcomeSide =
        typeof spec === 'string'
          ? { side: i, label: spec, abbreviation: null }
          : (() => {
              const p = person(spec.participant);
              return { side: i, label: p.name, abbreviation: p.abbreviation ?? null, participant_id: p.id };
            })();
      if (s.chain) side.hl_asset_id = String(outcomeAssetId(s.chain.outcome, i));
      return side;
    });
    const st = s.settlement;
    const approved = st?.approvedAgoMs !== undefined && st.approvedFraction !== undefined;
    const settled = st?.settledAgoMs !== undefined && st.chainFraction !== undefined;
    const o: Outcome = {
      id,
      slug: s.slug,
      event_id: eventId,
      title: s.title,
      status: s.status ?? 'active',
      hl_question_id: s.chain ? String(s.chain.question) : null,
      hl_id: s.chain ? String(s.chain.outcome) : null,
      created_at: ago(s.createdAgoMs),
      updated_at: ago(s.updatedAgoMs),
    };
    if (s.template) o.hl_template_id = s.template.id;
    o.hl_keywords = s.template ? { ...s.template.keywords } : {};
    o.hl_settle_fraction = settled ? (st?.chainFraction ?? null) : null;
    o.hl_rules = s.rules ?? (s.template ? rulesOf(s.template) : '');
    o.question_id = s.question === undefined ? null : (qids.get(s.question) ?? null);
    if (st) o.settlement_initiated_at = ago(st.initiatedAgoMs);
    if (approved) o.settlement_approved_at = ago(st.approvedAgoMs ?? 0);
    if (settled) o.settled_at = ago(st.settledAgoMs ?? 0);
    o.settlement = approved ? settleSides(st.approvedFraction ?? '') : [];
    o.hl_settlement = settled ? settleSides(st.chainFraction ?? '') : [];
    o.sides = sides;
    o.trading = { quote: QUOTE_TOKEN, min_notional: MIN_NOTIONAL_USDC, tick_size: pow10Neg(8 - sz), lot_size: pow10Neg(sz) };
    o.providers = s.providers ?? [];
    o.sports_market = s.sportsMarket ?? null;
    if (s.priceTarget) o.price_target = s.priceTarget;
    if (s.participant) o.participant_id = person(s.participant).id;
    const [volume, trades, h0, h1] = s.stats;
    stats[id] = { volume_usdc: volume, trade_count: trades, holder_count: [h0, h1] };
    return o;
  };

  const buildEvent = (e: EventSpec): Event => {
    const id = `evt_${e.key}`;
    const c = categoryRow(e.topic, e.category);
    const series = e.series === null ? null : c.series.find((x) => x.id === e.series);
    if (series === undefined) throw new Error(`fixture series missing: ${e.series}`);
    const qids = new Map(e.questions.map((q) => [q.key, `qst_${q.key}`]));
    const outcomes = e.outcomes.map((o) => buildOutcome(id, qids, o));
    const questions = e.questions.map((q): Question => {
      const fallback = outcomes.find((o) => o.id === `out_${q.fallback}`);
      if (!fallback?.hl_id) throw new Error(`fixture fallback outcome not deployed: ${q.fallback}`);
      return {
        id: `qst_${q.key}`,
        event_id: id,
        hl_question_id: String(q.chainQuestion),
        hl_fallback_outcome_id: fallback.hl_id,
        hl_template_id: q.template.id,
        hl_keywords: { ...q.template.keywords },
        hl_rules: rulesOf(q.template),
        deployer_fee_scale: q.deployerFeeScale,
      };
    });
    const ev: Event = {
      id,
      slug: e.slug,
      title: e.title,
      start_time: iso(e.startMs),
      status: e.status,
      created_at: ago(e.createdAgoMs),
      updated_at: ago(e.updatedAgoMs),
      image_url: e.image ? img('events', e.slug) : null,
      topic_id: e.topic,
      // Category images are keyed by topic too (the category slug is only half the key).
      category: { id: c.id, name: c.name, image_url: img('categories', `${e.topic}-${c.id}`) },
      series: series === null ? null : seriesNamed(series),
      providers: e.providers,
      outcomes,
      questions,
    };
    const m = e.milestones;
    if (m?.initiatedAgoMs !== undefined) ev.settlement_initiated_at = ago(m.initiatedAgoMs);
    if (m?.approvedAgoMs !== undefined) ev.settlement_approved_at = ago(m.approvedAgoMs);
    if (m?.settledAgoMs !== undefined) ev.settled_at = ago(m.settledAgoMs);
    if (e.participants) {
      ev.participants = e.participants.map(({ name, side }): EventParticipant => {
        const p = person(name);
        const ep: EventParticipant = { id: p.id, name: p.name, abbreviation: p.abbreviation, image_url: p.image_url };
        // EventParticipant.color is not nullable in the spec: an uncurated colour is left out.
        if (p.color) ep.color = p.color;
        if (side !== undefined) ep.side = side;
        return ep;
      });
    }
    if (e.contest) ev.contest = e.contest;
    return ev;
  };

  // Schedule anchors.
  const electionDay = base + 1_080 * DAY_MS;
  const ceasefireDeadline = base + 210 * DAY_MS;
  const ceasefireDraftDeadline = base + 390 * DAY_MS;
  const btcDeadline = base + 30 * DAY_MS;
  const ethDeadline = base - 2 * DAY_MS;
  const ethOpen = ethDeadline - 7 * DAY_MS;
  const kickoff = base + 2 * DAY_MS + 3 * HOUR_MS;
  const tipoff = base - 3 * DAY_MS;

  const candidate = (key: string, name: string, outcome: number, stats: OutcomeSpec['stats']): OutcomeSpec => ({
    key: `pres28_${key}`,
    slug: `pres-2028-${slugify(name)}`,
    title: name,
    chain: { outcome, question: 41 },
    template: { id: 'tpl_election_candidate', keywords: { candidate: name } },
    question: 'us_pres_2028_winner',
    sides: [{ participant: name }, 'No'],
    participant: name,
    createdAgoMs: 200 * DAY_MS,
    updatedAgoMs: 1 * DAY_MS,
    stats,
  });

  const eplTeam = (key: string, name: string, outcome: number | null, stats: OutcomeSpec['stats']): OutcomeSpec => {
    const spec: OutcomeSpec = {
      key: `epl2526_${key}`,
      slug: `premier-league-2025-26-winner-${slugify(name)}`,
      title: name,
      template: { id: 'tpl_tournament_team', keywords: { team: name } },
      question: 'epl_2025_26_winner',
      sides: [{ participant: name }, 'No'],
      participant: name,
      sportsMarket: { type: 'SPORTS_MARKET_TYPE_UNSPECIFIED', period: 'tournament' },
      providers: [],
      createdAgoMs: 120 * DAY_MS,
      updatedAgoMs: 2 * HOUR_MS,
      stats,
    };
    if (outcome !== null) spec.chain = { outcome, question: 54 };
    return spec;
  };

  const priceTarget = (
    key: string,
    asset: string,
    comparator: 'above' | 'below',
    strike: string,
    deadlineMs: number,
    chain: { outcome: number; question: number },
  ): Pick<OutcomeSpec, 'key' | 'slug' | 'title' | 'chain' | 'template' | 'priceTarget' | 'sides'> => ({
    key,
    slug: `${asset.toLowerCase()}-${comparator}-${strike.replace('.', '-')}-${isoDay(deadlineMs)}`,
    title: `${asset} ${comparator} $${strike} on ${isoDay(deadlineMs)}?`,
    chain,
    template: { id: 'tpl_price_target', keywords: { asset, comparator, strike, deadline: iso(deadlineMs) } },
    // The strike is carried as the exact decimal text, never through a float.
    priceTarget: { asset, comparator, strike },
    sides: ['Yes', 'No'],
  });

  const specs: EventSpec[] = [
    {
      // Questions and a standalone on one event; participants without a contest; operator-created.
      key: 'us_pres_2028',
      slug: 'us-presidential-election-2028',
      title: '2028 US Presidential Election',
      startMs: electionDay,
      status: 'active',
      createdAgoMs: 200 * DAY_MS,
      updatedAgoMs: 1 * DAY_MS,
      image: true,
      topic: 'politics',
      category: 'us-elections',
      series: 'us-presidential-2028',
      providers: [],
      participants: [
        { name: 'Gavin Newsom' },
        { name: 'J. D. Vance' },
        { name: 'Marco Rubio' },
        { name: 'Josh Shapiro' },
        { name: 'Alexandria Ocasio-Cortez' },
      ],
      questions: [
        {
          key: 'us_pres_2028_winner',
          chainQuestion: 41,
          fallback: 'pres28_other',
          template: { id: 'tpl_election_winner', keywords: { office: 'US President', year: '2028' } },
          deployerFeeScale: '0.5',
        },
      ],
      outcomes: [
        candidate('newsom', 'Gavin Newsom', 410, ['1843200.5', 21344, 3120, 2210]),
        candidate('vance', 'J. D. Vance', 411, ['2950114.25', 30877, 4410, 2985]),
        candidate('rubio', 'Marco Rubio', 412, ['412005', 6120, 980, 1105]),
        candidate('shapiro', 'Josh Shapiro', 413, ['388210.75', 5502, 870, 940]),
        candidate('aoc', 'Alexandria Ocasio-Cortez', 414, ['602300', 9011, 1502, 1203]),
        {
          key: 'pres28_other',
          slug: 'pres-2028-other',
          title: 'Other',
          chain: { outcome: 415, question: 41 },
          template: { id: 'tpl_election_candidate', keywords: { candidate: 'Other' } },
          question: 'us_pres_2028_winner',
          sides: ['Yes', 'No'],
          createdAgoMs: 200 * DAY_MS,
          updatedAgoMs: 1 * DAY_MS,
          stats: ['98000', 1320, 310, 205],
        },
        {
          key: 'pres28_popular_vote',
          slug: 'pres-2028-winner-wins-popular-vote',
          title: 'Will the 2028 winner also win the popular vote?',
          chain: { outcome: 416, question: 42 },
          template: {
            id: 'tpl_binary',
            keywords: {
              question: 'Will the 2028 winner also win the popular vote?',
              condition: 'the certified winner of the 2028 US presidential election also receives the most popular votes',
              deadline: iso(electionDay + 60 * DAY_MS),
            },
          },
          sides: ['Yes', 'No'],
          createdAgoMs: 150 * DAY_MS,
          updatedAgoMs: 3 * DAY_MS,
          stats: ['154300.2', 2011, 402, 388],
        },
      ],
    },
    {
      // No image, no series (its category has none), no participants, all standalone, and a draft.
      key: 'ukraine_ceasefire',
      slug: 'ukraine-russia-ceasefire',
      title: 'Ukraine–Russia ceasefire',
      startMs: base - 20 * DAY_MS,
      status: 'active',
      createdAgoMs: 20 * DAY_MS,
      updatedAgoMs: 6 * HOUR_MS,
      image: false,
      topic: 'politics',
      category: 'international',
      series: null,
      providers: [],
      questions: [],
      outcomes: [
        {
          key: 'ceasefire_h1',
          slug: `ukraine-russia-ceasefire-by-${isoDay(ceasefireDeadline)}`,
          title: `Ukraine–Russia ceasefire before ${isoDay(ceasefireDeadline)}?`,
          chain: { outcome: 420, question: 43 },
          template: {
            id: 'tpl_binary',
            keywords: {
              question: `Ukraine–Russia ceasefire before ${isoDay(ceasefireDeadline)}?`,
              condition: 'both governments publicly announce a ceasefire covering the whole front line',
              deadline: iso(ceasefireDeadline),
            },
          },
          sides: ['Yes', 'No'],
          createdAgoMs: 20 * DAY_MS,
          updatedAgoMs: 6 * HOUR_MS,
          stats: ['72540.5', 1408, 512, 690],
        },
        {
          // Draft: not deployed, no template. hl ids null, hl_keywords {}, trading defaults.
          key: 'ceasefire_h2_draft',
          slug: `ukraine-russia-ceasefire-by-${isoDay(ceasefireDraftDeadline)}`,
          title: `Ukraine–Russia ceasefire before ${isoDay(ceasefireDraftDeadline)}?`,
          rules: `Resolves Yes if both governments publicly announce a ceasefire covering the whole front line before ${iso(ceasefireDraftDeadline)}; otherwise No.`,
          sides: ['Yes', 'No'],
          createdAgoMs: 2 * DAY_MS,
          updatedAgoMs: 2 * DAY_MS,
          stats: ['0', 0, 0, 0],
        },
      ],
    },
    {
      // Price targets with exact decimal strikes; finer size decimals.
      key: 'btc_price_targets',
      slug: `bitcoin-price-${isoDay(btcDeadline)}`,
      title: `Bitcoin price on ${isoDay(btcDeadline)}`,
      startMs: base - 10 * DAY_MS,
      status: 'active',
      createdAgoMs: 10 * DAY_MS,
      updatedAgoMs: 30 * MINUTE_MS,
      image: true,
      topic: 'crypto',
      category: 'bitcoin',
      series: 'btc-price-targets',
      providers: [],
      questions: [],
      outcomes: [
        {
          ...priceTarget('btc_above_100000_50', 'BTC', 'above', '100000.50', btcDeadline, { outcome: 430, question: 44 }),
          szDecimals: 2,
          providers: [{ provider: 'pyth', id: 'Crypto.BTC/USD' }],
          createdAgoMs: 10 * DAY_MS,
          updatedAgoMs: 30 * MINUTE_MS,
          stats: ['512003.37', 8812, 1980, 1432],
        },
        {
          ...priceTarget('btc_above_120000', 'BTC', 'above', '120000', btcDeadline, { outcome: 431, question: 45 }),
          szDecimals: 2,
          providers: [{ provider: 'pyth', id: 'Crypto.BTC/USD' }],
          createdAgoMs: 10 * DAY_MS,
          updatedAgoMs: 30 * MINUTE_MS,
          stats: ['201477.02', 3120, 1020, 1387],
        },
        {
          ...priceTarget('btc_below_80000', 'BTC', 'below', '80000', btcDeadline, { outcome: 432, question: 46 }),
          szDecimals: 2,
          createdAgoMs: 10 * DAY_MS,
          updatedAgoMs: 30 * MINUTE_MS,
          stats: ['99120.9', 1502, 640, 702],
        },
      ],
    },
    {
      // Settlement in progress: one settled ("0.0" from the chain), one approved, one initiated
      // only. The category has a series but this event was not placed under it: series null.
      key: 'eth_weekly_close',
      slug: `ethereum-weekly-close-${isoDay(ethDeadline)}`,
      title: `Ethereum weekly close, ${isoDay(ethDeadline)}`,
      startMs: ethOpen,
      status: 'verifying',
      createdAgoMs: 12 * DAY_MS,
      updatedAgoMs: 2 * HOUR_MS,
      image: true,
      topic: 'crypto',
      category: 'ethereum',
      series: null,
      providers: [],
      questions: [],
      milestones: { initiatedAgoMs: 2 * DAY_MS - 10 * MINUTE_MS },
      outcomes: [
        {
          ...priceTarget('eth_above_4000', 'ETH', 'above', '4000', ethDeadline, { outcome: 440, question: 47 }),
          status: 'settled',
          createdAgoMs: 12 * DAY_MS,
          updatedAgoMs: 1 * DAY_MS,
          settlement: {
            initiatedAgoMs: 2 * DAY_MS - 10 * MINUTE_MS,
            approvedAgoMs: 2 * DAY_MS - 70 * MINUTE_MS,
            approvedFraction: '0',
            settledAgoMs: 1 * DAY_MS,
            chainFraction: '0.0',
          },
          stats: ['333912.4', 4410, 0, 0],
        },
        {
          key: 'eth_up_down_week',
          slug: `eth-up-or-down-${isoDay(ethOpen)}-${isoDay(ethDeadline)}`,
          title: `ETH up or down, ${isoDay(ethOpen)} to ${isoDay(ethDeadline)}`,
          status: 'verifying',
          chain: { outcome: 441, question: 48 },
          template: { id: 'tpl_up_down', keywords: { asset: 'ETH', open_time: iso(ethOpen), close_time: iso(ethDeadline) } },
          sides: ['Up', 'Down'],
          createdAgoMs: 12 * DAY_MS,
          updatedAgoMs: 2 * HOUR_MS,
          settlement: { initiatedAgoMs: 2 * DAY_MS - 10 * MINUTE_MS, approvedAgoMs: 2 * HOUR_MS, approvedFraction: '1' },
          stats: ['150230', 2290, 611, 587],
        },
        {
          ...priceTarget('eth_above_3500', 'ETH', 'above', '3500', ethDeadline, { outcome: 442, question: 49 }),
          status: 'verifying',
          createdAgoMs: 12 * DAY_MS,
          updatedAgoMs: 2 * DAY_MS - 10 * MINUTE_MS,
          settlement: { initiatedAgoMs: 2 * DAY_MS - 10 * MINUTE_MS },
          stats: ['87004.06', 1201, 450, 380],
        },
      ],
    },
    {
      // A scheduled sports contest: home/away legs carry participant_id, the draw does not.
      key: 'epl_ars_che',
      slug: `epl-arsenal-chelsea-${isoDay(kickoff)}`,
      title: 'Arsenal vs Chelsea',
      startMs: kickoff,
      status: 'active',
      createdAgoMs: 9 * DAY_MS,
      updatedAgoMs: 15 * MINUTE_MS,
      image: true,
      topic: 'sports',
      category: 'soccer',
      series: 'premier-league',
      providers: [
        { provider: 'sportradar', id: 'sr:sport_event:61301455' },
        { provider: 'opta', id: '2561901' },
      ],
      participants: [
        { name: 'Arsenal', side: 0 },
        { name: 'Chelsea', side: 1 },
      ],
      contest: { status: 'scheduled' },
      questions: [
        {
          key: 'ars_che_result',
          chainQuestion: 50,
          fallback: 'ars_che_draw',
          template: { id: 'tpl_match_result', keywords: { home: 'Arsenal', away: 'Chelsea', kickoff: iso(kickoff) } },
          deployerFeeScale: '1',
        },
      ],
      outcomes: [
        {
          key: 'ars_che_home',
          slug: `epl-arsenal-chelsea-${isoDay(kickoff)}-arsenal`,
          title: 'Arsenal win',
          chain: { outcome: 450, question: 50 },
          template: { id: 'tpl_match_result_leg', keywords: { result: 'Arsenal win' } },
          question: 'ars_che_result',
          sides: [{ participant: 'Arsenal' }, 'No'],
          participant: 'Arsenal',
          szDecimals: 1,
          sportsMarket: { type: 'moneyline', period: 'full_game' },
          providers: [{ provider: 'sportradar', id: 'sr:sport_event:61301455/1x2/1' }],
          createdAgoMs: 9 * DAY_MS,
          updatedAgoMs: 15 * MINUTE_MS,
          stats: ['241880.3', 5120, 1403, 1021],
        },
        {
          key: 'ars_che_draw',
          slug: `epl-arsenal-chelsea-${isoDay(kickoff)}-draw`,
          title: 'Draw',
          chain: { outcome: 451, question: 50 },
          template: { id: 'tpl_match_result_leg', keywords: { result: 'Draw' } },
          question: 'ars_che_result',
          sides: ['Yes', 'No'],
          szDecimals: 1,
          sportsMarket: { type: 'moneyline', period: 'full_game' },
          providers: [{ provider: 'sportradar', id: 'sr:sport_event:61301455/1x2/X' }],
          createdAgoMs: 9 * DAY_MS,
          updatedAgoMs: 15 * MINUTE_MS,
          stats: ['90312.8', 1870, 620, 841],
        },
        {
          key: 'ars_che_away',
          slug: `epl-arsenal-chelsea-${isoDay(kickoff)}-chelsea`,
          title: 'Chelsea win',
          chain: { outcome: 452, question: 50 },
          template: { id: 'tpl_match_result_leg', keywords: { result: 'Chelsea win' } },
          question: 'ars_che_result',
          sides: [{ participant: 'Chelsea' }, 'No'],
          participant: 'Chelsea',
          szDecimals: 1,
          sportsMarket: { type: 'moneyline', period: 'full_game' },
          providers: [{ provider: 'sportradar', id: 'sr:sport_event:61301455/1x2/2' }],
          createdAgoMs: 9 * DAY_MS,
          updatedAgoMs: 15 * MINUTE_MS,
          stats: ['130455', 2954, 902, 1010],
        },
        {
          key: 'ars_che_total_2_5',
          slug: `epl-arsenal-chelsea-${isoDay(kickoff)}-total-2-5`,
          title: 'Total goals over/under 2.5',
          chain: { outcome: 453, question: 51 },
          template: { id: 'tpl_match_total', keywords: { home: 'Arsenal', away: 'Chelsea', line: '2.5' } },
          sides: ['Over', 'Under'],
          szDecimals: 1,
          sportsMarket: { type: 'total', period: 'full_game', line: '2.5' },
          providers: [],
          createdAgoMs: 9 * DAY_MS,
          updatedAgoMs: 15 * MINUTE_MS,
          stats: ['60210.1', 1322, 455, 470],
        },
      ],
    },
    {
      // A finished, settled contest: two-way moneyline (both sides participants, no outcome
      // participant_id) and a spread; chain fractions "1" and "0".
      key: 'nba_lal_bos',
      slug: `nba-lakers-celtics-${isoDay(tipoff)}`,
      title: 'Los Angeles Lakers vs Boston Celtics',
      startMs: tipoff,
      status: 'settled',
      createdAgoMs: 14 * DAY_MS,
      updatedAgoMs: 2 * DAY_MS,
      image: true,
      topic: 'sports',
      category: 'basketball',
      series: 'nba',
      providers: [{ provider: 'sportradar', id: 'sr:sport_event:58012345' }],
      participants: [
        { name: 'Los Angeles Lakers', side: 0 },
        { name: 'Boston Celtics', side: 1 },
      ],
      contest: { status: 'finished', started_at: iso(tipoff + 4 * MINUTE_MS), ended_at: iso(tipoff + 2 * HOUR_MS + 31 * MINUTE_MS) },
      milestones: {
        initiatedAgoMs: 3 * DAY_MS - 3 * HOUR_MS,
        approvedAgoMs: 3 * DAY_MS - 4 * HOUR_MS,
        settledAgoMs: 2 * DAY_MS,
      },
      questions: [],
      outcomes: [
        {
          key: 'lal_bos_moneyline',
          slug: `nba-lakers-celtics-${isoDay(tipoff)}-moneyline`,
          title: 'Lakers vs Celtics: winner',
          status: 'settled',
          chain: { outcome: 460, question: 52 },
          template: {
            id: 'tpl_two_way_moneyline',
            keywords: { home: 'Los Angeles Lakers', away: 'Boston Celtics', tipoff: iso(tipoff) },
          },
          sides: [{ participant: 'Los Angeles Lakers' }, { participant: 'Boston Celtics' }],
          sportsMarket: { type: 'moneyline', period: 'full_game' },
          providers: [{ provider: 'sportradar', id: 'sr:sport_event:58012345/moneyline' }],
          createdAgoMs: 14 * DAY_MS,
          updatedAgoMs: 2 * DAY_MS,
          settlement: {
            initiatedAgoMs: 3 * DAY_MS - 3 * HOUR_MS,
            approvedAgoMs: 3 * DAY_MS - 4 * HOUR_MS,
            approvedFraction: '1',
            settledAgoMs: 2 * DAY_MS,
            chainFraction: '1',
          },
          stats: ['402118.6', 7741, 0, 0],
        },
        {
          key: 'lal_bos_spread',
          slug: `nba-lakers-celtics-${isoDay(tipoff)}-spread-4-5`,
          title: 'Lakers -4.5 vs Celtics',
          status: 'settled',
          chain: { outcome: 461, question: 53 },
          template: { id: 'tpl_spread', keywords: { home: 'Los Angeles Lakers', away: 'Boston Celtics', line: '-4.5' } },
          sides: [{ participant: 'Los Angeles Lakers' }, { participant: 'Boston Celtics' }],
          sportsMarket: { type: 'spread', period: 'full_game', line: '-4.5' },
          providers: [],
          createdAgoMs: 14 * DAY_MS,
          updatedAgoMs: 2 * DAY_MS,
          settlement: {
            initiatedAgoMs: 3 * DAY_MS - 3 * HOUR_MS,
            approvedAgoMs: 3 * DAY_MS - 4 * HOUR_MS,
            approvedFraction: '0',
            settledAgoMs: 2 * DAY_MS,
            chainFraction: '0',
          },
          stats: ['120400', 2208, 0, 0],
        },
      ],
    },
    {
      // Tournament outright: participants but no contest; one team added and not yet deployed.
      key: 'epl_2025_26_winner',
      slug: 'premier-league-2025-26-winner',
      title: 'Premier League 2025/26 winner',
      startMs: base - 100 * DAY_MS,
      status: 'active',
      createdAgoMs: 120 * DAY_MS,
      updatedAgoMs: 2 * HOUR_MS,
      image: true,
      topic: 'sports',
      category: 'soccer',
      series: 'premier-league',
      providers: [{ provider: 'sportradar', id: 'sr:season:130281' }],
      participants: [
        { name: 'Arsenal' },
        { name: 'Liverpool' },
        { name: 'Manchester City' },
        { name: 'Chelsea' },
        { name: 'Newcastle United' },
      ],
      questions: [
        {
          key: 'epl_2025_26_winner',
          chainQuestion: 54,
          fallback: 'epl2526_other',
          template: { id: 'tpl_tournament_winner', keywords: { tournament: 'Premier League', season: '2025/26' } },
          deployerFeeScale: '0.75',
        },
      ],
      outcomes: [
        eplTeam('arsenal', 'Arsenal', 470, ['1203988.4', 18877, 2990, 2104]),
        eplTeam('liverpool', 'Liverpool', 471, ['998321', 15012, 2511, 1987]),
        eplTeam('man_city', 'Manchester City', 472, ['840102.75', 13370, 2230, 1876]),
        eplTeam('chelsea', 'Chelsea', 473, ['210554.1', 4410, 870, 702]),
        {
          key: 'epl2526_other',
          slug: 'premier-league-2025-26-winner-other',
          title: 'Other',
          chain: { outcome: 474, question: 54 },
          template: { id: 'tpl_tournament_team', keywords: { team: 'Other' } },
          question: 'epl_2025_26_winner',
          sides: ['Yes', 'No'],
          sportsMarket: { type: 'SPORTS_MARKET_TYPE_UNSPECIFIED', period: 'tournament' },
          providers: [],
          createdAgoMs: 120 * DAY_MS,
          updatedAgoMs: 2 * HOUR_MS,
          stats: ['45001', 902, 310, 266],
        },
        // Templated but not deployed: hl ids null while question_id is already set.
        eplTeam('newcastle', 'Newcastle United', null, ['0', 0, 0, 0]),
      ],
    },
  ];

  return { topics, participants, templates, events: specs.map(buildEvent), stats };
}
