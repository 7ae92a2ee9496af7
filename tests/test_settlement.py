"""Settlement of the pai gow poker wager: NY 5324.41(g)(3),(5)-(8), (i)(2); NJ 13:69F-11.9(e)-(j).

Every expected outcome and amount below is worked out by hand from the regulation.
"""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fsm.rules.cards import CardError, parse_cards
from fsm.rules.ranking import value2, value5
from fsm.rules.settlement import (
    Setting,
    SurrenderRefused,
    is_queen_dragon,
    setting_order,
    settle,
    settle_hands,
    surrender,
    vigorish,
)


def S(high: str, low: str) -> Setting:
    return Setting(parse_cards(high, 5), parse_cards(low, 2))


# a dealer with a pair of tens behind and Q-J in front
DEALER = S("Tc Td 8h 6s 2c", "Qh Jd")


# --- (g)(5)-(7): win, push, lose ----------


def test_both_hands_higher_wins_and_pays_vigorish_g7_g8() -> None:
    r = settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), DEALER, 1000)
    assert (r.outcome, r.won_cents, r.vig_cents) == ("win", 1000, 50)
    assert r.net_cents == 950
    assert r.to_json() == {"outcome": "win", "won_cents": 1000, "vig_cents": 50}


def test_high_higher_low_lower_is_push_g6_i() -> None:
    r = settle(S("Kc Kd 7h 5s 3c", "9h 4d"), DEALER, 1000)
    assert (r.outcome, r.won_cents, r.vig_cents, r.net_cents) == ("push", 0, 0, 0)


def test_high_lower_low_higher_is_push_g6_ii() -> None:
    r = settle(S("9c 9d 7h 5s 3c", "Ah 4d"), DEALER, 1000)
    assert r.outcome == "push"


def test_both_hands_lower_loses_g5_i() -> None:
    r = settle(S("9c 9d 7h 5s 3c", "Jh 4d"), DEALER, 1000)
    assert (r.outcome, r.won_cents, r.vig_cents, r.net_cents) == ("lose", 0, 0, -1000)


def test_copy_high_and_lower_low_loses_g5_ii() -> None:
    # Th Ts 8c 6d 2d is the same rank as the dealer's Tc Td 8h 6s 2c: a copy hand
    r = settle(S("Th Ts 8c 6d 2d", "9h 4d"), DEALER, 1000)
    assert r.outcome == "lose"
    assert "copy" in r.reason


def test_copy_low_and_lower_high_loses_g5_ii() -> None:
    r = settle(S("9c 9d 7h 5s 3c", "Qs Jc"), DEALER, 1000)
    assert r.outcome == "lose"
    assert "copy" in r.reason


def test_copy_both_hands_loses_g5_ii() -> None:
    r = settle(S("Th Ts 8c 6d 2d", "Qs Jc"), DEALER, 1000)
    assert r.outcome == "lose"


def test_copy_high_with_higher_low_is_push_g6_ii() -> None:
    r = settle(S("Th Ts 8c 6d 2d", "Ah 4d"), DEALER, 1000)
    assert r.outcome == "push"


def test_copy_low_with_higher_high_is_push_g6_i() -> None:
    r = settle(S("Kc Kd 7h 5s 3c", "Qs Jc"), DEALER, 1000)
    assert r.outcome == "push"


def test_copy_hand_goes_to_the_player_never_when_dealer_is_the_one_copied_g5_ii() -> None:
    # the same copy seen from the other side: the "player" now holds the dealer's cards
    r = settle(DEALER, S("Th Ts 8c 6d 2d", "Qs Jc"), 1000)
    assert r.outcome == "lose"


def test_low_hand_outranking_high_hand_is_a_foul_and_loses_g5_iii() -> None:
    # 9-high behind, a pair of aces in front: would beat the dealer's hands on rank, but fouled
    r = settle(S("9c 7d 5h 4s 2h", "Ah Ad"), S("8c 6d 4h 3s 2c", "7h 5d"), 1000)
    assert r.outcome == "lose"
    assert "(g)(5)(iii)" in r.reason


def test_four_card_high_three_card_low_is_a_foul_and_loses_g5_iv() -> None:
    player = Setting(parse_cards("Ac Ad Ah As", 4), parse_cards("Kc Kd Kh", 3))
    r = settle(player, DEALER, 1000)
    assert r.outcome == "lose"
    assert "(g)(5)(iv)" in r.reason


def test_joker_is_an_ace_in_the_low_hand_c1() -> None:
    # JK + Kd in front is ace-king, beating the dealer's Q-J
    r = settle(S("Kc Ks 7h 5s 3c", "JK Kd"), DEALER, 1000)
    assert r.outcome == "win"


# --- (g)(8): vigorish ----------


