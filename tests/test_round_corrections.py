"""Corrections of a hit's line and the order every payment of a round is made in.

- NY 5324.41(k)(3)(ii): before paying, the dealer verifies the hand is a winning hand; a line
  entered wrongly is corrected by a supervisor, upward or downward, until it is paid, and the hit
  is then decided at the meter as it stands ((g)(8), (k)(6)); journaled with both lines, the
  reason and the supervisor. After payment a correction is an adjustment with its reason:
  what the right line pays now less what was paid.
- NY 5324.41(g)(7), NJ 13:69F-11.9(i): winning wagers are paid from the dealer's right,
  counter-clockwise, whatever pays them (the chip tray, the meter, the house).

Each test drives `RoundMachine` through `tests/round_support.Table`; expected amounts come from
the pay table of (k)(4) ($3 flush, $100 royal flush, 100% of the meter for a natural royal flush
and pair) and the meter the test built, not from the code.
"""

from __future__ import annotations

from typing import Any

import pytest
from round_support import SUP, Table, of_type, rejection

from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine, replay

JACKPOT = "natural-royal-flush-and-pair"


def pays(effects: list[Effect]) -> list[dict[str, Any]]:
    return [e.to_json() for e in of_type(effects, "pay")]


def display(t: Table) -> int:
    return int(t.m.meters()["progressive"]["display_cents"])


# --- (k)(3)(ii) before payment: upward and downward ------------------------------------------


def test_a_royal_flush_entered_low_is_corrected_upward_and_paid_the_whole_meter_k3ii() -> None:
    """The dealer entered "royal-flush" for a natural royal flush and pair; entering it again is
    refused, but a supervisor corrects it upward: the hit is then paid 100% of the meter as it
    stands at validation (k)(4), (k)(6), journaled with both lines, reason and supervisor."""
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: "royal-flush"})
    assert t.state == "Open_JackpotPending"
    again = t.ev("progressive_outcome", position=2, line=JACKPOT)
    assert rejection(again) is not None  # the outcome is entered once
    eff = t.ev("hit_corrected", position=2, line=JACKPOT, supervisor=SUP, reason="a pair too")
    assert rejection(eff) is None, eff
    fixed = of_type(eff, "hit_corrected")[0].to_json()
    assert (fixed["line"], fixed["corrected_line"]) == ("royal-flush", JACKPOT)
    assert (fixed["supervisor"], fixed["reason"]) == (SUP, "a pair too")
    assert t.state == "Open_JackpotPending"  # a meter payout still waits for validation
    meter = display(t)
    paid = pays(t.ev("hit_validated", position=2, supervisor=SUP))
    assert [(p["line"], p["cents"], p["from"]) for p in paid] == [(JACKPOT, meter, "meter")]


def test_a_void_may_name_a_higher_line_paid_at_the_meter_k3ii() -> None:
    """`hit_voided` with the right line: higher than the line voided is a right line too."""
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: "royal-flush"})
    meter = display(t)
    eff = t.ev("hit_voided", position=2, supervisor=SUP, reason="misread", line=JACKPOT)
    assert rejection(eff) is None, eff
    assert [(p["line"], p["cents"], p["from"]) for p in pays(eff)] == [(JACKPOT, meter, "meter")]


def test_a_pending_hit_corrected_downward_to_a_fixed_line_is_paid_from_the_tray_k3ii() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: "straight-flush"})
    eff = t.ev("hit_corrected", position=2, line="flush", supervisor=SUP, reason="no straight")
    assert [(p["line"], p["cents"], p["from"]) for p in pays(eff)] == [("flush", 300, "chip_tray")]
    assert t.state in ("Open_Shuffling", "Open_Betting")


def test_a_pending_hit_corrected_to_no_win_ends_the_round_unpaid_k3ii() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: "straight-flush"})
    eff = t.ev("hit_corrected", position=2, line=None, supervisor=SUP, reason="no hand")
    assert not pays(eff) and t.state in ("Open_Shuffling", "Open_Betting")
    summary = of_type(t.all_effects, "round_summary")[-1]
    assert summary["positions"][0]["line"] is None


