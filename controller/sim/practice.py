"""The practice deck of the simulated table: a progressive hit dealt on demand for training.

A trainer asks for a line (``royal-flush``) at a betting area; the next time the simulated shoe
dispenses for a round in which that area holds a progressive wager, `PracticeShoe` moves that
line's seven practice cards (`fsm.rules.drills`) into the stack the area receives — found from
the round's committed ``starting_position`` and ``wagers`` effects (the journal is committed
before the dispense is sent, so they are always there) — and posts a ``training`` event
(``practice_deal``) before its answer, so the journal says which deal was arranged. A request
armed after "no more bets" of a round with no wager at that area is kept for the next round (the
scripted player places the wager; the status says why it waits: `PracticeDeck.waiting`), and a
request dealt to a round that was then voided is armed again: a hit is never spent on a deal
that cannot pay it. Deterministic: the shuffled order and the request decide the cards; the other
stacks keep their cards except those swapped out. With a card-reading shoe the round machine
finds the hit from the hands itself; without one the scripted dealer enters the line
(`line_for`).

Simulation only: must never be used by ``tablectl run``, never decide a game rule (the round
machine settles the practice hand like any other) and never write the journal (it reads it).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.audit import connect_read_only
from controller.journal.format import JournalError
from drivers.serial import protocol
from drivers.sim.shoe_sim import ShoeSim
from fsm.round.constants import AREAS
from fsm.round.events import Event, Training
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
        self._waiting: str | None = None  # why the armed request was not dealt yet
        self._dealt: dict[int, PracticeRequest] = {}  # round id -> what was arranged
        self._settled: set[int] = set()  # dealt rounds known to have been played (not voided)

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
            self._waiting = None
        return req

    def cancel(self) -> None:
        with self._lock:
            self._armed = None
            self._waiting = None

    @property
    def armed(self) -> PracticeRequest | None:
        with self._lock:
            return self._armed

    def wanted_position(self) -> int | None:
        """The area whose scripted player places the progressive wager for the practice hit."""
        armed = self.armed
        return None if armed is None else armed.position

    @property
    def waiting(self) -> str | None:
        """Why the armed request has not been dealt yet (None: nothing armed, or no deal since)."""
        with self._lock:
            return self._waiting if self._armed is not None else None

    def take(self, round_id: int, wagered: Collection[int] | None = None) -> PracticeRequest | None:
        """The armed request, now dealt to ``round_id`` — only when its area holds a progressive
        wager in that round (``wagered``; None: not checked): otherwise it stays armed for the
        next round and `waiting` says why. Atomic: a request armed again meanwhile is judged
        as it is now, never the one read before."""
        with self._lock:
            req = self._armed
            if req is None:
                return None
            if wagered is not None and req.position not in wagered:
                self._waiting = (
                    f"round {round_id} was dealt with no progressive wager at area "
                    f"{req.position} (asked after no more bets, or nobody bet there): the hit "
                    "waits for the next round with that wager"
                )
                return None
            self._armed, self._waiting = None, None
            self._dealt[round_id] = req
            return req

    def give_back(self, round_id: int, req: PracticeRequest, why: str) -> None:
        """``req`` was taken for ``round_id`` but not dealt: armed again (unless the trainer armed
        another meanwhile), ``why`` shown as its `waiting`."""
        with self._lock:
            if self._dealt.get(round_id) is req:
                del self._dealt[round_id]
            if self._armed is None:
                self._armed, self._waiting = req, why

    @property
    def unsettled(self) -> bool:
        """A practice deal whose round is not yet known to have been played or voided."""
        with self._lock:
            return any(r not in self._settled for r in self._dealt)

    def rearm_if_voided(self, round_id: int, voided: Callable[[int], bool | None]) -> bool:
        """Arm again the request dealt to an earlier round that ``voided(round)`` says was voided
        (None: not known yet) — unless the trainer armed another since; whether it did. Each
        dealt round is judged once it is known."""
        with self._lock:
            pending = [r for r in self._dealt if r < round_id and r not in self._settled]
        for rid in sorted(pending):
            verdict = voided(rid)
            if verdict is None:
                continue
            with self._lock:
                self._settled.add(rid)
                if verdict and self._armed is None:
                    self._armed = self._dealt[rid]
                    self._waiting = (
                        f"round {rid} was voided before its practice hit was played: armed again"
                    )
                    return True
        return False

    def line_for(self, round_id: int, position: int) -> str | None:
        """The practice line dealt to ``position`` in ``round_id`` (for a shoe that does not read
        cards: the dealer enters it), or None."""
        with self._lock:
            req = self._dealt.get(round_id)
        return req.line if req is not None and req.position == position else None

    def dealt(self) -> dict[int, PracticeRequest]:
        with self._lock:
            return dict(self._dealt)


@dataclass(frozen=True)
class RoundDeal:
    """What the journal says of the round being dealt: its id, the seats in the order the
    stacks reach them and the areas holding a progressive wager."""

    round_id: int
    order: list[int]
    wagered: frozenset[int]


def _read_only_rows(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[Any] | None:
    """The rows of one query on the live journal, opened read-only; None when it cannot be read
    (the dispense then goes on without the practice hand). The journal's one read-only opener."""
    try:
        conn = connect_read_only(db)
    except (JournalError, sqlite3.Error):
        return None
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def round_deal(db: Path) -> RoundDeal | None:
    """The journal's latest round as the dispense finds it (read-only): the last committed
    ``starting_position`` and ``wagers`` effects; None without a starting position."""
    rows = _read_only_rows(
        db,
        "SELECT round_id, data FROM journal WHERE round_id = "
        "(SELECT MAX(round_id) FROM journal) ORDER BY seq DESC LIMIT 400",
    )
    if rows is None:
        return None
    found: tuple[int, list[int]] | None = None
    wagered: frozenset[int] | None = None
    for round_id, text in rows:
        with contextlib.suppress(ValueError, TypeError, KeyError):
            for effect in reversed(json.loads(text).get("effects", ())):
                kind = effect.get("type")
                if kind == "starting_position" and found is None:
                    found = int(round_id), [int(s) for s in effect["order"]]
                elif kind == "wagers" and wagered is None:
                    wagered = frozenset(int(p) for p in effect["positions"])
        if found is not None and wagered is not None:
            break
    if found is None:
        return None
    return RoundDeal(found[0], found[1], wagered or frozenset())


