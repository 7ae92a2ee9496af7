"""The progressive payout wager: its pay table as data, the winning line of seven cards, the payout.

NY 5324.41(k): $1 or $5 wagers (k)(1); the pay table (k)(4), read from a TOML file and checked at
load against the regulation's minimums kept here in code; a $5 wager paid five times every amount,
the shares of the meter too (k)(4)(i) (the other reading only as an argument); which payouts are
deducted from the meter (k)(5); meter-based payouts use the meter at the time of payment (k)(6) —
so the meter is an argument, never remembered here. A line "X and pair" is X in five of the seven
cards with a pair in the other two; the joker with an ace is a pair of aces (c)(1). The lines a
line implies (`IMPLIED_LINES`) make the least a dealer-entered line is worth ((g)(8)). Must never
do I/O beyond reading its pay-table file, and never touch a meter.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations
from pathlib import Path

from fsm.configread import ConfigValueError, check_keys, parse_toml
from fsm.rules.cards import Card, CardError, check_distinct
from fsm.rules.ranking import DEFAULT_OPTIONS, Category, RankingOptions, value2, value5

DATA_DIR = Path(__file__).parent.parent / "data" / "progressive"
DEFAULT_TABLE = "ny-5324-41-k4"

# NY 5324.41(k)(4)(ii): the least a gaming facility may pay for a $1 wager.
# (name, minimum meter percent or None, minimum fixed cents or None), in the regulation's order.
REGULATION_MINIMUMS: tuple[tuple[str, int | None, int | None], ...] = (
    ("natural-royal-flush-and-pair", 100, None),
    ("five-aces-and-pair", 100, None),
    ("natural-royal-flush", 10, None),
    ("five-aces", 10, None),
    ("royal-flush-and-pair", None, 20000),
    ("royal-flush", None, 10000),
    ("straight-flush-and-pair", None, 5000),
    ("straight-flush", None, 2500),
    ("four-of-a-kind-and-pair", None, 4000),
    ("four-of-a-kind", None, 2000),
    ("full-house-and-pair", None, 1000),
    ("full-house", None, 500),
    ("flush-and-pair", None, 600),
    ("flush", None, 300),
    ("straight-and-pair", None, 400),
    ("straight", None, 200),
    ("three-of-a-kind", None, 200),
)
ALLOWED_WAGERS = (100, 500)  # (k)(1): a $1 or a $5 wager
STRAIGHT_FLUSH_LINES = frozenset({"straight-flush", "straight-flush-and-pair"})

# The lines every seven-card hand that claims the key line also claims (a natural royal flush is
# a royal flush; five aces hold four of a kind; "X and pair" holds X ...). When the dealer enters
# a line, these are the other hand types the dealer may reset the hand to ((g)(8)), so the line's
# least payout is the best of them: a share of a low meter never pays less than the fixed line
# the same hand makes. Checked over many hands by tests/test_progressive.py.
IMPLIED_LINES: dict[str, tuple[str, ...]] = {
    "natural-royal-flush-and-pair": ("natural-royal-flush", "royal-flush-and-pair", "royal-flush"),
    "natural-royal-flush": ("royal-flush",),
    "five-aces-and-pair": ("five-aces", "four-of-a-kind", "full-house-and-pair", "full-house"),
    "five-aces": ("four-of-a-kind",),
    "royal-flush-and-pair": ("royal-flush",),
    "straight-flush-and-pair": ("straight-flush",),
    "four-of-a-kind-and-pair": ("four-of-a-kind", "full-house"),
    "full-house-and-pair": ("full-house",),
    "flush-and-pair": ("flush",),
    "straight-and-pair": ("straight",),
}

# Which lines a five-card category (and naturalness) can claim, before "and pair".
_BASE_LINES: dict[tuple[Category, bool], tuple[str, ...]] = {
    (Category.FIVE_ACES, False): ("five-aces",),
    (Category.ROYAL_FLUSH, True): ("natural-royal-flush", "royal-flush"),
    (Category.ROYAL_FLUSH, False): ("royal-flush",),
    (Category.STRAIGHT_FLUSH, True): ("straight-flush",),
    (Category.STRAIGHT_FLUSH, False): ("straight-flush",),
    (Category.FOUR_OF_A_KIND, True): ("four-of-a-kind",),
    (Category.FOUR_OF_A_KIND, False): ("four-of-a-kind",),
    (Category.FULL_HOUSE, True): ("full-house",),
    (Category.FULL_HOUSE, False): ("full-house",),
    (Category.FLUSH, True): ("flush",),
    (Category.FLUSH, False): ("flush",),
    (Category.STRAIGHT, True): ("straight",),
    (Category.STRAIGHT, False): ("straight",),
    (Category.THREE_OF_A_KIND, True): ("three-of-a-kind",),
    (Category.THREE_OF_A_KIND, False): ("three-of-a-kind",),
}


class PayTableError(ValueError):
    """A progressive pay-table file that is malformed or pays less than the regulation."""


@dataclass(frozen=True)
class ProgressiveLine:
    """One line of the pay table: a share of the meter, or a fixed amount for a $1 wager."""

    name: str
    meter_percent: int | None
    amount_cents: int | None

    @property
    def from_meter(self) -> bool:
        return self.meter_percent is not None


@dataclass(frozen=True)
class ProgressiveTable:
    """A checked progressive pay table (NY 5324.41(k)(4)) and the wagers it accepts."""

    name: str
    lines: tuple[ProgressiveLine, ...]
    wager_cents: tuple[int, ...]

    @property
    def line_names(self) -> tuple[str, ...]:
        return tuple(line.name for line in self.lines)

    @classmethod
    def load(cls, name_or_path: str | Path = DEFAULT_TABLE) -> ProgressiveTable:
        """Load a shipped table by name or a file by path; PayTableError names the bad key."""
        path = Path(name_or_path)
        if not path.suffix:
            path = DATA_DIR / f"{name_or_path}.toml"
        try:
            with path.open("rb") as f:
                data = parse_toml(f.read())
        except FileNotFoundError:
            raise PayTableError(f"{path}: no such pay table") from None
        except tomllib.TOMLDecodeError as e:
            raise PayTableError(f"{path}: not valid TOML: {e}") from None
        return cls.from_mapping(data, where=str(path))

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, object], where: str = "progressive"
    ) -> ProgressiveTable:
        _known(data, where, ("name", "wager_cents", "line"))
        name = data.get("name", "unnamed")
        if not isinstance(name, str):
            raise PayTableError(f"{where}.name: must be a string")
        wagers = data.get("wager_cents", list(ALLOWED_WAGERS))
        if not isinstance(wagers, list) or not wagers:
            raise PayTableError(f"{where}.wager_cents: must be a list such as [100, 500]")
        for w in wagers:
            if w not in ALLOWED_WAGERS:
                raise PayTableError(
                    f"{where}.wager_cents: {w!r} is not allowed; NY 5324.41(k)(1) allows a $1 "
                    "(100) or a $5 (500) wager"
                )
        raw_lines = data.get("line")
        if not isinstance(raw_lines, list):
            raise PayTableError(f"{where}.line: the table needs [[line]] entries")
        lines: dict[str, ProgressiveLine] = {}
        for i, raw in enumerate(raw_lines):
            lines_key = f"{where}.line[{i}]"
            line = _parse_line(raw, lines_key)
            if line.name in lines:
                raise PayTableError(f"{lines_key}.name: line {line.name!r} appears twice")
            lines[line.name] = line
        ordered: list[ProgressiveLine] = []
        for reg_name, min_pct, min_cents in REGULATION_MINIMUMS:
            found = lines.get(reg_name)
            if found is None:
                raise PayTableError(f"{where}: line {reg_name!r} of NY 5324.41(k)(4) is missing")
            if min_pct is not None:
                if found.meter_percent is None or found.meter_percent < min_pct:
                    raise PayTableError(
                        f"{where}: line {reg_name!r} must pay at least {min_pct}% of the meter "
                        "(NY 5324.41(k)(4))"
                    )
            elif found.amount_cents is None or found.amount_cents < (min_cents or 0):
                raise PayTableError(
                    f"{where}: line {reg_name!r} must pay at least {min_cents} cents for a $1 "
                    "wager (NY 5324.41(k)(4))"
                )
            ordered.append(lines.pop(reg_name))
        if lines:
            raise PayTableError(f"{where}: unknown line(s) {', '.join(sorted(lines))}")
        return cls(name, tuple(ordered), tuple(int(w) for w in wagers))

    # --- rules ------------------------------------------------------------------------------

    def line(self, name: str) -> ProgressiveLine:
        for line in self.lines:
            if line.name == name:
                return line
        raise KeyError(f"no progressive line {name!r}; lines: {', '.join(self.line_names)}")

    def payout_cents(
        self, line_name: str, wager_cents: int, meter_cents: int, *, five_times_meter: bool = True
    ) -> int:
        """What the line pays for this wager with the meter at ``meter_cents`` now (k)(4),(6).

        NY (k)(4)(i): "for a $5 progressive wager, multiply payout amount by five" — every
        payout amount, fixed or a share of the meter; a share is rounded down to the cent. A
        $5 share can so exceed the meter: the meter pays what it holds and the house the rest
        (the round does that). ``five_times_meter=False`` is the other reading (a share of the
        meter is not multiplied, never exceeds the meter), allowed only on a regulator's
        written ruling named in the configuration (``game.five_dollar_ruling``).
        """
        self._check_wager(wager_cents)
        line = self.line(line_name)
        if line.meter_percent is not None:
            if five_times_meter:
                return meter_cents * line.meter_percent * wager_cents // 10000
            return min(meter_cents, meter_cents * line.meter_percent // 100)
        assert line.amount_cents is not None
        return line.amount_cents * wager_cents // 100

    def implied(self, line_name: str) -> tuple[str, ...]:
        """The line and the lines every hand claiming it also claims (`IMPLIED_LINES`)."""
        self.line(line_name)
        return (line_name, *IMPLIED_LINES.get(line_name, ()))

    def claims(self, cards: Sequence[Card], opts: RankingOptions = DEFAULT_OPTIONS) -> list[str]:
        """Every line of this table the seven cards can claim, in the table's order."""
        if len(cards) != 7:
            raise CardError(f"a progressive hand has 7 cards, got {len(cards)}")
        check_distinct(cards)
        got = line_claims(tuple(sorted(cards)), opts)
        return [name for name in self.line_names if name in got]

    def best_of(
        self, lines: Sequence[str], wager_cents: int, payout: Callable[[str], int]
    ) -> tuple[str, int] | None:
        """The line of ``lines`` paying the most by ``payout`` (line -> cents now, each at its
        own level's meter), a tie to the line listed first; None when ``lines`` is empty."""
        self._check_wager(wager_cents)
        best: tuple[int, int] | None = None
        best_name: str | None = None
        wanted = set(lines)
        for idx, name in enumerate(self.line_names):
            if name in wanted:
                key = (payout(name), -idx)
                if best is None or key > best:
                    best, best_name = key, name
        return None if best is None or best_name is None else (best_name, best[0])

    def deducted_from_meter(self, line_name: str, wager_cents: int, payout_cents: int) -> bool:
        """NY 5324.41(k)(5): $1 wager: payouts of $50 or more and any straight flush come off the
        meter; $5 wager: $250 or more and any straight flush. A share of the meter always does."""
        self._check_wager(wager_cents)
        line = self.line(line_name)
        if line.from_meter or line_name in STRAIGHT_FLUSH_LINES:
            return True
        return payout_cents >= 50 * wager_cents

    def best_line(
        self,
        cards: Sequence[Card],
        meter_cents: int,
        opts: RankingOptions = DEFAULT_OPTIONS,
        wager_cents: int = 100,
        *,
        five_times_meter: bool = True,
    ) -> str | None:
        """The line paying the most now ((g)(8): the hand type yielding the highest progressive
        payout), every line at one meter; a tie goes to the line listed first. None when the
        hand wins nothing. (The round, with several levels, uses `best_of` at each line's
        level's meter.)"""
        best = self.best_of(
            self.claims(cards, opts),
            wager_cents,
            lambda name: self.payout_cents(
                name, wager_cents, meter_cents, five_times_meter=five_times_meter
            ),
        )
        return None if best is None else best[0]

    def _check_wager(self, wager_cents: int) -> None:
        if wager_cents not in self.wager_cents:
            raise ValueError(
                f"progressive wager of {wager_cents} cents not accepted by {self.name}: "
                f"allowed {list(self.wager_cents)}"
            )


