"""The head anchor's protocol: seq n's record is made durable while SQLite commits seq n (``acked
n-1``: n in flight), then ``acked n`` once the commit returned. What that proves and allows, on
real files (real SQLite, the real anchor file, the real writer thread):

- an entry in flight at a power cut (its anchor record durable, its commit not) was never
  acknowledged: the journal one entry short of the anchor's seq opens, and verify says why;
- an acknowledged entry that vanished is a storage fault, the last one included (NJ 13:69E-1.39B(h):
  recover to the prior state, never a silent rollback with reused sequence numbers);
- a clean stop leaves nothing in flight; a failed background write is never swallowed.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from controller.journal.anchor import (
    ACK_LINGER_S,
    AnchorError,
    AnchorWriter,
    default_anchor_path,
    read_anchor,
)
from controller.journal.audit import verify
from controller.journal.format import JournalError, StorageFault
from controller.journal.store import Journal


def _append(journal: Journal, n: int) -> None:
    for i in range(n):
        journal.append(1_000 + i, 1, "tick", {"n": i}, {"i": i}, {"L1": {"cents": 100 * i}})


def _copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    for suffix in ("-wal",):
        side = src.with_name(src.name + suffix)
        if side.exists():
            shutil.copyfile(side, dst.with_name(dst.name + suffix))
    return dst


def test_a_clean_close_leaves_the_last_entry_acknowledged_in_the_anchor(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    with Journal.open(db, created_ms=0) as journal:
        _append(journal, 5)
        head = journal.last_hash
    record = read_anchor(default_anchor_path(db))
    assert record is not None
    assert (record.seq, record.acked, record.hash) == (5, 5, head)


def test_an_entry_in_flight_at_a_cut_was_never_acknowledged_and_is_not_a_fault(
    tmp_path: Path,
) -> None:
    """The anchor's record for seq 4 became durable, the commit of seq 4 did not (the cut fell
    between the two flushes): the journal ends at seq 3, which the anchor allows (acked 3)."""
    db = tmp_path / "j.db"
    with Journal.open(db, created_ms=0) as journal:
        _append(journal, 3)
    writer = AnchorWriter(default_anchor_path(db))
    writer.begin(4, "ab" * 32)  # what append does before its COMMIT
    writer.wait()
    os.close(writer._fd)  # the cut: no acknowledgement, no close-time flush
    writer._fd = -1
    writer.close()
    record = read_anchor(default_anchor_path(db))
    assert record is not None and (record.seq, record.acked) == (4, 3)
    report = verify(db)
    assert report.ok, report.problems
    assert any("seq 4 was being committed" in note for note in report.notes)
    with Journal.open(db) as journal:  # power-up accepts it and seq 4 is appended anew
        assert journal.count() == 3
        _append(journal, 1)
        assert journal.count() == 4
    assert verify(db).ok


def test_the_last_acknowledged_entry_vanishing_is_a_storage_fault(tmp_path: Path) -> None:
    """An older copy of the journal (one entry short) put back beside the anchor of the newer:
    the anchor says seq 6 was acknowledged, so its absence is a storage fault, not an entry in
    flight (NJ 13:69E-1.39B(h))."""
    db = tmp_path / "j.db"
    with Journal.open(db, created_ms=0) as journal:
        _append(journal, 5)
    older = _copy(db, tmp_path / "older.db")
    with Journal.open(db) as journal:
        _append(journal, 1)
    shutil.copyfile(older, db)
    for side in ("-wal", "-shm"):
        db.with_name(db.name + side).unlink(missing_ok=True)
    with pytest.raises(StorageFault, match=r"records seq 6: 1 committed entries have vanished"):
        Journal.open(db)
    report = verify(db)
    assert not report.ok
    assert any("1 committed entries have vanished" in p for p in report.problems)


def test_a_journal_two_behind_an_anchor_in_flight_is_a_storage_fault(tmp_path: Path) -> None:
    """In flight covers exactly one entry: seq 5 in flight says seq 4 was acknowledged."""
    db = tmp_path / "j.db"
    with Journal.open(db, created_ms=0) as journal:
        _append(journal, 3)
    writer = AnchorWriter(default_anchor_path(db))
    writer.begin(5, "cd" * 32)
    writer.wait()
    writer.close()
    with pytest.raises(StorageFault, match=r"records seq 5: 1 committed entries have vanished"):
        Journal.open(db)


def test_a_failed_background_acknowledgement_is_raised_by_the_next_append(
    tmp_path: Path,
) -> None:
    """The acknowledgement is written after append returned; if that write fails (here: the
    anchor's descriptor replaced by a read-only one), the next append says so instead of going on
    with an anchor that no longer follows the journal."""
    db = tmp_path / "j.db"
    journal = Journal.open(db, created_ms=0)
    _append(journal, 2)
    anchor: Any = journal._anchor
    read_only = os.open(default_anchor_path(db), os.O_RDONLY)
    anchor.wait()
    os.dup2(read_only, anchor._fd)
    os.close(read_only)
    with pytest.raises(JournalError, match=r"anchor .*write of seq \d+ failed"):
        _append(journal, 2)
    journal.close()  # reported once; the file closes


def test_a_torn_write_of_one_slot_leaves_the_other_slot_s_record(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    with Journal.open(db, created_ms=0) as journal:
        _append(journal, 7)
    path = default_anchor_path(db)
    raw = bytearray(path.read_bytes())
    raw[7 % 2 * 192 + 10] ^= 0xFF  # the slot of seq 7, damaged
    path.write_bytes(bytes(raw))
    record = read_anchor(path)
    assert record is not None and record.seq == 6
    with Journal.open(db) as journal:
        assert journal.count() == 7


def test_a_garbage_anchor_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.anchor"
    path.write_bytes(b"PGA3 1 2 3\n" * 40)
    with pytest.raises(AnchorError, match=r"x\.anchor: no valid record"):
        read_anchor(path)


def test_an_idle_journal_s_anchor_acknowledges_its_last_entry_without_a_close(
    tmp_path: Path,
) -> None:
    """Nothing follows the last append (an idle table): its acknowledgement is written by the
    anchor's thread on its own, ACK_LINGER_S after the record, so the window in which the loss of
    that entry would pass for an entry in flight closes without a clean stop."""
    db = tmp_path / "j.db"
    journal = Journal.open(db, created_ms=0)
    try:
        _append(journal, 3)
        head = journal.last_hash
        deadline = time.monotonic() + 5.0  # generous: ACK_LINGER_S is 5 ms
        record = read_anchor(default_anchor_path(db))
        while record is not None and record.acked < 3 and time.monotonic() < deadline:
            time.sleep(ACK_LINGER_S)
            record = read_anchor(default_anchor_path(db))
        assert record is not None and (record.seq, record.acked, record.hash) == (3, 3, head)
    finally:
        journal.close()


def test_a_begin_whose_wait_never_came_is_waited_for_by_the_next(tmp_path: Path) -> None:
    """An append interrupted between its record and its wait (an exception in between) must not
    wedge the writer: the next `begin` first waits for the outstanding record, and the records
    stay in order (the later seq wins)."""
    path = tmp_path / "x.anchor"
    writer = AnchorWriter(path)
    writer.begin(1, "ab" * 32)
    writer.begin(2, "cd" * 32)
    writer.wait()
    writer.acknowledge(2, "cd" * 32)
    writer.close()
    record = read_anchor(path)
    assert record is not None and (record.seq, record.acked, record.hash) == (2, 2, "cd" * 32)


def test_an_abandoned_commit_leaves_its_seq_in_flight_and_acknowledges_nothing(
    tmp_path: Path,
) -> None:
    """The commit of seq 2 failed (`abandon`): its record stays ``seq 2, acked 1`` — in flight,
    never acknowledged — even after the writer has lingered and closed."""
    path = tmp_path / "x.anchor"
    writer = AnchorWriter(path)
    writer.write(1, "ab" * 32)
    writer.begin(2, "cd" * 32)
    writer.abandon()
    time.sleep(4 * ACK_LINGER_S)
    writer.close()
    record = read_anchor(path)
    assert record is not None and (record.seq, record.acked) == (2, 1)