def test_an_entered_outcome_is_corrected_before_the_last_one_is_entered_k3ii() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2, 4)
    t.ev("progressive_outcome", position=2, line="flush")
    eff = t.ev("hit_corrected", position=2, line=JACKPOT, supervisor=SUP, reason="misread")
    assert rejection(eff) is None and not pays(eff)
    t.ev("progressive_outcome", position=4, line=None)
    assert t.state == "Open_JackpotPending"
    paid = pays(t.ev("hit_validated", position=2, supervisor=SUP))
    assert paid[0]["line"] == JACKPOT and paid[0]["from"] == "meter"


def test_a_paid_hit_is_not_corrected_but_adjusted_k3ii() -> None:
    """Area 1's flush is paid from the tray at once (nothing before it in the order); a
    correction of it is refused while the round waits on area 3: it is an adjustment."""
    t = Table()
    t.open()
    t.round_to_settlement(1, 3)
    t.outcomes({1: "flush", 3: "straight-flush"})
    eff = t.ev("hit_corrected", position=1, line="straight", supervisor=SUP, reason="x")
    assert "adjustment" in (rejection(eff) or "")


# --- (k)(3)(ii) after payment: an adjustment --------------------------------------------------


def test_a_jackpot_entered_as_a_flush_is_adjusted_and_paid_from_the_meter_k3ii() -> None:
    """ "flush" entered for a natural royal flush and pair is paid $3 from the tray and the round
    ends; the supervisor's adjustment pays what the right line pays now (the whole meter) less
    the $3: from the meter, which is then reset."""
    t = Table()
    t.open()
    t.round_to_settlement(2)
    first = pays(t.outcomes({2: "flush"}))
    assert [(p["cents"], p["from"]) for p in first] == [(300, "chip_tray")]
    assert t.state == "Open_Shuffling"  # the deck is shuffled for the next round
    meter = display(t)
    eff = t.ev(
        "hit_adjusted", round_id=1, position=2, line=JACKPOT, supervisor=SUP, reason="misread"
    )
    assert rejection(eff) is None, eff
    adj = of_type(eff, "hit_adjusted")[0].to_json()
    assert (adj["line"], adj["corrected_line"]) == ("flush", JACKPOT)
    assert (adj["owed_cents"], adj["paid_cents"], adj["cents"]) == (meter, 300, meter - 300)
    assert (adj["supervisor"], adj["reason"]) == (SUP, "misread")
    paid = pays(eff)
    assert [(p["line"], p["cents"], p["from"]) for p in paid] == [(JACKPOT, meter - 300, "meter")]
    assert display(t) == 100_000  # reset after the hit
    again = t.ev(
        "hit_adjusted", round_id=1, position=2, line=JACKPOT, supervisor=SUP, reason="twice"
    )
    assert "settled as" in (rejection(again) or "")


def test_no_win_entered_is_adjusted_to_a_flush_from_the_tray_k3ii() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: None})
    eff = t.ev("hit_adjusted", round_id=1, position=2, line="flush", supervisor=SUP, reason="x")
    assert [(p["cents"], p["from"]) for p in pays(eff)] == [(300, "chip_tray")]


def test_an_overpayment_is_recorded_and_moves_no_money_k3ii() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: "royal-flush"})
    t.ev("hit_validated", position=2, supervisor=SUP)
    before = t.m.meters()["progressive"]
    eff = t.ev("hit_adjusted", round_id=1, position=2, line="flush", supervisor=SUP, reason="x")
    adj = of_type(eff, "hit_adjusted")[0].to_json()
    assert (adj["owed_cents"], adj["paid_cents"], adj["cents"]) == (300, 10_000, -9_700)
    assert not pays(eff) and of_type(eff, "alert")
    assert t.m.meters()["progressive"] == before