def _known(data: Mapping[str, object], where: str, keys: tuple[str, ...]) -> None:
    """`fsm.configread.check_keys`, its problem raised as PayTableError."""
    try:
        check_keys(data, where, keys)
    except ConfigValueError as e:
        raise PayTableError(str(e)) from None


def _parse_line(raw: object, where: str) -> ProgressiveLine:
    if not isinstance(raw, dict):
        raise PayTableError(f"{where}: must be a table with name and meter_percent or amount_cents")
    _known(raw, where, ("name", "meter_percent", "amount_cents"))
    name = raw.get("name")
    if not isinstance(name, str):
        raise PayTableError(f"{where}.name: must be a string")
    pct = raw.get("meter_percent")
    cents = raw.get("amount_cents")
    if (pct is None) == (cents is None):
        raise PayTableError(f"{where}: give exactly one of meter_percent or amount_cents")
    if pct is not None and (type(pct) is not int or not 0 < pct <= 100):
        raise PayTableError(f"{where}.meter_percent: a whole percent from 1 to 100, not {pct!r}")
    if cents is not None and (type(cents) is not int or cents <= 0):
        raise PayTableError(
            f"{where}.amount_cents: a positive whole number of cents, not {cents!r}"
        )
    return ProgressiveLine(name, pct, cents)


@lru_cache(maxsize=4096)
def line_claims(cards: tuple[Card, ...], opts: RankingOptions) -> frozenset[str]:
    """The line names seven (sorted) cards can claim, over all 21 five-and-two splits."""
    out: set[str] = set()
    for five in combinations(cards, 5):
        v = value5(five, opts)
        cat = Category(v[0])
        natural = 52 not in five
        base = _BASE_LINES.get((cat, natural))
        if not base:
            continue
        two = [c for c in cards if c not in five]
        pair = value2(two)[0] == Category.PAIR
        for name in base:
            out.add(name)
            if pair and name != "three-of-a-kind":
                out.add(f"{name}-and-pair")
    return frozenset(out)


@cache
def default_table() -> ProgressiveTable:
    return ProgressiveTable.load(DEFAULT_TABLE)
