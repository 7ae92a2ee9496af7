"""`tablectl hands` and `tablectl settle`: the JSON-lines contract of issue 2, run as a user."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

TABLECTL = [sys.executable, "-m", "controller.cli"]


def run(args: list[str], stdin: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run(
        [*TABLECTL, *args], input=stdin, capture_output=True, text=True, timeout=120
    )
    return proc.returncode, [json.loads(x) for x in proc.stdout.splitlines()], proc.stderr


def test_five_card_lines_give_category_naturalness_and_comparable_value() -> None:
    code, out, _ = run(
        ["hands"], "As Ks Qs Js Ts\nAh Kh Qh Jh JK\n10d 9c 8h 7s 6c\nAc 2d 3h 4s 5c\n"
    )
    assert code == 0
    assert [o["category"] for o in out] == ["royal-flush", "royal-flush", "straight", "straight"]
    assert [o["natural"] for o in out] == [True, False, True, True]
    assert out[0]["value"] == out[1]["value"]  # copy hands (c)(5)
    assert out[2]["cards"] == "Td 9c 8h 7s 6c"
    # A-2-3-4-5 is the second-highest straight by default (c)(2)(vii): above T-high
    assert out[3]["value"] > out[2]["value"]


def test_ace_low_straight_option_makes_the_wheel_lowest_c4() -> None:
    _, out, _ = run(["hands", "--ace-low-straight", "lowest"], "Ac 2d 3h 4s 5c\n6c 5h 4d 3s 2c\n")
    assert out[0]["value"] < out[1]["value"]


def test_joker_flush_option_counts_the_joker_as_an_ace() -> None:
    text = "As Ks 9s 4s JK\nAd Kd Qd 9d 5d\n"
    _, default, _ = run(["hands"], text)
    _, ace, _ = run(["hands", "--joker-flush", "ace"], text)
    assert default[0]["value"] < default[1]["value"]
    assert ace[0]["value"] > ace[1]["value"]


def test_two_card_lines_rank_the_low_hand_with_joker_as_ace() -> None:
    _, out, _ = run(["hands"], "JK Ad\nKc Qd\n")
    assert [o["category"] for o in out] == ["pair", "high-card"]
    assert "natural" not in out[0]


def test_seven_card_lines_give_best_hand_house_way_and_progressive_k4() -> None:
    code, out, _ = run(
        ["hands", "--meter", "1234567"], "As Ks Qs Js Ts 2d 2c\n9c 7d 5h 4s 2c Kd Jh\n"
    )
    assert code == 0
    royal, nothing = out
    assert royal["best"] == "royal-flush"
    assert royal["progressive"] == "natural-royal-flush-and-pair"
    assert royal["progressive_cents"] == 1234567  # 100% of the meter for a $1 wager
    assert nothing["best"] == "high-card"
    assert nothing["progressive"] is None and nothing["progressive_cents"] == 0
    # house way, no pair: highest card behind, second and third highest in front
    assert sorted(nothing["house_way"]["low"].split()) == ["9c", "Jh"]
    assert "Kd" in nothing["house_way"]["high"].split()
    for o in out:
        cards = set(o["cards"].split())
        hw = o["house_way"]
        assert set(hw["high"].split()) | set(hw["low"].split()) == cards
        assert len(hw["high"].split()) == 5 and len(hw["low"].split()) == 2


def test_natural_royal_pays_ten_percent_of_the_meter_k4() -> None:
    _, out, _ = run(["hands", "--meter", "5000000"], "As Ks Qs Js Ts 2d 3c\n")
    assert out[0]["progressive"] == "natural-royal-flush"
    assert out[0]["progressive_cents"] == 500000


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("As Ks Qs Js", "expected 2 or 5 or 7 cards, got 4"),
        ("As As Qs Js Ts", "duplicate card As"),
        ("Zs Ks Qs Js Ts", "unknown card 'Zs'"),
    ],
)
def test_a_bad_line_is_reported_and_the_command_goes_on_then_exits_2(
    line: str, fragment: str
) -> None:
    code, out, _ = run(["hands"], f"As Ks Qs Js Ts\n{line}\n2c 2d\n")
    assert code == 2
    assert out[0]["category"] == "royal-flush"
    assert out[1]["line"] == 2 and fragment in out[1]["error"]
    assert out[2]["category"] == "pair"


def _settle(objs: list[dict[str, Any]], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, _ = run(["settle", *args], "".join(json.dumps(o) + "\n" for o in objs))
    return code, out


def hands(ph: str, pl: str, dh: str, dl: str, wager: int = 1000, **kw: Any) -> dict[str, Any]:
    return {
        "player_high": ph,
        "player_low": pl,
        "dealer_high": dh,
        "dealer_low": dl,
        "wager_cents": wager,
        **kw,
    }


def test_settle_win_push_lose_with_vigorish_g5_to_g8() -> None:
    code, out = _settle(
        [
            # both player hands higher: win, $10 pays $10 less 5% = $0.50 vig
            hands("Kc Kd 7h 4s 2c", "Ah Qd", "Jc Jd 8h 5s 3c", "Kh 9d"),
            # high higher, low lower: push (g)(6)(i)
            hands("Kc Kd 7h 4s 2c", "9h 8d", "Jc Jd 8h 5s 3c", "Kh Qd"),
            # both lower: lose (g)(5)(i)
            hands("Jc Jd 8h 5s 3c", "Kh 9d", "Kc Kd 7h 4s 2c", "Ah Qd"),
            # copy low hand and lower high: lose (g)(5)(ii)
            hands("Jc Jd 8h 5s 3c", "Ah Qd", "Kc Kd 7h 4s 2c", "As Qc"),
            # $12 win: 5% is $0.60, rounded up to the next 25 cents = $0.75 (g)(8)
            hands("Kc Kd 7h 4s 2c", "Ah Qd", "Jc Jd 8h 5s 3c", "Kh 9d", 1200),
        ]
    )
    assert code == 0
    assert [o["outcome"] for o in out] == ["win", "push", "lose", "lose", "win"]
    assert out[0] == {"outcome": "win", "won_cents": 1000, "vig_cents": 50}
    assert out[4]["vig_cents"] == 75
    assert out[1]["won_cents"] == 0 and out[1]["vig_cents"] == 0


def test_settle_foul_loses_g5_iii() -> None:
    # player's low hand (pair of aces) outranks the high hand (pair of kings): a foul
    _, out = _settle([hands("Kc Kd 7h 4s 2c", "Ah Ad", "Jc Jd 8h 5s 3c", "Kh 9d")])
    assert out[0]["outcome"] == "lose"


def test_settle_ez_pays_no_commission_nj_11_9_j() -> None:
    _, out = _settle([hands("Kc Kd 7h 4s 2c", "Ah Qd", "Jc Jd 8h 5s 3c", "Kh 9d", ez=True)])
    assert out[0] == {"outcome": "win", "won_cents": 1000, "vig_cents": 0}


def test_settle_bad_lines_are_reported_and_exit_2() -> None:
    code, out, _ = run(
        ["settle"],
        '{"player_high": "Kc Kd 7h 4s 2c"}\nnot json\n'
        + json.dumps(hands("Kc Kd 7h 4s 2c", "Ah Qd", "Kc Jd 8h 5s 3c", "Kh 9d"))
        + "\n",
    )
    assert code == 2
    assert "missing field" in out[0]["error"]
    assert out[1]["line"] == 2 and "JSON" in out[1]["error"]
    assert "duplicate" in out[2]["error"] or "Kc" in out[2]["error"]
