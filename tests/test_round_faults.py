"""Faults, voids and deadlines of the round (NJ 13:69E-1.39B(d),(e),(h); table-rules.md)."""

from __future__ import annotations

import pytest
from round_support import SUP, Table, of_type, reach, rejection

from fsm.round.context import Round
from fsm.round.effects import Rejected
from fsm.round.events import Event
from fsm.round.machine import RoundMachine
from fsm.round.states import LEAF_STATES


@pytest.mark.parametrize("state", LEAF_STATES)
def test_fault_from_every_state_refuses_progressive_wagers_nj_1_39b(state: str) -> None:
    t = reach(state)
    assert t.state == state
    eff = t.ev("fault_raised", code="SHOE_LINK_LOST", device="shoe", detail="no heartbeat")
    assert t.state == "Fault"
    if state != "Fault":
        assert {"type": "acceptors", "armed": False} in eff
        assert {"type": "display", "glyph": "F"} in eff
    assert "refused" in (rejection(t.ev("chip_detected", position=5)) or "")
    assert t.m.snapshot()["fault"]["faults"][-1]["code"] == "SHOE_LINK_LOST"


RESUMING = [
    "Closed",
    "Maintenance",
    "Open_Betting",
    "Open_LockedOut",
    "Open_StartingPosition_Rng",
    "Open_StartingPosition_Dice",
    "Open_SideWagers",
    "Open_Play",
    "Open_Settlement",
    "Open_JackpotPending",
    "Open_RoundComplete",
    "Open_Shuffling",
]


@pytest.mark.parametrize("state", RESUMING)
def test_cleared_fault_resumes_interrupted_state_nj_1_39b_h(state: str) -> None:
    """The controller recovers to its prior state when the fault clears (1.39B(h))."""
    t = reach(state)
    before = t.m.snapshot()
    t.ev("fault_raised", code="STORAGE", device="journal", detail="")
    eff = t.ev("fault_cleared", supervisor=SUP, follow=False)
    assert t.state == state
    if state == "Open_RoundComplete":  # the completion is asked for again
        assert of_type(eff, "post")[0]["event"]["type"] == "round_completed"
    after = t.m.snapshot()
    assert after["meters"] == before["meters"]
    assert after["round"]["wagers"] == before["round"]["wagers"]


def test_fault_while_dealing_voids_round_and_reverses_contributions() -> None:
    t = reach("Open_Dealing")
    m_before = Table().m.meters()["progressive"]  # a table that never took a wager
    assert t.m.meters()["progressive"]["display_cents"] == m_before["display_cents"] + 21
    t.ev("fault_raised", code="SHOE_JAM", device="shoe", detail="card jam")
    eff = t.ev("fault_cleared", supervisor=SUP)
    assert t.state == "Open_Shuffling"
    assert of_type(eff, "refund") == [
        {
            "type": "refund",
            "position": 2,
            "cents": 100,
            "reason": of_type(eff, "refund")[0]["reason"],
        }
    ]
    rev = next(e for e in of_type(eff, "meter_movement") if e["kind"] == "reversal")
    assert rev["display_cents"] == -21 and rev["reserve_cents"] == -5
    m = t.m.meters()["progressive"]
    assert m["display_cents"] == m_before["display_cents"]
    assert m["reserve_cents"] == m_before["reserve_cents"]
    assert m["voided_wagers"] == 1 and m["progressive_in"] == 1  # counters never go back
    assert of_type(eff, "round_voided")[0]["round_id"] == 1
    t.ev("shuffle_complete", count=53)
    assert t.m.round_id == 2  # the voided round keeps its id, the next round gets a new one


def test_void_keeps_fractional_cents_exact() -> None:
    t = Table(levels=[{"name": "p", "initial_cents": 0, "rate_bp": 2133, "hidden_rate_bp": 7}])
    t.open()
    t.lock(1, 2, 3)
    t.ev("fault_raised", code="X", device="rng", detail="")
    t.ev("fault_cleared", supervisor=SUP, void=True)
    snap = t.m.snapshot()["meters"]["p"]
    assert snap["display"] == 0 and snap["reserve"] == 0 and snap["overflow"] == 0


def test_void_not_allowed_after_progressive_wagers_settled() -> None:
    t = reach("Open_JackpotPending")
    t.ev("fault_raised", code="X", device="panel", detail="")
    assert rejection(t.ev("fault_cleared", supervisor=SUP, void=True)) is not None
    assert t.state == "Fault"


def test_rng_value_arriving_during_fault_is_kept_not_redrawn() -> None:
    """One draw per round: a draw answered while the table is in fault is the round's draw."""
    t = reach("Open_StartingPosition_Rng")
    t.ev("fault_raised", code="X", device="panel", detail="")
    t.ev("rng_drawn", value=6)
    eff = t.ev("fault_cleared", supervisor=SUP)
    assert not of_type(eff, "draw_rng")
    assert of_type(eff, "starting_position")[0]["number"] == 6
    assert t.state == "Open_Dealing" and of_type(eff, "dispense")


