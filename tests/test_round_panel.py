"""The dealer panel on a real table: NEXT, VOID and the supervisor key switch.

With no console on the table, the supervisor's steps of the round are taken at the panel with the
key switch on: a supervisor validates a hit before it is paid (NY 5324.41(k)(3)(iii)), clears a
fault so the round resumes or is voided (NJ 13:69E-1.39B(h)), voids an RNG draw so it is drawn again
(table-rules.md: a redraw only by a supervisor's journaled void), and opens or closes the table.
Without the key these are refused, with the reason journaled.
"""

from __future__ import annotations

from round_support import Table, of_type, reach, rejection

from fsm.round.events import Event
from fsm.round.machine import PANEL_SUPERVISOR, RoundMachine


def test_next_without_the_key_does_not_open_the_table() -> None:
    t = reach("Closed")
    reason = rejection(t.ev("panel_next"))
    assert reason is not None and "supervisor key" in reason
    assert t.state == "Closed"


def test_key_and_next_open_the_table_in_the_key_holders_name() -> None:
    t = reach("Closed")
    t.ev("supervisor_key", on=True)
    effects = t.ev("panel_next")
    assert rejection(effects) is None
    assert t.state == "Open_Shuffling"
    assert of_type(effects, "shuffle")


def test_a_hit_is_paid_only_after_the_key_and_next_validate_it_k3_iii() -> None:
    t = reach("Open_JackpotPending")
    display_before = t.m.meters()
    assert "supervisor key" in (rejection(t.ev("panel_next")) or "")
    assert t.state == "Open_JackpotPending" and t.m.meters() == display_before
    t.ev("supervisor_key", on=True)
    effects = t.ev("panel_next")
    pays = of_type(effects, "pay")
    assert len(pays) == 1 and pays[0]["position"] == 2 and pays[0]["line"] == "straight-flush"
    assert t.state in ("Open_Betting", "Open_Shuffling")  # round completed and moved on


def test_key_and_void_void_a_pending_hit_unpaid() -> None:
    t = reach("Open_JackpotPending")
    t.ev("supervisor_key", on=True)
    effects = t.ev("panel_void")
    assert not of_type(effects, "pay")
    assert any(a.get("code") == "HIT_VOIDED" for a in of_type(effects, "alert"))


def test_key_and_next_clear_a_fault_and_the_round_resumes() -> None:
    t = reach("Open_Betting")
    t.ev("fault_raised", code="SHOE_JAM", device="shoe", detail="jam")
    assert t.state == "Fault"
    assert "supervisor key" in (rejection(t.ev("panel_next")) or "")
    t.ev("supervisor_key", on=True)
    t.ev("panel_next")
    assert t.state == "Open_Betting"


def test_key_and_void_clear_a_fault_and_void_the_round_reversing_contributions() -> None:
    t = reach("Open_StartingPosition_Rng")  # before the deal: Play is not voidable (k)(3), (g)(9)
    contributed = t.m.meters()
    t.ev("fault_raised", code="RNG_LINK", device="rng", detail="lost")
    t.ev("supervisor_key", on=True)
    effects = t.ev("panel_void")
    assert of_type(effects, "round_voided")
    assert any(m["kind"] == "reversal" for m in of_type(effects, "meter_movement"))
    assert of_type(effects, "refund")
    level = next(iter(contributed))
    assert t.m.meters()[level]["display_cents"] < contributed[level]["display_cents"]


def test_key_and_void_void_the_rng_draw_so_it_is_drawn_again() -> None:
    t = reach("Open_SideWagers")
    t.ev("supervisor_key", on=True)
    effects = t.ev("panel_void")
    assert t.state == "Open_StartingPosition_Rng"
    assert of_type(effects, "draw_rng")
    voids = t.m.snapshot()["round"]["rng_voids"]
    assert voids == [
        {"value": 3, "supervisor": PANEL_SUPERVISOR, "reason": "draw voided at the dealer panel"}
    ]


def test_void_without_the_key_changes_nothing() -> None:
    t = reach("Open_SideWagers")
    assert "supervisor key" in (rejection(t.ev("panel_void")) or "")
    assert t.state == "Open_SideWagers"


def test_turning_the_key_off_takes_the_supervisors_power_away() -> None:
    t = reach("Closed")
    t.ev("supervisor_key", on=True)
    t.ev("supervisor_key", on=False)
    assert "supervisor key" in (rejection(t.ev("panel_next")) or "")
    assert t.state == "Closed"


def test_the_key_position_survives_a_restart() -> None:
    t = reach("Closed")
    t.ev("supervisor_key", on=True)
    m = RoundMachine.restore(t.cfg, t.m.snapshot())
    m.step(Event("panel_next", {}), t.t + 10)
    assert m.state == "Open_Shuffling"


def test_a_malformed_key_event_is_rejected() -> None:
    t = reach("Closed")
    assert "true or false" in (rejection(t.ev("supervisor_key", on="yes")) or "")


def test_a_refused_console_pin_is_journaled_and_changes_nothing_in_any_state() -> None:
    """The console journals a refused PIN (never the PIN) as an informational event."""
    for state in ("Closed", "Open_Betting", "Open_JackpotPending", "Fault", "Maintenance"):
        t = reach(state)
        before = t.m.snapshot()
        data = {"supervisor": "ana", "request": "validate-hit", "reason": "wrong PIN"}
        assert t.ev("console_refused", **data) == []
        assert t.m.snapshot() == before


def test_each_button_is_legal_in_exactly_the_states_that_wait_on_it() -> None:
    """NEXT is the step the state waits on (open, chip count / RNG, settle side wagers, the fours,
    play complete, validate, clear the fault); VOID the supervisor's void (close an idle table,
    the draw, the hit, the faulted round). Anywhere else each is refused as untimely."""
    from fsm.round import states as S
    from fsm.round.phases import LEGAL

    assert LEGAL["panel_next"] == {
        S.CLOSED, S.LOCKED_OUT, S.SIDE_WAGERS, S.DEALING, S.PLAY, S.JACKPOT_PENDING, S.FAULT
    }  # fmt: skip
    assert LEGAL["panel_void"] == {
        S.BETTING, S.SHUFFLING, S.SIDE_WAGERS, S.JACKPOT_PENDING, S.FAULT
    }  # fmt: skip
    t = Table()
    eff = t.ev("panel_void")  # Closed: nothing to void
    assert eff and eff[0].TYPE == "rejected" and eff[0].cause == "untimely"
