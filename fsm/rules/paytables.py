"""Bonus pay tables as data, checked at load against the regulation, and the bonus offering.

A casino's pay table is a TOML file (fsm/data/paytables/*.toml, format in docs/settlement.md). At
load each table is checked against the regulation's table, encoded here in code: where the
regulation sets a minimum (NY 5324.41(m)(1),(3), (o)(1),(2)) a table may pay more, never less;
where it sets the payout (envy bonus amounts (m)(2), imperial pai gow (p)(4),(5)) the table must
pay exactly that; the 1-7 side wager pays between 5.5:1 and 6:1, rounded down to the whole dollar
(NY (j)(2)(vi), NJ 11.8C(b)6). Per-round payout limits may not be set below (m)(4), (o)(3), (p)(6).
Families that may not be offered together at one table: check_offered ((l)(1), (n)(1), (p)(1)).

The progressive payout wager table (NY (k)) is not here (fsm.rules.progressive). This module reads
only its own packaged, read-only pay-table files (load_builtin); it must never do other I/O, hold
floats for money, or pay a cent less than the regulation.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Literal

from fsm.configread import check_keys, parse_toml, table_value
from fsm.rules import sevencard as sc

Rule = Literal["minimum", "exact", "range"]
Kind = Literal["odds", "amount"]


@dataclass(frozen=True)
class Odds:
    """Payout odds N:M (integers): a winning wager of w cents wins floor(w * N / M) cents."""

    num: int
    den: int

    @classmethod
    def parse(cls, text: object, where: str) -> Odds:
        if not isinstance(text, str):
            raise ValueError(f"{where}: odds are a string like '25:1', not {text!r}")
        parts = text.replace(" ", "").split(":")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"{where}: odds {text!r} are not of the form 'N:M' with whole N, M")
        num, den = int(parts[0]), int(parts[1])
        if den == 0 or num == 0:
            raise ValueError(f"{where}: odds {text!r} must have N > 0 and M > 0")
        return cls(num, den)

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.num, self.den)

    def pay(self, wager_cents: int) -> int:
        """The amount won (the wager itself is returned besides), a fraction of a cent dropped.

        Every regulation minimum is a whole ratio n:1, so floor(w * N / M) >= w * n whenever
        N / M >= n: dropping the fraction never pays less than the regulation.
        """
        return wager_cents * self.num // self.den

    def __str__(self) -> str:
        return f"{self.num}:{self.den}"


# --- the regulation, encoded (minimums, fixed amounts, ranges) -----------------------------------


def _o(text: str) -> Odds:
    return Odds.parse(text, "regulation")


@dataclass(frozen=True)
class WagerRule:
    """One wager's regulation: its family, how a table is checked, its schedules, its citation."""

    family: str
    kind: Kind
    rule: Rule
    cite: str
    schedules: Mapping[str, Mapping[str, Odds | int]]
    maximum: Mapping[str, Odds] = field(default_factory=dict)


_FORTUNE_LINES = (
    sc.STRAIGHT,
    sc.THREE_OF_A_KIND,
    sc.FLUSH,
    sc.FULL_HOUSE,
    sc.FOUR_OF_A_KIND,
    sc.STRAIGHT_FLUSH,
    sc.ROYAL_FLUSH,
    sc.FIVE_ACES,
    sc.SEVEN_SF_WITH_JOKER,
    sc.ROYAL_PLUS_ROYAL_MATCH,
    sc.SEVEN_SF_NO_JOKER,
)


def _column(lines: Iterable[str], values: str) -> dict[str, Odds | int]:
    """The regulation's column: odds separated by spaces, in the order of ``lines``."""
    return {line: _o(v) for line, v in zip(lines, values.split(), strict=True)}


def _cents(lines: Iterable[str], dollars: Iterable[int]) -> dict[str, Odds | int]:
    return {line: d * 100 for line, d in zip(lines, dollars, strict=True)}


_ENVY_LINES = _FORTUNE_LINES[4:]
_INSURANCE_LINES = ("ace-high", "king-high", "queen-high", "jack-high", "ten-high", "nine-high")
_SEVEN_CARD_LINES = (
    sc.STRAIGHT,
    sc.THREE_OF_A_KIND,
    sc.FLUSH,
    sc.FULL_HOUSE,
    sc.FOUR_OF_A_KIND,
    sc.STRAIGHT_FLUSH_WITH_JOKER,
    sc.STRAIGHT_FLUSH_NO_JOKER,
    sc.ROYAL_FLUSH,
    sc.FIVE_ACES,
)
_IMPERIAL_LINES = (
    sc.THREE_OF_A_KIND,
    sc.STRAIGHT,
    sc.FLUSH,
    sc.FULL_HOUSE,
    sc.FOUR_OF_A_KIND,
    sc.STRAIGHT_FLUSH,
    sc.ROYAL_FLUSH,
    sc.FIVE_ACES,
)

