"""The private data of one round: wagers, contributions, starting position, side wagers, hidden
hands, outcomes, pending and paid hits; dumped to and loaded from JSON with the snapshot.

Must never decide a rule (the phases do) nor let hidden hands into the public view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fsm.round.meters import Contribution

T = TypeVar("T")


def _maybe(convert: Callable[[Any], T], value: Any) -> T | None:
    """``convert(value)``, or None for None (a field not yet set this round)."""
    return None if value is None else convert(value)


def _bet_lists(bets: Any) -> list[list[int]]:
    return [list(b) for b in bets]


def _dicts(items: Any) -> list[dict[str, Any]]:
    return [dict(x) for x in items]


@dataclass
class RoundData:
    """Private data of the current round (JSON via to_json/from_json)."""

    wagers: dict[int, int] = field(default_factory=dict)  # area -> cents (lit acceptors)
    mismatch: int | None = None  # chips counted when they did not match the lights
    contributions: list[Contribution] = field(default_factory=list)
    counted: bool = False  # the dealer confirmed the chip count (contributions made)
    # who activated the RNG ("dealer" / "bank"), None before (NY (h)(8)(ii), (h)(10)(ii))
    rng_activated_by: str | None = None
    rng_value: int | None = None
    rng_draws: int = 0  # values drawn this round (1 unless a supervisor voided a draw)
    rng_voids: list[dict[str, Any]] = field(default_factory=list)
    shakes: int = 0
    start_number: int | None = None
    start_seat: int | None = None
    # [area, number, cents] recorded before the RNG is activated; None: not entered (still
    # open); [] entered as none. Activation closes them (NY (j)(2)(i))
    side_bets: list[list[int]] | None = None
    side_results: list[dict[str, Any]] | None = None
    stage: str = ""  # dealing: "" not started, "three", "three_dealt", "four", "seven", "done"
    # the betting areas holding a pai gow wager, entered by the dealer (three-card bonus, (n)(4))
    pai_gow: list[int] | None = None
    hands: dict[int, list[int]] = field(default_factory=dict)  # seat -> cards: HIDDEN
    threes: dict[int, list[int]] = field(default_factory=dict)  # seat -> 3 cards read: HIDDEN
    outcomes: dict[int, str | None] = field(default_factory=dict)  # area -> line / None (lost)
    pending: list[dict[str, Any]] = field(default_factory=list)  # hits awaiting a supervisor
    paid: list[dict[str, Any]] = field(default_factory=list)
    # each level's (display, overflow, reserve) cents when the round began (its summary)
    meters_at_start: dict[str, list[int]] = field(default_factory=dict)

    def to_json(self, hidden: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "wagers": {str(k): v for k, v in sorted(self.wagers.items())},
            "mismatch": self.mismatch,
            "contributions": [c.to_json() for c in self.contributions],
            "counted": self.counted,
            "rng_activated_by": self.rng_activated_by,
            "rng_value": self.rng_value,
            "rng_draws": self.rng_draws,
            "rng_voids": [dict(v) for v in self.rng_voids],
            "shakes": self.shakes,
            "start_number": self.start_number,
            "start_seat": self.start_seat,
            "side_bets": _maybe(_bet_lists, self.side_bets),
            "side_results": _maybe(_dicts, self.side_results),
            "stage": self.stage,
            "pai_gow": _maybe(list, self.pai_gow),
            "outcomes": {str(k): v for k, v in sorted(self.outcomes.items())},
            "pending": [dict(p) for p in self.pending],
            "paid": [dict(p) for p in self.paid],
            "hands_known": bool(self.hands),
            "meters_at_start": {k: list(v) for k, v in sorted(self.meters_at_start.items())},
        }
        if hidden:
            d["hands"] = {str(k): list(v) for k, v in sorted(self.hands.items())}
            d["threes"] = {str(k): list(v) for k, v in sorted(self.threes.items())}
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RoundData:
        return cls(
            wagers={int(k): int(v) for k, v in d["wagers"].items()},
            mismatch=d["mismatch"],
            contributions=[Contribution.from_json(c) for c in d["contributions"]],
            counted=bool(d.get("counted", False)),
            rng_activated_by=d.get("rng_activated_by"),
            rng_value=d["rng_value"],
            rng_draws=d["rng_draws"],
            rng_voids=[dict(v) for v in d["rng_voids"]],
            shakes=d["shakes"],
            start_number=d["start_number"],
            start_seat=d["start_seat"],
            side_bets=_maybe(_bet_lists, d.get("side_bets")),
            side_results=_maybe(_dicts, d["side_results"]),
            stage=d["stage"],
            pai_gow=_maybe(lambda areas: [int(a) for a in areas], d.get("pai_gow")),
            hands={int(k): list(v) for k, v in d.get("hands", {}).items()},
            threes={int(k): list(v) for k, v in d.get("threes", {}).items()},
            outcomes={int(k): v for k, v in d["outcomes"].items()},
            pending=[dict(p) for p in d["pending"]],
            paid=[dict(p) for p in d["paid"]],
            meters_at_start={
                str(k): [int(x) for x in v] for k, v in d.get("meters_at_start", {}).items()
            },
        )
