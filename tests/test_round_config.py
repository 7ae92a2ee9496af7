"""Configuration of the round: validated at load, errors name the key (house rules)."""

from __future__ import annotations

from typing import Any

import pytest

from fsm.round.config import GameConfig, with_changes


def _err(data: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as e:
        GameConfig.from_mapping(data, "game")
    return str(e.value)


def test_defaults_are_valid_and_round_trip() -> None:
    c = GameConfig.from_mapping({}, "game")
    assert GameConfig.from_mapping(c.to_mapping(), "game") == c


def test_rate_below_21_percent_of_one_dollar_rejected_k5() -> None:
    msg = _err({"levels": [{"name": "p", "initial_cents": 0, "rate_bp": 2099}]})
    assert msg.startswith("game.levels[0].rate_bp") and "21%" in msg


def test_rate_below_27_percent_of_five_dollars_rejected_k5() -> None:
    msg = _err(
        {
            "progressive_wager_cents": 500,
            "levels": [{"name": "p", "initial_cents": 0, "rate_bp": 2600}],
        }
    )
    assert "27%" in msg
    ok = GameConfig.from_mapping(
        {
            "progressive_wager_cents": 500,
            "levels": [{"name": "p", "initial_cents": 0, "rate_bp": 2700}],
        }
    )
    assert ok.levels[0].rate_bp == 2700


def test_wager_other_than_one_or_five_dollars_rejected_k1() -> None:
    assert _err({"progressive_wager_cents": 200}).startswith("game.progressive_wager_cents")


@pytest.mark.parametrize("odds", ["5:1", "6.5:1", "seven"])
def test_side_wager_odds_outside_5_5_to_6_rejected_j2vi(odds: str) -> None:
    assert _err({"side_wager": {"offered": True, "odds": odds}}).startswith("game.side_wager.odds")


@pytest.mark.parametrize(("dealing", "rule"), [("manual_shoe", "(f)(1)"), ("hand", "(f)(2)")])
def test_a_table_without_an_automated_shoe_is_refused_f1_f2(dealing: str, rule: str) -> None:
    """NY 5324.41(f)(1)-(2): a manual shoe or a deal from the hand is not supported (the
    controller follows the deal by the automated shoe's reports, (f)(3)): refused at load with
    the reason, never played with checks that cannot happen."""
    msg = _err({"dealing": dealing})
    assert msg.startswith("game.dealing:") and rule in msg and "not supported" in msg
    assert GameConfig.from_mapping({"dealing": "automated_shoe"}, "game") == GameConfig()


def test_side_wager_needs_rng_j1() -> None:
    msg = _err({"start_mode": "dice", "side_wager": {"offered": True}})
    assert msg.startswith("game.side_wager.offered") and "(j)(1)" in msg


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"colour": "red"}, "game.colour"),
        (
            {"levels": [{"name": "p", "initial_cents": 0, "rate_bp": 2100, "x": 1}]},
            "game.levels[0].x",
        ),
        (
            {"levels": [{"name": "p", "initial_cents": -1, "rate_bp": 2100}]},
            "game.levels[0].initial_cents",
        ),
        (
            {"levels": [{"name": "p", "initial_cents": 500, "rate_bp": 2100, "limit_cents": 100}]},
            "game.levels[0].limit_cents",
        ),
        (
            {
                "levels": [
                    {"name": "p", "initial_cents": 0, "rate_bp": 9000, "hidden_rate_bp": 2000}
                ]
            },
            "game.levels[0].rate_bp",
        ),
        (
            {"levels": [{"name": "p", "initial_cents": 0, "rate_bp": 2100, "lines": ["bogus"]}]},
            "game.levels[0].lines",
        ),
        ({"start_mode": "cards"}, "game.start_mode"),
        ({"card_reading_shoe": "yes"}, "game.card_reading_shoe"),
        ({"paytable": "no-such-table"}, "game.paytable"),
    ],
)
def test_bad_key_named_in_error(data: dict[str, Any], key: str) -> None:
    assert _err(data).startswith(key)


def test_with_changes_validates_dotted_keys() -> None:
    c = GameConfig.from_mapping({}, "game")
    c2 = with_changes(c, {"levels[0].rate_bp": 2500, "side_wager.odds": "5.5:1"})
    assert c2.levels[0].rate_bp == 2500 and c2.side_wager_odds == "5.5:1"
    with pytest.raises(ValueError, match=r"^game.levels\[0\].rate_bp"):
        with_changes(c, {"levels[0].rate_bp": 100})
    with pytest.raises(ValueError, match="no such key"):
        with_changes(c, {"levels[3].rate_bp": 2500})
