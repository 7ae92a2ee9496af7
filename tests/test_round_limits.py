"""Limits the round enforces at runtime, not only at load.

- NY 5324.41(k)(1): only a player with a pai gow wager may make the progressive wager — in every
  dealing mode, once the dealer entered the pai gow positions (with the three-card bonus they
  are required: tests/test_round_three_card.py);
- a bonus wager the round takes (the 1-7 side wager) is at least the table's least wager
  (`[bonus] min_wager_cents`, `BonusConfig.check_wager`; NY 5324.41(l)(2) sets $1 for the
  insurance and fortune bonus wagers, which the controller does not take);
- a level's limit (NJ 13:69E-1.39A: base, reset, rate, hidden rate, limit; overflow above the
  limit on its own meter): the display never passes the limit, and the overflow is the meter's
  money (NY 5324.41(k)(5)): after a hit it refills the reset first, then the display up to the
  limit.

Each test drives `RoundMachine` through `tests/round_support.Table`.
"""

from __future__ import annotations

from typing import Any

import pytest
from round_support import SUP, Table, rejection


@pytest.mark.parametrize("mode", ["rng", "dice"])
def test_a_progressive_wager_without_a_pai_gow_wager_is_refused_in_every_mode_k1(
    mode: str,
) -> None:
    t = Table(start_mode=mode)
    t.open()
    t.ev("chip_detected", position=2)
    assert rejection(t.ev("pai_gow_wagers", positions=[2, 5])) is None
    t.ev("chip_detected", position=4)  # area 4 holds no pai gow wager
    t.ev("lockout_pressed")
    refused = rejection(t.ev("chips_confirmed"))
    assert refused is not None and "position 4" in refused and "(k)(1)" in refused
    assert rejection(t.ev("pai_gow_wagers", positions=[2, 4])) is None
    assert rejection(t.ev("chips_confirmed")) is None


def test_a_side_wager_below_the_tables_least_is_refused_at_runtime_l2() -> None:
    bonus: dict[str, Any] = {
        "offered": ["side-1-7"],
        "tables": {"side-1-7": "side-1-7-6"},
        "min_wager_cents": {"side-1-7": 500},
    }
    t = Table(side_wager={"offered": True}, bonus=bonus)
    t.open()
    t.ev("chip_detected", position=1)
    t.ev("lockout_pressed")
    low = t.ev("side_wagers", bets=[{"position": 1, "number": 3, "cents": 100}])
    assert "a wager of 100 cents is below the least, 500" in (rejection(low) or "")
    ok = t.ev("side_wagers", bets=[{"position": 1, "number": 3, "cents": 500}])
    assert rejection(ok) is None


def test_the_display_stops_at_the_limit_and_the_overflow_refills_it_nj_39a_k5() -> None:
    level = {
        "name": "progressive",
        "initial_cents": 1_000,
        "reset_cents": 100,
        "rate_bp": 2100,
        "limit_cents": 1_050,
    }
    t = Table(levels=[level])
    t.open()
    for _ in range(2):  # 12 wagers x 21 cents = 252: 50 under the limit, 202 over it
        t.round_to_settlement(1, 2, 3, 4, 5, 6)
        t.outcomes(dict.fromkeys(range(1, 7)))
        t.ev("shuffle_complete", count=53)
    m = t.m.meters()["progressive"]
    assert (m["display_cents"], m["overflow_cents"]) == (1_050, 202)
    t.round_to_settlement(1)
    t.outcomes({1: "straight-flush"})
    t.ev("hit_validated", position=1, supervisor=SUP)  # a straight flush: $25 off the meter
    m = t.m.meters()["progressive"]
    # the display (1,050) paid out, the house funds the rest; the reset (100) comes from the
    # overflow (202 + 21 this round's wager over the limit), then the rest of it back under
    # the limit: 123 more
    assert (m["display_cents"], m["overflow_cents"]) == (223, 0)
