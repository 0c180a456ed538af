/**
 * The status page in a real headless Chromium (Debian's, driven by playwright-core): rows per
 * account, live countdowns, readiness banner, updates on the next poll, an unreachable warning,
 * no external requests. Saves artifacts/status-page.png.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpsServer, type OpsServer } from '../src/obs/http-server.js';
import { renderStatusPage } from '../src/obs/status-page.js';
import { ROOT } from './support/cli.js';

// The page-side callbacks run in the browser; the Node type check has no DOM lib, so declare the
// little they use (strings would be eval'd, which the page's CSP rightly forbids).
declare const document: {
  querySelectorAll(selector: string): { length: number };
  querySelector(selector: string): { textContent: string | null } | null;
};

const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present && process.env.CI) throw new Error(`${CHROMIUM} is missing: CI must install it (.ci/checks/browser.sh)`);

interface Acct {
  name: string;
  phase: string;
  should_be_armed: boolean;
  horizon_seconds: number | null;
  last_arm: { op: string; result: string; reason?: string; message?: string; path: string; at: string } | null;
}

function account(a: Acct) {
  return {
    address: '0x' + 'ab'.repeat(20),
    account_type: 'main',
    armed: a.horizon_seconds !== null && a.horizon_seconds > 0,
    deadline: a.horizon_seconds === null ? null : new Date(Date.now() + a.horizon_seconds * 1000).toISOString(),
    min_horizon_seconds: 20,
    last_success_at: null,
    open_orders: 3,
    positions: { count: 2, value_usdc: '1234.5', unrealized_pnl_usdc: '-12.25' },
    triggers_today: 1,
    agent: { address: '0x' + 'cd'.repeat(20), source: 'approved', valid_until: null },
    provision_error: null,
    path: 'rest',
    arm_when: 'always',
    on_shutdown: 'keep',
    notifications: true,
    rearm_every_seconds: 15,
    ...a,
  };
}

let state: 'initial' | 'recovered' | 'down' = 'initial';
function status() {
  if (state === 'down') throw new Error('keeper view unavailable');
  const b: Acct =
    state === 'initial'
      ? { name: 'arb-desk', phase: 'unarmed', should_be_armed: true, horizon_seconds: 8, last_arm: { op: 'arm', result: 'error', reason: 'unavailable', message: '503 UNAVAILABLE', path: 'rest', at: new Date().toISOString() } }
      : { name: 'arb-desk', phase: 'armed', should_be_armed: true, horizon_seconds: 58, last_arm: { op: 'arm', result: 'ok', path: 'rest', at: new Date().toISOString() } };
  const accounts = [
    account({ name: 'mm-main', phase: 'armed', should_be_armed: true, horizon_seconds: 45, last_arm: { op: 'arm', result: 'ok', path: 'rest', at: new Date().toISOString() } }),
    account(b),
    account({ name: 'small-desk', phase: 'ineligible', should_be_armed: false, horizon_seconds: null, last_arm: { op: 'arm', result: 'rejected', reason: 'ineligible', message: 'Cannot set scheduled cancel time until enough volume traded.', path: 'rest', at: new Date().toISOString() } }),
  ];
  return {
    venue_time: new Date().toISOString(),
    clock_skew_seconds: 0.012,
    ws_connected: true,
    ready: state !== 'initial',
    cadence: { stretch: 1, arms_per_second: 0.2, budget_per_second: 10, capacity_accounts: 378, holds: true },
    accounts,
  };
}

let server: OpsServer;
let browser: Browser | undefined;
beforeAll(async () => {
  server = await startOpsServer('127.0.0.1:0', {
    liveness: () => ({ alive: true, lastLoopAgeMs: 1 }),
    readiness: () => ({ ready: state !== 'initial', faults: [] }),
    status,
    statusPage: renderStatusPage,
    registry: new Registry(),
  });
  if (present) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
  }
});
afterAll(async () => {
  await browser?.close();
  await server.close();
});

describe.skipIf(!present)('status page in headless Chromium', () => {
  it('shows every account with a live countdown, the banner, updates, an unreachable warning, and nothing external', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 520 } });
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => requests.push(r.url()));
    const base = `http://127.0.0.1:${server.address.port}`;
    await page.goto(`${base}/`);
    await page.waitForFunction(() => document.querySelectorAll('#rows tr').length === 3);

    const rowText = async (name: string) => page.locator('#rows tr', { hasText: name }).innerText();
    expect(await rowText('mm-main')).toContain('armed');
    expect(await rowText('arb-desk')).toContain('unarmed');
    expect(await rowText('arb-desk')).toContain('unavailable');
    expect(await rowText('small-desk')).toContain('ineligible');
    expect(await page.locator('#banner').innerText()).toMatch(/NOT READY/);

    // the countdown ticks between polls
    const secs = async () => Number(/([\d.]+) s/.exec(await page.locator('#rows tr', { hasText: 'mm-main' }).locator('td').nth(2).innerText())![1]);
    const a = await secs();
    await page.waitForTimeout(1_000);
    const b = await secs();
    expect(a - b).toBeGreaterThan(0.5);
    expect(a - b).toBeLessThan(1.8);

    await mkdir(join(ROOT, 'artifacts'), { recursive: true });
    await page.screenshot({ path: join(ROOT, 'artifacts/status-page.png'), fullPage: true });

    state = 'recovered';
    await page.waitForFunction(() => document.querySelector('#banner')?.textContent?.startsWith('ready'), undefined, { timeout: 5_000 });
    expect(await rowText('arb-desk')).toContain('armed');

    state = 'down';
    await page.waitForFunction(() => document.querySelector('#meta')?.textContent?.includes('cannot reach /status'), undefined, { timeout: 5_000 });

    expect(requests.every((u) => u.startsWith(base))).toBe(true);
    expect(errors.filter((e) => !e.includes('500'))).toEqual([]);
    await page.close();
  }, 30_000);
});
