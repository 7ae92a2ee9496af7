"""The dealer's house way: how the bank's seven cards are set, driven by a casino's TOML file.

NY 5324.41(g)(2) and NJ 11.9(c),(d): the dealer sets the bank's hand in the manner the casino filed;
NY (q) resets a bank's foul by the house way, so the house way itself must never foul
((g)(1), (g)(5)(iii),(iv)). The code here holds the primitives (classify the seven cards by their
rank groups with the joker counted as an ace; find the splits that keep a straight, flush or
straight flush behind; pick the strongest back hand for a given front); the TOML file
(``fsm/data/houseways/<name>.toml``, vocabulary in ``fsm.rules.houseway_rules`` and
docs/houseway.md)
says which rule applies with which thresholds. ``HouseWay.load`` reads one data file at start-up;
``set`` is pure, deterministic and independent of the order of the cards. Must never do other I/O,
never draw a random number, never produce a foul or a setting of other than the seven cards.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

from fsm.configread import parse_toml
from fsm.rules.cards import ACE, JOKER, Card, CardError, check_distinct
from fsm.rules.houseway_rules import HouseWayError, WayRules, parse_way
from fsm.rules.ranking import (
    DEFAULT_OPTIONS,
    Category,
    RankingOptions,
    Value,
    high_at_least_low,
    value2,
    value5,
    values_of_fives,
)
from fsm.rules.setting import Setting

DATA_DIR = Path(__file__).parent.parent / "data" / "houseways"
DEFAULT_WAY = "reference"

# The 21 ways to choose the two front cards out of seven (indices into the sorted hand), with the
# five back indices beside them.
_SPLITS: tuple[tuple[int, int, tuple[int, int, int, int, int]], ...] = tuple(
    (i, j, tuple(k for k in range(7) if k not in (i, j)))  # type: ignore[misc]
    for i, j in combinations(range(7), 2)
)
_BACKS: tuple[tuple[int, int, int, int, int], ...] = tuple(back for _, _, back in _SPLITS)
# The joker counts as an ace for pairing (NY 5324.41(c)(1)); a card's "pairing rank".
_PRANK: tuple[int, ...] = (*(c // 4 + 2 for c in range(52)), ACE)
# The low hand's value by the pairing ranks of its two cards: value2's, looked up (all_splits).
_FRONT: tuple[tuple[Value, ...], ...] = tuple(
    tuple(
        (Category.PAIR, a) if a == b else (Category.HIGH_CARD, max(a, b), min(a, b))
        for b in range(ACE + 1)
    )
    for a in range(ACE + 1)
)
# Rank bits for the straight pre-check: bit r for rank r, the ace also as bit 1.
_STRAIGHT_WINDOWS: tuple[int, ...] = tuple(0b11111 << low for low in range(1, 11))


class Decision(NamedTuple):
    """The setting, the rule of the house way that chose it, and whether the no-foul fallback had
    to replace the rule's choice (never for the shipped ways; tests hold it to that)."""

    setting: Setting
    rule: str
    fallback: bool


class _Split(NamedTuple):
    front: Value
    back: Value
    i: int
    j: int


def available() -> list[str]:
    """Names of the house ways shipped with the controller, sorted."""
    return sorted(p.stem for p in DATA_DIR.glob("*.toml"))


@dataclass(frozen=True)
class HouseWay:
    """One casino's house way. Build with ``HouseWay.load(name_or_path)`` or ``from_mapping``."""

    rules: WayRules

    @property
    def name(self) -> str:
        return self.rules.name

    # --- loading ---------------------------------------------------------------------------

    @staticmethod
    def available() -> list[str]:
        return available()

    @classmethod
    def load(cls, name_or_path: str | Path = DEFAULT_WAY) -> HouseWay:
        """A shipped way by name (see ``available()``) or a TOML file by path.

        HouseWayError (a ValueError) names the file and the bad key; OSError if a path is
        unreadable.
        """
        text = str(name_or_path)
        if isinstance(name_or_path, str) and "/" not in text and not text.endswith(".toml"):
            if text not in available():
                raise HouseWayError(
                    f"house way {text!r}: no such way; shipped ways: {', '.join(available())}"
                )
            return _load_shipped(text)
        return _load_path(Path(name_or_path))

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str = "house_way") -> HouseWay:
        """A way from a parsed TOML document; HouseWayError's message starts with the key path."""
        return cls(parse_way(data, where))

    # --- setting ---------------------------------------------------------------------------

    def set(self, cards7: Sequence[Card], opts: RankingOptions = DEFAULT_OPTIONS) -> Setting:
        """The dealer's setting of seven distinct cards by this house way (never a foul)."""
        return self.explain(cards7, opts).setting

    def explain(self, cards7: Sequence[Card], opts: RankingOptions = DEFAULT_OPTIONS) -> Decision:
        """Like ``set``, also naming the rule applied; CardError unless 7 distinct cards."""
        if len(cards7) != 7:
            raise CardError(f"the house way sets 7 cards, got {len(cards7)}")
        check_distinct(cards7)
        return _Hand(self.rules, tuple(sorted(cards7)), opts).decide()


