"""Starting position: dice total / RNG number to a seat, and the order the stacks go round.

NY 5324.2(b) as restated in table-rules.md; NY 5324.41(f)(3)(iii), (h)(8)(iii), (h)(10)(iii).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from fsm.round.position import (
    counting_order,
    delivery_order,
    dice_number,
    seat_for_dice,
    seat_for_number,
)
from fsm.rules.paytables import side_wager_win_cents


@pytest.mark.parametrize(
    ("total", "number"),
    [(3, 3), (7, 7), (8, 1), (9, 2), (14, 7), (15, 1), (18, 4)],
)
def test_dice_total_counts_to_number(total: int, number: int) -> None:
    assert dice_number(total) == number


def test_total_8_lands_on_dealer_and_14_on_sixth_betting_area() -> None:
    """table-rules.md: a total of 8 lands on the dealer, 14 on the sixth betting area."""
    assert seat_for_dice(8) == 0
    assert seat_for_dice(14) == 6


def test_every_seat_counted_dealer_is_one_then_counterclockwise() -> None:
    assert [seat_for_number(n) for n in range(1, 8)] == [0, 1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("bank", [1, 2, 3, 4, 5, 6])
def test_bank_counts_as_number_one_h8iii_h10iii(bank: int) -> None:
    assert seat_for_number(1, bank) == bank
    assert seat_for_dice(8, bank) == bank
    # the count goes on counterclockwise from the bank and reaches the dealer in turn
    assert seat_for_number(7 - bank + 1, bank) == 0
    assert sorted(counting_order(bank)) == list(range(7))


def test_stacks_go_clockwise_from_starting_position_f3iii() -> None:
    assert delivery_order(0) == [0, 6, 5, 4, 3, 2, 1]
    assert delivery_order(3) == [3, 2, 1, 0, 6, 5, 4]
    for s in range(7):
        order = delivery_order(s)
        assert order[0] == s and sorted(order) == list(range(7))


@pytest.mark.parametrize("bad", [2, 19, -1, True, "8"])
def test_impossible_dice_total_is_an_error_naming_the_field(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^total"):
        dice_number(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cents", "odds", "win"),
    [
        (100, Fraction(6), 600),
        (100, Fraction(11, 2), 500),  # $5.50 rounded down to $5 (j)(2)(vi)
        (300, Fraction(11, 2), 1600),
        (199, Fraction(6), 1100),  # $11.94 -> $11
        (0, Fraction(6), 0),
    ],
)
def test_side_wager_payout_rounded_down_to_dollar_j2vi(
    cents: int, odds: Fraction, win: int
) -> None:
    assert side_wager_win_cents(cents, odds) == win


@pytest.mark.parametrize(
    ("table", "odds"), [("side-1-7-5.5", Fraction(11, 2)), ("side-1-7-6", Fraction(6))]
)
def test_side_wager_payout_agrees_with_shipped_pay_tables_j2vi(table: str, odds: Fraction) -> None:
    from fsm.rules.paytables import load_builtin, side_wager_payout

    pt = load_builtin(table)
    for cents in (100, 175, 300, 500, 2500, 9999):
        assert side_wager_win_cents(cents, odds) == side_wager_payout(pt, cents)
