// The floor page (docs/link.md "The floor's page"): tiles, alarms, pools from the /ws feed;
// the shift and trends from /api/shift and /api/trends; sign-in and acknowledgements by POST.
// Everything shown comes from the server; this file only draws it.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const S = { tiles: {}, sections: [], alarms: [], pools: [], me: null, pageSize: 60,
              section: "all", pages: {}, skew: 0, heard: new Set(), first: true, ws: null };

  function cookie(name) {
    const m = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return m ? decodeURIComponent(m[1]) : "";
  }
  function money(c) {
    if (c === null || c === undefined) return "";
    const neg = c < 0; c = Math.abs(c);
    const d = Math.floor(c / 100).toLocaleString("en-US");
    return (neg ? "-" : "") + "$" + d + "." + String(c % 100).padStart(2, "0");
  }
  function clock(ms) {
    if (!ms) return "never";
    return new Date(ms).toISOString().slice(11, 19) + " UTC";
  }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  async function post(url, body) {
    const r = await fetch(url, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-XSRFToken": cookie("_xsrf") },
      body: JSON.stringify(body || {}) });
    let data = {};
    try { data = await r.json(); } catch (e) { data = { ok: false, error: r.statusText }; }
    return data;
  }

  // ------------------------------------------------------------------ tiles and sections
  function tileEl(t) {
    let e = $("tile-" + t.table);
    if (!e) {
      e = el("article", { id: "tile-" + t.table, class: "tile", "data-table": t.table,
                          "aria-label": "table " + t.table });
    }
    return e;
  }
  function drawTile(t) {
    const e = tileEl(t);
    e.dataset.state = t.state; e.dataset.stale = t.stale ? "1" : "0"; e.dataset.seq = t.seq;
    e.classList.toggle("stale", !!t.stale);
    e.classList.toggle("alarm", !!(t.fault || t.pending.length || t.link_up === false));
    e.replaceChildren();
    const h = el("h4"); h.append(el("span", {}, t.table));
    if (t.training) h.append(el("span", { class: "badge" }, "TRAINING"));
    e.append(h);
    e.append(el("p", { class: "state" }, t.words));
    if (t.stale) e.append(el("p", { class: "stale-note" }, "STALE: nothing shipped within its timeout"));
    e.append(el("p", { class: "wagers" }, t.wager_words));
    if (t.meter_cents !== null) {
      e.append(el("p", { class: "meter", "data-cents": t.meter_cents },
        (t.pool ? "table meter " : "meter ") + money(t.meter_cents)));
    }
    const pool = S.pools.find((p) => p.pool === t.pool);
    if (pool && pool.display_cents !== undefined) {
      e.append(el("p", { class: "meter pool-value", "data-cents": pool.display_cents },
        "pool " + t.pool + " " + money(pool.display_cents)));
    }
    for (const p of t.pending) {
      e.append(el("p", { class: "pending", "data-cents": p.cents === null ? "" : p.cents },
        "HIT pending: " + p.words));
    }
    if (t.fault) {
      e.append(el("p", { class: "fault" }, "Fault " + t.fault.code + ": " + t.fault.words));
    }
    e.append(el("p", { class: "link" + (t.link_up === false || t.playable === false ? " down" : "") }, t.link));
    e.append(el("p", { class: "last" }, "last entry " + clock(t.ts) + " (seq " + t.seq + ")"));
  }
  function drawSections() {
    const tabs = $("section-tabs"); tabs.replaceChildren();
    const names = ["all"].concat(S.sections.map((s) => s.name));
    for (const n of names) {
      const b = el("button", { type: "button", "aria-pressed": String(S.section === n) },
                   n === "all" ? "All sections" : n);
      b.addEventListener("click", () => { S.section = n; drawSections(); });
      tabs.append(b);
    }
    const box = $("sections"); box.replaceChildren();
    for (const s of S.sections) {
      if (S.section !== "all" && S.section !== s.name) continue;
      const sec = el("section", { class: "section", "aria-label": "section " + s.name });
      const hid = "sec-" + s.name.replace(/[^A-Za-z0-9_-]/g, "_");
      sec.append(el("h3", { id: hid }, s.name + " (" + s.tables.length + " tables)"));
      const pages = Math.max(1, Math.ceil(s.tables.length / S.pageSize));
      let page = Math.min(S.pages[s.name] || 0, pages - 1);
      if (pages > 1) {
        const pager = el("div", { class: "pager", role: "group", "aria-label": s.name + " pages" });
        const prev = el("button", { type: "button" }, "Previous");
        const next = el("button", { type: "button" }, "Next");
        prev.disabled = page === 0; next.disabled = page === pages - 1;
        prev.addEventListener("click", () => { S.pages[s.name] = page - 1; drawSections(); });
        next.addEventListener("click", () => { S.pages[s.name] = page + 1; drawSections(); });
        pager.append(prev, el("span", {}, "page " + (page + 1) + " of " + pages), next);
        sec.append(pager);
      }
      const grid = el("div", { class: "tiles" });
      for (const tid of s.tables.slice(page * S.pageSize, (page + 1) * S.pageSize)) {
        const t = S.tiles[tid] || { table: tid, section: s.name, seq: 0, ts: 0, state: "unknown",
          words: "nothing shipped yet", wager_words: "no wagers", meter_cents: null, pending: [],
          fault: null, link: "", link_up: null, playable: null, stale: false, pool: null };
        drawTile(t);
        grid.append(tileEl(t));
      }
      sec.append(grid);
      box.append(sec);
    }
  }

  // ------------------------------------------------------------------ alarms
  function beep() {
    try {
      const ctx = new (window.AudioContext || window.webkitAudioContext)();
      const o = ctx.createOscillator(); const g = ctx.createGain();
      o.frequency.value = 880; g.gain.value = 0.2; o.connect(g); g.connect(ctx.destination);
      o.start(); o.stop(ctx.currentTime + 0.4);
    } catch (e) { /* no audio on this screen */ }
  }
  function drawAlarms() {
    const list = $("alarms"); list.replaceChildren();
    let open = 0; let fresh = false;
    for (const a of S.alarms) {
      const li = el("li", { "data-key": a.key, "data-kind": a.kind, "data-table": a.table });
      if (a.cents !== undefined && a.cents !== null) li.dataset.cents = a.cents;
      li.append(el("span", { class: "what" }, a.words));
      if (a.ack) {
        li.classList.add("acked");
        li.append(el("span", { class: "ackd" }, "acknowledged by " + a.ack.by + " at " + clock(a.ack.at)));
      } else {
        open += 1;
        if (!S.heard.has(a.key)) { S.heard.add(a.key); fresh = true; }
        const b = el("button", { type: "button", class: "ack-btn" }, "Acknowledge");
        b.setAttribute("aria-label", "Acknowledge: " + a.words);
        b.addEventListener("click", async () => {
          const r = await post("/api/ack", { alarm: a.key });
          if (!r.ok) { $("login-msg").textContent = r.error; return; }
          a.ack = r.ack; drawAlarms();
        });
        li.append(b);
      }
      list.append(li);
    }
    $("no-alarms").hidden = S.alarms.length > 0;
    $("alarm-count").textContent = open ? String(open) : "";
    const banner = $("banner");
    const first = S.alarms.find((a) => !a.ack);
    banner.hidden = !first;
    if (first) banner.textContent = (open === 1 ? "1 alarm needs attention: " : open + " alarms need attention, first: ") + first.words;
    if (fresh && !S.first && $("sound-box").checked) beep();
    S.first = false;
  }

  // ------------------------------------------------------------------ pools
  function drawPools() {
    const box = $("pools"); box.replaceChildren();
    $("no-pools").hidden = S.pools.length > 0;
    for (const p of S.pools) {
      const d = el("section", { class: "pool", "data-pool": p.pool, "aria-label": "pool " + p.pool });
      d.append(el("h3", {}, "Pool " + p.pool + (p.operating === false ? " (not operating)" : "")));
      if (p.display_cents !== undefined) {
        d.append(el("p", { class: "value", "data-cents": p.display_cents }, "meter " + money(p.display_cents)));
        d.append(el("p", {}, "reset " + money(p.reset_cents) + ", " + p.hits + " hit(s), value of " + clock(p.ts)));
      } else {
        d.append(el("p", { class: "dim" }, "no value published by its link controller yet"));
      }
      const c = p.check;
      if (c && c.meters) {
        const m = Object.values(c.meters)[0] || {};
        d.append(el("p", {}, "reserve " + money(m.reserve_cents) + ", overflow " + money(m.overflow_cents) + " (its journal)"));
      }
      if (c) {
        d.append(el("p", { class: "verified " + (c.ok ? "ok" : "bad") }, c.ok
          ? "journal verified: " + c.entries + " entries, checked " + clock(c.at)
          : "journal FAILS verification: " + (c.problems || []).join("; ")));
      } else {
        d.append(el("p", { class: "dim" }, "journal not readable here (verify it at the link controller)"));
      }
      const tl = el("ul", { "aria-label": "tables of pool " + p.pool });
      for (const t of p.tables_playable || []) {
        tl.append(el("li", { "data-table": t.table }, t.table + ": " +
          (t.link_up === false ? "link down, unplayable" : t.playable === false ? "unplayable" : "playable")));
      }
      d.append(tl);
      if ((p.last_hits || []).length) {
        d.append(el("p", {}, "last hits:"));
        const hl = el("ul");
        for (const h of p.last_hits) {
          hl.append(el("li", {}, clock(h.ts) + " " + h.table + " area " + h.position + " " + money(h.cents) + " (order " + h.order + ")"));
        }
        d.append(hl);
      }
      box.append(d);
    }
  }

  // ------------------------------------------------------------------ the feed
  function take(msg) {
    if (msg.now) S.skew = Date.now() - msg.now;
    if (msg.type === "full") {
      $("title").textContent = msg.title; document.title = msg.title;
      S.pageSize = msg.page_size; S.tiles = {};
      if (S.first) $("sound-box").checked = !!msg.sound;
    }
    if (msg.sections) S.sections = msg.sections;
    if (msg.pools) S.pools = msg.pools;
    for (const t of msg.tiles || []) S.tiles[t.table] = t;
    if (msg.type === "full" || msg.sections) drawSections();
    else for (const t of msg.tiles || []) if ($("tile-" + t.table)) drawTile(t);
    if (msg.pools) { drawPools(); for (const t of Object.values(S.tiles)) if (t.pool && $("tile-" + t.table)) drawTile(t); }
    if (msg.alarms) { S.alarms = msg.alarms; drawAlarms(); }
    if (msg.status) $("sources").textContent = "NATS " + msg.status.nats + "; PostgreSQL " + msg.status.pg;
    if (msg.tiles && msg.tiles.length) window.floorSeen = (window.floorSeen || 0) + msg.tiles.length;
  }
  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    S.ws = ws;
    ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "badge on"; };
    ws.onmessage = (ev) => take(JSON.parse(ev.data));
    ws.onclose = () => {
      $("conn").textContent = "offline: reconnecting"; $("conn").className = "badge off";
      setTimeout(connect, 1000);
    };
  }

  // ------------------------------------------------------------------ sign-in
  function signedIn(me) {
    S.me = me; $("login-form").hidden = !!me; $("signed-in").hidden = !me;
    $("me").textContent = me || "";
  }
  $("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await post("/api/login", { supervisor: $("sup-id").value, pin: $("sup-pin").value });
    $("sup-pin").value = "";
    $("login-msg").textContent = r.ok ? "" : r.error;
    if (r.ok) signedIn(r.me);
  });
  $("logout-btn").addEventListener("click", async () => { await post("/api/logout"); signedIn(null); });

  // ------------------------------------------------------------------ shift and trends
  const COLOURS = ["#6fb1ff", "#8fe39a", "#f0cc5a", "#ff9f80", "#d7a6ff"];
  function bars(box, groups, figures, label) {
    const NS = "http://www.w3.org/2000/svg";
    const w = Math.max(480, groups.length * (figures.length * 14 + 24) + 80), h = 220;
    let max = 1;
    for (const g of groups) for (const f of figures) max = Math.max(max, Math.abs(g[f.key] || 0));
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h); svg.setAttribute("width", w); svg.setAttribute("height", h);
    svg.setAttribute("aria-hidden", "true");
    let x = 60;
    for (const g of groups) {
      figures.forEach((f, i) => {
        const v = Math.abs(g[f.key] || 0), bh = Math.round(v / max * 160);
        const r = document.createElementNS(NS, "rect");
        r.setAttribute("x", x + i * 14); r.setAttribute("y", 180 - bh); r.setAttribute("width", 12);
        r.setAttribute("height", bh); r.setAttribute("fill", COLOURS[i % COLOURS.length]);
        const t = document.createElementNS(NS, "title"); t.textContent = g[label] + " " + f.words + " " + money(g[f.key] || 0);
        r.append(t); svg.append(r);
      });
      const t = document.createElementNS(NS, "text");
      t.setAttribute("x", x); t.setAttribute("y", 198); t.setAttribute("fill", "#f2efe6"); t.setAttribute("font-size", "11");
      t.textContent = g[label]; svg.append(t);
      x += figures.length * 14 + 24;
    }
    const top = document.createElementNS(NS, "text");
    top.setAttribute("x", 4); top.setAttribute("y", 24); top.setAttribute("fill", "#f2efe6"); top.setAttribute("font-size", "11");
    top.textContent = money(max); svg.append(top);
    const legend = el("div", { class: "legend" });
    figures.forEach((f, i) => { const s = el("span"); const k = el("i"); k.style.background = COLOURS[i % COLOURS.length]; s.append(k, f.words); legend.append(s); });
    box.replaceChildren(svg, legend);
  }
  async function loadShift() {
    $("shift-table").tFoot.replaceChildren();
    const q = new URLSearchParams();
    if ($("shift-from").value) q.set("from", $("shift-from").value);
    if ($("shift-to").value) q.set("to", $("shift-to").value);
    $("shift-csv").href = "/api/shift.csv?" + q.toString();
    const r = await fetch("/api/shift?" + q.toString());
    const v = await r.json();
    if (!r.ok || v.ok === false) { $("shift-msg").textContent = "shift: " + (v.error || r.statusText); return; }
    $("shift-msg").textContent = (v.from || v.to) ? "window " + (v.from ? clock(v.from) : "start") + " to " + (v.to ? clock(v.to) : "now") : "every stored entry";
    const figs = v.figures;
    bars($("shift-chart"), v.tables, figs, "table");
    const head = el("tr");
    for (const c of ["table", "section", "rounds", "hits"].concat(figs.map((f) => f.words))) head.append(el("th", { scope: "col" }, c));
    $("shift-table").tHead.replaceChildren(head);
    const body = $("shift-table").tBodies[0]; body.replaceChildren();
    const row = (cells, kind, name) => {
      const tr = el("tr", { "data-row": kind, "data-name": name });
      cells.forEach((c, i) => tr.append(el(i === 0 ? "th" : "td", i === 0 ? { scope: "row" } : {}, c)));
      return tr;
    };
    for (const t of v.tables) {
      const tr = row([t.table, t.section, t.rounds, t.hits].concat(figs.map((f) => money(t[f.key]))), "table", t.table);
      figs.forEach((f) => tr.dataset[f.key.replace(/_([a-z])/g, (m, c) => c.toUpperCase())] = t[f.key]);
      body.append(tr);
    }
    for (const s of v.sections) body.append(row(["section " + s.section, "", s.rounds, s.hits].concat(figs.map((f) => money(s[f.key]))), "section", s.section));
    const foot = row(["floor", "", v.total.rounds, v.total.hits].concat(figs.map((f) => money(v.total[f.key]))), "floor", "floor");
    foot.id = "shift-total";
    figs.forEach((f) => foot.setAttribute("data-" + f.key.replace(/_/g, "-"), v.total[f.key]));
    $("shift-table").tFoot.replaceChildren(foot);
    const hr = await fetch("/api/trends?hours=8");
    if (hr.ok) {
      const t = await hr.json();
      const groups = t.steps.map((d) => Object.assign({ at: new Date(d.from).toISOString().slice(11, 16) }, d.total));
      bars($("hour-chart"), groups, t.figures, "at");
    }
    const tr = await fetch("/api/trends?days=7");
    if (tr.ok) {
      const t = await tr.json();
      const groups = t.steps.map((d) => Object.assign({ at: new Date(d.from).toISOString().slice(5, 10) }, d.total));
      bars($("trend-chart"), groups, t.figures, "at");
    }
  }
  $("shift-form").addEventListener("submit", (ev) => { ev.preventDefault(); loadShift(); });
  $("print-btn").addEventListener("click", () => window.print());

  fetch("/api/me").then((r) => r.json()).then((r) => signedIn(r.me));
  connect();
  loadShift();
  window.floorShift = loadShift;
})();
