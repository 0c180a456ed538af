/**
 * One venue port: nothing in src/ reaches the venue except through src/venue/port.ts, so every
 * request is admitted by the shared budget, held after a 429 and sampled for the venue clock in
 * one place. The simulator (its own server) and tests are exempt.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [p] : [];
  });
}

/** Who may do what: the port builds the clients (REST, exchange, info) and admits requests; the clients use the transport. */
const RULES: Array<{ what: string; pattern: RegExp; allowed: string[] }> = [
  { what: 'builds a REST, exchange or info client', pattern: /new (RestClient|ExchangeClient|InfoClient)\(/, allowed: ['src/venue/port.ts'] },
  { what: 'admits a request through the budget', pattern: /\bscheduler\.run\(|\.run\(\{ kind: '(arm|read)'/, allowed: ['src/venue/port.ts', 'src/venue/polymarket/port.ts'] },
  { what: 'sends on the HTTP transport', pattern: /transport\.request\(/, allowed: ['src/venue/rest.ts', 'src/venue/exchange.ts', 'src/venue/info.ts', 'src/venue/polymarket/clob.ts'] },
];

describe('architecture', () => {
  const files = sources(join(ROOT, 'src')).filter((f) => !relative(ROOT, f).startsWith('src/sim/'));

  it.each(RULES)('only $allowed $what', ({ pattern, allowed }) => {
    const offenders = files.filter((f) => pattern.test(readFileSync(f, 'utf8'))).map((f) => relative(ROOT, f));
    expect(offenders.filter((f) => !allowed.includes(f))).toEqual([]);
    expect(offenders.length).toBeGreaterThan(0); // the rule still matches something: not vacuous
  });
});

/**
 * Folders ranked one way: a file imports only from its own folder or a folder ranked below it.
 * The ranking, lowest first, and why each sits where it does:
 * - state: the state directory's files (atomic writes, trigger counts, stored agents); imports nothing of ours.
 * - time: the clocks (the injected local clock, its fake for tests, the venue clock estimate).
 * - budget: the request budget (scheduler, request classes, limits, the shared budget through Redis):
 *   pacing, no venue facts.
 * - venue: the venue client (transport, decoders, port, signing) and its facts; paced by the budget.
 * - plan: the budget plan, pure (budget-plan.ts the entry; the horizon arithmetic, the cold start's order,
 *   the read plan): every figure the keeper acts on and check-config prints.
 * - heartbeat-client: the bot-side heartbeat client (the `heartbeat` command, the demo bots); on our clocks only.
 * - config: the YAML, its schema and rules, shards; reads venue facts and the plan's arithmetic.
 * - obs: metrics, logs, the ops HTTP server and the status page; reads the config's grammar.
 * - switch: one account's dead man's switch: the pure machine, its runner (timers, one request at a time),
 *   the signer that sends its arms, a fired cancel read back.
 * - liveness: whether each account's bot is alive (heartbeats, probes, the fleet's relay); verdicts for the switch.
 * - account: one account whole (account.ts) and the parts accounts share (account-parts.ts: the plan's shell
 *   and its slot calendar, the cold start's gate, agents, the address's action budget, the agent check, the watcher, the reports).
 * - keeper: the set of accounts, its loop, reload, start and stop, and what it shows (/status, /readyz).
 * - fleet: instances sharing accounts (membership through Redis, ownership, the handover).
 * - sim: the venue simulator; speaks the venue's interface (venue), on our clocks (time).
 * - app: the composition root; builds all of the above.
 * - cli: the shell (argv, env, signals, exit codes) and check-config's printout; main.ts above it.
 * Tests are exempt (a test may drive its subject from above). Type-only imports count too: a
 * type that must be imported from above belongs lower.
 */
const FOLDER_RANK = ['state', 'time', 'budget', 'venue', 'plan', 'heartbeat-client', 'config', 'obs', 'switch', 'liveness', 'account', 'keeper', 'fleet', 'sim', 'app', 'cli', 'main.ts'] as const;

/** Every relative import (static, type-only or dynamic) of a source file, as repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)) {
    out.push(relative(ROOT, join(file, '..', m[1]!.replace(/\.js$/, '.ts'))));
  }
  return out;
}

/** `src/<folder>/...` -> the folder; `src/main.ts` -> `main.ts`. */
function folderOf(path: string): string {
  return path.split('/')[1]!;
}

describe('architecture: folders ranked one way, no circles', () => {
  const files = sources(join(ROOT, 'src')).map((f) => relative(ROOT, f));
  const graph = new Map(files.map((f) => [f, importsOf(join(ROOT, f))]));

  it('every folder of src/ has a rank', () => {
    const folders = new Set(files.map(folderOf));
    expect([...folders].filter((f) => !(FOLDER_RANK as readonly string[]).includes(f))).toEqual([]);
  });

  it('no file imports from a folder ranked above its own', () => {
    const offenders: string[] = [];
    for (const [file, deps] of graph) {
      const rank = FOLDER_RANK.indexOf(folderOf(file) as (typeof FOLDER_RANK)[number]);
      for (const dep of deps) {
        if (!dep.startsWith('src/')) continue;
        if (FOLDER_RANK.indexOf(folderOf(dep) as (typeof FOLDER_RANK)[number]) > rank) offenders.push(`${file} -> ${dep}`);
      }
    }
    expect(offenders).toEqual([]);
    // not vacuous: imports across folders exist, and all of them point down
    expect([...graph.values()].flat().filter((d) => d.startsWith('src/')).length).toBeGreaterThan(100);
  });

  it('no circle between files', () => {
    const cycles: string[][] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 'open');
      stack.push(f);
      for (const d of graph.get(f) ?? []) {
        if (!graph.has(d)) continue;
        if (state.get(d) === 'open') cycles.push([...stack.slice(stack.indexOf(d)), d]);
        else if (!state.has(d)) visit(d);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of graph.keys()) if (!state.has(f)) visit(f);
    expect(cycles.map((c) => c.join(' -> '))).toEqual([]);
  });
});

/**
 * The venue as data: the switch and the plan take the account's venue's facts (minimum lead, daily
 * trigger limit, kind of switch: venue/switch-facts.ts) as a parameter, from the port
 * (VenuePort.switchFacts), so a second venue is another value and not another import threaded
 * through every layer. Type-only imports of venue/facts count too.
 */
describe('architecture: the core takes the venue as data', () => {
  const core = sources(join(ROOT, 'src'))
    .map((f) => relative(ROOT, f))
    .filter((f) => f === 'src/switch/switch-machine.ts' || f.startsWith('src/plan/'));

  it('no file under src/plan/ nor src/switch/switch-machine.ts imports venue/facts', () => {
    expect(core.filter((f) => importsOf(join(ROOT, f)).includes('src/venue/facts.ts'))).toEqual([]);
    // not vacuous: the switch and the plan's files are there, and they do get the facts' type
    expect(core).toContain('src/switch/switch-machine.ts');
    expect(core.filter((f) => f.startsWith('src/plan/')).length).toBeGreaterThan(3);
    expect(core.filter((f) => importsOf(join(ROOT, f)).includes('src/venue/switch-facts.ts')).length).toBeGreaterThanOrEqual(2);
  });
});