REGULATION: dict[str, WagerRule] = {
    "fortune-bonus": WagerRule(
        "fortune",
        "odds",
        "minimum",
        "NY 5324.41(m)(1)",
        {
            "A": _column(
                _FORTUNE_LINES, "2:1 3:1 4:1 5:1 25:1 50:1 150:1 400:1 1000:1 2000:1 8000:1"
            ),
            "B": _column(
                _FORTUNE_LINES, "2:1 3:1 4:1 5:1 25:1 50:1 150:1 400:1 1000:1 2000:1 5000:1"
            ),
            "C": _column(
                _FORTUNE_LINES, "2:1 3:1 4:1 5:1 20:1 50:1 100:1 250:1 750:1 1000:1 5000:1"
            ),
        },
    ),
    "envy": WagerRule(
        "fortune",
        "amount",
        "exact",
        "NY 5324.41(m)(2)",
        {
            "A": _cents(_ENVY_LINES, (5, 20, 50, 250, 500, 1000, 5000)),
            "B": _cents(_ENVY_LINES, (5, 20, 50, 250, 500, 1000, 3000)),
            "C": _cents(_ENVY_LINES, (5, 10, 25, 50, 100, 250, 1000)),
        },
    ),
    "insurance": WagerRule(
        "insurance",
        "odds",
        "minimum",
        "NY 5324.41(m)(3)",
        {
            "A": _column(_INSURANCE_LINES, "2:1 3:1 5:1 20:1 40:1 400:1"),
            "B": _column(_INSURANCE_LINES, "2:1 3:1 5:1 25:1 75:1 250:1"),
            "C": _column(_INSURANCE_LINES, "1:1 5:1 10:1 25:1 50:1 100:1"),
            "D": _column(_INSURANCE_LINES, "3:1 5:1 6:1 15:1 25:1 100:1"),
            "E": _column(_INSURANCE_LINES, "3:1 5:1 7:1 15:1 25:1 100:1"),
        },
    ),
    "three-card": WagerRule(
        "three-card",
        "odds",
        "minimum",
        "NY 5324.41(o)(1)",
        {
            "standard": _column(
                (
                    sc.PAIR,
                    sc.FLUSH,
                    sc.STRAIGHT,
                    sc.STRAIGHT_FLUSH,
                    sc.THREE_OF_A_KIND,
                    sc.STRAIGHT_FLUSH_NO_JOKER,
                ),
                "1:1 3:1 4:1 5:1 25:1 40:1",
            )
        },
    ),
    # (o)(2) as printed is garbled on the straight flush / royal flush rows: "Straight flush with
    # no joker Royal flush 250:1 50:1 200:1". Read as a merged cell in table A (250:1 for both
    # rows) and 50:1, 200:1 in table B: the only reading that keeps every value printed and the
    # order of the hands (docs/settlement.md).
    "seven-card": WagerRule(
        "seven-card",
        "odds",
        "minimum",
        "NY 5324.41(o)(2)",
        {
            "A": _column(_SEVEN_CARD_LINES, "2:1 3:1 4:1 5:1 25:1 50:1 250:1 250:1 500:1"),
            "B": _column(_SEVEN_CARD_LINES, "2:1 3:1 4:1 5:1 25:1 30:1 50:1 200:1 500:1"),
        },
    ),
    "imperial-player": WagerRule(
        "imperial",
        "odds",
        "exact",
        "NY 5324.41(p)(4)",
        {"standard": _column(_IMPERIAL_LINES, "2:1 2:1 4:1 5:1 25:1 50:1 200:1 1000:1")},
    ),
    "imperial-banker": WagerRule(
        "imperial",
        "odds",
        "exact",
        "NY 5324.41(p)(5)",
        {"standard": _column(("jack-high", "ten-high", "nine-high"), "5:1 20:1 100:1")},
    ),
    "side-1-7": WagerRule(
        "side-1-7",
        "odds",
        "range",
        "NY 5324.41(j)(2)(vi), NJ 13:69F-11.8C(b)6",
        {"standard": {"hit": _o("11:2")}},
        {"hit": _o("6:1")},
    ),
}

