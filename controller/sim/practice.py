"""The practice deck of the simulated table: a progressive hit dealt on demand for training.

A trainer asks for a line (``royal-flush``) at a betting area; the next time the simulated shoe
dispenses, `PracticeShoe` moves that line's seven practice cards (`fsm.rules.drills`) into the
stack the area receives — found from the round's committed ``starting_position`` effect (the
journal is committed before the dispense is sent, so it is always there) — and posts a
``training`` event (``practice_deal``) before its answer, so the journal says which deal was
arranged. Deterministic: the shuffled order and the request decide the cards; the other stacks
keep their cards except those swapped out. With a card-reading shoe the round machine finds the
hit from the hands itself; without one the scripted dealer enters the line (`line_for`).

Simulation only: must never be used by ``tablectl run``, never decide a game rule (the round
machine settles the practice hand like any other) and never write the journal (it reads it).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drivers.serial import protocol
from drivers.sim.shoe_sim import ShoeSim
from fsm.round.constants import AREAS
from fsm.round.events import Event
from fsm.rules.cards import CardError
from fsm.rules.drills import PRACTICE_HANDS, arrange, practice_hand, stack_slots

Post = Callable[[Event], None]


@dataclass(frozen=True)
class PracticeRequest:
    position: int
    line: str
    by: str = "trainer"


class PracticeDeck:
    """The trainer's request for a practice hit and the deals it arranged (thread-safe: asked
    from the page or console, consumed on the shoe's thread, read by the director)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._lock = threading.Lock()
        self._lines = tuple(line for line in lines if line in PRACTICE_HANDS)
        self._armed: PracticeRequest | None = None
        self._dealt: dict[int, PracticeRequest] = {}  # round id -> what was arranged

    @property
    def lines(self) -> tuple[str, ...]:
        return self._lines

    def request(self, position: int, line: str, by: str = "trainer") -> PracticeRequest:
        """Arm the next deal; ValueError naming what is wrong."""
        if isinstance(position, bool) or not isinstance(position, int):
            raise ValueError(f"position: a betting area 1..{AREAS}, not {position!r}")
        if not 1 <= position <= AREAS:
            raise ValueError(f"position: a betting area 1..{AREAS}, not {position}")
        if line not in self._lines:
            raise ValueError(
                f"line: {line!r} is not a line of the pay table ({', '.join(self._lines)})"
            )
        req = PracticeRequest(position, line, by)
        with self._lock:
            self._armed = req
        return req

    def cancel(self) -> None:
        with self._lock:
            self._armed = None

    @property
    def armed(self) -> PracticeRequest | None:
        with self._lock:
            return self._armed

    def wanted_position(self) -> int | None:
        """The area whose scripted player places the progressive wager for the practice hit."""
        armed = self.armed
        return None if armed is None else armed.position

    def take(self, round_id: int) -> PracticeRequest | None:
        with self._lock:
            req, self._armed = self._armed, None
            if req is not None:
                self._dealt[round_id] = req
            return req

    def line_for(self, round_id: int, position: int) -> str | None:
        """The practice line dealt to ``position`` in ``round_id`` (for a shoe that does not read
        cards: the dealer enters it), or None."""
        with self._lock:
            req = self._dealt.get(round_id)
        return req.line if req is not None and req.position == position else None

    def dealt(self) -> dict[int, PracticeRequest]:
        with self._lock:
            return dict(self._dealt)


def round_order(db: Path) -> tuple[int, list[int]] | None:
    """The round id and the seats in the order the stacks reach them, from the last committed
    ``starting_position`` effect of the journal's latest round (read-only), or None."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return None
    try:
        rows = conn.execute(
            "SELECT round_id, data FROM journal WHERE round_id = "
            "(SELECT MAX(round_id) FROM journal) ORDER BY seq DESC LIMIT 200"
        ).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    for round_id, text in rows:
        with contextlib.suppress(ValueError, TypeError):
            for effect in json.loads(text).get("effects", ()):
                if effect.get("type") == "starting_position":
                    return int(round_id), [int(s) for s in effect["order"]]
    return None


class PracticeShoe(ShoeSim):
    """The simulated shoe with the practice deck: before a dispense it arranges the armed
    practice hand into the stack of the requested area (``deck`` must offer ``rearrange``,
    `controller.sim.table.PersistentDeck`)."""

    def __init__(
        self,
        deck: Any,
        practice: PracticeDeck,
        db: Path,
        post: Post,
        card_reading: bool = True,
    ) -> None:
        super().__init__(deck, card_reading=card_reading)
        self.practice = practice
        self._db = db
        self._post = post
        self.arranged: list[tuple[int, PracticeRequest]] = []

    def handle(self, msg_type: int, payload: bytes) -> list[tuple[int, bytes]]:
        if msg_type == protocol.DISPENSE_REQ and self.practice.armed is not None:
            with contextlib.suppress(protocol.ProtocolError):
                _, stacks, cards = protocol.decode_dispense_req(payload)
                self._arrange(stacks, cards)
        return super().handle(msg_type, payload)

    def _arrange(self, stacks: int, cards: int) -> None:
        if self.jam or self.misdeal or cards not in (3, 7):
            return  # a jammed shoe deals nothing; the fours of the three-card bonus: done before
        found = round_order(self._db)
        if found is None:
            return
        round_id, order = found
        armed = self.practice.armed
        if armed is None or armed.position not in order or len(order) != stacks:
            return
        rearrange = getattr(self.deck, "rearrange", None)
        if rearrange is None:  # a plain SimDeck: no practice deck
            return
        req = self.practice.take(round_id)
        if req is None:
            return
        sizes = (7,) if cards == 7 else (3, 4)
        slots = stack_slots(order.index(req.position), stacks, sizes)
        hand = practice_hand(req.line)
        try:
            rearrange(lambda deck: arrange(deck, slots, hand))
        except (CardError, ValueError):  # a short deck (a wrong count): no practice deal
            return
        self.arranged.append((round_id, req))
        self._post(
            Event(
                "training",
                {
                    "action": "practice_deal",
                    "position": req.position,
                    "line": req.line,
                    "by": req.by,
                },
            )
        )