def round_voided(db: Path, round_id: int) -> bool | None:
    """Whether ``round_id`` ended voided (its ``round_summary``), None while it has not ended or
    the journal cannot be read (read-only)."""
    rows = _read_only_rows(
        db,
        "SELECT data FROM journal WHERE round_id = ? AND data LIKE '%round_summary%' ORDER BY seq",
        (round_id,),
    )
    for (text,) in rows or ():
        with contextlib.suppress(ValueError, TypeError):
            for effect in json.loads(text).get("effects", ()):
                if effect.get("type") == "round_summary":
                    return bool(effect.get("outcome") == "voided")
    return None


class PracticeShoe(ShoeSim):
    """The simulated shoe with the practice deck: before a dispense it arranges the armed
    practice hand into the stack of the requested area (``deck`` must offer ``rearrange``,
    `controller.sim.simulated_table.PersistentDeck`)."""

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
        if msg_type == protocol.DISPENSE_REQ and (self.practice.armed or self.practice.unsettled):
            with contextlib.suppress(protocol.ProtocolError):
                _, stacks, cards = protocol.decode_dispense_req(payload)
                self._arrange(stacks, cards)
        return super().handle(msg_type, payload)

    def _arrange(self, stacks: int, cards: int) -> None:
        if self.jam or self.misdeal or cards not in (3, 7):
            return  # a jammed shoe deals nothing; the fours of the three-card bonus: done before
        found = round_deal(self._db)
        if found is None:
            return
        round_id, order = found.round_id, found.order
        # a practice deal whose round was voided (a fault in the deal) never paid: armed again
        self.practice.rearm_if_voided(round_id, lambda rid: round_voided(self._db, rid))
        armed = self.practice.armed
        if armed is None or armed.position not in order or len(order) != stacks:
            return
        rearrange = getattr(self.deck, "rearrange", None)
        if rearrange is None:  # a plain SimDeck: no practice deck
            return
        # no progressive wager at the area in this round (asked after no more bets): kept
        req = self.practice.take(round_id, found.wagered.intersection(order))
        if req is None:
            return
        sizes = (7,) if cards == 7 else (3, 4)
        slots = stack_slots(order.index(req.position), stacks, sizes)
        hand = practice_hand(req.line)
        try:
            rearrange(lambda deck: arrange(deck, slots, hand))
        except (CardError, ValueError) as exc:  # a short deck (a wrong count): not this round
            self.practice.give_back(round_id, req, f"round {round_id} could not be arranged: {exc}")
            return
        self.arranged.append((round_id, req))
        dealt = Training(action="practice_deal", position=req.position, line=req.line, by=req.by)
        self._post(dealt.envelope())
