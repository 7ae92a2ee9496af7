// Training on the simulated table (controller/web/training.py): who is a person, fault
// injection, the practice deck's "deal a hit", and the dealer drills. State comes from the
// frames' `training` (the trainer's status); every POST goes through Page.post (XSRF token).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const section = $("training");
  let filled = false;
  let drill = null;
  let choosing = false;  // the person is ticking roles: frames never undo a tick before "Set"

  function note(text, bad) {
    const p = $("training-state");
    p.textContent = text;
    p.className = bad ? "bad" : "dim";
  }

  function fill(t) {
    const kinds = $("fault-kind");
    kinds.innerHTML = "";
    for (const [kind, words] of Object.entries(t.fault_kinds)) {
      const o = document.createElement("option");
      o.value = kind; o.textContent = kind; o.title = words;
      kinds.appendChild(o);
    }
    const lines = $("practice-line");
    lines.innerHTML = "";
    for (const line of t.practice_lines) {
      const o = document.createElement("option");
      o.value = line; o.textContent = line;
      if (line === "royal-flush") o.selected = true;
      lines.appendChild(o);
    }
  }

  function render(f) {
    const t = f.training;
    $("training-badge").hidden = !t;
    section.hidden = !t;
    if (!t) return;
    if (!filled) {
      filled = true;
      fetch("/api/training", { credentials: "same-origin" }).then((r) => r.json()).then(fill)
        .catch(() => { filled = false; });
    }
    const form = $("people-form");
    if (!choosing && !form.contains(document.activeElement)) {
      for (const box of form.querySelectorAll("input[name=role]")) box.checked = t.people.includes(box.value);
    }
    const who = t.roles.map((r) => `${r}: ${t.people.includes(r) ? "person" : "scripted"}`).join(", ");
    const waiting = t.practice && t.practice.waiting ? ` (waiting: ${t.practice.waiting})` : "";
    // armed, else the latest dealt: a hit asked during betting with a wager there is dealt at
    // once, and the page still says what became of it (it never vanishes unsaid)
    const d = t.practice_dealt;
    const armed = t.practice ? `; practice hit armed: ${t.practice.line} at area ${t.practice.position}${waiting}`
      : d ? `; practice hit dealt: ${d.line} at area ${d.position} in round ${d.round}` : "";
    if (!$("training-state").classList.contains("bad")) note(who + armed);
  }
  Page.renderers.push(render);

  async function train(body) {
    const res = await Page.post("/api/training", body);
    if (!res.ok) note(res.error, true);
    else { note("done"); render({ training: res }); }  // the status answers like a frame
    return res;
  }

  $("people-form").addEventListener("change", () => { choosing = true; });
  $("people-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const people = [...ev.target.querySelectorAll("input[name=role]:checked")].map((b) => b.value);
    train({ action: "people", people }).finally(() => { choosing = false; });
  });
  $("fault-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const kind = $("fault-kind").value;
    const value = $("fault-value").value.trim();
    train({ action: "fault", fault: value ? `${kind}=${value}` : kind });
  });
  $("practice-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    train({ action: "practice", line: $("practice-line").value, position: Number($("practice-area").value) });
  });
  $("practice-cancel").addEventListener("click", () => train({ action: "cancel-practice" }));

  // ---------------------------------------------------------------- drills
  const cents = (text) => Math.round(Number(String(text).replace(/[$,\s]/g, "")) * 100);
  const money = (c) => "$" + (c / 100).toFixed(2);

  function row(parent, label, input) {
    const r = document.createElement("div");
    r.className = "row";
    const l = document.createElement("span");
    l.textContent = label;
    r.appendChild(l);
    if (input) r.appendChild(input);
    parent.appendChild(r);
    return r;
  }
  function field(name, placeholder) {
    const i = document.createElement("input");
    i.name = name; i.placeholder = placeholder; i.autocomplete = "off";
    return i;
  }

  // the trainee: name, score, streaks and the history of answers, kept in the training journal
  // (each judged answer is a training entry, drill_answered); only the name stays in this browser
  const trainee = { name: "", history: null };
  const levelWords = (lv) => (lv ? `level ${lv}` : "mixed");
  async function loadTrainee(name) {
    trainee.name = name;
    trainee.history = null;
    if (!name) { showScore(); return; }
    try {
      const r = await fetch(`/api/training/history?trainee=${encodeURIComponent(name)}`, { credentials: "same-origin" });
      const d = await r.json();
      if (name !== trainee.name) return;  // typed on meanwhile
      trainee.history = d.ok ? d : null;
      if (!d.ok) { $("drill-score").textContent = d.error; return; }
    } catch (e) { trainee.history = null; }
    showScore();
  }
  function showScore() {
    const box = $("drill-score");
    if (!box) return;
    const h = trainee.history;
    const ol = $("drill-history");
    if (!trainee.name) {
      box.textContent = "Type the trainee's name: each answer is kept in the training journal under it.";
      ol.replaceChildren();
      return;
    }
    if (!h) { box.textContent = `${trainee.name}: no history read yet`; ol.replaceChildren(); return; }
    const per = Object.entries(h.per_drill).map(([k, t]) => `${k}: ${t.right}/${t.asked}`).join("; ");
    box.textContent = `${h.trainee}: ${h.right} right of ${h.asked}` +
      ` · streak ${h.streak} (best ${h.best})` + (per ? ` · ${per}` : "") + " · kept in the training journal";
    ol.replaceChildren(...h.answers.slice(-10).reverse().map((a) => {
      const li = document.createElement("li");
      li.className = a.correct ? "good" : "bad";
      const time = new Date(a.time_ms).toLocaleTimeString("en-GB", { hour12: false });
      li.textContent = `${time} ${a.drill} (${levelWords(a.level)}) no. ${a.number}: ${a.correct ? "right" : "wrong"}`;
      return li;
    }));
  }
  (function traineeBox() {
    const form = $("drill-form");
    const label = document.createElement("label");
    label.htmlFor = "trainee-name";
    label.textContent = "Trainee";
    const input = document.createElement("input");
    input.id = "trainee-name"; input.autocomplete = "off";
    try { input.value = localStorage.getItem("trainee") || ""; } catch (e) { /* private mode */ }
    input.addEventListener("change", () => {
      try { localStorage.setItem("trainee", input.value.trim()); } catch (e) { /* private mode */ }
      loadTrainee(input.value.trim());
    });
    // Enter takes the name (it is in the drill's form: it must not pose a new drill meanwhile)
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { ev.preventDefault(); input.dispatchEvent(new Event("change")); }
    });
    form.prepend(label, input);
    const score = document.createElement("p");
    score.id = "drill-score"; score.setAttribute("role", "status");
    const hist = document.createElement("ol");
    hist.id = "drill-history"; hist.setAttribute("aria-label", "the trainee's last answers");
    $("drill-verdict").after(score, hist);
    loadTrainee(input.value.trim());
  })();

  const suitName = { s: "spades", h: "hearts", d: "diamonds", c: "clubs" };
  function cardButton(code) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "card pick" + (/[dh]$/.test(code) ? " red" : "");
    b.textContent = code.replace("T", "10");
    b.dataset.card = code;
    b.setAttribute("aria-pressed", "false");
    const rank = code === "JK" ? "joker" : code.replace("T", "10").slice(0, -1) + " of " + suitName[code.slice(-1)];
    b.setAttribute("aria-label", `${b.textContent}, ${rank}`);
    return b;
  }

  function show(d) {
    drill = d;
    const box = $("drill");
    box.innerHTML = "";
    $("drill-verdict").textContent = "";
    row(box, d.task);
    if (d.kind === "house-way") {
      row(box, `house way ${d.house_way}: click the two cards of the low hand; the other five are the high hand`).dataset.cards = d.cards;
      const hand = row(box, "");
      hand.classList.add("cards");
      const high = field("high", "high hand, e.g. As Ad 9h 7s 5c");
      const low = field("low", "low hand, e.g. Kh Kd");
      high.setAttribute("aria-label", "high hand (5 cards)");
      low.setAttribute("aria-label", "low hand (2 cards)");
      const codes = String(d.cards).split(/\s+/).filter(Boolean);
      const sync = () => {
        const picked = [...hand.querySelectorAll("button[aria-pressed=true]")].map((b) => b.dataset.card);
        low.value = picked.join(" ");
        high.value = codes.filter((c) => !picked.includes(c)).join(" ");
      };
      for (const c of codes) {
        const b = cardButton(c);
        b.addEventListener("click", () => {
          const on = b.getAttribute("aria-pressed") === "true";
          const picked = hand.querySelectorAll("button[aria-pressed=true]").length;
          if (!on && picked >= 2) { $("drill-verdict").textContent = "The low hand has two cards: click one to put it back first."; $("drill-verdict").className = "bad"; return; }
          b.setAttribute("aria-pressed", String(!on));
          sync();
        });
        hand.appendChild(b);
      }
      row(box, "high (5):", high);
      row(box, "low (2):", low);
    } else if (d.kind === "settle") {
      row(box, `dealer: ${d.dealer.high} / ${d.dealer.low}; ${d.vigorish}`);
      for (const p of d.players) {
        const sel = document.createElement("select");
        sel.name = `outcome-${p.position}`;
        sel.setAttribute("aria-label", `area ${p.position}: result against the dealer`);
        for (const o of ["win", "push", "lose"]) {
          const opt = document.createElement("option"); opt.value = o; opt.textContent = o; sel.appendChild(opt);
        }
        const r = row(box, `area ${p.position}: ${p.high} / ${p.low}, wager ${money(p.wager_cents)}`, sel);
        r.dataset.position = p.position;
        const vig = field(`vig-${p.position}`, "vigorish $");
        vig.setAttribute("aria-label", `area ${p.position}: vigorish in dollars`);
        r.appendChild(vig);
      }
    } else {
      row(box, `cards: ${d.cards}; meter ${money(d.meter_cents)}; wager ${money(d.wager_cents)}`);
      const amount = field("amount", "amount $");
      amount.setAttribute("aria-label", "amount to pay in dollars");
      row(box, "pay:", amount);
    }
    const check = document.createElement("button");
    check.type = "button"; check.id = "drill-check"; check.textContent = "Check";
    check.addEventListener("click", judge);
    box.appendChild(check);
  }

  function answer() {
    const box = $("drill");
    const val = (name) => (box.querySelector(`[name="${name}"]`) || {}).value || "";
    if (drill.kind === "house-way") return { high: val("high"), low: val("low") };
    if (drill.kind === "settle") {
      const answers = {};
      for (const p of drill.players) {
        const vig = val(`vig-${p.position}`).trim();
        answers[String(p.position)] = { outcome: val(`outcome-${p.position}`), vig_cents: vig ? cents(vig) : 0 };
      }
      return { answers };
    }
    return { amount_cents: cents(val("amount") || "0") };
  }

  async function judge() {
    if (!drill) return;
    const name = $("trainee-name").value.trim();
    const res = await Page.post("/api/drill", { kind: drill.kind, number: drill.number, level: drill.level, answer: answer(), trainee: name });
    const p = $("drill-verdict");
    if (!res.ok) { p.textContent = res.error; p.className = "bad"; return; }
    // the verdict per area: each row marked right or wrong with the why
    for (const s of res.seats || []) {
      const r = $("drill").querySelector(`.row[data-position="${s.position}"]`);
      if (!r) continue;
      let v = r.querySelector(".verdict");
      if (!v) { v = document.createElement("span"); v.className = "verdict"; r.appendChild(v); }
      v.textContent = (s.correct ? "right: " : "wrong: ") + s.explanation;
      v.className = "verdict " + (s.correct ? "good" : "bad");
    }
    const lines = res.seats ? res.seats.map((s) => `area ${s.position}: ${s.explanation}`) : [res.explanation];
    p.textContent = (res.correct ? "Correct. " : "Not right. ") + lines.join(" | ");
    p.className = res.correct ? "good" : "bad";
    loadTrainee(res.trainee);  // the history as the journal now holds it
  }

  $("drill-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const number = Math.floor(Math.random() * 1000000);
    const level = $("drill-level").value;
    const r = await fetch(`/api/drill?kind=${encodeURIComponent($("drill-kind").value)}&number=${number}&level=${level}`, { credentials: "same-origin" });
    const d = await r.json();
    if (!d.ok) { $("drill-verdict").textContent = d.error; return; }
    show(d);
  });
})();
