"""Hand ranking by NY 5324.41(c): order of hands, the joker as a bug, A-2-3-4-5, kicker, copy hand.

Expected values here come from the regulation's text and from the published census in
shared/reference/table-rules.md, never from running the code under test.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.rules.cards import parse_cards
from fsm.rules.houseway import HouseWay, _Hand
from fsm.rules.ranking import (
    DEFAULT_OPTIONS,
    Category,
    RankingOptions,
    _pattern_key,
    _patterns,
    _reference_value,
    evaluate2,
    evaluate5,
    high_at_least_low,
    rank_tables,
    value2,
    value5,
    values_of_fives,
)

LOWEST = RankingOptions(ace_low_straight="lowest")
JOKER_ACE = RankingOptions(joker_flush="ace")


def v(text: str, opts: RankingOptions = DEFAULT_OPTIONS) -> tuple[int, ...]:
    return evaluate5(parse_cards(text), opts).value


def cat(text: str, opts: RankingOptions = DEFAULT_OPTIONS) -> Category:
    return evaluate5(parse_cards(text), opts).category


# --- (c)(2): the order of hands ----------------------------------------------------------------

ORDER_C2 = [  # one hand of each category, highest first, as listed in (c)(2)(i)-(x)
    ("Ac Ad Ah As JK", Category.FIVE_ACES),
    ("As Ks Qs Js Ts", Category.ROYAL_FLUSH),
    ("9h 8h 7h 6h 5h", Category.STRAIGHT_FLUSH),
    ("Kc Kd Kh Ks 2c", Category.FOUR_OF_A_KIND),
    ("Qc Qd Qh 3s 3c", Category.FULL_HOUSE),
    ("Ah Jh 9h 6h 2h", Category.FLUSH),
    ("Td 9c 8h 7s 6c", Category.STRAIGHT),
    ("8c 8d 8h Ks 2c", Category.THREE_OF_A_KIND),
    ("Jc Jd 4h 4s Ac", Category.TWO_PAIR),
    ("5c 5d Kh 9s 2c", Category.PAIR),
    ("Ac Qd 9h 6s 3c", Category.HIGH_CARD),
]


@pytest.mark.parametrize(("text", "category"), ORDER_C2)
def test_each_category_is_recognised_c2(text: str, category: Category) -> None:
    assert cat(text) == category


def test_categories_rank_in_the_order_of_c2() -> None:
    values = [v(text) for text, _ in ORDER_C2]
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == len(values)


def test_five_aces_beat_a_natural_royal_flush_c2_i() -> None:
    assert v("Ac Ad Ah As JK") > v("As Ks Qs Js Ts")


def test_natural_royal_is_a_royal_without_the_joker_c2_ii() -> None:
    natural = evaluate5(parse_cards("Ah Kh Qh Jh Th"))
    with_joker = evaluate5(parse_cards("Ah Kh Qh Jh JK"))
    assert natural.category == with_joker.category == Category.ROYAL_FLUSH
    assert natural.natural and not with_joker.natural
    assert natural.value == with_joker.value  # copy hands in the main game (c)(5)


def test_a2345_is_the_highest_straight_flush_by_default_c2_iii() -> None:
    wheel = v("Ad 2d 3d 4d 5d")
    assert cat("Ad 2d 3d 4d 5d") == Category.STRAIGHT_FLUSH
    assert wheel > v("Kd Qd Jd Td 9d") > v("6c 5c 4c 3c 2c")
    assert wheel < v("Ad Kd Qd Jd Td")  # but a royal flush is above it


def test_a2345_is_the_second_highest_straight_by_default_c2_vii() -> None:
    assert v("As Kd Qh Jc Td") > v("Ac 2d 3h 4s 5c") > v("Kd Qh Jc Td 9s") > v("6c 5h 4d 3s 2c")


def test_a2345_may_be_made_the_lowest_straight_and_straight_flush_c4() -> None:
    assert v("Ac 2d 3h 4s 5c", LOWEST) < v("6c 5h 4d 3s 2c", LOWEST)
    assert v("Ad 2d 3d 4d 5d", LOWEST) < v("6c 5c 4c 3c 2c", LOWEST)
    assert cat("Ac 2d 3h 4s 5c", LOWEST) == Category.STRAIGHT


def test_four_aces_highest_four_twos_lowest_c2_iv() -> None:
    assert v("Ac Ad Ah As 2c") > v("Kc Kd Kh Ks Ac") > v("2c 2d 2h 2s Ac")


def test_full_house_ranks_by_the_three_c2_v() -> None:
    assert v("Ac Ad Ah Ks Kc") > v("Kc Kd Kh As Ac") > v("2c 2d 2h 3s 3c")


def test_two_pair_aces_and_kings_highest_threes_and_twos_lowest_c2_ix() -> None:
    assert v("Ac Ad Kh Ks 2c") > v("Ac Ad Qh Qs Kc")
    assert v("3c 3d 2h 2s 4c") < v("4c 4d 2h 2s 3c")


# --- (c)(1), (c)(3): the joker ----------------------------------------------------------------


def test_joker_is_an_ace_c1() -> None:
    assert cat("JK Ac 7d 4h 2s") == Category.PAIR
    assert v("JK Ac 7d 4h 2s") == v("Ad Ac 7d 4h 2s")


def test_joker_never_pairs_anything_but_aces_c1() -> None:
    # kings and the joker: a pair of kings with an ace kicker, not three kings
    assert cat("JK Kc Kd 7h 2s") == Category.PAIR
    assert v("JK Kc Kd 7h 2s") == v("Ah Kc Kd 7h 2s")


def test_joker_completes_a_straight_c3() -> None:
    assert cat("JK 9c 8d 7h 5s") == Category.STRAIGHT
    assert v("JK 9c 8d 7h 5s") == v("6s 9c 8d 7h 5s")


def test_joker_completes_the_highest_straight_it_can_c3() -> None:
    # 9-8-7-6 plus joker: T-high beats 5-high
    assert v("JK 9c 8d 7h 6s") == v("Tc 9c 8d 7h 6s")


def test_joker_completes_a_flush_c3() -> None:
    assert cat("JK Kh 9h 6h 2h") == Category.FLUSH


def test_joker_completes_a_straight_flush_c3() -> None:
    assert cat("JK 9h 8h 7h 5h") == Category.STRAIGHT_FLUSH


def test_four_aces_and_joker_are_five_aces_c2_i() -> None:
    assert cat("JK Ac Ad Ah As") == Category.FIVE_ACES


def test_joker_flush_fills_the_highest_missing_rank_by_default() -> None:
    # A K 9 4 of spades + joker = A K Q 9 4; below a natural A K Q 9 5 flush
    assert v("As Ks 9s 4s JK") == v("As Ks Qs 9s 4s")
    assert v("As Ks 9s 4s JK") < v("Ad Kd Qd 9d 5d")


def test_joker_flush_may_count_as_an_ace_option() -> None:
    # the joker as an ace: A A K 9 4 beats a natural A K Q 9 5 flush
    assert v("As Ks 9s 4s JK", JOKER_ACE) > v("Ad Kd Qd 9d 5d", JOKER_ACE)
    assert cat("As Ks 9s 4s JK", JOKER_ACE) == Category.FLUSH


# --- (c)(5): kicker rule and copy hands -------------------------------------------------------


def test_highest_card_not_in_the_other_hand_decides_c5() -> None:
    assert v("9c 9d Ah 7s 2c") > v("9h 9s Kh 7d 2d")
    assert v("Ac Qd 9h 6s 3c") > v("Ad Qh 9c 6d 2c")
    # the highest differing card decides, whatever the lower ones: A-8-6-4-2 beats K-Q-J-9-3
    assert v("Ah 8c 6d 4s 2c") > v("Kd Qc Jh 9s 3d")


def test_identical_ranks_are_a_copy_hand_c5() -> None:
    assert v("9c 9d Ah 7s 2c") == v("9h 9s Ad 7d 2d")


def test_flushes_compare_by_highest_differing_card() -> None:
    assert v("Ah Jh 9h 6h 3h") > v("Ac Jc 9c 6c 2c")


# --- two-card low hands -----------------------------------------------------------------------


def test_joker_and_ace_are_a_pair_of_aces_in_the_low_hand_c1() -> None:
    low = evaluate2(parse_cards("JK Ad"))
    assert low.category == Category.PAIR
    assert low.value == evaluate2(parse_cards("Ac Ad")).value


def test_low_hand_pair_beats_high_cards_and_high_cards_compare_c2_x() -> None:
    assert evaluate2(parse_cards("2c 2d")).value > evaluate2(parse_cards("Ac Kd")).value
    assert evaluate2(parse_cards("Ac Kd")).value > evaluate2(parse_cards("Ac Qd")).value
    assert evaluate2(parse_cards("JK Kd")).value == evaluate2(parse_cards("Ac Kd")).value


def test_high_hand_must_equal_or_outrank_the_low_hand_g1() -> None:
    seven_pair = evaluate2(parse_cards("7c 7d")).value
    # NJ 11.9(a): a pair of sevens in front needs at least a pair of sevens behind
    assert high_at_least_low(v("7h 7s Kc 4d 2c"), seven_pair)
    assert not high_at_least_low(v("6h 6s Kc 4d 2c"), seven_pair)
    assert not high_at_least_low(v("Ah Ks Qc 4d 2c"), seven_pair)
    assert high_at_least_low(v("Ah Ks Qc 4d 2c"), evaluate2(parse_cards("Ad Kd")).value)
    assert not high_at_least_low(v("Kh Qs Jc 4d 2c"), evaluate2(parse_cards("Ad 3d")).value)


# --- the census --------------------------------------------------------------------------------

CENSUS_5 = {  # shared/reference/table-rules.md, 5-card hands out of C(53,5) = 2,869,685
    Category.FIVE_ACES: 1,
    Category.ROYAL_FLUSH: 24,
    Category.STRAIGHT_FLUSH: 180,
    Category.FOUR_OF_A_KIND: 828,
    Category.FULL_HOUSE: 4368,
    Category.FLUSH: 7804,
    Category.STRAIGHT: 20532,
    Category.THREE_OF_A_KIND: 63360,
    Category.TWO_PAIR: 138600,
    Category.PAIR: 1215024,
    Category.HIGH_CARD: 1418964,
}
CENSUS_52 = {  # the standard 52-card counts (no joker)
    Category.ROYAL_FLUSH: 4,
    Category.STRAIGHT_FLUSH: 36,
    Category.FOUR_OF_A_KIND: 624,
    Category.FULL_HOUSE: 3744,
    Category.FLUSH: 5108,
    Category.STRAIGHT: 10200,
    Category.THREE_OF_A_KIND: 54912,
    Category.TWO_PAIR: 123552,
    Category.PAIR: 1098240,
    Category.HIGH_CARD: 1302540,
}


@pytest.mark.slow
def test_census_of_all_2869685_five_card_hands_matches_the_published_tables() -> None:
    counts: Counter[int] = Counter()
    natural: Counter[int] = Counter()
    for hand in combinations(range(53), 5):
        c = value5(hand)[0]
        counts[c] += 1
        if 52 not in hand:
            natural[c] += 1
    assert sum(counts.values()) == 2_869_685
    assert {Category(k): n for k, n in counts.items()} == CENSUS_5
    assert {Category(k): n for k, n in natural.items()} == CENSUS_52
    assert natural[Category.ROYAL_FLUSH] == 4  # 4 natural + 20 with the joker


# --- properties ---------------------------------------------------------------------------------

hands5 = st.lists(st.integers(0, 52), min_size=5, max_size=5, unique=True)
options = st.sampled_from(
    [RankingOptions(a, j) for a in ("second", "lowest") for j in ("highest-missing", "ace")]
)


@settings(max_examples=400, deadline=None)
@given(hands5, options, st.randoms(use_true_random=False))
def test_value_does_not_depend_on_card_order(hand: list[int], opts: RankingOptions, rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = hand[:]
    rnd.shuffle(shuffled)
    assert value5(hand, opts) == value5(shuffled, opts)


@settings(max_examples=400, deadline=None)
@given(hands5, options, st.permutations([0, 1, 2, 3]))
def test_suits_have_no_rank(hand: list[int], opts: RankingOptions, perm: list[int]) -> None:
    renamed = [c if c == 52 else (c & ~3) | perm[c & 3] for c in hand]
    assert value5(hand, opts) == value5(renamed, opts)


@settings(max_examples=600, deadline=None)
@given(hands5, options)
def test_fast_table_agrees_with_the_reference_rules(hand: list[int], opts: RankingOptions) -> None:
    assert value5(hand, opts) == _reference_value(hand, opts)


@settings(max_examples=300, deadline=None)
@given(hands5, hands5, hands5)
def test_ordering_is_a_total_preorder_with_copy_hands_as_ties(
    a: list[int], b: list[int], c: list[int]
) -> None:
    va, vb, vc = value5(a), value5(b), value5(c)
    assert (va <= vb) or (vb <= va)  # total
    if va <= vb and vb <= vc:
        assert va <= vc  # transitive
    # the category is the leading term: a higher category always wins
    if va[0] != vb[0]:
        assert (va > vb) == (va[0] > vb[0])


@pytest.mark.parametrize(
    "opts", [RankingOptions(a, j) for a in ("second", "lowest") for j in ("highest-missing", "ace")]
)
def test_the_lazily_filled_tables_hold_every_pattern_s_reference_value(
    opts: RankingOptions,
) -> None:
    """Issue 29: the rank tables are filled on first lookup (config check looks up a few hundred
    patterns, not all 6,000-odd); each entry is the reference value of the pattern's own hand, a
    plain one and, for distinct natural ranks, the all-one-suit one; no other key has a value."""
    plain, flush = rank_tables(opts)
    for hand in _patterns():
        key = _pattern_key(hand)
        assert plain[key] == _reference_value(hand, opts)
        naturals = [c for c in hand if c != 52]
        if len({c >> 2 for c in naturals}) == len(naturals):
            clubs = tuple(c if c == 52 else (c >> 2) << 2 for c in hand)
            assert flush[key] == _reference_value(clubs, opts)
        else:
            with pytest.raises(KeyError):
                flush[key]
    assert len(plain) == len(_patterns())  # every rank multiset of the 53-card deck, once
    for bad in (0, _pattern_key((52, 52, 0, 4, 8)), _pattern_key((0, 1, 2, 3, 4)) * 2, -1):
        with pytest.raises(KeyError):
            plain[bad]


def test_filled_rank_tables_hold_every_pattern_and_never_grow_while_playing() -> None:
    """A service fills the rank tables before it is ready (`tablectl run`): afterwards no
    lookup adds an entry, so its memory does not grow while it plays (the stress suite's long
    run); every filled entry is the reference value."""
    from itertools import islice

    from fsm.rules.ranking import DEFAULT_OPTIONS, fill_rank_tables, rank_tables

    held = fill_rank_tables(DEFAULT_OPTIONS)
    plain, flush = rank_tables(DEFAULT_OPTIONS)
    assert held == len(plain) + len(flush) and len(plain) > 6000
    for hand in islice(combinations(range(53), 5), 0, 20000, 97):
        value5(hand)
    assert len(plain) + len(flush) == held


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 52), min_size=7, max_size=7, unique=True),
    st.sampled_from(
        [RankingOptions(a, j) for a in ("second", "lowest") for j in ("highest-missing", "ace")]
    ),
)
def test_the_house_ways_shared_split_values_equal_each_five_card_hand_ranked_alone(
    cards: list[int], opts: RankingOptions
) -> None:
    """NY 5324.41(g)(1): the house way compares the 21 settings by these values, so the shared
    path must rank every back exactly as `value5` ranks it alone, and every front as `value2`."""
    backs = [tuple(k for k in range(7) if k not in (i, j)) for i, j in combinations(range(7), 2)]
    assert values_of_fives(cards, backs, opts) == [  # type: ignore[arg-type]
        value5([cards[k] for k in b], opts) for b in backs
    ]
    hand = _Hand(HouseWay.load("reference").rules, tuple(sorted(cards)), opts)
    for s in hand.all_splits():
        assert s.front == value2((hand.cards[s.i], hand.cards[s.j]))
        back = [hand.cards[k] for k in range(7) if k not in (s.i, s.j)]
        assert s.back == value5(back, opts)
