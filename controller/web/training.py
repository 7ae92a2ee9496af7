"""The page's training routes on the simulated table (`controller.sim.training.Trainer`).

``POST /api/training`` ``{"action": "people", "people": [...]}`` chooses who is a person,
``{"action": "fault", "fault": "shoe-jam"}`` injects a fault into a simulated device now,
``{"action": "practice", "position": 3, "line": "royal-flush"}`` asks the practice deck for a
hit (``"cancel-practice"`` withdraws it); ``GET /api/drill?kind=K&number=N[&level=L]`` poses a
dealer drill and ``POST /api/drill`` ``{"kind", "number", "level", "answer", "trainee"}`` judges
the answer with the why and keeps it in the trainee's history: a ``training`` entry
(``drill_answered``) committed to the training journal before the verdict is answered;
``GET /api/training/history?trainee=NAME`` reads that history back from the journal (score,
streaks, per drill and level, the last answers).
Each POST carries the XSRF token like every other (the application's ``xsrf_cookies``). The
trainer's status rides on every frame as ``training`` (`frame_extra`), which is how the page
shows TRAINING. Only added when the table is simulated: ``tablectl run`` has no trainer.

Must never touch the round machine or the journal (the trainer posts events), never block the
loop (the trainer's calls are short; a fault injection waits at most on the simulator's queue),
and never send a card of an unresolved round (drills use their own decks).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import tornado.web
from tornado.ioloop import IOLoop

from controller.journal.reports import JournalReader, ReportError
from controller.web.routes import BaseHandler, Page, wait_receipt

TrainingError = ValueError  # controller.sim.training.TrainingError is one: the page needs no import

TRAINER_ID = "trainer"  # who the journal names for a change made at the page


class TrainingHandler(BaseHandler):
    def get(self) -> None:
        self.reply(200, {"ok": True, **_trainer(self.page).status()})

    def post(self) -> None:
        trainer = _trainer(self.page)
        data = self.body()
        action = str(data.get("action", ""))
        by = self.supervisor() or TRAINER_ID
        try:
            if action == "people":
                people = data.get("people", [])
                if not isinstance(people, list):
                    raise TrainingError("people: a list of roles")
                status = trainer.set_people([str(p) for p in people], by)
            elif action == "fault":
                status = trainer.inject_fault(str(data.get("fault", "")), by)
            elif action == "practice":
                position = data.get("position")
                if isinstance(position, str) and position.isdigit():
                    position = int(position)
                status = trainer.practice_hit(position, str(data.get("line", "")), by)
            elif action == "cancel-practice":
                status = trainer.cancel_practice()
            else:
                raise TrainingError("action: one of people, fault, practice, cancel-practice")
        except TrainingError as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        self.reply(200, {"ok": True, **status})


class DrillHandler(BaseHandler):
    def get(self) -> None:
        trainer = _trainer(self.page)
        try:
            number = int(self.get_argument("number", "0"))
            level = _level(self.get_argument("level", ""))
            posed = trainer.drills.pose(self.get_argument("kind", ""), number, level)
            self.reply(200, {"ok": True, **posed})
        except (TrainingError, ValueError) as exc:
            self.reply(400, {"ok": False, "error": str(exc)})

    async def post(self) -> None:
        trainer = _trainer(self.page)
        data = self.body()
        number = data.get("number")
        answer = data.get("answer")
        level = data.get("level")
        try:
            if isinstance(number, bool) or not isinstance(number, int):
                raise TrainingError("number: the drill's number")
            if not isinstance(answer, dict):
                raise TrainingError("answer: an object")
            if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
                raise TrainingError("level: 1, 2 or 3, or none for mixed")
            verdict = trainer.drills.judge(str(data.get("kind", "")), number, answer, level)
            record = trainer.answered(data.get("trainee"), verdict, self.supervisor() or TRAINER_ID)
        except TrainingError as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        # the trainee's history is the journal: answered only once the answer is committed
        receipt = self.page.owner.post_tracked(record.envelope())
        loop = IOLoop.current()
        committed = await loop.run_in_executor(self.page.post_pool, wait_receipt, receipt)
        if not committed or receipt.seq is None:
            error = receipt.error or "not journaled in time"
            self.reply(503, {"ok": False, "error": f"the answer was not kept: {error}"})
            return
        self.reply(200, {"ok": True, **verdict, "trainee": record.trainee, "seq": receipt.seq})


class HistoryHandler(BaseHandler):
    async def get(self) -> None:
        trainer = _trainer(self.page)
        name = self.get_argument("trainee", "")
        try:
            document = await IOLoop.current().run_in_executor(
                self.page.post_pool, _history, trainer, self.page.journal_path, name
            )
        except (TrainingError, ReportError) as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        self.reply(200, {"ok": True, **document})


def _history(trainer: Any, path: Path, name: str) -> dict[str, Any]:
    with JournalReader(path) as reader:
        return dict(trainer.history(reader.entries_of(("training",)), name))


def _level(text: str) -> int | None:
    if text in ("", "mixed"):
        return None
    if not text.isdigit():
        raise TrainingError("level: 1, 2 or 3, or mixed")
    return int(text)


def _trainer(page: Page) -> Any:
    trainer = getattr(page, "training", None)
    if trainer is None:
        raise tornado.web.HTTPError(404, reason="no training on this table")
    return trainer


def routes(page: Page) -> list[tuple[str, type[BaseHandler], dict[str, Any]]]:
    """The training routes, for `controller.web.routes.make_app` when the page has a trainer."""
    args = {"page": page}
    return [
        (r"/api/training", TrainingHandler, args),
        (r"/api/training/history", HistoryHandler, args),
        (r"/api/drill", DrillHandler, args),
    ]


FRAME_KEYS = ("training", "roles", "people", "practice", "practice_dealt")


def frame_extra(
    trainer: Any, other: Callable[[], dict[str, Any]] | None = None
) -> Callable[[], dict[str, Any]]:
    """What every frame carries for the page: ``other``'s facts and TRAINING, who is a person,
    the armed practice hit and the latest one dealt (the choices, which never change, come once
    from ``GET /api/training``)."""

    def extra() -> dict[str, Any]:
        status = trainer.status()
        base = other() if other is not None else {}
        return {**base, "training": {k: status[k] for k in FRAME_KEYS}}

    return extra
