/**
 * Hostile input, property-based (fast-check): venue responses and config files that are random,
 * truncated, mutated or oversized. Nothing throws anything but a typed error, nothing malformed is
 * reported as success, every error names its cause, and no key-shaped value is echoed.
 */
import fc from 'fast-check';
import { slotsByName } from '../src/liveness/test-support.js';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../src/config/errors.js';
import { parseConfig } from '../src/config/load.js';
import { buildCatalog } from '../src/sim/catalog/index.js';
import { decodeActionResponse, decodeResponse, decodeValue, EventSchema, OrdersPageSchema, OutcomeBookSchema, PositionsPageSchema } from '../src/venue/decode.js';
import { ActionError, DecodeError, RestError } from '../src/venue/errors.js';
import type { HttpResponse } from '../src/venue/http.js';
import { ROOT } from './support/cli.js';

const RUNS = 300;

function response(status: number, body: string | Buffer): HttpResponse {
  return { status, headers: {}, body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'), latencyMs: 1, sentMonoMs: 0, recvMonoMs: 1 };
}

/** Decodes and classifies: 'ok' | a typed error's code. Anything else (a crash) fails the test. */
function outcome(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (e instanceof DecodeError || e instanceof RestError || e instanceof ActionError) {
      expect(e.message.length).toBeGreaterThan(0);
      expect(e.message.length).toBeLessThan(2_000); // names the cause, never dumps a body
      return e.code;
    }
    throw e;
  }
}

const catalog = buildCatalog({ nowMs: Date.UTC(2026, 10, 22, 12) });
const validEvents = catalog.events().map((e) => JSON.stringify(e));

/** Replaces one value somewhere in a JSON tree with something else. */
function mutate(value: unknown, path: number[], replacement: unknown): unknown {
  if (path.length === 0 || value === null || typeof value !== 'object') return replacement;
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  if (entries.length === 0) return replacement;
  const [key, child] = entries[path[0]! % entries.length]!;
  if (Array.isArray(value)) {
    const copy: unknown[] = [...value];
    copy[key as number] = mutate(child, path.slice(1), replacement);
    return copy;
  }
  return { ...(value as Record<string, unknown>), [key]: mutate(child, path.slice(1), replacement) };
}

