"""The dealer drills of fsm/rules/drills.py and the practice hands (issue 11, Training): each
drill judged by the same rules the round machine uses, and told why when wrong."""

from __future__ import annotations

import random

import pytest

from fsm.rules.cards import DECK, parse_cards
from fsm.rules.drills import (
    PRACTICE_HANDS,
    SeatAnswer,
    arrange,
    check_house_way,
    check_progressive_pay,
    check_settlement,
    explain_rule,
    practice_hand,
    progressive_pay,
    settle_round,
    stack_slots,
)
from fsm.rules.houseway import HouseWay
from fsm.rules.progressive import REGULATION_MINIMUMS, default_table
from fsm.rules.settlement import Setting

WAY = HouseWay.load("reference")
TABLE = default_table()


@pytest.mark.parametrize("line", list(PRACTICE_HANDS))
@pytest.mark.parametrize("meter", [100_000, 123_456, 1_000_000, 5_000_000])
@pytest.mark.parametrize("wager", [100, 500])
def test_each_practice_hand_wins_its_line_of_the_pay_table_at_any_meter_from_the_reset(
    line: str, meter: int, wager: int
) -> None:
    """NY 5324.41(k)(4) lines and (g)(8): the hand's best line is the line it is dealt for."""
    assert TABLE.best_line(practice_hand(line), meter, wager_cents=wager) == line


def test_progressive_drill_multiplies_a_five_dollar_wagers_meter_share_by_five() -> None:
    """NY 5324.41(k)(4)(i): "for a $5 progressive wager, multiply payout amount by five"."""
    pay = progressive_pay(TABLE, practice_hand("natural-royal-flush"), 123_456, 500)
    assert pay.amount_cents == 61_728 and "x5 for this $5.00 wager" in pay.explanation
    other = progressive_pay(
        TABLE, practice_hand("natural-royal-flush"), 123_456, 500, five_times_meter=False
    )
    # the other reading (a regulator's ruling): the share stays $123.45, so the hand's best
    # line is the royal flush's fixed $100 x 5 ((g)(8): the line paying the most)
    assert (other.line, other.amount_cents) == ("royal-flush", 50_000)


def test_there_is_a_practice_hand_for_every_line_of_ny_5324_41_k4() -> None:
    assert set(PRACTICE_HANDS) == {name for name, _, _ in REGULATION_MINIMUMS}


def test_practice_hand_refuses_an_unknown_line_naming_the_lines() -> None:
    with pytest.raises(ValueError, match="royal-flush"):
        practice_hand("jackpot")


def test_stack_slots_of_the_deal_and_of_the_three_card_bonus() -> None:
    """Seven stacks of seven from the top; with the three-card bonus (NY 5324.41(n)(5),(7)) the
    threes of every stack first, then the fours."""
    assert stack_slots(2, 7) == list(range(14, 21))
    assert stack_slots(1, 3, (3, 4)) == [3, 4, 5, 9 + 4, 9 + 5, 9 + 6, 9 + 7]
    with pytest.raises(ValueError):
        stack_slots(7, 7)


def test_arrange_puts_the_cards_in_their_slots_and_keeps_the_same_53_cards() -> None:
    deck = list(DECK)
    random.Random(5).shuffle(deck)
    hand = practice_hand("five-aces")
    slots = stack_slots(4, 7)
    out = arrange(deck, slots, hand)
    assert sorted(out) == sorted(deck)
    assert [out[s] for s in slots] == list(hand)
    moved = {i for i in range(len(deck)) if out[i] != deck[i]}
    assert len(moved) <= 2 * len(hand)  # only the swapped cards moved


def test_house_way_drill_accepts_the_house_ways_setting_and_the_same_ranks_in_other_suits() -> None:
    """NY 5324.41(g)(2): the dealer sets the hand as the house way does."""
    cards = parse_cards("As Ad Kh Kd 5c 7s 9h")
    verdict = check_house_way(WAY, cards, parse_cards("As Ad 9h 7s 5c"), parse_cards("Kh Kd"))
    assert verdict.correct and verdict.rule == "reference.two_pair.rules[5]: split"
    assert "correct" in verdict.explanation
    # the low hand's two kings are the same hand whichever is written first
    same = check_house_way(WAY, cards, parse_cards("Ad As 5c 7s 9h"), parse_cards("Kd Kh"))
    assert same.correct


