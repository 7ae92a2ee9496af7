"""A player's setting: five cards behind, two in front, the seven dealt, high at least low.

NY 5324.41(g)(1), (g)(5)(iii),(iv); NJ 11.9(a), (g)3-4.
"""

from __future__ import annotations

import pytest

from fsm.rules.cards import parse_cards
from fsm.rules.ranking import RankingOptions, value2, value5
from fsm.rules.setting import (
    Setting,
    SettingFoul,
    check_setting,
    describe_high,
    describe_low,
    is_foul,
    validate_setting,
)

DEALT = parse_cards("7s 7d 5c 5h Kd 9c 2s")


def _setting(high: str, low: str) -> Setting:
    return Setting(parse_cards(high), parse_cards(low))


def test_correct_setting_is_not_a_foul_g1() -> None:
    s = _setting("7s 7d Kd 9c 2s", "5c 5h")
    assert check_setting(s.high, s.low, DEALT) is None
    assert validate_setting(s, DEALT) is s
    assert not is_foul(s)


def test_low_pair_of_7s_over_high_pair_of_5s_fouls_g5iii() -> None:
    foul = check_setting(parse_cards("5c 5h Kd 9c 2s"), parse_cards("7s 7d"), DEALT)
    assert foul is not None
    assert foul.reason == "low hand pair of 7s outranks high hand pair of 5s"
    assert "(g)(5)(iii)" in foul.rule and "11.9" in foul.rule


def test_nj_example_pair_of_7s_front_needs_at_least_7s_behind_nj_11_9a() -> None:
    # NJ 11.9(a): "if the two-card hand contains a pair of sevens, the five-card hand must contain
    # at least a pair of sevens and the three remaining cards" - an equal pair behind is enough.
    dealt = parse_cards("7s 7d 7c 7h Kd 9c 2s")
    assert check_setting(parse_cards("7c 7h Kd 9c 2s"), parse_cards("7s 7d"), dealt) is None
    foul = check_setting(parse_cards("7c 6h Kd 9c 2s"), parse_cards("7s 7d"))
    assert foul is not None and foul.reason.startswith("low hand pair of 7s outranks high hand")
    # "at least a pair of sevens": a lower pair behind is a foul too
    foul = check_setting(parse_cards("6c 6h Kd 9c 2s"), parse_cards("7s 7d"))
    assert foul is not None and foul.reason.startswith("low hand pair of 7s outranks high hand")


def test_unpaired_front_above_unpaired_back_fouls_g5iii() -> None:
    foul = check_setting(parse_cards("Qd 9c 7s 5h 2s"), parse_cards("As Kd"))
    assert foul is not None
    assert foul.reason == "low hand A-K high outranks high hand Q high"


def test_front_equal_to_back_top_cards_is_allowed_g1() -> None:
    # A-K in front, A-K-x-x-x behind: the high hand is higher (its third card), not lower.
    assert check_setting(parse_cards("Ad Kc 7s 5h 2s"), parse_cards("As Kd")) is None


def test_joker_with_ace_in_front_is_a_pair_of_aces_c1() -> None:
    foul = check_setting(parse_cards("Kd Kc 7s 5h 2s"), parse_cards("JK As"))
    assert foul is not None
    assert foul.reason == "low hand pair of aces outranks high hand pair of kings"


@pytest.mark.parametrize(
    ("high", "low", "reason"),
    [
        ("7s 7d 5c 5h", "Kd 9c 2s", "high hand has 4 cards; it must have 5"),
        ("7s 7d 5c 5h Kd 9c", "2s", "high hand has 6 cards; it must have 5"),
        ("7s 7d 5c 5h Kd", "9c", "low hand has 1 cards; it must have 2"),
    ],
)
def test_wrong_card_counts_foul_g5iv(high: str, low: str, reason: str) -> None:
    foul = check_setting(parse_cards(high), parse_cards(low), DEALT)
    assert foul is not None
    assert foul.reason == reason
    assert "(g)(5)(iv)" in foul.rule


def test_card_set_twice_fouls_g5iv() -> None:
    foul = check_setting((*parse_cards("7s 7d 5c 5h Kd"),), parse_cards("Kd 2s"))
    assert foul is not None and foul.reason == "card Kd is set twice"


def test_card_not_dealt_fouls_g5iv() -> None:
    foul = check_setting(parse_cards("7s 7d 5c 5h Kd"), parse_cards("9c Ah"), DEALT)
    assert foul is not None and foul.reason == "card Ah was not dealt to this hand"


def test_not_a_card_fouls_g5iv() -> None:
    foul = check_setting((0, 1, 2, 3, 99), (4, 5))
    assert foul is not None and foul.reason == "99 is not a card of the deck"


def test_validate_raises_a_value_error_naming_the_reason_g5iii() -> None:
    with pytest.raises(SettingFoul, match="low hand pair of 7s outranks high hand pair of 5s"):
        validate_setting(_setting("5c 5h Kd 9c 2s", "7s 7d"), DEALT)
    assert issubclass(SettingFoul, ValueError)


def test_a_straight_behind_beats_any_front_under_both_ranking_options_c4() -> None:
    # A-2-3-4-5 is a straight under either option (second highest or lowest), above any pair.
    for opts in (RankingOptions("second"), RankingOptions("lowest")):
        assert (
            check_setting(parse_cards("As 2d 3c 4h 5s"), parse_cards("Ad Ac"), None, opts) is None
        )


def test_descriptions_read_like_the_regulation_c2() -> None:
    assert describe_low(value2(parse_cards("Ts Td"))) == "pair of 10s"
    assert describe_low(value2(parse_cards("Qs 3d"))) == "Q-3 high"
    assert describe_high(value5(parse_cards("Ts Td 4c 4h 2s"))) == "two pair, 10s and 4s"
    assert describe_high(value5(parse_cards("Js Jd Jc 4h 2s"))) == "three jacks"
    assert describe_high(value5(parse_cards("Js Jd Jc 4h 4s"))) == "full house, jacks over 4s"
    assert describe_high(value5(parse_cards("As Ad Ac Ah JK"))) == "five aces"
    assert str(_setting("5c 5h Kd 9c 2s", "7s 7d")) == "5c 5h Kd 9c 2s / 7s 7d"
