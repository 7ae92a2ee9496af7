"""Progressive meters of a level (NJ 13:69E-1.39A, NY 5320.8, NY 5324.41(k)(5),(6))."""

from __future__ import annotations

from typing import Any

from round_support import SUP, Table, of_type, reach, rejection

from fsm.round.config import ProgressiveLevel
from fsm.round.meters import HISTORY, UNIT, LevelMeters


def _level(**kw: int) -> ProgressiveLevel:
    base = {"initial_cents": 1000, "reset_cents": 1000, "rate_bp": 2100, "hidden_rate_bp": 0}
    base.update(kw)
    return ProgressiveLevel("p", **base)  # type: ignore[arg-type]


def test_fractions_of_a_cent_accumulate_never_lost() -> None:
    lvl = _level(rate_bp=2101, hidden_rate_bp=3)
    m = LevelMeters.new(lvl)
    for _ in range(10_000):
        m.contribute(lvl, 1, 100)
    # 10,000 x 21.01 cents = 210,100 cents exactly; 10,000 x 0.03 = 300 cents
    assert m.display == (1000 + 210_100) * UNIT and m.reserve == 300 * UNIT
    assert m.balance_error() == 0


def test_limit_sends_excess_to_overflow_and_reset_uses_overflow_first() -> None:
    lvl = _level(initial_cents=0, reset_cents=50, limit_cents=100, hidden_rate_bp=1000)
    m = LevelMeters.new(lvl)
    for _ in range(10):
        m.contribute(lvl, 1, 100)  # 21 cents each: 100 shown, 110 over
    assert m.cents() == (100, 110, 100)
    m.pay_from_meter(100)
    # reset to 50 from the overflow, then the rest of the overflow back under the limit (100):
    # the rate of progression's money is the meter's (NJ 13:69E-1.39A, NY 5324.41(k)(5))
    assert m.reset(lvl) == (100 * UNIT, 0, 0)
    assert m.cents() == (100, 10, 100) and m.balance_error() == 0


def test_payout_larger_than_meter_is_house_funded_not_negative() -> None:
    lvl = _level(initial_cents=10, reset_cents=0)
    m = LevelMeters.new(lvl)
    short = m.pay_from_meter(2500)
    assert short == 2490 and m.display == 0 and m.house_funded == 2490 * UNIT
    assert m.paid_cents == 2500 and m.balance_error() == 0


def test_history_keeps_last_25_hits_nys_5320_8() -> None:
    m = LevelMeters.new(_level())
    for i in range(30):
        m.record_hit({"round_id": i})
    assert len(m.history) == HISTORY == 25
    assert m.history[0]["round_id"] == 5 and m.history[-1]["round_id"] == 29


def test_correction_cannot_make_meter_negative() -> None:
    m = LevelMeters.new(_level(initial_cents=5))
    assert m.correct("display", -6) is not None
    assert m.correct("jackpot", 1) is not None
    assert m.correct("display", -5) is None and m.display == 0
    assert m.balance_error() == 0 and m.correction_count == 1


def test_meter_correction_only_in_maintenance_with_reason_nj_1_52f() -> None:
    t = Table()
    t.open()
    data: dict[str, Any] = {
        "level": "progressive",
        "meter": "display",
        "delta_cents": 500,
        "reason": "audit adjustment",
        "supervisor": SUP,
    }
    assert "Maintenance" in (rejection(t.ev("meter_corrected", **data)) or "")
    t2 = reach("Maintenance")
    eff = t2.ev("meter_corrected", **data)
    mv = of_type(eff, "meter_movement")[0]
    assert mv["kind"] == "correction" and mv["display_cents"] == 500
    assert mv["reason"] == "audit adjustment" and mv["supervisor"] == SUP
    assert t2.m.meters()["progressive"]["corrections_cents"] == 500
    assert rejection(t2.ev("meter_corrected", **{**data, "reason": ""})) is not None
    assert rejection(t2.ev("meter_corrected", **{**data, "level": "nope"})) is not None


def test_hit_recorded_with_table_position_level_amount_time_round() -> None:
    t = Table(table_id="PG-07")
    t.open()
    t.round_to_settlement(3)
    t.outcomes({3: "royal-flush"})
    t.ev("hit_validated", position=3, supervisor=SUP)
    hit = t.m.meters()["progressive"]["last_hits"][0]
    assert hit["table"] == "PG-07" and hit["position"] == 3 and hit["level"] == "progressive"
    assert hit["amount_cents"] == 10_000 and hit["round_id"] == 1 and hit["time_ms"] > 0


def test_two_levels_each_pay_their_own_lines() -> None:
    t = Table(
        levels=[
            {
                "name": "major",
                "initial_cents": 100_000,
                "rate_bp": 2100,
                "lines": ["natural-royal-flush-and-pair", "five-aces-and-pair"],
            },
            # the minor level pays the 10%-of-meter lines: its meter grows at 21% itself (k)(5)
            {"name": "minor", "initial_cents": 1_000, "rate_bp": 2100},
        ]
    )
    t.open()
    t.round_to_settlement(1)
    t.outcomes({1: "five-aces-and-pair"})
    eff = t.ev("hit_validated", position=1, supervisor=SUP)
    pay = of_type(eff, "pay")[0]
    assert pay["level"] == "major" and pay["cents"] == 100_021
    assert t.m.meters()["minor"]["display_cents"] == 1_021