# Wagers that may not be offered at one table, with the rule saying so.
_CONFLICTS: dict[frozenset[str], str] = {}
for _a, _others, _cite in (
    ("fortune-bonus", ("three-card", "seven-card", "imperial"), "NY 5324.41(l)(1), (n)(1)"),
    ("envy", ("three-card", "seven-card", "imperial"), "NY 5324.41(l)(1), (p)(1)"),
    ("insurance", ("imperial",), "NY 5324.41(p)(1)"),
    ("imperial", ("three-card", "seven-card"), "NY 5324.41(n)(1), (p)(1)"),
):
    for _b in _others:
        _CONFLICTS[frozenset((_a, _b))] = _cite

OFFERABLE = (
    "fortune-bonus",
    "envy",
    "insurance",
    "three-card",
    "seven-card",
    "imperial",
    "side-1-7",
    "progressive",
)

# the wagers (pay tables) each offered name needs
_TABLES_FOR: dict[str, tuple[str, ...]] = {
    "fortune-bonus": ("fortune-bonus",),
    "envy": ("envy",),
    "insurance": ("insurance",),
    "three-card": ("three-card",),
    "seven-card": ("seven-card",),
    "imperial": ("imperial-player", "imperial-banker"),
    "side-1-7": ("side-1-7",),
    "progressive": (),
}

# the least bonus wager the regulation allows: NY 5324.41(l)(2) "A bonus wager shall be no less
# than $1" (the pai gow insurance wager and the fortune pai gow poker bonus wager); a table's
# own minimum (``min_wager_cents``) may be higher, never lower
BONUS_WAGER_FLOOR_CENTS: dict[str, int] = {"fortune-bonus": 100, "insurance": 100}
BONUS_WAGER_FLOOR_CITE = "NY 5324.41(l)(2)"

# per-round payout limits: limit group -> (floor in cents, the wagers it covers, citation)
LIMITS: dict[str, tuple[int, tuple[str, ...], str]] = {
    "fortune": (4_000_000, ("fortune-bonus", "insurance"), "NY 5324.41(m)(4)"),
    "seven-card": (5_000_000, ("seven-card",), "NY 5324.41(o)(3)"),
    "imperial": (4_000_000, ("imperial-player", "imperial-banker"), "NY 5324.41(p)(6)"),
}


class IncompatibleWagers(ValueError):
    """Wagers that the regulation forbids at one table."""


def check_offered(offered: Iterable[str], where: str = "offered") -> None:
    """Raise IncompatibleWagers naming the first pair that may not be offered together.

    By the letter of the rules: the fortune bonus (and so the envy bonus, which needs it) excludes
    the three-card, seven-card and imperial wagers (l)(1), (n)(1); the imperial bonus excludes the
    insurance, fortune bonus, envy, three-card and seven-card wagers (p)(1). The insurance wager
    with the three-card/seven-card bonus is not forbidden by any of the three paragraphs. The envy
    bonus needs the fortune bonus (l)(3). Unknown names are a ValueError.
    """
    names = list(offered)
    for i, name in enumerate(names):
        if name not in OFFERABLE:
            raise ValueError(f"{where}[{i}]: unknown wager {name!r}; one of {', '.join(OFFERABLE)}")
    seen = set(names)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            cite = _CONFLICTS.get(frozenset((a, b)))
            if cite is not None:
                raise IncompatibleWagers(
                    f"{where}: {a!r} and {b!r} may not be offered at the same table ({cite})"
                )
    if "envy" in seen and "fortune-bonus" not in seen:
        raise IncompatibleWagers(
            f"{where}: 'envy' needs 'fortune-bonus': the envy bonus is paid on a fortune pai gow "
            "poker bonus wager of $5 or more (NY 5324.41(l)(3))"
        )


# --- a loaded pay table -------------------------------------------------------------------------


@dataclass(frozen=True)
class PayTable:
    """One wager's pay table: what each line pays. Checked against the regulation at load."""

    wager: str
    schedule: str
    pays: Mapping[str, Odds | int]
    name: str = ""

    def payout(self, line: str, wager_cents: int) -> int:
        """Cents won on ``line`` (the wager itself is returned besides; an envy amount is fixed)."""
        pay = self.pays[line]
        return pay.pay(wager_cents) if isinstance(pay, Odds) else pay

    def best(self, lines: Iterable[str], wager_cents: int = 100) -> tuple[str, int] | None:
        """The single best paying line among ``lines`` that this table pays, and its payout."""
        paid = [(self.payout(line, wager_cents), line) for line in lines if line in self.pays]
        if not paid:
            return None
        amount, line = max(paid, key=lambda p: (p[0], _rank_of(self.pays, p[1])))
        return line, amount

    @property
    def top_ratio(self) -> Fraction:
        """The highest odds of the table (for the payout-limit check)."""
        return max(
            (p.ratio for p in self.pays.values() if isinstance(p, Odds)), default=Fraction(0)
        )


