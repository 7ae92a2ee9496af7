"""Adding an event to the round touches three files: its record (fsm/round/events.py), rows in one
phase module (fsm/round/phases/), and its producer (issue 21; docs/architecture.md "Adding an
event" walks through this very example).

The test makes the walkthrough's three edits on a copy of ``fsm/`` and steps a round on that copy
in a fresh interpreter: the new event is accepted where its phase takes it, refused with its
guard's reason where the guard fails and as untimely in a state no row leaves from. The event is
NY 5324.41(q): the player bank set its hands wrongly, so the dealer resets them by the house way
and the bank's wager is not lost; the reset is journaled and the pit alerted.
"""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RECORD = '''

@event("bank_hands_reset")
class BankHandsReset(EventRecord):
    """the player bank set its own hands wrongly and the dealer reset them by the house way
    (NY 5324.41(q)): the bank's wager is not lost"""

    via: str | None = None
'''

GUARD_AND_ACTION = '''

def bank_hands_reset(s: Step) -> None:
    """NY 5324.41(q): the bank's hands, set wrongly, are reset by the dealer; the pit is told."""
    area = s.c.bank.current
    s.c.emit(Alert("supervisor", "BANK_HANDS_RESET", f"the bank's hands at area {area} reset"))

'''
ROW = (
    '        Transition("bank_hands_reset", PLAY, None, [player_banks], '
    "before=[bank_hands_reset]),\n"
)

PRODUCER = '''"""The dealer panel's bank-reset input: it posts the typed event."""

from collections.abc import Callable

from fsm.round.events import BankHandsReset, Event


def dealer_reset_bank_hands(post: Callable[[Event], object]) -> None:
    post(BankHandsReset(via="panel").envelope())
'''

SCRIPT = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from round_support import Table, rejection, refusal
from producer import dealer_reset_bank_hands

out = {}
posted = []
t = Table(player_banking=True)
t.open()
dealer_reset_bank_hands(posted.append)
out["betting"] = refusal(t.ev(posted[-1].type, **posted[-1].data)).cause
t.lock()
t.start()
t.deal()
dealer_reset_bank_hands(posted.append)
out["no_bank"] = rejection(t.ev(posted[-1].type, **posted[-1].data))
t.ev("play_complete")
t.ev("shuffle_complete", count=53)
t.ev("bank_accepted", position=4)
t.lock(4)
t.start()
t.deal()
dealer_reset_bank_hands(posted.append)
out["banked"] = [e.to_json() for e in t.ev(posted[-1].type, **posted[-1].data)]
out["state"] = t.state
print(json.dumps(out))
"""


def _edit(path: Path, anchor: str, text: str, after: bool = True) -> None:
    source = path.read_text()
    assert source.count(anchor) == 1, f"{path.name}: the walkthrough's anchor {anchor!r} moved"
    path.write_text(source.replace(anchor, anchor + text if after else text + anchor))


def _changed(a: Path, b: Path) -> list[str]:
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    out = [str(Path(b.name) / n) for n in cmp.right_only + cmp.diff_files]
    for name in cmp.subdirs:
        out += [str(Path(b.name) / p) for p in _changed(a / name, b / name)]
    return out


def test_adding_an_event_touches_its_record_its_phase_and_its_producer(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "fsm", tmp_path / "fsm", ignore=shutil.ignore_patterns("__pycache__"))
    # 1. the record
    events = tmp_path / "fsm" / "round" / "events.py"
    events.write_text(events.read_text() + RECORD)
    # 2. the phase: an action, and its row among the phase's transitions
    deal = tmp_path / "fsm" / "round" / "phases" / "deal.py"
    _edit(deal, "PHASE = Phase(", GUARD_AND_ACTION, after=False)
    _edit(deal, '        *play_rows("panel_next"),\n', ROW)
    _edit(deal, "from fsm.round.effects import ", "Alert, ")
    _edit(deal, "LOCKED_IN, deadline", ", player_banks")
    # 3. the producer
    (tmp_path / "producer.py").write_text(PRODUCER)

    changed = sorted(_changed(ROOT / "fsm", tmp_path / "fsm"))
    assert changed == ["fsm/round/events.py", "fsm/round/phases/deal.py"]  # + producer.py

    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), str(ROOT / "tests")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["betting"] == "untimely"  # no row leaves Betting: refused as untimely
    assert got["no_bank"] == "no player banks this round"  # its guard's reason
    assert got["state"] == "Open_Play"  # handled in place
    alert = [e for e in got["banked"] if e["type"] == "alert"]
    assert alert and alert[0]["code"] == "BANK_HANDS_RESET" and "area 4" in alert[0]["detail"]
