"""Bonus-table hand classification: NY 5324.41(c)(6),(7), (l)(4)(ii), (m), (o), (p).

Each case's lines are read off the regulation by hand; "X and pair" is the progressive's (NY (k)),
never a bonus line.
"""

from __future__ import annotations

import pytest

from fsm.rules import sevencard as sc
from fsm.rules.cards import CardError, parse_cards
from fsm.rules.paytables import load_builtin


def C(text: str) -> tuple[int, ...]:
    return parse_cards(text)


FORTUNE_A = load_builtin("fortune-bonus-a")
SEVEN_B = load_builtin("seven-card-b")
SEVEN_A = load_builtin("seven-card-a")


def best_fortune(cards: str, royal_match: sc.RoyalMatch = "king-queen") -> str | None:
    got = FORTUNE_A.best(sc.fortune_lines(C(cards), royal_match))
    return None if got is None else got[0]


# --- the seven-card hands of (c)(6) ----------


def test_seven_card_straight_flush_no_joker_c6_i() -> None:
    assert best_fortune("2h 3h 4h 5h 6h 7h 8h") == sc.SEVEN_SF_NO_JOKER
    assert FORTUNE_A.best(sc.fortune_lines(C("2h 3h 4h 5h 6h 7h 8h")), 100) == (
        sc.SEVEN_SF_NO_JOKER,
        800_000,  # $1 at 8000:1
    )


def test_ace_to_seven_is_a_seven_card_straight_flush_c1_c6_i() -> None:
    assert sc.seven_card_straight_flush(C("Ah 2h 3h 4h 5h 6h 7h")) == "no-joker"


def test_seven_card_straight_flush_with_joker_c6_iii() -> None:
    assert best_fortune("2h 3h 4h JK 6h 7h 8h") == sc.SEVEN_SF_WITH_JOKER
    assert sc.seven_card_straight_flush(C("9s Ts Js Qs Ks As JK")) == "with-joker"


def test_seven_of_a_suit_not_consecutive_is_no_seven_card_straight_flush() -> None:
    assert sc.seven_card_straight_flush(C("2h 3h 4h 5h 6h 7h 9h")) is None
    assert best_fortune("2h 3h 4h 5h 6h 7h 9h") == sc.STRAIGHT_FLUSH


def test_royal_flush_plus_royal_match_king_queen_c6_ii_a() -> None:
    assert best_fortune("Ah Kh Qh Jh Th Ks Qs", "king-queen") == sc.ROYAL_PLUS_ROYAL_MATCH
    assert best_fortune("Ah Kh Qh Jh Th Ks Qs", "ace-king") == sc.ROYAL_FLUSH


def test_royal_flush_plus_royal_match_ace_king_c6_ii_b() -> None:
    assert best_fortune("Ah Kh Qh Jh Th As Ks", "ace-king") == sc.ROYAL_PLUS_ROYAL_MATCH
    assert best_fortune("Ah Kh Qh Jh Th As Ks", "king-queen") == sc.ROYAL_FLUSH


def test_royal_with_joker_plus_royal_match_counts_c6_ii() -> None:
    assert best_fortune("Ah JK Qh Jh Th Kc Qc", "king-queen") == sc.ROYAL_PLUS_ROYAL_MATCH


def test_joker_is_never_the_royal_match_c6_ii_b() -> None:
    assert best_fortune("Ah Kh Qh Jh Th JK Ks", "ace-king") == sc.ROYAL_FLUSH
    assert best_fortune("Ah Kh Qh Jh Th JK Qs", "king-queen") == sc.ROYAL_FLUSH


def test_royal_match_of_two_suits_is_no_match_c6_ii() -> None:
    assert best_fortune("Ah Kh Qh Jh Th Ks Qd", "king-queen") == sc.ROYAL_FLUSH


# --- five-card lines over every five of the seven: (m)(1) ----------