def _rank_of(pays: Mapping[str, Odds | int], line: str) -> int:
    return list(pays).index(line)


def side_wager_win_cents(wager_cents: int, odds: Fraction) -> int:
    """NY (j)(2)(vi), NJ 11.8C(b)6: what a winning 1-7 side wager wins at ``odds`` (5.5:1 to
    6:1), rounded down to the whole dollar; the wager itself is returned besides. The one place
    this rule is computed: the round (its configured odds) and the pay tables both call it."""
    if wager_cents < 0:
        raise ValueError(f"wager_cents: must not be negative, got {wager_cents}")
    win = wager_cents * odds.numerator // odds.denominator
    return win - win % 100


def side_wager_payout(table: PayTable, wager_cents: int) -> int:
    """A winning 1-7 side wager's payout by a side-1-7 pay table (`side_wager_win_cents`)."""
    if table.wager != "side-1-7":
        raise ValueError(f"{table.name or table.wager}: not a 1-7 side wager table")
    pay = table.pays["hit"]
    if not isinstance(pay, Odds):
        raise ValueError(f"{table.name or table.wager}: the hit line must pay odds")
    return side_wager_win_cents(wager_cents, Fraction(pay.num, pay.den))


def envy_payment(envy: PayTable, other_hands: Iterable[Iterable[str]]) -> int:
    """NY (l)(3), (l)(4)(iii)(a), (m)(2): the envy bonus for one player with an envy marker: the
    fixed amount of the best envy line of each other hand at the table that makes one (four of a
    kind or better), summed. ``other_hands`` are the fortune lines (sevencard.fortune_lines) of the
    other hands; which hands count is the round's decision."""
    if envy.wager != "envy":
        raise ValueError(f"{envy.name or envy.wager}: not an envy bonus table")
    total = 0
    for lines in other_hands:
        best = envy.best(lines)
        total += best[1] if best else 0
    return total


def apply_payout_limit(total_cents: int, limit_cents: int | None) -> int:
    """A round's payout to one player after the facility's limit ((m)(4), (o)(3), (p)(6))."""
    return total_cents if limit_cents is None else min(total_cents, limit_cents)


def paytable_from_mapping(data: Mapping[str, object], where: str) -> PayTable:
    """Build and check one pay table from its TOML mapping (format in docs/settlement.md).

    Keys: ``wager`` (a wager of REGULATION), ``schedule`` (the regulation's table letter, or
    "standard"), optional ``name``, and ``[pays]`` mapping every line of that schedule to odds
    "N:M" (or, for the envy bonus, an amount in integer cents). Unknown keys or lines, a missing
    line, and a payout below the regulation (or not equal, where it is fixed) are ValueErrors
    whose message starts with the key path.
    """
    _no_unknown(data, {"wager", "schedule", "name", "pays"}, where)
    wager = data.get("wager")
    if not isinstance(wager, str) or wager not in REGULATION:
        raise ValueError(f"{where}.wager: {wager!r} is not one of {', '.join(REGULATION)}")
    rule = REGULATION[wager]
    schedule = data.get("schedule")
    if not isinstance(schedule, str) or schedule not in rule.schedules:
        raise ValueError(
            f"{where}.schedule: {schedule!r} is not a {rule.cite} table; one of "
            f"{', '.join(rule.schedules)}"
        )
    name = data.get("name", "")
    if not isinstance(name, str):
        raise ValueError(f"{where}.name: a string, not {name!r}")
    pays_raw = data.get("pays")
    if not isinstance(pays_raw, Mapping):
        raise ValueError(f"{where}.pays: a table of line = payout is required")
    regulation = rule.schedules[schedule]
    for line in pays_raw:
        if line not in regulation:
            raise ValueError(
                f"{where}.pays.{line}: not a line of {rule.cite} (lines: {', '.join(regulation)})"
            )
    pays: dict[str, Odds | int] = {}
    for line, minimum in regulation.items():
        key = f"{where}.pays.{line}"
        if line not in pays_raw:
            raise ValueError(f"{key}: missing; {rule.cite} requires it")
        raw = pays_raw[line]
        if rule.kind == "amount":
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise ValueError(f"{key}: an amount in integer cents, not {raw!r}")
            assert isinstance(minimum, int)
            if raw != minimum:
                raise ValueError(
                    f"{key}: pays {raw} cents; {rule.cite} table {schedule} fixes it at "
                    f"{minimum} cents"
                )
            pays[line] = raw
            continue
        odds = Odds.parse(raw, key)
        assert isinstance(minimum, Odds)
        _check_odds(odds, minimum, rule, line, key, schedule)
        pays[line] = odds
    return PayTable(wager, schedule, pays, name)