describe('response decoders under hostile bodies', () => {
  /** A valid event, a path into it, and a value of the wrong type to put there. */
  const eventMutation = [
    fc.constantFrom(...validEvents),
    fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
    fc.constantFrom<unknown>(12.5, true, { nested: 1 }, [1, 2], -1e308, 'not-a-decimal-or-enum', null),
  ] as const;

  it('random bytes and random JSON: a typed error or a valid decode, never a crash', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)), fc.json().map((s) => Buffer.from(s))), fc.constantFrom(200, 400, 404, 429, 500, 502, 503), (body, status) => {
        for (const schema of [OrdersPageSchema, PositionsPageSchema, OutcomeBookSchema, EventSchema]) {
          const r = outcome(() => decodeResponse('GET /x', response(status, body), schema));
          if (status !== 200) expect(r).not.toBe('ok');
        }
        const a = outcome(() => decodeActionResponse('exchange:scheduleCancel', response(status, body)));
        if (a === 'ok') {
          // success only for exactly {"status":"ok", ...}
          expect((JSON.parse(body.toString()) as { status: unknown }).status).toBe('ok');
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('truncations of valid events never decode as success unless the cut is whole JSON', () => {
    fc.assert(
      fc.property(fc.constantFrom(...validEvents), fc.nat(), (text, cut) => {
        const at = cut % text.length;
        const body = text.slice(0, at);
        const r = outcome(() => decodeResponse('GET /v1/events/{id}', response(200, body), EventSchema));
        if (r === 'ok') expect(() => JSON.parse(body)).not.toThrow();
        else expect(r).toBe('VENUE_DECODE_ERROR');
      }),
      { numRuns: RUNS },
    );
  });

  it('strictly (the conformance checker), a wrong type anywhere in a valid event is a DecodeError naming the path', () => {
    let refused = 0;
    let runs = 0;
    fc.assert(
      fc.property(...eventMutation, (text, path, replacement) => {
        const mutated = mutate(JSON.parse(text), path, replacement);
        const body = JSON.stringify(mutated);
        runs++;
        try {
          decodeValue('GET /v1/events/{id}', EventSchema, JSON.parse(body));
        } catch (e) {
          refused++;
          expect(e).toBeInstanceOf(DecodeError);
          expect((e as DecodeError).reason).toBe('bad_shape');
          expect((e as DecodeError).message).toMatch(/: .+/);
        }
      }),
      { numRuns: RUNS },
    );
    // most mutations are type errors (some land on a nullable field or an unknown key): not vacuous
    expect(refused / runs).toBeGreaterThan(0.5);
  });

  it('tolerantly (how the keeper reads), a wrong type anywhere in a valid event is skipped, and what remains conforms', () => {
    let changed = 0;
    fc.assert(
      fc.property(...eventMutation, (text, path, replacement) => {
        const out = decodeResponse('GET /v1/events/{id}', response(200, JSON.stringify(mutate(JSON.parse(text), path, replacement))), EventSchema);
        expect(() => decodeValue('GET /v1/events/{id}', EventSchema, out)).not.toThrow();
        if (JSON.stringify(out) !== JSON.stringify(decodeValue('GET /v1/events/{id}', EventSchema, JSON.parse(text)))) changed++;
      }),
      { numRuns: RUNS },
    );
    expect(changed).toBeGreaterThan(0);
  });

  it('orders pages: a wrong value inside an order is skipped; at data, an element or next_cursor it fails closed', () => {
    const contract = { critical: [['data'], ['data', '*'], ['next_cursor']], required: ['data'] };
    const order = { order_id: 'o1', price: '0.5', side: 0, direction: 'buy', status: 'open', account: { main_account: { address: '0xab', account_type: 'main' } } };
    fc.assert(
      fc.property(
        fc.constantFrom('order_id', 'price', 'side', 'direction', 'status', 'account', 'created_at'),
        fc.constantFrom<unknown>(12.5, true, { nested: 1 }, [1, 2], 'not-a-decimal-or-enum', null),
        (key, replacement) => {
          const page = decodeResponse('GET /x', response(200, JSON.stringify({ data: [order, { ...order, [key]: replacement }], next_cursor: null })), OrdersPageSchema, contract);
          expect(page.data).toHaveLength(2);
        },
      ),
      { numRuns: RUNS },
    );
    for (const bad of [{ data: [order, 7] }, { data: { 0: order } }, { data: [order], next_cursor: 3 }, { next_cursor: 'x' }]) {
      expect(outcome(() => decodeResponse('GET /x', response(200, JSON.stringify(bad)), OrdersPageSchema, contract))).toBe('VENUE_DECODE_ERROR');
    }
  });

  it('oversized arrays and strings are decoded or refused, never crash', () => {
    const big = JSON.stringify({ data: Array.from({ length: 20_000 }, (_, i) => ({ order_id: `o${i}`, price: '0.5', side: 0 })) });
    expect(outcome(() => decodeResponse('GET /x', response(200, big), OrdersPageSchema))).toBe('ok');
    const huge = JSON.stringify({ data: [{ order_id: 'x'.repeat(5_000_000) }] });
    expect(['ok', 'VENUE_DECODE_ERROR']).toContain(outcome(() => decodeResponse('GET /x', response(200, huge), OrdersPageSchema)));
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(outcome(() => decodeResponse('GET /x', response(200, deep), OrdersPageSchema))).toBe('VENUE_DECODE_ERROR');
  });
});

