"""The page's words (controller/web/view.py) from real journal entries of a played round: every
refusal carries its reason and the control it came from, no machine name reaches a person, and
the panel says what NEXT / VOID will do before they are pressed (docs/operator-guide.md section 6,
the key + NEXT / VOID table)."""

from __future__ import annotations

import re

from round_support import Table

from controller.web import view

#: Names the machine uses that a person must never read on the page.
INTERNAL = re.compile(r"\bOpen_[A-Za-z]+|\b[a-z]+_[a-z_]+\b|[A-Z]+_(REQ|RSP)\b|\{")


def _lines(t: Table) -> list[dict[str, object]]:
    return [
        view.entry_line(i, 0, 1, str(e["type"]), dict(e["data"])) for i, e in enumerate(t.entries)
    ]


def test_a_late_chip_is_refused_in_words_at_its_area_ny_5324_41_k2() -> None:
    t = Table()
    t.open()
    t.ev("chip_detected", position=2)
    t.ev("lockout_pressed")
    t.ev("chip_detected", position=4)
    t.ev("panel_void")  # VOID without the key in LockedOut: not now
    lines = _lines(t)
    late, void = lines[-2], lines[-1]
    assert late["refused"] == {
        "event": "chip_detected",
        "control": "chip",
        "position": 4,
        "cause": "late",
        "reason": late["refused"]["reason"],  # type: ignore[index]
    }
    assert "late chip" in str(late["refused"]["reason"])  # type: ignore[index]
    refused_void = void["refused"]
    assert refused_void["control"] == "void"  # type: ignore[index]
    said = str(refused_void["reason"])  # type: ignore[index]
    assert said.startswith("not now: VOID pressed") and "No more bets" in said
    for line in lines:
        for key in ("words", "text"):
            assert not INTERNAL.search(str(line[key])), line


def test_the_panel_says_what_next_and_void_do_before_they_are_pressed() -> None:
    locked = {"counted": False}
    assert view.panel_hints("Open_LockedOut", locked, {})["next"]["does"] == (
        "confirms the chip count"
    )
    counted = view.panel_hints("Open_LockedOut", {"counted": True}, {})
    assert counted["next"]["does"] == "draws the starting position"
    # key + NEXT on a fault: the round resumes where it stopped, except one stopped while the
    # shoe was dealing, which is voided (NJ 13:69E-1.39B(h)); both confirmed, both need the key
    fault_play = {"fault": {"interrupted": "Open_Play"}, "supervisor_key": True}
    hint = view.panel_hints("Fault", {}, fault_play)["next"]
    assert "the round resumes" in str(hint["does"]) and hint["ready"] is True
    fault_deal = {"fault": {"interrupted": "Open_Dealing"}, "supervisor_key": True}
    hint = view.panel_hints("Fault", {}, fault_deal)["next"]
    assert "voided" in str(hint["does"]) and hint["confirm"] is True
    keyless = view.panel_hints("Fault", {}, {"fault": {"interrupted": "Open_Play"}})
    assert "needs the supervisor key switch on" in str(keyless["next"]["does"])
    assert keyless["next"]["ready"] is False


def test_a_hit_is_said_with_its_line_and_a_pay_with_its_amount_and_source() -> None:
    assert view.effect_words({"type": "hit_pending", "position": 3, "line": "royal-flush"}) == (
        "hit at area 3: royal flush, a supervisor validates it"
    )
    pay = {"type": "pay", "position": 3, "line": "royal-flush", "cents": 10000, "from": "chip_tray"}
    assert view.effect_words(pay) == "pay area 3 $100.00 from the chip tray (royal flush)"
