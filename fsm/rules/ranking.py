"""Hand ranking: five-card high hands and two-card low hands, with the joker as a bug.

NY 5324.41(c): the order of hands (c)(2), the joker as an ace except to complete a straight, flush
or straight flush (c)(1),(3), A-2-3-4-5 as the second-highest straight (default) or the lowest
(c)(4), the kicker rule and copy hands (c)(5). A hand's ``value`` is a tuple that compares
lexicographically in the regulation's order; equal values are copy hands.

The rules live in the reference evaluator ``_reference_value``, written to be read against the
regulation. ``evaluate5`` answers from a table built once from that evaluator over every rank
pattern, so the two can never disagree. Must never do I/O or draw random numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from itertools import combinations, combinations_with_replacement
from typing import Literal, NamedTuple

from fsm.rules.cards import ACE, JOKER, Card, CardError, check_distinct, rank, suit


class Category(IntEnum):
    """Poker hand categories, lowest to highest (NY 5324.41(c)(2))."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9
    FIVE_ACES = 10

    @property
    def label(self) -> str:
        """The category's name in the command-line contract, e.g. ``four-of-a-kind``."""
        return self.name.lower().replace("_", "-")


AceLow = Literal["second", "lowest"]
JokerFlush = Literal["highest-missing", "ace"]


@dataclass(frozen=True)
class RankingOptions:
    """The two ranking decisions a gaming facility makes (hands-and-house-way.md).

    ace_low_straight: "second" (A-2-3-4-5 ranks just below A-K-Q-J-10, NY (c)(2)(iii),(vii)) or
    "lowest" (NY (c)(4)). joker_flush: the joker completing a flush fills the highest rank missing
    from that suit ("highest-missing") or always counts as an ace ("ace") (NY (c)(3)).
    """

    ace_low_straight: AceLow = "second"
    joker_flush: JokerFlush = "highest-missing"

    def __post_init__(self) -> None:
        if self.ace_low_straight not in ("second", "lowest"):
            raise ValueError(
                f"ace_low_straight must be 'second' or 'lowest', not {self.ace_low_straight!r}"
            )
        if self.joker_flush not in ("highest-missing", "ace"):
            raise ValueError(
                f"joker_flush must be 'highest-missing' or 'ace', not {self.joker_flush!r}"
            )


DEFAULT_OPTIONS = RankingOptions()

Value = tuple[int, ...]


class HighHand(NamedTuple):
    """A five-card hand's rank: category, whether it is natural (no joker), comparable value."""

    category: Category
    natural: bool
    value: Value


class LowHand(NamedTuple):
    """A two-card hand's rank: PAIR or HIGH_CARD and its comparable value."""

    category: Category
    value: Value


# --- the reference evaluator: the rules, written to be read ------------------------------------


def _straight_order(high: int, wheel: bool, opts: RankingOptions) -> int:
    """Order of a straight among straights: 6-high = 1 ... A-high = 10; A-2-3-4-5 by the option."""
    if wheel:
        return 9 if opts.ace_low_straight == "second" else 0
    return 10 if high == ACE else high - 5


def _straight_high(ranks: Sequence[int]) -> tuple[int, bool] | None:
    """(highest rank, is A-2-3-4-5) if five distinct ranks are consecutive, else None."""
    rs = sorted(set(ranks))
    if len(rs) != 5:
        return None
    if rs == [2, 3, 4, 5, ACE]:
        return 5, True
    if rs[4] - rs[0] == 4:
        return rs[4], False
    return None


def _natural_value(ranks: Sequence[int], flush: bool, opts: RankingOptions) -> Value:
    """Value of five ranks (an ace may appear five times: five aces) with or without a flush."""
    counts = Counter(ranks)
    # groups ordered by (count, rank) descending: the kicker rule (c)(5)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = [n for _, n in groups]
    order = [r for r, _ in groups]
    if shape == [5]:
        return (Category.FIVE_ACES,)  # only four aces and the joker can make five of a rank
    straight = _straight_high(ranks)
    if straight is not None and flush:
        high, wheel = straight
        if high == ACE and not wheel:
            return (Category.ROYAL_FLUSH,)
        return (Category.STRAIGHT_FLUSH, _straight_order(high, wheel, opts))
    if shape == [4, 1]:
        return (Category.FOUR_OF_A_KIND, *order)
    if shape == [3, 2]:
        return (Category.FULL_HOUSE, *order)
    if flush:
        return (Category.FLUSH, *sorted(ranks, reverse=True))
    if straight is not None:
        high, wheel = straight
        return (Category.STRAIGHT, _straight_order(high, wheel, opts))
    if shape == [3, 1, 1]:
        return (Category.THREE_OF_A_KIND, *order)
    if shape == [2, 2, 1]:
        return (Category.TWO_PAIR, *order)
    if shape == [2, 1, 1, 1]:
        return (Category.PAIR, *order)
    return (Category.HIGH_CARD, *order)


