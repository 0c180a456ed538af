/**
 * The human status page at `/`: one self-contained HTML document (no external assets, no
 * framework) that polls `/status` and counts each account's deadline down locally between polls.
 */
export function renderStatusPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dms-keeper</title>
<style>
  :root { color-scheme: light dark; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --muted: #6e7781; }
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; }
  h1 { font-size: 1.2rem; margin: 0 0 .25rem; }
  .meta { color: var(--muted); margin-bottom: 1rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #8884; white-space: nowrap; }
  th { font-weight: 600; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .pill { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-size: 12px; color: #fff; }
  .ok { background: var(--ok); } .warn { background: var(--warn); } .bad { background: var(--bad); } .idle { background: var(--muted); }
  .msg { max-width: 28rem; overflow: hidden; text-overflow: ellipsis; color: var(--muted); }
  #banner { padding: .5rem .75rem; border-radius: .4rem; margin-bottom: 1rem; color: #fff; }
</style>
</head>
<body>
<h1>dms-keeper</h1>
<div class="meta" id="meta">loading…</div>
<div id="banner" role="status" aria-live="polite" hidden></div>
<table>
  <thead><tr>
    <th>account</th><th>state</th><th>deadline in</th><th>min horizon</th><th>last arm</th>
    <th>open orders</th><th>positions</th><th>value (USDC)</th><th>uPnL (USDC)</th><th>triggers today</th>
  </tr></thead>
  <tbody id="rows"></tbody>
</table>
<script>
"use strict";
let snapshot = null, fetchedAt = 0, lastError = null;
const $ = (id) => document.getElementById(id);
function cell(text, cls) { const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; return td; }
function pill(text, kind) { const s = document.createElement("span"); s.className = "pill " + kind; s.textContent = text; const td = document.createElement("td"); td.appendChild(s); return td; }
function kindOf(a, horizon) {
  if (!a.should_be_armed) return a.phase === "ineligible" ? "bad" : "idle";
  if (horizon === null || horizon <= 0) return "bad";
  return horizon < a.min_horizon_seconds ? "warn" : "ok";
}
function render() {
  const banner = $("banner");
  if (!snapshot) {
    if (lastError) { banner.hidden = false; banner.className = "bad"; banner.textContent = "cannot reach /status: " + lastError; $("meta").textContent = "cannot reach /status: " + lastError; }
    return;
  }
  const elapsed = (Date.now() - fetchedAt) / 1000;
  const meta = "venue time " + snapshot.venue_time + " · clock skew " + snapshot.clock_skew_seconds.toFixed(3) + " s · WebSocket " + (snapshot.ws_connected ? "connected" : "down") + " · updated " + elapsed.toFixed(0) + " s ago";
  banner.hidden = false;
  if (lastError) {
    // Never show stale data as if it were current.
    $("meta").textContent = "cannot reach /status: " + lastError + " · showing data from " + elapsed.toFixed(0) + " s ago";
    banner.className = "bad";
    banner.textContent = "STALE: the keeper's status cannot be read; the countdowns below are extrapolated";
  } else {
    $("meta").textContent = meta;
    banner.className = snapshot.ready ? "ok" : "bad";
    banner.textContent = snapshot.ready ? "ready: every account that should be armed is armed" : "NOT READY: see the accounts in red or amber";
  }
  const rows = $("rows");
  rows.replaceChildren();
  for (const a of snapshot.accounts) {
    const horizon = a.horizon_seconds === null ? null : a.horizon_seconds - elapsed;
    const tr = document.createElement("tr");
    tr.appendChild(cell(a.name));
    tr.appendChild(pill(a.phase, kindOf(a, horizon)));
    tr.appendChild(cell(horizon === null ? "—" : horizon > 0 ? horizon.toFixed(1) + " s" : "passed", "num"));
    tr.appendChild(cell(a.min_horizon_seconds + " s", "num"));
    const last = a.last_arm ? a.last_arm.result + (a.last_arm.reason && a.last_arm.result !== "ok" ? " (" + a.last_arm.reason + ")" : "") + " via " + a.last_arm.path : (a.provision_error || "—");
    const lastTd = cell(last, "msg"); if (a.last_arm && a.last_arm.message) lastTd.title = a.last_arm.message; tr.appendChild(lastTd);
    tr.appendChild(cell(a.open_orders === null ? "—" : String(a.open_orders), "num"));
    tr.appendChild(cell(a.positions ? String(a.positions.count) : "—", "num"));
    tr.appendChild(cell(a.positions ? a.positions.value_usdc : "—", "num"));
    tr.appendChild(cell(a.positions ? a.positions.unrealized_pnl_usdc : "—", "num"));
    tr.appendChild(cell(String(a.triggers_today) + " / 10", "num"));
    rows.appendChild(tr);
  }
}
async function poll() {
  try {
    const r = await fetch("status", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    snapshot = await r.json(); fetchedAt = Date.now(); lastError = null;
  } catch (e) {
    lastError = e.message;
  }
  render();
}
poll();
setInterval(poll, 2000);
setInterval(render, 200);
</script>
</body>
</html>
`;
}
