"""The progressive payout wager pay table, NY 5324.41(k)(4)-(6); "X and pair" per the issue."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.rules.cards import parse_cards
from fsm.rules.progressive import PayTableError, ProgressiveTable, default_table

TABLE = default_table()


def line(cards: str, meter: int = 1_000_000, wager: int = 100) -> str | None:
    return TABLE.best_line(parse_cards(cards), meter, wager_cents=wager)


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        ("As Ks Qs Js Ts 2d 2c", "natural-royal-flush-and-pair"),
        ("Ac Ad Ah As JK Kd Kc", "five-aces-and-pair"),
        ("As Ks Qs Js Ts 2d 3c", "natural-royal-flush"),
        ("Ac Ad Ah As JK 2d 3c", "five-aces"),
        ("As Ks Qs Js JK 2d 2c", "royal-flush-and-pair"),
        ("As Ks Qs Js JK 2d 3c", "royal-flush"),
        ("9h 8h 7h 6h 5h Kd Kc", "straight-flush-and-pair"),
        ("9h 8h 7h 6h 5h Kd Qc", "straight-flush"),
        ("9h 9d 9c 9s 5h Kd Kc", "four-of-a-kind-and-pair"),
        ("9h 9d 9c 9s 5h Kd Qc", "four-of-a-kind"),
        ("9h 9d 9c 5s 5h Kd Kc", "full-house-and-pair"),
        ("9h 9d 9c 5s 5h Kd Qc", "full-house"),
        ("Ah Jh 9h 6h 2h Kd Kc", "flush-and-pair"),
        ("Ah Jh 9h 6h 2h Kd Qc", "flush"),
        ("Td 9c 8h 7s 6c Kd Kc", "straight-and-pair"),
        ("Td 9c 8h 7s 6c Kd Qc", "straight"),
        ("8c 8d 8h Ks 2c 5d 4c", "three-of-a-kind"),
        ("8c 8d Kh Ks 2c 5d 4c", None),
    ],
)
def test_each_line_of_the_k4_table(cards: str, expected: str | None) -> None:
    assert line(cards) == expected


def test_joker_with_an_ace_is_the_pair_of_x_and_pair() -> None:
    # straight in five cards, joker + ace in the other two: a pair of aces (c)(1)
    assert line("Td 9c 8h 7s 6c JK Ad") == "straight-and-pair"


def test_fixed_payouts_for_a_one_dollar_wager_k4_ii() -> None:
    assert TABLE.payout_cents("royal-flush-and-pair", 100, 0) == 200_00
    assert TABLE.payout_cents("three-of-a-kind", 100, 0) == 2_00
    assert TABLE.payout_cents("flush-and-pair", 100, 0) == 6_00


def test_five_dollar_wager_pays_five_times_k4_i() -> None:
    """NY (k)(4)(i): "multiply payout amount by five" — every amount, the meter shares too (this
    test asserted the fixed amounts only before; a share of the meter now pays five shares)."""
    assert TABLE.payout_cents("royal-flush", 500, 0) == 500_00
    assert TABLE.payout_cents("straight", 500, 0) == 10_00
    assert TABLE.payout_cents("natural-royal-flush-and-pair", 500, 1_000_00) == 5_000_00
    assert TABLE.payout_cents("five-aces", 500, 1_000_00) == 500_00
    # the other reading, on a regulator's ruling only (game.five_dollar_ruling)
    share = TABLE.payout_cents(
        "natural-royal-flush-and-pair", 500, 1_000_00, five_times_meter=False
    )
    assert share == 1_000_00


def test_meter_lines_use_the_meter_at_payment_k6() -> None:
    assert TABLE.payout_cents("natural-royal-flush-and-pair", 100, 12_345_67) == 12_345_67
    assert TABLE.payout_cents("five-aces", 100, 12_345_67) == 1_234_56  # 10%, down to the cent


def test_only_large_payouts_and_straight_flushes_come_off_the_meter_k5() -> None:
    assert TABLE.deducted_from_meter("straight-flush", 100, 25_00)  # any straight flush
    assert TABLE.deducted_from_meter("straight-flush-and-pair", 100, 50_00)
    assert TABLE.deducted_from_meter("royal-flush", 100, 100_00)  # $50 or more for $1
    assert not TABLE.deducted_from_meter("four-of-a-kind-and-pair", 100, 40_00)
    assert not TABLE.deducted_from_meter("full-house", 100, 5_00)
    assert not TABLE.deducted_from_meter("four-of-a-kind-and-pair", 500, 200_00)  # < $250
    assert TABLE.deducted_from_meter("royal-flush", 500, 500_00)
    assert TABLE.deducted_from_meter("straight-flush", 500, 125_00)
    assert TABLE.deducted_from_meter("five-aces", 100, 10_00)  # a share of the meter always


def test_best_line_is_the_highest_payout_now_g8() -> None:
    # five aces: with a $50 meter, 10% of it ($5) is less than four of a kind ($20);
    # (g)(8) entitles the player to the hand type that pays most.
    assert line("Ac Ad Ah As JK Kd Qc", meter=50_00) == "four-of-a-kind"
    assert line("Ac Ad Ah As JK Kd Qc", meter=1_000_00) == "five-aces"


def test_only_one_or_five_dollar_wagers_k1() -> None:
    with pytest.raises(ValueError, match="not accepted"):
        TABLE.payout_cents("straight", 200, 0)


def _write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "table.toml"
    p.write_text(body)
    return p


def _shipped_text() -> str:
    return (Path(__file__).parents[1] / "fsm/data/progressive/ny-5324-41-k4.toml").read_text()


def test_a_table_paying_less_than_the_regulation_is_refused_at_load_k4(tmp_path: Path) -> None:
    text = _shipped_text().replace("amount_cents = 300\n", "amount_cents = 250\n")
    with pytest.raises(PayTableError, match="'flush' must pay at least 300 cents"):
        ProgressiveTable.load(_write(tmp_path, text))


def test_a_table_paying_more_is_accepted(tmp_path: Path) -> None:
    text = _shipped_text().replace("amount_cents = 300\n", "amount_cents = 400\n")
    assert ProgressiveTable.load(_write(tmp_path, text)).payout_cents("flush", 100, 0) == 400


def test_a_meter_line_cannot_become_a_fixed_amount(tmp_path: Path) -> None:
    text = _shipped_text().replace(
        'name = "five-aces"\nmeter_percent = 10', 'name = "five-aces"\namount_cents = 100000'
    )
    with pytest.raises(PayTableError, match="'five-aces' must pay at least 10% of the meter"):
        ProgressiveTable.load(_write(tmp_path, text))


def test_missing_and_unknown_lines_and_wagers_are_named(tmp_path: Path) -> None:
    text = _shipped_text().replace('name = "straight"\n', 'name = "stright"\n')
    with pytest.raises(PayTableError, match=r"line 'straight' of NY 5324.41\(k\)\(4\) is missing"):
        ProgressiveTable.load(_write(tmp_path, text))
    text = _shipped_text().replace("wager_cents = [100, 500]", "wager_cents = [100, 200]")
    with pytest.raises(PayTableError, match="200 is not allowed"):
        ProgressiveTable.load(_write(tmp_path, text))
    with pytest.raises(PayTableError, match="not valid TOML"):
        ProgressiveTable.load(_write(tmp_path, "line = [[["))