def _reference_value(cards: Sequence[Card], opts: RankingOptions) -> Value:
    """The value of five distinct cards by the regulation, trying every use of the joker."""
    naturals = [c for c in cards if c != JOKER]
    ranks = [rank(c) for c in naturals]
    suited = len({suit(c) for c in naturals}) <= 1
    if len(naturals) == 5:
        return _natural_value(ranks, suited, opts)
    # (c)(1): the joker is an ace ...
    best = _natural_value([*ranks, ACE], False, opts)
    # (c)(3): ... or any card that completes a straight, a flush or a straight flush.
    present = {rank(c) for c in naturals}
    for r in range(2, 15):
        for flush in (False, True) if suited else (False,):
            if flush and r in present:
                continue  # the joker stands for a card absent from the hand
            v = _natural_value([*ranks, r], flush, opts)
            if v[0] in (Category.STRAIGHT, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH) or (
                v[0] == Category.FLUSH and opts.joker_flush == "highest-missing"
            ):
                best = max(best, v)
    if suited and opts.joker_flush == "ace":
        flush_as_ace = (Category.FLUSH, *sorted([*ranks, ACE], reverse=True))
        straight_flush = _natural_value([*ranks, ACE], True, opts)
        best = max(best, straight_flush if straight_flush[0] > Category.FLUSH else flush_as_ace)
    return best


# --- the fast path: a table over rank patterns built from the reference ------------------------

RANK_CODE: tuple[int, ...] = tuple(1 << (3 * (c >> 2)) for c in range(53))  # joker: code 13
_SUIT_BIT: tuple[int, ...] = tuple((1 << (c & 3)) if c != JOKER else 0 for c in range(53))
_ONE_SUIT = frozenset((1, 2, 4, 8))


def _pattern_key(cards: Sequence[Card]) -> int:
    return sum(RANK_CODE[c] for c in cards)


class _RankTable(dict[int, Value]):
    """Rank pattern (`_pattern_key`) -> value, each entry computed from the reference on its
    first lookup, from the same hand `_patterns` gives that pattern (so it holds exactly what a
    table built over every pattern holds, only fewer of them). Building all 6,000-odd entries
    took about 0.7 s, which `tablectl config check`'s jackpot check paid for some 500 lookups
    (issue 29). ``flush``: the value of the pattern's hand with every natural card of one suit;
    a pattern with two natural cards of a rank has none (KeyError), as an invalid key has none."""

    def __init__(self, opts: RankingOptions, flush: bool) -> None:
        super().__init__()
        self._opts = opts
        self._flush = flush

    def __missing__(self, key: int) -> Value:
        codes = _codes_of(key)
        if codes is None:
            raise KeyError(key)
        hand = _pattern_hand(codes)
        if self._flush:
            naturals = [c for c in hand if c != JOKER]
            if len({rank(c) for c in naturals}) != len(naturals):
                raise KeyError(key)
            hand = tuple((c >> 2) << 2 if c != JOKER else JOKER for c in hand)
        value = _reference_value(hand, self._opts)
        self[key] = value
        return value


@cache
def rank_tables(opts: RankingOptions) -> tuple[dict[int, Value], dict[int, Value]]:
    """(non-flush table, flush table) from rank pattern to value, from the reference, each entry
    computed when first looked up (`_RankTable`)."""
    return _RankTable(opts, flush=False), _RankTable(opts, flush=True)


def fill_rank_tables(opts: RankingOptions) -> int:
    """Compute every entry of `rank_tables` now (a service before it is ready: its tables then
    never grow while it plays, and no lookup pays for a fill); the number of entries held."""
    plain, flush = rank_tables(opts)
    for hand in _patterns():
        key = _pattern_key(hand)
        _ = plain[key]  # the lookup fills the entry
        with suppress(KeyError):  # a pattern with two natural cards of a rank makes no flush
            _ = flush[key]
    return len(plain) + len(flush)


def _codes_of(key: int) -> tuple[int, ...] | None:
    """The rank codes (13: the joker) of a five-card pattern key, ascending; None when the key
    is no pattern of the 53-card deck (not five cards, five of a rank, two jokers)."""
    if key < 0:
        return None
    codes: list[int] = []
    for code in range(14):
        n = (key >> (3 * code)) & 7
        if n > (1 if code == 13 else 4):
            return None
        codes.extend([code] * n)
    if len(codes) != 5 or key >> (3 * 14):
        return None
    return tuple(codes)


