/**
 * /metrics from a running keeper (the built CLI on the example config, embedded simulator): every
 * metric of the contract with its labels, pre-created label values, build info, process metrics.
 * The scrape is saved to artifacts/metrics.txt for `promtool check metrics` in CI.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, getJson, ROOT, startCli, tempDir, type Proc } from './support/cli.js';

let proc: Proc | undefined;
afterEach(async () => {
  if (proc && proc.child.exitCode === null) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
});

/** name -> label names, as DESIGN.md section 2 fixes them. */
const CONTRACT: Array<[string, string, string[]]> = [
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
  ['dms_keeper_venue_requests_total', 'counter', ['endpoint', 'code']],
  ['dms_keeper_rate_limited_total', 'counter', ['scope']],
  ['dms_keeper_clock_skew_seconds', 'gauge', []],
  ['dms_keeper_agent_approved', 'gauge', ['account']],
  ['dms_keeper_config_reloads_total', 'counter', ['result']],
  ['dms_keeper_build_info', 'gauge', ['version']],
];

function labelNames(line: string): string[] {
  const m = /^[a-z_]+\{(.*)\} /.exec(line);
  if (!m) return [];
  return [...m[1]!.matchAll(/([a-z_]+)="/g)].map((x) => x[1]!).filter((n) => n !== 'le').sort();
}

describe('/metrics of a running keeper', () => {
  it('exports the contract, pre-created, and passes as Prometheus text', async () => {
    const dir = await tempDir('dmsk-metrics-');
    const creds = join(dir, 'creds');
    expect(spawnSync(process.execPath, ['scripts/demo-credentials.mjs', creds], { cwd: ROOT }).status).toBe(0);
    const port = await freePort();
    proc = startCli(['run', '--config', 'config/dms-keeper.example.yaml'], {
      env: { CREDENTIALS_DIRECTORY: creds, DMS_KEEPER_SERVER__LISTEN: `127.0.0.1:${port}`, DMS_KEEPER_STATE_DIR: join(dir, 'state') },
    });
    const ops = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if ((await getJson(`${ops}/readyz`).catch(() => ({ status: 0 }))).status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await fetch(`${ops}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    await mkdir(join(ROOT, 'artifacts'), { recursive: true });
    await writeFile(join(ROOT, 'artifacts/metrics.txt'), text);

    const lines = text.split('\n');
    for (const [name, type, labels] of CONTRACT) {
      expect(text, name).toContain(`# TYPE ${name} ${type}`);
      const sample = lines.find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `) || l.startsWith(`${name}_bucket{`));
      expect(sample, name).toBeDefined();
      expect(labelNames(sample!), name).toEqual([...labels].sort());
    }
    // pre-created label values: rates and alerts work from the first scrape
    for (const account of ['mm-main', 'mm-sub', 'arb-desk', 'small-desk']) {
      for (const result of ['ok', 'rate_limited', 'rejected', 'error']) {
        expect(text).toMatch(new RegExp(`^dms_keeper_arm_requests_total\\{account="${account}",result="${result}"\\} \\d+`, 'm'));
      }
      expect(text).toMatch(new RegExp(`^dms_keeper_cancels_fired_total\\{account="${account}"\\} 0`, 'm'));
    }
    for (const scope of ['endpoint', 'global', 'client']) expect(text).toMatch(new RegExp(`^dms_keeper_rate_limited_total\\{scope="${scope}"\\} \\d+`, 'm'));
    for (const path of ['rest', 'exchange']) expect(text).toContain(`dms_keeper_arm_latency_seconds_count{path="${path}"}`);
    expect(text).toMatch(/^dms_keeper_build_info\{version="\d+\.\d+\.\d+"\} 1$/m);
    expect(text).toMatch(/^dms_keeper_armed\{account="mm-main"\} 1$/m);
    expect(text).toMatch(/^dms_keeper_account_ineligible\{account="small-desk"\} 1$/m);
    expect(text).toMatch(/^dms_keeper_venue_requests_total\{endpoint="POST \/v1\/trading\/orders\/schedule-cancel",code="200"\} [1-9]/m);
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds');

    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);
  }, 40_000);
});