def _check_odds(
    odds: Odds, minimum: Odds, rule: WagerRule, line: str, key: str, sched: str
) -> None:
    if rule.rule == "exact" and odds.ratio != minimum.ratio:
        raise ValueError(f"{key}: pays {odds}; {rule.cite} sets it at {minimum}")
    if odds.ratio < minimum.ratio:
        table = "" if sched == "standard" else f" table {sched}"
        raise ValueError(f"{key}: pays {odds}, less than {minimum} required by {rule.cite}{table}")
    maximum = rule.maximum.get(line)
    if maximum is not None and odds.ratio > maximum.ratio:
        raise ValueError(f"{key}: pays {odds}, more than {maximum} allowed by {rule.cite}")


def parse_paytable(text: str, where: str) -> PayTable:
    """A pay table from TOML text; a TOML syntax error is a ValueError naming ``where``."""
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not valid TOML: {exc}") from exc
    return paytable_from_mapping(data, where)


#: The shipped bonus pay tables (``fsm/data/paytables``; read as files, as the progressive tables
#: are: ``importlib.resources`` cost ``tablectl config check`` tempfile and shutil).
DATA_DIR = Path(__file__).parent.parent / "data" / "paytables"
BUILTIN = (
    "fortune-bonus-a",
    "fortune-bonus-b",
    "fortune-bonus-c",
    "envy-a",
    "envy-b",
    "envy-c",
    "insurance-a",
    "insurance-b",
    "insurance-c",
    "insurance-d",
    "insurance-e",
    "three-card",
    "seven-card-a",
    "seven-card-b",
    "imperial-player",
    "imperial-banker",
    "side-1-7-5.5",
    "side-1-7-6",
)


def load_builtin(name: str) -> PayTable:
    """One of the pay tables shipped in fsm/data/paytables (read-only package data)."""
    if name not in BUILTIN:
        raise ValueError(f"paytable: {name!r} is not a shipped table; one of {', '.join(BUILTIN)}")
    text = (DATA_DIR / f"{name}.toml").read_text("utf-8")
    return parse_paytable(text, f"paytables/{name}.toml")


# --- the table's offering of bonus wagers -------------------------------------------------------


