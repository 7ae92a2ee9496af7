"""The reference house way, bullet by bullet (hands-and-house-way.md), on concrete hands.

NY 5324.41(g)(2), NJ 11.9(c),(d): the dealer sets the bank's hand by the casino's house way. Every
expected setting below was written from the published bullet, not by running the code. "Front" is
the two-card low hand, "back" the five-card high hand.
"""

from __future__ import annotations

import pytest

from fsm.rules.cards import parse_cards
from fsm.rules.houseway import HouseWay
from fsm.rules.ranking import RankingOptions
from fsm.rules.setting import check_setting

WAY = "reference"


def assert_way(
    way: str, cards: str, back: str, front: str, opts: RankingOptions | None = None
) -> None:
    """The way sets exactly these cards back and front (and the setting is no foul)."""
    dealt = parse_cards(cards, count=7)
    setting = HouseWay.load(way).set(dealt, opts or RankingOptions())
    assert sorted(setting.low) == sorted(parse_cards(front)), f"front of {cards}"
    assert sorted(setting.high) == sorted(parse_cards(back)), f"back of {cards}"
    assert check_setting(setting.high, setting.low, dealt) is None


def ranks(cards: tuple[int, ...] | str) -> list[int]:
    """Rank codes 0..12 (2..A), the joker 13, sorted: for hands where suits change nothing."""
    return sorted(c // 4 for c in (parse_cards(cards) if isinstance(cards, str) else cards))


def assert_way_ranks(way: str, cards: str, back: str, front: str) -> None:
    """Like assert_way where the rule leaves a choice of equal cards (which 9 of a pair, which ace
    of three): the ranks back and front, the joker told apart from an ace."""
    dealt = parse_cards(cards, count=7)
    setting = HouseWay.load(way).set(dealt)
    assert ranks(setting.low) == ranks(front), f"front of {cards}"
    assert ranks(setting.high) == ranks(back), f"back of {cards}"
    assert check_setting(setting.high, setting.low, dealt) is None


def test_no_pair_highest_back_second_and_third_front() -> None:
    assert_way(WAY, "As Kd 9c 7h 5s 3d 2c", back="As 7h 5s 3d 2c", front="Kd 9c")


def test_no_pair_joker_is_the_highest_card_c1() -> None:
    # the joker counts as an ace: it stays back; king and queen front
    assert_way(WAY, "JK Kd 9c 7h 5s 3d Qc", back="JK 9c 7h 5s 3d", front="Kd Qc")


def test_one_pair_pair_back_next_two_highest_front() -> None:
    assert_way(WAY, "8s 8d Ac Kh 6s 3d 2c", back="8s 8d 6s 3d 2c", front="Ac Kh")


def test_one_pair_of_aces_made_with_the_joker_c1() -> None:
    assert_way(WAY, "JK Ad Kc Qh 9s 6d 2c", back="JK Ad 9s 6d 2c", front="Kc Qh")


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        # low + low: split unless a king or ace singleton can go front
        ("5s 5d 3c 3h Kd 9c 8s", "5s 5d 3c 3h 8s", "Kd 9c"),
        ("5s 5d 3c 3h Qd 9c 8s", "5s 5d Qd 9c 8s", "3c 3h"),
        # low + medium: the same
        ("9s 9d 4c 4h Ad Jc 2s", "9s 9d 4c 4h 2s", "Ad Jc"),
        ("9s 9d 4c 4h Qd Jc 2s", "9s 9d Qd Jc 2s", "4c 4h"),
        ("9s 9d 4c 4h JK Jc 2s", "9s 9d 4c 4h 2s", "JK Jc"),  # the joker is an ace singleton
    ],
    ids=["low-low-K", "low-low-no", "low-med-A", "low-med-no", "low-med-joker"],
)
def test_two_pair_low_low_and_low_medium_split_unless_king_or_ace_front(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Js Jd 4c 4h Kd 8c 2s", "Js Jd Kd 8c 2s", "4c 4h"),  # a king is not enough
        ("Js Jd 4c 4h Ad 8c 2s", "Js Jd 4c 4h 2s", "Ad 8c"),
    ],
    ids=["K-split", "A-keep"],
)
def test_two_pair_low_high_split_unless_ace_front(cards: str, back: str, front: str) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Ts Td 7c 7h Kd 8c 2s", "Ts Td Kd 8c 2s", "7c 7h"),
        ("Ts Td 7c 7h Ad 8c 2s", "Ts Td 7c 7h 2s", "Ad 8c"),
    ],
    ids=["K-split", "A-keep"],
)
def test_two_pair_medium_medium_split_unless_ace_front(cards: str, back: str, front: str) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Qs Qd 7c 7h Ad 8c 2s", "Qs Qd Ad 8c 2s", "7c 7h"),  # medium + high
        ("Ks Kd Jc Jh Ad 8c 2s", "Ks Kd Ad 8c 2s", "Jc Jh"),  # high + high
        ("As Ad 3c 3h Kd 8c 2s", "As Ad Kd 8c 2s", "3c 3h"),  # aces + low
        ("JK Ad 3c 3h Kd 8c 9s", "JK Ad Kd 8c 9s", "3c 3h"),  # aces (with the joker) + low
    ],
    ids=["med-high", "high-high", "aces-low", "joker-aces-low"],
)
def test_two_pair_medium_high_high_high_aces_any_always_split(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


def test_three_pair_highest_pair_front() -> None:
    assert_way(WAY, "Ks Kd 8c 8h 4d 4c 2s", back="8c 8h 4d 4c 2s", front="Ks Kd")


def test_three_of_a_kind_back_two_highest_others_front() -> None:
    assert_way(WAY, "9s 9d 9c Kh Jd 5c 2s", back="9s 9d 9c 5c 2s", front="Kh Jd")


def test_three_aces_pair_of_aces_back_one_ace_front() -> None:
    # one ace and the highest other card (the king) front; which ace changes no hand
    assert_way_ranks(WAY, "As Ad Ac Kh Jd 5c 2s", back="As Ad Jd 5c 2s", front="Ac Kh")


def test_two_sets_of_three_pair_from_higher_set_front() -> None:
    assert_way_ranks(WAY, "Qs Qd Qc 6h 6d 6c 2s", back="Qc 6h 6d 6c 2s", front="Qs Qd")


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("4s 5d 6c 7h 8d 9c Ks", "4s 5d 6c 7h 8d", "Ks 9c"),  # 6 connected: the lower one back
        ("Ah Kh 9h 7h 4h 2h Qc", "Kh 9h 7h 4h 2h", "Ah Qc"),  # 6 suited: the lower five back
        ("Ah Kh 9h 7h 4h 3h 2h", "9h 7h 4h 3h 2h", "Ah Kh"),  # 7 suited
        ("Ac Kd Qh Jc Ts 4d 2h", "Ac Kd Qh Jc Ts", "4d 2h"),  # straight rather than A back
        ("JK Kd Qh Jc Ts 4d 2h", "JK Kd Qh Jc Ts", "4d 2h"),  # the joker completes it (c)(3)
    ],
    ids=["6-connected", "6-suited", "7-suited", "straight-over-no-pair", "joker-straight"],
)
def test_straight_or_flush_no_pair_highest_front_that_keeps_it_back(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("4s 5d 6c 7h 8d Kc Ks", "4s 5d 6c 7h 8d", "Kc Ks"),  # pair front, straight back
        ("Ah 9h 7h 4h 2h 5c 5d", "Ah 9h 7h 4h 2h", "5c 5d"),  # pair front, flush back
    ],
    ids=["pair-front-straight", "pair-front-flush"],
)
def test_straight_or_flush_one_pair_pair_front_only_if_still_played_back(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


def test_straight_or_flush_one_pair_that_cannot_go_front_straight_back_best_front() -> None:
    # decision (docs/houseway.md): the pair is needed in the straight, so the straight stays back
    # with the best front (a king and the other 9) rather than the pair going back.
    assert_way_ranks(WAY, "5s 6d 7c 8h 9d 9c Ks", back="5s 6d 7c 8h 9d", front="Ks 9c")


def test_straight_or_flush_two_pair_uses_the_two_pair_rule() -> None:
    # 9s and 5s (medium + low) with 6-7-8: no king or ace, so split; the straight is given up
    assert_way(WAY, "5s 5d 6c 7h 8d 9c 9s", back="9c 9s 8d 7h 6c", front="5s 5d")


def test_straight_or_flush_three_pair_uses_the_three_pair_rule() -> None:
    # aces (Ah and the joker), kings, eights and the 4h: Ah-Kh-8h-4h-JK is a flush, but the
    # highest pair (the aces) still goes front
    assert_way(WAY, "Ah JK Kh Kd 8h 8c 4h", back="Kh Kd 8h 8c 4h", front="Ah JK")


def test_straight_or_flush_trips_pair_front() -> None:
    assert_way_ranks(WAY, "8s 8d 8c 4h 5d 6c 7s", back="8c 4h 5d 6c 7s", front="8s 8d")


def test_straight_or_flush_full_house_uses_the_full_house_rule() -> None:
    # aces full (the joker among them) with four hearts: the flush Ah-JK is given up for the pair
    assert_way(WAY, "Ah JK Ad 7h 7c 3h 9h", back="Ah JK Ad 3h 9h", front="7h 7c")


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Ks Kd Kc 9h 9d 5c 2s", "Ks Kd Kc 5c 2s", "9h 9d"),
        ("7s 7d 7c 2h 2d Ac Ks", "7s 7d 7c 2h 2d", "Ac Ks"),  # 2s with an ace and a king
        ("7s 7d 7c 2h 2d Ac Qs", "7s 7d 7c Ac Qs", "2h 2d"),  # 2s without the king
        ("7s 7d 7c 3h 3d Ac Ks", "7s 7d 7c Ac Ks", "3h 3d"),  # 3s: no exception
        ("7s 7d 7c 2h 2d JK Ks", "7s 7d 7c 2h 2d", "JK Ks"),  # the joker is the ace
    ],
    ids=["split", "2s-AK-keep", "2s-AQ-split", "3s-AK-split", "2s-jokerK-keep"],
)
def test_full_house_split_except_2s_with_ace_and_king_front(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


def test_full_house_trips_and_two_pair_highest_pair_front() -> None:
    assert_way(WAY, "7s 7d 7c Kh Kd 4c 4s", back="7s 7d 7c 4c 4s", front="Kh Kd")


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("5s 5d 5c 5h Ad Kc 2s", "5s 5d 5c 5h 2s", "Ad Kc"),  # 2-6 never split
        ("9s 9d 9c 9h Kd 4c 2s", "9s 9d 9c 9h 2s", "Kd 4c"),  # 7-10 with a king: keep
        ("9s 9d 9c 9h Qd 4c 2s", "9c 9h Qd 4c 2s", "9s 9d"),  # 7-10 without: split
        ("Js Jd Jc Jh Kd 4c 2s", "Jc Jh Kd 4c 2s", "Js Jd"),  # J-K with a king only: split
        ("Js Jd Jc Jh Ad 4c 2s", "Js Jd Jc Jh 2s", "Ad 4c"),  # J-K with an ace: keep
        ("Ks Kd Kc Kh JK 4c 2s", "Ks Kd Kc Kh 2s", "JK 4c"),  # the joker is that ace
    ],
    ids=["5s-keep", "9s-K-keep", "9s-Q-split", "Js-K-split", "Js-A-keep", "Ks-joker-keep"],
)
def test_four_of_a_kind_by_rank(cards: str, back: str, front: str) -> None:
    # where a split is called for, which two of the four go front changes no hand
    assert_way_ranks(WAY, cards, back, front)


