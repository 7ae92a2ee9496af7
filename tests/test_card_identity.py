"""No card identity leaves the controller before its round resolves (table-rules.md, "Automated
dealing shoe and shuffler"; NJ 13:69F-31.10; issue 12): not in a log line (the owner's refusals
after a storage fault included), not from the simulator's deck file, which is private (0600, in a
0700 directory) and never beside the journal. Exports and reports: tests/test_export_redaction.py
and tests/test_reports.py.
"""

from __future__ import annotations

import io
import json
import logging
import sqlite3
import stat
from pathlib import Path

import pytest
from test_owner import RecordingDevices, _owner

from controller.journal.audit import connect_read_only
from controller.journal.redact import HIDDEN, hide_cards
from controller.sim.simulate import run_headless
from controller.sim.simulated_table import deck_path_for, sim_state_dir
from fsm.round.events import Event
from fsm.rules.cards import format_card

STACKS = [[(7 * s + i) % 53 for i in range(7)] for s in range(7)]


def card_texts(stacks: list[list[int]]) -> list[str]:
    """How a stack could show in a log line: its JSON, its repr, its cards in notation."""
    out = []
    for stack in stacks:
        out += [json.dumps(stack), repr(stack), json.dumps(stack, separators=(",", ":"))]
        out.append(" ".join(format_card(c) for c in stack))
    return out


def test_hide_cards_hides_every_card_field_at_any_depth() -> None:
    data = {"stacks": STACKS, "remaining": 4, "x": [{"hands": {"1": "As Ks"}}, {"cards": [1]}]}
    assert hide_cards(data) == {
        "stacks": HIDDEN, "remaining": 4, "x": [{"hands": HIDDEN}, {"cards": HIDDEN}],
    }  # fmt: skip


def test_after_a_storage_fault_a_refused_dealt_event_is_logged_without_its_stacks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "journal.db"
    owner = _owner(db, RecordingDevices(db))
    owner.start()
    blocker = sqlite3.connect(str(db), timeout=0.1, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the file: the next append fails
    caplog.set_level(logging.DEBUG)
    try:
        owner.post(Event("light", {"states": ["lit"] + ["off"] * 5}))
        assert owner.wait_idle(30)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert owner.public.storage_fault is not None
    owner.post(Event("dealt", {"remaining": 4, "stacks": STACKS}))
    owner.post(Event("dealt", {"remaining": 4, "hands": {"1": "As Ks Qs Js Ts 9s 8s"}}))
    assert owner.wait_idle(10)
    owner.stop()
    text = "\n".join(r.getMessage() for r in caplog.records)
    refused = [r.getMessage() for r in caplog.records if "refused dealt" in r.getMessage()]
    assert len(refused) == 2 and all(HIDDEN in line for line in refused)
    for shown in [*card_texts(STACKS), "As Ks Qs Js Ts 9s 8s"]:
        assert shown not in text


def test_a_real_runs_log_output_holds_no_card_identity(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every log record of a headless run with device faults, at every level."""
    db = tmp_path / "journal.db"
    caplog.set_level(logging.DEBUG)
    out = io.StringIO()
    code = run_headless(db, 3, 11, fault_spec="garbage@1,shoe-jam@2", out=out)
    assert code == 0, out.getvalue()
    conn = connect_read_only(db)
    dealt = [json.loads(d) for (d,) in conn.execute("SELECT data FROM journal WHERE type='dealt'")]
    conn.close()
    assert dealt, "the run dealt no round"
    text = "\n".join(r.getMessage() for r in caplog.records) + out.getvalue()
    for data in dealt:
        for shown in card_texts(data["stacks"]):
            assert shown not in text


def test_the_simulators_deck_file_is_private_and_never_beside_the_journal(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # a journal in a directory everyone reads
    db = shared / "journal.db"
    assert run_headless(db, 1, 3, out=io.StringIO()) == 0
    deck = deck_path_for(db)
    assert deck.exists() and deck.parent == sim_state_dir()
    assert stat.S_IMODE(deck.stat().st_mode) == 0o600
    assert stat.S_IMODE(deck.parent.stat().st_mode) == 0o700
    assert not deck.is_relative_to(shared)
    beside = sorted(p.name for p in shared.iterdir())
    assert not [name for name in beside if "shoe" in name or "deck" in name], beside
    saved = json.loads(deck.read_text())
    assert set(saved) == {"deck_id", "cards"}  # the undealt cards: what must stay private