@dataclass(frozen=True)
class BonusConfig:
    """Which bonus wagers a table offers, their pay tables, limits and the royal-match choice."""

    offered: tuple[str, ...]
    tables: Mapping[str, PayTable]
    limits_cents: Mapping[str, int]
    min_wager_cents: Mapping[str, int]
    royal_match: sc.RoyalMatch = "king-queen"

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str) -> BonusConfig:
        """Validate the ``[bonus]`` section.

        Keys: ``offered`` (list of OFFERABLE names, checked by check_offered), ``royal_match``
        ("king-queen" (c)(6)(ii)(a) or "ace-king" (c)(6)(ii)(b)), ``tables`` (wager -> a shipped
        table name or an inline pay table), ``limits_cents`` (group -> per-round payout limit),
        ``min_wager_cents`` (wager -> the table's minimum wager, used for the "or the maximum one
        player could win betting the minimum wagers" floor of the limits).
        """
        _no_unknown(
            data, {"offered", "royal_match", "tables", "limits_cents", "min_wager_cents"}, where
        )
        offered_raw = data.get("offered", [])
        if not isinstance(offered_raw, list) or not all(isinstance(x, str) for x in offered_raw):
            raise ValueError(f"{where}.offered: a list of wager names, not {offered_raw!r}")
        offered = tuple(str(x) for x in offered_raw)
        if len(set(offered)) != len(offered):
            raise ValueError(f"{where}.offered: a wager is listed twice")
        check_offered(offered, f"{where}.offered")
        royal_match = data.get("royal_match", "king-queen")
        if royal_match not in sc.ROYAL_MATCH_CHOICES:
            raise ValueError(
                f"{where}.royal_match: {royal_match!r} is not one of "
                f"{', '.join(sc.ROYAL_MATCH_CHOICES)} (NY (c)(6)(ii))"
            )
        tables_raw = _mapping(data.get("tables", {}), f"{where}.tables")
        needed = [w for name in offered for w in _TABLES_FOR[name]]
        for key in tables_raw:
            if key not in needed:
                raise ValueError(f"{where}.tables.{key}: not a pay table of an offered wager")
        tables: dict[str, PayTable] = {}
        for wager in needed:
            key = f"{where}.tables.{wager}"
            if wager not in tables_raw:
                raise ValueError(f"{key}: missing; the offered wager needs a pay table")
            raw = tables_raw[wager]
            if isinstance(raw, str):
                table = load_builtin(raw)
            else:
                table = paytable_from_mapping(_mapping(raw, key), key)
            if table.wager != wager:
                raise ValueError(f"{key}: the table pays {table.wager!r}, not {wager!r}")
            tables[wager] = table
        if "envy" in tables and tables["envy"].schedule != tables["fortune-bonus"].schedule:
            raise ValueError(
                f"{where}.tables.envy: envy table {tables['envy'].schedule} must correspond with "
                f"fortune bonus table {tables['fortune-bonus'].schedule} (NY 5324.41(m)(2))"
            )
        mins = _cents_map(data.get("min_wager_cents", {}), f"{where}.min_wager_cents", needed)
        for wager, floor_cents in BONUS_WAGER_FLOOR_CENTS.items():
            if wager not in tables:
                continue
            if wager in mins and mins[wager] < floor_cents:
                raise ValueError(
                    f"{where}.min_wager_cents.{wager}: {mins[wager]} cents is below the "
                    f"${floor_cents // 100} a bonus wager must be at least "
                    f"({BONUS_WAGER_FLOOR_CITE})"
                )
            mins.setdefault(wager, floor_cents)
        limits = _cents_map(data.get("limits_cents", {}), f"{where}.limits_cents", None)
        for group, limit in limits.items():
            key = f"{where}.limits_cents.{group}"
            if group not in LIMITS:
                raise ValueError(f"{key}: not a limit group; one of {', '.join(LIMITS)}")
            floor, covered, cite = LIMITS[group]
            if not any(w in tables for w in covered):
                raise ValueError(f"{key}: none of its wagers is offered")
            at_min = sum(
                tables[w].top_ratio * mins[w] for w in covered if w in tables and w in mins
            )
            need = max(floor, int(-(-at_min // 1)))
            if limit < need:
                raise ValueError(
                    f"{key}: {limit} cents is below the least limit of {need} cents ({cite}: at "
                    f"least ${floor // 100:,} or the most one player could win betting the "
                    "minimum wagers)"
                )
        return cls(offered, tables, limits, mins, royal_match)

    def check_wager(self, wager: str, cents: int) -> None:
        """Raise ValueError unless ``cents`` is a wager the table accepts on ``wager``: an offered
        wager, at least the table's minimum and, for the insurance and fortune bonus wagers, at
        least $1 (NY 5324.41(l)(2))."""
        if wager not in self.tables:
            raise ValueError(f"{wager}: not a wager offered at this table")
        if isinstance(cents, bool) or not isinstance(cents, int):
            raise ValueError(f"{wager}: a wager is whole cents, not {cents!r}")
        least = max(self.min_wager_cents.get(wager, 0), BONUS_WAGER_FLOOR_CENTS.get(wager, 1))
        if cents < least:
            cite = f" ({BONUS_WAGER_FLOOR_CITE})" if wager in BONUS_WAGER_FLOOR_CENTS else ""
            raise ValueError(f"{wager}: a wager of {cents} cents is below the least, {least}{cite}")


def _no_unknown(data: Mapping[str, object], allowed: set[str], where: str) -> None:
    check_keys(table_value(data, where), where, sorted(allowed))  # fsm.configread


def _mapping(raw: object, where: str) -> Mapping[str, object]:
    return table_value(raw, where)


def _cents_map(raw: object, where: str, allowed: list[str] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, value in _mapping(raw, where).items():
        if allowed is not None and key not in allowed:
            raise ValueError(f"{where}.{key}: not a pay table of an offered wager")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{where}.{key}: an amount in whole cents >= 0, not {value!r}")
        out[key] = value
    return out