@pytest.mark.parametrize(
    ("cards", "line"),
    [
        ("Ac Ad Ah As JK 2c 3d", sc.FIVE_ACES),
        ("Ac Kc Qc Jc Tc 2d 3h", sc.ROYAL_FLUSH),
        ("Ac Kc Qc Jc JK 2d 3h", sc.ROYAL_FLUSH),  # the joker completes a royal (l)(4)(ii)
        ("9d 8d 7d 6d 5d Kc 2h", sc.STRAIGHT_FLUSH),
        ("7c 7d 7h 7s Kd Kh 2c", sc.FOUR_OF_A_KIND),  # quads and pair: four of a kind only
        ("Kc Kd Kh 5s 5d 2c 2h", sc.FULL_HOUSE),  # full house and pair: full house only
        ("Ac Ad Ah JK Kd Kh 2c", sc.FOUR_OF_A_KIND),  # the joker is a fourth ace
        ("2c 7c 9c Jc Kc Ad 3h", sc.FLUSH),
        ("2c 7c 9c Jc JK Ad 3h", sc.FLUSH),  # the joker completes a flush
        ("9c Td Jh Qs JK 2c 4d", sc.STRAIGHT),  # the joker completes a straight
        ("Ac 2d 3h 4s 5c 9d Jh", sc.STRAIGHT),
        ("8c 8d 8h Ks 5c 3d 2h", sc.THREE_OF_A_KIND),
        ("Kc Kd 5h 5s 9c 3d 2h", None),  # two pair pays nothing
        ("Kc Kd 7h 5s 9c 3d 2h", None),  # a pair pays nothing
        ("Kc Jd 9h 7s 5c 3d 2h", None),  # pai gow
    ],
)
def test_fortune_bonus_best_line_m1(cards: str, line: str | None) -> None:
    assert best_fortune(cards) == line


def test_straight_flush_and_four_of_a_kind_pays_the_straight_flush_m1() -> None:
    # 5-6-7-8-9 of hearts with two more nines: the single best line, not both
    got = FORTUNE_A.best(sc.fortune_lines(C("5h 6h 7h 8h 9h 9c 9d")), 1000)
    assert got == (sc.STRAIGHT_FLUSH, 50_000)


# --- seven-card bonus (o)(2) ----------


def test_straight_flush_with_and_without_joker_o2() -> None:
    natural = sc.seven_card_bonus_lines(C("9h Th Jh Qh Kh 2c 3d"))
    with_joker = sc.seven_card_bonus_lines(C("9h Th Jh Qh JK 2c 3d"))
    assert sc.STRAIGHT_FLUSH_NO_JOKER in natural
    assert sc.STRAIGHT_FLUSH_WITH_JOKER not in natural
    assert with_joker >= {sc.STRAIGHT_FLUSH_WITH_JOKER}
    assert sc.STRAIGHT_FLUSH_NO_JOKER not in with_joker
    assert SEVEN_B.best(natural, 100) == (sc.STRAIGHT_FLUSH_NO_JOKER, 5000)  # 50:1
    assert SEVEN_B.best(with_joker, 100) == (sc.STRAIGHT_FLUSH_WITH_JOKER, 3000)  # 30:1
    assert SEVEN_A.best(natural, 100) == (sc.STRAIGHT_FLUSH_NO_JOKER, 25000)  # 250:1
    assert SEVEN_A.best(with_joker, 100) == (sc.STRAIGHT_FLUSH_WITH_JOKER, 5000)  # 50:1


def test_royal_flush_with_joker_is_the_royal_line_o2() -> None:
    lines = sc.seven_card_bonus_lines(C("Ah Kh Qh JK Th 2c 3d"))
    assert SEVEN_B.best(lines, 100) == (sc.ROYAL_FLUSH, 20000)  # 200:1


def test_five_aces_seven_card_bonus_o2() -> None:
    assert SEVEN_B.best(sc.seven_card_bonus_lines(C("Ac Ad Ah As JK 9c 3d")), 200) == (
        sc.FIVE_ACES,
        100_000,
    )


# --- insurance: (m)(3), (c)(7) ----------


@pytest.mark.parametrize(
    ("cards", "line"),
    [
        ("Ks Qd 9c 7h 5s 3d 2c", "king-high"),
        ("JK Qd 9c 7h 5s 3d 2c", "ace-high"),  # the joker ranks as an ace (c)(7)
        ("JK 9d 8c 6h 5s 3d 2c", "ace-high"),  # never wild: no 5-9 straight for insurance
        ("JK As 9c 7h 5s 3d 2c", None),  # joker + ace: a pair of aces
        ("JK Kd Qc Jh Ts 3d 2c", None),  # joker as an ace makes A-K-Q-J-10
        ("JK 2d 3c 4h 5s 9d Jc", None),  # joker as an ace makes A-2-3-4-5
        ("9c 8d 7h 5s 4c 3d 2h", "nine-high"),
        ("Jc 9c 7c 5c 3c Kd 2h", None),  # a flush
        ("Jc 9c 7c 5c JK Kd 2h", "ace-high"),  # four clubs and the joker: no flush here
        ("Kc Kd 9c 7h 5s 3d 2c", None),  # a pair
    ],
)
def test_insurance_line_joker_ranks_as_ace_m3_c7(cards: str, line: str | None) -> None:
    assert sc.insurance_line(C(cards)) == line


