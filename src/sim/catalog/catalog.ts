/**
 * The fixture catalog behind an index: lookups by id and the filtered listings the catalog routes
 * serve. Built fresh per simulator instance (no module-level state), then deep-frozen: the same
 * objects are handed to every route and to the account routes' `include`, so a caller that edits
 * one would silently change the venue for everybody. Freezing makes such a bug throw instead.
 */
import type {
  Event,
  MarketTemplate,
  Outcome,
  Participant,
  Provider,
  Question,
  Series,
  Topic,
} from '../../venue/types.js';
import type { Catalog } from '../types.js';
import { buildFixtures, type OutcomeFixtureStats } from './fixtures.js';
import { RECURRING_SERIES, RecurringSeries } from './recurring.js';

/** The taxonomy cut shared by GET /v1/participants and GET /v1/providers; an absent key matches all. */
export interface TaxonomyFilter {
  topic_id?: string;
  category_id?: string;
  series_id?: string;
}

export interface SimCatalog extends Catalog {
  /** Venue time the fixtures were built at; their timestamps are offsets from it. */
  readonly builtAtMs: number;
  outcomes(): readonly Outcome[];
  events(): readonly Event[];
  question(id: string): Question | undefined;
  topics(): readonly Topic[];
  topic(id: string): Topic | undefined;
  allSeries(): readonly Series[];
  series(id: string): Series | undefined;
  /** In catalog order (topic, category, series, then fixture order), filtered. */
  participants(filter?: TaxonomyFilter): readonly Participant[];
  participant(id: string): Participant | undefined;
  /** Providers with at least one identity inside the cut, sorted by id. */
  providers(filter?: TaxonomyFilter): readonly Provider[];
  templates(): readonly MarketTemplate[];
  template(id: string): MarketTemplate | undefined;
  /** Fixture volume, trade count and holders, for the stats route. */
  fixtureStats(outcomeId: string): OutcomeFixtureStats | undefined;
  /** The recurring outcome series (option `recurring`), whose outcomes settle with venue time. */
  readonly recurring?: RecurringSeries;
}

export interface BuildCatalogOptions {
  /** Venue time the fixtures are built at. */
  nowMs: number;
  /**
   * Adds a recurring 15-minute outcome series (recurring.ts) whose outcomes settle as `nowMs()`,
   * the venue clock, passes their close. Absent: the fixed catalog alone.
   */
  recurring?: { nowMs: () => number };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Where one provider identity sits in the taxonomy; series null when outside any series. */
interface ProviderContext {
  provider: string;
  topic: string;
  category: string;
  series: string | null;
}

function matches(filter: TaxonomyFilter | undefined, topic: string | undefined, category: string | undefined, series: string | null | undefined): boolean {
  if (!filter) return true;
  if (filter.topic_id !== undefined && filter.topic_id !== topic) return false;
  if (filter.category_id !== undefined && filter.category_id !== category) return false;
  if (filter.series_id !== undefined && filter.series_id !== series) return false;
  return true;
}

export function buildCatalog(opts: BuildCatalogOptions): SimCatalog {
  const built = buildFixtures(opts.nowMs);
  const series = opts.recurring ? new RecurringSeries(opts.nowMs) : undefined;
  if (series) built.topics.find((t) => t.id === RECURRING_SERIES.topic_id)?.categories?.find((c) => c.id === RECURRING_SERIES.category_id)?.series?.push(structuredClone(RECURRING_SERIES));
  const data = deepFreeze(built);
  const outcomes = data.events.flatMap((e) => e.outcomes ?? []);
  const questions = data.events.flatMap((e) => e.questions ?? []);
  const seriesList = data.topics.flatMap((t) => (t.categories ?? []).flatMap((c) => c.series ?? []));

  const byId = <T extends { id?: string }>(items: readonly T[]): Map<string, T> => {
    const m = new Map<string, T>();
    for (const it of items) {
      if (it.id === undefined || m.has(it.id)) throw new Error(`fixture id missing or duplicated: ${String(it.id)}`);
      m.set(it.id, it);
    }
    return m;
  };
  const outcomeById = byId(outcomes);
  const eventById = byId(data.events);
  const questionById = byId(questions);
  const topicById = byId(data.topics);
  const seriesById = byId(seriesList);
  const participantById = byId(data.participants);
  const templateById = byId(data.templates);

  const contexts: ProviderContext[] = [];
  for (const s of seriesList) {
    for (const p of s.providers ?? []) contexts.push({ provider: p.provider ?? '', topic: s.topic_id ?? '', category: s.category_id ?? '', series: s.id ?? null });
  }
  for (const pt of data.participants) {
    for (const p of pt.providers ?? []) contexts.push({ provider: p.provider ?? '', topic: pt.topic_id ?? '', category: pt.category_id ?? '', series: pt.series_id ?? null });
  }
  for (const e of data.events) {
    const at = { topic: e.topic_id ?? '', category: e.category?.id ?? '', series: e.series?.id ?? null };
    for (const p of e.providers ?? []) contexts.push({ provider: p.provider ?? '', ...at });
    for (const o of e.outcomes ?? []) for (const p of o.providers ?? []) contexts.push({ provider: p.provider ?? '', ...at });
  }

  const tradable = outcomes.filter((o) => o.status === 'active' && o.hl_id !== null).map((o) => o.id as string);

  // The recurring series' outcomes and event are built per call from venue time (their status
  // changes at each close), frozen like the rest. `tradableOutcomeIds` stays the fixed list: the
  // demo seeds rest orders there, and orders on a 15-minute outcome would vanish under other tests.
  const venueNow = opts.recurring?.nowMs;
  const recurringOutcome = (id: string): Outcome | undefined => {
    if (!series || !venueNow) return undefined;
    const now = venueNow();
    const n = series.indexOf(id, now);
    return n === undefined ? undefined : deepFreeze(series.outcome(n, now));
  };
  const recurringEvent = (): Event | undefined => (series && venueNow ? deepFreeze(series.event(venueNow())) : undefined);

  return {
    builtAtMs: opts.nowMs,
    ...(series ? { recurring: series } : {}),
    outcome: (id) => outcomeById.get(id) ?? recurringOutcome(id),
    event: (id) => eventById.get(id) ?? (series && id === series.eventId ? recurringEvent() : undefined),
    tradableOutcomeIds: () => [...tradable],
    outcomes: () => {
      const e = recurringEvent();
      return e ? [...outcomes, ...(e.outcomes ?? [])] : outcomes;
    },
    events: () => {
      const e = recurringEvent();
      return e ? [...data.events, e] : data.events;
    },
    question: (id) => questionById.get(id),
    topics: () => data.topics,
    topic: (id) => topicById.get(id),
    allSeries: () => seriesList,
    series: (id) => seriesById.get(id),
    participants: (filter) => data.participants.filter((p) => matches(filter, p.topic_id, p.category_id, p.series_id)),
    participant: (id) => participantById.get(id),
    providers: (filter) => {
      const ids = new Set(contexts.filter((c) => matches(filter, c.topic, c.category, c.series)).map((c) => c.provider));
      return [...ids].sort().map((id) => ({ id }));
    },
    templates: () => data.templates,
    template: (id) => templateById.get(id),
    fixtureStats: (id) => data.stats[id],
  };
}
