"""The house-way rule vocabulary: what a house-way TOML file may say, parsed and checked.

NJ 11.9(d) and NY 5324.41(g)(2): each casino files the manner in which the dealer's hands are set;
the controller holds that manner as data (one TOML file per way, ``fsm/data/houseways/``). This
module turns one parsed TOML document into a frozen ``WayRules`` or raises ``HouseWayError`` whose
message starts with the full key path (``reference.two_pair.rules[2].play: ...``). The vocabulary is
documented in docs/houseway.md. Must never read files, never set a hand (``fsm.rules.houseway``
does), and never accept a key it does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from fsm.configread import ConfigValueError, str_value, table_value, unknown_keys
from fsm.rules.cards import ACE, RANK_CHARS

ALL_RANKS: frozenset[int] = frozenset(range(2, 15))

# Pair classes of hands-and-house-way.md: low 2-6, medium 7-10, high J-K, aces.
RANK_CLASSES: dict[str, frozenset[int]] = {
    "low": frozenset(range(2, 7)),
    "medium": frozenset(range(7, 11)),
    "high": frozenset(range(11, 14)),
    "aces": frozenset({ACE}),
    "any": ALL_RANKS,
}

Play = Literal["split", "keep", "split_unless_singleton_front"]
PLAYS: tuple[str, ...] = ("split", "keep", "split_unless_singleton_front")

StraightMode = Literal["own_rule", "best_front", "pair_front_else_own_rule"]
STRAIGHT_MODES: tuple[str, ...] = ("own_rule", "best_front", "pair_front_else_own_rule")

# Hand classes for which a straight, flush or straight flush can be present in the seven cards.
STRAIGHT_CLASSES: tuple[str, ...] = (
    "no_pair",
    "one_pair",
    "two_pair",
    "three_pair",
    "trips",
    "full_house",
)


class HouseWayError(ValueError):
    """A house-way file that cannot be used; the message starts with the offending key path."""


@dataclass(frozen=True)
class SplitRule:
    """How to play two pairs (two pair hands) or a four of a kind that could be split in two.

    ``split``: one pair front (the lower pair of two pair; half of the four of a kind);
    ``keep``: both pairs / the four of a kind back, the two highest singletons front;
    ``split_unless_singleton_front``: keep when the highest singleton is at least
    ``singleton_at_least`` (the joker counts as an ace), else split. ``where`` is the entry's key
    within the file, e.g. ``two_pair.rules[2]``.
    """

    play: Play
    singleton_at_least: int | None
    where: str

    def keeps(self, highest_singleton: int) -> bool:
        if self.play == "keep":
            return True
        if self.play == "split":
            return False
        assert self.singleton_at_least is not None
        return highest_singleton >= self.singleton_at_least


@dataclass(frozen=True)
class WayRules:
    """Every decision of one house way, checked complete: each pair of pair ranks has exactly one
    two-pair entry and each rank exactly one four-of-a-kind entry."""

    name: str
    title: str
    source: str
    three_aces_split: bool
    two_pair: Mapping[tuple[int, int], SplitRule]  # (higher pair, lower pair) -> rule
    full_house_keep_pairs: frozenset[int]  # pair ranks for which the full house may stay together
    full_house_keep_front: tuple[int, int] | None  # ...when these two singletons can go front
    four_of_a_kind: Mapping[int, SplitRule]  # quad rank -> rule
    five_aces_keep_pairs: frozenset[int]  # pair ranks that go front with five aces kept back
    straights: Mapping[str, StraightMode]  # hand class -> how a straight/flush changes the rule


# --- small typed readers -----------------------------------------------------------------------


# `fsm.configread`'s readers, their problems raised as HouseWayError (the way's own error type).
def _table(data: object, where: str) -> Mapping[str, object]:
    try:
        return table_value(data, where)
    except ConfigValueError as e:
        raise HouseWayError(str(e)) from None


def _check_keys(
    data: Mapping[str, object], where: str, required: set[str], optional: set[str] | None = None
) -> None:
    optional = optional or set()
    problems = unknown_keys(data, where, sorted(required | optional))
    if problems:
        raise HouseWayError(str(sorted(problems, key=lambda p: p.key)[0]))
    missing = sorted(required - set(data))
    if missing:
        raise HouseWayError(f"{where}.{missing[0]}: missing")


def _string(data: Mapping[str, object], key: str, where: str) -> str:
    try:
        return str_value(data[key], f"{where}.{key}", empty=True)
    except ConfigValueError as e:
        raise HouseWayError(str(e)) from None


def _choice(data: Mapping[str, object], key: str, where: str, allowed: tuple[str, ...]) -> str:
    value = _string(data, key, where)
    if value not in allowed:
        raise HouseWayError(
            f"{where}.{key}: {value!r} is not one of {', '.join(repr(a) for a in allowed)}"
        )
    return value


def parse_rank(text: str, where: str) -> int:
    """One rank: ``2``-``9``, ``T`` or ``10``, ``J``, ``Q``, ``K``, ``A`` (any case)."""
    t = text.strip().upper()
    if t == "10":
        t = "T"
    if len(t) != 1 or t not in RANK_CHARS:
        raise HouseWayError(f"{where}: {text!r} is not a rank (2-9, T or 10, J, Q, K, A)")
    return RANK_CHARS.index(t) + 2


def parse_ranks(value: object, where: str) -> frozenset[int]:
    """A set of ranks: a class name (low, medium, high, aces, any), one rank (``K``), a range
    (``7-10``, ``J-A``) or a list of those."""
    if isinstance(value, list):
        if not value:
            raise HouseWayError(f"{where}: an empty list matches no rank")
        out: set[int] = set()
        for i, item in enumerate(value):
            out |= parse_ranks(item, f"{where}[{i}]")
        return frozenset(out)
    if not isinstance(value, str):
        raise HouseWayError(
            f"{where}: must be a rank class, a rank, a range or a list, not {value!r}"
        )
    text = value.strip().lower()
    if text in RANK_CLASSES:
        return RANK_CLASSES[text]
    if "-" in text:
        lo_text, _, hi_text = text.partition("-")
        lo, hi = parse_rank(lo_text, where), parse_rank(hi_text, where)
        if lo > hi:
            raise HouseWayError(f"{where}: range {value!r} runs downwards; write it low-high")
        return frozenset(range(lo, hi + 1))
    return frozenset({parse_rank(text, where)})


def _rank_name(r: int) -> str:
    return "10" if r == 10 else RANK_CHARS[r - 2]


def _split_rule(data: Mapping[str, object], where: str, extra: set[str], key: str) -> SplitRule:
    _check_keys(data, where, {"play"} | extra, {"singleton_at_least"})
    play = _choice(data, "play", where, PLAYS)
    threshold: int | None = None
    if play == "split_unless_singleton_front":
        if "singleton_at_least" not in data:
            raise HouseWayError(f"{where}.singleton_at_least: missing (needed by {play!r})")
        threshold = parse_rank(
            _string(data, "singleton_at_least", where), f"{where}.singleton_at_least"
        )
    elif "singleton_at_least" in data:
        raise HouseWayError(f"{where}.singleton_at_least: only allowed with play = {PLAYS[2]!r}")
    return SplitRule(play, threshold, key)  # type: ignore[arg-type]


def _single_rule(
    data: Mapping[str, object], key: str, where: str, allowed: tuple[str, ...]
) -> None:
    section = _table(data[key], f"{where}.{key}")
    _check_keys(section, f"{where}.{key}", {"rule"})
    _choice(section, "rule", f"{where}.{key}", allowed)


# --- the document ------------------------------------------------------------------------------

TOP_KEYS = {
    "name",
    "no_pair",
    "one_pair",
    "two_pair",
    "three_pair",
    "trips",
    "two_trips",
    "full_house",
    "four_of_a_kind",
    "five_aces",
    "straights_and_flushes",
}


def parse_way(data: Mapping[str, object], where: str) -> WayRules:
    """Check a whole house-way document and return its rules; HouseWayError names the bad key."""
    _check_keys(data, where, TOP_KEYS, {"title", "source"})
    name = _string(data, "name", where)
    title = _string(data, "title", where) if "title" in data else name
    source = _string(data, "source", where) if "source" in data else ""

    # Sections with a single published rule: the key documents it and keeps room for more.
    _single_rule(data, "no_pair", where, ("highest_back",))
    _single_rule(data, "one_pair", where, ("pair_back",))
    _single_rule(data, "three_pair", where, ("highest_pair_front",))
    _single_rule(data, "two_trips", where, ("pair_from_higher_front",))

    trips_where = f"{where}.trips"
    trips = _table(data["trips"], trips_where)
    _check_keys(trips, trips_where, {"rule", "aces"})
    _choice(trips, "rule", trips_where, ("trips_back",))
    three_aces_split = _choice(trips, "aces", trips_where, ("split", "keep")) == "split"

    two_pair = _parse_two_pair(data["two_pair"], where, "two_pair")
    fh_keep_pairs, fh_keep_front = _parse_full_house(data["full_house"], f"{where}.full_house")
    quads = _parse_four_of_a_kind(data["four_of_a_kind"], where, "four_of_a_kind")

    fa_where = f"{where}.five_aces"
    five_aces = _table(data["five_aces"], fa_where)
    _check_keys(five_aces, fa_where, {"rule"}, {"keep_if_pair"})
    _choice(five_aces, "rule", fa_where, ("split",))
    fa_keep = (
        parse_ranks(five_aces["keep_if_pair"], f"{fa_where}.keep_if_pair")
        if "keep_if_pair" in five_aces
        else frozenset()
    )
    if ACE in fa_keep:
        raise HouseWayError(f"{fa_where}.keep_if_pair: five aces leave no pair of aces to match")

    sf_where = f"{where}.straights_and_flushes"
    sf = _table(data["straights_and_flushes"], sf_where)
    _check_keys(sf, sf_where, set(STRAIGHT_CLASSES))
    straights: dict[str, StraightMode] = {
        key: _choice(sf, key, sf_where, STRAIGHT_MODES)  # type: ignore[misc]
        for key in STRAIGHT_CLASSES
    }
    if straights["no_pair"] == "pair_front_else_own_rule":
        raise HouseWayError(f"{sf_where}.no_pair: a hand with no pair has no pair to put in front")

    return WayRules(
        name=name,
        title=title,
        source=source,
        three_aces_split=three_aces_split,
        two_pair=two_pair,
        full_house_keep_pairs=fh_keep_pairs,
        full_house_keep_front=fh_keep_front,
        four_of_a_kind=quads,
        five_aces_keep_pairs=fa_keep,
        straights=straights,
    )


def _parse_two_pair(raw: object, top: str, key: str) -> dict[tuple[int, int], SplitRule]:
    where = f"{top}.{key}"
    section = _table(raw, where)
    _check_keys(section, where, {"rules"})
    entries = section["rules"]
    if not isinstance(entries, list) or not entries:
        raise HouseWayError(f"{where}.rules: must be a non-empty list of [[{where}.rules]] tables")
    table: dict[tuple[int, int], SplitRule] = {}
    for i, raw_entry in enumerate(entries):
        ew = f"{where}.rules[{i}]"
        entry = _table(raw_entry, ew)
        if "higher" not in entry:
            raise HouseWayError(f"{ew}.higher: missing (the ranks of the higher pair)")
        higher = parse_ranks(entry["higher"], f"{ew}.higher")
        lower = parse_ranks(entry["lower"], f"{ew}.lower") if "lower" in entry else ALL_RANKS
        keys = {"higher"} | ({"lower"} if "lower" in entry else set())
        rule = _split_rule(entry, ew, keys, f"{key}.rules[{i}]")
        matched = False
        for h in higher:
            for lo in lower:
                if lo >= h:
                    continue
                matched = True
                if (h, lo) in table:
                    raise HouseWayError(
                        f"{ew}: pairs of {_rank_name(h)}s and {_rank_name(lo)}s are already "
                        f"covered by {top}.{table[(h, lo)].where}; "
                        "each two pair needs exactly one rule"
                    )
                table[(h, lo)] = rule
        if not matched:
            raise HouseWayError(
                f"{ew}: matches no two pair (the higher pair must outrank the lower)"
            )
    for h in range(3, 15):
        for lo in range(2, h):
            if (h, lo) not in table:
                raise HouseWayError(
                    f"{where}.rules: no rule for pairs of {_rank_name(h)}s and {_rank_name(lo)}s"
                )
    return table


def _parse_full_house(raw: object, where: str) -> tuple[frozenset[int], tuple[int, int] | None]:
    section = _table(raw, where)
    _check_keys(section, where, {"rule", "with_two_pair"}, {"keep_if_pair", "keep_if_front"})
    _choice(section, "rule", where, ("split",))
    _choice(section, "with_two_pair", where, ("highest_pair_front",))
    if ("keep_if_pair" in section) != ("keep_if_front" in section):
        missing = "keep_if_front" if "keep_if_pair" in section else "keep_if_pair"
        raise HouseWayError(f"{where}.{missing}: keep_if_pair and keep_if_front go together")
    if "keep_if_pair" not in section:
        return frozenset(), None
    pairs = parse_ranks(section["keep_if_pair"], f"{where}.keep_if_pair")
    front = section["keep_if_front"]
    fw = f"{where}.keep_if_front"
    if not isinstance(front, list) or len(front) != 2:
        raise HouseWayError(f'{fw}: must be a list of the two front ranks, e.g. ["A", "K"]')
    ranks: list[int] = []
    for i, item in enumerate(front):
        if not isinstance(item, str):
            raise HouseWayError(f'{fw}[{i}]: must be a rank string such as "A", not {item!r}')
        ranks.append(parse_rank(item, f"{fw}[{i}]"))
    a, b = ranks
    if a == b:
        raise HouseWayError(f"{fw}: two different ranks (a pair in front is the split itself)")
    hi, lo = max(a, b), min(a, b)
    return pairs, (hi, lo)


def _parse_four_of_a_kind(raw: object, top: str, key: str) -> dict[int, SplitRule]:
    where = f"{top}.{key}"
    section = _table(raw, where)
    _check_keys(section, where, {"with_pair", "with_trips", "rules"})
    _choice(section, "with_pair", where, ("pair_front",))
    _choice(section, "with_trips", where, ("pair_from_trips_front",))
    entries = section["rules"]
    if not isinstance(entries, list) or not entries:
        raise HouseWayError(f"{where}.rules: must be a non-empty list of [[{where}.rules]] tables")
    table: dict[int, SplitRule] = {}
    for i, raw_entry in enumerate(entries):
        ew = f"{where}.rules[{i}]"
        entry = _table(raw_entry, ew)
        if "ranks" not in entry:
            raise HouseWayError(f"{ew}.ranks: missing (the ranks of the four of a kind)")
        ranks = parse_ranks(entry["ranks"], f"{ew}.ranks")
        rule = _split_rule(entry, ew, {"ranks"}, f"{key}.rules[{i}]")
        for r in sorted(ranks):
            if r in table:
                raise HouseWayError(
                    f"{ew}: four {_rank_name(r)}s are already covered by {top}.{table[r].where}"
                )
            table[r] = rule
    for r in range(2, 15):
        if r not in table:
            raise HouseWayError(f"{where}.rules: no rule for four {_rank_name(r)}s")
    return table


__all__ = [
    "RANK_CLASSES",
    "HouseWayError",
    "SplitRule",
    "WayRules",
    "parse_rank",
    "parse_ranks",
    "parse_way",
]
