"""The tamper-evident journal on real SQLite files: chain, append-only triggers, one transaction per
event, restart from the stored state, verify and export.

Why it matters: the meter never decreases except by a recorded payout or a recorded, authorised
correction (NJ 13:69D-1.52(f)); every hit is recorded with table, position, level, amount, time
and round (NY 5321.18(b)(3)(iii)); a storage failure must be detected, not played through
(NJ 13:69E-1.39B(d)). The expected hashes here are computed from the encoding documented in
docs/journal.md, with hashlib and json directly, never with the journal's own helpers.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from controller.journal.audit import connect_read_only
from controller.journal.store import Entry, Journal, JournalError, StorageFault, export, verify


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def documented_hash(
    seq: int, ts: int, round_id: int | None, type_: str, data: object, prev: str, state: str
) -> str:
    """docs/journal.md: SHA-256 hex of canonical JSON of [seq, ts_ms, round_id, type, data,
    prev_hash, state_hash] (sort_keys, separators (",", ":"), ensure_ascii)."""
    text = canonical([seq, ts, round_id, type_, data, prev, state])
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def documented_state_hash(snapshot: object, meters: object, rounds: int) -> str:
    """docs/journal.md: SHA-256 of {"meters": ..., "rounds": ..., "snapshot": ...}."""
    text = canonical({"meters": meters, "rounds": rounds, "snapshot": snapshot})
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def documented_genesis(path: Path) -> str:
    """docs/journal.md: seq 1's prev_hash is SHA-256 of the canonical object of the meta rows."""
    conn = connect_read_only(path)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    conn.close()
    return hashlib.sha256(canonical(meta).encode("ascii")).hexdigest()


class ToyReplayer:
    """A stand-in round machine for these tests: counts events and adds up ``cents``; its
    recomputed effects are those recorded (``effects``, default none)."""

    def __init__(self, config: object = None) -> None:
        self.events = 0
        self.cents = 0

    def step(self, entry: Entry) -> list[object]:
        self.events += 1
        self.cents += int(entry.data.get("cents", 0))
        return list(entry.data.get("effects", []))

    def snapshot(self) -> dict[str, object]:
        return {"events": self.events, "cents": self.cents}

    def meters(self) -> dict[str, object]:
        return {"main": {"cents": self.cents}}


toy_replay = ToyReplayer


def fill(journal: Journal, count: int, start_ts: int = 1_700_000_000_000) -> list[Entry]:
    """Append ``count`` entries whose snapshot and meters follow `ToyReplayer`."""
    made: list[Entry] = []
    base = journal.count()
    state = journal.last_state()
    cents = 0 if state is None else int(state.snapshot["cents"])
    for i in range(count):
        n = base + i + 1
        cents += n
        type_ = "round_completed" if n % 4 == 0 else "chip_detected"
        made.append(
            journal.append(
                start_ts + n,
                n // 4,
                type_,
                {"cents": n, "position": n % 6 + 1},
                {"events": n, "cents": cents},
                {"main": {"cents": cents}},
            )
        )
    return made


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), isolation_level=None)


def drop_guards(conn: sqlite3.Connection) -> None:
    for name in ("journal_no_update", "journal_no_delete", "journal_append_only"):
        conn.execute(f"DROP TRIGGER {name}")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


# ------------------------------------------------------------------------------- chain and seq
def test_every_entry_is_numbered_and_chained_to_the_previous_hash(path: Path) -> None:
    """Each entry has a gapless seq from 1 and the hash of the previous entry (DESIGN.md, the
    record of every wager and payout: NJ 13:69D-1.52(f))."""
    with Journal.open(path, created_ms=0) as journal:
        made = fill(journal, 300)
        stored = list(journal.entries())
    assert [e.seq for e in stored] == list(range(1, 301))
    assert stored == made
    prev = documented_genesis(path)
    cents = 0
    for e in stored:
        cents += e.seq
        state = documented_state_hash(
            {"events": e.seq, "cents": cents}, {"main": {"cents": cents}}, e.seq // 4
        )
        assert e.state_hash == state
        assert e.prev_hash == prev
        assert e.hash == documented_hash(e.seq, e.ts_ms, e.round_id, e.type, e.data, prev, state)
        prev = e.hash
    report = verify(path)
    assert report.ok, report.problems
    assert (report.entries, report.rounds) == (300, 75)


