/**
 * The human status page at `/`: one self-contained HTML document (no external assets, no
 * framework) that polls `status` (relative, so it works behind a path prefix) every 2 s and counts
 * each account's deadline down locally every 100 ms from `horizon_seconds` and the poll time (and,
 * for accounts with liveness, how long ago their bot was seen and the cancel-soon deadline).
 *
 * It runs under the CSP that http-server.ts sets (`default-src 'none'; script-src 'unsafe-inline';
 * style-src 'unsafe-inline'; connect-src 'self'; img-src data:`): one inline script, one inline
 * style, no inline event handlers, a `data:` favicon so the browser asks for nothing else.
 * Every piece of data (account names come from config) goes into the DOM with `textContent`,
 * `title` or a fixed class name, never through HTML parsing.
 *
 * The script is plain ES2017 with no template literals or backslashes, so this TypeScript
 * template literal carries it verbatim.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>dms-keeper</title>
<style>
  :root {
    color-scheme: light dark;
    --bg: #f6f8fa; --panel: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --hover: #f0f3f6;
    --ok: #1a7f37; --ok-bg: #dafbe1; --warn: #9a6700; --warn-bg: #fff8c5;
    --bad: #cf222e; --bad-bg: #ffebe9; --info: #0969da; --info-bg: #ddf4ff;
    --idle: #59636e; --idle-bg: #eff2f5; --track: #e6eaef;
  }
  @media (prefers-color-scheme: dark) {
    :root {
      --bg: #0d1117; --panel: #151b23; --fg: #e6edf3; --muted: #9198a1; --line: #2f3742; --hover: #1c232c;
      --ok: #3fb950; --ok-bg: #12301d; --warn: #d29922; --warn-bg: #352a0c;
      --bad: #f85149; --bad-bg: #42171a; --info: #58a6ff; --info-bg: #0d2a52;
      --idle: #9198a1; --idle-bg: #212830; --track: #262e38;
    }
  }
  * { box-sizing: border-box; }
  html { background: var(--bg); color: var(--fg); }
  body { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; margin: 0; padding: 16px 20px 24px; }
  .num, .mono, time, .facts dd { font-variant-numeric: tabular-nums; }
  .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12px; }
  .sr { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
  header { margin-bottom: 12px; }
  h1 { font-size: 16px; margin: 0 0 8px; display: flex; align-items: center; gap: 10px; }
  h1 .sub { color: var(--muted); font-weight: 400; }
  .facts { display: flex; flex-wrap: wrap; gap: 6px; margin: 0; }
  .facts div { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 2px 8px; display: flex; gap: 6px; align-items: baseline; }
  .facts div[hidden] { display: none; }
  .facts dt { color: var(--muted); font-size: 10px; text-transform: uppercase; letter-spacing: .04em; }
  .facts dd { margin: 0; font-weight: 600; white-space: nowrap; }
  .pill { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 12px; font-weight: 600; line-height: 19px; border: 1px solid transparent; white-space: nowrap; }
  .pill.ok { color: var(--ok); background: var(--ok-bg); border-color: var(--ok); }
  .pill.warn { color: var(--warn); background: var(--warn-bg); border-color: var(--warn); }
  .pill.bad { color: var(--bad); background: var(--bad-bg); border-color: var(--bad); }
  .pill.info { color: var(--info); background: var(--info-bg); border-color: var(--info); }
  .pill.idle { color: var(--idle); background: var(--idle-bg); border-color: var(--line); }
  .t-ok { color: var(--ok); } .t-warn { color: var(--warn); } .t-bad { color: var(--bad); } .t-info { color: var(--info); } .t-idle, .muted { color: var(--muted); }
  #banner { border: 1px solid; border-left-width: 5px; border-radius: 6px; padding: 7px 12px; margin-bottom: 12px; font-weight: 600; }
  #banner.ok { color: var(--ok); background: var(--ok-bg); }
  #banner.warn { color: var(--warn); background: var(--warn-bg); }
  #banner.bad { color: var(--bad); background: var(--bad-bg); }
  #banner.info { color: var(--info); background: var(--info-bg); }
  #banner .detail { font-weight: 400; color: var(--fg); }
  .wrap { overflow-x: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: middle; white-space: nowrap; }
  thead th { font-size: 12px; color: var(--muted); font-weight: 600; background: var(--bg); border-bottom: 1px solid var(--line); vertical-align: bottom; }
  thead tr.group th { padding-bottom: 0; border-bottom: 0; }
  thead th.grp { text-align: center; border-bottom: 1px solid var(--line); }
  tbody tr:last-child th, tbody tr:last-child td { border-bottom: 0; }
  tbody tr:hover { background: var(--hover); }
  tbody th { font-weight: 600; border-left: 3px solid transparent; }
  tbody tr.sev-bad th { border-left-color: var(--bad); }
  tbody tr.sev-warn th { border-left-color: var(--warn); }
  tbody tr.bot-silent, tbody tr.bot-silent:hover { background: var(--bad-bg); }
  table.no-bots .bot { display: none; }
  th.num, td.num { text-align: right; }
  .l2, .addr { display: block; color: var(--muted); font-weight: 400; font-size: 12px; }
  .l2.t-warn { color: var(--warn); } .l2.t-bad { color: var(--bad); }
  .cd { display: flex; flex-direction: column; gap: 3px; min-width: 92px; }
  .cd .v { font-weight: 600; text-align: right; }
  .bar { position: relative; height: 4px; border-radius: 2px; background: var(--track); overflow: hidden; }
  .bar .fill { position: absolute; left: 0; top: 0; bottom: 0; border-radius: 2px; background: var(--ok); }
  .bar .fill.warn { background: var(--warn); } .bar .fill.bad { background: var(--bad); } .bar .fill.idle { background: var(--idle); }
  .bar .mark { position: absolute; top: 0; bottom: 0; width: 2px; background: var(--fg); opacity: .45; }
  td.last .l1 { display: block; max-width: 18rem; overflow: hidden; text-overflow: ellipsis; }
  .bar[hidden] { display: block; visibility: hidden; }
  [title] { cursor: help; }
  main.stale .wrap, .facts.stale dd:not(#age) { opacity: .55; }
  #empty { padding: 14px; color: var(--muted); margin: 0; }
  #fired { border: 1px solid var(--bad); border-left-width: 5px; border-radius: 6px; padding: 7px 12px; margin-bottom: 12px; background: var(--bad-bg); }
  #fired h2 { font-size: 13px; margin: 0 0 4px; color: var(--bad); }
  #fired ul { margin: 0; padding-left: 18px; }
  #fired .note { color: var(--muted); margin: 4px 0 0; }
  footer { margin-top: 10px; color: var(--muted); font-size: 12px; }
  footer a { color: inherit; }
</style>
</head>
<body>
<header>
  <h1>dms-keeper <span class="sub">dead man's switch</span> <span id="conn" class="pill info">connecting</span></h1>
  <dl class="facts" id="facts" aria-label="keeper facts">
    <div><dt>venue time</dt><dd id="venue-time">—</dd></div>
    <div><dt>clock skew</dt><dd id="skew">—</dd></div>
    <div title="the venue notification WebSocket"><dt>WS</dt><dd id="ws">—</dd></div>
    <div><dt>updated</dt><dd id="age">—</dd></div>
    <div><dt>accounts</dt><dd id="summary">—</dd></div>
    <div><dt>cadence</dt><dd id="cadence">—</dd></div>
    <div id="startup-box" hidden><dt>start-up</dt><dd id="startup">—</dd></div>
    <div id="bots-box" hidden title="accounts with liveness: the keeper re-arms them only while their bot is alive"><dt>bots</dt><dd id="bots">—</dd></div>
  </dl>
</header>
<div id="banner" class="info" role="status" aria-live="polite" aria-atomic="true">Loading status…</div>
<section id="fired" hidden aria-labelledby="fired-h">
  <h2 id="fired-h">Scheduled cancels that fired</h2>
  <ul id="fired-list"></ul>
  <p class="note">The venue cancelled these accounts' open orders at the deadline. Open positions are NOT closed by a dead man's switch: they need a human.</p>
</section>
<noscript><p>This page needs JavaScript to poll <a href="status">status</a> (JSON).</p></noscript>
<main id="main">
  <div class="wrap">
    <table id="accounts" class="no-bots">
      <caption class="sr">Accounts protected by this keeper: switch state, whether the account's bot is alive (accounts with liveness), time left to the scheduled cancel, last arm result, orders, positions, daily triggers with the last fired cancel, and agent.</caption>
      <thead>
        <tr class="group">
          <th scope="col" rowspan="2">Account</th>
          <th scope="col" rowspan="2">State</th>
          <th scope="col" rowspan="2" class="bot">Bot</th>
          <th scope="col" rowspan="2" class="num">Deadline in</th>
          <th scope="col" rowspan="2" class="num">Min<br>horizon</th>
          <th scope="col" rowspan="2">Last arm</th>
          <th scope="col" rowspan="2" class="num">Open<br>orders</th>
          <th scope="colgroup" colspan="3" class="grp">Positions</th>
          <th scope="col" rowspan="2" class="num">Triggers<br>today</th>
          <th scope="col" rowspan="2">Agent</th>
        </tr>
        <tr>
          <th scope="col" class="num">Count</th>
          <th scope="col" class="num">Value USDC</th>
          <th scope="col" class="num">uPnL USDC</th>
        </tr>
      </thead>
      <tbody id="rows"></tbody>
    </table>
    <p id="empty" hidden>No accounts in this keeper's shard.</p>
  </div>
</main>
<footer>Polls <a href="status">status</a> every 2 s; countdowns run locally in between. Also: <a href="readyz">readyz</a> · <a href="healthz">healthz</a> · <a href="metrics">metrics</a>.</footer>
<script>
"use strict";
(function () {
  var POLL_MS = 2000, TICK_MS = 100, TIMEOUT_MS = 4000, STALE_MS = 6500, TRIGGER_LIMIT = 10;
  var NL = String.fromCharCode(10);
  var snap = null;          // the last good /status answer
  var gotAt = 0;            // performance.now() when it arrived
  var gotWall = 0;          // Date.now() when it arrived
  var err = null;           // the last poll's failure, null after a success
  var errSince = 0;         // Date.now() of the first failure in the current run of failures
  var inflight = false;
  var rows = new Map();     // account name -> row record
  var maxSeen = new Map();  // account name -> largest horizon seen (the bar's full scale)
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function setText(e, t) { if (e.textContent !== t) e.textContent = t; }
  function setCls(e, c) { if (e.className !== c) e.className = c; }
  function setTitle(e, t) { if (t) { if (e.title !== t) e.title = t; } else if (e.hasAttribute("title")) e.removeAttribute("title"); }
  function num(x) { return typeof x === "number" && isFinite(x) ? x : null; }
  function str(x) { return x === null || x === undefined ? "" : String(x); }
  function pad(n) { return n < 10 ? "0" + n : String(n); }
  function clock(ms) { return new Date(ms).toISOString().slice(11, 19) + " UTC"; }
  function utc(ms) { var s = new Date(ms).toISOString(); return s.slice(0, 10) + " " + s.slice(11, 19) + " UTC"; }
  function secs(s) {
    if (s < 100) return s.toFixed(1) + " s";
    return Math.floor(s / 60) + " m " + pad(Math.floor(s % 60)) + " s";
  }
  function ago(s) {
    if (s < 1) return "just now";
    if (s < 90) return Math.floor(s) + " s ago";
    if (s < 5400) return Math.round(s / 60) + " min ago";
    if (s < 172800) return Math.round(s / 3600) + " h ago";
    return Math.round(s / 86400) + " d ago";
  }
  function usdc(v, signed) {
    var n = Number(v);
    if (v === null || v === undefined || v === "" || !isFinite(n)) return str(v) || "—";
    var t = Math.abs(n).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    return (n < 0 ? "−" : signed && n > 0 ? "+" : "") + t;
  }
  function shortAddr(a) { return a.length > 14 ? a.slice(0, 6) + "…" + a.slice(-4) : a; }

  function elapsed() { return snap ? (performance.now() - gotAt) / 1000 : 0; }
  function venueNowMs() { var v = Date.parse(snap.venue_time); return isFinite(v) ? v + elapsed() * 1000 : Date.now(); }
  // The keeper's own clock (bot.last_seen and silent_since are its local time): venue time plus its skew.
  function keeperNowMs() { var sk = num(snap.clock_skew_seconds); return venueNowMs() + (sk === null ? 0 : sk * 1000); }
  function botOf(a) { return a.bot && typeof a.bot === "object" ? a.bot : null; }
  function botSilent(a) { var b = botOf(a); return str(a.phase) === "bot_silent" || (b !== null && b.state === "silent"); }
  function secsAgo(s) { return s < 90 ? Math.floor(s) + " s ago" : ago(s); }
  function horizonOf(a) { var h = num(a.horizon_seconds); return h === null ? null : h - elapsed(); }

  // ok | warn | bad | info | idle, from the phase and the live horizon.
  function severity(a, h) {
    var p = str(a.phase);
    if (p === "starting" || p === "provisioning") return "info";
    if (p === "provisioning_failed" || p === "blocked" || p === "ineligible" || p === "bot_silent") return "bad";
    if (!a.should_be_armed) return h !== null && h > 0 ? "ok" : "idle";
    if (h === null || h <= 0) return "bad";
    return h < (num(a.min_horizon_seconds) || 0) ? "warn" : "ok";
  }
  function fault(a) {
    if (!a.should_be_armed) return null;
    var h = num(a.horizon_seconds), min = num(a.min_horizon_seconds) || 0;
    if (h === null || h <= 0) return str(a.name) + ": not armed (" + str(a.phase) + ")";
    if (h < min) return str(a.name) + ": horizon " + h.toFixed(1) + " s < " + min + " s";
    return null;
  }

  function makeRow(name) {
    var r = { tr: el("tr") };
    r.head = el("th"); r.head.scope = "row";
    r.name = el("span", "", name); r.addr = el("span", "addr mono");
    r.head.appendChild(r.name); r.head.appendChild(r.addr);
    r.state = el("span", "pill idle");
    var stateTd = el("td"); stateTd.appendChild(r.state);
    r.cdTd = el("td", "num");
    var cd = el("div", "cd"); r.cd = el("span", "v");
    var bar = r.bar = el("div", "bar"); bar.setAttribute("aria-hidden", "true");
    r.fill = el("div", "fill"); r.mark = el("div", "mark");
    bar.appendChild(r.fill); bar.appendChild(r.mark); cd.appendChild(r.cd); cd.appendChild(bar); r.cdTd.appendChild(cd);
    r.min = el("td", "num");
    r.last = el("td", "last"); r.lastRes = el("span", "l1"); r.lastMeta = el("span", "l2"); r.lastSr = el("span", "sr");
    r.last.appendChild(r.lastRes); r.last.appendChild(r.lastSr); r.last.appendChild(r.lastMeta);
    r.orders = el("td", "num"); r.pcount = el("td", "num"); r.pvalue = el("td", "num"); r.pnl = el("td", "num");
    r.triggers = el("td", "num"); r.trigCount = el("span", "l1"); r.trigFired = el("span", "l2");
    r.triggers.appendChild(r.trigCount); r.triggers.appendChild(r.trigFired);
    r.agent = el("td"); r.agentSrc = el("span", "l1"); r.agentMeta = el("span", "l2 mono");
    r.agent.appendChild(r.agentSrc); r.agent.appendChild(r.agentMeta);
    r.bot = el("td", "bot"); r.botState = el("span", "l1"); r.botSeen = el("span", "l2"); r.botCancel = el("span", "l2");
    r.bot.appendChild(r.botState); r.bot.appendChild(r.botSeen); r.bot.appendChild(r.botCancel);
    [r.head, stateTd, r.bot, r.cdTd, r.min, r.last, r.orders, r.pcount, r.pvalue, r.pnl, r.triggers, r.agent].forEach(function (c) { r.tr.appendChild(c); });
    return r;
  }

  // Everything that only changes with a new /status answer.
  function fillRow(r, a) {
    r.a = a;
    var addr = str(a.address);
    // The venue it is on (under the address), and for a heartbeat venue no daily trigger limit applies.
    var venue = a.venue === undefined || a.venue === null ? "" : str(a.venue);
    setText(r.addr, shortAddr(addr) + (a.account_type === "subaccount" ? " · subaccount" : "") + (venue ? " · " + venue : ""));
    setTitle(r.head, addr);
    setTitle(r.state.parentNode, "path " + str(a.path) + " · arm when " + str(a.arm_when) + " · on shutdown " + str(a.on_shutdown) +
      " · re-arm every " + str(a.rearm_every_seconds) + " s · notifications " + (a.notifications ? "on" : "off") +
      (a.should_be_armed ? "" : " · not required to be armed now"));
    setText(r.state, str(a.phase) || "unknown");
    setTitle(r.cdTd, a.deadline ? "deadline " + str(a.deadline) + " (venue time)" : "no scheduled cancel");
    var min = num(a.min_horizon_seconds);
    setText(r.min, min === null ? "—" : min + " s");
    var h = num(a.horizon_seconds);
    if (h !== null) maxSeen.set(str(a.name), Math.max(maxSeen.get(str(a.name)) || 0, h));

    var la = a.last_arm && typeof a.last_arm === "object" ? a.last_arm : null;
    if (la) {
      var res = str(la.result), bad = res !== "ok";
      setText(r.lastRes, (str(la.op) && la.op !== "arm" ? str(la.op) + " " : "") + res + (bad && la.reason ? " (" + str(la.reason) + ")" : ""));
      setCls(r.lastRes, "l1 " + (res === "ok" ? "t-ok" : res === "rate_limited" ? "t-warn" : "t-bad"));
      var tip = ["op: " + str(la.op), "result: " + res];
      if (la.reason) tip.push("reason: " + str(la.reason));
      if (la.message) tip.push("message: " + str(la.message));
      tip.push("path: " + str(la.path), "at: " + str(la.at));
      if (a.last_success_at) tip.push("last success: " + str(a.last_success_at));
      setTitle(r.last, tip.join(NL));
      setText(r.lastSr, la.message ? " — " + str(la.message) : "");
    } else if (a.provision_error) {
      setText(r.lastRes, "provisioning failed"); setCls(r.lastRes, "l1 t-bad");
      setTitle(r.last, str(a.provision_error)); setText(r.lastSr, " — " + str(a.provision_error));
    } else {
      setText(r.lastRes, "—"); setCls(r.lastRes, "l1 muted"); setTitle(r.last, ""); setText(r.lastSr, "");
    }

    var oo = num(a.open_orders);
    // Which source counted them (orders_source): the venue's count includes orders the service does not list.
    var os = a.orders_source === "venue" || a.orders_source === "service" ? a.orders_source : null;
    setText(r.orders, oo === null ? "—" : String(oo) + (os === "venue" ? " (venue)" : ""));
    setTitle(r.orders, os ? "open orders counted by the " + os + (os === "venue" ? " (its info endpoint: every order the scheduled cancel hits)" : " (its listing)") : "");
    var p = a.positions && typeof a.positions === "object" ? a.positions : null;
    setText(r.pcount, p ? str(p.count) : "—");
    setText(r.pvalue, p ? usdc(p.value_usdc, false) : "—");
    setText(r.pnl, p ? usdc(p.unrealized_pnl_usdc, true) : "—");
    var pnl = p ? Number(p.unrealized_pnl_usdc) : 0;
    setCls(r.pnl, "num" + (pnl > 0 ? " t-ok" : pnl < 0 ? " t-bad" : ""));

    var tr = num(a.triggers_today);
    setText(r.trigCount, tr === null ? "—" : tr + " / " + TRIGGER_LIMIT);
    setCls(r.triggers, "num" + (tr !== null && tr >= TRIGGER_LIMIT ? " t-bad" : tr !== null && tr >= TRIGGER_LIMIT - 3 ? " t-warn" : ""));
    var f = firedOf(a);
    setTitle(r.triggers, "scheduled-cancel triggers used today (UTC) of the venue's " + TRIGGER_LIMIT + (f ? NL + "last fired: " + firedText(a.name, f) : ""));
  }

  function firedOf(a) { return a.last_cancel_fired && typeof a.last_cancel_fired === "object" ? a.last_cancel_fired : null; }
  // "mm-main at 12:03:07 UTC: 5 orders cancelled; 2 positions left open (value 1,234.50 USDC, uPnL −12.25 USDC)"
  function firedText(name, f) {
    var at = Date.parse(f.at), oc = num(f.orders_cancelled), po = num(f.positions_open);
    var t = str(name) + " at " + (isFinite(at) ? utc(at) : str(f.at)) + ": " +
      (oc === null ? "orders cancelled" : oc + " order" + (oc === 1 ? "" : "s") + " cancelled") + "; ";
    if (po === null) t += "positions unknown";
    else if (po === 0) t += "no positions open";
    else t += po + " position" + (po === 1 ? "" : "s") + " left open (value " + usdc(f.position_value_usdc, false) + " USDC, uPnL " + usdc(f.unrealized_pnl_usdc, true) + " USDC)";
    return t;
  }

  // The accounts whose last scheduled cancel fired, newest first, above the table.
  function applyFired(list) {
    var fired = list.filter(firedOf).sort(function (x, y) { return Date.parse(firedOf(y).at) - Date.parse(firedOf(x).at); });
    var ul = $("fired-list");
    var items = fired.map(function (a) { return el("li", "", firedText(a.name, firedOf(a))); });
    var key = items.map(function (li) { return li.textContent; }).join(NL);
    if (ul.getAttribute("data-text") !== key) { ul.setAttribute("data-text", key); ul.replaceChildren.apply(ul, items); }
    $("fired").hidden = fired.length === 0;
  }

  // Everything that moves with time: countdown, bar, severity, last-arm age, agent expiry.
  function tickRow(r) {
    var a = r.a, h = horizonOf(a), sev = severity(a, h), name = str(a.name), silent = botSilent(a);
    // A silent bot's deadline is its orders' cancel coming: counted in colour, not as idle.
    var shown = a.should_be_armed || silent ? sev : "idle";
    setCls(r.state, "pill " + sev);
    setCls(r.tr, (sev === "bad" || sev === "warn" ? "sev-" + sev : "") + (silent ? (sev === "bad" || sev === "warn" ? " " : "") + "bot-silent" : ""));
    if (h === null) { setText(r.cd, "—"); setCls(r.cd, "v muted"); }
    else if (h <= 0) { setText(r.cd, "passed"); setCls(r.cd, "v t-bad"); }
    else { setText(r.cd, secs(h)); setCls(r.cd, "v t-" + shown); }
    r.bar.hidden = h === null;
    var min = num(a.min_horizon_seconds) || 0;
    var scale = Math.max(maxSeen.get(name) || 0, min * 1.5, 1);
    r.fill.style.width = (h === null ? 0 : Math.max(0, Math.min(1, h / scale)) * 100).toFixed(1) + "%";
    setCls(r.fill, "fill " + shown);
    r.mark.style.left = (Math.min(1, min / scale) * 100).toFixed(1) + "%";
    var f = firedOf(a), fat = f ? Date.parse(f.at) : NaN;
    setText(r.trigFired, f && isFinite(fat) ? "fired " + ago(Math.max(0, (venueNowMs() - fat) / 1000)) : "");
    setCls(r.trigFired, "l2" + (f ? " t-bad" : ""));
    var la = a.last_arm, at = la ? Date.parse(la.at) : NaN;
    setText(r.lastMeta, la ? str(la.path) + (isFinite(at) ? " · " + ago(Math.max(0, (venueNowMs() - at) / 1000)) : "") : "");
    tickBot(r, a);

    var ag = a.agent && typeof a.agent === "object" ? a.agent : null;
    if (!ag) { setText(r.agentSrc, "—"); setCls(r.agentSrc, "l1 muted"); setText(r.agentMeta, ""); setTitle(r.agent, ""); return; }
    var until = ag.valid_until ? Date.parse(ag.valid_until) : NaN, left = (until - venueNowMs()) / 1000;
    var meta = shortAddr(str(ag.address)), cls = "l2 mono";
    if (isFinite(left)) {
      if (left <= 0) { meta = "expired"; cls = "l2 t-bad"; }
      else if (left < 3 * 86400) { meta = "expires in " + (left < 7200 ? Math.ceil(left / 60) + " min" : Math.round(left / 3600) + " h"); cls = "l2 t-warn"; }
    }
    var vn = ag.venue && typeof ag.venue === "object" ? ag.venue : null;
    if (vn && vn.listed === false && cls === "l2 mono") { meta = "not listed on venue"; cls = "l2 t-warn"; }
    setText(r.agentSrc, str(ag.source)); setCls(r.agentSrc, "l1");
    setText(r.agentMeta, meta); setCls(r.agentMeta, cls);
    setTitle(r.agent, "agent " + str(ag.address) + " (" + str(ag.source) + ")" + (ag.valid_until ? NL + "valid until " + str(ag.valid_until) : "") +
      (vn ? NL + (vn.listed === true ? "listed" : "not listed") + " in the master's agents on the venue at " + str(vn.checked_at) : ""));
  }

  // The bot column: alive / waiting / silent, how long ago it was last seen, the cancel-soon deadline.
  function tickBot(r, a) {
    var b = botOf(a);
    if (!b) {
      setText(r.botState, "—"); setCls(r.botState, "l1 muted"); setText(r.botSeen, ""); setText(r.botCancel, "");
      setTitle(r.bot, "no liveness configured: armed for as long as the keeper runs");
      return;
    }
    var st = str(b.state), kind = str(b.liveness);
    setText(r.botState, st || "unknown");
    setCls(r.botState, "l1 " + (st === "alive" ? "t-ok" : st === "waiting" ? "t-info" : st === "silent" ? "t-bad" : "muted"));
    var seen = b.last_seen ? Date.parse(b.last_seen) : NaN;
    var seenAgo = isFinite(seen) ? Math.max(0, (keeperNowMs() - seen) / 1000) : null;
    setText(r.botSeen, seenAgo === null ? "not seen yet" : "last seen " + secsAgo(seenAgo));
    setCls(r.botSeen, "l2" + (st === "silent" ? " t-bad" : ""));

    // The cancel-soon deadline (venue time): while the bot is silent, or while it is still ahead.
    var dl = b.cancel_soon_deadline ? Date.parse(b.cancel_soon_deadline) : NaN;
    var left = isFinite(dl) ? (dl - venueNowMs()) / 1000 : NaN;
    var line = "";
    if (isFinite(dl) && (st === "silent" || left > 0)) line = left > 0 ? "cancel in " + secs(left) : "cancel at " + clock(dl);
    else if (st === "silent") line = "re-arms stopped";
    setText(r.botCancel, line); setCls(r.botCancel, "l2 t-bad");

    var tip = [kind + " liveness · silent after " + str(b.silence_seconds) + " s without a " + (kind === "probe" ? "2xx probe" : "heartbeat") + " · on silence: " + str(b.on_silence)];
    if (st === "waiting") tip.push("waiting: the keeper's start-up grace, counted alive for one silence period");
    tip.push("last seen: " + (b.last_seen ? str(b.last_seen) : "never"));
    if (b.silent_since) tip.push("silent since: " + str(b.silent_since));
    if (b.cancel_soon_deadline) tip.push("cancel-soon deadline: " + str(b.cancel_soon_deadline) + " (venue time)");
    var tl = num(b.triggers_left);
    if (tl !== null) tip.push(tl + " of the venue's " + TRIGGER_LIMIT + " daily triggers left (a silence whose cancel fires spends one)");
    setTitle(r.bot, tip.join(NL));
  }

  function applySnapshot() {
    var list = snap.accounts, tbody = $("rows"), seen = new Set();
    list.forEach(function (a, i) {
      var name = str(a.name);
      seen.add(name);
      var r = rows.get(name);
      if (!r) { r = makeRow(name); rows.set(name, r); }
      fillRow(r, a);
      if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
    });
    rows.forEach(function (r, name) { if (!seen.has(name)) { r.tr.remove(); rows.delete(name); maxSeen.delete(name); } });
    $("empty").hidden = list.length > 0;
    applyFired(list);
    var sp = snap.start_progress && typeof snap.start_progress === "object" ? snap.start_progress : null;
    $("startup-box").hidden = !sp || sp.complete === true;
    if (sp && !sp.complete) {
      setText($("startup"), "armed " + str(sp.armed) + " of " + str(sp.accounts) + (num(sp.eta_seconds) !== null ? " · about " + secs(sp.eta_seconds) + " to go" : ""));
      setTitle($("startup-box"), str(sp.failed) + " failed to provision (retrying) · " + str(sp.not_to_be_armed) + " with nothing to arm · " + str(sp.waiting) + " waiting for their first arm");
    }

    var watched = list.filter(botOf), silentBots = watched.filter(botSilent).length;
    $("bots-box").hidden = watched.length === 0;
    setCls($("accounts"), watched.length ? "" : "no-bots"); // no account with liveness: no bot column
    setText($("bots"), (watched.length - silentBots) + " alive" + (silentBots ? " · " + silentBots + " silent" : ""));
    setCls($("bots"), silentBots ? "t-bad" : "");

    var armed = list.filter(function (a) { return a.armed; }).length;
    var faults = list.map(fault).filter(function (f) { return f; });
    setText($("summary"), list.length + " · " + armed + " armed" + (faults.length ? " · " + faults.length + " at fault" : ""));
    setCls($("summary"), faults.length ? "t-bad" : "");
    setText($("ws"), snap.ws_connected ? "connected" : "down");
    setCls($("ws"), snap.ws_connected ? "t-ok" : "t-warn");
    var sk = num(snap.clock_skew_seconds);
    setText($("skew"), sk === null ? "—" : (sk >= 0 ? "+" : "−") + Math.abs(sk).toFixed(3) + " s");
    setCls($("skew"), sk !== null && Math.abs(sk) >= 2 ? "t-warn" : "");
    setTitle($("skew"), "local clock minus venue clock");
    var c = snap.cadence;
    if (c && typeof c === "object") {
      setText($("cadence"), Number(c.arms_per_second).toFixed(2) + " arms/s of " + str(c.budget_per_second) + "/s" + (Number(c.stretch) > 1 ? " · stretched ×" + Number(c.stretch).toFixed(2) : ""));
      setCls($("cadence"), c.holds === false ? "t-bad" : Number(c.stretch) > 1 ? "t-warn" : "");
      setTitle($("cadence"), "capacity " + str(c.capacity_accounts) + " accounts" + (c.holds === false ? " · the plan does NOT hold within the request budget" : ""));
    } else setText($("cadence"), "—");
  }

  // The banner changes only with state (never with ticking numbers), so aria-live stays quiet.
  function banner() {
    var kind, head, detail = "", conn, connCls, title;
    var stale = snap && !err && performance.now() - gotAt > STALE_MS;
    if (err || stale) {
      conn = err ? "unreachable" : "stale"; connCls = "bad"; kind = "bad";
      head = err ? "UNREACHABLE: cannot read status" : "STALE: status has not answered";
      detail = err ? " (" + err + ") since " + clock(errSince) + "." : " since " + clock(gotWall) + ".";
      detail += snap ? " Showing the last data, from " + clock(gotWall) + "; countdowns below are extrapolated and may be wrong." : " No data yet.";
      title = "dms-keeper · " + (err ? "UNREACHABLE" : "STALE");
    } else if (!snap) {
      kind = "info"; head = "Loading status…"; conn = "connecting"; connCls = "info"; title = "dms-keeper";
    } else {
      conn = "live"; connCls = "ok";
      var faults = snap.accounts.map(fault).filter(function (f) { return f; });
      var needed = snap.accounts.filter(function (a) { return a.should_be_armed; }).length;
      if (snap.ready) {
        kind = "ok"; head = "READY";
        detail = ": " + needed + " of " + snap.accounts.length + " account" + (snap.accounts.length === 1 ? "" : "s") + " should be armed, and every one has its horizon at or above its minimum.";
      } else {
        kind = "bad"; head = "NOT READY";
        detail = faults.length ? ": " + faults.join(" · ") : ": see readyz for the accounts at fault.";
      }
      title = "dms-keeper · " + head;
    }
    var b = $("banner"), text = head + detail;
    if (b.getAttribute("data-text") !== text) {
      b.setAttribute("data-text", text);
      b.replaceChildren(el("strong", "", head), el("span", "detail", detail));
    }
    setCls(b, kind);
    setText($("conn"), conn); setCls($("conn"), "pill " + (connCls || kind));
    if (document.title !== title) document.title = title;
    var dim = snap && (err || stale) ? "stale" : "";
    setCls($("main"), dim); setCls($("facts"), "facts " + dim);
  }

  function tick() {
    if (snap) {
      rows.forEach(tickRow);
      setText($("venue-time"), utc(venueNowMs()));
      var e = elapsed();
      setText($("age"), e < 1 ? e.toFixed(1) + " s ago" : ago(e));
      setCls($("age"), err || e * 1000 > STALE_MS ? "t-bad" : e * 1000 > 2.5 * POLL_MS ? "t-warn" : "");
    }
    banner();
  }

  function valid(s) {
    return s && typeof s === "object" && Array.isArray(s.accounts) &&
      s.accounts.every(function (a) { return a && typeof a === "object" && typeof a.name === "string"; });
  }

  function poll() {
    if (inflight) return;
    inflight = true;
    var ctl = new AbortController();
    var timer = setTimeout(function () { ctl.abort(); }, TIMEOUT_MS);
    fetch("status", { cache: "no-store", headers: { accept: "application/json" }, signal: ctl.signal })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      })
      .then(function (s) {
        if (!valid(s)) throw new Error("unexpected answer");
        snap = s; gotAt = performance.now(); gotWall = Date.now(); err = null; errSince = 0;
        applySnapshot();
      })
      .catch(function (e) {
        err = e && e.name === "AbortError" ? "timed out" : e && e.message ? String(e.message) : "failed";
        if (!errSince) errSince = Date.now();
      })
      .then(function () {
        clearTimeout(timer); inflight = false;
        tick();
        setTimeout(poll, POLL_MS);
      });
  }

  poll();
  setInterval(tick, TICK_MS);
})();
</script>
</body>
</html>
`;

export function renderStatusPage(): string {
  return PAGE;
}