def _pattern_hand(codes: tuple[int, ...]) -> tuple[Card, ...]:
    """One five-card hand, not a flush, of the rank codes ``codes`` (ascending; 13: joker)."""
    hand: list[Card] = []
    for i, code in enumerate(codes):
        if code == 13:
            hand.append(JOKER)
            continue
        s = i % 4
        while code * 4 + s in hand:
            s = (s + 1) % 4
        hand.append(code * 4 + s)
    if len({c & 3 for c in hand if c != JOKER}) == 1 and len(hand) > 1:
        # five distinct ranks placed on one suit by accident: move one card to another suit
        hand[0] = (hand[0] & ~3) | ((hand[0] + 1) & 3) if hand[0] != JOKER else hand[0]
        if len({c & 3 for c in hand if c != JOKER}) == 1:
            hand[1] = (hand[1] & ~3) | ((hand[1] + 1) & 3)
    return tuple(hand)


def _patterns() -> list[tuple[Card, ...]]:
    """One five-card hand, not a flush, for every rank multiset of the 53-card deck."""
    return [
        _pattern_hand(codes)
        for codes in combinations_with_replacement(range(14), 5)  # code 13 is the joker
        if codes.count(13) <= 1 and all(codes.count(r) <= 4 for r in range(13))
    ]


def value5(cards: Sequence[Card], opts: RankingOptions = DEFAULT_OPTIONS) -> Value:
    """The comparable value of five distinct cards (no validation: the hot path)."""
    plain, flush = rank_tables(opts)
    key = _pattern_key(cards)
    bits = 0
    for c in cards:
        bits |= _SUIT_BIT[c]
    if bits in _ONE_SUIT:
        try:
            return flush[key]
        except KeyError:  # two natural cards of a rank: no flush
            pass
    return plain[key]


def values_of_fives(
    cards: Sequence[Card],
    backs: Sequence[tuple[int, int, int, int, int]],
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> list[Value]:
    """`value5` of the five cards at each index set of BACKS into CARDS, the rank codes and suit
    bits of CARDS looked up once (the house way's 21 splits of seven cards): equal to
    ``[value5([cards[k] for k in b], opts) for b in backs]`` without building 21 lists
    (bench/bench_houseway.py: 39,937 house-way settings a second with it, 20,839 before)."""
    plain, flush = rank_tables(opts)
    codes = [RANK_CODE[c] for c in cards]
    suits = [_SUIT_BIT[c] for c in cards]
    out: list[Value] = []
    append = out.append
    for a, b, c, d, e in backs:
        key = codes[a] + codes[b] + codes[c] + codes[d] + codes[e]
        if (suits[a] | suits[b] | suits[c] | suits[d] | suits[e]) in _ONE_SUIT:
            try:
                append(flush[key])
                continue
            except KeyError:  # two natural cards of a rank: no flush
                pass
        append(plain[key])
    return out


def evaluate5(cards: Sequence[Card], opts: RankingOptions = DEFAULT_OPTIONS) -> HighHand:
    """Rank a five-card high hand; CardError on a wrong count or a repeated card."""
    if len(cards) != 5:
        raise CardError(f"a high hand has 5 cards, got {len(cards)}")
    check_distinct(cards)
    v = value5(cards, opts)
    return HighHand(Category(v[0]), JOKER not in cards, v)


def evaluate2(cards: Sequence[Card]) -> LowHand:
    """Rank a two-card low hand: a pair or high cards; the joker is an ace (NY (c)(1))."""
    if len(cards) != 2:
        raise CardError(f"a low hand has 2 cards, got {len(cards)}")
    check_distinct(cards)
    a, b = (ACE if c == JOKER else rank(c) for c in cards)
    if a == b:
        return LowHand(Category.PAIR, (Category.PAIR, a))
    return LowHand(Category.HIGH_CARD, (Category.HIGH_CARD, max(a, b), min(a, b)))


def value2(cards: Sequence[Card]) -> Value:
    """The comparable value of a two-card low hand (no validation)."""
    a, b = (ACE if c == JOKER else rank(c) for c in cards)
    if a == b:
        return (Category.PAIR, a)
    return (Category.HIGH_CARD, max(a, b), min(a, b))


def high_at_least_low(high: Value, low: Value) -> bool:
    """NY (g)(1), NJ 11.9(a): the five-card hand must rank equal to or higher than the two-card one.

    Both values share the category numbering, so the high hand's leading terms are compared with
    the low hand's: a pair of sevens in front needs at least a pair of sevens behind.
    """
    return high[: len(low)] >= low


def best_five_of_seven(cards: Sequence[Card], opts: RankingOptions = DEFAULT_OPTIONS) -> Value:
    """The best five-card value among the 21 ways to take five of seven cards."""
    return max(value5(five, opts) for five in combinations(cards, 5))
