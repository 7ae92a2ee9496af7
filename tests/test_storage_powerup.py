"""Storage faults at power-up that `make stress` found (issue 12): a ``power_up`` entry that
cannot be committed (a read-only journal file) left the service waiting with nothing published
(``simulate`` gave up after 120 s with exit 3); a journal directory that cannot hold the lock file
exited 6 ("in use"). Both are storage faults: exit 4 with the reason, nothing appended
(docs/journal.md "Power-up and storage faults"; NJ 13:69E-1.39B(h): the table recovers to the
prior, committed state or does not play). Real parts: a journal made by a real run, read-only
bind mounts in a mount namespace of their own (``unshare``), the real CLI."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal.audit import connect_read_only
from controller.sim.simulate import run_headless

ROOT = Path(__file__).resolve().parent.parent


def _entries(db: Path) -> int:
    conn = connect_read_only(db)
    try:
        return int(conn.execute("SELECT count(*) FROM journal").fetchone()[0])
    finally:
        conn.close()


def _simulate_under(mount: str, db: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed for the read-only mount")
    script = (
        f"{mount} && {sys.executable} -m controller.cli simulate --headless --rounds 5 "
        f"--seed 3 --db {db}"
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=90,  # the old behaviour waited 120 s before giving up
    )


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    table = tmp_path / "table"
    table.mkdir()
    db = table / "j.db"
    assert run_headless(db, 2, 3) == 0
    return db


def test_a_power_up_that_cannot_commit_is_a_storage_fault_exit_4(journal: Path) -> None:
    before = _entries(journal)
    done = _simulate_under(
        f"mount --bind {journal} {journal} && mount -o remount,ro,bind {journal}", journal
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "storage fault" in done.stdout + done.stderr
    assert "power_up" in done.stdout + done.stderr  # says which entry could not be committed
    assert _entries(journal) == before


def test_a_read_only_journal_directory_is_a_storage_fault_not_in_use(journal: Path) -> None:
    before = _entries(journal)
    where = journal.parent
    done = _simulate_under(
        f"mount --bind {where} {where} && mount -o remount,ro,bind {where}", journal
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "storage fault" in done.stderr and "Read-only file system" in done.stderr
    assert _entries(journal) == before


def _empty_wal_database(path: Path) -> None:
    """What a power cut during the very first power-up leaves (found by `make stress`): the
    switch to WAL mode reached the disk, the schema's transaction did not."""
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()


def test_an_empty_sqlite_file_left_by_a_cut_first_power_up_becomes_the_journal(
    tmp_path: Path,
) -> None:
    db = tmp_path / "j.db"
    _empty_wal_database(db)
    assert db.stat().st_size > 0
    assert run_headless(db, 1, 3) == 0  # was: "not a pai gow table journal", exit 2, forever
    assert _entries(db) > 0


def test_an_empty_sqlite_file_whose_anchor_records_entries_is_a_storage_fault(
    tmp_path: Path,
) -> None:
    """The anchor says the journal held entries: an empty file then means the journal was lost
    or replaced, never a new journal (docs/journal.md "Power-up and storage faults")."""
    first = tmp_path / "first.db"
    assert run_headless(first, 1, 3) == 0
    db = tmp_path / "j.db"
    _empty_wal_database(db)
    shutil.copyfile(tmp_path / "first.db.anchor", tmp_path / "j.db.anchor")
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "simulate", "--headless", "--rounds", "1",
         "--seed", "3", "--db", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=90,
    )  # fmt: skip
    assert done.returncode == 4, done.stdout + done.stderr
    assert "lost or replaced" in done.stderr


def test_a_foreign_sqlite_file_with_a_table_is_still_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "simulate", "--headless", "--rounds", "1",
         "--seed", "3", "--db", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=90,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a pai gow table journal" in done.stderr


def test_power_up_erases_the_record_of_an_entry_left_in_flight_by_a_kill(tmp_path: Path) -> None:
    """Found by `make stress` (SIGKILL chains): a kill while seq n+1 was in flight leaves the
    anchor's record ``seq n+1, acked n`` naming an entry that never committed. Power-up accepted
    it (in flight, docs/journal.md) but kept it; the restart's own seq n+1 — another entry — is
    committed while its record is written, and a kill between the two left the anchor naming
    the old entry: "rewritten or replaced", a storage fault after a plain kill. Power-up now
    settles both slots on the journal's head before anything is appended. (That writer wrote
    seq n's record while n committed; today's writes it after the commit and never leaves such a
    record, but an anchor the earlier one left must still power up.)"""
    from controller.journal.anchor import (
        SLOT,
        AnchorRecord,
        _slot_text,
        default_anchor_path,
        read_anchor,
    )
    from controller.journal.store import Journal

    db = tmp_path / "j.db"
    with Journal.open(db, table_id="T1", created_ms=0) as journal:
        for i in range(3):
            journal.append(i + 1, None, "power_up", {"n": i}, {}, {})
        head = journal.last_hash
    # the kill, as the earlier writer left it: seq 4's record (written while seq 4 committed),
    # the commit never durable, no acknowledgement
    fd = os.open(default_anchor_path(db), os.O_RDWR)
    os.pwrite(fd, _slot_text(AnchorRecord(4, "ab" * 32, 3)), 4 % 2 * SLOT)
    os.close(fd)
    assert read_anchor(default_anchor_path(db)).seq == 4  # type: ignore[union-attr]
    with Journal.open(db, table_id="T1", created_ms=0) as journal:  # in flight: accepted
        record = read_anchor(default_anchor_path(db))
        assert record is not None and (record.seq, record.hash, record.acked) == (3, head, 3)
        journal.append(9, None, "power_up", {"n": 9}, {}, {})
    with Journal.open(db, table_id="T1", created_ms=0) as journal:
        assert journal.count() == 4
