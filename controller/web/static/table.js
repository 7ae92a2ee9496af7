// The table's page: draws the table from above (SVG) from the frames of /ws, turns presses into
// POSTs (/api/input on the simulated table, /api/action for a signed-in supervisor).
// Every refusal the journal records is shown in words at the control it came from (the entry's
// `refused`); a lost connection covers the page with a banner and turns the controls off;
// irreversible steps are confirmed first, saying what will happen.
// Extending it: Page.renderers.push(fn(frame)) draws more; Page.post(url, body) sends with the
// XSRF token; #extras is the place for more controls. Frames are the only source of state.
"use strict";

const Page = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const svg = $("table");
  const els = {};
  let frame = null;
  let me = null;
  let lastSeq = -1;
  let shownFrom = null; // refusals journaled after the page opened are shown
  let socket = null;
  let retry = 500;
  let online = false;
  const entries = new Map();
  const renderers = [];
  const MSG_MS = 15000;

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
    if (!online) return { ok: false, error: "no connection to the table: nothing was sent" };
    let r;
    try {
      r = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-XSRFToken": cookie("_xsrf") },
        body: JSON.stringify(body || {}),
      });
    } catch (e) {
      setOnline(false);
      return { ok: false, error: "no connection to the table: nothing was sent" };
    }
    let data = {};
    try { data = await r.json(); } catch (e) { data = { ok: false, error: r.statusText }; }
    return data;
  }

  function say(text, bad) {
    const p = $("action-result");
    p.textContent = text || "";
    p.className = bad ? "bad" : "";
  }

  // ---------------------------------------------------------------- messages at the controls
  const timers = {};
  function tell(control, text, position) {
    const id = control === "chip" ? "msg-chip" : "msg-" + control;
    const box = $(id);
    const shown = (position ? `Area ${position}: ` : "") + text;
    if (box) {
      box.textContent = shown;
      clearTimeout(timers[id]);
      timers[id] = setTimeout(() => { box.textContent = ""; }, MSG_MS);
    }
    bubble(control, shown, position);
    return box;
  }

  // a bubble over the drawn control (the SVG), so the refusal is where the click was
  const SVG_OF = { chip: (p) => "chip-" + p, lockout: () => "btn-lockout", next: () => "btn-next",
    void: () => "btn-void", key: () => "key", shake: () => "shaker" };
  function bubble(control, text, position) {
    const idOf = SVG_OF[control];
    if (!idOf) return;
    const target = $(idOf(position));
    const wrap = $("svg-wrap");
    if (!target || !wrap) return;
    const box = target.getBoundingClientRect();
    const outer = wrap.getBoundingClientRect();
    const b = document.createElement("div");
    b.className = "bubble";
    b.dataset.for = control;
    b.textContent = text;
    b.style.left = Math.max(80, Math.min(outer.width - 80, box.left - outer.left + box.width / 2)) + "px";
    b.style.top = (box.bottom - outer.top + 4) + "px";
    $("bubbles").replaceChildren(b);
    setTimeout(() => { if (b.parentNode) b.remove(); }, MSG_MS);
  }

  async function press(input, extra) {
    const control = { chip: "chip", lockout: "lockout", next: "next", void: "void", key: "key", shake: "shake",
      outcome: "outcome", dice: "dice", side_wagers: "side-wagers", pai_gow: "pai-gow" }[input] || input;
    const position = extra && extra.position;
    const res = await post("/api/input", Object.assign({ input }, extra || {}));
    if (!res.ok) tell(control, res.error || "not sent", position);
    return res;
  }

  // ---------------------------------------------------------------- confirmations
  function confirmStep(text, yes) {
    const dlg = $("confirm");
    $("confirm-text").textContent = text;
    $("confirm-yes").textContent = yes || "Confirm";
    return new Promise((resolve) => {
      const done = (v) => {
        $("confirm-yes").onclick = null; $("confirm-no").onclick = null; dlg.onclose = null;
        if (dlg.open) dlg.close();
        resolve(v);
      };
      $("confirm-yes").onclick = () => done(true);
      $("confirm-no").onclick = () => done(false);
      dlg.onclose = () => done(false);
      dlg.showModal();
      $("confirm-no").focus();
    });
  }

  async function panel(button) {
    const hint = frame && frame.panel && frame.panel[button];
    if (hint && hint.confirm) {
      const ok = await confirmStep(`${button.toUpperCase()} ${hint.does}. This cannot be undone.`,
        `Press ${button.toUpperCase()}`);
      if (!ok) return;
    }
    press(button);
  }

  // ---------------------------------------------------------------- drawing the table once
  const CX = 500, CY = 90;
  function areaAt(i) {
    const t = (20 + (i - 1) * 28) * Math.PI / 180;
    return [CX + 360 * Math.cos(t), CY + 400 * Math.sin(t)];
  }

  function pressable(g, label, fn) {
    // mouse and touch on the drawing; the keyboard uses the buttons under it (one tab stop each)
    g.setAttribute("role", "button");
    g.setAttribute("tabindex", "-1");
    g.setAttribute("aria-label", label);
    g.addEventListener("click", () => { if (online && frame && frame.mode === "sim") fn(); });
  }

  function build() {
    node("path", { class: "felt", d: "M 60 90 L 940 90 A 440 500 0 0 1 60 90 Z" });
    node("rect", { class: "meter-box", x: 300, y: 8, width: 400, height: 56, rx: 6 });
    els.meter = node("text", { class: "meter-text", x: 500, y: 47, id: "meter" }, svg, "");
    els.meterName = node("text", { class: "meter-name", x: 500, y: 84 }, svg, "");
    node("rect", { class: "digit-box", x: 470, y: 110, width: 60, height: 92, rx: 4 });
    const segs = [
      "478,116 522,116 516,122 484,122", "524,118 524,154 518,150 518,124",
      "524,158 524,194 518,188 518,162", "478,196 522,196 516,190 484,190",
      "476,158 476,194 482,188 482,162", "476,118 476,154 482,150 482,124",
      "480,156 520,156 514,160 486,160 480,156",
    ];
    const display = node("g", { id: "display", "data-glyph": "", role: "img", "aria-label": "1-7 display: blank" });
    els.display = display;
    els.segs = segs.map((pts, i) => node("polygon", { class: "seg", points: pts, "data-seg": "abcdefg"[i] }, display));
    els.displayText = node("text", { class: "small", x: 500, y: 222, "text-anchor": "middle", id: "display-meaning" }, svg, "1-7 display");
    els.shoe = node("rect", { class: "device", id: "shoe", x: 300, y: 115, width: 120, height: 70, rx: 8 });
    node("text", { class: "label", x: 360, y: 145 }, svg, "shoe");
    els.shoeText = node("text", { class: "small", x: 360, y: 172, "text-anchor": "middle", id: "shoe-state" }, svg, "");
    els.shuffler = node("rect", { class: "device", id: "shuffler", x: 580, y: 115, width: 120, height: 70, rx: 8 });
    node("text", { class: "label", x: 640, y: 145 }, svg, "shuffler");
    els.shufflerText = node("text", { class: "small", x: 640, y: 172, "text-anchor": "middle", id: "shuffler-state" }, svg, "");
    const lock = node("g", { class: "press", id: "btn-lockout" });
    node("circle", { class: "btn-lockout", cx: 380, cy: 265, r: 30 }, lock);
    node("text", { class: "small", x: 380, y: 316, "text-anchor": "middle" }, lock, "lock-out");
    pressable(lock, "lock-out", () => press("lockout"));
    const shaker = node("g", { class: "press", id: "shaker" });
    node("rect", { class: "device", x: 470, y: 240, width: 60, height: 56, rx: 16 }, shaker);
    els.shakes = node("text", { class: "label", x: 500, y: 274, "pointer-events": "none" }, svg, "");
    node("text", { class: "small", x: 500, y: 316, "text-anchor": "middle" }, shaker, "dice shaker");
    pressable(shaker, "dice shaker", () => press("shake"));
    node("rect", { class: "device", x: 570, y: 230, width: 200, height: 72, rx: 8 });
    node("text", { class: "small", x: 670, y: 320, "text-anchor": "middle" }, svg, "dealer panel");
    const next = node("g", { class: "press", id: "btn-next" });
    node("rect", { class: "btn-panel", x: 580, y: 245, width: 56, height: 40, rx: 6 }, next);
    node("text", { class: "label", x: 608, y: 271 }, next, "NEXT");
    pressable(next, "NEXT", () => panel("next"));
    const voidB = node("g", { class: "press", id: "btn-void" });
    node("rect", { class: "btn-panel", x: 644, y: 245, width: 56, height: 40, rx: 6 }, voidB);
    node("text", { class: "label", x: 672, y: 271 }, voidB, "VOID");
    pressable(voidB, "VOID", () => panel("void"));
    const key = node("g", { class: "press", id: "key", "data-on": "false" });
    els.key = key;
    els.keyBody = node("circle", { class: "key-off", cx: 738, cy: 265, r: 20 }, key);
    els.keyBar = node("rect", { x: 735, y: 249, width: 6, height: 32, fill: "#ddd" }, key);
    pressable(key, "supervisor key switch", () => press("key", { on: !(frame && frame.key) }));
    key.setAttribute("role", "switch");
    key.setAttribute("aria-checked", "false");
    els.areas = [];
    for (let i = 1; i <= 6; i++) {
      const [x, y] = areaAt(i);
      const g = node("g", { id: "area-" + i });
      node("circle", { class: "area", cx: x, cy: y, r: 62 }, g);
      const light = node("circle", { class: "light off", id: "light-" + i, cx: x, cy: y - 32, r: 15, "data-state": "off" }, g);
      const word = node("text", { class: "light-word", x: x, y: y - 54, id: "light-word-" + i }, g, "");
      const slot = node("g", { class: "press", id: "chip-" + i }, g);
      node("rect", { class: "slot", x: x - 26, y: y - 8, width: 52, height: 30, rx: 6 }, slot);
      const chip = node("circle", { class: "chip", cx: x, cy: y + 7, r: 12, visibility: "hidden" }, slot);
      pressable(slot, "chip slot of area " + i, () => press("chip", { position: i }));
      node("text", { class: "label", x: x, y: y + 88 }, g, "area " + i);
      const wager = node("text", { class: "small", x: x, y: y + 44, "text-anchor": "middle", id: "wager-" + i }, g, "");
      els.areas.push({ light, word, chip, wager });
    }
    els.bank = node("text", { class: "small", x: 500, y: 360, "text-anchor": "middle", id: "bank-line" }, svg, "");
  }

  // ---------------------------------------------------------------- rendering a frame
  const money = (c) => (c < 0 ? "-" : "") + "$" + (Math.abs(c) / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const LIGHT_WORDS = { off: "", attract: "open", lit: "BET", locked: "LOCKED", blink: "HIT" };
  const LIGHT_SAY = { off: "off", attract: "open for a wager", lit: "wager placed", locked: "wager locked in", blink: "hit, waiting for a supervisor" };
  const clock = (ms) => new Date(ms).toLocaleTimeString("en-GB", { hour12: false });
  const lineWords = (l) => String(l || "").replace(/[-_]/g, " ");

  let alarmed = "";
  function renderTable(f) {
    $("table-id").textContent = f.table_id;
    $("mode-badge").textContent = f.mode === "sim" ? "simulated table" : "pit status";
    $("bench-badge").hidden = !f.unapproved_bench;
    const door = $("door-badge");
    door.hidden = !(f.door && f.door.open);
    if (f.door) door.textContent = f.door.words;
    const words = $("state-words");
    words.textContent = f.words;
    words.dataset.state = f.state;
    $("next-step").textContent = f.next_step || "";
    $("round-line").textContent = `round ${f.round_id} · ${f.rounds} completed`;
    document.body.classList.toggle("readonly", f.mode !== "sim");
    els.display.setAttribute("data-glyph", f.display);
    let meaning = f.display_meaning || "blank";
    if (/^[1-7]$/.test(f.display) && f.start_seat !== undefined && f.start_seat !== null) {
      meaning = `starting position ${f.display}: the first stack goes to ${f.start_seat === 0 ? "the dealer" : "area " + f.start_seat}`;
    }
    els.display.setAttribute("aria-label", "1-7 display: " + meaning);
    els.displayText.textContent = /^[1-7]$/.test(f.display) ? `first stack: ${f.start_seat === 0 ? "dealer" : "area " + f.start_seat}` :
      ({ "-": "waiting", L: "locked out", F: "fault", P: "hit pending", " ": "1-7 display" }[f.display] || "1-7 display");
    f.segments.forEach((on, i) => els.segs[i].classList.toggle("on", !!on));
    f.lights.forEach((state, i) => {
      const a = els.areas[i];
      a.light.setAttribute("class", "light " + state);
      a.light.setAttribute("data-state", state);
      a.word.textContent = LIGHT_WORDS[state] || "";
      const cents = f.wagers[String(i + 1)];
      a.chip.setAttribute("visibility", cents ? "visible" : "hidden");
      const hit = (f.pending || []).find((p) => Number(p.position) === i + 1);
      a.wager.textContent = (cents ? money(cents) : "") + (hit ? " HIT" : "");
      const btn = $("do-chip-" + (i + 1));
      if (btn) btn.setAttribute("aria-label", `Chip in ${i + 1}: area ${i + 1}, light ${LIGHT_SAY[state] || state}`);
    });
    const m = f.meters[0];
    const hit = (f.pending || [])[0];
    els.meter.textContent = m ? money(m.display_cents) : "";
    els.meterName.textContent = hit ? `HIT at area ${hit.position}: ${hit.hit_words}` :
      f.meters.map((x) => `${x.name} meter · ${x.hits} ${x.hits === 1 ? "hit" : "hits"} paid from it`).join("   ") +
      (f.link ? `   linked to pool ${f.link.pool}${f.link.down ? ": LINK DOWN, not playable" : ""}` : "");
    for (const [dev, rect, text] of [["shoe", els.shoe, els.shoeText], ["shuffler", els.shuffler, els.shufflerText]]) {
      const st = f.devices[dev];
      rect.setAttribute("class", "device" + (st === "fault" ? " fault" : st === "ready" ? "" : " busy"));
      rect.setAttribute("data-state", st);
      text.textContent = st === "fault" ? "FAULT" : st;
    }
    els.shakes.textContent = f.state === "Open_StartingPosition_Dice" ? String(f.shakes) : "";
    $("shaker").setAttribute("aria-label", f.state === "Open_StartingPosition_Dice" ? `dice shaker, ${f.shakes} shakes` : "dice shaker");
    els.key.setAttribute("data-on", String(f.key));
    els.key.setAttribute("aria-checked", String(!!f.key));
    els.keyBody.setAttribute("class", f.key ? "key-on" : "key-off");
    els.keyBar.setAttribute("transform", f.key ? "rotate(90 738 265)" : "");
    els.bank.textContent = f.bank ? `area ${f.bank} banks this round` : (f.state.startsWith("Open_") ? "the house banks" : "");
    // faults
    const list = $("fault-list");
    list.replaceChildren();
    const faults = f.faults.slice();
    if (f.storage_fault) faults.push({ code: "", words: f.storage_fault, detail: "" });
    for (const x of faults) {
      const li = document.createElement("li");
      li.textContent = x.words + (x.device ? ` (the ${x.device})` : "") + (x.detail ? `: ${x.detail}` : "");
      list.appendChild(li);
    }
    $("fault-box").hidden = faults.length === 0;
    // jackpot / fault: the page changes colour, a banner, a sound when asked
    const kind = f.state === "Open_JackpotPending" ? "jackpot" : (f.state === "Fault" || f.storage_fault) ? "fault" : "";
    document.body.classList.toggle("jackpot", kind === "jackpot");
    document.body.classList.toggle("fault", kind === "fault");
    const alarm = $("alarm");
    alarm.className = kind;
    alarm.hidden = !kind;
    alarm.textContent = kind === "jackpot" ? `JACKPOT: ${(f.pending || []).map((p) => p.words).join(", ")}: call a supervisor` :
      kind === "fault" ? `FAULT: ${faults.map((x) => x.words).join("; ")}: stop play, call a supervisor` : "";
    if (kind && alarmed !== kind + f.round_id) sound(kind);
    alarmed = kind ? kind + f.round_id : "";
  }

  function sound(kind) {
    if (!$("sound-box").checked) return;
    try {
      const ctx = new (window.AudioContext || window.webkitAudioContext)();
      const notes = kind === "jackpot" ? [660, 880, 1100] : [440, 330, 440, 330];
      notes.forEach((hz, i) => {
        const o = ctx.createOscillator(); const g = ctx.createGain();
        o.frequency.value = hz; o.connect(g); g.connect(ctx.destination);
        g.gain.value = 0.2; o.start(ctx.currentTime + i * 0.2); o.stop(ctx.currentTime + i * 0.2 + 0.18);
      });
    } catch (e) { /* no audio here */ }
  }

  // the panel's controls: enabled where this page may press, each saying what a press does now
  function renderControls(f) {
    const box = $("controls");
    box.hidden = f.mode !== "sim";
    if (f.mode !== "sim") return;
    const p = f.panel || { next: { does: "" }, void: { does: "" } };
    $("next-hint").textContent = "now: " + p.next.does;
    $("void-hint").textContent = "now: " + p.void.does;
    $("do-next").setAttribute("aria-label", `NEXT: ${p.next.does}`);
    $("do-void").setAttribute("aria-label", `VOID: ${p.void.does}`);
    $("btn-next").setAttribute("aria-label", `NEXT: ${p.next.does}`);
    $("btn-void").setAttribute("aria-label", `VOID: ${p.void.does}`);
    $("do-key").setAttribute("aria-pressed", String(!!f.key));
    $("key-hint").textContent = f.key ? "on: NEXT and VOID take a supervisor's steps" : "off";
    $("shake-hint").textContent = f.state === "Open_StartingPosition_Dice" ? `${f.shakes} shake${f.shakes === 1 ? "" : "s"}` : "";
  }

  function cardSpan(text, low) {
    const s = document.createElement("span");
    s.className = "card" + (/[dh]$/.test(text) ? " red" : "") + (low ? " low" : "");
    s.textContent = text.replace("T", "10");
    const suit = { s: "spades", h: "hearts", d: "diamonds", c: "clubs" }[text.slice(-1)];
    if (suit) s.setAttribute("title", text.replace("T", "10").slice(0, -1) + " of " + suit);
    return s;
  }

  function renderHands(f) {
    const box = $("hands");
    const h = f.hands;
    if (!h || box.dataset.round === String(h.round_id)) return;
    box.dataset.round = String(h.round_id);
    box.replaceChildren();
    const title = document.createElement("p");
    title.textContent = `Round ${h.round_id}: ${h.outcome}` + (h.reason ? ` (${h.reason})` : "");
    box.appendChild(title);
    for (const hand of h.hands) {
      const row = document.createElement("div");
      row.className = "hand";
      row.dataset.seat = hand.seat;
      const who = document.createElement("span");
      who.className = "seat";
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
      if (hand.seat === 0 && hand.rule) res.textContent = `house way: ${String(hand.rule).replace(/^[a-z0-9_]+\.([a-z0-9_]+)\.rule$/, "$1").replace(/_/g, " ")}`;
      else if (hand.wager_cents) res.textContent = hand.line ? `progressive: ${lineWords(hand.line)}, paid ${money(hand.payout_cents)}` : "progressive: no win";
      row.appendChild(res);
      box.appendChild(row);
    }
  }

  // ---------------------------------------------------------------- journal, timeline, refusals
  function entryItem(e) {
    const li = document.createElement("li");
    li.dataset.seq = e.seq;
    if (e.refused) li.className = "refused";
    const when = document.createElement("span");
    when.className = "when";
    when.textContent = clock(e.ts_ms);
    li.appendChild(when);
    li.append(e.words + (e.text ? ` → ${e.text}` : ""));
    if (e.who) {
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = ` · ${e.who}`;
      li.appendChild(who);
    }
    return li;
  }

  function addEntries(list) {
    const fresh = [];
    for (const e of list) {
      if (!entries.has(e.seq)) fresh.push(e);
      entries.set(e.seq, e);
    }
    const keys = [...entries.keys()].sort((a, b) => b - a);
    for (const k of keys.slice(80)) entries.delete(k);
    const ol = $("entries");
    ol.replaceChildren(...keys.slice(0, 60).map((k) => entryItem(entries.get(k))));
    if (shownFrom !== null) {
      for (const e of fresh) {
        if (e.refused && e.seq > shownFrom) refused(e);
      }
    }
  }

  function refused(e) {
    const r = e.refused;
    const control = r.control || "";
    const text = "Refused: " + r.reason;
    if (["next", "void", "lockout", "key", "shake", "chip", "dice", "outcome", "side-wagers", "pai-gow"].includes(control)) {
      tell(control, text, control === "chip" || control === "outcome" ? r.position : null);
    } else if (control) {
      say(text, true);
    } else {
      say(`${e.words}: ${text}`, true);
    }
  }

  function renderTimeline(f) {
    const ol = $("timeline");
    // this round's steps and the last round's (a round a card-reading shoe plays in a blink
    // stays readable after it ended)
    const mine = [...entries.values()].filter((e) => e.round_id >= f.round_id - 1 && e.round_id > 0 && e.type !== "power_up")
      .sort((a, b) => a.seq - b.seq).slice(-30);
    const sig = mine.map((e) => e.seq).join(",");
    if (ol.dataset.sig === sig) return;
    ol.dataset.sig = sig;
    const items = [];
    let round = null;
    for (const e of mine) {
      if (e.round_id !== round) {
        round = e.round_id;
        const h = document.createElement("li");
        h.className = "round-head";
        h.textContent = round === f.round_id ? `Round ${round} (this round)` : `Round ${round}`;
        items.push(h);
      }
      items.push(entryItem(e));
    }
    ol.replaceChildren(...items);
    ol.scrollTop = ol.scrollHeight;
    const paid = $("paid");
    paid.replaceChildren();
    for (const p of f.paid || []) {
      const d = document.createElement("p");
      d.className = "res";
      d.textContent = p.words;
      paid.appendChild(d);
    }
  }

  // ---------------------------------------------------------------- supervisor
  function pendingLine(p) { return `area ${p.position} (${p.hit_words})`; }
  // [label, request, args, what a press will do (asked to confirm) or null]
  function actionsFor(f) {
    const out = [];
    const s = f.state;
    if (s === "Closed") out.push(["Open the table", "open", [], null], ["Maintenance", "maintenance", ["enter"], null]);
    if (s === "Maintenance") out.push(["Leave maintenance", "maintenance", ["exit"], null], ["Light test", "light-test", [], null], ["Display test", "display-test", [], null]);
    if (s === "Open_Betting" || s === "Open_Shuffling") out.push(["Close the table", "close", [], "Close the table: no more rounds until a supervisor opens it again."]);
    if (s === "Fault") {
      const where = f.fault_interrupted;
      out.push(["Clear the fault", "clear-fault", [], where === "Open_Dealing" ?
        "Clear the fault: the round stopped while dealing, so it is VOIDED, its wagers refunded." :
        "Clear the fault: the round resumes where it stopped."]);
      out.push(["Clear and void the round", "clear-fault", ["--void"], "Clear the fault and VOID the round: every progressive wager is refunded and the meters are put back."]);
    }
    if (s === "Open_LockedOut" && f.side_wager_offered && f.side_bets == null) out.push(["No 1-7 side wagers placed", "side-wagers", ["none"], null]);
    if (f.door && f.door.open && !f.door.maintenance) out.push(["Allow play with the door open", "door-maintenance", ["on"], "Allow play with the compartment door open, for maintenance, until it is closed: journaled in your name."]);
    if (f.door && f.door.open && f.door.maintenance) out.push(["Refuse play while the door is open", "door-maintenance", ["off"], null]);
    if (s === "Open_SideWagers") out.push(["Void the draw", "void-draw", ["voided by the supervisor at the page"], "Void the draw: the starting position is drawn again."]);
    for (const p of f.pending || []) {
      const meter = f.meters[0] ? ` (the meter reads ${money(f.meters[0].display_cents)} now)` : "";
      out.push([`Validate the hit at ${p.position} (${lineWords(p.line)})`, "validate-hit", [String(p.position)],
        `Validate the hit at ${pendingLine(p)}: it is paid now from the meter at its value then${meter}, and the meter resets.`]);
      out.push([`Void the hit at ${p.position}`, "void-hit", [String(p.position), "voided by the supervisor at the page"],
        `Void the hit at ${pendingLine(p)}: it is NOT paid.`]);
    }
    return out;
  }

  function renderSupervisor(f) {
    $("login-form").hidden = !!me;
    $("signed-in").hidden = !me;
    if (!me) return;
    $("sup-name").textContent = me;
    const box = $("actions");
    const wanted = actionsFor(f);
    const sig = JSON.stringify(wanted);
    if (box.dataset.sig !== sig) {
      box.dataset.sig = sig;
      box.replaceChildren();
      for (const [label, request, args, what] of wanted) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = label;
        b.dataset.request = request;
        if (what) b.className = "danger";
        b.addEventListener("click", async () => {
          if (what && !(await confirmStep(what + " This cannot be undone.", label))) return;
          act(request, args, label);
        });
        box.appendChild(b);
      }
    }
    $("config-form").hidden = !(f.state === "Closed" || f.state === "Maintenance");
  }

  async function act(request, args, label) {
    const res = await post("/api/action", { request, args });
    const name = label || request;
    if (res.ok) say(`${name}: done` + (res.words ? `. ${res.words}` : ""));
    else {
      say(`${name}: refused: ${res.error}`, true);
      if (res.error && res.error.startsWith("sign in")) { me = null; render(); }
    }
  }

  // ---------------------------------------------------------------- the dealer's entries
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    e.append(...kids);
    return e;
  }
  function msgBox(id) { return el("p", { className: "msg", id, role: "alert" }); }

  function dealerRows(f) {
    const rows = [];
    if (f.mode !== "sim") return rows;
    if (f.three_card_bonus && f.pai_gow == null && (f.state === "Open_Betting" || f.state === "Open_LockedOut")) rows.push(["pai-gow"]);
    if (f.state === "Open_LockedOut" && f.side_wager_offered && f.side_bets == null) rows.push(["side-wagers"]);
    if (f.state === "Open_StartingPosition_Dice" && f.shakes >= 3) rows.push(["dice"]);
    if (f.state === "Open_SideWagers" && Array.isArray(f.side_bets)) rows.push(["side-results"]);
    if (f.state === "Open_Settlement" && !f.card_reading_shoe) {
      for (const pos of Object.keys(f.wagers).sort()) if (!(pos in f.outcomes)) rows.push(["outcome", pos]);
    }
    return rows;
  }

  function renderDealer(f) {
    const box = $("dealer-entry");
    const ctl = $("dealer-controls");
    const rows = dealerRows(f);
    const sig = JSON.stringify([rows, f.state, f.round_id]);
    box.hidden = rows.length === 0;
    if (ctl.dataset.sig === sig) return;
    ctl.dataset.sig = sig;
    ctl.replaceChildren();
    for (const [kind, pos] of rows) {
      if (kind === "outcome") {
        const sel = el("select", { id: `outcome-${pos}` });
        sel.setAttribute("aria-label", `area ${pos}: progressive result`);
        sel.append(el("option", { value: "", textContent: "no win" }));
        for (const line of f.lines || []) sel.append(el("option", { value: line, textContent: lineWords(line) }));
        const b = el("button", { type: "button", textContent: `Enter area ${pos}`, id: `enter-outcome-${pos}` });
        b.addEventListener("click", () => press("outcome", { position: Number(pos), line: sel.value || null }));
        ctl.append(el("div", { className: "entry-row" }, el("span", { textContent: `Area ${pos} (wager ${money(f.wagers[pos])}):` }), sel, b));
      } else if (kind === "dice") {
        const inp = el("input", { id: "dice-total", type: "number", min: 3, max: 18, inputMode: "numeric" });
        const lab = el("label", { htmlFor: "dice-total", textContent: "Dice total (3 to 18)" });
        const b = el("button", { type: "button", textContent: "Enter the total", id: "enter-dice" });
        const go = () => {
          const v = inp.value.trim();
          const n = Number(v);
          if (!/^\d+$/.test(v) || n < 3 || n > 18) {
            tell("dice", v === "" ? "Enter the total of the three dice first." :
              `${v} is not a possible total: three dice show 3 (1+1+1) to 18 (6+6+6).`);
            return;
          }
          press("dice", { total: n });
        };
        b.addEventListener("click", go);
        inp.addEventListener("keydown", (ev) => { if (ev.key === "Enter") go(); });
        ctl.append(el("div", { className: "entry-row" }, lab, inp, b), msgBox("msg-dice"));
      } else if (kind === "side-wagers") {
        const grid = el("div", { className: "side-grid" });
        for (let a = 1; a <= 6; a++) {
          const num = el("select", { id: `side-number-${a}` });
          num.setAttribute("aria-label", `area ${a}: 1-7 side wager number`);
          num.append(el("option", { value: "", textContent: "no bet" }));
          for (let n = 1; n <= 7; n++) num.append(el("option", { value: String(n), textContent: `on ${n}` }));
          const amt = el("input", { id: `side-amount-${a}`, value: "5.00", inputMode: "decimal" });
          amt.setAttribute("aria-label", `area ${a}: side wager amount in dollars`);
          grid.append(el("div", { className: "entry-row" }, el("span", { textContent: `Area ${a}:` }), num, amt));
        }
        const enter = el("button", { type: "button", id: "enter-side-wagers", textContent: "Enter the side wagers" });
        const none = el("button", { type: "button", id: "no-side-wagers", textContent: "No 1-7 side wagers placed" });
        enter.addEventListener("click", () => {
          const bets = [];
          for (let a = 1; a <= 6; a++) {
            const n = $(`side-number-${a}`).value;
            if (!n) continue;
            const c = Math.round(Number(String($(`side-amount-${a}`).value).replace(/[$,\s]/g, "")) * 100);
            if (!Number.isFinite(c) || c <= 0) { tell("side-wagers", `Area ${a}: enter the amount in dollars, e.g. 5.00.`); return; }
            bets.push({ position: a, number: Number(n), cents: c });
          }
          if (!bets.length) { tell("side-wagers", "No bet chosen: choose a number for an area, or press \u201cNo 1-7 side wagers placed\u201d."); return; }
          press("side_wagers", { bets });
        });
        none.addEventListener("click", () => press("side_wagers", { bets: [] }));
        ctl.append(el("p", { textContent: "1-7 side wagers (closed before the starting position is drawn):" }), grid,
          el("div", { className: "row" }, enter, none), msgBox("msg-side-wagers"));
      } else if (kind === "side-results") {
        const list = el("ul", { id: "side-results" });
        // the bets recorded and the number shown: the amounts are journaled when NEXT settles
        for (const [position, number, cents] of f.side_bets) {
          const wins = Number(number) === Number(f.start_number);
          list.append(el("li", { textContent: `Area ${position} on ${number} (${money(cents)}): ` +
            (wins ? `wins: pay at ${f.side_wager_odds || "the posted odds"}` : `loses: collect ${money(cents)}`) }));
        }
        if (!f.side_bets.length) list.append(el("li", { textContent: "No 1-7 side wagers placed." }));
        ctl.append(el("p", { textContent: `1-7 side wagers on ${f.start_number}:` }), list);
      } else if (kind === "pai-gow") {
        const row = el("div", { className: "row", role: "group" });
        row.setAttribute("aria-label", "areas holding a pai gow wager");
        for (let a = 1; a <= 6; a++) {
          const c = el("input", { type: "checkbox", id: `pai-gow-${a}`, value: String(a), checked: String(a) in f.wagers });
          row.append(el("label", { className: "check" }, c, `area ${a}`));
        }
        const b = el("button", { type: "button", id: "enter-pai-gow", textContent: "Enter the pai gow positions" });
        b.addEventListener("click", () => {
          const positions = [...row.querySelectorAll("input:checked")].map((c) => Number(c.value));
          if (!positions.length) { tell("pai-gow", "Tick at least one area holding a pai gow wager."); return; }
          press("pai_gow", { positions });
        });
        ctl.append(el("p", { textContent: "Areas holding a pai gow wager (every lit area included):" }), row, b, msgBox("msg-pai-gow"));
      }
    }
  }

  // ---------------------------------------------------------------- frames and the connection
  function render() {
    if (!frame) return;
    for (const fn of renderers) {
      try { fn(frame); } catch (e) { console.error(e); }
    }
  }
  renderers.push(renderTable, renderControls, renderHands, renderSupervisor, renderDealer, renderTimeline);

  function onFrame(f) {
    frame = f;
    lastSeq = f.seq;
    if (shownFrom === null) shownFrom = f.seq;
    addEntries(f.entries || []);
    render();
  }

  function setOnline(on) {
    online = on;
    const c = $("conn");
    c.textContent = on ? "live" : "offline";
    c.className = "badge " + (on ? "on" : "off");
    $("offline").hidden = on;
    document.body.classList.toggle("offline", !on);
    for (const b of document.querySelectorAll("main button, main input, main select")) {
      if (on) { if (b.dataset.offline) { b.disabled = false; delete b.dataset.offline; } }
      else if (!b.disabled) { b.disabled = true; b.dataset.offline = "1"; }
    }
  }

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(`${proto}//${location.host}/ws?since=${lastSeq}`);
    socket.onopen = () => { retry = 500; setOnline(true); };
    socket.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.type === "entries") addEntries(msg.entries);
      else if (msg.type === "frame") onFrame(msg);
    };
    socket.onclose = () => {
      setOnline(false);
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 4000);
    };
  }

  // the HTML controls (keyboard, touch): the same presses as the drawing
  for (let i = 1; i <= 6; i++) $("do-chip-" + i).addEventListener("click", () => press("chip", { position: i }));
  $("do-lockout").addEventListener("click", () => press("lockout"));
  $("do-next").addEventListener("click", () => panel("next"));
  $("do-void").addEventListener("click", () => panel("void"));
  $("do-key").addEventListener("click", () => press("key", { on: !(frame && frame.key) }));
  $("do-shake").addEventListener("click", () => press("shake"));

  $("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const supervisor = $("sup-id").value.trim();
    const pinBox = $("sup-pin");
    if (!supervisor || !pinBox.value) { say("Enter your supervisor id and PIN.", true); return; }
    const res = await post("/api/login", { supervisor, pin: pinBox.value });
    pinBox.value = "";
    if (res.ok) { me = res.supervisor; say(`signed in as ${me}`); }
    else say(res.error, true);
    render();
  });
  $("logout-btn").addEventListener("click", async () => {
    await post("/api/logout", {});
    me = null; say("signed out"); render();
  });
  // on-demand software verification: HMAC-SHA1 keyed by the seed over every approved file,
  // journaled in the signed-in supervisor's name (docs/software-verification.md)
  $("verify-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const seed = $("verify-seed").value.trim();
    const res = await post("/api/verify-software", { seed });
    if (res.ok) say(`software digest for seed ${res.seed}: ${res.digest} (HMAC-SHA1 over the ${res.files} approved files; journaled as entry ${res.seq})`);
    else say(res.error, true);
  });
  $("config-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("config-change").value.trim();
    if (text) await act("config-change", text.split(/\s+/), "configuration change");
  });
  // settings: pit view and sound, kept in this browser
  function setPit(on) {
    document.body.classList.toggle("pit", on);
    $("pit-btn").setAttribute("aria-pressed", String(on));
    try { localStorage.setItem("pit", on ? "1" : ""); } catch (e) { /* private mode */ }
  }
  $("pit-btn").addEventListener("click", () => setPit(!document.body.classList.contains("pit")));
  $("sound-box").addEventListener("change", () => {
    try { localStorage.setItem("sound", $("sound-box").checked ? "1" : ""); } catch (e) { /* private mode */ }
  });
  try {
    setPit(localStorage.getItem("pit") === "1");
    $("sound-box").checked = localStorage.getItem("sound") === "1";
  } catch (e) { /* private mode */ }

  build();
  setOnline(false);
  $("offline").hidden = true; // not "lost" before the first try
  fetch("/api/frame", { credentials: "same-origin" }).then((r) => r.json()).then((f) => {
    me = f.me || null;
    if (f.type === "frame") onFrame(f);
    connect();
  }).catch(() => { setOnline(false); setTimeout(connect, retry); });

  return { post, press, act, tell, confirmStep, renderers, get frame() { return frame; }, get me() { return me; } };
})();
