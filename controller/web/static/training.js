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
    const armed = t.practice ? `; practice hit armed: ${t.practice.line} at area ${t.practice.position}${waiting}` : "";
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

  function show(d) {
    drill = d;
    const box = $("drill");
    box.innerHTML = "";
    $("drill-verdict").textContent = "";
    row(box, d.task);
    if (d.kind === "house-way") {
      row(box, `cards: ${d.cards} (house way ${d.house_way})`).dataset.cards = d.cards;
      row(box, "high (5):", field("high", "e.g. As Ad 9h 7s 5c"));
      row(box, "low (2):", field("low", "e.g. Kh Kd"));
    } else if (d.kind === "settle") {
      row(box, `dealer: ${d.dealer.high} / ${d.dealer.low}; ${d.vigorish}`);
      for (const p of d.players) {
        const sel = document.createElement("select");
        sel.name = `outcome-${p.position}`;
        for (const o of ["win", "push", "lose"]) {
          const opt = document.createElement("option"); opt.value = o; opt.textContent = o; sel.appendChild(opt);
        }
        const r = row(box, `area ${p.position}: ${p.high} / ${p.low}, wager ${money(p.wager_cents)}`, sel);
        r.appendChild(field(`vig-${p.position}`, "vigorish $"));
      }
    } else {
      row(box, `cards: ${d.cards}; meter ${money(d.meter_cents)}; wager ${money(d.wager_cents)}`);
      row(box, "pay:", field("amount", "amount $"));
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
    const res = await Page.post("/api/drill", { kind: drill.kind, number: drill.number, answer: answer() });
    const p = $("drill-verdict");
    if (!res.ok) { p.textContent = res.error; p.className = "bad"; return; }
    const lines = res.seats ? res.seats.map((s) => `area ${s.position}: ${s.explanation}`) : [res.explanation];
    p.textContent = (res.correct ? "Correct. " : "Not right. ") + lines.join(" | ");
    p.className = res.correct ? "good" : "bad";
  }

  $("drill-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const number = Math.floor(Math.random() * 1000000);
    const r = await fetch(`/api/drill?kind=${encodeURIComponent($("drill-kind").value)}&number=${number}`, { credentials: "same-origin" });
    const d = await r.json();
    if (!d.ok) { $("drill-verdict").textContent = d.error; return; }
    show(d);
  });
})();
