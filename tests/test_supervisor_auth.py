"""Supervisor actions need the key switch or the PIN, as configured (issue 12, "Security"):
every console request that posts an event is refused without the supervisor's PIN and posts
nothing but its journaled refusal; every supervisor step of the dealer panel is refused while
the key switch is off. The requests are enumerated from the console's own list, so a new one is
covered.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from round_support import Table
from test_console import Rig, make_rig

from controller.supervisor.lockout import REFUSAL_EVENT
from controller.supervisor.requests import REQUESTS

#: Arguments that pass each request's own checks (the PIN is what is refused).
ARGS: dict[str, list[str]] = {
    "resolve-chips": ["none"],
    "side-wagers": ["none"],
    "validate-hit": ["1"],
    "void-hit": ["1", "reason"],
    "correct-hit": ["1", "flush", "reason"],
    "adjust-hit": ["1", "1", "flush", "reason"],
    "void-draw": ["reason"],
    "maintenance": ["enter"],
    "door-maintenance": ["on"],
    "config-change": ["rounds_per_shuffle=2"],
    "meter-correct": ["progressive", "display", "100", "reason"],
    "verify-software": ["c0ffee"],
}


@pytest.fixture()
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from make_rig(tmp_path)


@pytest.mark.parametrize("request_name", [r for r in REQUESTS if r != "status"])
def test_every_console_request_needs_the_supervisors_pin(rig: Rig, request_name: str) -> None:
    before = rig.entries()
    for sup, pin in (("trainer", "0000"), ("nobody", "1234")):  # wrong PIN; unknown id
        reply = rig.ask(request_name, *ARGS.get(request_name, []), sup=sup, pin=pin)
        assert reply["ok"] is False and str(reply["error"]).startswith("refused:")
    added = rig.entries()[len(before) :]
    assert [kind for _, kind, _ in added] == [REFUSAL_EVENT, REFUSAL_EVENT]
    assert rig.owner.public.state == "Closed"


@pytest.mark.parametrize(
    ("steps", "button"),
    [
        ([], "panel_next"),  # NEXT on the closed table opens it: a supervisor's step
        (["fault"], "panel_next"),  # NEXT clears a fault
        (["fault"], "panel_void"),  # VOID clears a fault and voids the round
    ],
)
def test_every_supervisor_step_of_the_panel_needs_the_key_switch(
    steps: list[str], button: str
) -> None:
    t = Table()
    if steps:
        t.open()
        t.ev("fault_raised", code="LINE_NOISE", device="shoe", detail="x")
    state = t.state
    effects = t.ev(button)
    assert t.state == state
    assert any("needs the supervisor key switch on" in str(e) for e in effects)
    t.ev("supervisor_key", on=True)
    t.ev(button)
    assert t.state != state  # with the key, the same press is the supervisor's step