@cache
def _load_shipped(name: str) -> HouseWay:
    way = _load_path(DATA_DIR / f"{name}.toml")
    if way.name != name:
        raise HouseWayError(f"{name}.name: {way.name!r} must match the file name {name!r}")
    return way


def _load_path(path: Path) -> HouseWay:
    try:
        with path.open("rb") as f:
            data = parse_toml(f.read())
    except FileNotFoundError:
        raise HouseWayError(f"{path}: no such house-way file") from None
    except tomllib.TOMLDecodeError as e:
        raise HouseWayError(f"{path}: not valid TOML: {e}") from None
    return HouseWay.from_mapping(data, where=path.stem)


# --- the engine --------------------------------------------------------------------------------


def _straight_or_flush_possible(cards: tuple[Card, ...]) -> bool:
    """True if some five of the seven cards could make a straight or a flush (a cheap superset
    test; the exact answer comes from evaluating the backs)."""
    joker = cards[-1] == JOKER  # the hand is sorted and the joker is card 52
    need = 4 if joker else 5
    suits = [0, 0, 0, 0]
    bits = 0
    for c in cards:
        if c == JOKER:
            continue
        suits[c & 3] += 1
        r = (c >> 2) + 2
        bits |= 1 << r
        if r == ACE:
            bits |= 2
    if max(suits) >= need:
        return True
    return any((bits & w).bit_count() >= need for w in _STRAIGHT_WINDOWS)


