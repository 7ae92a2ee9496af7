"""The second published house way ("Foxwoods style", hands-and-house-way.md), bullet by bullet.

NJ 11.9(d): each casino files its own manner of setting the dealer's hand; this way is shipped as
``foxwoods`` to show the data format carries a second way. Expected settings are written from the
published bullets; where the reference way decides differently the test says so.
"""

from __future__ import annotations

import pytest

from fsm.rules.cards import parse_cards
from fsm.rules.houseway import HouseWay
from fsm.rules.setting import check_setting

WAY = "foxwoods"


def ranks(cards: tuple[int, ...] | str) -> list[int]:
    """Rank codes 0..12 (2..A), the joker 13, sorted."""
    return sorted(c // 4 for c in (parse_cards(cards) if isinstance(cards, str) else cards))


def assert_way(way: str, cards: str, back: str, front: str) -> None:
    """The way sets these ranks back and front (suits change nothing in these hands)."""
    dealt = parse_cards(cards, count=7)
    setting = HouseWay.load(way).set(dealt)
    assert ranks(setting.low) == ranks(front), f"{way}: front of {cards}"
    assert ranks(setting.high) == ranks(back), f"{way}: back of {cards}"
    assert check_setting(setting.high, setting.low, dealt) is None


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Js Jd 4c 4h Ad 8c 2s", "Js Jd Ad 8c 2s", "4c 4h"),  # reference: both back (ace)
        ("As Ad 4c 4h Kd 8c 2s", "As Ad Kd 8c 2s", "4c 4h"),
        ("Ks Kd Qc Qh Ad 8c 2s", "Ks Kd Ad 8c 2s", "Qc Qh"),
    ],
    ids=["J-4-ace", "A-4-king", "K-Q-ace"],
)
def test_two_pair_bigger_pair_a_k_q_j_small_pair_front(cards: str, back: str, front: str) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("9s 9d 4c 4h Ad 8c 2s", "9s 9d 4c 4h 2s", "Ad 8c"),
        ("9s 9d 4c 4h Kd 8c 2s", "9s 9d Kd 8c 2s", "4c 4h"),  # reference: both back (king)
        ("Ts Td 7c 7h JK 8c 2s", "Ts Td 7c 7h 2s", "JK 8c"),  # the joker is the ace
    ],
    ids=["9-4-ace", "9-4-king", "T-7-joker"],
)
def test_two_pair_bigger_pair_10_to_7_both_back_if_ace_front(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("6s 6d 3c 3h Kd 8c 2s", "6s 6d 3c 3h 2s", "Kd 8c"),
        ("6s 6d 3c 3h Qd 8c 2s", "6s 6d Qd 8c 2s", "3c 3h"),
    ],
    ids=["6-3-king", "6-3-queen"],
)
def test_two_pair_bigger_pair_6_to_3_both_back_if_king_or_better_front(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


def test_three_aces_an_ace_and_the_next_highest_card_front() -> None:
    assert_way(WAY, "As Ad Ac Kh Jd 5c 2s", back="As Ad Jd 5c 2s", front="Ac Kh")


def test_two_sets_of_three_pair_from_the_higher_set_front() -> None:
    assert_way(WAY, "Qs Qd Qc 6h 6d 6c 2s", back="Qc 6h 6d 6c 2s", front="Qs Qd")


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Ks Kd Kc 9h 9d 5c 2s", "Ks Kd Kc 5c 2s", "9h 9d"),
        ("7s 7d 7c 2h 2d Ac Ks", "7s 7d 7c Ac Ks", "2h 2d"),  # no 2s exception (reference keeps)
        ("7s 7d 7c Kh Kd 4c 4s", "7s 7d 7c 4c 4s", "Kh Kd"),  # trips + two pair
        # decision: "permissible" pairs are real pairs; the trips stay together behind
        ("Ks Kd Kc Qh Qd 2c 2s", "Ks Kd Kc 2c 2s", "Qh Qd"),
    ],
    ids=["split", "2s-AK", "trips-two-pair", "kings-queens-twos"],
)
def test_full_house_highest_permissible_pair_front(cards: str, back: str, front: str) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Js Jd Jc Jh Ad 4c 2s", "Jc Jh Ad 4c 2s", "Js Jd"),  # reference: kept (ace front)
        ("Ks Kd Kc Kh Ad Qc 2s", "Kc Kh Ad Qc 2s", "Ks Kd"),
        ("As Ad Ac Ah Kd Qc 2s", "Ac Ah Kd Qc 2s", "As Ad"),
    ],
    ids=["jacks-ace", "kings-ace", "aces"],
)
def test_four_of_a_kind_a_to_j_always_split(cards: str, back: str, front: str) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Ts Td Tc Th Kd 4c 2s", "Ts Td Tc Th 2s", "Kd 4c"),
        ("7s 7d 7c 7h JK 4c 2s", "7s 7d 7c 7h 2s", "JK 4c"),
        ("Ts Td Tc Th Qd 4c 2s", "Tc Th Qd 4c 2s", "Ts Td"),
    ],
    ids=["tens-king", "sevens-joker", "tens-queen"],
)
def test_four_of_a_kind_10_to_7_together_if_at_least_a_king_front(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


def test_four_of_a_kind_6_and_below_never_split() -> None:
    assert_way(WAY, "6s 6d 6c 6h Qd 4c 2s", back="6s 6d 6c 6h 2s", front="Qd 4c")


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("Js Jd Jc Jh 3d 3c Ks", "Js Jd Jc Jh Ks", "3d 3c"),
        ("Js Jd Jc Jh 3d 3c 3s", "Js Jd Jc Jh 3s", "3d 3c"),
    ],
    ids=["pair", "trips"],
)
def test_four_of_a_kind_with_a_pair_or_trips_the_pair_front(
    cards: str, back: str, front: str
) -> None:
    assert_way(WAY, cards, back, front)


@pytest.mark.parametrize(
    ("cards", "back", "front"),
    [
        ("As Ad Ac Ah JK Qc 2s", "Ac Ah JK Qc 2s", "As Ad"),
        ("As Ad Ac Ah JK Kc Kd", "As Ad Ac Ah JK", "Kc Kd"),
    ],
    ids=["split", "kings"],
)
def test_five_aces_pair_of_aces_front_unless_kings_can_go_front(
    cards: str, back: str, front: str
) -> None:
    setting = HouseWay.load(WAY).set(parse_cards(cards))
    # the joker and any ace are the same card here: count aces, the joker among them
    assert sorted(min(c // 4, 12) for c in setting.low) == [min(r, 12) for r in ranks(front)]
    assert sorted(min(c // 4, 12) for c in setting.high) == [min(r, 12) for r in ranks(back)]


def test_unpublished_items_follow_the_reference_way() -> None:
    # decision: no pair, one pair, three pair, other trips and straights are as the reference way
    for cards in (
        "As Kd 9c 7h 5s 3d 2c",
        "8s 8d Ac Kh 6s 3d 2c",
        "Ks Kd 8c 8h 4d 4c 2s",
        "9s 9d 9c Kh Jd 5c 2s",
        "4s 5d 6c 7h 8d 9c Ks",
    ):
        dealt = parse_cards(cards)
        assert HouseWay.load(WAY).set(dealt) == HouseWay.load("reference").set(dealt)
