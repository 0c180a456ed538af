/**
 * /metrics of a running keeper: the built CLI on the example config (embedded simulator), scraped
 * over HTTP like Prometheus does. Every metric of DESIGN.md section 2 with exactly its labels, the
 * pre-created label values, build info, process metrics, and the additions the alert rules use.
 * The scrape is saved to artifacts/metrics.txt for .ci/checks/prometheus.sh (`promtool check
 * metrics`, and "every metric the alerts and the dashboard use is exported").
 */
import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, getJson, ROOT, startCli, tempDir, type Proc } from './support/cli.js';

const SCRAPE_FILE = join(ROOT, 'artifacts/metrics.txt');
const ACCOUNTS = ['mm-main', 'mm-sub', 'arb-desk', 'small-desk'] as const;

let proc: Proc | undefined;
afterEach(async () => {
  if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
  proc = undefined;
});

type Family = [name: string, type: 'gauge' | 'counter' | 'histogram', labels: string[]];

/** docs/DESIGN.md section 2: names, types and label names are the contract. */
const CONTRACT: Family[] = [
  ['dms_keeper_armed', 'gauge', ['account']],
  ['dms_keeper_deadline_timestamp_seconds', 'gauge', ['account']],
  ['dms_keeper_horizon_seconds', 'gauge', ['account']],
  ['dms_keeper_last_arm_success_timestamp_seconds', 'gauge', ['account']],
  ['dms_keeper_arm_requests_total', 'counter', ['account', 'result']],
  ['dms_keeper_arm_latency_seconds', 'histogram', ['path']],
  ['dms_keeper_open_orders', 'gauge', ['account']],
  ['dms_keeper_positions', 'gauge', ['account']],
  ['dms_keeper_position_value_usdc', 'gauge', ['account']],
  ['dms_keeper_unrealized_pnl_usdc', 'gauge', ['account']],
  ['dms_keeper_cancels_fired_total', 'counter', ['account']],
  ['dms_keeper_notifications_total', 'counter', ['account']],
  ['dms_keeper_ws_connected', 'gauge', []],
  ['dms_keeper_venue_requests_total', 'counter', ['code', 'endpoint']],
  ['dms_keeper_rate_limited_total', 'counter', ['scope']],
  ['dms_keeper_clock_skew_seconds', 'gauge', []],
  ['dms_keeper_agent_approved', 'gauge', ['account']],
  ['dms_keeper_config_reloads_total', 'counter', ['result']],
  ['dms_keeper_build_info', 'gauge', ['version']],
  // bot liveness: the example's demo bots heartbeat for mm-main, mm-sub and arb-desk
  ['dms_keeper_bot_alive', 'gauge', ['account']],
  ['dms_keeper_bot_last_seen_timestamp_seconds', 'gauge', ['account']],
  ['dms_keeper_bot_silences_total', 'counter', ['account']],
  ['dms_keeper_cancel_soon_total', 'counter', ['account']],
  ['dms_keeper_heartbeats_total', 'counter', ['account']],
  ['dms_keeper_heartbeats_refused_total', 'counter', ['reason']],
  ['dms_keeper_heartbeats_relayed_total', 'counter', ['direction']],
  ['dms_keeper_bot_probes_total', 'counter', ['account', 'result']],
];

/** Additions that config/prometheus/alerts.yml and the dashboard rely on. */
const ADDITIONS: Family[] = [
  ['dms_keeper_up', 'gauge', []],
  ['dms_keeper_should_be_armed', 'gauge', ['account']],
  ['dms_keeper_account_ineligible', 'gauge', ['account']],
  ['dms_keeper_triggers_today', 'gauge', ['account']],
  ['dms_keeper_lapses_total', 'counter', ['account']],
  ['dms_keeper_state_write_errors_total', 'counter', ['reason']],
  ['dms_keeper_reads_shed_total', 'counter', []],
  ['dms_keeper_arm_lag_seconds', 'histogram', []],
  ['dms_keeper_min_horizon_seconds', 'gauge', ['account']],
  ['dms_keeper_deadline_seconds', 'gauge', ['account']],
  ['dms_keeper_client_pacing_waits_total', 'counter', ['kind']],
  ['dms_keeper_shared_budget_bypass_total', 'counter', ['class']],
  ['dms_keeper_heap_live_bytes', 'gauge', []],
  ['dms_keeper_orders_source', 'gauge', ['account', 'source']],
  ['dms_keeper_address_actions_left', 'gauge', ['account']],
  ['dms_keeper_agent_valid_until_timestamp_seconds', 'gauge', ['account']],
  ['dms_keeper_read_stretch', 'gauge', []],
  // venues: which venue each account is on (the example has accounts on the Polymarket CLOB too)
  ['dms_keeper_account_venue', 'gauge', ['account', 'venue']],
];

