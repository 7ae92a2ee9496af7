"""Properties every house way must have, for both shipped ways and both ranking options.

NY 5324.41(g)(1), (g)(5)(iii),(iv) and (q): the dealer's setting must never foul and must use the
seven cards dealt, exactly; and the same seven cards must always be set the same way, whatever order
the shoe reported them in. Checked with hypothesis on random hands and exhaustively over every
seven-card rank pattern (multisets of ranks with the joker), suits spread and suited.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations, combinations_with_replacement, islice

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.rules.cards import JOKER, Card
from fsm.rules.houseway import HouseWay, available
from fsm.rules.ranking import RankingOptions
from fsm.rules.setting import check_setting

WAYS = ["reference", "foxwoods"]
OPTIONS = [
    RankingOptions("second", "highest-missing"),
    RankingOptions("lowest", "ace"),
]
OPTION_IDS = ["second-highestmissing", "lowest-ace"]

seven_cards = st.lists(st.integers(0, JOKER), min_size=7, max_size=7, unique=True)


def assert_sets_correctly(way: HouseWay, dealt: Sequence[Card], opts: RankingOptions) -> None:
    decision = way.explain(dealt, opts)
    s = decision.setting
    assert len(s.high) == 5 and len(s.low) == 2
    assert sorted(s.high + s.low) == sorted(dealt), "the setting must use exactly the seven cards"
    foul = check_setting(s.high, s.low, dealt, opts)
    assert foul is None, f"{way.name} fouls {dealt}: {foul}"
    assert not decision.fallback, f"{way.name}: {decision.rule} needed the no-foul fallback"


def test_both_published_ways_are_shipped() -> None:
    assert set(WAYS) <= set(available())


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("name", WAYS)
@settings(max_examples=300, deadline=None)
@given(dealt=seven_cards)
def test_house_way_never_fouls_and_uses_all_seven_g1_g5(
    name: str, opts: RankingOptions, dealt: list[Card]
) -> None:
    assert_sets_correctly(HouseWay.load(name), dealt, opts)


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("name", WAYS)
@settings(max_examples=200, deadline=None)
@given(dealt=seven_cards, data=st.data())
def test_house_way_does_not_depend_on_card_order(
    name: str, opts: RankingOptions, dealt: list[Card], data: st.DataObject
) -> None:
    way = HouseWay.load(name)
    shuffled = data.draw(st.permutations(dealt))
    assert way.set(dealt, opts) == way.set(shuffled, opts)
    assert way.set(tuple(reversed(dealt)), opts) == way.set(dealt, opts)


# --- every seven-card rank pattern -------------------------------------------------------------


def rank_patterns() -> Iterator[Counter[int]]:
    """Every multiset of seven rank codes (0..12 = 2..A, 13 = the joker) the deck can deal."""
    for combo in combinations_with_replacement(range(14), 7):
        counts = Counter(combo)
        if counts[13] <= 1 and all(n <= 4 for r, n in counts.items() if r != 13):
            yield counts


def spread_hand(counts: Counter[int]) -> tuple[Card, ...]:
    """The pattern with suits dealt round-robin: at most two of a suit, so no flush."""
    cards: list[Card] = []
    for r in sorted(k for k in counts if k != 13):
        for _ in range(counts[r]):
            cards.append(r * 4 + len(cards) % 4)
    if counts[13]:
        cards.append(JOKER)
    return tuple(cards)


def suited_hands(counts: Counter[int], every_subset: bool) -> Iterator[tuple[Card, ...]]:
    """The pattern with a flush available: one card of each rank in ``S`` is a club, no other card
    is. ``S`` is every rank that can be a club, or (``every_subset``) every choice of ranks that
    makes five suited cards with the joker."""
    joker = counts[13]
    naturals = sorted(r for r in counts if r != 13)
    forced = {r for r in naturals if counts[r] == 4}  # four of a rank always hold the club
    free = [r for r in naturals if counts[r] < 4]
    need = 5 - joker
    if len(forced) + len(free) < need:
        return
    sizes = range(max(0, need - len(forced)), len(free) + 1) if every_subset else [len(free)]
    for k in sizes:
        for chosen in combinations(free, k):
            suited = forced | set(chosen)
            cards: list[Card] = []
            for r in naturals:
                n = counts[r]
                suits = [0, *range(1, n)] if r in suited else list(range(1, n + 1))
                cards.extend(r * 4 + s for s in suits)
            if joker:
                cards.append(JOKER)
            yield tuple(cards)


PATTERNS = list(rank_patterns())


def test_rank_pattern_census_is_complete() -> None:
    # 7-card multisets of 13 ranks (at most 4 each), plus 6-card ones with the joker
    def count(n: int) -> int:
        return sum(
            1
            for combo in combinations_with_replacement(range(13), n)
            if max(Counter(combo).values()) <= 4
        )

    assert len(PATTERNS) == count(7) + count(6)
    assert len({spread_hand(p) for p in PATTERNS}) == len(PATTERNS)


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("name", WAYS)
def test_every_rank_pattern_suits_spread_never_fouls_g1_g5(name: str, opts: RankingOptions) -> None:
    way = HouseWay.load(name)
    for counts in PATTERNS:
        assert_sets_correctly(way, spread_hand(counts), opts)


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("name", WAYS)
def test_every_rank_pattern_with_most_cards_suited_never_fouls_g1_g5(
    name: str, opts: RankingOptions
) -> None:
    way = HouseWay.load(name)
    for counts in PATTERNS:
        for dealt in suited_hands(counts, every_subset=False):
            assert_sets_correctly(way, dealt, opts)


@pytest.mark.slow
@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("name", WAYS)
def test_every_rank_pattern_every_flush_choice_never_fouls_g1_g5(
    name: str, opts: RankingOptions
) -> None:
    """Slow (15-25 s each, about 75 s in all): every choice of which ranks make the flush,
    straight flushes included."""
    way = HouseWay.load(name)
    for counts in PATTERNS:
        for dealt in suited_hands(counts, every_subset=True):
            assert_sets_correctly(way, dealt, opts)


def test_suited_variants_really_hold_a_flush() -> None:
    # guard on the generator itself: five or more clubs (with the joker) in each suited hand
    for counts in islice(PATTERNS, 0, None, 97):
        for dealt in suited_hands(counts, every_subset=True):
            clubs = sum(1 for c in dealt if c != JOKER and c % 4 == 0) + (JOKER in dealt)
            assert clubs >= 5
