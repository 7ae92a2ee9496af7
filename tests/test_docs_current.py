"""The documentation lists what the code does: every journal entry type and every fault code
(issue 3: docs/journal.md lists every entry type with its fields; issue 4: fault codes
documented in docs/journal.md)."""

from __future__ import annotations

import re
from pathlib import Path

from drivers.serial import faults
from fsm.round.machine import EVENT_FIELDS

DOCS = Path(__file__).parents[1] / "docs"
JOURNAL_MD = (DOCS / "journal.md").read_text()


def test_every_event_type_is_a_documented_entry_type_with_its_fields() -> None:
    rows = {
        m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| ([^|]*) \|", JOURNAL_MD, re.M)
    }
    for event_type, (required, optional) in EVENT_FIELDS.items():
        assert event_type in rows, f"{event_type} missing from docs/journal.md"
        for name in required:
            assert f"`{name}`" in rows[event_type], f"{event_type}.{name} undocumented"
        for name in optional:
            assert f"`{name}`?" in rows[event_type], f"{event_type}.{name}? undocumented"


def test_every_device_fault_code_is_documented() -> None:
    codes = faults.COMMUNICATION_FAULTS | faults.DEVICE_FAULTS
    for code in codes:
        assert f"`{code}`" in JOURNAL_MD, f"fault code {code} missing from docs/journal.md"
    assert "`DECK_COUNT_<n>`" in JOURNAL_MD


def test_every_fault_code_raised_by_the_controller_is_documented() -> None:
    root = Path(__file__).parents[1]
    raised: set[str] = set()
    for path in [*root.glob("controller/*.py"), *root.glob("fsm/round/*.py")]:
        raised |= set(re.findall(r'"code": "([A-Z_]+)"', path.read_text()))
    assert raised, "expected the controller to raise some fault codes"
    for code in raised:
        assert f"`{code}`" in JOURNAL_MD or f"`{code}<n>`" in JOURNAL_MD, code
