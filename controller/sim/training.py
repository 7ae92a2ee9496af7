"""Training on the simulated table: the one API the page and the console call at run time.

`Trainer` chooses who is a person (`controller.sim.actors.People`), injects a fault into a
simulated device now (`controller.sim.faults.parse_fault_now`, `PtyFaults.inject_now`), asks the
practice deck for a progressive hit (`controller.sim.practice.PracticeDeck`) and journals each
as a ``training`` event on the owner's queue (the same path as any input). `Drills` poses the
dealer drills of `fsm.rules.drills` — set the dealer's hand by the house way, settle a round, pay
a progressive line — and judges an answer; a drill is named by its kind and number, its cards
come from a deck shuffled with ``random.Random`` seeded by them, so the page needs no session
state and the same number always poses the same drill; a level (`LEVELS`) picks harder or easier
drills. A judged answer is kept in the trainee's history as a ``training`` entry
(``drill_answered``, `Trainer.answered`), and `trainee_history` reads the history back from the
journal's entries. Every answer is JSON-ready (``to_json`` dicts, money in cents).

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


#: The drills' levels (`Drills.pose`'s ``level``; none: the mixed drills of every level). A
#: house-way drill's level is the family of the house way's rule that sets its hand; a settle
#: drill's, how many areas play; a progressive drill's, whether dealt hands that pay nothing and
#: a meter off its reset come in.
LEVELS: Mapping[int, str] = {
    1: "1 - first steps: no pair and one pair; two areas; a paying line at the reset meter",
    2: "2 - the floor: two pair, three pair, trips, full house; three or four areas; any meter",
    3: "3 - expert: straights, flushes, fours, jokers; five or six areas; dealt hands too",
}
#: The house way's rule families (``reference.<family>...``) of each house-way level.
_WAY_FAMILIES: Mapping[int, frozenset[str]] = {
    1: frozenset({"no_pair", "one_pair"}),
    2: frozenset({"two_pair", "three_pair", "trips", "full_house"}),
}
_SETTLE_AREAS: Mapping[int, tuple[int, int]] = {1: (2, 2), 2: (3, 4), 3: (5, AREAS)}
#: A house-way drill of a level is the first deal of its numbered shuffles whose rule is of the
#: level's families (level 3 hands are about one deal in eight: 400 tries miss once in 10^23).
_WAY_TRIES = 400
#: The longest trainee name kept in the journal.
TRAINEE_MAX = 40


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

    def _deck(
        self, kind: str, number: int, level: int | None = None
    ) -> tuple[random.Random, list[int]]:
        if kind not in DRILL_KINDS:
            raise TrainingError(f"drill: unknown kind {kind!r} (kinds: {', '.join(DRILL_KINDS)})")
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise TrainingError(f"drill: number must be a whole number >= 0, got {number!r}")
        check_level(level)
        # simulation only: the drill's own cards (mixed levels keep the numbering they had)
        rng = random.Random(f"drill:{kind}:{number}" + (f":{level}" if level else ""))
        deck = list(DECK)
        rng.shuffle(deck)
        if kind == "house-way" and level is not None:
            for _ in range(_WAY_TRIES):
                if self._way_level(deck[:7]) == level:
                    break
                rng.shuffle(deck)
            else:  # pragma: no cover - see _WAY_TRIES
                raise TrainingError(f"drill: no level {level} hand in {_WAY_TRIES} deals")
        return rng, deck

    def _way_level(self, cards: list[int]) -> int:
        """The level of a house-way drill of these seven cards: its rule's family's."""
        family = self.way.explain(cards, self.opts).rule.split(".")[1].split("[")[0].split(":")[0]
        return next((lv for lv, fams in _WAY_FAMILIES.items() if family in fams), 3)

    def pose(self, kind: str, number: int, level: int | None = None) -> dict[str, Any]:
        """Drill ``number`` of ``kind`` at ``level`` (1-3, `LEVELS`; None: mixed): what the
        dealer is shown."""
        rng, deck = self._deck(kind, number, level)
        base: dict[str, Any] = {
            "kind": kind,
            "number": number,
            "level": level,
            "task": DRILL_KINDS[kind],
        }
        if kind == "house-way":
            return {**base, "cards": format_cards(deck[:7]), "house_way": self.way.name}
        if kind == "settle":
            dealer, players = self._settle_hands(rng, deck, level)
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
        cards, meter = self._progressive_hand(rng, level)
        return {
            **base,
            "cards": format_cards(cards),
            "meter_cents": meter,
            "wager_cents": self.wager_cents,
            "pay_table": self.table.name,
        }

    def _settle_hands(
        self, rng: random.Random, deck: list[int], level: int | None = None
    ) -> tuple[Setting, dict[int, tuple[Setting, int]]]:
        dealer = self.way.set(deck[:7], self.opts)
        count = rng.randint(*_SETTLE_AREAS.get(level or 0, (2, AREAS)))
        areas = sorted(rng.sample(range(1, AREAS + 1), count))
        players: dict[int, tuple[Setting, int]] = {}
        for i, area in enumerate(areas):
            cards = deck[7 + 7 * i : 14 + 7 * i]
            wager = rng.choice((500, 1000, 1500, 2000, 2500, 5000, 10000))
            players[area] = (self.way.set(cards, self.opts), wager)
        return dealer, players

    def _progressive_hand(
        self, rng: random.Random, level: int | None = None
    ) -> tuple[list[int], int]:
        line = rng.choice(self.table.line_names)
        cards = list(practice_hand(line))
        rng.shuffle(cards)
        meter = self.meter_cents + rng.randrange(0, 4 * self.meter_cents, 7)
        dealt = {1: 0.0, 2: 0.0, 3: 0.5}.get(level or 0, 0.2)
        if level == 1:  # first steps: a paying line at the reset meter
            meter = self.meter_cents
        if rng.random() < dealt:  # now and then seven cards as dealt: most win nothing
            cards = list(DECK)
            rng.shuffle(cards)
            cards = cards[:7]
        return cards, meter

    def judge(
        self, kind: str, number: int, answer: Mapping[str, Any], level: int | None = None
    ) -> dict[str, Any]:
        """The verdict on ``answer`` to drill ``number`` of ``kind`` at ``level``: ``correct``
        and why.

        house-way: ``{"high": "As Ad 9h 7s 5c", "low": "Kh Kd"}``; settle: ``{"answers":
        {"1": {"outcome": "win", "vig_cents": 25}, ...}}``; progressive: ``{"amount_cents": N}``.
        TrainingError names a malformed answer."""
        rng, deck = self._deck(kind, number, level)
        if not isinstance(answer, Mapping):
            raise TrainingError("answer: must be an object")
        if kind == "house-way":
            try:
                high = parse_cards(str(answer.get("high", "")))
                low = parse_cards(str(answer.get("low", "")))
            except CardError as exc:
                raise TrainingError(f"answer: {exc}") from None
            verdict = check_house_way(self.way, deck[:7], high, low, self.opts)
            return {"kind": kind, "number": number, "level": level, **verdict.to_json()}
        if kind == "settle":
            dealer, players = self._settle_hands(rng, deck, level)
            expected = settle_round(dealer, players, opts=self.opts)
            answers = _seat_answers(answer.get("answers"))
            seats = [v.to_json() for v in check_settlement(expected, answers)]
            return {
                "kind": kind,
                "number": number,
                "level": level,
                "correct": all(bool(s["correct"]) for s in seats),
                "seats": seats,
            }
        cards, meter = self._progressive_hand(rng, level)
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
        return {
            "kind": kind,
            "number": number,
            "level": level,
            **check_progressive_pay(pay, amount).to_json(),
        }


def check_level(level: object) -> None:
    """TrainingError unless ``level`` is None (mixed) or one of `LEVELS`."""
    if level is not None and (isinstance(level, bool) or level not in LEVELS):
        raise TrainingError(f"level: one of {', '.join(map(str, LEVELS))}, or none for mixed")


def check_trainee(name: object) -> str:
    """The trainee's name as journaled (trimmed), or TrainingError saying why not."""
    if not isinstance(name, str) or not name.strip():
        raise TrainingError("trainee: type the trainee's name first: the history is kept by name")
    text = " ".join(name.split())
    if len(text) > TRAINEE_MAX or not text.isprintable():
        raise TrainingError(f"trainee: a name of at most {TRAINEE_MAX} printable characters")
    return text


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
        dealt = self.practice.dealt()
        last: dict[str, Any] | None = None
        if dealt:  # the latest practice deal: what became of a request dealt at once
            round_id = max(dealt)
            last = {"round": round_id, "position": dealt[round_id].position}
            last["line"] = dealt[round_id].line
        return {
            "training": True,
            "roles": list(ROLES),
            "people": sorted(self.people.roles),
            "practice": practice,
            "practice_dealt": last,
            "practice_lines": list(self.practice.lines),
            "fault_kinds": dict(RUNTIME_KINDS),
            "drills": dict(DRILL_KINDS),
            "levels": {str(k): v for k, v in LEVELS.items()},
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

    @staticmethod
    def answered(trainee: object, verdict: Mapping[str, Any], by: str = "trainer") -> Training:
        """The ``training`` event (``drill_answered``) that keeps a judged answer in the
        trainee's history (the journal); the caller posts it and waits for its commit."""
        return Training(
            action="drill_answered",
            trainee=check_trainee(trainee),
            drill=str(verdict["kind"]),
            level=verdict.get("level"),
            number=int(verdict["number"]),
            correct=bool(verdict.get("correct")),
            by=by,
        )

    @staticmethod
    def history(entries: Iterable[Any], trainee: str) -> dict[str, Any]:
        """The trainee's history from the journal's entries (`trainee_history`)."""
        return trainee_history(entries, trainee)

    def cancel_practice(self) -> dict[str, Any]:
        self.practice.cancel()
        return self.status()


#: The most answers a history gives back (the newest; the score counts every one).
HISTORY_SHOWN = 50


def trainee_history(entries: Iterable[Any], trainee: str) -> dict[str, Any]:
    """The trainee's history from the journal's ``training`` entries (``drill_answered``, each
    an entry with ``seq``, ``ts_ms`` and ``data``), oldest first: the score, the current and
    best streak, the score per drill and level, and the newest `HISTORY_SHOWN` answers."""
    name = check_trainee(trainee)
    answers: list[dict[str, Any]] = []
    right = streak = best = 0
    per: dict[str, dict[str, int]] = {}
    for entry in entries:
        data = entry.data
        if data.get("action") != "drill_answered" or data.get("trainee") != name:
            continue
        correct = data.get("correct") is True
        right += correct
        streak = streak + 1 if correct else 0
        best = max(best, streak)
        key = f"{data.get('drill')} level {data.get('level') or 'mixed'}"
        tally = per.setdefault(key, {"asked": 0, "right": 0})
        tally["asked"] += 1
        tally["right"] += correct
        answers.append(
            {
                "seq": entry.seq,
                "time_ms": entry.ts_ms,
                "drill": data.get("drill"),
                "level": data.get("level"),
                "number": data.get("number"),
                "correct": correct,
            }
        )
    return {
        "trainee": name,
        "asked": len(answers),
        "right": right,
        "streak": streak,
        "best": best,
        "per_drill": per,
        "answers": answers[-HISTORY_SHOWN:],
    }
