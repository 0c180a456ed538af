/**
 * The status page at `/` in a real headless Chromium (Debian's `/usr/bin/chromium`, driven by
 * playwright-core; no browser download). The page is served by the real `startOpsServer` with fake
 * views whose status changes over time:
 *   initial  mm-main armed (45 s), arb-desk unarmed after a failed arm, small-desk ineligible -> NOT READY
 *   b-armed  arb-desk armed                                                                  -> READY
 *   a-low    mm-main's horizon drops below its 20 s minimum after a rate-limited re-arm         -> NOT READY
 *   down     /status answers 500                                                             -> UNREACHABLE
 *   back     /status answers again, with a new account whose name is HTML                    -> READY
 *   bot-silent bot-desk's bot fell silent (phase bot_silent, a cancel-soon deadline 6 s ahead), -> READY
 *            arb-desk's probed bot is waiting (start-up grace); mm-main's bot is alive throughout
 * Also the last fired cancel (the panel above the table and the account's triggers cell) and the
 * cold start's progress. Asserts rows and states, a countdown that ticks between polls, the readiness banner, updates
 * within one poll, the unreachable warning, no console errors, no external requests, that the
 * page works behind a path prefix, and that data never becomes markup. The silent-bot test runs in
 * virtual time on both sides (the fake keeper on a FakeClock, the page on Playwright's clock, paused
 * and advanced in step), so its countdown and ages are asserted as exact values. Saves
 * artifacts/status-page.png (light; also docs/status-page.png, the README's picture, regenerated on
 * every run), artifacts/status-page-dark.png and artifacts/status-page-unreachable.png.
 *
 * Without /usr/bin/chromium the suite is skipped locally and FAILS under CI (env CI set):
 * .ci/checks/browser.sh installs it. DMS_KEEPER_TEST_CHROMIUM overrides the path (to test that).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOpsServer, type OpsServer } from '../src/obs/http-server.js';
import { renderStatusPage } from '../src/obs/status-page.js';
import { systemClock, type Clock } from '../src/time/clock.js';
import { FakeClock } from '../src/time/fake-clock.js';
import { ROOT } from './support/cli.js';

// Page-side callbacks run in the browser; the Node type check has no DOM lib.
declare function getComputedStyle(e: unknown): { backgroundColor: string };

const CHROMIUM = process.env.DMS_KEEPER_TEST_CHROMIUM ?? '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
const inCi = Boolean(process.env.CI);
if (!present && !inCi) {
  console.warn(`status-page browser test SKIPPED: ${CHROMIUM} is absent. Install Debian's chromium with .ci/checks/browser.sh (CI must run it before npm test).`);
}

// ---- the fake keeper -------------------------------------------------------------------------

/**
 * The fake keeper's clock: every time it serves (venue_time, horizons, ages) is read from it. Real
 * time for the tests that watch the page run on its own; a FakeClock, advanced in step with the
 * page's Playwright clock, where the test asserts exact figures.
 */
let keeperClock: Pick<Clock, 'nowMs'> = systemClock();

type Phase = 'initial' | 'b-armed' | 'a-low' | 'down' | 'back' | 'bot-silent';
let phase: Phase = 'initial';
let aDeadline = Date.now() + 45_000;
let bDeadline: number | null = null;
const XSS_NAME = '<img src=x onerror="window.__xss=1">desk';
/** bot-desk (phase bot-silent): its bot was last seen at botSeenAt; the venue cancels at botDeadline. */
let botSeenAt = 0;
let botDeadline = 0;

interface LastArm { op: string; result: string; reason?: string; message?: string; path: string; at: string }

