/**
 * The fixture catalog must be internally consistent and must exhibit every nullable and
 * omitted-key rule of the spec at least once: the keeper's decoders are tested against it.
 */
import { describe, expect, it } from 'vitest';
import type { Event, Outcome } from '../../venue/types.js';
import { buildCatalog } from './catalog.js';
import { decAdd, decCmp, isDecimal, pow10Neg } from '../../venue/decimal.js';

const NOW = Date.UTC(2025, 10, 22, 8, 37, 12, 345);
const catalog = buildCatalog({ nowMs: NOW });
const outcomes = catalog.outcomes();
const events = catalog.events();
const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function out(id: string): Outcome {
  const o = catalog.outcome(id);
  if (!o) throw new Error(`no outcome ${id}`);
  return o;
}
function ev(id: string): Event {
  const e = catalog.event(id);
  if (!e) throw new Error(`no event ${id}`);
  return e;
}
function placeholders(text: string): string[] {
  return [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
}

describe('structure and consistency', () => {
  it('has a realistic size', () => {
    expect(catalog.topics().length).toBeGreaterThanOrEqual(3);
    expect(events.length).toBeGreaterThanOrEqual(6);
    expect(outcomes.length).toBeGreaterThanOrEqual(20);
    expect(catalog.participants().length).toBeGreaterThanOrEqual(30);
  });

  it('links every outcome to an event that lists it, and every question_id to a question on that event', () => {
    for (const o of outcomes) {
      const e = ev(o.event_id ?? '');
      expect(e.outcomes?.some((x) => x.id === o.id)).toBe(true);
      if (o.question_id !== null) {
        const q = e.questions?.find((x) => x.id === o.question_id);
        expect(q, `${o.id} question`).toBeDefined();
        expect(catalog.question(o.question_id ?? '')).toBe(q);
        expect(q?.event_id).toBe(e.id);
      }
    }
    for (const e of events) for (const q of e.questions ?? []) expect(e.outcomes?.some((o) => o.question_id === q.id), `${q.id} has outcomes`).toBe(true);
  });

  it('gives each question a deployed fallback among its own outcomes, and its outcomes its chain question', () => {
    for (const e of events) {
      for (const q of e.questions ?? []) {
        const members = (e.outcomes ?? []).filter((o) => o.question_id === q.id);
        expect(members.some((o) => o.hl_id === q.hl_fallback_outcome_id)).toBe(true);
        for (const o of members) if (o.hl_id !== null) expect(o.hl_question_id).toBe(q.hl_question_id);
      }
    }
  });

  it('has unique ids and unique chain identifiers', () => {
    const ids = outcomes.map((o) => o.id);
    expect(new Set(ids).size).toBe(ids.length);
    const hlIds = outcomes.map((o) => o.hl_id).filter((x) => x !== null);
    expect(new Set(hlIds).size).toBe(hlIds.length);
    const assets = outcomes.flatMap((o) => (o.sides ?? []).map((s) => s.hl_asset_id)).filter((x) => x !== undefined);
    expect(new Set(assets).size).toBe(assets.length);
  });

  it('places every event in an existing topic, category and series', () => {
    for (const e of events) {
      const topic = catalog.topic(e.topic_id ?? '');
      const category = topic?.categories?.find((c) => c.id === e.category?.id);
      expect(category, `${e.id} category`).toBeDefined();
      if (e.series !== null) {
        expect(category?.series?.some((s) => s.id === e.series?.id)).toBe(true);
        expect(catalog.series(e.series?.id ?? '')?.category_id).toBe(category?.id);
      }
    }
  });

  it('nests series under the category and topic they name', () => {
    for (const t of catalog.topics()) {
      for (const c of t.categories ?? []) {
        expect(c.topic_id).toBe(t.id);
        for (const s of c.series ?? []) {
          expect([s.topic_id, s.category_id]).toEqual([t.id, c.id]);
          expect(catalog.series(s.id ?? '')).toBe(s);
        }
      }
    }
    expect(catalog.allSeries().length).toBeGreaterThanOrEqual(4);
  });

  it('keeps event status consistent with its outcomes', () => {
    for (const e of events) {
      const statuses = (e.outcomes ?? []).map((o) => o.status);
      if (e.status === 'settled') {
        expect(statuses.every((s) => s === 'settled')).toBe(true);
        expect(e.settled_at).toBeDefined();
      }
      if (e.status === 'active') expect(statuses.every((s) => s === 'active')).toBe(true);
      if (e.status === 'verifying') expect(statuses).toContain('verifying');
    }
  });

  it('writes every timestamp as ISO 8601, audit times no later than now', () => {
    const stamp = (t: string | undefined): void => {
      if (t === undefined) return;
      expect(t).toMatch(ISO);
    };
    for (const e of events) {
      for (const t of [e.start_time, e.created_at, e.updated_at, e.settlement_initiated_at, e.settlement_approved_at, e.settled_at]) stamp(t);
      expect(Date.parse(e.created_at ?? '')).toBeLessThanOrEqual(NOW);
    }
    for (const o of outcomes) {
      for (const t of [o.created_at, o.updated_at, o.settlement_initiated_at, o.settlement_approved_at, o.settled_at]) {
        stamp(t);
        if (t !== undefined) expect(Date.parse(t)).toBeLessThanOrEqual(NOW);
      }
    }
  });

  it('is deterministic for a given now and shifts with it', () => {
    const again = buildCatalog({ nowMs: NOW });
    expect(JSON.stringify(again.events())).toBe(JSON.stringify(events));
    const later = buildCatalog({ nowMs: NOW + 7 * 86_400_000 });
    expect(later.event('evt_epl_ars_che')?.start_time).not.toBe(ev('evt_epl_ars_che').start_time);
    expect(later.outcomes().map((o) => o.id)).toEqual(outcomes.map((o) => o.id));
  });

  it('is frozen, so a caller cannot change the venue for everyone', () => {
    const o = out('out_ars_che_home');
    expect(() => {
      (o as { title?: string }).title = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      o.sides?.push({});
    }).toThrow(TypeError);
    // A fresh build is independent of any other.
    expect(buildCatalog({ nowMs: NOW }).outcome('out_ars_che_home')).not.toBe(o);
  });

  it('lists as tradable exactly the active, deployed outcomes', () => {
    const tradable = catalog.tradableOutcomeIds();
    expect(tradable).toEqual(outcomes.filter((o) => o.status === 'active' && o.hl_id !== null).map((o) => o.id));
    expect(tradable).toContain('out_ars_che_home');
    expect(tradable).not.toContain('out_ceasefire_h2_draft');
    expect(tradable).not.toContain('out_lal_bos_moneyline');
    expect(tradable).not.toContain('out_eth_up_down_week');
    // A copy: the caller may sort or splice it.
    tradable.pop();
    expect(catalog.tradableOutcomeIds().length).toBe(tradable.length + 1);
  });
});

describe('outcome field rules', () => {
  it('always has two sides ordered 0 then 1, with abbreviation null exactly when no participant', () => {
    for (const o of outcomes) {
      expect(o.sides?.map((s) => s.side)).toEqual([0, 1]);
      for (const s of o.sides ?? []) {
        expect(s.label).toBeTruthy();
        if (s.participant_id === undefined) expect(s.abbreviation).toBeNull();
        else {
          const p = catalog.participant(s.participant_id);
          expect(s.abbreviation).toBe(p?.abbreviation);
          expect(s.label).toBe(p?.name);
        }
      }
    }
  });

  it('always has trading, tick = 10^-(8 - szDecimals) and lot = 10^-szDecimals, as decimal strings', () => {
    const seen = new Set<string>();
    for (const o of outcomes) {
      const t = o.trading;
      expect(t, `${o.id} trading`).toBeDefined();
      for (const v of [t?.min_notional, t?.tick_size, t?.lot_size]) expect(typeof v === 'string' && isDecimal(v)).toBe(true);
      const lot = t?.lot_size ?? '';
      const sz = lot === '1' ? 0 : (lot.split('.')[1]?.length ?? -1);
      expect(pow10Neg(sz)).toBe(lot);
      expect(t?.tick_size).toBe(pow10Neg(8 - sz));
      seen.add(lot);
    }
    // More than one size precision is exercised.
    expect(seen.size).toBeGreaterThanOrEqual(2);
  });

  it('has non-empty slugs everywhere', () => {
    for (const o of outcomes) expect(o.slug).toMatch(KEBAB);
    for (const e of events) expect(e.slug).toMatch(KEBAB);
    for (const p of catalog.participants()) expect(p.slug).toMatch(KEBAB);
  });

  it('keeps chain ids null before deployment, with no asset ids', () => {
    const drafts = outcomes.filter((o) => o.hl_id === null);
    expect(drafts.length).toBeGreaterThanOrEqual(2);
    for (const o of drafts) {
      expect('hl_id' in o && 'hl_question_id' in o).toBe(true);
      expect(o.hl_question_id).toBeNull();
      expect(o.sides?.every((s) => !('hl_asset_id' in s))).toBe(true);
    }
    for (const o of outcomes.filter((x) => x.hl_id !== null)) {
      expect(o.hl_question_id).toEqual(expect.any(String));
      expect(o.sides?.map((s) => s.hl_asset_id)).toEqual([String(100_000_000 + 10 * Number(o.hl_id)), String(100_000_000 + 10 * Number(o.hl_id) + 1)]);
    }
    const draft = out('out_ceasefire_h2_draft');
    expect(draft.hl_id).toBeNull();
    expect(draft.hl_keywords).toEqual({});
    expect('hl_template_id' in draft).toBe(false);
    expect(draft.providers).toEqual([]);
    // Templated yet undeployed: belongs to its question before it has a chain question.
    const newcastle = out('out_epl2526_newcastle');
    expect(newcastle.hl_id).toBeNull();
    expect(newcastle.question_id).toBe('qst_epl_2025_26_winner');
    expect(newcastle.hl_template_id).toBe('tpl_tournament_team');
  });

  it('has hl_keywords {} exactly when there is no template, else the template keywords', () => {
    for (const o of outcomes) {
      expect(o.hl_keywords).toBeDefined();
      if (o.hl_template_id === undefined) expect(o.hl_keywords).toEqual({});
      else {
        const tpl = catalog.template(o.hl_template_id);
        expect(Object.keys(o.hl_keywords ?? {}).sort()).toEqual((tpl?.keywords ?? []).map((k) => k.name).sort());
        expect(tpl?.kind).toBe(o.question_id === null ? 'standalone' : 'question_outcome');
        if (o.question_id !== null) expect(tpl?.parent).toBe(catalog.question(o.question_id ?? '')?.hl_template_id);
      }
    }
  });

  it('follows the settlement milestone rules', () => {
    for (const o of outcomes) {
      expect('hl_settle_fraction' in o).toBe(true);
      expect(o.settlement?.length === 0 || o.settlement?.length === 2).toBe(true);
      expect(o.settlement?.length === 2).toBe(o.settlement_approved_at !== undefined);
      expect(o.hl_settlement?.length === 2).toBe(o.settled_at !== undefined);
      expect(o.hl_settle_fraction !== null).toBe(o.settled_at !== undefined);
      expect(o.status === 'settled').toBe(o.settled_at !== undefined);
      if (o.settlement_approved_at !== undefined) expect(o.settlement_initiated_at).toBeDefined();
      for (const pair of [o.settlement ?? [], o.hl_settlement ?? []]) {
        if (pair.length === 0) continue;
        expect(pair.map((s) => s.side)).toEqual([0, 1]);
        // The two fractions pay out the whole collateral.
        expect(decAdd(pair[0]?.fraction ?? '', pair[1]?.fraction ?? '')).toBe('1');
      }
      if (o.hl_settle_fraction !== null) expect(o.hl_settlement?.[0]?.fraction).toBe(o.hl_settle_fraction);
    }
  });

  it('covers every settlement stage', () => {
    const zero = out('out_eth_above_4000');
    expect(zero.status).toBe('settled');
    expect(zero.hl_settle_fraction).toBe('0.0');
    expect(decCmp(zero.hl_settle_fraction ?? '', '0')).toBe(0);
    expect(zero.hl_settlement).toEqual([
      { side: 0, fraction: '0.0' },
      { side: 1, fraction: '1' },
    ]);
    const one = out('out_lal_bos_moneyline');
    expect(one.hl_settle_fraction).toBe('1');
    expect(one.settled_at).toEqual(expect.stringMatching(ISO));

    const approved = out('out_eth_up_down_week');
    expect(approved.status).toBe('verifying');
    expect(approved.settlement_initiated_at).toBeDefined();
    expect(approved.settlement_approved_at).toBeDefined();
    expect(approved.settlement).toEqual([
      { side: 0, fraction: '1' },
      { side: 1, fraction: '0' },
    ]);
    expect(approved.hl_settlement).toEqual([]);
    expect(approved.hl_settle_fraction).toBeNull();
    expect('settled_at' in approved).toBe(false);

    const initiated = out('out_eth_above_3500');
    expect(initiated.status).toBe('verifying');
    expect(initiated.settlement_initiated_at).toBeDefined();
    expect('settlement_approved_at' in initiated).toBe(false);
    expect(initiated.settlement).toEqual([]);

    const active = out('out_ars_che_home');
    expect(active.hl_settle_fraction).toBeNull();
    expect(['settlement_initiated_at', 'settlement_approved_at', 'settled_at'].some((k) => k in active)).toBe(false);
  });

  it('has standalone outcomes (question_id null) and questions shared by several outcomes', () => {
    expect(outcomes.filter((o) => o.question_id === null).length).toBeGreaterThanOrEqual(5);
    expect(outcomes.every((o) => 'question_id' in o)).toBe(true);
    const counts = new Map<string, number>();
    for (const o of outcomes) if (o.question_id) counts.set(o.question_id, (counts.get(o.question_id) ?? 0) + 1);
    expect([...counts.values()].every((n) => n >= 2)).toBe(true);
    expect(counts.size).toBeGreaterThanOrEqual(3);
  });

  it('sets participant_id on soccer legs, not on the draw or a two-way moneyline', () => {
    expect(out('out_ars_che_home').participant_id).toBe('prt_arsenal');
    expect(out('out_ars_che_away').participant_id).toBe('prt_chelsea');
    expect('participant_id' in out('out_ars_che_draw')).toBe(false);
    const ml = out('out_lal_bos_moneyline');
    expect('participant_id' in ml).toBe(false);
    expect(ml.sides?.map((s) => s.participant_id)).toEqual(['prt_los_angeles_lakers', 'prt_boston_celtics']);
    expect(out('out_ars_che_draw').sides?.map((s) => s.abbreviation)).toEqual([null, null]);
    for (const o of outcomes) if (o.participant_id !== undefined) expect(catalog.participant(o.participant_id)).toBeDefined();
  });

  it('has sports_market on sports outcomes and null elsewhere', () => {
    for (const o of outcomes) {
      expect('sports_market' in o).toBe(true);
      const sports = catalog.event(o.event_id ?? '')?.topic_id === 'sports';
      if (sports) expect(o.sports_market).toEqual(expect.objectContaining({ type: expect.any(String), period: expect.any(String) }));
      else expect(o.sports_market).toBeNull();
    }
    expect(out('out_ars_che_total_2_5').sports_market).toEqual({ type: 'total', period: 'full_game', line: '2.5' });
  });

  it('carries price targets with exact decimal strikes, absent elsewhere', () => {
    const pt = out('out_btc_above_100000_50').price_target;
    expect(pt).toEqual({ asset: 'BTC', comparator: 'above', strike: '100000.50' });
    expect(out('out_btc_below_80000').price_target?.comparator).toBe('below');
    expect('price_target' in out('out_ars_che_home')).toBe(false);
    for (const o of outcomes) if (o.price_target) expect(isDecimal(o.price_target.strike ?? '')).toBe(true);
  });

  it('has providers empty until linked and linked on some', () => {
    for (const o of outcomes) expect(Array.isArray(o.providers)).toBe(true);
    expect(outcomes.some((o) => o.providers?.length === 0)).toBe(true);
    expect(outcomes.some((o) => (o.providers?.length ?? 0) > 0)).toBe(true);
  });
});

describe('event field rules', () => {
  it('has image_url null on an event without image, and a URL elsewhere', () => {
    expect(ev('evt_ukraine_ceasefire').image_url).toBeNull();
    expect('image_url' in ev('evt_ukraine_ceasefire')).toBe(true);
    expect(ev('evt_us_pres_2028').image_url).toMatch(/^https:\/\//);
  });

  it('has series null for a category without series and for an event outside its category series', () => {
    const noSeries = ev('evt_ukraine_ceasefire');
    expect(noSeries.series).toBeNull();
    expect(catalog.topic('politics')?.categories?.find((c) => c.id === noSeries.category?.id)?.series).toEqual([]);
    const unplaced = ev('evt_eth_weekly_close');
    expect(unplaced.series).toBeNull();
    expect(catalog.topic('crypto')?.categories?.find((c) => c.id === 'ethereum')?.series?.length).toBe(1);
    expect(ev('evt_epl_ars_che').series).toEqual(expect.objectContaining({ id: 'premier-league' }));
  });

  it('omits participants when there are none (never []) and omits contest except on contests', () => {
    for (const e of events) {
      if ('participants' in e) expect(e.participants?.length).toBeGreaterThan(0);
    }
    expect('participants' in ev('evt_ukraine_ceasefire')).toBe(false);
    expect('participants' in ev('evt_btc_price_targets')).toBe(false);
    expect('contest' in ev('evt_us_pres_2028')).toBe(false);
    expect('contest' in ev('evt_epl_2025_26_winner')).toBe(false);
    const match = ev('evt_epl_ars_che');
    expect(match.contest).toEqual({ status: 'scheduled' });
    expect(match.participants?.map((p) => [p.id, p.side])).toEqual([
      ['prt_arsenal', 0],
      ['prt_chelsea', 1],
    ]);
    // Chelsea has no curated colour: the event participant leaves it out.
    expect('color' in (match.participants?.[1] ?? {})).toBe(false);
    expect(match.participants?.[0]?.color).toBe('#ef0107');
    expect(ev('evt_nba_lal_bos').contest).toEqual({ status: 'finished', started_at: expect.stringMatching(ISO), ended_at: expect.stringMatching(ISO) });
  });

  it('has providers empty for operator-created events and questions empty when all standalone', () => {
    expect(ev('evt_us_pres_2028').providers).toEqual([]);
    expect(ev('evt_epl_ars_che').providers?.length).toBe(2);
    expect(ev('evt_btc_price_targets').questions).toEqual([]);
    expect(ev('evt_us_pres_2028').questions?.length).toBe(1);
    // Questions and standalones on one event.
    expect(ev('evt_us_pres_2028').outcomes?.some((o) => o.question_id === null)).toBe(true);
  });
});

describe('participants, templates, providers', () => {
  it('places participants in the taxonomy with kebab slugs and unique ids', () => {
    const ps = catalog.participants();
    expect(new Set(ps.map((p) => p.id)).size).toBe(ps.length);
    for (const p of ps) {
      const s = catalog.series(p.series_id ?? '');
      expect([s?.topic_id, s?.category_id]).toEqual([p.topic_id, p.category_id]);
      expect(p.color === null || /^#[0-9a-f]{6}$/.test(p.color ?? '')).toBe(true);
      expect(catalog.participant(p.id ?? '')).toBe(p);
    }
    expect(ps.filter((p) => p.color === null).map((p) => p.id)).toEqual(['prt_chelsea']);
    expect(catalog.participant('prt_atletico_madrid')?.slug).toBe('atletico-madrid');
    expect(catalog.participant('prt_brighton_hove_albion')?.slug).toBe('brighton-hove-albion');
  });

  it('filters participants by the taxonomy', () => {
    expect(catalog.participants({ series_id: 'nba' }).length).toBe(8);
    expect(catalog.participants({ topic_id: 'sports', category_id: 'soccer' }).length).toBe(24);
    expect(catalog.participants({ topic_id: 'politics', series_id: 'nba' })).toEqual([]);
    expect(catalog.participants({ topic_id: 'nope' })).toEqual([]);
  });

  it('has a template of each kind with parents only on question_outcome', () => {
    const tpls = catalog.templates();
    expect(new Set(tpls.map((t) => t.kind))).toEqual(new Set(['standalone', 'question', 'question_outcome']));
    for (const t of tpls) {
      expect('parent' in t).toBe(true);
      if (t.kind === 'question_outcome') expect(catalog.template(t.parent ?? '')?.kind).toBe('question');
      else expect(t.parent).toBeNull();
      const names = (t.keywords ?? []).map((k) => k.name);
      const used = new Set([...placeholders(t.name ?? ''), ...placeholders(t.description ?? '')]);
      expect([...used].every((n) => names.includes(n)), `${t.id} placeholders`).toBe(true);
      expect(names.every((n) => used.has(n ?? '')), `${t.id} keywords used`).toBe(true);
      expect(used.size).toBeGreaterThan(0);
    }
  });

  it('fills rules from the template and keeps question keywords consistent', () => {
    expect(out('out_ars_che_home').hl_rules).toBe('Resolves Yes if the full-time result is: Arsenal win; otherwise No.');
    for (const o of outcomes) expect(o.hl_rules).not.toMatch(/\{\w+\}/);
    for (const e of events) {
      for (const q of e.questions ?? []) {
        const tpl = catalog.template(q.hl_template_id ?? '');
        expect(tpl?.kind).toBe('question');
        expect(Object.keys(q.hl_keywords ?? {}).sort()).toEqual((tpl?.keywords ?? []).map((k) => k.name).sort());
        expect(isDecimal(q.deployer_fee_scale ?? '')).toBe(true);
      }
    }
  });

  it('derives providers from identities in the cut', () => {
    expect(catalog.providers().map((p) => p.id)).toEqual(['ap', 'opta', 'pyth', 'sportradar']);
    expect(catalog.providers({ topic_id: 'crypto' }).map((p) => p.id)).toEqual(['pyth']);
    expect(catalog.providers({ series_id: 'nba' }).map((p) => p.id)).toEqual(['sportradar']);
    expect(catalog.providers({ series_id: 'premier-league' }).map((p) => p.id)).toEqual(['opta', 'sportradar']);
    expect(catalog.providers({ topic_id: 'politics', category_id: 'international' })).toEqual([]);
    expect(catalog.providers({ series_id: 'unknown' })).toEqual([]);
  });
});