@pytest.mark.parametrize(
    ("won", "vig"),
    [
        (1000, 50),  # $10 -> $0.50, already a multiple of 25 cents
        (1500, 75),  # $15 -> $0.75
        (1200, 75),  # $12 -> $0.60 -> up to $0.75
        (2000, 100),  # $20 -> $1.00
        (2600, 150),  # $26 -> $1.30 -> $1.50
        (100, 25),  # $1 -> $0.05 -> $0.25
        (500, 25),  # $5 -> $0.25
        (501, 50),  # $5.01 -> $0.2505 -> $0.50
        (0, 0),
        (10, 10),  # 10 cents won: the 25-cent rounding never exceeds the win
    ],
)
def test_vigorish_rounds_up_to_next_25_cents_g8(won: int, vig: int) -> None:
    assert vigorish(won, "round-up-25") == vig


@pytest.mark.parametrize(("won", "vig"), [(1000, 50), (1200, 60), (1234, 61), (19, 0), (20, 1)])
def test_exact_vigorish_drops_fraction_of_a_cent_g8(won: int, vig: int) -> None:
    assert vigorish(won, "exact") == vig


def test_settle_uses_exact_vigorish_when_configured_g8() -> None:
    r = settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), DEALER, 1200, vig="exact")
    assert (r.won_cents, r.vig_cents) == (1200, 60)


def test_unknown_vig_rule_is_an_error() -> None:
    with pytest.raises(ValueError, match="vig"):
        settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), DEALER, 1200, vig="half")  # type: ignore[arg-type]


# --- EZ pai gow: NJ 11.9(h)3, (j) ----------

QUEEN_DRAGON = S("Qh Td 8c 7s 3d", "5h 2c")  # Q T 8 7 5 3 2: no pair, straight or flush


def test_queen_dragon_pushes_a_winning_hand_in_ez_nj_11_9_h3() -> None:
    player = S("Kc Kd 7h 6s 4c", "Ah 9d")
    assert settle(player, QUEEN_DRAGON, 1000).outcome == "win"  # the regular game
    r = settle(player, QUEEN_DRAGON, 1000, ez=True)
    assert (r.outcome, r.won_cents, r.vig_cents) == ("push", 0, 0)


def test_queen_dragon_pushes_a_losing_hand_in_ez_nj_11_9_h3() -> None:
    player = S(
        "Jc 9d 6h 5s 2s", "4d 3c"
    )  # J-high behind, 4-3 in front: both hands lose to the dealer
    assert settle(player, QUEEN_DRAGON, 1000).outcome == "lose"
    assert settle(player, QUEEN_DRAGON, 1000, ez=True).outcome == "push"


def test_ez_win_takes_no_commission_nj_11_9_j() -> None:
    r = settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), DEALER, 1000, ez=True)
    assert (r.outcome, r.won_cents, r.vig_cents, r.net_cents) == ("win", 1000, 0, 1000)


def test_foul_still_loses_against_a_queen_dragon_in_ez_g5_iii() -> None:
    r = settle(S("9c 7d 6h 4s 2h", "Ah Ad"), QUEEN_DRAGON, 1000, ez=True)
    assert r.outcome == "lose"


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        ("Qh Td 8c 7s 5h 3d 2c", True),
        ("Qh Jd 9c 7s 5h 3d 2c", True),
        ("Kh Td 8c 7s 5h 3d 2c", False),  # king high
        ("Qh Td 8c 7s 5h 3d JK", False),  # the joker is an ace: ace high
        ("Qh Td 8c 7s 5h 3d 3c", False),  # a pair
        ("Qh Th 8h 7h 5d 3h 2c", False),  # a flush
        ("Qh 9d 8c 7s 6h 5d 2c", False),  # a straight 5-9
        ("Jh Td 8c 7s 5h 3d 2c", False),  # jack high
    ],
)
def test_queen_dragon_is_a_queen_high_pai_gow_nj_11_9_h3(cards: str, expected: bool) -> None:
    assert is_queen_dragon(parse_cards(cards, 7)) is expected


# --- the dealer's setting is reset, not fouled: NY (q) ----------


def test_fouled_dealer_setting_is_refused_for_reset_by_house_way_q() -> None:
    with pytest.raises(ValueError, match=r"dealer.*house way.*\(q\)"):
        settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), S("9c 7d 5h 4s 2h", "As Ad"), 1000)


def test_dealer_hands_not_five_and_two_are_refused_q() -> None:
    dealer = Setting(parse_cards("Tc Td 8h 6s", 4), parse_cards("2c Qh Jd", 3))
    with pytest.raises(CardError, match=r"dealer.*5 \+ 2"):
        settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), dealer, 1000)


# --- settle_hands: the tablectl settle contract ----------


def test_settle_hands_takes_four_hands_of_card_codes() -> None:
    r = settle_hands(
        parse_cards("Kc Kd 7h 5s 3c"),
        parse_cards("Ah 9d"),
        parse_cards("Tc Td 8h 6s 2c"),
        parse_cards("Qh Jd"),
        1500,
    )
    assert r.to_json() == {"outcome": "win", "won_cents": 1500, "vig_cents": 75}


