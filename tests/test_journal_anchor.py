"""The head anchor's protocol: seq n's record (``seq n, hash, acked n``) is posted once SQLite's
commit of seq n has returned and written on the anchor's thread beside the next append's COMMIT
(durable when that append returns), or on its own after ``LINGER_S`` when none follows. What that
proves and allows, on real files (real SQLite, the real anchor file, the real writer thread):

- the anchor never names an entry that was not committed (a failed append leaves it on the last
  committed one), and an idle table's last entry is anchored without a clean stop (`LINGER_S`);
- an acknowledged entry that vanished is a storage fault, the last one included (NJ 13:69E-1.39B(h):
  recover to the prior state, never a silent rollback with reused sequence numbers);
- an anchor left by the earlier writer with an entry in flight (``acked n-1``: its record was
  written while n committed) is still read by that rule: the entry in flight may be missing;
- a clean stop leaves the head anchored; a failed background write is never swallowed.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from controller.journal import anchor as anchor_module
from controller.journal.anchor import (
    LINGER_S,
    SLOT,
    SYNC_ENTRIES,
    AnchorError,
    AnchorRecord,
    AnchorWriter,
    _slot_text,
    default_anchor_path,
    read_anchor,
)
from controller.journal.audit import verify
from controller.journal.format import JournalError, StorageFault
from controller.journal.store import Journal


def _left_in_flight(anchor: Path, seq: int, digest: str) -> None:
    """The record the earlier writer made durable while seq's commit ran: ``seq, acked seq-1``
    (its slot, as a cut left it: no acknowledgement followed)."""
    fd = os.open(anchor, os.O_RDWR)
    try:
        os.pwrite(fd, _slot_text(AnchorRecord(seq, digest, seq - 1)), seq % 2 * SLOT)
        os.fsync(fd)
    finally:
        os.close(fd)


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
    """The earlier writer's record for seq 4 became durable, the commit of seq 4 did not (the cut
    fell between the two flushes): the journal ends at seq 3, which the anchor allows (acked 3)."""
    db = tmp_path / "j.db"
    with Journal.open(db, created_ms=0) as journal:
        _append(journal, 3)
    _left_in_flight(default_anchor_path(db), 4, "ab" * 32)
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
    _left_in_flight(default_anchor_path(db), 5, "cd" * 32)
    with pytest.raises(StorageFault, match=r"records seq 5: 1 committed entries have vanished"):
        Journal.open(db)


def _two_entries_then_a_failing_anchor(db: Path) -> Journal:
    """A journal of two anchored entries whose anchor's descriptor is then replaced by a
    read-only one: every later record's write fails on the anchor's thread."""
    journal = Journal.open(db, created_ms=0)
    _append(journal, 2)
    anchor: Any = journal._anchor
    anchor.flush()
    read_only = os.open(default_anchor_path(db), os.O_RDONLY)
    os.dup2(read_only, anchor._fd)
    os.close(read_only)
    return journal


def test_a_failed_background_record_write_is_raised_by_the_next_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seq n's record is written after append returned; if that write fails (here: the anchor's
    descriptor replaced by a read-only one), the next append says so instead of going on with an
    anchor that no longer follows the journal. (Every record due here: SYNC_ENTRIES 1.)"""
    monkeypatch.setattr(anchor_module, "SYNC_ENTRIES", 1)
    journal = _two_entries_then_a_failing_anchor(tmp_path / "j.db")
    with pytest.raises(
        JournalError, match=r"seq 4 (not appended: |committed but )anchor .*write of seq 3 failed"
    ) as raised:
        _append(journal, 2)
    # seq 3 committed (its record failed); seq 4 too if the failure was learnt after its commit
    assert journal.count() == (3 if "not appended" in str(raised.value) else 4)
    journal.close()  # reported once; the file closes


def test_a_failed_write_of_the_last_record_is_raised_by_the_flush(tmp_path: Path) -> None:
    """The last record has no next append to report it: `flush_anchor` (and `close`) do."""
    journal = _two_entries_then_a_failing_anchor(tmp_path / "j.db")
    _append(journal, 1)  # committed; its record's write fails on the anchor's thread
    with pytest.raises(JournalError, match=r"anchor .*write of seq 3 failed"):
        journal.flush_anchor()
    journal.close()


def test_a_torn_write_of_one_slot_leaves_the_other_slot_s_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(anchor_module, "SYNC_ENTRIES", 1)  # every record written: 6, then 7
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


def _round_completed(journal: Journal, n: int) -> None:
    journal.append(2_000 + n, n, "round_completed", {"effects": []}, {"i": n}, {"L1": {"c": n}})


