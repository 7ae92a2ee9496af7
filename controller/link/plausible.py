"""What a table's authenticated entry may claim about its progressive (docs/link.md "The rules
the pool applies"): the link controller and central ingest ask `Watch.check` of every entry
whose MAC and chain hold, before they count it.

- a contribution only in the entry that confirms its own round's chip count at the lock-out
  (``chips_confirmed``, ``panel_next``, ``chips_resolved``: the triggers of
  `fsm.round.phases.betting.count_confirmed`), for that entry's round;
- at most six wagers (the six positions), at least one;
- ``wagered_cents`` = wagers x the wager amount (the pool's; central, which has no pool, the
  same amount for every level of the entry and a whole number of cents per wager);
- one contribution a round per level, and rounds only forward;
- a hit (a ``pay`` effect) only in a round that contributed to the level, with that position's
  outcome journaled in the round, at most as many positions paid as wagers; one paid from the
  meter only after its ``hit_pending``; a ``payout`` meter movement only beside its ``pay``.

A table's whole stream is checked in order; `Watch` keeps what the rules need of the round in
play (a few integers per table, rebuilt by a consumer from what it holds at start). Pure: no I/O,
no clock; must never decide a game outcome (the table does) or count money (the pool does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.journal.format import Entry

#: the entry types whose event confirms the chip count at the lock-out (contributes)
COUNT_CONFIRMED = ("chips_confirmed", "chips_resolved", "panel_next")
MAX_WAGERS = 6
_WATCHED = frozenset(("meter_movement", "outcome", "hit_pending", "pay"))


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass
class Watch:
    """What the rules know of one table's round in play."""

    #: level -> the last round it took a contribution for, and how many wagers
    contributed: dict[str, tuple[int, int]] = field(default_factory=dict)
    round_id: int | None = None
    #: positions with an outcome line, hits pending (position, level), positions paid per level
    outcomes: set[int] = field(default_factory=set)
    pending: set[tuple[int, str]] = field(default_factory=set)
    paid: dict[str, set[int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "contributed": {k: list(v) for k, v in sorted(self.contributed.items())},
            "round_id": self.round_id,
            "outcomes": sorted(self.outcomes),
            "pending": sorted([p, lvl] for p, lvl in self.pending),
            "paid": {k: sorted(v) for k, v in sorted(self.paid.items())},
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Watch:
        return cls(
            {str(k): (int(v[0]), int(v[1])) for k, v in dict(d.get("contributed", {})).items()},
            d.get("round_id"),
            {int(p) for p in d.get("outcomes", [])},
            {(int(p), str(lvl)) for p, lvl in d.get("pending", [])},
            {str(k): {int(p) for p in v} for k, v in dict(d.get("paid", {})).items()},
        )

    def _round(self, rid: int | None) -> None:
        if rid is not None and rid != self.round_id:
            self.round_id = rid
            self.outcomes, self.pending, self.paid = set(), set(), {}

    def check(self, entry: Entry, wager_cents: int | None = None) -> str | None:
        """Why ``entry`` is not plausible (None: it is; it is then taken into the watch).
        ``wager_cents``: the pool's wager amount (None: central's looser rule)."""
        raw = entry.data.get("effects")
        if not raw or not any(isinstance(e, dict) and e.get("type") in _WATCHED for e in raw):
            return None  # nothing the rules look at (most entries)
        before = self.to_json()
        why = self._check(entry, wager_cents)
        if why is None:
            return None
        restored = Watch.from_json(before)  # a refused entry leaves the watch as it was
        self.__dict__.update(restored.__dict__)
        return f"seq {entry.seq}: implausible: {why}"

    def _check(self, entry: Entry, wager_cents: int | None) -> str | None:
        raw = entry.data.get("effects")
        effects = [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []
        rid = entry.round_id
        contributions: dict[str, tuple[int, int]] = {}
        amounts: set[int] = set()
        for e in effects:
            if e.get("type") != "meter_movement" or e.get("kind") != "contribution":
                continue
            level, wagers = str(e.get("level")), _int(e.get("wagers"))
            cents = _int(e.get("wagered_cents"))
            mrid = _int(e.get("round_id"))
            if entry.type not in COUNT_CONFIRMED:
                return f"a contribution in a {entry.type} entry (only the lock-out's chip count)"
            if mrid is None or mrid != rid:
                return f"a contribution for round {mrid} in an entry of round {rid}"
            if wagers is None or not 1 <= wagers <= MAX_WAGERS:
                return f"{wagers} wagers (1 to {MAX_WAGERS}, one a position)"
            if cents is None or cents != wagers * (wager_cents or (cents // wagers)):
                each = "the pool's" if wager_cents else "a whole"
                return f"{cents} cents wagered for {wagers} wagers (not {each} wager amount each)"
            if cents <= 0:
                return f"{cents} cents wagered"
            amounts.add(cents // wagers)
            last = self.contributed.get(level)
            if level in contributions or (last is not None and mrid <= last[0]):
                return f"a second contribution to {level} for round {mrid} (one a round)"
            contributions[level] = (mrid, wagers)
        if len(amounts) > 1:
            return f"different wager amounts in one lock-out: {sorted(amounts)}"
        self._round(rid if contributions else self.round_id)
        for e in effects:
            kind = e.get("type")
            if kind == "outcome" and e.get("line") and _int(e.get("position")) is not None:
                self.outcomes.add(int(e["position"]))
        for e in effects:
            if e.get("type") == "hit_pending":
                self.pending.add((_int(e.get("position")) or 0, str(e.get("level"))))
        payouts = 0
        for e in effects:
            if e.get("type") == "meter_movement" and e.get("kind") == "payout":
                payouts += 1
            if e.get("type") != "pay":
                continue
            level, pos = str(e.get("level")), _int(e.get("position"))
            got = contributions.get(level) or self.contributed.get(level)
            if got is None or got[0] != rid or rid != self.round_id:
                return f"a {level} hit in round {rid}, which took no {level} wager"
            if pos is None or pos not in self.outcomes:
                return f"a {level} hit at position {pos} without its outcome in round {rid}"
            if e.get("from") == "meter" and (pos, level) not in self.pending:
                return f"a {level} hit paid from the meter at position {pos} never pending"
            paid = self.paid.setdefault(level, set())
            paid.add(pos)
            if len(paid) > got[1]:
                return f"{len(paid)} {level} hits in round {rid}, which took {got[1]} wagers"
            if e.get("from") == "meter":
                payouts -= 1
        if payouts > 0:
            return "a payout from the meter without its hit"
        self.contributed.update(contributions)
        return None