def test_settle_hands_ez_uses_dealer_high_and_low_as_seven_cards() -> None:
    r = settle_hands(
        parse_cards("Kc Kd 7h 6s 4c"),
        parse_cards("Ah 9d"),
        parse_cards("Qh Td 8c 7s 3d"),
        parse_cards("5h 2c"),
        1000,
        ez=True,
    )
    assert r.outcome == "push"


def test_settle_hands_rejects_a_card_in_two_hands_naming_it() -> None:
    with pytest.raises(CardError, match=r"dealer_high: duplicate card Kc \(also in player_high\)"):
        settle_hands(
            parse_cards("Kc Kd 7h 5s 3c"),
            parse_cards("Ah 9d"),
            parse_cards("Kc Td 8h 6s 2c"),
            parse_cards("Qh Jd"),
            1000,
        )


def test_settle_hands_rejects_a_card_code_outside_the_deck() -> None:
    with pytest.raises(CardError, match="player_low: no card with code 53"):
        settle_hands(
            parse_cards("Kc Kd 7h 5s 3c"), (53, 1), parse_cards("Tc Td 8h 6s 2c"), (40, 36), 1000
        )


def test_settle_hands_rejects_a_player_without_seven_cards() -> None:
    with pytest.raises(CardError, match="player: a setting holds 7 cards"):
        settle_hands(
            parse_cards("Kc Kd 7h 5s"),
            parse_cards("Ah 9d"),
            parse_cards("Tc Td 8h 6s 2c"),
            parse_cards("Qh Jd"),
            1000,
        )


@pytest.mark.parametrize("wager", [-100, 10.5, True, "100"])
def test_settle_rejects_a_wager_that_is_not_whole_cents(wager: object) -> None:
    with pytest.raises(ValueError, match="wager_cents"):
        settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), DEALER, wager)  # type: ignore[arg-type]


# --- surrender: NY (g)(3), NJ 11.9(e) ----------


def test_surrender_collects_the_wager_g3_i() -> None:
    r = surrender(2500, allowed=True)
    assert (r.outcome, r.net_cents) == ("lose", -2500)


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"allowed": False}, "not offered"),
        ({"allowed": True, "progressive_wager": True}, "progressive payout wager"),
        ({"allowed": True, "seven_card_bonus_wager": True}, "seven-card bonus wager"),
        ({"allowed": True, "ez_optional_wager": True}, "EZ pai gow"),
        ({"allowed": True, "hands_exposed": True}, "exposed"),
    ],
)
def test_surrender_is_refused_g3_nj_11_9_e(kwargs: dict[str, bool], why: str) -> None:
    with pytest.raises(SurrenderRefused, match=why):
        surrender(2500, **kwargs)


# --- two adjacent betting areas: NY (i) ----------


def test_larger_wager_is_set_first_i2() -> None:
    assert setting_order([(3, 500), (4, 1000)]) == [4, 3]
    assert setting_order([(4, 1000), (3, 500)]) == [4, 3]


def test_equal_wagers_are_set_counter_clockwise_i2() -> None:
    # area 1 is farthest to the dealer's right; counter-clockwise runs 1 -> 6
    assert setting_order([(5, 500), (4, 500)]) == [4, 5]


def test_two_areas_must_be_adjacent_i1() -> None:
    with pytest.raises(ValueError, match="not adjacent"):
        setting_order([(2, 500), (4, 500)])
    with pytest.raises(ValueError, match="one or two"):
        setting_order([(1, 500), (2, 500), (3, 500)])


def test_two_areas_are_settled_separately_i2() -> None:
    # the same player, two areas, two settings against one dealer: each its own result
    a = settle(S("Kc Kd 7h 5s 3c", "Ah 9d"), DEALER, 1000)
    b = settle(S("9c 9d 7c 5d 3h", "Jh 4d"), DEALER, 500)
    assert (a.outcome, b.outcome) == ("win", "lose")
    assert a.net_cents + b.net_cents == 950 - 500


# --- antisymmetry (property) ----------


def _legal_setting(cards: tuple[int, ...]) -> Setting:
    """The first 5 + 2 split of seven cards that is not a foul (one always exists)."""
    for low in combinations(cards, 2):
        high = tuple(c for c in cards if c not in low)
        if value5(high)[: len(value2(low))] >= value2(low):
            return Setting(high, low)
    raise AssertionError("no legal setting")  # pragma: no cover


@settings(max_examples=300, deadline=None)
@given(st.permutations(list(range(53))))
def test_swapping_player_and_dealer_swaps_win_and_lose_without_copies(deck: list[int]) -> None:
    """NY (g)(5)-(7): with no copy hand and no foul, the rules are symmetric."""
    p = _legal_setting(tuple(deck[:7]))
    d = _legal_setting(tuple(deck[7:14]))
    assume(value5(p.high) != value5(d.high) and value2(p.low) != value2(d.low))
    there = settle(p, d, 1000).outcome
    back = settle(d, p, 1000).outcome
    assert (there, back) in {("win", "lose"), ("lose", "win"), ("push", "push")}