function account(name: string, deadline: number | null, over: Record<string, unknown>, now: number) {
  const horizon = deadline === null ? null : Math.round((deadline - now) / 100) / 10;
  return {
    name,
    address: '0x' + 'ab12'.repeat(10),
    account_type: 'main',
    phase: 'armed',
    should_be_armed: true,
    armed: deadline !== null && deadline > now,
    deadline: deadline === null ? null : new Date(deadline).toISOString(),
    horizon_seconds: horizon,
    min_horizon_seconds: 20,
    last_arm: null as LastArm | null,
    last_success_at: new Date(now - 4_000).toISOString(),
    open_orders: 3,
    positions: { count: 2, value_usdc: '1234.5', unrealized_pnl_usdc: '-12.25' },
    triggers_today: 1,
    agent: { address: '0x' + 'cd34'.repeat(10), source: 'approved', valid_until: new Date(now + 20 * 86_400_000).toISOString() },
    provision_error: null,
    path: 'rest',
    arm_when: 'always',
    on_shutdown: 'keep',
    notifications: true,
    rearm_every_seconds: 15,
    last_cancel_fired: null as null | Record<string, unknown>,
    bot: null as null | Record<string, unknown>,
    ...over,
  };
}

/** arb-desk's last scheduled cancel fired 5 minutes before the test started. */
const FIRED_AT = Date.now() - 300_000;
const FIRED = (_now: number) => ({ at: new Date(FIRED_AT).toISOString(), orders_cancelled: 5, positions_open: 2, position_value_usdc: '1234.5', unrealized_pnl_usdc: '-12.25', triggers_today: 8 });

function accounts() {
  const now = keeperClock.nowMs();
  const at = (ago: number) => new Date(now - ago).toISOString();
  // The agent check found arb-desk's agent missing from its master's list on the venue (agent-check.ts).
  const unlisted = { address: '0x' + '9a9a'.repeat(10), source: 'stored', valid_until: new Date(now + 20 * 86_400_000).toISOString(), venue: { listed: false, valid_until: null, checked_at: at(60_000) } };
  // Bot liveness (docs/liveness.md): mm-main's bot heartbeats every second; arb-desk's is probed,
  // not yet answered after a keeper restart (bot-silent phase only).
  const bot = (over: Record<string, unknown>) => ({ liveness: 'heartbeat', state: 'alive', last_seen: at(1_200), silent_since: null, silence_seconds: 5, on_silence: 'cancel_soon', cancel_soon_deadline: null, triggers_left: 8, ...over });
  const arbBot = phase === 'bot-silent' ? bot({ liveness: 'probe', state: 'waiting', last_seen: null, on_silence: 'stop_rearming', triggers_left: 2 }) : null;
  const list = [
    account('mm-main', aDeadline, {
      last_arm: phase === 'a-low'
        ? { op: 'arm', result: 'rate_limited', reason: 'global', message: '429 Too Many Requests', path: 'rest', at: at(2_000) }
        : { op: 'arm', result: 'ok', path: 'rest', at: at(3_000) },
      open_orders: 12,
      positions: { count: 4, value_usdc: '182340.5', unrealized_pnl_usdc: '1520.75' },
      triggers_today: 2,
      bot: bot({}),
    }, now),
    bDeadline === null
      ? account('arb-desk', null, {
        phase: 'unarmed',
        last_arm: { op: 'arm', result: 'error', reason: 'unavailable', message: '503 UNAVAILABLE: <b>upstream</b> busy', path: 'rest', at: at(1_500) },
        last_success_at: null,
        account_type: 'subaccount',
        triggers_today: 8,
        last_cancel_fired: FIRED(now),
        agent: unlisted,
      }, now)
      : account('arb-desk', bDeadline, { last_arm: { op: 'arm', result: 'ok', path: 'rest', at: at(500) }, account_type: 'subaccount', triggers_today: 8, last_cancel_fired: FIRED(now), agent: unlisted, bot: arbBot }, now),
    account('small-desk', null, {
      phase: 'ineligible',
      should_be_armed: false,
      last_arm: { op: 'arm', result: 'rejected', reason: 'ineligible', message: 'Cannot set scheduled cancel time until enough volume traded.', path: 'rest', at: at(60_000) },
      open_orders: 0,
      positions: null,
      triggers_today: 0,
      agent: { address: '0x' + 'ef56'.repeat(10), source: 'configured', valid_until: new Date(now + 36 * 3_600_000).toISOString() },
    }, now),
  ];
  if (phase === 'back') {
    list.push(account(XSS_NAME, null, { phase: 'idle', should_be_armed: false, arm_when: 'orders_open', open_orders: 0, positions: null, last_arm: null, agent: null }, now));
  }
  if (phase === 'bot-silent') {
    // Silent for 4 s after 5 s of silence: the keeper's cancel-soon arm was accepted; not to be armed.
    list.push(account('bot-desk', botDeadline, {
      phase: 'bot_silent',
      should_be_armed: false,
      last_arm: { op: 'arm', result: 'ok', path: 'rest', at: new Date(botSeenAt + 5_000).toISOString() },
      bot: bot({ state: 'silent', last_seen: new Date(botSeenAt).toISOString(), silent_since: new Date(botSeenAt + 5_000).toISOString(), cancel_soon_deadline: new Date(botDeadline).toISOString(), triggers_left: 2 }),
    }, now));
  }
  return list;
}

