// The games manager's views (controller/web/manager.py): the shift summary, the hit history and
// the meter chart, each from GET /api/report (the folds of `tablectl report`), printable (the
// print stylesheet keeps only the report) and downloadable as CSV.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const money = (c) => (c < 0 ? "-" : "") + "$" + (Math.abs(Number(c) || 0) / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const when = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "");
  const words = (l) => String(l || "").replace(/[-_]/g, " ");

  function table(caption, head, rows) {
    const t = document.createElement("table");
    const cap = document.createElement("caption");
    cap.textContent = caption;
    t.appendChild(cap);
    const tr = document.createElement("tr");
    for (const h of head) { const th = document.createElement("th"); th.scope = "col"; th.textContent = h; tr.appendChild(th); }
    t.appendChild(tr);
    for (const r of rows) {
      const row = document.createElement("tr");
      for (const v of r) { const td = document.createElement("td"); td.textContent = v; row.appendChild(td); }
      t.appendChild(row);
    }
    return t;
  }

  function shift(d) {
    const box = [];
    const p = document.createElement("p");
    p.textContent = `Table ${d.table}${d.training ? " (TRAINING journal)" : ""}: ${d.rounds} rounds completed, ` +
      `${d.voided_rounds} voided, ${d.faults} faults, ${(d.hits || []).length} hits paid; ` +
      `from ${when(d.first_entry)} to ${when(d.last_entry)}.`;
    box.push(p);
    box.push(table("Progressive, per level", ["level", "wagers", "wagered", "contributed", "paid from the meter", "meter at start", "meter at end", "adjustments", "house funded"],
      [...(d.levels || []), { level: "total", ...(d.progressive || {}) }].map((l) => [l.level, l.wagers ?? "", money(l.wagered_cents), money(l.contributed_cents),
        money(l.paid_from_meter_cents), money(l.meter_start_cents), money(l.meter_end_cents), money(l.adjustments_cents), money(l.house_funded_cents)])));
    if ((d.problems || []).length) {
      const bad = document.createElement("p"); bad.className = "bad";
      bad.textContent = "Does not reconcile: " + d.problems.join("; ");
      box.push(bad);
    }
    return box;
  }

  function hits(d) {
    const list = d.hits || [];
    return [table(`${list.length} hits paid${d.training ? " (TRAINING journal)" : ""}`, ["time", "round", "area", "line", "amount", "paid from", "validated by"],
      list.slice().reverse().map((h) => [when(h.time), h.round, h.position, words(h.line), money(h.cents),
        h.from === "meter" ? "the meter" : "the chip tray", h.validated_by || "no validation (fixed amount)"]))];
  }

  function meters(d) {
    const pts = d.meters || [];
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 600 240");
    svg.setAttribute("role", "img");
    svg.id = "meter-chart";
    const levels = [...new Set(pts.map((p) => p.level))];
    const values = pts.map((p) => p.display_after_cents);
    const lo = Math.min(...values, ...pts.map((p) => p.display_before_cents));
    const hi = Math.max(...values, ...pts.map((p) => p.display_before_cents));
    const span = Math.max(1, hi - lo);
    const first = pts.length ? pts[0] : null;
    const last = pts.length ? pts[pts.length - 1] : null;
    svg.setAttribute("aria-label", pts.length ? `meter after each of the last ${pts.length} rounds, from ${money(first.display_before_cents)} to ${money(last.display_after_cents)}; lowest ${money(lo)}, highest ${money(hi)}` : "no round yet");
    const colours = ["#f0cc5a", "#8fe39a", "#9ecbff"];
    levels.forEach((level, li) => {
      const mine = pts.filter((p) => p.level === level);
      const vals = mine.length ? [mine[0].display_before_cents, ...mine.map((p) => p.display_after_cents)] : [];
      const n = Math.max(1, vals.length - 1);
      const line = vals.map((v, i) => `${20 + (560 * i) / n},${220 - (200 * (v - lo)) / span}`).join(" ");
      const pl = document.createElementNS(NS, "polyline");
      pl.setAttribute("points", line);
      pl.setAttribute("fill", "none");
      pl.setAttribute("stroke", colours[li % colours.length]);
      pl.setAttribute("stroke-width", "3");
      svg.appendChild(pl);
    });
    const p = document.createElement("p");
    p.textContent = pts.length ? `${levels.join(", ")}: ${money(first.display_before_cents)} before round ${first.round}, ${money(last.display_after_cents)} after round ${last.round} (lowest ${money(lo)}, highest ${money(hi)}).` : "No round resolved yet.";
    return [svg, p];
  }

  async function show(kind) {
    const box = $("report");
    box.replaceChildren(document.createTextNode("reading the journal…"));
    $("report-csv").href = `/api/report?kind=${kind}&format=csv`;
    let d;
    try {
      d = await (await fetch(`/api/report?kind=${kind}`, { credentials: "same-origin" })).json();
    } catch (e) { d = { ok: false, error: "no connection to the table" }; }
    if (!d.ok) { box.replaceChildren(Object.assign(document.createElement("p"), { className: "bad", textContent: d.error })); return; }
    box.dataset.kind = kind;
    box.replaceChildren(...(kind === "shift" ? shift(d) : kind === "hits" ? hits(d) : meters(d)));
  }

  for (const b of document.querySelectorAll("#manager button[data-kind]")) b.addEventListener("click", () => show(b.dataset.kind));
  $("report-print").addEventListener("click", () => {
    document.body.classList.add("printing-report");
    window.print();
  });
  window.addEventListener("afterprint", () => document.body.classList.remove("printing-report"));
})();