/** Sample lines of one family: `name{...} v` or `name v` (histograms: their _bucket/_sum/_count). */
function samples(lines: string[], name: string, type: Family[1]): string[] {
  const names = type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
  return lines.filter((l) => names.some((n) => l.startsWith(`${n}{`) || l.startsWith(`${n} `)));
}

function labelNames(line: string): string[] {
  const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*\{(.*)\} /.exec(line);
  if (!m) return [];
  return [...m[1]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((x) => x[1]!).filter((n) => n !== 'le').sort();
}

function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  expect(line, `${series} is exported`).toBeDefined();
  return Number(line!.slice(series.length + 1));
}

describe('/metrics of a running keeper', () => {
  it('exports the contract with pre-created labels, as Prometheus text', async () => {
    await rm(SCRAPE_FILE, { force: true }); // never leave a stale scrape for CI to lint
    const dir = await tempDir('dmsk-metrics-');
    const creds = join(dir, 'creds');
    const made = spawnSync(process.execPath, ['scripts/demo-credentials.mjs', creds], { cwd: ROOT, encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const port = await freePort();
    proc = startCli(['run', '--config', 'config/dms-keeper.example.yaml'], {
      // service_then_venue: the keeper reads the venue, and with it each address's userRateLimit
      env: { CREDENTIALS_DIRECTORY: creds, DMS_KEEPER_SERVER__LISTEN: `127.0.0.1:${port}`, DMS_KEEPER_STATE_DIR: join(dir, 'state'), DMS_KEEPER_WATCH__SOURCE: 'service_then_venue' },
    });
    const ops = `http://127.0.0.1:${port}`;
    // Ready = every account that should be armed is armed with horizon >= min_horizon_seconds.
    const until = Date.now() + 12_000;
    for (let status = 0; status !== 200; ) {
      if (proc.child.exitCode !== null) throw new Error(`keeper exited (${proc.child.exitCode}) before ready\n${proc.stderr().slice(-3000)}`);
      if (Date.now() > until) throw new Error(`/readyz never answered 200 (last ${status})\n${proc.stdout().slice(-3000)}`);
      status = (await getJson(`${ops}/readyz`).catch(() => ({ status: 0 }))).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }

    // The address's action headroom is absent until its userRateLimit read answered: reads take
    // their turn behind arms by weight (20 each), so the last account's may come after /readyz.
    for (const wait = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const t = await (await fetch(`${ops}/metrics`)).text();
      if (ACCOUNTS.every((a) => t.includes(`dms_keeper_address_actions_left{account="${a}"} `))) break;
      if (Date.now() > wait) throw new Error(`dms_keeper_address_actions_left missing for some account after 10 s`);
    }
    const res = await fetch(`${ops}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4(; charset=utf-8)?$/);
    const text = await res.text();
    await mkdir(join(ROOT, 'artifacts'), { recursive: true });
    await writeFile(SCRAPE_FILE, text);
    const lines = text.split('\n');

    for (const [name, type, labels] of [...CONTRACT, ...ADDITIONS]) {
      expect(text, `${name} TYPE`).toContain(`\n# TYPE ${name} ${type}\n`);
      expect(text, `${name} HELP`).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
      const got = samples(lines, name, type);
      expect(got.length, `${name} has samples`).toBeGreaterThan(0);
      for (const line of got) expect(labelNames(line), line).toEqual([...labels].sort());
    }

    // Pre-created label values: rate() and the alerts work from the first scrape.
    for (const account of ACCOUNTS) {
      for (const result of ['ok', 'rate_limited', 'rejected', 'error']) {
        expect(text).toMatch(new RegExp(`^dms_keeper_arm_requests_total\\{account="${account}",result="${result}"\\} \\d+$`, 'm'));
      }
      for (const name of ['dms_keeper_cancels_fired_total', 'dms_keeper_lapses_total', 'dms_keeper_notifications_total', 'dms_keeper_triggers_today']) {
        expect(value(text, `${name}{account="${account}"}`), `${name} ${account}`).toBe(0);
      }
      expect(value(text, `dms_keeper_agent_approved{account="${account}"}`), account).toBe(1);
    }
    // venue 429s by the venue's scope; our own pacing is a separate counter, by request class
    for (const scope of ['endpoint', 'global']) expect(value(text, `dms_keeper_rate_limited_total{scope="${scope}"}`)).toBe(0);
    expect(text).not.toContain('dms_keeper_rate_limited_total{scope="client"}');
    for (const kind of ['arm', 'read']) expect(text).toMatch(new RegExp(`^dms_keeper_client_pacing_waits_total\\{kind="${kind}"\\} \\d+$`, 'm'));
    for (const path of ['rest', 'exchange']) expect(text).toMatch(new RegExp(`^dms_keeper_arm_latency_seconds_count\\{path="${path}"\\} \\d+$`, 'm'));
    for (const result of ['ok', 'error']) expect(value(text, `dms_keeper_config_reloads_total{result="${result}"}`)).toBe(0);
    for (const reason of ['read_only', 'no_space', 'permission', 'io']) expect(value(text, `dms_keeper_state_write_errors_total{reason="${reason}"}`)).toBe(0);
    expect(text).toMatch(/^dms_keeper_venue_requests_total\{endpoint="POST \/v1\/trading\/orders\/schedule-cancel",code="200"\} [1-9]\d*$/m);

    // The demo's bots are alive; small-desk has no liveness, so no bot series; no heartbeat was refused.
    for (const account of ['mm-main', 'mm-sub', 'arb-desk']) expect(value(text, `dms_keeper_bot_alive{account="${account}"}`), account).toBe(1);
    expect(text).not.toContain('dms_keeper_bot_alive{account="small-desk"}');
    for (const reason of ['malformed', 'unauthorized', 'unknown_account', 'too_large', 'rate_limited', 'relay_unavailable']) expect(value(text, `dms_keeper_heartbeats_refused_total{reason="${reason}"}`)).toBe(0);
    for (const direction of ['out', 'in']) expect(value(text, `dms_keeper_heartbeats_relayed_total{direction="${direction}"}`)).toBe(0);

    // The state a healthy demo is in when /readyz says 200 (what the alerts are written against).
    expect(text).toMatch(/^dms_keeper_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$/m);
    expect(value(text, 'dms_keeper_up')).toBe(1);
    for (const account of ['mm-main', 'mm-sub', 'arb-desk']) {
      expect(value(text, `dms_keeper_armed{account="${account}"}`), account).toBe(1);
      expect(value(text, `dms_keeper_should_be_armed{account="${account}"}`), account).toBe(1);
      expect(value(text, `dms_keeper_horizon_seconds{account="${account}"}`), account).toBeGreaterThanOrEqual(20);
    }
    // small-desk is below the venue's volume gate: ineligible, so it should not be armed
    expect(value(text, 'dms_keeper_account_ineligible{account="small-desk"}')).toBe(1);
    expect(value(text, 'dms_keeper_should_be_armed{account="small-desk"}')).toBe(0);
    expect(value(text, 'dms_keeper_armed{account="small-desk"}')).toBe(0);
    expect(value(text, 'dms_keeper_horizon_seconds{account="small-desk"}')).toBe(0);
    // the address's action headroom, read before the first arm: the demo accounts have plenty
    for (const account of ACCOUNTS) expect(value(text, `dms_keeper_address_actions_left{account="${account}"}`), account).toBeGreaterThan(1_000);
    // each account's configured switch, for the alerts to compare against (arb-desk has its own)
    expect(value(text, 'dms_keeper_min_horizon_seconds{account="mm-main"}')).toBe(20);
    expect(value(text, 'dms_keeper_deadline_seconds{account="mm-main"}')).toBe(60);
    expect(value(text, 'dms_keeper_min_horizon_seconds{account="arb-desk"}')).toBe(10);
    expect(value(text, 'dms_keeper_deadline_seconds{account="arb-desk"}')).toBe(30);

    // prom-client's default process metrics (the dashboard's CPU / RSS panel)
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
      expect(text, name).toMatch(new RegExp(`^${name} \\d`, 'm'));
    }

    proc.child.kill('SIGTERM');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  }, 20_000);
});