@pytest.mark.parametrize("round_id", [0, 2])
def test_only_the_round_just_completed_is_adjusted_k3ii(round_id: int) -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: None})
    eff = t.ev(
        "hit_adjusted", round_id=round_id, position=2, line="flush", supervisor=SUP, reason="x"
    )
    assert "the round in play is 1" in (rejection(eff) or "")
    t.ev("shuffle_complete", count=53)  # the next round's betting: too late, its own round
    eff = t.ev("hit_adjusted", round_id=1, position=2, line="flush", supervisor=SUP, reason="x")
    assert rejection(eff) is not None


# --- (g)(7): every payment in order, whatever pays it ------------------------------------------


@pytest.mark.parametrize(
    ("right", "first", "later"), [(1, 1, 3), (6, 6, 4)], ids=["area-1-right", "area-6-right"]
)
def test_a_chip_tray_hit_waits_for_an_earlier_meter_hit_g7_nj_11_9_i(
    right: int, first: int, later: int
) -> None:
    """The area nearer the dealer's right has a straight flush (deducted from the meter, waits
    for a supervisor); the later area's $3 flush is not paid before it, but right after it."""
    t = Table(layout={"dealer_right_area": right})
    t.open()
    t.round_to_settlement(first, later)
    eff = t.outcomes({later: "flush", first: "straight-flush"})
    assert not pays(eff) and t.state == "Open_JackpotPending"
    pending = of_type(eff, "hit_pending")
    assert [p["position"] for p in pending] == [first]
    eff = t.ev("hit_validated", position=first, supervisor=SUP)
    order = [(p["position"], p["from"]) for p in pays(eff)]
    assert order == [(first, "meter"), (later, "chip_tray")]
    assert t.state in ("Open_Shuffling", "Open_Betting")


def test_a_tray_hit_before_the_first_meter_hit_is_paid_at_once_g7() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(1, 3)
    eff = t.outcomes({1: "flush", 3: "straight-flush"})
    assert [(p["position"], p["from"]) for p in pays(eff)] == [(1, "chip_tray")]
    assert t.state == "Open_JackpotPending"


def test_a_correction_takes_its_place_in_the_order_g7_k3ii() -> None:
    """Area 3 waits with a straight flush; area 1 entered as no win is corrected to a flush:
    it is first in the order, so it is paid at once, before area 3."""
    t = Table()
    t.open()
    t.round_to_settlement(1, 3)
    t.outcomes({1: None, 3: "straight-flush"})
    eff = t.ev("hit_corrected", position=1, line="flush", supervisor=SUP, reason="missed")
    assert [(p["position"], p["from"]) for p in pays(eff)] == [(1, "chip_tray")]
    assert t.state == "Open_JackpotPending"


# --- one record: replay and restart give the same round (NJ 13:69E-1.39B(h)) --------------------


def test_corrections_and_an_adjustment_replay_and_survive_a_restart_nj_39b_h() -> None:
    """The journal's entries of a round with a queued chip-tray hit, a correction and an
    adjustment replay to the same snapshot and meters; a machine restored from any committed
    snapshot in between answers the rest of the events with the same effects."""
    t = Table()
    t.open()
    t.round_to_settlement(1, 3, 5)
    t.outcomes({1: "straight-flush", 3: "flush", 5: None})
    t.ev("hit_corrected", position=5, line="straight", supervisor=SUP, reason="missed")
    t.ev("hit_validated", position=1, supervisor=SUP)
    t.ev("hit_adjusted", round_id=1, position=3, line=JACKPOT, supervisor=SUP, reason="misread")
    entries = [{**e, "data": {k: v for k, v in e["data"].items() if k != "effects"}} for e in
               t.entries]  # fmt: skip
    snap, meters = replay(t.cfg, entries)
    assert snap == t.m.snapshot() and meters == t.m.meters()
    for cut in range(len(entries)):
        m = RoundMachine(t.cfg)
        for e in entries[:cut]:
            m.step(Event(e["type"], e["data"]), e["ts_ms"])
        restored = RoundMachine.restore(t.cfg, m.snapshot())
        for e in entries[cut:]:
            ours = m.step(Event(e["type"], e["data"]), e["ts_ms"])
            theirs = restored.step(Event(e["type"], e["data"]), e["ts_ms"])
            assert [x.to_json() for x in ours] == [x.to_json() for x in theirs], e["type"]
