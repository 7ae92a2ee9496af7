"""Typed events and effects (issue 7, point 1): an event is validated when it enters the step, an
effect carries complete facts, the journal form of a record is stable and parses back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from round_support import SUP, Table, of_type, reach, refusal

from controller.journal.audit import connect_read_only
from controller.service.owner import Owner
from fsm.round.catalogue import EFFECT_TYPES, EVENT_FIELDS
from fsm.round.config import GameConfig
from fsm.round.effects import (
    EFFECTS,
    Effect,
    Pay,
    Rejected,
    RoundSummary,
    parse_effect,
)
from fsm.round.events import EVENTS, ChipDetected, Event, parse_event
from fsm.round.machine import RoundMachine
from fsm.round.records import RecordError


def test_the_catalogue_is_derived_from_the_records() -> None:
    assert set(EVENT_FIELDS) == set(EVENTS) and set(EFFECT_TYPES) == set(EFFECTS)
    assert EVENT_FIELDS["chip_detected"] == (("position",), ())
    assert EVENT_FIELDS["fault_cleared"] == (("supervisor",), ("void", "via"))
    assert all(EFFECT_TYPES.values()), "every effect says what it is for"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"position": 2, "round_id": 99}, "round_id: unknown field"),
        ({}, "position: required"),
        ({"position": "2"}, "position: must be an integer"),
        ({"position": True}, "position: must be an integer"),
        ({"position": 7}, "position: must be 1..6, not 7"),
    ],
)
def test_an_event_that_is_not_its_record_is_refused_with_the_reason(
    data: dict[str, Any], reason: str
) -> None:
    """The finding: ``chip_detected{position: 2, round_id: 99}`` was accepted. Unknown, missing,
    mistyped or out-of-range fields are refused (cause ``invalid``) and nothing changes."""
    t = reach("Open_Betting")
    before = t.m.snapshot()
    rej = refusal(t.ev("chip_detected", **data))
    assert rej is not None and rej.cause == "invalid" and reason in rej.reason
    assert t.m.snapshot() == before


def test_a_round_id_that_is_not_the_round_in_play_is_refused() -> None:
    t = reach("Open_RoundComplete")
    before = t.m.snapshot()
    rej = refusal(t.ev("round_completed", round_id=t.m.round_id + 98, follow=False))
    assert rej is not None and rej.cause == "wrong_round"
    assert t.m.snapshot() == before
    assert refusal(t.ev("round_completed", round_id=t.m.round_id)) is None


@pytest.mark.parametrize(
    ("state", "cause"),
    [
        ("Closed", "not_armed"),
        ("Open_Shuffling", "not_armed"),
        ("Fault", "not_armed"),
        ("Open_LockedOut", "late"),
        ("Open_Play", "late"),
        ("Open_Betting", "already_lit"),
    ],
)
def test_a_refused_chip_says_why_k2(state: str, cause: str) -> None:
    """NY 5324.41(k)(2): a chip after the lock-out is late; the effect says so, and says when a
    chip was refused for another cause (already lit, acceptors not armed)."""
    t = reach(state)  # with a wager at area 2
    rej = refusal(t.ev("chip_detected", position=2))
    assert rej is not None and rej.cause == cause and rej.position == 2


def test_an_internal_error_is_not_a_rule() -> None:
    """tests/round_support.py: ``rejection()`` fails the test on an internal error."""
    from round_support import rejection

    with pytest.raises(AssertionError, match="internal error"):
        rejection([Rejected("chips_confirmed", "internal error: KeyError", "internal")])
    assert rejection([Rejected("x", "no", "refused")]) == "no"


def test_the_machine_files_an_entry_under_its_own_round_never_the_events(tmp_path: Path) -> None:
    """The finding: ``chip_detected{position: 2, round_id: 99}`` was filed under round 99 by the
    owner. Through the real owner and journal it is refused and filed under the round in play."""
    cfg = GameConfig(table_id="T1")

    class NoDevices:
        def apply(self, effect: Effect) -> None:
            pass

        def safe_state(self, glyph: str = " ") -> None:
            pass

        def close(self) -> None:
            pass

    owner = Owner(
        tmp_path / "j.db",
        lambda snap: RoundMachine(cfg) if snap is None else RoundMachine.restore(cfg, snap),
        NoDevices(),
        now_ms=lambda: 1_000,
        software_hash=lambda: "x",
        storage_check=lambda p: [],
    )
    owner.start()
    try:
        receipt = owner.post_tracked(Event("chip_detected", {"position": 2, "round_id": 99}))
        assert receipt.wait(10)
        [effect] = receipt.effects
        assert isinstance(effect, Rejected) and effect.cause == "invalid"
    finally:
        owner.stop()
    conn = connect_read_only(tmp_path / "j.db")
    try:
        rounds = conn.execute(
            "SELECT round_id FROM journal WHERE type = 'chip_detected'"
        ).fetchall()
    finally:
        conn.close()
    assert rounds == [(0,)]


def test_pay_says_who_validated_and_how_k3iii() -> None:
    """NY 5324.41(k)(3)(iii): the payout from the meter names the supervisor and the way: the
    key switch at the panel, or the console."""
    t = reach("Open_JackpotPending")
    t.ev("supervisor_key", on=True)
    [pay] = [e for e in t.ev("panel_next") if isinstance(e, Pay)]
    assert (pay.supervisor, pay.via, pay.from_) == ("panel-key", "panel", "meter")
    t = reach("Open_JackpotPending")
    eff = t.ev("hit_validated", position=2, supervisor=SUP, via="console")
    [pay] = [e for e in eff if isinstance(e, Pay)]
    assert (pay.supervisor, pay.via) == (SUP, "console")


def test_a_round_ends_with_its_summary() -> None:
    """The round's summary: positions with wagers, outcomes, payouts, and each level's meter
    before the round and after it (display + overflow + reserve, whole cents)."""
    t = Table()
    t.open()
    start = t.m.meters()["progressive"]
    t.round_to_settlement(2, 5)
    eff = t.outcomes({2: "flush", 5: None})
    [summary] = [e for e in eff if isinstance(e, RoundSummary)]
    assert summary.outcome == "completed" and summary.round_id == 1
    by_pos = {p.position: p for p in summary.positions}
    assert by_pos[2].line == "flush" and by_pos[2].payout_cents > 0
    assert by_pos[2].paid_from == "chip_tray"
    assert by_pos[5].line is None and by_pos[5].payout_cents == 0
    [meter] = summary.meters
    end = t.m.meters()["progressive"]
    held = ("display_cents", "overflow_cents", "reserve_cents")
    assert meter.meter_before_cents == sum(start[k] for k in held)
    assert meter.meter_after_cents == sum(end[k] for k in held)
    assert meter.display_after_cents == end["display_cents"]


def test_a_voided_round_ends_with_its_summary_and_refunds() -> None:
    t = reach("Open_StartingPosition_Rng")  # before the deal: Play is not voidable (k)(3), (g)(9)
    t.ev("fault_raised", code="RNG_LINK", device="rng", detail="lost")
    eff = t.ev("fault_cleared", supervisor=SUP, void=True)
    [summary] = of_type(eff, "round_summary")
    assert isinstance(summary, RoundSummary) and summary.outcome == "voided"
    assert [(p.position, p.refund_cents) for p in summary.positions] == [(2, 100)]
    [meter] = summary.meters
    assert meter.meter_after_cents == meter.meter_before_cents  # the contribution reversed
    [voided] = of_type(eff, "round_voided")
    assert voided["supervisor"] == SUP


def test_every_effect_of_random_rounds_parses_back_from_its_journal_form() -> None:
    t = Table(side_wager={"offered": True})
    t.open()
    t.round_to_settlement(1, 2, 3)
    t.outcomes({1: "straight-flush", 2: "flush", 3: None})
    t.ev("hit_voided", position=1, supervisor=SUP, reason="misread")
    seen = set()
    for e in t.all_effects:
        assert parse_effect(e.to_json()) == e
        assert dict(e) == e.to_json()
        seen.add(e.TYPE)
    assert {"pay", "hit_pending", "hit_voided", "round_summary", "meter_movement"} <= seen


def test_an_event_record_and_its_envelope_are_the_same_event() -> None:
    e = parse_event(Event("chip_detected", {"position": 4}))
    assert e == ChipDetected(4)
    assert e.envelope() == Event("chip_detected", {"position": 4})
    with pytest.raises(RecordError, match="unknown event type"):
        parse_event(Event("chip_dropped", {}))
