"""The page's training routes on the simulated table (`controller.sim.training.Trainer`).

``POST /api/training`` ``{"action": "people", "people": [...]}`` chooses who is a person,
``{"action": "fault", "fault": "shoe-jam"}`` injects a fault into a simulated device now,
``{"action": "practice", "position": 3, "line": "royal-flush"}`` asks the practice deck for a
hit (``"cancel-practice"`` withdraws it); ``GET /api/drill?kind=K&number=N`` poses a dealer
drill and ``POST /api/drill`` ``{"kind", "number", "answer"}`` judges the answer with the why.
Each POST carries the XSRF token like every other (the application's ``xsrf_cookies``). The
trainer's status rides on every frame as ``training`` (`frame_extra`), which is how the page
shows TRAINING. Only added when the table is simulated: ``tablectl run`` has no trainer.

Must never touch the round machine or the journal (the trainer posts events), never block the
loop (the trainer's calls are short; a fault injection waits at most on the simulator's queue),
and never send a card of an unresolved round (drills use their own decks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tornado.web

from controller.web.routes import BaseHandler, Page

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
            self.reply(
                200, {"ok": True, **trainer.drills.pose(self.get_argument("kind", ""), number)}
            )
        except (TrainingError, ValueError) as exc:
            self.reply(400, {"ok": False, "error": str(exc)})

    def post(self) -> None:
        trainer = _trainer(self.page)
        data = self.body()
        number = data.get("number")
        answer = data.get("answer")
        try:
            if isinstance(number, bool) or not isinstance(number, int):
                raise TrainingError("number: the drill's number")
            if not isinstance(answer, dict):
                raise TrainingError("answer: an object")
            verdict = trainer.drills.judge(str(data.get("kind", "")), number, answer)
        except TrainingError as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        self.reply(200, {"ok": True, **verdict})


def _trainer(page: Page) -> Any:
    trainer = getattr(page, "training", None)
    if trainer is None:
        raise tornado.web.HTTPError(404, reason="no training on this table")
    return trainer


def routes(page: Page) -> list[tuple[str, type[BaseHandler], dict[str, Any]]]:
    """The training routes, for `controller.web.routes.make_app` when the page has a trainer."""
    args = {"page": page}
    return [(r"/api/training", TrainingHandler, args), (r"/api/drill", DrillHandler, args)]


FRAME_KEYS = ("training", "roles", "people", "practice")


def frame_extra(
    trainer: Any, other: Callable[[], dict[str, Any]] | None = None
) -> Callable[[], dict[str, Any]]:
    """What every frame carries for the page: ``other``'s facts and TRAINING, who is a person,
    the armed practice hit (the choices, which never change, come once from ``GET
    /api/training``)."""

    def extra() -> dict[str, Any]:
        status = trainer.status()
        base = other() if other is not None else {}
        return {**base, "training": {k: status[k] for k in FRAME_KEYS}}

    return extra
