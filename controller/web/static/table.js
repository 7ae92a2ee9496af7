// The table's page: draws the table from above (SVG) from the frames of /ws, turns clicks into
// POSTs (/api/input on the simulated table, /api/action for a signed-in supervisor).
// Extending it: Page.renderers.push(fn(frame)) draws more; Page.post(url, body) sends with the
// XSRF token; #extras is the place for more controls. Frames are the only source of state.
"use strict";

const Page = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.getElementById("table");
  const els = {};
  let frame = null;
  let me = null;
  let lastSeq = -1;
  let socket = null;
  let retry = 500;
  const entries = new Map();
  const renderers = [];

  function node(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    (parent || svg).appendChild(e);
    return e;
  }

  function cookie(name) {
    const m = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return m ? decodeURIComponent(m[1]) : "";
  }

  async function post(url, body) {
    const r = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-XSRFToken": cookie("_xsrf") },
      body: JSON.stringify(body || {}),
    });
    let data = {};
    try { data = await r.json(); } catch (e) { data = { ok: false, error: r.statusText }; }
    return data;
  }

  function say(text, bad) {
    const p = document.getElementById("action-result");
    p.textContent = text || "";
    p.className = bad ? "bad" : "";
  }

  async function press(input, extra) {
    const res = await post("/api/input", Object.assign({ input }, extra || {}));
    if (!res.ok) say(res.error, true);
  }

  // ---------------------------------------------------------------- drawing the table once
  const CX = 500, CY = 90;
  function areaAt(i) {
    const t = (20 + (i - 1) * 28) * Math.PI / 180;
    return [CX + 360 * Math.cos(t), CY + 400 * Math.sin(t)];
  }

  function build() {
    node("path", { class: "felt", d: "M 60 90 L 940 90 A 440 500 0 0 1 60 90 Z" });
    // progressive meter sign
    node("rect", { class: "meter-box", x: 300, y: 8, width: 400, height: 56, rx: 6 });
    els.meter = node("text", { class: "meter-text", x: 500, y: 47, id: "meter" }, svg, "");
    els.meterName = node("text", { class: "small", x: 500, y: 80, "text-anchor": "middle" }, svg, "");
    // number display 1-7: the driver's segments a..g
    node("rect", { class: "digit-box", x: 470, y: 110, width: 60, height: 92, rx: 4 });
    const segs = [
      "478,116 522,116 516,122 484,122", // a
      "524,118 524,154 518,150 518,124", // b
      "524,158 524,194 518,188 518,162", // c
      "478,196 522,196 516,190 484,190", // d
      "476,158 476,194 482,188 482,162", // e
      "476,118 476,154 482,150 482,124", // f
      "480,156 520,156 514,160 486,160 480,156", // g
    ];
    const display = node("g", { id: "display", "data-glyph": "" });
    els.display = display;
    els.segs = segs.map((pts, i) =>
      node("polygon", { class: "seg", points: pts, "data-seg": "abcdefg"[i] }, display));
    node("text", { class: "small", x: 500, y: 220, "text-anchor": "middle" }, svg, "1-7 display");
    // shoe and shuffler
    els.shoe = node("rect", { class: "device", id: "shoe", x: 300, y: 115, width: 120, height: 70, rx: 8 });
    node("text", { class: "label", x: 360, y: 145 }, svg, "shoe");
    els.shoeText = node("text", { class: "small", x: 360, y: 170, "text-anchor": "middle", id: "shoe-state" }, svg, "");
    els.shuffler = node("rect", { class: "device", id: "shuffler", x: 580, y: 115, width: 120, height: 70, rx: 8 });
    node("text", { class: "label", x: 640, y: 145 }, svg, "shuffler");
    els.shufflerText = node("text", { class: "small", x: 640, y: 170, "text-anchor": "middle", id: "shuffler-state" }, svg, "");
    // lock-out button
    const lock = node("g", { class: "press", id: "btn-lockout", role: "button" });
    node("circle", { class: "btn-lockout", cx: 380, cy: 265, r: 30 }, lock);
    node("text", { class: "small", x: 380, y: 312, "text-anchor": "middle" }, lock, "lock-out");
    lock.addEventListener("click", () => press("lockout"));
    // dice shaker
    const shaker = node("g", { class: "press", id: "shaker", role: "button" });
    node("rect", { class: "device", x: 470, y: 240, width: 60, height: 56, rx: 16 }, shaker);
    els.shakes = node("text", { class: "label", x: 500, y: 274 }, shaker, "");
    node("text", { class: "small", x: 500, y: 312, "text-anchor": "middle" }, shaker, "dice shaker");
    shaker.addEventListener("click", () => press("shake"));
    // dealer panel: NEXT, VOID, key switch
    node("rect", { class: "device", x: 570, y: 230, width: 200, height: 72, rx: 8 });
    node("text", { class: "small", x: 670, y: 318, "text-anchor": "middle" }, svg, "dealer panel");
    const next = node("g", { class: "press", id: "btn-next", role: "button" });
    node("rect", { class: "btn-panel", x: 580, y: 245, width: 56, height: 40, rx: 6 }, next);
    node("text", { class: "label", x: 608, y: 271 }, next, "NEXT");
    next.addEventListener("click", () => press("next"));
    const voidB = node("g", { class: "press", id: "btn-void", role: "button" });
    node("rect", { class: "btn-panel", x: 644, y: 245, width: 56, height: 40, rx: 6 }, voidB);
    node("text", { class: "label", x: 672, y: 271 }, voidB, "VOID");
    voidB.addEventListener("click", () => press("void"));
    const key = node("g", { class: "press", id: "key", role: "switch", "data-on": "false" });
    els.key = key;
    els.keyBody = node("circle", { class: "key-off", cx: 738, cy: 265, r: 20 }, key);
    els.keyBar = node("rect", { x: 735, y: 249, width: 6, height: 32, fill: "#ddd" }, key);
    key.addEventListener("click", () => press("key", { on: !(frame && frame.key) }));
    // six betting areas: acceptor light, chip slot
    els.areas = [];
    for (let i = 1; i <= 6; i++) {
      const [x, y] = areaAt(i);
      const g = node("g", { id: "area-" + i });
      node("circle", { class: "area", cx: x, cy: y, r: 62 }, g);
      const light = node("circle", { class: "light off", id: "light-" + i, cx: x, cy: y - 32, r: 15, "data-state": "off" }, g);
      const slot = node("g", { class: "press", id: "chip-" + i, role: "button" }, g);
      node("rect", { class: "slot", x: x - 26, y: y - 8, width: 52, height: 30, rx: 6 }, slot);
      const chip = node("circle", { class: "chip", cx: x, cy: y + 7, r: 12, visibility: "hidden" }, slot);
      slot.addEventListener("click", () => press("chip", { position: i }));
      node("text", { class: "label", x: x, y: y + 88 }, g, "area " + i);
      const wager = node("text", { class: "small", x: x, y: y + 42, "text-anchor": "middle", id: "wager-" + i }, g, "");
      els.areas.push({ light, chip, wager });
    }
    els.dealerHand = node("text", { class: "small", x: 500, y: 360, "text-anchor": "middle" }, svg, "");
  }

  // ---------------------------------------------------------------- rendering a frame
  const money = (c) => "$" + (c / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  function renderTable(f) {
    document.getElementById("table-id").textContent = f.table_id;
    const badge = document.getElementById("mode-badge");
    badge.textContent = f.mode === "sim" ? "simulated table" : "pit status";
    document.getElementById("bench-badge").hidden = !f.unapproved_bench;
    const words = document.getElementById("state-words");
    words.textContent = f.words;
    words.dataset.state = f.state;
    document.getElementById("round-line").textContent =
      `round ${f.round_id} · ${f.rounds} completed · journal seq ${f.seq}`;
    document.body.classList.toggle("readonly", f.mode !== "sim");
    els.display.setAttribute("data-glyph", f.display);
    els.display.setAttribute("aria-label", f.display_meaning);
    f.segments.forEach((on, i) => els.segs[i].classList.toggle("on", !!on));
    f.lights.forEach((state, i) => {
      const a = els.areas[i];
      a.light.setAttribute("class", "light " + state);
      a.light.setAttribute("data-state", state);
      const cents = f.wagers[String(i + 1)];
      a.chip.setAttribute("visibility", cents ? "visible" : "hidden");
      const pend = f.pending.some((p) => Number(p.position) === i + 1);
      a.wager.textContent = (cents ? money(cents) : "") + (pend ? " HIT" : "");
    });
    const m = f.meters[0];
    const hit = (f.pending || [])[0];
    els.meter.textContent = m ? (hit ? `WIN ${hit.position}  ` : "") + money(m.display_cents) : "";
    els.meterName.textContent = f.meters.map((x) => `${x.name} · ${x.hits} hits`).join("   ") +
      (f.link ? `   linked to pool ${f.link.pool}${f.link.down ? ": LINK DOWN, not playable" : ""}` : "");
    for (const [dev, rect, text] of [["shoe", els.shoe, els.shoeText], ["shuffler", els.shuffler, els.shufflerText]]) {
      const st = f.devices[dev];
      rect.setAttribute("class", "device" + (st === "fault" ? " fault" : st === "ready" ? "" : " busy"));
      rect.setAttribute("data-state", st);
      text.textContent = st;
    }
    els.shakes.textContent = f.state === "Open_StartingPosition_Dice" ? String(f.shakes) : "";
    els.key.setAttribute("data-on", String(f.key));
    els.keyBody.setAttribute("class", f.key ? "key-on" : "key-off");
    els.keyBar.setAttribute("transform", f.key ? "rotate(90 738 265)" : "");
    // faults
    const box = document.getElementById("fault-box");
    const list = document.getElementById("fault-list");
    list.replaceChildren();
    const faults = f.faults.slice();
    if (f.storage_fault) faults.push({ code: "STORAGE", words: f.storage_fault, detail: "" });
    for (const x of faults) {
      const li = document.createElement("li");
      li.textContent = `${x.code}: ${x.words}` + (x.detail ? ` (${x.detail})` : "");
      list.appendChild(li);
    }
    box.hidden = faults.length === 0;
  }

  function cardSpan(text, low) {
    const s = document.createElement("span");
    s.className = "card" + (/[dh]$/.test(text) ? " red" : "") + (low ? " low" : "");
    s.textContent = text.replace("T", "10");
    return s;
  }

  function renderHands(f) {
    const box = document.getElementById("hands");
    const h = f.hands;
    if (!h || box.dataset.round === String(h.round_id)) return;
    box.dataset.round = String(h.round_id);
    box.replaceChildren();
    const title = document.createElement("p");
    title.textContent = `round ${h.round_id}: ${h.outcome}` + (h.reason ? ` (${h.reason})` : "");
    box.appendChild(title);
    for (const hand of h.hands) {
      const row = document.createElement("div");
      row.className = "hand";
      row.dataset.seat = hand.seat;
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = hand.name;
      row.appendChild(who);
      if (hand.high) {
        hand.high.forEach((c) => row.appendChild(cardSpan(c, false)));
        row.appendChild(document.createTextNode(" / "));
        hand.low.forEach((c) => row.appendChild(cardSpan(c, true)));
      } else {
        hand.cards.forEach((c) => row.appendChild(cardSpan(c, false)));
      }
      const res = document.createElement("span");
      res.className = "res";
      if (hand.seat === 0 && hand.rule) res.textContent = `house way: ${hand.rule}`;
      else if (hand.wager_cents) res.textContent = hand.line ? `${hand.line} pays ${money(hand.payout_cents)}` : "no progressive win";
      row.appendChild(res);
      box.appendChild(row);
    }
  }

  function addEntries(list) {
    for (const e of list) entries.set(e.seq, e);
    const keys = [...entries.keys()].sort((a, b) => b - a);
    for (const k of keys.slice(60)) entries.delete(k);
    const ol = document.getElementById("entries");
    ol.replaceChildren();
    for (const k of keys.slice(0, 60)) {
      const e = entries.get(k);
      const li = document.createElement("li");
      li.value = e.seq;
      li.dataset.seq = e.seq;
      li.textContent = `${e.type} ${e.text}` + (e.effects.length ? ` → ${e.effects.join(", ")}` : "");
      ol.appendChild(li);
    }
  }

  // supervisor actions offered for the state (the machine refuses what is not allowed)
  function actionsFor(f) {
    const out = [];
    const s = f.state;
    if (s === "Closed") out.push(["Open the table", "open", []], ["Maintenance", "maintenance", ["enter"]]);
    if (s === "Maintenance") out.push(["Leave maintenance", "maintenance", ["exit"]], ["Light test", "light-test", []], ["Display test", "display-test", []]);
    if (s === "Open_Betting" || s === "Open_Shuffling") out.push(["Close the table", "close", []]);
    if (s === "Fault") out.push(["Clear the fault", "clear-fault", []], ["Clear and void the round", "clear-fault", ["--void"]]);
    if (s === "Open_LockedOut" && f.side_wager_offered && f.side_bets == null) out.push(["No 1-7 side wagers placed", "side-wagers", ["none"]]);
    if (s === "Open_SideWagers") out.push(["Void the draw", "void-draw", ["voided by the supervisor at the page"]]);
    for (const p of f.pending || []) {
      out.push([`Validate the hit at ${p.position} (${p.line})`, "validate-hit", [String(p.position)]]);
      out.push([`Void the hit at ${p.position}`, "void-hit", [String(p.position), "voided by the supervisor at the page"]]);
    }
    return out;
  }

  function renderSupervisor(f) {
    document.getElementById("login-form").hidden = !!me;
    document.getElementById("signed-in").hidden = !me;
    if (!me) return;
    document.getElementById("sup-name").textContent = me;
    const box = document.getElementById("actions");
    const wanted = actionsFor(f);
    const sig = JSON.stringify(wanted);
    if (box.dataset.sig !== sig) {
      box.dataset.sig = sig;
      box.replaceChildren();
      for (const [label, request, args] of wanted) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = label;
        b.dataset.request = request;
        b.addEventListener("click", () => act(request, args));
        box.appendChild(b);
      }
    }
    document.getElementById("config-form").hidden = !(f.state === "Closed" || f.state === "Maintenance");
  }

  async function act(request, args) {
    const res = await post("/api/action", { request, args });
    if (res.ok) say(`${request}: done (journal seq ${res.seq})`);
    else {
      say(`${request}: ${res.error}`, true);
      if (res.error && res.error.startsWith("sign in")) { me = null; render(); }
    }
  }

  // the dealer's entries on the simulated table: outcomes without a card reader, dice total
  function renderDealer(f) {
    const box = document.getElementById("dealer-entry");
    const ctl = document.getElementById("dealer-controls");
    const rows = [];
    if (f.mode === "sim" && f.state === "Open_Settlement" && !f.card_reading_shoe) {
      for (const pos of Object.keys(f.wagers).sort()) {
        if (!(pos in f.outcomes)) rows.push(["outcome", pos]);
      }
    }
    if (f.mode === "sim" && f.state === "Open_StartingPosition_Dice" && f.shakes >= 3) rows.push(["dice", ""]);
    const sig = JSON.stringify([rows, f.state, f.round_id]);
    box.hidden = rows.length === 0;
    if (ctl.dataset.sig === sig) return;
    ctl.dataset.sig = sig;
    ctl.replaceChildren();
    for (const [kind, pos] of rows) {
      const row = document.createElement("div");
      if (kind === "outcome") {
        row.append(`area ${pos}: `);
        const sel = document.createElement("select");
        sel.id = `outcome-${pos}`;
        const none = document.createElement("option");
        none.value = ""; none.textContent = "no win";
        sel.appendChild(none);
        for (const line of f.lines || []) {
          const o = document.createElement("option");
          o.value = line; o.textContent = line;
          sel.appendChild(o);
        }
        const b = document.createElement("button");
        b.type = "button"; b.textContent = "Enter"; b.id = `enter-outcome-${pos}`;
        b.addEventListener("click", () => press("outcome", { position: Number(pos), line: sel.value || null }));
        row.append(sel, b);
      } else {
        const inp = document.createElement("input");
        inp.id = "dice-total"; inp.type = "number"; inp.min = 3; inp.max = 18; inp.placeholder = "dice total";
        const b = document.createElement("button");
        b.type = "button"; b.textContent = "Enter total";
        b.addEventListener("click", () => press("dice", { total: Number(inp.value) }));
        row.append(inp, b);
      }
      ctl.appendChild(row);
    }
  }

  function render() {
    if (!frame) return;
    for (const fn of renderers) {
      try { fn(frame); } catch (e) { console.error(e); }
    }
  }
  renderers.push(renderTable, renderHands, renderSupervisor, renderDealer);

  function onFrame(f) {
    frame = f;
    lastSeq = f.seq;
    addEntries(f.entries || []);
    render();
  }

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(`${proto}//${location.host}/ws?since=${lastSeq}`);
    socket.onopen = () => {
      retry = 500;
      const c = document.getElementById("conn");
      c.textContent = "live"; c.className = "badge on";
    };
    socket.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.type === "entries") addEntries(msg.entries);
      else if (msg.type === "frame") onFrame(msg);
    };
    socket.onclose = () => {
      const c = document.getElementById("conn");
      c.textContent = "offline"; c.className = "badge off";
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 8000);
    };
  }

  document.getElementById("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const supervisor = document.getElementById("sup-id").value.trim();
    const pinBox = document.getElementById("sup-pin");
    const res = await post("/api/login", { supervisor, pin: pinBox.value });
    pinBox.value = "";
    if (res.ok) { me = res.supervisor; say(`signed in as ${me}`); }
    else say(res.error, true);
    render();
  });
  document.getElementById("logout-btn").addEventListener("click", async () => {
    await post("/api/logout", {});
    me = null; say("signed out"); render();
  });
  // on-demand software verification: HMAC-SHA1 keyed by the seed over every approved file,
  // journaled in the signed-in supervisor's name (docs/software-verification.md)
  document.getElementById("verify-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const seed = document.getElementById("verify-seed").value.trim();
    const res = await post("/api/verify-software", { seed });
    if (res.ok) say(`software ${res.method} seed ${res.seed}: ${res.digest} (${res.files} files, entry ${res.seq})`);
    else say(res.error, true);
  });
  document.getElementById("config-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = document.getElementById("config-change").value.trim();
    if (text) await act("config-change", text.split(/\s+/));
  });

  build();
  fetch("/api/frame", { credentials: "same-origin" }).then((r) => r.json()).then((f) => {
    me = f.me || null;
    if (f.type === "frame") onFrame(f);
    connect();
  }).catch(connect);

  return { post, press, act, renderers, get frame() { return frame; }, get me() { return me; } };
})();