def test_four_aces_always_split() -> None:
    assert_way_ranks(WAY, "As Ad Ac Ah Kd Qc 2s", back="Ac Ah Kd Qc 2s", front="As Ad")


def test_four_of_a_kind_with_pair_pair_front() -> None:
    assert_way(WAY, "9s 9d 9c 9h 3d 3c Ks", back="9s 9d 9c 9h Ks", front="3d 3c")


def test_four_aces_with_pair_pair_front_before_always_split() -> None:
    # decision: the more specific "quads + pair" bullet wins over "aces always split"
    assert_way(WAY, "As Ad Ac Ah 3d 3c Ks", back="As Ad Ac Ah Ks", front="3d 3c")


def test_four_of_a_kind_with_trips_pair_from_trips_front() -> None:
    assert_way_ranks(WAY, "9s 9d 9c 9h 3d 3c 3s", back="9s 9d 9c 9h 3s", front="3d 3c")


def test_five_aces_three_back_two_front() -> None:
    setting = HouseWay.load(WAY).set(parse_cards("As Ad Ac Ah JK Qc 2s"))
    assert all(c // 4 == 12 or c == 52 for c in setting.low)
    assert sorted(c // 4 for c in setting.high if c != 52) in ([0, 10, 12, 12], [0, 10, 12, 12, 12])


def test_five_aces_with_kings_five_aces_back_kings_front() -> None:
    assert_way(WAY, "As Ad Ac Ah JK Kc Kd", back="As Ad Ac Ah JK", front="Kc Kd")


def test_five_aces_with_queens_still_split() -> None:
    setting = HouseWay.load(WAY).set(parse_cards("As Ad Ac Ah JK Qc Qd"))
    assert all(c // 4 == 12 or c == 52 for c in setting.low)  # a pair of aces front
    assert sorted(c // 4 for c in setting.high if c != 52).count(10) == 2  # queens full behind


def test_straight_or_flush_three_aces_with_a_flush_pair_front() -> None:
    # three aces (Ah, Ad, joker), 9h 6h 3h and Kc: the only flush behind is Ah-JK-9h-6h-3h, which
    # leaves Ad-Kc in front - an ace and the highest other card, as three aces would be set anyway,
    # with the flush rather than a pair of aces behind.
    assert_way(WAY, "Ah JK Ad 9h 6h 3h Kc", back="Ah JK 9h 6h 3h", front="Ad Kc")


def test_straight_no_pair_highest_front_under_both_ace_low_options_c4() -> None:
    # A-2-3-4-5-6 + K: A-2-3-4-5 behind leaves K-6 front, 2-3-4-5-6 behind leaves A-K front; the
    # highest front wins whichever way the facility ranks A-2-3-4-5 (NY (c)(4)).
    for opts in (RankingOptions("second"), RankingOptions("lowest")):
        assert_way(WAY, "Ac 2d 3h 4s 5c 6d Kh", back="2d 3h 4s 5c 6d", front="Ac Kh", opts=opts)


def test_straight_or_flush_highest_front_even_over_a_straight_flush() -> None:
    # decision (docs/houseway.md): the bullet ranks the ways that keep a straight/flush/straight
    # flush behind by the front only. 9h-5h is a straight flush, but A-9 in front (8h 7h 6h 5h 2h
    # flush behind) beats A-2 in front (straight flush behind).
    assert_way(WAY, "9h 8h 7h 6h 5h 2h Ac", back="8h 7h 6h 5h 2h", front="Ac 9h")