function faults() {
  return accounts()
    .filter((a) => a.should_be_armed && (a.horizon_seconds === null || a.horizon_seconds < a.min_horizon_seconds))
    .map((a) => ({ account: a.name, horizon_seconds: a.horizon_seconds }));
}

function status() {
  if (phase === 'down') throw new Error('keeper view unavailable');
  return {
    venue_time: new Date(keeperClock.nowMs()).toISOString(),
    cadence: { stretch: 1, arms_per_second: 0.2, budget_per_second: 10, capacity_accounts: 378, holds: true },
    clock_skew_seconds: 0.012,
    ws_connected: true,
    ready: faults().length === 0,
    // A cold start still under way while the page first loads; done once arb-desk is armed.
    start_progress: phase === 'initial'
      ? { accounts: 3, armed: 1, failed: 0, not_to_be_armed: 1, waiting: 1, elapsed_seconds: 4, eta_seconds: 12, complete: false }
      : { accounts: 3, armed: 2, failed: 0, not_to_be_armed: 1, waiting: 0, elapsed_seconds: 9, eta_seconds: 0, complete: true },
    accounts: accounts(),
  };
}

// ---- harness ---------------------------------------------------------------------------------

let ops: OpsServer;
let proxy: Server;
let proxyBase = '';
let base = '';
let browser: Browser | undefined;