class _Hand:
    """One seven-card hand being set: sorted cards, pairing ranks, rank groups, lazy splits."""

    __slots__ = ("_all", "cards", "groups", "opts", "pr", "rules")

    def __init__(self, rules: WayRules, cards: tuple[Card, ...], opts: RankingOptions) -> None:
        self.rules = rules
        self.cards = cards
        self.opts = opts
        self.pr = tuple(_PRANK[c] for c in cards)
        counts: dict[int, int] = {}
        for r in self.pr:
            counts[r] = counts.get(r, 0) + 1
        # (count, rank), largest groups first, higher ranks first within a size
        self.groups = sorted(((n, r) for r, n in counts.items()), reverse=True)
        self._all: list[_Split] | None = None

    # primitives ----------------------------------------------------------------------------

    def all_splits(self) -> list[_Split]:
        """All 21 (front value, back value) pairs, evaluated once per hand."""
        if self._all is None:
            pr = self.pr
            backs = values_of_fives(self.cards, _BACKS, self.opts)
            self._all = [
                _Split(_FRONT[pr[i]][pr[j]], back, i, j)
                for (i, j, _), back in zip(_SPLITS, backs, strict=True)
            ]
        return self._all

    def front_of(self, a: int, b: int) -> _Split:
        """The split whose front holds ranks a and b (joker = ace) with the strongest back."""
        cs, pr, opts = self.cards, self.pr, self.opts
        best: _Split | None = None
        for i, j, back in _SPLITS:
            if (pr[i] == a and pr[j] == b) or (pr[i] == b and pr[j] == a):
                v = value5([cs[k] for k in back], opts)
                if best is None or v > best.back:
                    best = _Split(value2((cs[i], cs[j])), v, i, j)
        assert best is not None, "the rule asked for a front the seven cards cannot make"
        return best

    def singles(self) -> list[int]:
        """Ranks of the cards in no group, highest first."""
        return [r for n, r in self.groups if n == 1]

    def straight_choice(self, hand_class: str) -> _Split | None:
        """The setting a straight, flush or straight flush gives this hand class, or None to apply
        the class's own rule (no straight/flush available, or the way says so)."""
        mode = self.rules.straights[hand_class]
        if mode == "own_rule" or not _straight_or_flush_possible(self.cards):
            return None
        candidates = [s for s in self.all_splits() if s.back[0] >= Category.STRAIGHT]
        if mode == "pair_front_else_own_rule":
            candidates = [s for s in candidates if s.front[0] == Category.PAIR]
        if not candidates:
            return None
        return max(candidates, key=lambda s: (s.front, s.back))

    # the rules, by hand class -------------------------------------------------------------

    def decide(self) -> Decision:
        shape = tuple(n for n, _ in self.groups)
        ranks = [r for _, r in self.groups]
        rules = self.rules
        rule: str
        chosen: _Split
        if shape[0] == 5:  # five aces: four aces and the joker
            other = ranks[1]
            if shape == (5, 2) and other in rules.five_aces_keep_pairs:
                rule, chosen = "five_aces.keep_if_pair", self.front_of(other, other)
            else:
                rule, chosen = "five_aces.rule", self.front_of(ACE, ACE)
        elif shape[0] == 4:
            quad = ranks[0]
            if shape == (4, 3):
                rule, chosen = "four_of_a_kind.with_trips", self.front_of(ranks[1], ranks[1])
            elif shape == (4, 2, 1):
                rule, chosen = "four_of_a_kind.with_pair", self.front_of(ranks[1], ranks[1])
            else:
                entry = rules.four_of_a_kind[quad]
                s = self.singles()
                if entry.keeps(s[0]):
                    rule, chosen = f"{entry.where}: keep", self.front_of(s[0], s[1])
                else:
                    rule, chosen = f"{entry.where}: split", self.front_of(quad, quad)
        elif shape == (3, 3, 1):
            rule, chosen = "two_trips.rule", self.front_of(ranks[0], ranks[0])
        elif shape == (3, 2, 2):
            rule, chosen = "full_house.with_two_pair", self.front_of(ranks[1], ranks[1])
        elif shape == (3, 2, 1, 1):
            rule, chosen = self.full_house(ranks)
        elif shape[0] == 3:
            rule, chosen = self.trips(ranks)
        elif shape == (2, 2, 2, 1):
            sf = self.straight_choice("three_pair")
            if sf is not None:
                rule, chosen = "straights_and_flushes.three_pair", sf
            else:
                rule, chosen = "three_pair.rule", self.front_of(ranks[0], ranks[0])
        elif shape[:2] == (2, 2):
            rule, chosen = self.two_pair(ranks)
        elif shape[0] == 2:
            sf = self.straight_choice("one_pair")
            if sf is not None:
                rule, chosen = "straights_and_flushes.one_pair", sf
            else:
                s = self.singles()
                rule, chosen = "one_pair.rule", self.front_of(s[0], s[1])
        else:
            sf = self.straight_choice("no_pair")
            if sf is not None:
                rule, chosen = "straights_and_flushes.no_pair", sf
            else:
                rule, chosen = "no_pair.rule", self.front_of(ranks[1], ranks[2])
        fallback = False
        if not high_at_least_low(chosen.back, chosen.front):
            fallback = True
            chosen = max(
                (s for s in self.all_splits() if high_at_least_low(s.back, s.front)),
                key=lambda s: (s.front, s.back),
            )
        return Decision(self.setting(chosen), f"{rules.name}.{rule}", fallback)

    def two_pair(self, ranks: list[int]) -> tuple[str, _Split]:
        sf = self.straight_choice("two_pair")
        if sf is not None:
            return "straights_and_flushes.two_pair", sf
        higher, lower = ranks[0], ranks[1]
        entry = self.rules.two_pair[(higher, lower)]
        s = self.singles()
        if entry.keeps(s[0]):
            return f"{entry.where}: keep", self.front_of(s[0], s[1])
        return f"{entry.where}: split", self.front_of(lower, lower)

    def trips(self, ranks: list[int]) -> tuple[str, _Split]:
        sf = self.straight_choice("trips")
        if sf is not None:
            return "straights_and_flushes.trips", sf
        s = self.singles()
        if ranks[0] == ACE and self.rules.three_aces_split:
            return "trips.aces: split", self.front_of(ACE, s[0])
        return "trips.rule", self.front_of(s[0], s[1])

    def full_house(self, ranks: list[int]) -> tuple[str, _Split]:
        sf = self.straight_choice("full_house")
        if sf is not None:
            return "straights_and_flushes.full_house", sf
        pair = ranks[1]
        keep_front = self.rules.full_house_keep_front
        s = self.singles()
        if (
            keep_front is not None
            and pair in self.rules.full_house_keep_pairs
            and (s[0], s[1]) == keep_front
        ):
            return "full_house.keep_if_pair", self.front_of(s[0], s[1])
        return "full_house.rule", self.front_of(pair, pair)

    def setting(self, split: _Split) -> Setting:
        cs = self.cards
        front = [cs[split.i], cs[split.j]]
        back = [c for k, c in enumerate(cs) if k not in (split.i, split.j)]

        return Setting(_display_order(back), _display_order(front))


def _display_order(hand: list[Card]) -> tuple[Card, ...]:
    """A hand as a dealer lays it out: largest rank group first, then higher ranks (the joker with
    the aces), e.g. ``7s 7d 7c Ac Ks``."""
    counts: dict[int, int] = {}
    for c in hand:
        counts[_PRANK[c]] = counts.get(_PRANK[c], 0) + 1
    return tuple(sorted(hand, key=lambda c: (counts[_PRANK[c]], _PRANK[c], c), reverse=True))


__all__ = ["DEFAULT_WAY", "Decision", "HouseWay", "HouseWayError", "available"]