def test_insurance_pays_nine_high_at_table_a_m3() -> None:
    table = load_builtin("insurance-a")
    assert table.best({"nine-high"}, 500) == ("nine-high", 200_000)  # $5 at 400:1


# --- imperial pai gow: (p)(4),(5) ----------


def test_imperial_player_bonus_lines_p4() -> None:
    table = load_builtin("imperial-player")
    assert table.best(sc.imperial_player_lines(C("7c 7d 7h 7s Kd 2h 3c")), 100) == (
        sc.FOUR_OF_A_KIND,
        2500,
    )
    assert sc.imperial_player_lines(C("Kc Kd 5h 5s 9c 3d 2h")) == frozenset()  # two pair
    assert table.best(sc.imperial_player_lines(C("Ac Ad Ah As JK 2h 3c")), 100) == (
        sc.FIVE_ACES,
        100_000,
    )


@pytest.mark.parametrize(
    ("cards", "line"),
    [
        ("Jh 9d 7c 5s 4h 3d 2c", "jack-high"),
        ("Th 9d 7c 6s 4h 3d 2c", "ten-high"),
        ("9h 8d 7c 5s 4h 3d 2c", "nine-high"),
        ("Qh 9d 7c 5s 4h 3d 2c", None),  # queen high pays no banker bonus
        ("Jh 9d 7c 5s 4h 3d JK", None),  # the joker makes it ace high
        ("Jh Jd 7c 5s 4h 3d 2c", None),  # a pair
        ("Jh 9d 8c 7s JK 3d 2c", None),  # the joker completes 7-8-9-10-J
    ],
)
def test_imperial_banker_bonus_line_p5(cards: str, line: str | None) -> None:
    assert sc.imperial_banker_line(C(cards)) == line


# --- three-card bonus (o)(1) ----------


THREE = load_builtin("three-card")


@pytest.mark.parametrize(
    ("cards", "line", "pays"),
    [
        ("Ah Kh Qh", sc.STRAIGHT_FLUSH_NO_JOKER, 40),
        ("2s 3s 4s", sc.STRAIGHT_FLUSH_NO_JOKER, 40),
        ("Ah Kh JK", sc.STRAIGHT_FLUSH, 5),  # the joker as the Qh: a straight flush with joker
        ("As Ah JK", sc.THREE_OF_A_KIND, 25),  # the joker is a third ace
        ("7c 7d 7h", sc.THREE_OF_A_KIND, 25),
        ("Kc Kd JK", sc.PAIR, 1),  # the joker pairs only aces: kings and an ace
        ("Ac 7d JK", sc.PAIR, 1),  # joker + ace: a pair of aces
        ("2c 3d Ah", sc.STRAIGHT, 4),  # A-2-3
        ("JK 5c 7d", sc.STRAIGHT, 4),  # the joker as a 6
        ("JK 5c 9c", sc.FLUSH, 3),
        ("2c 9c Kc", sc.FLUSH, 3),
        ("7c 7d 2h", sc.PAIR, 1),
        ("Kc Ad 2h", None, 0),  # K-A-2 does not wrap around
        ("Kc 9d 2h", None, 0),
    ],
)
def test_three_card_bonus_best_line_o1(cards: str, line: str | None, pays: int) -> None:
    got = THREE.best(sc.three_card_lines(C(cards)), 100)
    assert (got[0] if got else None) == line
    assert (got[1] if got else 0) == pays * 100


def test_seven_card_hand_needs_seven_distinct_cards() -> None:
    with pytest.raises(CardError, match="7 cards"):
        sc.fortune_lines(C("Ah Kh Qh Jh Th Ks"))
    with pytest.raises(CardError, match="duplicate"):
        sc.insurance_line((0, 0, 1, 2, 3, 4, 5))
    with pytest.raises(CardError, match="3 cards"):
        sc.three_card_lines(C("Ah Kh"))