/** A reverse proxy mounting the ops server under /ops/ (and a broken mount under /broken/). */
function startProxy(target: number): Promise<Server> {
  const s = createServer((req, res) => {
    const url = req.url ?? '/';
    const mount = /^\/(ops|broken)(\/.*)$/.exec(url);
    if (!mount) {
      res.writeHead(404).end();
      return;
    }
    if (mount[1] === 'broken' && mount[2] !== '/') {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
      return;
    }
    const up = request({ host: '127.0.0.1', port: target, path: mount[2], method: req.method, headers: { accept: req.headers.accept ?? '*/*' } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    up.end();
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

interface Watched {
  page: Page;
  /** console errors and uncaught page errors, tagged with the phase they happened in */
  errors: Array<{ phase: Phase; text: string; url: string }>;
  requests: string[];
}

/** `prepare` runs on the blank page before it loads the URL (to install a clock, say). */
async function open(url: string, colorScheme: 'light' | 'dark' = 'light', prepare?: (page: Page) => Promise<void>): Promise<Watched> {
  const page = await browser!.newPage({ viewport: { width: 1280, height: 400 }, colorScheme });
  await prepare?.(page);
  const w: Watched = { page, errors: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') w.errors.push({ phase, text: m.text(), url: m.location().url });
  });
  page.on('pageerror', (e) => w.errors.push({ phase, text: `uncaught: ${e.message}`, url: '' }));
  page.on('request', (r) => w.requests.push(r.url()));
  await page.goto(url);
  return w;
}

const row = (page: Page, name: string) => page.locator('#rows tr').filter({ has: page.locator('th', { hasText: name }) });
/** The cells after the row header: state, bot, deadline, min, last arm, orders, count, value, uPnL, triggers, agent. */
const cell = (page: Page, name: string, i: number) => row(page, name).locator('td').nth(i);
const seconds = async (page: Page, name: string) => parseFloat(await cell(page, name, 2).innerText());
const banner = (page: Page) => page.getByRole('status');

describe.skipIf(!present && !inCi)('status page in headless Chromium', () => {
  beforeAll(async () => {
    if (!present) throw new Error(`${CHROMIUM} is absent but CI is set: CI must install Debian's chromium (run .ci/checks/browser.sh before npm test)`);
    ops = await startOpsServer('127.0.0.1:0', {
      processHealth: () => ({ alive: true, lastLoopAgeMs: 1 }),
      readiness: () => ({ ready: faults().length === 0, faults: faults() }),
      status: () => {
        const { accounts, ...head } = status();
        return { head, accounts };
      },
      statusPage: renderStatusPage,
      registry: new Registry(),
    });
    base = `http://127.0.0.1:${ops.address.port}`;
    proxy = await startProxy(ops.address.port);
    const addr = proxy.address();
    proxyBase = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    proxy?.closeAllConnections();
    await ops?.close();
  });

  let w: Watched;
  afterEach(() => {
    keeperClock = systemClock();
  });

  it('shows one row per account with its state, numbers, tooltip and the NOT READY banner', async () => {
    w = await open(`${base}/`);
    const { page } = w;
    await expect.poll(() => page.locator('#rows tr').count(), { timeout: 3_000 }).toBe(3);

    // accessible structure: a captioned table with row headers, an aria-live status banner
    await expect.poll(() => page.getByRole('table').count()).toBe(1);
    expect(await page.locator('table caption').count()).toBe(1);
    expect(await page.locator('#rows th[scope="row"]').count()).toBe(3);
    expect(await banner(page).getAttribute('aria-live')).toBe('polite');

    expect(await cell(page, 'mm-main', 0).innerText()).toBe('armed');
    expect(await cell(page, 'arb-desk', 0).innerText()).toBe('unarmed');
    expect(await cell(page, 'small-desk', 0).innerText()).toBe('ineligible');
    expect(await cell(page, 'mm-main', 0).locator('.pill').getAttribute('class')).toContain('ok');
    expect(await cell(page, 'arb-desk', 0).locator('.pill').getAttribute('class')).toContain('bad');

    // last arm: result and reason inline, message in the tooltip (as text, never markup)
    expect(await cell(page, 'arb-desk', 4).innerText()).toContain('error (unavailable)');
    const tip = await cell(page, 'arb-desk', 4).getAttribute('title');
    expect(tip).toContain('reason: unavailable');
    expect(tip).toContain('message: 503 UNAVAILABLE: <b>upstream</b> busy');
    expect(await row(page, 'arb-desk').locator('b').count()).toBe(0);
    expect(await cell(page, 'small-desk', 4).getAttribute('title')).toContain('until enough volume traded');

    // orders, positions (count, value, uPnL), triggers of 10, agent source
    expect(await cell(page, 'mm-main', 5).innerText()).toBe('12');
    expect(await cell(page, 'mm-main', 6).innerText()).toBe('4');
    expect(await cell(page, 'mm-main', 7).innerText()).toBe('182,340.50');
    expect(await cell(page, 'mm-main', 8).innerText()).toBe('+1,520.75');
    expect(await cell(page, 'arb-desk', 8).innerText()).toBe('−12.25');
    expect(await cell(page, 'small-desk', 6).innerText()).toBe('—');
    expect(await cell(page, 'arb-desk', 9).locator('.l1').innerText()).toBe('8 / 10');

    // the last fired cancel: in the account's triggers cell and in the panel above the table
    expect(await cell(page, 'arb-desk', 9).locator('.l2').innerText()).toBe('fired 5 min ago');
    expect(await cell(page, 'mm-main', 9).locator('.l2').innerText()).toBe('');
    expect(await cell(page, 'arb-desk', 9).getAttribute('title')).toContain('5 orders cancelled');
    await expect.poll(() => page.locator('#fired').isVisible()).toBe(true);
    expect(await page.locator('#fired li').count()).toBe(1);
    expect(await page.locator('#fired li').innerText()).toMatch(
      /^arb-desk at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: 5 orders cancelled; 2 positions left open \(value 1,234\.50 USDC, uPnL −12\.25 USDC\)$/,
    );
    expect(await page.locator('#fired').innerText()).toContain('NOT closed');

    // the cold start's progress, while it lasts
    expect(await page.locator('#startup').innerText()).toBe('armed 1 of 3 · about 12.0 s to go');
    expect(await cell(page, 'mm-main', 10).locator('.l1').innerText()).toBe('approved');
    expect(await cell(page, 'mm-main', 10).locator('.l2').innerText()).toBe('0xcd34…cd34');
    expect(await cell(page, 'small-desk', 10).locator('.l1').innerText()).toBe('configured');
    expect(await cell(page, 'small-desk', 10).locator('.l2').innerText()).toBe('expires in 36 h');
    expect(await cell(page, 'arb-desk', 10).locator('.l2').innerText()).toBe('not listed on venue');
    expect(await cell(page, 'arb-desk', 10).getAttribute('title')).toContain("not listed in the master's agents on the venue at ");
    expect(await row(page, 'arb-desk').locator('th').innerText()).toContain('subaccount');

    // the bot column: mm-main's bot is alive; accounts without liveness show a dash
    expect(await cell(page, 'mm-main', 1).locator('.l1').innerText()).toBe('alive');
    expect(await cell(page, 'mm-main', 1).locator('.l2').first().innerText()).toMatch(/^last seen \d s ago$/);
    expect(await cell(page, 'small-desk', 1).innerText()).toBe('—');
    expect(await cell(page, 'small-desk', 1).getAttribute('title')).toContain('no liveness configured');
    expect(await page.locator('#bots').innerText()).toBe('1 alive');

    // header facts and the readiness banner naming the account at fault
    expect(await page.locator('#venue-time').innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await page.locator('#skew').innerText()).toBe('+0.012 s');
    expect(await page.locator('#ws').innerText()).toBe('connected');
    expect(await page.locator('#age').innerText()).toMatch(/s ago|just now/);
    expect(await page.locator('#conn').innerText()).toBe('live');
    expect(await banner(page).innerText()).toMatch(/^NOT READY: arb-desk: not armed \(unarmed\)$/);
    expect(await page.title()).toContain('NOT READY');
  });

  it('counts the deadline down between polls (ticks of 100-200 ms), consistent with real time', async () => {
    const { page } = w;
    const samples: number[] = [];
    for (let i = 0; i < 6; i++) {
      samples.push(await seconds(page, 'mm-main'));
      await page.waitForTimeout(200);
    }
    // six reads 200 ms apart all differ: the page ticks far more often than it polls (2 s)
    for (let i = 1; i < samples.length; i++) expect(samples[i]!).toBeLessThan(samples[i - 1]!);
    const a = await seconds(page, 'mm-main');
    const t = Date.now();
    await page.waitForTimeout(1_000);
    const b = await seconds(page, 'mm-main');
    const real = (Date.now() - t) / 1000;
    expect(a - b).toBeGreaterThan(real - 0.45);
    expect(a - b).toBeLessThan(real + 0.45);
    // and it matches the keeper's own horizon
    expect(Math.abs(b - (aDeadline - Date.now()) / 1000)).toBeLessThan(0.6);
    expect(await cell(page, 'arb-desk', 2).innerText()).toBe('—');
  });

  it('saves light and dark full-page screenshots', async () => {
    await mkdir(join(ROOT, 'artifacts'), { recursive: true });
    await w.page.screenshot({ path: join(ROOT, 'artifacts/status-page.png'), fullPage: true });
    // The README's picture: regenerated on every run (never compared pixel by pixel).
    await w.page.screenshot({ path: join(ROOT, 'docs/status-page.png'), fullPage: true });
    const dark = await open(`${base}/`, 'dark');
    await expect.poll(() => dark.page.locator('#rows tr').count(), { timeout: 3_000 }).toBe(3);
    const bg = await dark.page.locator('html').evaluate((e) => getComputedStyle(e).backgroundColor);
    expect(bg).toBe('rgb(13, 17, 23)');
    await dark.page.screenshot({ path: join(ROOT, 'artifacts/status-page-dark.png'), fullPage: true });
    expect(dark.errors).toEqual([]);
    await dark.page.close();
  });

  it('reflects a change within one poll: arb-desk becomes armed, the banner turns READY', async () => {
    const { page } = w;
    phase = 'b-armed';
    bDeadline = Date.now() + 58_000;
    const t = Date.now();
    await expect.poll(() => cell(page, 'arb-desk', 0).innerText(), { timeout: 2_700, interval: 50 }).toBe('armed');
    expect(Date.now() - t).toBeLessThan(2_700);
    await expect.poll(() => banner(page).innerText(), { timeout: 1_000 }).toMatch(/^READY: 2 of 3 accounts should be armed/);
    expect(await seconds(page, 'arb-desk')).toBeGreaterThan(50);
    expect(await cell(page, 'arb-desk', 4).locator('.l1').innerText()).toBe('ok');
    expect(await cell(page, 'arb-desk', 4).locator('.l2').innerText()).toMatch(/^rest · (just now|\d s ago)$/);
    expect(await page.locator('#summary').innerText()).toBe('3 · 2 armed');
    // start-up complete: the progress fact goes; the fired cancel stays visible
    expect(await page.locator('#startup-box').isVisible()).toBe(false);
    expect(await page.locator('#fired').isVisible()).toBe(true);
  });

  it('says NOT READY and names the account when a horizon drops below its minimum', async () => {
    const { page } = w;
    phase = 'a-low';
    aDeadline = Date.now() + 15_000;
    await expect.poll(() => banner(page).innerText(), { timeout: 2_700, interval: 50 }).toMatch(/^NOT READY: mm-main: horizon 1\d\.\d s < 20 s$/);
    expect(await cell(page, 'mm-main', 0).locator('.pill').getAttribute('class')).toContain('warn');
    expect(await row(page, 'mm-main').getAttribute('class')).toBe('sev-warn');
    expect(await cell(page, 'mm-main', 4).innerText()).toContain('rate_limited (global)');
  });

  it('shows an unreachable warning when /status fails, keeps extrapolating, and recovers', async () => {
    const { page } = w;
    phase = 'down';
    await expect.poll(() => banner(page).innerText(), { timeout: 2_700, interval: 50 }).toMatch(/^UNREACHABLE: cannot read status \(HTTP 500\) since \d\d:\d\d:\d\d UTC\. Showing the last data, from \d\d:\d\d:\d\d UTC; countdowns below are extrapolated/);
    expect(await page.locator('#conn').innerText()).toBe('unreachable');
    expect(await page.locator('#main').getAttribute('class')).toBe('stale');
    expect(await page.title()).toContain('UNREACHABLE');
    await page.screenshot({ path: join(ROOT, 'artifacts/status-page-unreachable.png'), fullPage: true });
    const a = await seconds(page, 'arb-desk');
    await page.waitForTimeout(300);
    expect(await seconds(page, 'arb-desk')).toBeLessThan(a);

    phase = 'back';
    await expect.poll(() => page.locator('#conn').innerText(), { timeout: 2_700, interval: 50 }).toBe('live');
    expect(await page.locator('#main').getAttribute('class')).toBe('');
    // a config reload added an account; its name is shown as text, never parsed as HTML
    await expect.poll(() => page.locator('#rows tr').count(), { timeout: 1_000 }).toBe(4);
    expect(await page.locator('#rows tr').nth(3).locator('th span').first().innerText()).toBe(XSS_NAME);
    expect(await page.locator('#rows img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
  });

  it('made no external requests and logged no errors except the failed /status fetches', async () => {
    const { page, requests, errors } = w;
    const paths = new Set(requests.map((u) => (u.startsWith(`${base}/`) ? u.slice(base.length) : `EXTERNAL ${u}`)));
    expect([...paths].sort()).toEqual(['/', '/status']);
    expect(errors.filter((e) => !(e.phase === 'down' && e.url === `${base}/status` && /status of 500/.test(e.text)))).toEqual([]);
    expect(errors.some((e) => e.phase === 'down')).toBe(true);
    await page.close();
  });

  it('works behind a path prefix (relative URLs) and warns when status never answers', async () => {
    const ok = await open(`${proxyBase}/ops/`);
    await expect.poll(() => ok.page.locator('#rows tr').count(), { timeout: 3_000 }).toBe(4);
    expect(await ok.page.locator('#conn').innerText()).toBe('live');
    expect([...new Set(ok.requests)].sort()).toEqual([`${proxyBase}/ops/`, `${proxyBase}/ops/status`]);
    expect(ok.errors).toEqual([]);
    await ok.page.close();

    const broken = await open(`${proxyBase}/broken/`);
    await expect.poll(() => banner(broken.page).innerText(), { timeout: 3_000 }).toMatch(/^UNREACHABLE: cannot read status \(HTTP 502\).*No data yet\.$/);
    expect(await broken.page.locator('#rows tr').count()).toBe(0);
    expect(broken.errors.every((e) => /status of 502/.test(e.text))).toBe(true);
    await broken.page.close();
  });

  it("marks a silent bot's row, counts its cancel-soon deadline down and ages last seen live", async () => {
    // Virtual time on both sides, so every figure is one exact value however busy the machine: the
    // fake keeper reads a FakeClock; the page's Date, performance.now and timers (its 100 ms tick, its
    // 2 s poll) run on Playwright's clock, paused at the same instant t0 and advanced in step. Only
    // the fetch itself is real I/O, and while the page's clock is paused it cannot move any figure.
    const t0 = Math.ceil(Date.now() / 1_000) * 1_000; // near real time: other rows' dates stay plausible
    const keeper = new FakeClock(t0);
    keeperClock = keeper;
    phase = 'bot-silent';
    aDeadline = t0 + 45_000; // mm-main re-armed since a-low
    bDeadline = t0 + 58_000; // arb-desk re-armed too: its horizon must not run down with the earlier tests' wall time
    botSeenAt = t0 - 9_000;
    botDeadline = t0 + 6_000;
    // Installed well before t0 (pausing on the blank page must move its time forward, however slow
    // the two calls), then paused at t0 before the page loads: its first poll is answered at keeper
    // t0 and lands at page t0.
    const s = await open(`${base}/`, 'light', async (p) => {
      await p.clock.install({ time: t0 - 60_000 });
      await p.clock.pauseAt(t0);
    });
    const { page } = s;
    /** Moves the keeper and the page forward together; the page runs every tick (and poll) due. */
    const advance = async (ms: number) => {
      await keeper.advance(ms);
      await page.clock.runFor(ms);
    };
    await expect.poll(() => page.locator('#rows tr').count(), { timeout: 3_000 }).toBe(4);
    expect(await page.evaluate(() => Date.now())).toBe(t0);
    expect(await page.locator('#age').innerText()).toBe('0.0 s ago');

    // the phase and the row: red like a fired cancel, the deadline counted as the cancel coming
    expect(await cell(page, 'bot-desk', 0).innerText()).toBe('bot_silent');
    expect(await cell(page, 'bot-desk', 0).locator('.pill').getAttribute('class')).toContain('bad');
    expect((await row(page, 'bot-desk').getAttribute('class'))?.split(' ').sort()).toEqual(['bot-silent', 'sev-bad']);
    expect(await row(page, 'bot-desk').evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(255, 235, 233)');
    expect(await cell(page, 'bot-desk', 2).locator('.v').getAttribute('class')).toContain('t-bad');

    // the bot cell: state, last seen, the cancel-soon deadline; the rest in its tooltip.
    // last seen is keeper time (venue time + the 0.012 s skew): 9.012 s at t0.
    const botCell = cell(page, 'bot-desk', 1);
    const seen = () => botCell.locator('.l2').nth(0).innerText();
    const cancel = () => botCell.locator('.l2').nth(1).innerText();
    expect(await botCell.locator('.l1').innerText()).toBe('silent');
    expect(await botCell.locator('.l1').getAttribute('class')).toContain('t-bad');
    expect(await seen()).toBe('last seen 9 s ago');
    expect(await cancel()).toBe('cancel in 6.0 s');
    const title = await botCell.getAttribute('title');
    expect(title).toContain('heartbeat liveness · silent after 5 s without a heartbeat · on silence: cancel_soon');
    expect(title).toContain(`cancel-soon deadline: ${new Date(botDeadline).toISOString()} (venue time)`);
    expect(title).toContain("2 of the venue's 10 daily triggers left");
    expect(title).toContain(`silent since: ${new Date(botSeenAt + 5_000).toISOString()}`);

    // live between polls: the cancel comes nearer and the bot ages, counted by the page's own tick
    await advance(1_100);
    expect(await page.locator('#age').innerText()).toBe('1 s ago'); // no poll yet: extrapolated
    expect(await cancel()).toBe('cancel in 4.9 s');
    expect(await seen()).toBe('last seen 10 s ago');

    // and across a poll (due at t0 + 2 s): the keeper's answer, read at keeper t0 + 2 s, agrees
    // with what the page extrapolated, to the tenth
    await advance(900);
    await expect.poll(() => page.locator('#age').innerText(), { timeout: 3_000 }).toBe('0.0 s ago');
    expect(await page.locator('#venue-time').innerText()).toBe(new Date(t0 + 2_000).toISOString().slice(0, 19).replace('T', ' ') + ' UTC');
    expect(await cancel()).toBe('cancel in 4.0 s');
    expect(await seen()).toBe('last seen 11 s ago');

    // a probed bot in its start-up grace; the alive one unmarked; the fact counts both
    expect(await cell(page, 'arb-desk', 1).locator('.l1').innerText()).toBe('waiting');
    expect(await cell(page, 'arb-desk', 1).locator('.l2').nth(0).innerText()).toBe('not seen yet');
    expect(await cell(page, 'arb-desk', 1).locator('.l2').nth(1).innerText()).toBe('');
    expect(await cell(page, 'arb-desk', 1).getAttribute('title')).toMatch(/^probe liveness · silent after 5 s without a 2xx probe · on silence: stop_rearming\nwaiting: /);
    expect((await row(page, 'mm-main').getAttribute('class')) ?? '').not.toContain('bot-silent');
    expect(await page.locator('#bots').innerText()).toBe('2 alive · 1 silent');
    expect(await page.locator('#bots').getAttribute('class')).toBe('t-bad');
    // not to be armed: readiness does not count it
    expect(await banner(page).innerText()).toMatch(/^READY: 2 of 4 accounts should be armed/);

    await page.screenshot({ path: join(ROOT, 'artifacts/status-page-bot-silent.png'), fullPage: true });
    expect([...new Set(s.requests)].sort()).toEqual([`${base}/`, `${base}/status`]);
    expect(s.errors).toEqual([]);
    await page.close();
  });
});
