"""The games manager's views on the page: the shift summary, the hit history and the meter's
history, as JSON for the page and as CSV to download, from the same folds as ``tablectl report``
(`controller.journal.reports`: `shift_report`, `hits_report`) over a read-only journal reader.

``GET /api/report?kind=shift|hits|meters[&format=csv][&from=..&to=..]``: ``shift`` the shift's
rounds, voids, faults, hits and the progressive reconciliation per level; ``hits`` every hit paid
(line, amount, from the meter or the chip tray, who validated); ``meters`` each completed or
voided round's meters before and after (the journaled ``round_summary`` effects, the same records
the reports read), for the chart. A training journal says so (``training``). Must never write
the journal and never block the page's loop (the folds run on an executor).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import tornado.web
from tornado.ioloop import IOLoop

from controller.journal import reports
from controller.journal.reports import JournalReader, ReportError, parse_time
from controller.web.routes import BaseHandler, Page
from fsm.round.effects import RoundSummary

KINDS = ("shift", "hits", "meters")
#: The most rounds the meter chart is given (the newest).
CHART_ROUNDS = 500


def meter_history(
    reader: JournalReader, start: int | None, end: int | None
) -> list[dict[str, Any]]:
    """Each resolved round's meters, before and after, per level (newest last)."""
    points: list[dict[str, Any]] = []
    for entry in reader.entries():
        if (start is not None and entry.ts_ms < start) or (end is not None and entry.ts_ms >= end):
            continue
        for effect in reports.effects_of(entry):
            if not isinstance(effect, RoundSummary):
                continue
            for m in effect.meters:
                points.append(
                    {
                        "time": entry.ts_ms,
                        "round": effect.round_id,
                        "outcome": effect.outcome,
                        "level": m.level,
                        "display_before_cents": m.display_before_cents,
                        "display_after_cents": m.display_after_cents,
                    }
                )
    return points[-CHART_ROUNDS:]


def build(path: Path, kind: str, start: int | None, end: int | None) -> dict[str, Any]:
    with JournalReader(path) as reader:
        document: dict[str, Any]
        if kind == "shift":
            document = dict(reports.shift_report(reader, start, end))
        elif kind == "hits":
            document = {"hits": reports.hits_report(reader, start, end, limit=0)}
        else:
            document = {"meters": meter_history(reader, start, end)}
        document["kind"] = kind
        document["training"] = reader.training
        return document


def as_csv(document: dict[str, Any]) -> str:
    """One table per kind: the shift's levels (and its total), the hits, the meter points."""
    out = io.StringIO()
    kind = document["kind"]
    if kind == "shift":
        rows: list[dict[str, Any]] = list(document.get("levels") or [])
        total = document.get("progressive")
        if isinstance(total, dict):
            rows.append({"level": "total", **total})
        for key in ("rounds", "voided_rounds", "faults"):
            rows.append({"level": key.replace("_", " "), "wagers": document.get(key)})
    elif kind == "hits":
        rows = list(document.get("hits") or [])
    else:
        rows = list(document.get("meters") or [])
    fields: list[str] = []
    for row in rows:
        fields.extend(k for k in row if k not in fields)
    writer = csv.DictWriter(out, fieldnames=fields or ["none"], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


class ReportHandler(BaseHandler):
    async def get(self) -> None:
        kind = self.get_argument("kind", "shift")
        if kind not in KINDS:
            self.reply(400, {"ok": False, "error": f"kind: one of {', '.join(KINDS)}"})
            return
        try:
            start = _time(self.get_argument("from", ""), "from")
            end = _time(self.get_argument("to", ""), "to")
        except ValueError as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        try:
            document = await IOLoop.current().run_in_executor(
                self.page.post_pool, build, self.page.journal_path, kind, start, end
            )
        except ReportError as exc:
            self.reply(500, {"ok": False, "error": str(exc)})
            return
        if self.get_argument("format", "json") == "csv":
            self.set_header("Content-Type", "text/csv; charset=utf-8")
            name = f"{kind}{'-training' if document['training'] else ''}.csv"
            self.set_header("Content-Disposition", f'attachment; filename="{name}"')
            self.finish(as_csv(document))
            return
        self.reply(200, {"ok": True, **reports.as_json(document)})


def _time(text: str, what: str) -> int | None:
    return None if not text else parse_time(text, what)


def routes(page: Page) -> list[tuple[str, type[tornado.web.RequestHandler], dict[str, Any]]]:
    return [(r"/api/report", ReportHandler, {"page": page})]