def test_dice_resume_after_fault_requires_new_shakes() -> None:
    t = reach("Open_StartingPosition_Dice")
    for _ in range(3):
        t.ev("shake_detected")
    t.ev("fault_raised", code="X", device="shaker", detail="")
    t.ev("fault_cleared", supervisor=SUP)
    assert t.state == "Open_StartingPosition_Dice"
    reason = rejection(t.ev("dice_position_entered", total=10)) or ""
    assert "shaken 0 time(s); at least three" in reason  # (h)(8)(i): the count starts again


@pytest.mark.parametrize(
    ("state", "code"),
    [
        ("Open_Shuffling", "SHUFFLER_TIMEOUT"),
        ("Open_StartingPosition_Rng", "RNG_TIMEOUT"),
        ("Open_Dealing", "SHOE_TIMEOUT"),
    ],
)
def test_deadline_in_owner_loop_raises_timeout_fault(state: str, code: str) -> None:
    t = reach(state)
    due = t.m.next_deadline_ms()
    assert due is not None and due > t.t
    assert rejection(t.ev("deadline")) is not None  # too early: t.t < due
    t.t = due
    eff = t.ev("deadline")
    assert t.state == "Fault" and of_type(eff, "alert")[0]["code"] == code
    assert t.m.next_deadline_ms() is None


def test_no_deadline_while_waiting_for_people() -> None:
    for state in ("Open_Betting", "Open_LockedOut", "Open_Play", "Open_JackpotPending"):
        assert reach(state).m.next_deadline_ms() is None


def test_second_fault_is_recorded_and_one_clear_resumes() -> None:
    t = reach("Open_Play")
    t.ev("fault_raised", code="A", device="shoe", detail="")
    t.ev("fault_raised", code="B", device="shuffler", detail="")
    assert [f["code"] for f in t.m.snapshot()["fault"]["faults"]] == ["A", "B"]
    t.ev("fault_cleared", supervisor=SUP)
    assert t.state == "Open_Play"


def test_internal_error_in_an_action_rolls_the_step_back() -> None:
    """A bug inside a transition must never leave a half-applied step (no lost or invented cent):
    transitions' on_exception reports it and the machine is put back as it was."""

    class Broken(Round):
        def contribute(self) -> None:
            self.r.rng_draws = 99  # a change that must not survive
            raise ZeroDivisionError("boom")

    t = reach("Open_LockedOut")
    b = RoundMachine.restore(t.cfg, t.m.snapshot())
    b._c.__class__ = Broken  # the bug, injected into this machine's round only
    before = b.snapshot()
    eff = b.step(Event("chips_confirmed", {}), t.t + 1)
    assert isinstance(eff[0], Rejected) and eff[0].cause == "internal"
    assert "ZeroDivisionError" in eff[0].reason
    assert b.snapshot() == before and b.state == "Open_LockedOut"


def test_restore_from_a_damaged_snapshot_is_a_clear_error() -> None:
    t = reach("Open_Play")
    snap = t.m.snapshot()
    damages: list[dict[str, object]] = [
        {"state": "Open_Nowhere"},
        {"round": {}},
        {"version": 99},
        {"meters": 5},
    ]
    for damage in damages:
        with pytest.raises(ValueError, match=r"^snapshot"):
            RoundMachine.restore(t.cfg, {**snap, **damage})


def test_power_up_rearms_deadline_of_reissued_shuffle_and_faults_a_dead_deal_at_once() -> None:
    """After a power cut the shuffle is asked again (outputs) with a fresh deadline; the deal is
    not: it falls due at once as DEAL_INTERRUPTED and the round is voided through the fault."""
    t = reach("Open_Shuffling")
    m = RoundMachine.restore(t.cfg, t.m.snapshot())
    later = t.t + 3_600_000
    m.step(Event("power_up", {}), later)
    assert m.next_deadline_ms() == later + t.cfg.shuffle_timeout_ms
    d = reach("Open_Dealing")
    soon = d.t + 1_000  # restarted well inside the dispense timeout
    m2 = RoundMachine.restore(d.cfg, d.m.snapshot())
    m2.step(Event("power_up", {}), soon)
    assert m2.next_deadline_ms() == soon
    assert {"type": "dispense", "stacks": 7, "cards": 7} not in m2.outputs()
    m2.step(Event("deadline", {}), soon)
    assert m2.state == "Fault"
    assert m2.snapshot()["fault"]["faults"][0]["code"] == "DEAL_INTERRUPTED"
    effects = m2.step(Event("fault_cleared", {"supervisor": "ana"}), soon + 1)
    assert any(e["type"] == "round_voided" for e in effects)
