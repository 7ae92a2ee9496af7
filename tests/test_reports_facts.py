"""Reports add up what the effects say (issue 7, point 2), checked on journals written by the real
round machine and journal (tests/report_journals.py). Each finding of the issue is reproduced:
the old reports guessed from entry types and got it wrong.
"""

from __future__ import annotations

from pathlib import Path

from report_journals import TableDriver

from controller.journal.reports import (
    JournalReader,
    hits_report,
    meters_report,
    rounds_report,
    rounds_text,
    shift_report,
    shift_text,
)
from fsm.round import GameConfig
from fsm.round.machine import PANEL_SUPERVISOR


def test_a_chip_seen_twice_in_betting_is_not_a_late_chip_k2(tmp_path: Path) -> None:
    """NY 5324.41(k)(2): only a chip after the lock-out is a late chip. A second chip at a lit
    acceptor during Betting is refused as already lit, and the recall says so."""
    d = TableDriver(tmp_path / "j.db")
    d.open_table()
    d.send("chip_detected", position=2)
    d.send("chip_detected", position=2)  # the sensor sees the same chip again
    d.send("lockout_pressed")
    d.send("chip_detected", position=5)  # after the lock-out: late
    d.send("chips_confirmed")
    d.activate_rng()
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        [r] = rounds_report(reader)
    assert r["positions"] == [2]
    assert r["late_chips"] == [5]
    assert [x["cause"] for x in r["rejected"]] == ["already_lit", "late"]


def test_a_hit_validated_at_the_dealer_panel_names_the_key_holder_k3iii(tmp_path: Path) -> None:
    """NY 5324.41(k)(3)(iii): a payout deducted from the meter is validated by a supervisor. At
    the panel (NEXT with the key switch on) the journal names the key holder and the panel."""
    d = TableDriver(tmp_path / "j.db")
    d.open_table()
    d.send("chip_detected", position=3)
    d.send("lockout_pressed")
    d.send("chips_confirmed")
    d.activate_rng()
    d.send("dealt", remaining=4)
    d.send("play_complete")
    d.send("progressive_outcome", position=3, line="natural-royal-flush")
    d.send("supervisor_key", on=True)
    d.send("panel_next")
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        [hit] = hits_report(reader)
        [r] = rounds_report(reader)
        shift = shift_report(reader)
    assert hit["validated_by"] == PANEL_SUPERVISOR and hit["validated_via"] == "panel"
    assert r["hits"][-1]["validated_by"] == PANEL_SUPERVISOR
    assert shift["hits"][0]["validated_via"] == "panel"


def test_a_hit_validated_at_the_console_names_the_supervisor_and_the_console(
    tmp_path: Path,
) -> None:
    d = TableDriver(tmp_path / "j.db")
    d.open_table()
    d.send("chip_detected", position=1)
    d.send("lockout_pressed")
    d.send("chips_confirmed")
    d.activate_rng()
    d.send("dealt", remaining=4)
    d.send("play_complete")
    d.send("progressive_outcome", position=1, line="natural-royal-flush")
    d.send("hit_validated", position=1, supervisor="bob", via="console")
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        [hit] = hits_report(reader)
    assert (hit["validated_by"], hit["validated_via"]) == ("bob", "console")


def test_shift_lists_each_adjustment_with_reason_and_supervisor_nj_52f(tmp_path: Path) -> None:
    """NJ 13:69D-1.52(f): no meter decrease without a recorded reason. The shift lists every
    adjustment (a correction, the reversal of a voided round) with its reason and supervisor."""
    d = TableDriver(tmp_path / "j.db")
    d.open_table()
    d.void_round_by_fault([2, 3], supervisor="carla")
    d.close_table()
    d.send("maintenance_entered", supervisor="ana")
    d.send(
        "meter_corrected",
        level="progressive",
        meter="display",
        delta_cents=-150,
        reason="display over by $1.50 (test)",
        supervisor="ana",
    )
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        shift = shift_report(reader)
        text = "\n".join(shift_text(shift))
    adjustments = shift["adjustments"]
    assert [(a["kind"], a["supervisor"]) for a in adjustments] == [
        ("reversal", "carla"),
        ("correction", "ana"),
    ]
    assert "voided" in str(adjustments[0]["reason"])
    assert adjustments[1]["cents"] == -150 and adjustments[1]["reason"] == (
        "display over by $1.50 (test)"
    )
    total = sum(int(str(a["cents"])) for a in adjustments)
    assert shift["progressive"]["adjustments_cents"] == total  # type: ignore[index]
    assert "by carla" in text and "display over by $1.50 (test)" in text


def test_recall_shows_a_resolved_rounds_cards_in_card_notation(tmp_path: Path) -> None:
    """A card-reading shoe's stacks are journaled as the shoe sent them (numbers 0-52); the
    recall of a resolved round shows them per seat in card notation, mapped by the journaled
    delivery order; an unresolved round shows none (no card before the round resolves)."""
    d = TableDriver(tmp_path / "j.db", GameConfig(table_id="T9", card_reading_shoe=True))
    d.open_table()
    d.send("chip_detected", position=1)
    d.send("lockout_pressed")
    d.send("chips_confirmed")  # the driver draws 3: the first stack goes to seat 2 (area 2)
    d.activate_rng()
    stacks = [list(range(i * 7, i * 7 + 7)) for i in range(7)]
    with JournalReader(d.journal.path) as reader:
        order = rounds_report(reader)[0]
    assert order["cards"] is None
    d.send("dealt", remaining=4, stacks=stacks)
    with JournalReader(d.journal.path) as reader:
        assert rounds_report(reader)[0]["cards"] is None  # not resolved yet
    d.send("play_complete")
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        [r] = rounds_report(reader)
        text = "\n".join(rounds_text([r]))
    cards = r["cards"]
    assert isinstance(cards, dict) and set(cards) == {"dealer", "1", "2", "3", "4", "5", "6"}
    seat = r["starting_position"]["seat"]  # type: ignore[index]
    first = "dealer" if seat == 0 else str(seat)
    assert cards[first] == "2c 2d 2h 2s 3c 3d 3h"  # the first stack: codes 0..6
    assert all(len(v.split()) == 7 for v in cards.values())
    assert "cards dealer:" in text


def test_meters_report_checks_the_stored_meters_against_the_movements(tmp_path: Path) -> None:
    d = TableDriver(tmp_path / "j.db")
    d.open_table()
    d.play_round([1, 2], {1: "flush"})
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        report = meters_report(reader)
    assert report["problems"] == []
