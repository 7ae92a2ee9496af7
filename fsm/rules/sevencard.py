"""Hand classification for the bonus pay tables: which pay-table lines a hand makes.

Seven-card hands (the player's, or the dealer's/bank's for the imperial banker bonus) and the
three-card hand of the three-card bonus. Each function returns every line the cards can make over
every way to use them (every five of seven, the joker as any card where allowed); the pay table
then pays the single best line (fsm.rules.paytables.PayTable.best), as the dealer resets the hand
to the hand type yielding the highest payout (NY 5324.41(g)(8), (l)(4)(ii), (p)(3)(i)).

Joker rules: as an ace, or as any card to complete a straight, flush, straight flush or royal flush
(NY (c)(1),(3), (l)(4)(ii), (p)(3)(i)); for the insurance wager it is only an ace (NY (c)(7)).
Five-card ranking comes from fsm.rules.ranking (value5); it is not re-implemented here. "X and pair"
lines belong to the progressive payout wager (NY (k)), not here.

This module must never hold a payout amount, do I/O, or draw a random number.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Literal

from fsm.rules.cards import (
    ACE,
    JACK,
    JOKER,
    KING,
    QUEEN,
    Card,
    CardError,
    check_distinct,
    rank,
    suit,
)
from fsm.rules.ranking import Category, best_five_of_seven, value5

RoyalMatch = Literal["king-queen", "ace-king"]
ROYAL_MATCH_CHOICES: tuple[RoyalMatch, ...] = ("king-queen", "ace-king")

# line labels used by the pay-table files
STRAIGHT = "straight"
THREE_OF_A_KIND = "three-of-a-kind"
FLUSH = "flush"
FULL_HOUSE = "full-house"
FOUR_OF_A_KIND = "four-of-a-kind"
STRAIGHT_FLUSH = "straight-flush"
STRAIGHT_FLUSH_WITH_JOKER = "straight-flush-with-joker"
STRAIGHT_FLUSH_NO_JOKER = "straight-flush-no-joker"
ROYAL_FLUSH = "royal-flush"
FIVE_ACES = "five-aces"
SEVEN_SF_WITH_JOKER = "seven-card-straight-flush-with-joker"
SEVEN_SF_NO_JOKER = "seven-card-straight-flush-no-joker"
ROYAL_PLUS_ROYAL_MATCH = "royal-flush-plus-royal-match"
PAIR = "pair"

HIGH_CARD_LINES: dict[int, str] = {
    ACE: "ace-high",
    KING: "king-high",
    QUEEN: "queen-high",
    JACK: "jack-high",
    10: "ten-high",
    9: "nine-high",
}

_FIVE_CARD_LINES: dict[Category, str] = {
    Category.THREE_OF_A_KIND: THREE_OF_A_KIND,
    Category.STRAIGHT: STRAIGHT,
    Category.FLUSH: FLUSH,
    Category.FULL_HOUSE: FULL_HOUSE,
    Category.FOUR_OF_A_KIND: FOUR_OF_A_KIND,
    Category.STRAIGHT_FLUSH: STRAIGHT_FLUSH,
    Category.ROYAL_FLUSH: ROYAL_FLUSH,
    Category.FIVE_ACES: FIVE_ACES,
}

# the seven-rank windows of a seven-card straight flush; the ace plays low in A-2-3-4-5-6-7
_SEVEN_WINDOWS: tuple[frozenset[int], ...] = (
    frozenset({ACE, 2, 3, 4, 5, 6, 7}),
    *(frozenset(range(lo, lo + 7)) for lo in range(2, 9)),
)


def _check7(cards: Sequence[Card]) -> None:
    if len(cards) != 7:
        raise CardError(f"a seven-card hand has 7 cards, got {len(cards)}")
    check_distinct(cards)


def five_card_hands(cards7: Sequence[Card]) -> set[tuple[Category, bool]]:
    """(category, natural) of every five of the seven cards; natural = the five hold no joker."""
    _check7(cards7)
    return {(Category(value5(five)[0]), JOKER not in five) for five in combinations(cards7, 5)}


def seven_card_straight_flush(cards7: Sequence[Card]) -> Literal["no-joker", "with-joker"] | None:
    """NY (c)(6)(i),(iii): seven cards of one suit in consecutive ranks, the joker completing it or
    not. A-2-3-4-5-6-7 counts (the ace completes a straight with 2-3-4-5, NY (c)(1))."""
    _check7(cards7)
    naturals = [c for c in cards7 if c != JOKER]
    if len({suit(c) for c in naturals}) != 1:
        return None
    ranks = {rank(c) for c in naturals}
    if not any(ranks <= window for window in _SEVEN_WINDOWS):
        return None
    return "no-joker" if len(naturals) == 7 else "with-joker"


def royal_plus_royal_match(cards7: Sequence[Card], variant: RoyalMatch) -> bool:
    """NY (c)(6)(ii): a royal flush (with or without the joker) plus, as the facility pre-selects,
    (a) "king-queen": an additional king and queen of a same suit, or (b) "ace-king": an
    additional ace and king of the same suit, without a joker. The two additional cards are always
    natural: outside a straight or flush the joker is only an ace (NY (c)(1)), and (b) says so."""
    _check7(cards7)
    if variant not in ROYAL_MATCH_CHOICES:
        raise ValueError(f"royal_match: {variant!r} is not one of {', '.join(ROYAL_MATCH_CHOICES)}")
    want = {KING, QUEEN} if variant == "king-queen" else {ACE, KING}
    for five in combinations(cards7, 5):
        if value5(five)[0] != Category.ROYAL_FLUSH:
            continue
        rest = [c for c in cards7 if c not in five]
        if JOKER in rest:
            continue
        if suit(rest[0]) == suit(rest[1]) and {rank(rest[0]), rank(rest[1])} == want:
            return True
    return False


def fortune_lines(cards7: Sequence[Card], royal_match: RoyalMatch = "king-queen") -> frozenset[str]:
    """Lines of the fortune pai gow poker bonus and envy tables (NY (m)(1),(2), (c)(6)).

    Straight and better over any five of the seven (the joker as any card to complete a straight,
    flush, straight flush or royal flush, (l)(4)(ii)), plus the seven-card hands of (c)(6).
    """
    lines = {_FIVE_CARD_LINES[cat] for cat, _ in five_card_hands(cards7) if cat in _FIVE_CARD_LINES}
    sf7 = seven_card_straight_flush(cards7)
    if sf7 == "no-joker":
        lines.add(SEVEN_SF_NO_JOKER)
    elif sf7 == "with-joker":
        lines.add(SEVEN_SF_WITH_JOKER)
    if royal_plus_royal_match(cards7, royal_match):
        lines.add(ROYAL_PLUS_ROYAL_MATCH)
    return frozenset(lines)


def seven_card_bonus_lines(cards7: Sequence[Card]) -> frozenset[str]:
    """Lines of the seven-card bonus table (NY (o)(2)): straight and better over any five.

    A straight flush is "with joker" or "no joker" by whether its five cards hold the joker; a
    royal flush, with or without the joker, is the "royal flush" line (NY (c)(2)(ii): the natural
    distinction is made only for the progressive payout wager).
    """
    lines: set[str] = set()
    for cat, natural in five_card_hands(cards7):
        if cat == Category.STRAIGHT_FLUSH:
            lines.add(STRAIGHT_FLUSH_NO_JOKER if natural else STRAIGHT_FLUSH_WITH_JOKER)
        elif cat in _FIVE_CARD_LINES:
            lines.add(_FIVE_CARD_LINES[cat])
    return frozenset(lines)


def imperial_player_lines(cards7: Sequence[Card]) -> frozenset[str]:
    """Lines of the imperial pai gow player hand bonus (NY (p)(4)): three of a kind and better over
    any five of the seven; the joker as any card to complete a straight, flush, straight flush or
    five aces ((p)(3)(i))."""
    return frozenset(
        _FIVE_CARD_LINES[cat] for cat, _ in five_card_hands(cards7) if cat in _FIVE_CARD_LINES
    )


def pai_gow_high_card(cards7: Sequence[Card]) -> int | None:
    """The highest rank of seven cards that make no hand at all (a "pai gow"), else None.

    The joker completes straights and flushes and otherwise is an ace (NY (c)(1),(3)), so a pai gow
    holding the joker is ace high.
    """
    _check7(cards7)
    best = best_five_of_seven(cards7)
    return best[1] if best[0] == Category.HIGH_CARD else None


def imperial_banker_line(cards7: Sequence[Card]) -> str | None:
    """NY (p)(5): the banker hand bonus line of the dealer's/bank's seven cards: a pai gow with
    jack, 10 or 9 as the highest card ("jack-high", "ten-high", "nine-high"), else None."""
    high = pai_gow_high_card(cards7)
    if high is None or high > JACK:
        return None
    return HIGH_CARD_LINES.get(high)


def insurance_line(cards7: Sequence[Card]) -> str | None:
    """NY (m)(3), (c)(7): the pai gow insurance line: seven cards with no pair, no straight and no
    flush, the joker ranked only as an ace (never wild), paid by the highest card ("ace-high" ...
    "nine-high"); None when the seven cards make any hand."""
    _check7(cards7)
    ranks = [ACE if c == JOKER else rank(c) for c in cards7]
    if len(set(ranks)) != 7:
        return None  # a pair (the joker with an ace is a pair of aces)
    suits = [suit(c) for c in cards7 if c != JOKER]
    if any(suits.count(s) >= 5 for s in range(4)):
        return None  # a flush: the joker, only an ace, never completes one
    present = set(ranks) | ({1} if ACE in ranks else set())
    if any(all(r in present for r in range(lo, lo + 5)) for lo in range(1, 11)):
        return None  # a straight, the ace high or low
    return HIGH_CARD_LINES.get(max(ranks))


def three_card_lines(cards3: Sequence[Card]) -> frozenset[str]:
    """Lines of the three-card bonus (NY (o)(1)) that three cards can make.

    "pair", "three-of-a-kind", "flush", "straight", "straight-flush" (any three-card straight
    flush) and "straight-flush-no-joker" (a natural one, which is also a "straight-flush"). The
    joker is an ace, or any card to complete a straight, flush or straight flush (NY (c)(1),(3));
    it never pairs anything but an ace. Q-K-A and A-2-3 are straights (the ace high, or low with
    2-3 as in NY (c)(1)); K-A-2 is not.
    """
    if len(cards3) != 3:
        raise CardError(f"a three-card hand has 3 cards, got {len(cards3)}")
    check_distinct(cards3)
    naturals = [c for c in cards3 if c != JOKER]
    ranks = [rank(c) for c in naturals]
    suited = len({suit(c) for c in naturals}) == 1
    lines: set[str] = set()
    # the joker as an ace (or no joker): pairs and three of a kind
    as_ace = ranks + [ACE] * (3 - len(naturals))
    most = max(as_ace.count(r) for r in as_ace)
    if most == 3:
        lines.add(THREE_OF_A_KIND)
    elif most == 2:
        lines.add(PAIR)
    # straights: the joker (if any) as any rank
    straight = _three_straight(ranks)
    if suited:
        lines.add(FLUSH)
    if straight:
        lines.add(STRAIGHT)
    if straight and suited:
        lines.add(STRAIGHT_FLUSH)
        if JOKER not in cards3:
            lines.add(STRAIGHT_FLUSH_NO_JOKER)
    return frozenset(lines)


_THREE_WINDOWS: tuple[frozenset[int], ...] = (
    frozenset({ACE, 2, 3}),
    *(frozenset(range(lo, lo + 3)) for lo in range(2, 13)),
)


def _three_straight(ranks: Sequence[int]) -> bool:
    """Whether the natural ranks (2 or 3 of them, the joker filling the rest) make a straight."""
    if len(set(ranks)) != len(ranks):
        return False
    return any(set(ranks) <= window for window in _THREE_WINDOWS)
