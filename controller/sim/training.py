"""Training on the simulated table: the one API the page and the console call at run time.

`Trainer` chooses who is a person (`controller.sim.actors.People`), injects a fault into a
simulated device now (`controller.sim.faults.parse_fault_now`, `PtyFaults.inject_now`), asks the
practice deck for a progressive hit (`controller.sim.practice.PracticeDeck`) and journals each
as a ``training`` event on the owner's queue (the same path as any input). `Drills` poses the
dealer drills of `fsm.rules.drills` — set the dealer's hand by the house way, settle a round, pay
a progressive line — and judges an answer; a drill is named by its kind and number, its cards
come from a deck shuffled with ``random.Random`` seeded by them, so the page needs no session
state and the same number always poses the same drill. Every answer is JSON-ready (``to_json``
dicts, money in cents).

Simulation only: must never be wired into ``tablectl run``, never decide a game rule (drills
ask fsm.rules) and never write the journal (events are posted).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from controller.sim.actors import ROLES, People
from controller.sim.faults import RUNTIME_KINDS, parse_fault_now
from controller.sim.practice import PracticeDeck
from fsm.round.constants import AREAS
from fsm.round.events import Event, Training
from fsm.rules.cards import DECK, CardError, format_cards, parse_cards
from fsm.rules.drills import (
    SeatAnswer,
    check_house_way,
    check_progressive_pay,
    check_settlement,
    practice_hand,
    progressive_pay,
    settle_round,
)
from fsm.rules.houseway import HouseWay
from fsm.rules.progressive import ProgressiveTable
from fsm.rules.ranking import DEFAULT_OPTIONS, RankingOptions
from fsm.rules.settlement import Setting

Post = Callable[[Event], None]

#: The dealer drills (`Drills.pose` / `Drills.judge`).
DRILL_KINDS: Mapping[str, str] = {
    "house-way": "set the dealer's hand by the house way",
    "settle": "settle a round: each area's outcome and vigorish against the dealer",
    "progressive": "pay a progressive line: the amount for the hand at the meter shown",
}


class TrainingError(ValueError):
    """A trainer's request that cannot be done; the message says why."""


class Drills:
    """The dealer drills for one table's house way, ranking rules and progressive pay table."""

    def __init__(
        self,
        way: HouseWay,
        table: ProgressiveTable,
        opts: RankingOptions = DEFAULT_OPTIONS,
        *,
        wager_cents: int = 100,
        meter_cents: int = 100_000,
        five_times_meter: bool = True,
    ) -> None:
        self.five_times_meter = five_times_meter  # the table's reading of NY (k)(4)(i)
        self.way = way
        self.table = table
        self.opts = opts
        self.wager_cents = wager_cents
        self.meter_cents = meter_cents

    @staticmethod
    def _deck(kind: str, number: int) -> tuple[random.Random, list[int]]:
        if kind not in DRILL_KINDS:
            raise TrainingError(f"drill: unknown kind {kind!r} (kinds: {', '.join(DRILL_KINDS)})")
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise TrainingError(f"drill: number must be a whole number >= 0, got {number!r}")
        rng = random.Random(f"drill:{kind}:{number}")  # simulation only: the drill's own cards
        deck = list(DECK)
        rng.shuffle(deck)
        return rng, deck

    def pose(self, kind: str, number: int) -> dict[str, Any]:
        """Drill ``number`` of ``kind``: what the dealer is shown."""
        rng, deck = self._deck(kind, number)
        base: dict[str, Any] = {"kind": kind, "number": number, "task": DRILL_KINDS[kind]}
        if kind == "house-way":
            return {**base, "cards": format_cards(deck[:7]), "house_way": self.way.name}
        if kind == "settle":
            dealer, players = self._settle_hands(rng, deck)
            return {
                **base,
                "dealer": {"high": format_cards(dealer.high), "low": format_cards(dealer.low)},
                "players": [
                    {
                        "position": p,
                        "high": format_cards(s.high),
                        "low": format_cards(s.low),
                        "wager_cents": w,
                    }
                    for p, (s, w) in sorted(players.items())
                ],
                "vigorish": "5% of the win, rounded up to the next 25 cents",
            }
        cards, meter = self._progressive_hand(rng)
        return {
            **base,
            "cards": format_cards(cards),
            "meter_cents": meter,
            "wager_cents": self.wager_cents,
            "pay_table": self.table.name,
        }

    def _settle_hands(
        self, rng: random.Random, deck: list[int]
    ) -> tuple[Setting, dict[int, tuple[Setting, int]]]:
        dealer = self.way.set(deck[:7], self.opts)
        count = rng.randint(2, AREAS)
        areas = sorted(rng.sample(range(1, AREAS + 1), count))
        players: dict[int, tuple[Setting, int]] = {}
        for i, area in enumerate(areas):
            cards = deck[7 + 7 * i : 14 + 7 * i]
            wager = rng.choice((500, 1000, 1500, 2000, 2500, 5000, 10000))
            players[area] = (self.way.set(cards, self.opts), wager)
        return dealer, players

    def _progressive_hand(self, rng: random.Random) -> tuple[list[int], int]:
        line = rng.choice(self.table.line_names)
        cards = list(practice_hand(line))
        rng.shuffle(cards)
        meter = self.meter_cents + rng.randrange(0, 4 * self.meter_cents, 7)
        if rng.random() < 0.2:  # now and then seven cards as dealt: most win nothing
            cards = list(DECK)
            rng.shuffle(cards)
            cards = cards[:7]
        return cards, meter

    def judge(self, kind: str, number: int, answer: Mapping[str, Any]) -> dict[str, Any]:
        """The verdict on ``answer`` to drill ``number`` of ``kind``: ``correct`` and why.

        house-way: ``{"high": "As Ad 9h 7s 5c", "low": "Kh Kd"}``; settle: ``{"answers":
        {"1": {"outcome": "win", "vig_cents": 25}, ...}}``; progressive: ``{"amount_cents": N}``.
        TrainingError names a malformed answer."""
        rng, deck = self._deck(kind, number)
        if not isinstance(answer, Mapping):
            raise TrainingError("answer: must be an object")
        if kind == "house-way":
            try:
                high = parse_cards(str(answer.get("high", "")))
                low = parse_cards(str(answer.get("low", "")))
            except CardError as exc:
                raise TrainingError(f"answer: {exc}") from None
            verdict = check_house_way(self.way, deck[:7], high, low, self.opts)
            return {"kind": kind, "number": number, **verdict.to_json()}
        if kind == "settle":
            dealer, players = self._settle_hands(rng, deck)
            expected = settle_round(dealer, players, opts=self.opts)
            answers = _seat_answers(answer.get("answers"))
            seats = [v.to_json() for v in check_settlement(expected, answers)]
            return {
                "kind": kind,
                "number": number,
                "correct": all(bool(s["correct"]) for s in seats),
                "seats": seats,
            }
        cards, meter = self._progressive_hand(rng)
        amount = answer.get("amount_cents")
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise TrainingError("answer: amount_cents must be a whole number of cents")
        pay = progressive_pay(
            self.table,
            cards,
            meter,
            self.wager_cents,
            self.opts,
            five_times_meter=self.five_times_meter,
        )
        return {"kind": kind, "number": number, **check_progressive_pay(pay, amount).to_json()}


