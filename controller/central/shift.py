"""The floor page's shift and trends: the figures of ``tablectl central report shift``
(`controller.link.central.floor_shift`, the same folds over the same stored entries) per table,
summed per section and for the floor, for a window and for each of the last days; and the CSV
export of them.

Responsible for arranging the command line's figures by the floor's sections; never for
computing a figure of its own (the per-section sums add the per-table figures the fold gave).
Must never write to PostgreSQL or use floats for money.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from controller.central.floor_config import UNASSIGNED, FloorConfig
from controller.link.central import floor_shift

#: The progressive figures shown and charted, in order (the fold's keys, integer cents).
FIGURES = (
    ("wagered_cents", "drop of progressive wagers"),
    ("contributed_cents", "contributions"),
    ("paid_from_meter_cents", "hits paid from the meter"),
    ("house_funded_cents", "house-funded"),
    ("adjustments_cents", "adjustments"),
)
DAY_MS = 86_400_000
HOUR_MS = 3_600_000


def _figures(progressive: dict[str, Any]) -> dict[str, int]:
    return {k: int(progressive.get(k, 0) or 0) for k, _ in FIGURES if k in progressive} | {
        "wagers": int(progressive.get("wagers", 0) or 0)
    }


def shift_view(conn: Any, cfg: FloorConfig, start: int | None, end: int | None) -> dict[str, Any]:
    """Per table (rounds, hits, the progressive figures), per section and the floor's total
    (the command line's own total)."""
    doc = floor_shift(conn, start, end)
    keys = [k for k, _ in FIGURES if k in doc["total"]["progressive"]]
    tables = []
    sections: dict[str, dict[str, Any]] = {}
    for t in doc["tables"]:
        tid = str(t["table"])
        s = cfg.section_of(tid)
        name = UNASSIGNED if s is None else s.name
        row: dict[str, Any] = {
            "table": tid, "section": name, "rounds": int(t["rounds"]),
            "voided_rounds": int(t["voided_rounds"]), "faults": int(t["faults"]),
            "hits": len(t["hits"]), **_figures(t["progressive"]),
            "problems": list(t["problems"]),
        }  # fmt: skip
        tables.append(row)
        into = sections.setdefault(
            name, {"section": name, "rounds": 0, "hits": 0, "wagers": 0, **dict.fromkeys(keys, 0)}
        )
        for k in ("rounds", "hits", "wagers", *keys):
            into[k] += int(row.get(k, 0))
    order = [s.name for s in cfg.sections] + [UNASSIGNED]
    total = doc["total"]
    return {
        "from": start,
        "to": end,
        "figures": [{"key": k, "words": w} for k, w in FIGURES if k in keys],
        "tables": tables,
        "sections": [sections[n] for n in order if n in sections],
        "total": {
            "rounds": int(total["rounds"]),
            "hits": int(total["hits"]),
            **_figures(total["progressive"]),
        },
        "refused": doc["refused"],
    }


def trends_view(
    conn: Any, cfg: FloorConfig, now_ms: int, count: int, step_ms: int = DAY_MS
) -> dict[str, Any]:
    """The last ``count`` whole steps (UTC days, or hours with ``step_ms`` = `HOUR_MS`; the
    current one so far last): each step's shift per section and for the floor."""
    current = now_ms - now_ms % step_ms
    out = []
    figures: list[dict[str, str]] = []
    for i in range(count - 1, -1, -1):
        start = current - i * step_ms
        view = shift_view(conn, cfg, start, start + step_ms)
        figures = view["figures"]
        out.append({"from": start, "sections": view["sections"], "total": view["total"]})
    return {"steps": out, "figures": figures, "step_ms": step_ms}


def shift_csv(view: dict[str, Any]) -> str:
    """The shift as CSV: one row per table, then one per section, then the floor (cents)."""
    keys = [f["key"] for f in view["figures"]]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["row", "name", "section", "rounds", "hits", "wagers", *keys])
    for t in view["tables"]:
        w.writerow(
            ["table", t["table"], t["section"], t["rounds"], t["hits"], t["wagers"]]
            + [t.get(k, 0) for k in keys]
        )
    for s in view["sections"]:
        w.writerow(
            ["section", s["section"], s["section"], s["rounds"], s["hits"], s["wagers"]]
            + [s.get(k, 0) for k in keys]
        )
    tot = view["total"]
    w.writerow(
        ["floor", "floor", "", tot["rounds"], tot["hits"], tot["wagers"]]
        + [tot.get(k, 0) for k in keys]
    )
    return buf.getvalue()