describe('config loader under hostile files', () => {
  const example = readFileSync(join(ROOT, 'config/dms-keeper.example.yaml'), 'utf8');
  const KEY = '0x' + 'ab'.repeat(32);
  const env = { CREDENTIALS_DIRECTORY: '/nonexistent' };
  const load = (text: string) =>
    parseConfig(text, {
      env,
      baseDir: '/nonexistent',
      readFile: async () => `${KEY}\n`,
      stat: async () => ({ mode: 0o100600, size: 67, isFile: () => true }),
    });

  async function classify(text: string): Promise<'ok' | ConfigError> {
    try {
      await load(text);
      return 'ok';
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      expect(e.problems.length).toBeGreaterThan(0);
      for (const p of e.problems) {
        expect(typeof p.path).toBe('string');
        expect(p.message.length).toBeGreaterThan(0);
      }
      expect(e.message).not.toContain(KEY.slice(2));
      return e;
    }
  }

  it('the example loads (with stub key files)', async () => {
    expect(await classify(example)).toBe('ok');
  });

  it('random text is a ConfigError with paths, or a valid config; never another exception', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), async (text) => {
        await classify(text);
      }),
      { numRuns: RUNS },
    );
  });

  it('line-level mutations of the example (deleted, duplicated, truncated, injected inline keys) never crash nor echo keys', async () => {
    const lines = example.split('\n');
    await fc.assert(
      fc.asyncProperty(fc.nat(lines.length - 1), fc.constantFrom('delete', 'duplicate', 'truncate', 'inline-key', 'garbage'), fc.string({ maxLength: 20 }), async (i, op, junk) => {
        const copy = [...lines];
        if (op === 'delete') copy.splice(i, 1);
        if (op === 'duplicate') copy.splice(i, 0, copy[i]!);
        if (op === 'truncate') copy[i] = copy[i]!.slice(0, Math.floor(copy[i]!.length / 2));
        if (op === 'inline-key') copy[i] = copy[i]!.replace(/\{ file: [a-z-]+\.master \}/, `"${KEY}"`);
        if (op === 'garbage') copy[i] = `${copy[i]}${junk}`;
        await classify(copy.join('\n'));
      }),
      { numRuns: RUNS },
    );
  });

  it('an inline key is refused without being echoed; deep nesting and huge documents are refused cleanly', async () => {
    const inline = example.replace('master_key: { file: alice.master }', `master_key: "${KEY}"`);
    const r = await classify(inline);
    expect(r).toBeInstanceOf(ConfigError);
    expect((r as ConfigError).problems.some((p) => p.path.startsWith('accounts[0].master_key'))).toBe(true);
    expect(await classify('a:\n' + Array.from({ length: 2_000 }, (_, i) => `${'  '.repeat(Math.min(i, 200))}k${i}:`).join('\n'))).toBeInstanceOf(ConfigError);
    expect(await classify(`accounts:\n${'  - name: x\n    address: "0x12"\n'.repeat(20_000)}`)).toBeInstanceOf(ConfigError);
  }, 60_000);
});

describe('heartbeats under hostile requests', () => {
  const TOKEN = 'the-bot-token-0123456789';
  const OTHER = 'another-bot-token-0123456789';

  it('random bodies and Authorization headers :: a 4xx JSON refusal or a 200 for a right token only; nothing refused changes a bot', async () => {
    const { BotLiveness } = await import('../src/liveness/bot-liveness.js');
    const { FakeClock } = await import('../src/time/fake-clock.js');
    const { createMetrics } = await import('../src/obs/metrics.js');
    const { pino } = await import('pino');
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12));
    const metrics = createMetrics({ version: 'test', defaultMetrics: false });
    const bots = new BotLiveness({ slot: slotsByName(), clock, metrics, logger: pino({ level: 'silent' }) });
    const log = pino({ level: 'silent' });
    await bots.configure('a', { silenceMs: 5_000, onSilence: 'cancel_soon', heartbeat: { token: async () => TOKEN } }, log);
    await bots.configure('b', { silenceMs: 5_000, onSilence: 'cancel_soon', heartbeat: { token: async () => OTHER } }, log);
    await bots.configure('p', { silenceMs: 5_000, onSilence: 'cancel_soon', probe: { url: 'http://127.0.0.1:1/h', everyMs: 1_000, timeoutMs: 500 } }, log);
    const body = fc.oneof(
      fc.string(),
      fc.json(),
      fc.record({ accounts: fc.array(fc.oneof(fc.constantFrom('a', 'b', 'p', 'zz', ''), fc.string(), fc.integer()), { maxLength: 5 }) }).map((o) => JSON.stringify(o)),
    );
    const auth = fc.oneof(fc.constant(undefined), fc.string(), fc.constantFrom(`Bearer ${TOKEN}`, `Bearer ${OTHER}`, `bearer ${TOKEN}`, `Bearer ${TOKEN} x`, `Basic ${TOKEN}`));
    await fc.assert(
      fc.asyncProperty(body, auth, async (b, a) => {
        const before = JSON.stringify([bots.view('a'), bots.view('b')]);
        const r = bots.heartbeat({ authorization: a, body: b });
        expect([200, 400, 401, 404, 429]).toContain(r.status);
        expect(typeof r.body).toBe('object');
        if (r.status !== 200) {
          expect(r.body.error).toMatch(/^(malformed|unauthorized|unknown_account|rate_limited)$/);
          expect(JSON.stringify([bots.view('a'), bots.view('b')])).toBe(before);
          expect(JSON.stringify(r.body)).not.toContain(TOKEN);
        } else {
          // accepted: every name is a heartbeat account of the presented token
          const names = (JSON.parse(b) as { accounts: string[] }).accounts;
          const token = a!.replace(/^bearer\s+/i, '').trim();
          for (const n of names) expect(n === 'a' ? TOKEN : n === 'b' ? OTHER : null).toBe(token);
        }
        await clock.advance(60); // keeps the per-second rate in play without exhausting it
      }),
      { numRuns: RUNS },
    );
    bots.stop();
  });
});