def test_house_way_drill_says_why_a_wrong_setting_is_wrong_with_the_rule_applied() -> None:
    cards = parse_cards("As Ad Kh Kd 5c 7s 9h")
    verdict = check_house_way(WAY, cards, parse_cards("As Ad Kh Kd 9h"), parse_cards("7s 5c"))
    assert not verdict.correct and verdict.foul is None
    assert "As Ad 9h 7s 5c / Kh Kd" in verdict.explanation
    assert "two pair, aces and kings behind" in verdict.explanation  # what the dealer did
    assert "split" in verdict.explanation and "lower pair goes in front" in verdict.explanation


def test_house_way_drill_names_the_foul_of_a_low_hand_above_the_high_hand() -> None:
    """NY 5324.41(g)(1), (g)(5)(iii): the low hand may not outrank the high hand."""
    cards = parse_cards("As Ad Kh Kd 5c 7s 9h")
    verdict = check_house_way(WAY, cards, parse_cards("Kh Kd 9h 7s 5c"), parse_cards("As Ad"))
    assert not verdict.correct and verdict.foul is not None
    assert "outranks" in verdict.explanation and "(g)(5)(iii)" in verdict.explanation


def test_every_rule_the_house_way_applies_has_words_for_a_dealer() -> None:
    deck = list(DECK)
    rules: set[str] = set()
    rng = random.Random(11)
    for _ in range(3000):
        rng.shuffle(deck)
        rules.add(WAY.explain(deck[:7]).rule)
    for line in PRACTICE_HANDS:
        rules.add(WAY.explain(practice_hand(line)).rule)
    for rule in rules:
        words = explain_rule(rule)
        assert words and "_" not in words.split("(")[0], (rule, words)


def test_settlement_drill_outcomes_and_the_vigorish_rounded_up_to_25_cents() -> None:
    """NY 5324.41(g)(5)-(8): both hands higher win less 5% rounded up to the next 25 cents."""
    dealer = WAY.set(parse_cards("9c 8d 7h 3s 2c Qd Kh"))
    winner = WAY.set(parse_cards("As Ad Kh Kd 5c 7s 9h".replace("Kh", "Ks")))
    loser = Setting(parse_cards("Jc 8c 6d 4h 3d"), parse_cards("Ts 2h"))
    expected = settle_round(dealer, {1: (winner, 1_010), 4: (loser, 500)})
    assert expected[1].outcome == "win" and expected[1].vig_cents == 75  # 5% of $10.10 = 50.5c
    assert expected[4].outcome == "lose"
    verdicts = check_settlement(expected, {1: SeatAnswer("win", 50), 4: SeatAnswer("lose")})
    assert [v.correct for v in verdicts] == [False, True]
    assert "vigorish is $0.75, not $0.50" in verdicts[0].explanation
    right = check_settlement(expected, {1: SeatAnswer("win", 75), 4: SeatAnswer("lose")})
    assert all(v.correct for v in right)
    missing = check_settlement(expected, {})
    assert not any(v.correct for v in missing) and "no answer" in missing[0].explanation


def test_progressive_drill_pays_the_line_at_the_meter_of_the_moment() -> None:
    """NY 5324.41(k)(4), (k)(6): a share of the meter at payment time, rounded down to the cent;
    a fixed amount scales with the wager; (k)(5) names what comes off the meter."""
    natural = progressive_pay(TABLE, practice_hand("natural-royal-flush"), 123_456)
    assert (natural.line, natural.amount_cents, natural.from_meter) == (
        "natural-royal-flush",
        12_345,
        True,
    )
    assert "10% of the meter $1,234.56" in natural.explanation
    flush = progressive_pay(TABLE, practice_hand("flush"), 123_456, wager_cents=500)
    assert flush.line == "flush" and flush.amount_cents == 5 * TABLE.line("flush").amount_cents  # type: ignore[operator]
    nothing = progressive_pay(TABLE, parse_cards("2c 4d 6h 8s Tc Qd 3h"), 100_000)
    assert nothing.line is None and nothing.amount_cents == 0
    assert check_progressive_pay(natural, 12_345).correct
    wrong = check_progressive_pay(natural, 12_346)
    assert not wrong.correct and "$123.46 is wrong" in wrong.explanation


def test_progressive_drill_refuses_a_meter_that_is_not_whole_cents() -> None:
    with pytest.raises(ValueError, match="meter_cents"):
        progressive_pay(TABLE, practice_hand("flush"), -1)