def test_hash_covers_non_ascii_type_and_data_with_the_documented_encoding(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        e = journal.append(5, None, "note_é", {"text": "reine ♥", "list": [1, 2]}, {}, {})
    state = documented_state_hash({}, {}, 0)
    assert e.hash == documented_hash(
        1, 5, None, "note_é", {"list": [1, 2], "text": "reine ♥"}, documented_genesis(path), state
    )
    assert verify(path).ok


def test_the_appended_entry_is_the_stored_entry_and_cannot_be_changed(path: Path) -> None:
    """What `append` returns (data decoded from the stored text on first use) equals the entry
    read back, whatever the caller does to its own data afterwards."""
    data = {"position": (2, 3), "note": "é", "nested": {"b": 1.0, "a": True}}
    with Journal.open(path, created_ms=0) as journal:
        appended = journal.append(7, 4, "chip_detected", data, {"k": 1}, {})
        data["note"] = "changed after the append"
        (stored,) = journal.entries()
    assert appended == stored and stored == appended
    assert appended.data == {"position": [2, 3], "note": "é", "nested": {"a": True, "b": 1.0}}
    assert appended.data is appended.data  # decoded once
    assert appended.to_json() == stored.to_json()
    assert appended != replace(stored, mac="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        appended.seq = 9  # type: ignore[misc]


def test_the_worked_example_of_docs_journal_md_holds(path: Path) -> None:
    """docs/journal.md gives one journal's genesis, one entry and their hashes, computed with
    hashlib by hand."""
    with Journal.open(path, table_id="T1", created_ms=0) as journal:
        e = journal.append(5, None, "power_up", {"software": "ab"}, {}, {})
    assert documented_genesis(path) == (
        "1ae04847479797596217ed209d763bef04ba6ef5da1e2836b367ab4a6dbc2fd8"
    )
    assert e.state_hash == "4d0bcc390ee9502f12a0b5a4d1ba582a5a9a0e52947eaedd17d01ef57d397cf5"
    assert e.hash == "e5d3ce858007c6bd9757d8c9f600ff50fb7ef61368b535173515af10b3bed308"


def test_reopening_resumes_seq_and_hash_chain(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        first = fill(journal, 3)
    with Journal.open(path) as journal:
        assert journal.count() == 3
        more = fill(journal, 2)
    assert [e.seq for e in more] == [4, 5]
    assert more[0].prev_hash == first[-1].hash
    assert verify(path, toy_replay).ok


def test_entries_streams_a_range(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        made = fill(journal, 20)
        it = journal.entries(5, 8)
        assert next(it) == made[4]
        assert [e.seq for e in it] == [6, 7, 8]
        assert [e.seq for e in journal.entries(18)] == [18, 19, 20]


# ------------------------------------------------------------------------------- append-only
ZEROS = ("0" * 64, "0" * 64, "0" * 64)


def test_triggers_refuse_update_and_delete_of_a_committed_entry(path: Path) -> None:
    """A recorded payout cannot be edited away (NJ 13:69D-1.52(f))."""
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 5)
    conn = raw(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only: UPDATE refused"):
        conn.execute("UPDATE journal SET data = '{\"cents\":0}' WHERE seq = 3")
    with pytest.raises(sqlite3.DatabaseError, match="append-only: DELETE refused"):
        conn.execute("DELETE FROM journal WHERE seq = 5")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute(
            "INSERT OR REPLACE INTO journal VALUES (3, 0, 0, 'x', '{}', ?, ?, ?, '')", ZEROS
        )
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):  # a gap
        conn.execute("INSERT INTO journal VALUES (9, 0, 0, 'x', '{}', ?, ?, ?, '')", ZEROS)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):  # a broken link
        conn.execute("INSERT INTO journal VALUES (6, 0, 0, 'x', '{}', ?, ?, ?, '')", ZEROS)
    conn.close()
    report = verify(path, toy_replay)
    assert report.ok, report.problems
    assert report.entries == 5


# ------------------------------------------------------------------------------- tampering
def test_altered_data_field_is_reported_as_hash_mismatch(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 10)
    conn = raw(path)
    drop_guards(conn)
    conn.execute('UPDATE journal SET data = \'{"cents":300,"position":4}\' WHERE seq = 3')
    conn.close()
    problems = verify(path).problems
    assert "seq 3: hash mismatch" in " ".join(problems)
    assert "trigger journal_no_update is missing" in problems


def test_deleted_middle_row_is_reported_as_a_gap(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 10)
    conn = raw(path)
    drop_guards(conn)
    conn.execute("DELETE FROM journal WHERE seq = 6")
    conn.close()
    problems = verify(path).problems
    assert "gap after seq 5: next entry is seq 7" in problems
    assert "seq 7: prev_hash does not match the hash of seq 5" in problems


def test_swapped_rows_are_reported_at_both_seqs(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 10)
    conn = raw(path)
    drop_guards(conn)
    conn.execute("UPDATE journal SET seq = -3 WHERE seq = 3")
    conn.execute("UPDATE journal SET seq = 3 WHERE seq = 7")
    conn.execute("UPDATE journal SET seq = 7 WHERE seq = -3")
    conn.close()
    text = "\n".join(verify(path).problems)
    assert "seq 3: hash mismatch" in text
    assert "seq 7: hash mismatch" in text
    assert "seq 3: prev_hash does not match the hash of seq 2" in text


def test_truncated_tail_is_reported_by_the_stored_state(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 10)
    conn = raw(path)
    drop_guards(conn)
    conn.execute("DELETE FROM journal WHERE seq = 10")
    for statement in _guard_sql():
        conn.execute(statement)
    conn.close()
    problems = verify(path).problems
    assert "stored state reflects seq 10 but the journal ends at seq 9" in problems
    assert any("anchor" in p and "records seq 10" in p for p in problems), problems
    with pytest.raises(StorageFault, match="stored state reflects seq 10"):
        Journal.open(path)


def _guard_sql() -> list[str]:
    from controller.journal.format import SCHEMA_SQL

    return [s for s in SCHEMA_SQL if "CREATE TRIGGER" in s]


# ------------------------------------------------------------------------------- bad files
def test_garbage_file_is_reported_not_raised(tmp_path: Path) -> None:
    """A storage failure must be detected (NJ 13:69E-1.39B(d)), never crash the check."""
    bad = tmp_path / "garbage.db"
    bad.write_bytes(b"\x00\xffnot sqlite at all" * 500)
    report = verify(bad)
    assert not report.ok
    assert "not a database" in report.problems[0]
    with pytest.raises(JournalError, match=r"garbage\.db"):
        Journal.open(bad)


def test_truncated_file_is_reported_not_raised(path: Path, tmp_path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 400)
    data = path.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[: len(data) // 2])
    report = verify(cut)
    assert not report.ok
    assert report.problems
    empty_half = tmp_path / "header-only.db"
    empty_half.write_bytes(data[:100])
    assert not verify(empty_half).ok


def test_missing_file_and_directory_are_reported(tmp_path: Path) -> None:
    assert verify(tmp_path / "nope.db").problems == [
        f"{tmp_path / 'nope.db'}: no such journal file"
    ]
    assert verify(tmp_path).problems == [f"{tmp_path}: not a regular file"]
    with pytest.raises(JournalError, match="is a directory"):
        Journal.open(tmp_path)


def test_foreign_sqlite_database_is_not_our_journal(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE journal (x)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    assert verify(other).problems[0].startswith("not a pai gow table journal")
    with pytest.raises(JournalError, match="not a pai gow table journal"):
        Journal.open(other)
    assert other.read_bytes() == before  # refused without touching another program's file


def test_a_neutered_trigger_is_reported_as_altered(path: Path) -> None:
    """Replacing a guard by a same-named trigger that refuses nothing is tampering too."""
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 3)
    conn = raw(path)
    conn.execute("DROP TRIGGER journal_no_delete")
    conn.execute(
        "CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal WHEN 0 BEGIN SELECT 1; END"
    )
    conn.close()
    assert verify(path).problems == ["trigger journal_no_delete has been altered"]
    with pytest.raises(JournalError, match="trigger journal_no_delete has been altered"):
        Journal.open(path)


def test_wrong_schema_version_is_refused(path: Path) -> None:
    Journal.open(path, created_ms=0).close()
    conn = raw(path)
    conn.execute("PRAGMA user_version = 3")
    conn.close()
    with pytest.raises(JournalError, match="schema version 3, this software reads 2"):
        Journal.open(path)
    assert "schema version 3, this software reads 2" in verify(path).problems


def test_journal_of_another_table_is_refused(path: Path) -> None:
    Journal.open(path, table_id="PG-01", created_ms=0).close()
    with pytest.raises(JournalError, match="belongs to table 'PG-01', not 'PG-02'"):
        Journal.open(path, table_id="PG-02")
    Journal.open(path, table_id="PG-01").close()
    conn = raw(path)
    assert dict(conn.execute("SELECT key, value FROM meta")) == {
        "asset_number": "",
        "config": "null",
        "created": "0",
        "key_id": "",
        "schema_version": "2",
        "table_id": "PG-01",
    }
    conn.close()


# ------------------------------------------------------------------------------- one transaction
def test_unserialisable_snapshot_writes_nothing(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 3)
        before = journal.last_state()
        with pytest.raises(ValueError, match="snapshot: not JSON-serialisable"):
            journal.append(10, 1, "chip_detected", {"cents": 1}, {"bad": {1, 2}}, {})
        with pytest.raises(ValueError, match=r"meters\['main'\]: must be a JSON object"):
            journal.append(10, 1, "chip_detected", {"cents": 1}, {}, {"main": 5})  # type: ignore[dict-item]
        assert journal.count() == 3
        assert journal.last_state() == before
        nxt = fill(journal, 1)[0]
    assert nxt.seq == 4
    assert verify(path, toy_replay).ok


def test_failure_between_entry_insert_and_state_update_rolls_back_all(path: Path) -> None:
    """The entry, the snapshot and the meters commit together or not at all (DESIGN.md step 3):
    a storage failure after the entry row is written leaves no entry behind."""
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 3)
        before = journal.last_state()
        saboteur = raw(path)
        saboteur.execute(
            "CREATE TRIGGER sabotage BEFORE UPDATE ON state "
            "BEGIN SELECT RAISE(ABORT, 'simulated storage failure'); END"
        )
        with pytest.raises(JournalError, match=r"append of seq 4 .* simulated storage failure"):
            journal.append(
                99, 1, "chip_detected", {"cents": 4}, {"events": 4, "cents": 10}, {"main": {}}
            )
        assert saboteur.execute("SELECT max(seq), count(*) FROM journal").fetchone() == (3, 3)
        assert journal.count() == 3
        assert journal.last_state() == before
        saboteur.execute("DROP TRIGGER sabotage")
        saboteur.close()
        assert fill(journal, 1)[0].seq == 4
    report = verify(path, toy_replay)
    assert report.ok, report.problems


def test_bad_arguments_name_the_argument_and_write_nothing(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        cases: list[tuple[tuple[object, ...], str]] = [
            ((True, 1, "t", {}, {}, {}), "ts_ms"),
            ((-1, 1, "t", {}, {}, {}), "ts_ms"),
            ((1, "7", "t", {}, {}, {}), "round_id"),
            ((1, 1, "", {}, {}, {}), "type"),
            ((1, 1, "t", [1], {}, {}), "data"),
            ((1, 1, "t", {1: "x"}, {}, {}), "data: key 1"),
            ((1, 1, "t", {"x": float("nan")}, {}, {}), "data: not JSON"),
        ]
        for args, message in cases:
            with pytest.raises(ValueError, match=message):
                journal.append(*args)  # type: ignore[arg-type]
        assert journal.count() == 0
        assert journal.last_state() is None


# ------------------------------------------------------------------------------- stored state
def test_last_state_is_the_last_committed_snapshot_and_meters(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        assert journal.last_state() is None
        journal.append(1, 1, "a", {}, {"k": 1}, {"L1": {"cents": 100}, "L2": {"cents": 5}})
        with pytest.raises(ValueError, match=r"meters: must name every stored level.*L2"):
            journal.append(2, 1, "b", {}, {"k": 2}, {"L1": {"cents": 121}})
        last = journal.append(2, 1, "b", {}, {"k": 2}, {"L1": {"cents": 121}, "L2": {"cents": 5}})
    with Journal.open(path) as journal:
        state = journal.last_state()
    assert state is not None
    assert state.seq == 2
    assert state.hash == last.hash
    assert state.snapshot == {"k": 2}
    assert state.meters == {"L1": {"cents": 121}, "L2": {"cents": 5}}


def test_verify_reads_while_the_writer_holds_the_file(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 4)
        assert verify(path, toy_replay).ok
        fill(journal, 1)
        assert verify(path).entries == 5


# ------------------------------------------------------------------------------- replay hook
def test_a_stored_snapshot_the_chain_does_not_vouch_for_is_reported(path: Path) -> None:
    """Issue 7 finding "rows outside the chain": the state and meters rows are bound by the last
    entry's state hash, so writing the snapshot and meters a replay would give with another
    value is detected, with or without a replay (NJ 13:69D-1.52(f))."""
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 8)
    assert verify(path, toy_replay).ok
    conn = raw(path)
    conn.execute('UPDATE state SET snapshot = \'{"cents":1,"events":8}\'')
    conn.execute("UPDATE meters SET \"values\" = '{\"cents\":35}' WHERE level = 'main'")
    conn.close()
    needle = "stored snapshot, meters or round count are not the state seq 8 recorded"
    assert any(needle in p for p in verify(path, toy_replay).problems)
    assert any(needle in p for p in verify(path).problems)
    with pytest.raises(StorageFault, match="stored snapshot, meters or round count"):
        Journal.open(path)


def test_replay_that_raises_is_reported(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 3)

    class Broken(ToyReplayer):
        def step(self, entry: Entry) -> list[object]:
            if entry.seq == 2:
                raise KeyError("position")
            return super().step(entry)

    report = verify(path, Broken)
    assert report.problems == ["replay failed at seq 2 (chip_detected): KeyError: 'position'"]
    assert report.entries == 3


# ------------------------------------------------------------------------------- export
def test_export_jsonl_carries_every_entry(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        made = fill(journal, 12)
    out = io.StringIO()
    assert export(path, "jsonl", out) == 12
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(x["seq"], x["hash"], x["prev_hash"]) for x in lines] == [
        (e.seq, e.hash, e.prev_hash) for e in made
    ]
    first = lines[0]
    assert set(first) >= {"seq", "ts", "round", "type", "data", "hash", "prev_hash"}
    assert first["data"] == {"cents": 1, "position": 2}
    assert first["round"] == 0 and first["type"] == "chip_detected"


def test_export_csv_lets_an_auditor_recompute_every_hash(path: Path) -> None:
    with Journal.open(path, created_ms=0) as journal:
        fill(journal, 12)
        journal.append(
            1, None, "power_up", {"software": "x"}, {"events": 13, "cents": 78}, {"main": {}}
        )
    out = io.StringIO()
    assert export(path, "csv", out) == 13
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    prev = documented_genesis(path)
    for row in rows:
        round_id = None if row["round"] == "" else int(row["round"])
        data = json.loads(row["data"])
        assert row["prev_hash"] == prev
        assert row["hash"] == documented_hash(
            int(row["seq"]), int(row["ts"]), round_id, row["type"], data, prev, row["state_hash"]
        )
        prev = row["hash"]
    assert [int(r["seq"]) for r in rows] == list(range(1, 14))


def test_export_refuses_unknown_format_and_foreign_files(path: Path, tmp_path: Path) -> None:
    Journal.open(path, created_ms=0).close()
    with pytest.raises(ValueError, match="format: must be 'jsonl' or 'csv', got 'xml'"):
        export(path, "xml", io.StringIO())
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"x" * 4096)
    with pytest.raises(JournalError, match=r"bad\.db"):
        export(bad, "jsonl", io.StringIO())


def test_verify_of_a_live_journal_sees_one_consistent_snapshot(path: Path) -> None:
    """An auditor may verify while the owner appends (WAL): every check must see the same
    moment, so a live journal never shows a false head/state mismatch."""
    import threading
    import time

    journal = Journal.open(path)
    fill(journal, 20)
    stop = threading.Event()
    appended = [0]

    def writer() -> None:
        ts = 1_800_000_000_000
        while not stop.is_set():
            ts += 1
            journal.append(ts, 1, "chip", {"position": 1}, {"n": ts}, {"main": {"display": ts}})
            appended[0] += 1

    thread = threading.Thread(target=writer)
    thread.start()
    reports: list[Any] = []
    try:
        # verify again and again while the writer really appends (a busy disk may make each
        # fsync slow: wait for appends rather than counting on a number of verifies)
        deadline = time.monotonic() + 60
        while (len(reports) < 15 or appended[0] < 10) and time.monotonic() < deadline:
            reports.append(verify(path))
    finally:
        stop.set()
        thread.join()
        journal.close()
    assert appended[0] >= 10, "the writer never got to append: nothing was tested"
    assert [r.problems for r in reports if not r.ok] == []
    assert reports[-1].entries > 20


def test_a_rejected_round_completed_is_not_a_completed_round(path: Path) -> None:
    """A round_completed re-posted after a restart and refused by the machine completes nothing:
    verify, the owner and the simulator's stop rule count only accepted ones."""
    journal = Journal.open(path)
    snap: dict[str, object] = {"n": 1}
    journal.append(1, 1, "round_completed", {"round_id": 1, "effects": []}, snap, {})
    rejected = {"type": "rejected", "event": "round_completed", "reason": "not in RoundComplete"}
    journal.append(2, 2, "round_completed", {"round_id": 1, "effects": [rejected]}, snap, {})
    assert journal.rounds == 1
    journal.close()
    assert verify(path).rounds == 1
    with Journal.open(path) as again:  # the count is kept in the state row, read at power-up
        assert again.rounds == 1