def _seat_answers(raw: object) -> dict[int, SeatAnswer]:
    if not isinstance(raw, Mapping):
        raise TrainingError('answer: "answers" must map each area to {outcome, vig_cents}')
    out: dict[int, SeatAnswer] = {}
    for key, value in raw.items():
        try:
            position = int(key)
        except (TypeError, ValueError):
            raise TrainingError(f"answers: {key!r} is not a betting area") from None
        if not isinstance(value, Mapping) or value.get("outcome") not in ("win", "push", "lose"):
            raise TrainingError(f"answers[{position}]: outcome must be win, push or lose")
        vig = value.get("vig_cents", 0)
        if isinstance(vig, bool) or not isinstance(vig, int) or vig < 0:
            raise TrainingError(f"answers[{position}]: vig_cents must be whole cents >= 0")
        out[position] = SeatAnswer(value["outcome"], vig)
    return out


class Trainer:
    """The trainer's controls of one simulated table (thread-safe: called from the page's and
    the console's threads; each change is posted, journaled as a ``training`` event)."""

    def __init__(
        self,
        post: Post,
        people: People,
        practice: PracticeDeck,
        faults: Any,
        drills: Drills,
    ) -> None:
        self._post = post
        self.people = people
        self.practice = practice
        self._faults = faults
        self.drills = drills

    def status(self) -> dict[str, Any]:
        """What the page shows: TRAINING, who is a person, the armed practice hit, the choices."""
        armed = self.practice.armed
        practice: dict[str, Any] | None = None
        if armed is not None:
            practice = {"position": armed.position, "line": armed.line}
            waiting = self.practice.waiting
            if waiting is not None:  # why it has not come yet (e.g. asked after no more bets)
                practice["waiting"] = waiting
        return {
            "training": True,
            "roles": list(ROLES),
            "people": sorted(self.people.roles),
            "practice": practice,
            "practice_lines": list(self.practice.lines),
            "fault_kinds": dict(RUNTIME_KINDS),
            "drills": dict(DRILL_KINDS),
        }

    def set_people(self, roles: Iterable[str], by: str = "trainer") -> dict[str, Any]:
        """Who is a person from now on (any subset of dealer, players, supervisor)."""
        try:
            held = self.people.set(roles)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        self._post(Training(action="people", people=tuple(sorted(held)), by=by).envelope())
        return self.status()

    def inject_fault(self, spec: str, by: str = "trainer") -> dict[str, Any]:
        """Inject ``KIND[=VALUE]`` into the simulated device now (it bites at the next use)."""
        try:
            fault = parse_fault_now(spec)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        self._faults.inject_now(fault)
        text = fault.kind if fault.value is None else f"{fault.kind}={fault.value}"
        self._post(Training(action="fault_injected", fault=text, by=by).envelope())
        return {**self.status(), "injected": text}

    def practice_hit(self, position: int, line: str, by: str = "trainer") -> dict[str, Any]:
        """The next deal puts ``line`` in the stack of area ``position`` (its scripted player
        places the progressive wager; a person playing must place it)."""
        try:
            self.practice.request(position, line, by)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        return self.status()

    def cancel_practice(self) -> dict[str, Any]:
        self.practice.cancel()
        return self.status()
