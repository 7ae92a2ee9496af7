"""The state row keeps one size (issue 29, gentle on the SD card): its snapshot is stored padded
with spaces to a multiple of ``STATE_PAD``, so SQLite rewrites the row in place (only the pages
whose bytes changed) instead of freeing and taking again its overflow pages at every store. The
padding is outside the state hash, so power-up and verify accept nothing but the writer's spaces.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.journal.format import STATE_PAD, canonical_json, stored_snapshot_text
from controller.journal.store import Journal, StorageFault, verify


def _snapshot(i: int) -> dict[str, object]:
    # about 2.3 KB like the round machine's: overflow pages at the journal's page size
    return {"round": i, "seats": [{"area": a, "note": "x" * (300 + i % 7)} for a in range(7)]}


def _state(db: Path) -> tuple[str, int, int]:
    conn = sqlite3.connect(db)
    try:
        (snapshot,) = conn.execute("SELECT snapshot FROM state").fetchone()
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        return snapshot, pages, free
    finally:
        conn.close()


def _journal(db: Path, n: int) -> None:
    with Journal.open(db, created_ms=0) as journal:
        for i in range(n):
            journal.append(i, None, "note", {"i": i}, _snapshot(i), {"L1": {"value": i}})


def test_the_state_row_is_stored_padded_and_rewritten_in_place(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    _journal(db, 3)
    stored, _, _ = _state(db)
    assert len(stored) % STATE_PAD == 0
    assert stored_snapshot_text(stored) == canonical_json(_snapshot(2), "snapshot")
    conn = sqlite3.connect(db)
    overflow_before = {p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name='state'")}
    conn.close()
    with Journal.open(db) as journal:  # 40 more stores of a snapshot of another length
        for i in range(3, 43):
            journal.append(i, None, "note", {"i": i}, _snapshot(i), {"L1": {"value": i}})
    conn = sqlite3.connect(db)
    overflow_after = {p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name='state'")}
    conn.close()
    assert overflow_after == overflow_before  # the same pages: never freed and taken again
    assert _state(db)[2] == 0  # nothing on the freelist
    assert verify(db).ok


def test_padding_that_is_not_spaces_is_refused_at_power_up_and_by_verify(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    _journal(db, 3)
    stored, _, _ = _state(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE state SET snapshot = ?", (stored[:-1] + "x",))
    conn.commit()
    conn.close()
    with pytest.raises(StorageFault, match="stored snapshot"):
        Journal.open(db)
    assert not verify(db).ok


def test_verify_names_padding_beyond_the_writer_s(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    _journal(db, 3)
    stored, _, _ = _state(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE state SET snapshot = ?", (stored + " " * STATE_PAD,))
    conn.commit()
    conn.close()
    report = verify(db)
    assert not report.ok
    assert any("padded with" in p for p in report.problems), report.problems