def _wait_for_anchor(db: Path, seq: int, deadline_s: float = 5.0) -> AnchorRecord | None:
    deadline = time.monotonic() + deadline_s  # generous: one fdatasync
    record = read_anchor(default_anchor_path(db))
    while record is not None and record.seq < seq and time.monotonic() < deadline:
        time.sleep(0.002)
        record = read_anchor(default_anchor_path(db))
    return record


def test_an_idle_journal_s_last_round_is_anchored_without_a_close(tmp_path: Path) -> None:
    """Issue 29: the anchor is written when an entry completes a round (and every SYNC_ENTRIES
    records, and at a flush or close), not after every entry. An idle table whose last entry
    completed a round has it anchored by the anchor's thread on its own after LINGER_S; entries
    of a round still running are anchored at its end, or by the flush of a clean stop (they are
    durable at their commit all the same: the anchor only detects their later loss)."""
    db = tmp_path / "j.db"
    journal = Journal.open(db, created_ms=0)
    try:
        _append(journal, 3)
        _round_completed(journal, 1)
        head = journal.last_hash
        record = _wait_for_anchor(db, 4)
        assert record is not None and (record.seq, record.acked, record.hash) == (4, 4, head)
        _append(journal, 2)  # mid-round: not yet anchored
        time.sleep(20 * LINGER_S)
        record = read_anchor(default_anchor_path(db))
        assert record is not None and record.seq == 4
        journal.flush_anchor()
        record = read_anchor(default_anchor_path(db))
        assert record is not None and (record.seq, record.hash) == (6, journal.last_hash)
    finally:
        journal.close()


def test_a_failed_append_leaves_the_anchor_on_the_last_committed_entry(tmp_path: Path) -> None:
    """The anchor never names an entry that is not committed: an append whose transaction fails
    (here a temporary trigger refuses the state row's UPDATE, as a failing disk would) posts no
    record, and the journal and its anchor stay in step: verify passes, power-up goes on."""
    db = tmp_path / "j.db"
    journal = Journal.open(db, created_ms=0)
    _append(journal, 2)
    head = journal.last_hash
    journal._conn.execute(
        "CREATE TEMP TRIGGER refuse BEFORE UPDATE ON main.state"
        " BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
    )
    with pytest.raises(JournalError, match=r"append of seq 3 \(tick\) failed: disk says no"):
        _append(journal, 1)
    journal.flush_anchor()
    record = read_anchor(default_anchor_path(db))
    assert record is not None and (record.seq, record.acked, record.hash) == (2, 2, head)
    journal.close()
    report = verify(db)
    assert report.ok, report.problems
    with Journal.open(db) as again:
        assert again.count() == 2


def test_records_land_in_order_and_the_later_seq_wins(tmp_path: Path) -> None:
    """A record posted while an earlier one is still pending replaces it (both committed: the
    later says more), and one being written is finished first: the later seq is what lands."""
    path = tmp_path / "x.anchor"
    writer = AnchorWriter(path)
    writer.post(1, "ab" * 32)
    writer.post(2, "cd" * 32)
    writer.close()
    record = read_anchor(path)
    assert record is not None and (record.seq, record.acked, record.hash) == (2, 2, "cd" * 32)


def test_when_an_append_returns_the_last_round_before_it_is_anchored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound of the unseen loss (issue 29): when append n returns and entry n-1 completed a
    round, entry n-1's record is written (beside n's COMMIT, waited for); and the anchor never
    trails the journal by more than SYNC_ENTRIES + 1 entries, so after a cut the journal is at
    most that far ahead of its anchor and never behind it (NJ 13:69E-1.39B(h)). The anchor's
    medium is made slow (each write of the writer's thread 20 ms late), so a writer that did
    not wait would be caught."""
    db = tmp_path / "j.db"
    real_pwrite = os.pwrite

    def slow_pwrite(fd: int, data: bytes, offset: int) -> int:
        if threading.current_thread() is not threading.main_thread():
            time.sleep(0.02)
        return real_pwrite(fd, data, offset)

    with Journal.open(db, created_ms=0) as journal:
        monkeypatch.setattr(os, "pwrite", slow_pwrite)  # the module's os: the same object
        ended = 0  # the last entry that completed a round
        for n in range(1, 51):
            if n % 7 == 0:
                _round_completed(journal, n)
            else:
                journal.append(1_000 + n, 1, "tick", {"n": n}, {"i": n}, {"L1": {"cents": n}})
            record = read_anchor(default_anchor_path(db))
            assert record is not None and record.seq >= ended, (n, record)
            assert record.seq >= n - SYNC_ENTRIES - 1, (n, record)
            assert record.seq <= n and record.acked == record.seq
            if n % 7 == 0:
                ended = n
